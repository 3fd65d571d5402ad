// A CallbackError status whose answer carries no body (204, 205, 304): found by review, the fetch
// adapter's `new Response(body, { status })` threw (the runtime showed its own error page) and
// node:http sent an empty 204, the callback's failure shape dropped. Always a well-formed answer.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import { toNodeListener } from "../../src/adapters/node.js";
import {
  CallbackError,
  type CallbackFailure,
  type CallbackRouter,
  createCallbackRouter,
} from "../../src/index.js";
import { fixture } from "./support/keys.js";
import { listen, type Running, running } from "./support/servers.js";
import { json } from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant");

/** What the merchant throws, per request: set by each test. */
let thrown: () => unknown = () => undefined;
const failures: CallbackFailure[] = [];

function router(): CallbackRouter {
  return createCallbackRouter({
    basePath: "/crossborder",
    auth: false,
    onError: (failure) => void failures.push(failure),
    handlers: {
      SendOrderToMerchant: () => {
        throw thrown();
      },
    },
  });
}

const servers: [string, () => Promise<Running>][] = [
  ["node:http", () => listen(toNodeListener(router()))],
  [
    "Hono on @hono/node-server (fetch adapter)",
    async () => {
      const handler = toFetch(router());
      const app = new Hono();
      app.all("/crossborder/*", (c) => handler(c.req.raw));
      const httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
      await new Promise((resolve) => httpServer.once("listening", resolve));
      return running(httpServer as Parameters<typeof running>[0]);
    },
  ],
];

for (const [label, start] of servers) {
  describe(label, () => {
    let server: Running;
    beforeAll(async () => {
      server = await start();
    });
    afterAll(() => server.close());

    const send = () =>
      server.send("/crossborder/SendOrderToMerchant", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ORDER,
      });

    for (const status of [204, 205, 304]) {
      it(`a CallbackError with status ${status} is refused when made: a well-formed 500`, async () => {
        failures.length = 0;
        thrown = () => new CallbackError("OUT_OF_STOCK", "Out of stock", undefined, { status });
        const response = await send();
        expect(response.status).toBe(500);
        expect(await json(response)).toStrictEqual({
          Success: false,
          ErrorCode: "INTERNAL_ERROR",
          Message: "Internal error",
          Description: "",
        });
        expect(failures.map((f) => f.kind)).toStrictEqual(["internal_error"]);
        expect((failures[0]?.error as Error | undefined)?.name).toBe("RangeError");
      });

      it(`a CallbackError given status ${status} afterwards is answered 200, in the callback's shape`, async () => {
        failures.length = 0;
        thrown = () => Object.assign(new CallbackError("OUT_OF_STOCK", "Out of stock"), { status });
        const response = await send();
        expect(response.status).toBe(200);
        expect(await json(response)).toStrictEqual({
          Success: false,
          ErrorCode: "OUT_OF_STOCK",
          Message: "Out of stock",
          Description: "",
        });
      });
    }
  });
}
