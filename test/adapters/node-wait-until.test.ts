/**
 * The Node adapters take a `waitUntil` option (review ssls2-4), as `toFetch` does: a Vercel Node
 * function or the Next.js pages router on Vercel freezes once answered but offers `waitUntil`
 * (from `@vercel/functions`), so `withIdempotency`'s record retried after the answer is handed to
 * it, and it is `context.waitUntil`. Real servers: node:http, Express, Koa.
 */
import type { RequestListener } from "node:http";
import express from "express";
import Koa from "koa";
import { describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { type CallbackRouter, createCallbackRouter, withIdempotency } from "../../src/index.js";
import { recordsFailingAtFirst } from "../idempotency/support/failing-records.js";
import { fixture } from "./support/keys.js";
import { listen } from "./support/servers.js";

const ORDER = fixture("SendOrderToMerchant");
type WaitUntil = (promise: Promise<unknown>) => void;

const adapters: readonly (readonly [
  string,
  (router: CallbackRouter, options: object) => RequestListener,
])[] = [
  ["toNodeListener", (router, options) => toNodeListener(router, options)],
  [
    "toExpress",
    (router, options) => {
      const app = express();
      app.use(toExpress(router, options));
      return app as unknown as RequestListener;
    },
  ],
  [
    "toKoa",
    (router, options) => {
      const app = new Koa();
      app.use(toKoa(router, options));
      return app.callback();
    },
  ],
];

describe("the Node adapters' waitUntil option", () => {
  for (const [name, serve] of adapters) {
    it(`${name}: is context.waitUntil, and a record retried after the answer is handed to it`, async () => {
      const { store, writes } = recordsFailingAtFirst(2);
      const handed: Promise<unknown>[] = [];
      const waitUntil: WaitUntil = (promise) => void handed.push(promise);
      const seen: unknown[] = [];
      const router = createCallbackRouter({
        basePath: "/crossborder",
        auth: false,
        onError: () => undefined,
        handlers: {
          SendOrderToMerchant: withIdempotency(
            async (order, context) => {
              seen.push(context.waitUntil);
              return { InternalOrderId: "M-1", OrderId: order.OrderId };
            },
            { store },
          ),
        },
      });
      const server = await listen(serve(router, { waitUntil }));
      try {
        const answer = await server.send("/crossborder/SendOrderToMerchant", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: ORDER,
        });
        expect(answer.status).toBe(200);
        expect(seen).toEqual([waitUntil]);
        // Before: the adapter refused the option ("unknown option"), nothing could be handed over.
        expect(handed).toHaveLength(1);
        await handed[0];
        expect(writes()).toBe(3);
      } finally {
        await server.close();
      }
    });

    it(`${name}: none without it (context.waitUntil undefined); null is none; not a function is refused`, async () => {
      const seen: unknown[] = [];
      const router = createCallbackRouter({
        basePath: "/crossborder",
        auth: false,
        onError: () => undefined,
        handlers: {
          SendOrderToMerchant: (order, context) => {
            seen.push(context.waitUntil);
            return { InternalOrderId: "M-1", OrderId: order.OrderId };
          },
        },
      });
      for (const options of [{}, { waitUntil: null }]) {
        const server = await listen(serve(router, options));
        try {
          const answer = await server.send("/crossborder/SendOrderToMerchant", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: ORDER,
          });
          expect(answer.status).toBe(200);
        } finally {
          await server.close();
        }
      }
      expect(seen).toEqual([undefined, undefined]);
      for (const value of ["yes", { waitUntil() {} }]) {
        expect(() => serve(router, { waitUntil: value })).toThrow(
          `${name}: waitUntil must be a function`,
        );
      }
    });
  }
});
