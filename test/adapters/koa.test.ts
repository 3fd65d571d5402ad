import { createServer } from "node:http";
import { bodyParser } from "@koa/bodyparser";
import Koa3 from "koa";
import Koa2 from "koa2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toKoa } from "../../src/adapters/koa.js";
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
