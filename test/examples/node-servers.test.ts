/** The Node examples (Express, Koa, Hono), started as a user starts them: `npx tsx examples/…`. */
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
beforeAll(async () => {
  assertBuilt();
  keys = await exampleKeys();
});

for (const example of ["express", "koa", "hono"]) {
  describe(`examples/${example} (npx tsx examples/${example}/server.ts)`, () => {
    let server: ChildServer;
    beforeAll(async () => {
      server = await startServer(
        `${BIN}/tsx`,
        ["--tsconfig", TSCONFIG_WITHOUT_PATHS, `examples/${example}/server.ts`],
        { env: exampleEnv(keys) },
      );
    });
    afterAll(() => server?.stop());

    merchantFlow(
      () => server.send,
      () => keys,
    );
  });
}

// Review copy COPY-5: with HOST=::1 the servers printed `listening on http://::1:PORT`, which is no
// URL (an IPv6 address goes in brackets), so it could not be pasted into `simulate --url`.
describe("the Node examples on an IPv6 host (HOST=::1)", () => {
  for (const example of ["express", "koa", "hono"]) {
    it(`examples/${example} prints a URL that reaches it`, async () => {
      const server = await startServer(
        `${BIN}/tsx`,
        ["--tsconfig", TSCONFIG_WITHOUT_PATHS, `examples/${example}/server.ts`],
        { env: { ...exampleEnv(keys), HOST: "::1" }, timeoutMs: 15_000 },
      );
      try {
        expect(server.baseUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
        expect(new URL(server.baseUrl).hostname).toBe("[::1]");
        const response = await server.send("/crossborder/GetCheckoutCartInfo");
        expect(response.status).toBe(401);
      } finally {
        await server.stop();
      }
    }, 30_000);
  }
});
