import { afterAll, beforeAll, describe } from "vitest";
import type { ServiceKeys } from "../adapters/support/keys.js";
import {
  BIN,
  type ChildServer,
  startServer,
  TSCONFIG_WITHOUT_PATHS,
} from "../adapters/support/runtime.js";
import { assertBuilt, exampleEnv, exampleKeys, merchantFlow } from "./support/flow.js";

let keys: ServiceKeys;
let server: ChildServer;
beforeAll(async () => {
  assertBuilt();
  keys = await exampleKeys();
  server = await startServer(
    `${BIN}/bun`,
    ["--tsconfig-override", TSCONFIG_WITHOUT_PATHS, "examples/bun/server.ts"],
    { env: exampleEnv(keys) },
  );
});
afterAll(() => server?.stop());

describe("examples/bun (bun examples/bun/server.ts)", () => {
  merchantFlow(
    () => server.send,
    () => keys,
  );
});
