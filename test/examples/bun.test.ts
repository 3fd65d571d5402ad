import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

// Review SECOND-CD-3: with HOST=::1 it printed http://::1:PORT, not a URL (as the Node examples did).
describe("examples/bun on an IPv6 host (HOST=::1)", () => {
  it("prints a URL that reaches it", async () => {
    const ipv6 = await startServer(
      `${BIN}/bun`,
      ["--tsconfig-override", TSCONFIG_WITHOUT_PATHS, "examples/bun/server.ts"],
      { env: { ...exampleEnv(keys), HOST: "::1" }, timeoutMs: 15_000 },
    );
    try {
      expect(ipv6.baseUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await ipv6.send("/crossborder/GetCheckoutCartInfo")).status).toBe(401);
    } finally {
      await ipv6.stop();
    }
  }, 30_000);
});
