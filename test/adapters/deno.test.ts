import { afterAll, beforeAll, describe } from "vitest";
import { createServiceKeys, type ServiceKeys } from "./support/keys.js";
import { BIN, bundle, type ChildServer, removeBundle, startServer } from "./support/runtime.js";
import { roundTrips } from "./support/suite.js";

let keys: ServiceKeys;
let script: string | undefined;
let server: ChildServer;
beforeAll(async () => {
  keys = await createServiceKeys();
  script = await bundle(new URL("./runtimes/deno-server.ts", import.meta.url).pathname);
  server = await startServer(
    `${BIN}/deno`,
    ["run", "--no-prompt", "--allow-net=127.0.0.1", "--allow-env=SERVICE_PUBLIC_KEY", script],
    { env: { SERVICE_PUBLIC_KEY: keys.publicKeyPem } },
  );
});
afterAll(async () => {
  await server?.stop();
  removeBundle(script);
});

describe("fetch adapter on Deno.serve", () => {
  roundTrips({ send: () => server.send, keys: () => keys, remoteAddress: /^from 127\.0\.0\.1$/ });
});
