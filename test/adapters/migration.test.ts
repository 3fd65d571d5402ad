/**
 * Moving a hand-written receiver to the library route by route (review migrate): the old routes
 * stay behind the library's middleware, the app's header-only middleware in front of it.
 */
import { createServer } from "node:http";
import express5 from "express";
import express4 from "express4";
import Koa3 from "koa";
import Koa2 from "koa2";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import {
  type CallbackFailure,
  createCallbackRouter,
  createPerformOrderPaymentHandler,
} from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { listen, type Running } from "./support/servers.js";
import { signedPost } from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant"); // carries PaymentDetails (001 §4.2)
const PAYMENT = fixture("PerformOrderPayment");

let keys: ServiceKeys;
beforeAll(async () => {
  keys = await createServiceKeys();
});

const auth = () =>
  createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKeyPem } },
    merchantGuid: MERCHANT_GUID,
  });

/** The migrated PerformOrderPayment: records each charge and each report. */
function paymentHandler() {
  const charges: string[] = [];
  const reports: CallbackFailure[] = [];
  const handler = createPerformOrderPaymentHandler(
    ({ OrderId }) => {
      charges.push(OrderId);
      return { PaymentAmount: "100.00", PaymentCurrencyCode: "USD" };
    },
    { auth: auth(), onError: (failure) => reports.push(failure) },
  );
  return { handler, charges, reports };
}

/** A cors()-like middleware: headers only, and the preflight answered 204 (as cors 2.8 does). */
function corsLike(
  req: { method?: string | undefined },
  res: { setHeader(name: string, value: string): unknown; statusCode: number; end(): unknown },
  next: () => void,
): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE");
    res.setHeader("Content-Length", "0");
    res.statusCode = 204;
    res.end();
    return;
  }
  next();
}

/** The cart callback the shopper's browser calls (no JWT, a cart token instead). */
function browserCartRouter() {
  return createCallbackRouter({
    basePath: "/callbacks",
    auth: createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKeyPem } },
      merchantGuid: MERCHANT_GUID,
      callbacks: { GetCheckoutCartInfo: { jwt: false, cartToken: { verify: () => true } } },
    }),
    onError: () => undefined,
    handlers: { GetCheckoutCartInfo: () => ({ productsList: [] }) },
  });
}

const PREFLIGHT = {
  method: "OPTIONS",
  headers: {
    origin: "https://www.shop.example",
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type",
  },
};

type Express = typeof express5;

