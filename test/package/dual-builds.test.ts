// One application may load the package twice: the router from the CommonJS build (`require`) and
// an adapter from the ES module build (`import`), or the reverse. What an adapter hands the engine
// must still be read as it is, across the two builds (dist/ as a user loads it; npm test builds
// first), behind a body parser that leaves text or bytes and without one.
import { readFileSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import bodyParser from "@koa/bodyparser";
import express from "express";
import Koa from "koa";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type * as ExpressAdapter from "../../src/adapters/express.js";
import type * as KoaAdapter from "../../src/adapters/koa.js";
import type * as Root from "../../src/index.js";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";

beforeAll(() => assertBuilt());

const ORDER = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);

const requireDist = createRequire(import.meta.url);
const esm = async <T>(file: string) =>
  (await import(pathToFileURL(join(ROOT, "dist", file)).href)) as T;
const cjs = <T>(file: string) => requireDist(join(ROOT, "dist", file)) as T;

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

async function post(listener: RequestListener): Promise<{ status: number; text: string }> {
  server = createServer(listener).listen(0, "127.0.0.1");
  await new Promise((resolve) => server?.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/crossborder/SendOrderToMerchant`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ORDER,
  });
  return { status: response.status, text: await response.text() };
}

const PAIRS = [
  ["the router from the CommonJS build, the adapters from the ES module build", "cjs", "esm"],
  ["the router from the ES module build, the adapters from the CommonJS build", "esm", "cjs"],
] as const;

describe.each(PAIRS)("%s", (_label, rootFrom, adapterFrom) => {
  const load = async () => {
    const root =
      rootFrom === "cjs" ? cjs<typeof Root>("index.cjs") : await esm<typeof Root>("index.js");
    const { toExpress } =
      adapterFrom === "cjs"
        ? cjs<typeof ExpressAdapter>("express.cjs")
        : await esm<typeof ExpressAdapter>("express.js");
    const { toKoa } =
      adapterFrom === "cjs"
        ? cjs<typeof KoaAdapter>("koa.cjs")
        : await esm<typeof KoaAdapter>("koa.js");
    const orders: string[] = [];
    const router = root.createCallbackRouter({
      basePath: "/crossborder",
      auth: false,
      onError: () => undefined,
      handlers: {
        SendOrderToMerchant: (order) => {
          orders.push(order.OrderId);
          return { InternalOrderId: `M-${order.OrderId}` };
        },
      },
    });
    return { router, toExpress, toKoa, orders };
  };

  const apps: [string, (l: Awaited<ReturnType<typeof load>>) => RequestListener][] = [
    ["no body parser (Express)", ({ router, toExpress }) => express().use(toExpress(router))],
    [
      "express.text()",
      ({ router, toExpress }) =>
        express()
          .use(express.text({ type: "*/*" }))
          .use(toExpress(router)),
    ],
    [
      "express.raw()",
      ({ router, toExpress }) =>
        express()
          .use(express.raw({ type: "*/*" }))
          .use(toExpress(router)),
    ],
    [
      "@koa/bodyparser",
      ({ router, toKoa }) => new Koa().use(bodyParser()).use(toKoa(router)).callback(),
    ],
  ];

  it.each(apps)(
    "%s: the order is answered 200 and reaches the function once",
    async (_app, make) => {
      const loaded = await load();
      const { status, text } = await post(make(loaded));
      expect({ status, text: text.slice(0, 200) }).toMatchObject({ status: 200 });
      expect(JSON.parse(text)).toMatchObject({ Success: true });
      expect(loaded.orders).toHaveLength(1);
    },
  );
});

describe("a gift-card handler built with verifySession in one build, the router in the other", () => {
  it.each(PAIRS)(
    "%s: the router takes it as checking the session",
    async (_label, rootFrom, handlerFrom) => {
      const router =
        rootFrom === "cjs" ? cjs<typeof Root>("index.cjs") : await esm<typeof Root>("index.js");
      const factories =
        handlerFrom === "cjs" ? cjs<typeof Root>("index.cjs") : await esm<typeof Root>("index.js");
      const verifySession = () => true;
      const handler = factories.createValidateGiftCardHandler(() => ({ IsValid: true }), {
        auth: false,
        verifySession,
      });
      const mount = () =>
        router.createCallbackRouter({
          auth: false,
          verifySession,
          handlers: { ValidateGiftCard: handler },
        });
      expect(mount).not.toThrow();
    },
  );
});
