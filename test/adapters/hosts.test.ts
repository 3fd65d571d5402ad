// Hosts beyond the four adapters' own frameworks (review hosts): what the README's "Other hosts"
// section documents, run here.
// - Azure Functions v4 hands `toFetch` a request that looks like a fetch Request but has no
//   `signal`: the merchant's function ran, then `signal.aborted` threw (the host's 500, a
//   redelivery, a second order or charge). Answered now, the function run once.
// - Google Cloud Functions (functions-framework) and NestJS `rawBody: true` parse the body before
//   any code of the merchant's and keep its exact bytes in `req.rawBody`: the Express and node
//   adapters take them, as the Koa adapter takes `ctx.request.rawBody` (a gift card's CardId beyond
//   2^53 keeps its digits, `bodyDigest` works), and the parsed `req.body` is protected.
// - Cloud Functions calls the function as `(req, res)`: `toExpress` without `next` answers the
//   router's 404 on a path it does not serve (it threw "next is not a function").
// - Fastify: the `onRequest` hook handing `request.raw`/`reply.raw` to `toNodeListener`.
import { createHash } from "node:crypto";
import express from "express";
import Fastify from "fastify";
import { base64url } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ExpressMiddleware, toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { rsaKey, signToken, type TestKey } from "../auth/helpers.js";
import { fixture } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { listen, type Running, running } from "./support/servers.js";
import { json, UNAUTHORIZED } from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant");
const PAYMENT = fixture("PerformOrderPayment");
/** A gift card whose CardId is an integer beyond 2^53 (`JSON.parse` gives 6035710000000000000). */
const BIG_CARD_ID = "6035710000000000123";
const GIFT_CARD = fixture("ValidateGiftCard").replace('"GC-7342-1109-5561"', BIG_CARD_ID);
const NOT_FOUND = {
  Success: false,
  ErrorCode: "NOT_FOUND",
  Message: "Not found",
  Description: "",
};

let key: TestKey;
beforeAll(async () => {
  key = await rsaKey();
});

/** A token whose `bd` claim is the SHA-256 of `body`, or none. */
function tokenFor(body?: string): Promise<string> {
  return signToken(
    key.privateKey,
    body === undefined
      ? {}
      : { bd: base64url.encode(createHash("sha256").update(body, "utf8").digest()) },
  );
}

/** The callbacks, and the calls the merchant's functions and `onError` saw. */
function callbacks(bodyDigest = false) {
  const calls: string[] = [];
  const failures: CallbackFailure[] = [];
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth: createAuth({
      jwt: {
        environment: "test",
        keys: { test: key.pem },
        ...(bodyDigest ? { bodyDigest: { claim: "bd" } } : {}),
      },
      merchantGuid: MERCHANT_GUID,
    }),
    onError: (failure) => void failures.push(failure),
    handlers: {
      SendOrderToMerchant: (order) => {
        calls.push(`order ${order.OrderId}`);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
      PerformOrderPayment: (payment) => {
        calls.push(`payment ${payment.OrderId} ${payment.PaymentDetails?.CVVNumber}`);
        return { InternalOrderId: "M-1", PaymentAmount: 10, PaymentCurrencyCode: "USD" };
      },
      ValidateGiftCard: (card) => {
        calls.push(`gift card ${String(card.CardFields?.CardId)}`);
        return { IsValid: true };
      },
      GetCheckoutCartInfo: (query) => {
        calls.push(`cart ${query.merchantCartToken} ${query.countryCode}`);
        return { productsList: [] };
      },
    },
  });
  return { router, calls, failures };
}

const servers: Running[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function post(server: Running, name: string, token: string, body: string): Promise<Response> {
  return server.send(`/crossborder/${name}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
}

/** The service's form-encoded GetCheckoutCartInfo POST (a cart token with an escaped `+`). */
async function postCartForm(server: Running): Promise<Response> {
  return server.send("/crossborder/GetCheckoutCartInfo", {
    method: "POST",
    headers: {
      authorization: `Bearer ${await tokenFor()}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: `merchantCartToken=abc%2b1-2&countryCode=GER&MerchantGUID=${MERCHANT_GUID}`,
  });
}