for (const [version, express] of [
  ["4", express4 as unknown as Express],
  ["5", express5],
] as const) {
  describe(`Express ${version}: migrating route by route`, () => {
    describe("migrate-1: one handler mounted with a bare app.use(toExpress(handler)) before the old routes", () => {
      let server: Running;
      let migrated: ReturnType<typeof paymentHandler>;
      const oldOrders: string[] = [];
      beforeAll(async () => {
        migrated = paymentHandler();
        const app = express();
        app.use(toExpress(migrated.handler));
        app.use(express.json());
        app.post("/callbacks/SendOrderToMerchant", (req, res) => {
          oldOrders.push((req.body as { OrderId: string }).OrderId);
          res.json({ Success: true, InternalOrderId: "1001" });
        });
        app.use((_req, res) => {
          res.status(404).type("text/plain").send("app 404");
        });
        server = await listen(app);
      });
      afterAll(() => server.close());

      it("passes another callback's delivery to the old route: the order is created, nothing charged", async () => {
        const response = await server.send(
          "/callbacks/SendOrderToMerchant",
          signedPost(await keys.sign(), ORDER),
        );
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ Success: true, InternalOrderId: "1001" });
        expect(oldOrders).toEqual(["GE927127001US"]);
        expect(migrated.charges).toEqual([]);
        expect(migrated.reports).toEqual([]);
      });

      it("passes it on whatever the case, with a trailing slash or a query", async () => {
        const response = await server.send(
          "/callbacks/sendordertomerchant/?x=1",
          signedPost(await keys.sign(), ORDER),
        );
        // Express's own routing is case-insensitive and not strict about the trailing slash.
        expect(await response.json()).toEqual({ Success: true, InternalOrderId: "1001" });
        expect(oldOrders).toHaveLength(2);
        expect(migrated.charges).toEqual([]);
      });

      it("still answers its own callback", async () => {
        const response = await server.send(
          "/callbacks/PerformOrderPayment",
          signedPost(await keys.sign(), PAYMENT),
        );
        expect(response.status).toBe(200);
        expect(migrated.charges).toEqual(["GE927127001US"]);
      });
    });

    it("second-mig-1: another callback's URL with an extension, parameters or escapes goes to the old route", async () => {
      const migrated = paymentHandler();
      const oldOrders: string[] = [];
      const app = express();
      app.use(toExpress(migrated.handler));
      app.use(express.json());
      const suffixes = [".php", ".aspx", ".ashx", ".json", ";v=1"];
      for (const suffix of suffixes) {
        app.post(`/callbacks/SendOrderToMerchant${suffix}`, (req, res) => {
          oldOrders.push((req.body as { OrderId: string }).OrderId);
          res.json({ Success: true, InternalOrderId: "1001" });
        });
      }
      app.post("/callbacks/Send%4FrderToMerchant", (req, res) => {
        oldOrders.push((req.body as { OrderId: string }).OrderId);
        res.json({ Success: true, InternalOrderId: "1001" });
      });
      const server = await listen(app);
      try {
        for (const last of [
          ...suffixes.map((x) => `SendOrderToMerchant${x}`),
          "Send%4FrderToMerchant",
        ]) {
          const response = await server.send(
            `/callbacks/${last}`,
            signedPost(await keys.sign(), ORDER),
          );
          expect(await response.json(), last).toEqual({ Success: true, InternalOrderId: "1001" });
        }
        expect(oldOrders).toHaveLength(6);
        expect(migrated.charges).toEqual([]);
        // Its own name with an extension is still its own.
        const own = await server.send(
          "/callbacks/PerformOrderPayment.php",
          signedPost(await keys.sign(), PAYMENT),
        );
        expect(own.status).toBe(200);
        expect(migrated.charges).toEqual(["GE927127001US"]);
      } finally {
        await server.close();
      }
    });

    it("second-mig-3: a router at the root below a parameter mount (app.use('/:tenant')) reports no mount miss", async () => {
      const reports: CallbackFailure[] = [];
      const router = createCallbackRouter({
        auth: auth(),
        onError: (failure) => reports.push(failure),
        handlers: {
          PerformOrderPayment: () => ({ PaymentAmount: "1", PaymentCurrencyCode: "EUR" }),
        },
      });
      const app = express();
      app.use("/:tenant", toExpress(router));
      const server = await listen(app);
      try {
        await server.send("/PerformOrderPayment", { method: "GET" });
        await server.send("/PerformOrderPayment/", { method: "GET" });
        expect(reports).toEqual([]);
        const served = await server.send(
          "/acme/PerformOrderPayment",
          signedPost(await keys.sign(), PAYMENT),
        );
        expect(served.status).toBe(200);
      } finally {
        await server.close();
      }
    });

    it("migrate-1: a handler mounted on a path of its own (app.post, app.use(path)) still answers there", async () => {
      const migrated = paymentHandler();
      const app = express();
      app.post("/webhooks/pay", toExpress(migrated.handler));
      app.use("/pay", toExpress(migrated.handler));
      const server = await listen(app);
      try {
        for (const path of ["/webhooks/pay", "/pay", "/pay/anything"]) {
          const response = await server.send(path, signedPost(await keys.sign(), PAYMENT));
          expect(response.status).toBe(200);
        }
        expect(migrated.charges).toHaveLength(3);
      } finally {
        await server.close();
      }
    });

    describe("migrate-2: header-only middleware (cors) in front of the callbacks, body parsers after", () => {
      let server: Running;
      beforeAll(async () => {
        const app = express();
        app.use(corsLike);
        app.use(toExpress(browserCartRouter()));
        app.use(express.json());
        server = await listen(app);
      });
      afterAll(() => server.close());

      it("the browser's GetCheckoutCartInfo keeps the CORS header", async () => {
        const response = await server.send("/callbacks/GetCheckoutCartInfo?merchantCartToken=abc", {
          headers: { origin: "https://www.shop.example" },
        });
        expect(response.status).toBe(200);
        expect(response.headers.get("access-control-allow-origin")).toBe("*");
        expect(await response.json()).toMatchObject({ productsList: [] });
      });

      it("its preflight is cors's 204, not the callback's 405", async () => {
        const response = await server.send("/callbacks/GetCheckoutCartInfo", PREFLIGHT);
        expect(response.status).toBe(204);
        expect(response.headers.get("access-control-allow-origin")).toBe("*");
      });
    });

    describe("migrate-4: a mount prefix that basePath repeats", () => {
      let server: Running;
      const reports: CallbackFailure[] = [];
      const reached: string[] = [];
      beforeAll(async () => {
        const router = createCallbackRouter({
          basePath: "/callbacks",
          auth: auth(),
          onError: (failure) => reports.push(failure),
          handlers: {
            PerformOrderPayment: () => ({ PaymentAmount: "1", PaymentCurrencyCode: "EUR" }),
          },
        });
        const app = express();
        app.use("/callbacks", toExpress(router));
        app.use((req, res) => {
          reached.push(req.originalUrl);
          res.status(404).type("text/plain").send("app 404");
        });
        server = await listen(app);
      });
      afterAll(() => server.close());

      it("is said once through onError; the calls still go to next()", async () => {
        for (let i = 0; i < 2; i++) {
          const response = await server.send(
            "/callbacks/PerformOrderPayment",
            signedPost(await keys.sign(), PAYMENT),
          );
          expect(await response.text()).toBe("app 404");
        }
        const other = await server.send("/callbacks/NoSuchCallback", { method: "POST" });
        expect(await other.text()).toBe("app 404");
        expect(reached).toHaveLength(3);
        expect(reports).toHaveLength(1);
        expect(reports[0]).toMatchObject({ kind: "not_found", callback: "PerformOrderPayment" });
        expect(reports[0]?.reason).toContain('basePath "/callbacks"');
        expect(reports[0]?.reason).toContain("/callbacks/PerformOrderPayment");
      });
    });

    it("migrate-4: a router mounted at the root, or a miss below a prefix that basePath does not repeat, says nothing", async () => {
      const reports: CallbackFailure[] = [];
      const router = createCallbackRouter({
        basePath: "/callbacks",
        auth: auth(),
        onError: (failure) => reports.push(failure),
        handlers: {
          PerformOrderPayment: () => ({ PaymentAmount: "1", PaymentCurrencyCode: "EUR" }),
        },
      });
      const app = express();
      app.use("/shop", toExpress(router));
      app.use(toExpress(router));
      const server = await listen(app);
      try {
        const served = await server.send(
          "/callbacks/PerformOrderPayment",
          signedPost(await keys.sign(), PAYMENT),
        );
        expect(served.status).toBe(200);
        const missed = await server.send("/shop/PerformOrderPayment", { method: "POST" });
        expect(missed.status).toBe(404);
        expect(reports).toEqual([]);
      } finally {
        await server.close();
      }
    });
  });
}

