import { afterAll, beforeAll, describe } from "vitest";
import { createServiceKeys, type ServiceKeys } from "./support/keys.js";
import { BIN, bundle, type ChildServer, removeBundle, startServer } from "./support/runtime.js";
import { roundTrips } from "./support/suite.js";

/** Short, so the 408 case takes a second (the library's default is 30 s). */
const BODY_TIMEOUT_MS = 1_000;

let keys: ServiceKeys;
let script: string | undefined;
let server: ChildServer;
beforeAll(async () => {
  keys = await createServiceKeys();
  script = await bundle(new URL("./runtimes/bun-server.ts", import.meta.url).pathname);
  server = await startServer(`${BIN}/bun`, ["run", script], {
    env: { SERVICE_PUBLIC_KEY: keys.publicKeyPem, BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) },
  });
});
afterAll(async () => {
  await server?.stop();
  removeBundle(script);
});

describe("fetch adapter on Bun.serve", () => {
  roundTrips({
    send: () => server.send,
    keys: () => keys,
    remoteAddress: /^from (127\.0\.0\.1|::ffff:127\.0\.0\.1)$/,
    bodyTimeout: {
      baseUrl: () => server.baseUrl,
      ms: BODY_TIMEOUT_MS,
      connectionHeader: true,
      closes: true,
    },
  });
});
