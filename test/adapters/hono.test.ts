import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { type Context, Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import { createAuth } from "../../src/auth/index.js";
import {
  type CallbackFailure,
  type CallbackRouter,
  createCallbackRouter,
} from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { createTestRouter } from "./support/merchant.js";
import { LOOPBACK, type Running, running } from "./support/servers.js";
import { json, roundTrips, signedPost } from "./support/suite.js";

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

// Found by review: the README's recipe, `(_request, c) => getConnInfo(c).remote.address`, with the
// handler called as `callbacks(c.req.raw)` (no `c`) threw before the engine ran, and the handler
// rejected (Hono's own 500). The address is then unknown, and the engine answers as for any call.
describe("a remoteAddress option that throws (the handler called without c)", () => {
  async function serveWithout(router: CallbackRouter): Promise<Running> {
    const handler = toFetch(router, {
      remoteAddress: (_request, c: Context) => getConnInfo(c).remote.address,
    });
    const app = new Hono();
    // As the README's first Hono example calls it (TypeScript would ask for `c`; JavaScript not).
    const callbacks = handler as (request: Request) => Promise<Response>;
    app.all("/crossborder/*", (c) => callbacks(c.req.raw));
    const httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
    await new Promise((resolve) => httpServer.once("listening", resolve));
    return running(httpServer as Parameters<typeof running>[0]);
  }

  it("answers the call, the address unknown to the merchant", async () => {
    const other = await serveWithout(createTestRouter({ publicKey: keys.publicKeyPem }));
    try {
      const response = await other.send(
        "/crossborder/SendOrderToMerchant",
        signedPost(await keys.sign(), fixture("SendOrderToMerchant")),
      );
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ Success: true, Message: "from unknown" });
    } finally {
      await other.close();
    }
  });

  it("an IP allow-list then refuses the call with a well-formed 401", async () => {
    const failures: CallbackFailure[] = [];
    const other = await serveWithout(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: createAuth({ ipAllowList: { allow: ["127.0.0.1", "::1"] } }),
        onError: (failure) => void failures.push(failure),
        handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
      }),
    );
    try {
      const response = await other.send("/crossborder/SendOrderToMerchant", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: fixture("SendOrderToMerchant"),
      });
      expect(response.status).toBe(401);
      expect(await json(response)).toMatchObject({ Success: false, ErrorCode: "UNAUTHORIZED" });
      expect(failures.map((f) => f.reason)).toStrictEqual([
        expect.stringContaining("peer address unknown"),
      ]);
    } finally {
      await other.close();
    }
  });
});

// Review OPT D2b: a header name given where a function goes was read as "no address" on every call,
// so that an IP allow-list refused them all.
describe("a remoteAddress option that is not a function", () => {
  it("is refused by toFetch, naming the option", () => {
    const router = createCallbackRouter({
      auth: false,
      handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
    });
    for (const value of ["CF-Connecting-IP", { header: "CF-Connecting-IP" }]) {
      const adapt = () => toFetch(router, { remoteAddress: value as never });
      expect(adapt).toThrow(TypeError);
      expect(adapt).toThrow("toFetch: remoteAddress must be a function");
    }
    expect(() => toFetch(router, {})).not.toThrow();
  });

  // Final reading F1-3: main read `null` as "not set" (the call ran with no address), as the
  // service client, withIdempotency's key/store and onError still do; `cond ? fn : null` must not
  // stop the app at start-up.
  it("takes null as not set: the call is answered, the address unknown", async () => {
    let seen: string | undefined = "not called";
    const handler = toFetch(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: false,
        handlers: {
          SendOrderToMerchant: (_order, context) => {
            seen = context.request.remoteAddress;
            return { InternalOrderId: "M-1" };
          },
        },
      }),
      { remoteAddress: null as never },
    );
    const response = await handler(
      new Request("http://127.0.0.1/crossborder/SendOrderToMerchant", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: fixture("SendOrderToMerchant"),
      }),
    );
    expect(response.status).toBe(200);
    expect(seen).toBeUndefined();
  });
});

// Final reading 2 O3: toFetch took any option name, so a misspelt remoteAddress left every call
// without an address (an IP allow-list then refuses them all). Refused, as by the other factories.
describe("toFetch's options", () => {
  it("refuses an unknown option, naming it", () => {
    const router = createCallbackRouter({
      auth: false,
      handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
    });
    const misspelt = { remotAddress: () => "203.0.113.9" } as never;
    expect(() => toFetch(router, misspelt)).toThrow(TypeError);
    expect(() => toFetch(router, misspelt)).toThrow(
      'toFetch: options has an unknown option "remotAddress" (known: remoteAddress, waitUntil); did you mean "remoteAddress"?',
    );
    for (const value of [null, "remoteAddress"]) {
      expect(() => toFetch(router, value as never)).toThrow("toFetch: options must be an object");
    }
    expect(() => toFetch(router, { remoteAddress: () => "203.0.113.9" })).not.toThrow();
    expect(() => toFetch(router, undefined)).not.toThrow();
  });
});

// Hand mutation testing, round 2: dropping the signal from the request the engine reads survived.
describe("toFetch and the request's abort signal", () => {
  it("hands the merchant a signal that aborts with the request's", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const handler = toFetch(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: false,
        onError: () => undefined,
        handlers: {
          SendOrderToMerchant: (_order, context) => {
            seen = context.signal;
            expect(seen?.aborted).toBe(false);
            controller.abort();
            return { InternalOrderId: "M-1" };
          },
        },
      }),
    );
    await handler(
      new Request("http://127.0.0.1/crossborder/SendOrderToMerchant", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: fixture("SendOrderToMerchant"),
        signal: controller.signal,
      }),
    );
    expect(seen).toBeDefined();
    expect(seen?.aborted).toBe(true);
  });
});