/** koa-mount's way: the path below the prefix while the middleware runs, the whole one after. */
function mount(prefix: string, middleware: (ctx: never, next: () => Promise<unknown>) => unknown) {
  return async (ctx: { path: string }, next: () => Promise<unknown>) => {
    const whole = ctx.path;
    if (!whole.startsWith(`${prefix}/`)) return next();
    const below = whole.slice(prefix.length);
    ctx.path = below;
    await middleware(ctx as never, async () => {
      ctx.path = whole;
      await next();
      ctx.path = below;
    });
    ctx.path = whole;
  };
}

for (const [version, Koa] of [
  ["2", Koa2],
  ["3", Koa3],
] as const) {
  describe(`Koa ${version}: migrating route by route`, () => {
    it("migrate-1: one handler mounted with a bare app.use(toKoa(handler)) passes another callback's delivery on", async () => {
      const migrated = paymentHandler();
      const oldOrders: string[] = [];
      const app = new Koa();
      app.use(toKoa(migrated.handler));
      app.use((ctx) => {
        if (ctx.path === "/callbacks/SendOrderToMerchant") {
          oldOrders.push(ctx.path);
          ctx.body = { Success: true, InternalOrderId: "1001" };
        }
      });
      const server = await listen(createServer(app.callback()));
      try {
        const order = await server.send(
          "/callbacks/SendOrderToMerchant",
          signedPost(await keys.sign(), ORDER),
        );
        expect(order.status).toBe(200);
        expect(await order.json()).toEqual({ Success: true, InternalOrderId: "1001" });
        expect(oldOrders).toHaveLength(1);
        expect(migrated.charges).toEqual([]);
        const payment = await server.send(
          "/callbacks/PerformOrderPayment",
          signedPost(await keys.sign(), PAYMENT),
        );
        expect(payment.status).toBe(200);
        expect(migrated.charges).toEqual(["GE927127001US"]);
      } finally {
        await server.close();
      }
    });

    it("migrate-2: a cors-like middleware in front keeps the cart's CORS header and answers the preflight 204", async () => {
      const app = new Koa();
      app.use(async (ctx, next) => {
        ctx.set("Access-Control-Allow-Origin", "*");
        if (ctx.method === "OPTIONS") {
          ctx.status = 204;
          return;
        }
        await next();
      });
      app.use(toKoa(browserCartRouter()));
      const server = await listen(createServer(app.callback()));
      try {
        const cart = await server.send("/callbacks/GetCheckoutCartInfo?merchantCartToken=abc", {
          headers: { origin: "https://www.shop.example" },
        });
        expect(cart.status).toBe(200);
        expect(cart.headers.get("access-control-allow-origin")).toBe("*");
        const preflight = await server.send("/callbacks/GetCheckoutCartInfo", PREFLIGHT);
        expect(preflight.status).toBe(204);
      } finally {
        await server.close();
      }
    });

    it("migrate-4: a mount prefix that basePath repeats is said once through onError", async () => {
      const reports: CallbackFailure[] = [];
      const router = createCallbackRouter({
        basePath: "/callbacks",
        auth: auth(),
        onError: (failure) => reports.push(failure),
        handlers: {
          PerformOrderPayment: () => ({ PaymentAmount: "1", PaymentCurrencyCode: "EUR" }),
        },
      });
      const app = new Koa();
      const reached: string[] = [];
      app.use(mount("/callbacks", toKoa(router)));
      app.use((ctx) => {
        reached.push(ctx.path);
        ctx.status = 404;
        ctx.body = "app 404";
      });
      const server = await listen(createServer(app.callback()));
      try {
        for (let i = 0; i < 2; i++) {
          const response = await server.send(
            "/callbacks/PerformOrderPayment",
            signedPost(await keys.sign(), PAYMENT),
          );
          expect(await response.text()).toBe("app 404");
        }
        expect(reached).toEqual([
          "/callbacks/PerformOrderPayment",
          "/callbacks/PerformOrderPayment",
        ]);
        expect(reports).toHaveLength(1);
        expect(reports[0]).toMatchObject({ kind: "not_found", callback: "PerformOrderPayment" });
      } finally {
        await server.close();
      }
    });
  });
}

