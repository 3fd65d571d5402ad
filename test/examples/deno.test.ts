import { afterAll, beforeAll, describe } from "vitest";
import type { ServiceKeys } from "../adapters/support/keys.js";
import { BIN, type ChildServer, startServer } from "../adapters/support/runtime.js";
import { assertBuilt, exampleEnv, exampleKeys, merchantFlow } from "./support/flow.js";

let keys: ServiceKeys;
let server: ChildServer;
beforeAll(async () => {
  assertBuilt();
  keys = await exampleKeys();
  server = await startServer(
    `${BIN}/deno`,
    ["run", "--no-lock", "--no-prompt", "--allow-net", "--allow-env", "examples/deno/main.ts"],
    { env: exampleEnv(keys) },
  );
});
afterAll(() => server?.stop());

describe("examples/deno (deno run … examples/deno/main.ts)", () => {
  merchantFlow(
    () => server.send,
    () => keys,
  );
});
