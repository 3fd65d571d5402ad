import { createServer } from "node:http";
import { bodyParser } from "@koa/bodyparser";
import Koa3 from "koa";
import Koa2 from "koa2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toKoa } from "../../src/adapters/koa.js";
import { createAuth } from "../../src/auth/index.js";
import { createCallbackRouter } from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { createTestRouter } from "./support/merchant.js";
import { LOOPBACK, listen, type Running } from "./support/servers.js";
import { parserFirst, roundTrips } from "./support/suite.js";

const _ORDER = fixture("SendOrderToMerchant");

let keys: ServiceKeys;
beforeAll(async () => {
  keys = await createServiceKeys();
});

/** A Koa app with our middleware, then a fallback that records what reached it. */
function appWith(Koa: typeof Koa3, parser: boolean) {
  const app = new Koa();
  const reached: string[] = [];
  if (parser) app.use(bodyParser());
  app.use(toKoa(createTestRouter({ publicKey: keys.publicKeyPem })));
  app.use((ctx) => {
    reached.push(ctx.url);
    ctx.status = 404;
    ctx.body = "app 404";
  });
  return { app, reached };
}

for (const [version, Koa] of [
  ["2", Koa2],
  ["3", Koa3],
] as const) {
  describe(`Koa ${version}`, () => {
    describe("without a body parser", () => {
      let server: Running;
      let reached: string[];
      beforeAll(async () => {
        const built = appWith(Koa, false);
        reached = built.reached;
        server = await listen(createServer(built.app.callback()));
      });
      afterAll(() => server.close());

      roundTrips({ send: () => server.send, keys: () => keys, remoteAddress: LOOPBACK });

      it("passes paths the router does not serve to next()", async () => {
        const response = await server.send("/elsewhere?q=1", { method: "POST", body: "{}" });
        expect(response.status).toBe(404);
        expect(await response.text()).toBe("app 404");
        expect(reached).toEqual(["/elsewhere?q=1"]);
      });
    });

    it("refuses a request whose socket has no peer address under an allow-list of loopback (401)", async () => {
      // A middleware hides the address on the real socket, as Node reads it once a socket closes.
      const seen: string[] = [];
      const router = createCallbackRouter({
        auth: await createAuth({ ipAllowList: { allow: ["127.0.0.1", "::ffff:127.0.0.1"] } }),
        onError: () => undefined,
        handlers: {
          UpdateOrderStatus: (payload) => {
            seen.push(payload.OrderId);
          },
        },
      });
      const app = new Koa();
      app.use((ctx, next) => {
        if (ctx.get("x-hide-peer") === "1") {
          Object.defineProperty(ctx.req.socket, "remoteAddress", {
            configurable: true,
            get: () => undefined,
          });
        }
        return next();
      });
      app.use(toKoa(router));
      const served = await listen(createServer(app.callback()));
      try {
        const send = (hide: boolean, orderId: string) =>
          served.send("/UpdateOrderStatus", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(hide ? { "x-hide-peer": "1" } : {}),
            },
            body: JSON.stringify({ OrderId: orderId, StatusCode: "Shipped" }),
          });
        expect((await send(false, "seen")).status).toBe(200);
        expect((await send(true, "unknown-peer")).status).toBe(401);
        expect(seen).toEqual(["seen"]);
      } finally {
        await served.close();
      }
    });

    describe("behind @koa/bodyparser", () => {
      let server: Running;
      beforeAll(async () => {
        server = await listen(createServer(appWith(Koa, true).app.callback()));
      });
      afterAll(() => server.close());

      parserFirst({
        send: () => server.send,
        keys: () => keys,
        parsedFrom: "the parser's rawBody",
        skippedContentType: "application/octet-stream",
      });
    });
  });
}