describe("migrate-1: a single handler on node:http and fetch", () => {
  it("toNodeListener: another callback's path is a 404 (as a router's unserved path), its function not run", async () => {
    const migrated = paymentHandler();
    const server = await listen(toNodeListener(migrated.handler));
    try {
      const order = await server.send(
        "/callbacks/SendOrderToMerchant",
        signedPost(await keys.sign(), ORDER),
      );
      expect(order.status).toBe(404);
      expect(await order.json()).toMatchObject({ Success: false, ErrorCode: "NOT_FOUND" });
      expect(migrated.charges).toEqual([]);
      expect(migrated.reports).toMatchObject([
        { kind: "not_found", status: 404, callback: "PerformOrderPayment" },
      ]);
      expect(migrated.reports[0]?.reason).toContain("SendOrderToMerchant");
      // Another callback's URL with an extension or parameters (review second-mig-1).
      const other = await server.send(
        "/callbacks/SendOrderToMerchant.php",
        signedPost(await keys.sign(), ORDER),
      );
      expect(other.status).toBe(404);
      expect(migrated.charges).toEqual([]);
      for (const path of ["/", "/callbacks/PerformOrderPayment", "/pay"]) {
        const payment = await server.send(path, signedPost(await keys.sign(), PAYMENT));
        expect(payment.status).toBe(200);
      }
      expect(migrated.charges).toHaveLength(3);
    } finally {
      await server.close();
    }
  });

  it("toFetch: another callback's path is a 404 that leaves the body unread", async () => {
    const migrated = paymentHandler();
    const handler = toFetch(migrated.handler);
    const request = new Request(
      "http://shop.example/callbacks/UpdateOrderStatus/?x=1",
      signedPost(await keys.sign(), ORDER),
    );
    const response = await handler(request);
    expect(response.status).toBe(404);
    expect(request.bodyUsed).toBe(false);
    expect(migrated.charges).toEqual([]);
    const payment = await handler(
      new Request("http://shop.example/pay", signedPost(await keys.sign(), PAYMENT)),
    );
    expect(payment.status).toBe(200);
  });

  it("matches(): false only for a path whose last segment names another callback", () => {
    const { handler } = paymentHandler();
    expect(handler.matches("/callbacks/SendOrderToMerchant")).toBe(false);
    expect(handler.matches("/SENDORDERTOMERCHANT/")).toBe(false);
    expect(handler.matches("/callbacks/RefundGiftCard")).toBe(false);
    expect(handler.matches("/callbacks/PerformOrderPayment")).toBe(true);
    expect(handler.matches("/callbacks/performorderpayment/")).toBe(true);
    expect(handler.matches("/")).toBe(true);
    expect(handler.matches("")).toBe(true);
    expect(handler.matches("/webhooks/pay")).toBe(true);
    expect(handler.matches("/SendOrderToMerchant/pay")).toBe(true);
  });

  it("a router still serves a handler at a path of the merchant's choosing, whatever its last segment", async () => {
    const migrated = paymentHandler();
    const router = createCallbackRouter({
      auth: false,
      paths: { PerformOrderPayment: "/legacy/UpdateOrderStatus" },
      handlers: { PerformOrderPayment: migrated.handler },
    });
    const response = await toFetch(router)(
      new Request(
        "http://shop.example/legacy/UpdateOrderStatus",
        signedPost(await keys.sign(), PAYMENT),
      ),
    );
    expect(response.status).toBe(200);
    expect(migrated.charges).toEqual(["GE927127001US"]);
  });
});

