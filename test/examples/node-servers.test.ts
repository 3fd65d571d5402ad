/** The Node examples (Express, Koa, Hono), started as a user starts them: `npx tsx examples/…`. */
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
