import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { type Context, Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import { createServiceKeys, type ServiceKeys } from "./support/keys.js";
import { createTestRouter } from "./support/merchant.js";
import { LOOPBACK, type Running, running } from "./support/servers.js";
import { roundTrips } from "./support/suite.js";

let keys: ServiceKeys;
let server: Running;
beforeAll(async () => {
  keys = await createServiceKeys();
  const handler = toFetch(createTestRouter({ publicKey: keys.publicKeyPem }), {
    remoteAddress: (_request, c: Context) => getConnInfo(c).remote.address,
  });
  const app = new Hono();
  app.all("/crossborder/*", (c) => handler(c.req.raw, c));
  app.get("/health", (c) => c.text("ok"));
  const httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => httpServer.once("listening", resolve));
  server = running(httpServer as Parameters<typeof running>[0]);
});
afterAll(() => server.close());

describe("Hono on @hono/node-server (fetch adapter)", () => {
  roundTrips({
    send: () => server.send,
    keys: () => keys,
    remoteAddress: LOOPBACK,
    // @hono/node-server cannot drain a request body once a handler looked at it without reading
    // it all: it closes the connection 500 ms after the answer, without `Connection: close`.
    afterRefusal: () => new Promise((resolve) => setTimeout(resolve, 700)),
  });

  it("leaves the app's other routes to Hono", async () => {
    const response = await server.send("/health");
    expect(await response.text()).toBe("ok");
  });
});