describe("second-mig-2: a handler's handle serves whatever path it is given; only matches refuses", () => {
  const paths = { PerformOrderPayment: "/legacy/UpdateOrderStatus" };
  const pay = () => ({ PaymentAmount: "1.00", PaymentCurrencyCode: "USD" });
  const post = (url: string) => ({
    method: "POST",
    url,
    headers: { "content-type": "application/json" },
    body: PAYMENT,
  });

  it("a router serves a wrapped, a spread, and another copy's handler at a custom path naming another callback", async () => {
    const own = createPerformOrderPaymentHandler(pay, { auth: false, onError: () => undefined });
    vi.resetModules();
    const copy = (await import("../../src/index.js")) as typeof import("../../src/index.js");
    const other = copy.createPerformOrderPaymentHandler(pay, {
      auth: false,
      onError: () => undefined,
    });
    expect(other.handle).not.toBe(own.handle);
    const wrapped = {
      callback: own.callback,
      matches: own.matches,
      handle: (r: Parameters<typeof own.handle>[0]) => own.handle(r),
    };
    for (const handler of [wrapped, { ...own }, other, own]) {
      const router = createCallbackRouter({
        auth: false,
        onError: () => undefined,
        paths,
        handlers: { PerformOrderPayment: handler as typeof own },
      });
      expect((await router.handle(post("/legacy/UpdateOrderStatus"))).status).toBe(200);
    }
    // And the handler's own handle, called directly, serves any path (an adapter applies matches).
    expect((await own.handle(post("/callbacks/SendOrderToMerchant"))).status).toBe(200);
  });

  it("node:http: a single handler on another callback's path is 404, the function not run; a router pays no matches call", async () => {
    const runs: string[] = [];
    const handler = createPerformOrderPaymentHandler(
      ({ OrderId }) => {
        runs.push(OrderId);
        return pay();
      },
      {
        auth: false,
        onError: () => undefined,
      },
    );
    const server = await listen(toNodeListener(handler));
    try {
      const body = PAYMENT;
      const init = { method: "POST", headers: { "content-type": "application/json" }, body };
      const refused = await server.send("/callbacks/UpdateOrderStatus", init);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ Success: false, ErrorCode: "NOT_FOUND" });
      expect(runs).toEqual([]);
      expect((await server.send("/pay", init)).status).toBe(200);
      expect(runs).toHaveLength(1);
    } finally {
      await server.close();
    }
    // Express called without next (Cloud Functions): the same 404.
    const middleware = toExpress(handler);
    const bare = await listen((req, res) =>
      middleware(req as never, res as never, undefined as never),
    );
    try {
      const body = PAYMENT;
      const init = { method: "POST", headers: { "content-type": "application/json" }, body };
      expect((await bare.send("/callbacks/UpdateOrderStatus.php", init)).status).toBe(404);
      expect(runs).toHaveLength(1);
      expect((await bare.send("/pay", init)).status).toBe(200);
      expect(runs).toHaveLength(2);
    } finally {
      await bare.close();
    }
    let calls = 0;
    const router = createCallbackRouter({
      auth: false,
      onError: () => undefined,
      handlers: { PerformOrderPayment: pay },
    });
    const counted = {
      routes: router.routes,
      handle: router.handle,
      matches: (p: string) => {
        calls++;
        return router.matches(p);
      },
    };
    const routerServer = await listen(toNodeListener(counted));
    try {
      const init = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" };
      await routerServer.send("/nowhere", init);
      expect(calls).toBe(0);
    } finally {
      await routerServer.close();
    }
  });
});