describe("toFetch given a request with no signal (Azure Functions v4's HttpRequest)", () => {
  /** What Azure's v4 `HttpRequest` offers: a fetch Request's parts, but no `signal`. */
  function azureLike(token: string, body: string, path = "SendOrderToMerchant") {
    const copy = new Request(`https://shop.azurewebsites.net/api/crossborder/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
    return {
      method: copy.method,
      url: copy.url,
      headers: copy.headers,
      body: copy.body,
      get bodyUsed() {
        return copy.bodyUsed;
      },
      query: new URLSearchParams(),
      params: {},
    } as unknown as Request;
  }

  function azureRouter() {
    const { calls, failures } = callbacks();
    const router = createCallbackRouter({
      basePath: "/api/crossborder",
      auth: createAuth({
        jwt: { environment: "test", keys: { test: key.pem } },
        merchantGuid: MERCHANT_GUID,
      }),
      onError: (failure) => void failures.push(failure),
      handlers: {
        SendOrderToMerchant: (order) => {
          calls.push(`order ${order.OrderId}`);
          return { InternalOrderId: `M-${order.OrderId}` };
        },
      },
    });
    return { handler: toFetch(router), calls, failures };
  }

  it("answers a valid order 200, the merchant's function called once", async () => {
    const { handler, calls, failures } = azureRouter();
    const response = await handler(azureLike(await tokenFor(), ORDER));
    expect(response.status).toBe(200);
    expect(calls).toEqual(["order GE927127001US"]);
    expect(failures).toEqual([]);
  });

  it("answers a forged token 401, the function not called", async () => {
    const { handler, calls } = azureRouter();
    const forged = await signToken((await rsaKey()).privateKey, {});
    const response = await handler(azureLike(forged, ORDER));
    expect(response.status).toBe(401);
    expect(await json(response)).toStrictEqual(UNAUTHORIZED);
    expect(calls).toEqual([]);
  });

  it("a signal that is not an AbortSignal is neither read nor handed to the function", async () => {
    const seen: unknown[] = [];
    const router = createCallbackRouter({
      basePath: "/api/crossborder",
      auth: createAuth({
        jwt: { environment: "test", keys: { test: key.pem } },
        merchantGuid: MERCHANT_GUID,
      }),
      handlers: {
        SendOrderToMerchant: (order, context) => {
          seen.push(context.signal);
          return { InternalOrderId: `M-${order.OrderId}` };
        },
      },
    });
    const request = azureLike(await tokenFor(), ORDER);
    Object.defineProperty(request, "signal", { value: null });
    const response = await toFetch(router)(request);
    expect(response.status).toBe(200);
    expect(seen).toEqual([undefined]);
  });
});

/**
 * What Cloud Functions' functions-framework (and NestJS with `rawBody: true`) run before the
 * merchant's code: the body parsed, its exact bytes kept in `req.rawBody`.
 */
const keepRawBody = [
  express.json({
    limit: "17mb",
    verify: (req, _res, buffer) => {
      (req as unknown as { rawBody?: Buffer }).rawBody = buffer;
    },
  }),
  express.urlencoded({
    extended: true,
    limit: "17mb",
    verify: (req, _res, buffer) => {
      (req as unknown as { rawBody?: Buffer }).rawBody = buffer;
    },
  }),
];

type Mount = (app: express.Express, router: ReturnType<typeof callbacks>["router"]) => void;
const MOUNTS: [string, Mount][] = [
  ["toExpress", (app, router) => app.use(toExpress(router))],
  ["toNodeListener", (app, router) => app.use(toNodeListener(router) as never)],
];

describe("behind a host's parser that keeps the exact bytes in req.rawBody (Cloud Functions, NestJS rawBody)", () => {
  for (const [adapter, mount] of MOUNTS) {
    describe(adapter, () => {
      async function serve(bodyDigest = false) {
        const { router, calls, failures } = callbacks(bodyDigest);
        const app = express();
        const parsed: unknown[] = [];
        app.use(...keepRawBody);
        app.use((req, res, next) => {
          res.on("finish", () => parsed.push(structuredClone(req.body)));
          next();
        });
        mount(app, router);
        const server = await listen(app as never);
        servers.push(server);
        return { server, calls, failures, parsed };
      }

      it("a gift card CardId beyond 2^53 reaches the function with its exact digits", async () => {
        const { server, calls, failures } = await serve();
        const response = await post(server, "ValidateGiftCard", await tokenFor(), GIFT_CARD);
        expect(failures.map((f) => f.reason)).toEqual([]);
        expect(response.status).toBe(200);
        expect(calls).toEqual([`gift card ${BIG_CARD_ID}`]);
      });

      it("jwt.bodyDigest is checked against req.rawBody: 200 for the signed body", async () => {
        const { server, calls, failures } = await serve(true);
        const response = await post(server, "SendOrderToMerchant", await tokenFor(ORDER), ORDER);
        expect(failures.map((f) => f.reason)).toEqual([]);
        expect(response.status).toBe(200);
        expect(calls).toEqual(["order GE927127001US"]);
      });

      it("jwt.bodyDigest: a token signing another body is a 401, the function not called", async () => {
        const { server, calls } = await serve(true);
        const other = ORDER.replace("GE927127001US", "GE927127002US");
        const response = await post(server, "SendOrderToMerchant", await tokenFor(other), ORDER);
        expect(response.status).toBe(401);
        expect(calls).toEqual([]);
      });

      it("the parsed req.body holds no CVV once answered, the function got the CVV", async () => {
        const { server, calls, parsed } = await serve();
        const response = await post(server, "PerformOrderPayment", await tokenFor(), PAYMENT);
        expect(response.status).toBe(200);
        expect(calls).toEqual(["payment GE927127001US 737"]);
        expect(JSON.stringify(parsed)).not.toContain('"CVVNumber"');
        expect(JSON.stringify(parsed)).not.toContain("4111111111111111");
      });

      it("a form-encoded cart POST is read from req.rawBody", async () => {
        const { server, calls } = await serve();
        const response = await postCartForm(server);
        expect(response.status).toBe(200);
        expect(calls).toEqual(["cart abc+1-2 GER"]);
      });
    });
  }
});

describe("a req.rawBody kept by the merchant as text in another encoding (review second-adapt-1)", () => {
  for (const [adapter, mount] of MOUNTS) {
    for (const encoding of ["latin1", "base64", "hex"] as const) {
      it(`${adapter}, rawBody as ${encoding} text: the parsed req.body is what is read`, async () => {
        const failures: CallbackFailure[] = [];
        const names: unknown[] = [];
        const named = createCallbackRouter({
          basePath: "/crossborder",
          auth: false,
          onError: (failure) => failures.push(failure),
          handlers: {
            SendOrderToMerchant: (order) => {
              names.push(order.PrimaryBilling?.FirstName);
              return { InternalOrderId: `M-${order.OrderId}` };
            },
          },
        });
        const app = express();
        // A common pattern: the raw body kept for one's own logging or HMAC, as text.
        app.use(
          express.json({
            verify: (req, _res, buffer) => {
              (req as unknown as { rawBody?: string }).rawBody = buffer.toString(encoding);
            },
          }),
        );
        mount(app, named);
        const server = await listen(app as never);
        servers.push(server);
        const body = JSON.stringify({
          ...JSON.parse(ORDER),
          PrimaryBilling: { ...JSON.parse(ORDER).PrimaryBilling, FirstName: "José" },
        });
        const response = await post(server, "SendOrderToMerchant", await tokenFor(), body);
        expect(failures).toEqual([]);
        expect(response.status).toBe(200);
        expect(names).toEqual(["José"]);
      });
    }
  }
});

describe("a req.rawBody kept as UTF-8 text on a chunked request (review last4-2)", () => {
  async function serve(encoding: "utf8" | "latin1") {
    const failures: CallbackFailure[] = [];
    const calls: string[] = [];
    const router = createCallbackRouter({
      basePath: "/crossborder",
      auth: false,
      onError: (failure) => failures.push(failure),
      handlers: {
        ValidateGiftCard: (card) => {
          calls.push(`${String(card.CardFields?.CardId)} ${String(card.WebStoreCode)}`);
          return { IsValid: true };
        },
      },
    });
    const app = express();
    app.use(
      express.json({
        verify: (req, _res, buffer) => {
          (req as unknown as { rawBody?: string }).rawBody = buffer.toString(encoding);
        },
      }),
    );
    app.use(toExpress(router));
    const server = await listen(app as never);
    servers.push(server);
    return { server, calls, failures };
  }
  /** The gift card sent in two chunks, without a Content-Length. */
  async function chunked(server: Running, body: string): Promise<number> {
    const response = await server.send("/crossborder/ValidateGiftCard", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          const bytes = new TextEncoder().encode(body);
          controller.enqueue(bytes.slice(0, 20));
          controller.enqueue(bytes.slice(20));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    return response.status;
  }

  it("UTF-8 text: the exact digits of a CardId beyond 2^53 reach the function", async () => {
    const { server, calls, failures } = await serve("utf8");
    expect(await chunked(server, GIFT_CARD)).toBe(200);
    expect(failures).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(new RegExp(`^${BIG_CARD_ID} `));
  });

  it("latin1 text of UTF-8 bytes (mojibake): not read; the parsed body is", async () => {
    const { server, calls } = await serve("latin1");
    const body = fixture("ValidateGiftCard").replace('"eu-main"', '"eu-Zürich"');
    expect(body).toContain("eu-Zürich");
    expect(await chunked(server, body)).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/ eu-Zürich$/);
  });
});

describe("toExpress called without next (Cloud Functions calls the function as (req, res))", () => {
  it("answers a path the router does not serve with the router's 404", async () => {
    const { router } = callbacks();
    const middleware = toExpress(router) as (req: unknown, res: unknown) => void;
    const server = await listen((req, res) => middleware(req, res));
    servers.push(server);
    const response = await server.send("/elsewhere", { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await json(response)).toStrictEqual(NOT_FOUND);
    const served = await post(server, "SendOrderToMerchant", await tokenFor(), ORDER);
    expect(served.status).toBe(200);
  });

  it("a next that is not a function is the router's 404 too", async () => {
    const { router } = callbacks();
    const middleware: ExpressMiddleware = toExpress(router);
    const server = await listen((req, res) => middleware(req, res, undefined as never));
    servers.push(server);
    const response = await server.send("/elsewhere/x");
    expect(response.status).toBe(404);
    expect(await json(response)).toStrictEqual(NOT_FOUND);
  });
});

describe("Fastify 5: an onRequest hook handing request.raw/reply.raw to toNodeListener", () => {
  /** The README's mount; `requests`: Fastify's requests, to see what its parser left in them. */
  async function serve() {
    const { router, calls, failures } = callbacks();
    const app = Fastify();
    const listener = toNodeListener(router);
    const requests: { readonly body: unknown }[] = [];
    app.addHook("onRequest", (request, reply, done) => {
      requests.push(request);
      if (router.matches(request.url.split("?", 1)[0] as string)) {
        reply.hijack();
        listener(request.raw, reply.raw);
        return;
      }
      done();
    });
    // The rest of the app: Fastify's JSON parser and a route of its own.
    app.post("/other", async (request) => ({ echoed: request.body }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    const server = running(app.server);
    servers.push(server);
    return { server, calls, failures, requests };
  }

  it("answers a valid order 200, the function called once", async () => {
    const { server, calls, failures } = await serve();
    const response = await post(server, "SendOrderToMerchant", await tokenFor(), ORDER);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      Success: true,
      InternalOrderId: "M-GE927127001US",
    });
    expect(calls).toEqual(["order GE927127001US"]);
    expect(failures).toEqual([]);
  });

  it("answers a form-encoded cart POST (Fastify has no form parser: it would be its 415)", async () => {
    const { server, calls } = await serve();
    const response = await postCartForm(server);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ productsList: [] });
    expect(calls).toEqual(["cart abc+1-2 GER"]);
  });

  it("a payment with card data: 200, and Fastify's parsed body holds no card data", async () => {
    const { server, calls, requests } = await serve();
    const response = await post(server, "PerformOrderPayment", await tokenFor(), PAYMENT);
    expect(response.status).toBe(200);
    expect(calls).toEqual(["payment GE927127001US 737"]);
    // Fastify never parsed it (the hook answered before its parser ran): no body in clear there.
    expect(requests.map((request) => request.body)).toEqual([undefined]);
    // The rest of the app keeps its parser.
    const other = await server.send("/other", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(await other.json()).toEqual({ echoed: { a: 1 } });
    expect(requests.map((request) => request.body)).toEqual([undefined, { a: 1 }]);
  });

  it("a forged token is a 401, the function not called", async () => {
    const { server, calls } = await serve();
    const forged = await signToken((await rsaKey()).privateKey, {});
    const response = await post(server, "SendOrderToMerchant", forged, ORDER);
    expect(response.status).toBe(401);
    expect(await json(response)).toStrictEqual(UNAUTHORIZED);
    expect(calls).toEqual([]);
  });
});
