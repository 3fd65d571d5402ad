// A body something read before the callbacks, leaving no parsed body behind (a raw-body logger, a
// signature check, a fetch middleware that called `request.json()`): the merchant's setup is at
// fault, not the sender. Found by review: a valid order was answered 400 "Request body is empty"
// on Node (the service drops an order it is told is malformed) and 499 on fetch (though the
// client is still there, reading the answer). It is a 500, which the service retries.
import { once } from "node:events";
import { createServer, request as httpRequest, IncomingMessage, ServerResponse } from "node:http";
import http2 from "node:http2";
import { type AddressInfo, connect, Socket } from "node:net";
import { Writable } from "node:stream";
import { serve } from "@hono/node-server";
import express5 from "express";
import express4 from "express4";
import { Hono } from "hono";
import Koa3 from "koa";
import Koa2 from "koa2";
import { beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { listen, type Running, running } from "./support/servers.js";
import { json, signedPost, UNAUTHORIZED } from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant");

const INTERNAL_ERROR = {
  Success: false,
  ErrorCode: "INTERNAL_ERROR",
  Message: "Internal error",
  Description: "",
};

let keys: ServiceKeys;
beforeAll(async () => {
  keys = await createServiceKeys();
});

/** The callbacks, and what the merchant and `onError` saw. */
function callbacks() {
  const seen = { failures: [] as CallbackFailure[], merchant: 0 };
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth: createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKeyPem } },
      merchantGuid: MERCHANT_GUID,
    }),
    onError: (failure) => void seen.failures.push(failure),
    handlers: {
      SendOrderToMerchant: (order) => {
        seen.merchant++;
        return { InternalOrderId: `M-${order.OrderId}` };
      },
    },
  });
  return { router, seen };
}

/** Reads the whole request stream, as a raw-body logger does, then calls `next`. */
function readAll(req: IncomingMessage, next: () => void): void {
  req.on("data", () => undefined);
  req.on("end", next);
}

async function expectConsumed(
  response: Response,
  seen: ReturnType<typeof callbacks>["seen"],
): Promise<void> {
  expect(response.status).toBe(500);
  expect(await json(response)).toStrictEqual(INTERNAL_ERROR);
  expect(seen.failures.map((f) => f.kind)).toStrictEqual(["internal_error"]);
  expect(seen.failures[0]?.reason).toMatch(/already read/);
  expect(seen.merchant).toBe(0);
}

async function post(server: Running, body: string = ORDER): Promise<Response> {
  return server.send("/crossborder/SendOrderToMerchant", signedPost(await keys.sign(), body));
}

describe("a body read before the callbacks, with no parsed body left", () => {
  it("node:http, a listener that read the stream first: 500 INTERNAL_ERROR", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    const server = await listen((req, res) => readAll(req, () => listener(req, res)));
    try {
      await expectConsumed(await post(server), seen);
    } finally {
      await server.close();
    }
  });

  it("node:http, a chunked body (no Content-Length) read first: 500 INTERNAL_ERROR, not the sender's 400", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    let framing: string | undefined;
    const server = await listen((req, res) => {
      framing = req.headers["transfer-encoding"];
      readAll(req, () => listener(req, res));
    });
    try {
      const bytes = new TextEncoder().encode(ORDER);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      });
      const init = { ...signedPost(await keys.sign(), ORDER), body, duplex: "half" };
      await expectConsumed(
        await server.send("/crossborder/SendOrderToMerchant", init as RequestInit),
        seen,
      );
      expect(framing).toBe("chunked");
    } finally {
      await server.close();
    }
  });

  it("node:http, an empty body read first is still the sender's 400 (nothing was declared)", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    const server = await listen((req, res) => readAll(req, () => listener(req, res)));
    try {
      const response = await post(server, "");
      expect(response.status).toBe(400);
      expect(await json(response)).toMatchObject({
        ErrorCode: "MALFORMED_BODY",
        Description: "Request body is empty",
      });
      expect(seen.failures.map((f) => f.kind)).toStrictEqual(["malformed_body"]);
    } finally {
      await server.close();
    }
  });

  for (const [label, express] of [
    ["Express 4", express4 as unknown as typeof express5],
    ["Express 5", express5],
  ] as const) {
    it(`${label}, a middleware that read the stream without setting req.body: 500 INTERNAL_ERROR`, async () => {
      const { router, seen } = callbacks();
      const app = express();
      app.use((req, _res, next) => readAll(req, next));
      app.use(toExpress(router));
      const server = await listen(createServer(app));
      try {
        await expectConsumed(await post(server), seen);
      } finally {
        await server.close();
      }
    });
  }

  for (const [label, Koa] of [
    ["Koa 2", Koa2 as unknown as typeof Koa3],
    ["Koa 3", Koa3],
  ] as const) {
    it(`${label}, a middleware that read the stream without a parser: 500 INTERNAL_ERROR`, async () => {
      const { router, seen } = callbacks();
      const app = new Koa();
      app.use((ctx, next) => new Promise<void>((resolve) => readAll(ctx.req, resolve)).then(next));
      app.use(toKoa(router));
      const server = await listen(createServer(app.callback()));
      try {
        await expectConsumed(await post(server), seen);
      } finally {
        await server.close();
      }
    });
  }

  it("fetch, a Request whose body was already read: 500 INTERNAL_ERROR, not 499", async () => {
    const { router, seen } = callbacks();
    const request = new Request(
      "http://127.0.0.1/crossborder/SendOrderToMerchant",
      signedPost(await keys.sign(), ORDER),
    );
    await request.text();
    await expectConsumed(await toFetch(router)(request), seen);
  });

  it("fetch, a Request whose body a middleware locked without reading it: 500 INTERNAL_ERROR", async () => {
    const { router, seen } = callbacks();
    const request = new Request(
      "http://127.0.0.1/crossborder/SendOrderToMerchant",
      signedPost(await keys.sign(), ORDER),
    );
    request.body?.getReader();
    await expectConsumed(await toFetch(router)(request), seen);
  });

  it("Hono on @hono/node-server, a middleware that called c.req.json(): 500 INTERNAL_ERROR", async () => {
    const { router, seen } = callbacks();
    const handler = toFetch(router);
    const app = new Hono();
    app.use("*", async (c, next) => {
      await c.req.json();
      await next();
    });
    app.all("/crossborder/*", (c) => handler(c.req.raw));
    const httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
    await new Promise((resolve) => httpServer.once("listening", resolve));
    const server = running(httpServer as Parameters<typeof running>[0]);
    try {
      await expectConsumed(await post(server), seen);
    } finally {
      await server.close();
    }
  });
});

// Review mw, D1: a middleware in front that listens to the body and lets the call through at once
// (a byte counter, a raw-body logger: `req.on("data", …); next()`). When the body was still arriving
// the library read only the chunks left after its own listener came: the tail of the JSON, a 400
// MALFORMED_BODY that drops a valid order. The body is sent in two halves 150 ms apart, as a large
// order arrives over a network: the first half has gone to the tee before the library reads.
describe("a tee in front (a data listener, then next()), the body still arriving", () => {
  // A valid order with a 300 kB field the service added (unknown fields are kept).
  const BIG_ORDER = JSON.stringify({ ...JSON.parse(ORDER), Notes: "x".repeat(300 * 1024) });

  /** Counts the bytes as they pass; leaves the stream to whatever comes next. */
  function tee(req: IncomingMessage): { bytes: number } {
    const counted = { bytes: 0 };
    req.on("data", (chunk: Buffer) => {
      counted.bytes += chunk.length;
    });
    return counted;
  }

  /**
   * The order with its true Content-Length: the first half (or, `split` 0, only the headers), then
   * the rest once `rest()` settles (by default 150 ms after the first part).
   */
  async function postInHalves(
    server: Running,
    split = Buffer.byteLength(BIG_ORDER) >> 1,
    rest: () => Promise<void> = () => new Promise((resolve) => setTimeout(resolve, 150)),
  ): Promise<{ status: number; body: unknown }> {
    const token = await keys.sign();
    const bytes = Buffer.from(BIG_ORDER);
    // Settled once the answer is in and the whole body was sent (the answer comes before the rest).
    let sent: () => void = () => undefined;
    const whole = new Promise<void>((resolve) => {
      sent = resolve;
    });
    const answer = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = httpRequest(
        new URL("/crossborder/SendOrderToMerchant", server.baseUrl),
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "content-length": String(bytes.length),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString()),
            }),
          );
        },
      );
      req.on("error", reject);
      if (split > 0) req.write(bytes.subarray(0, split));
      else req.flushHeaders();
      void rest().then(() => req.end(bytes.subarray(split), () => sent()));
    });
    await whole;
    return answer;
  }

  async function expectTeeConsumed(
    server: Running,
    seen: ReturnType<typeof callbacks>["seen"],
    counted: { bytes: number },
  ): Promise<void> {
    try {
      const response = await postInHalves(server);
      expect({ status: response.status, body: response.body }).toStrictEqual({
        status: 500,
        body: INTERNAL_ERROR,
      });
      expect(seen.failures.map((f) => f.kind)).toStrictEqual(["internal_error"]);
      expect(seen.failures[0]?.reason).toMatch(/already read/);
      expect(seen.merchant).toBe(0);
      // The tee itself still gets the whole body: the library took nothing from it, cut nothing.
      await expect.poll(() => counted.bytes).toBe(Buffer.byteLength(BIG_ORDER));
    } finally {
      await server.close();
    }
  }

  it("node:http: 500 INTERNAL_ERROR, not the sender's 400 MALFORMED_BODY", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    let counted = { bytes: 0 };
    const server = await listen((req, res) => {
      counted = tee(req);
      listener(req, res);
    });
    await expectTeeConsumed(server, seen, {
      get bytes() {
        return counted.bytes;
      },
    });
  });

  it("node:http, a tee that saw nothing yet (only the headers came): the whole body, 200", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    // Final reading 2 D6: the rest was sent after a fixed 150 ms, so a library slower than that to
    // start reading (JWT check on a loaded CI) let the tee take it first: a false 500. The rest is
    // sent once the library's own `data` listener is on the request instead.
    let reading: () => void = () => undefined;
    const libraryReads = new Promise<void>((resolve) => {
      reading = resolve;
    });
    const server = await listen((req, res) => {
      tee(req);
      req.on("newListener", (event) => {
        if (event === "data") reading();
      });
      // A library that answers without reading (a 500 on seeing the tee) gets the rest too, so the
      // test fails on the status instead of waiting for a body never sent (final reading 3).
      res.on("finish", () => reading());
      listener(req, res);
    });
    try {
      const response = await postInHalves(server, 0, () => libraryReads);
      expect(response).toStrictEqual({
        status: 200,
        body: expect.objectContaining({ Success: true }),
      });
      expect(seen.failures).toStrictEqual([]);
      expect(seen.merchant).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("node:http2 (its compatibility request): 500 INTERNAL_ERROR, not the sender's 400 MALFORMED_BODY", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    let counted = { bytes: 0 };
    const server = http2.createServer((req, res) => {
      counted = tee(req as unknown as IncomingMessage);
      listener(req, res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const bytes = Buffer.from(BIG_ORDER);
      const stream = session.request({
        ":method": "POST",
        ":path": "/crossborder/SendOrderToMerchant",
        authorization: `Bearer ${await keys.sign()}`,
        "content-type": "application/json",
        "content-length": String(bytes.length),
      });
      const answer = new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        let status = 0;
        const chunks: Buffer[] = [];
        stream.on("response", (headers) => {
          status = Number(headers[":status"]);
        });
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () =>
          resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
        stream.on("error", reject);
      });
      stream.write(bytes.subarray(0, bytes.length >> 1));
      setTimeout(() => stream.end(bytes.subarray(bytes.length >> 1)), 150);
      expect(await answer).toStrictEqual({ status: 500, body: INTERNAL_ERROR });
      expect(seen.failures.map((f) => f.kind)).toStrictEqual(["internal_error"]);
      expect(seen.failures[0]?.reason).toMatch(/already read/);
      expect(seen.merchant).toBe(0);
      // The tee saw the first half at least before the library answered.
      expect(counted.bytes).toBeGreaterThan(0);
    } finally {
      session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  for (const [label, express] of [
    ["Express 4", express4 as unknown as typeof express5],
    ["Express 5", express5],
  ] as const) {
    it(`${label}: 500 INTERNAL_ERROR, not the sender's 400 MALFORMED_BODY`, async () => {
      const { router, seen } = callbacks();
      const app = express();
      let counted = { bytes: 0 };
      app.use((req, _res, next) => {
        counted = tee(req);
        next();
      });
      app.use(toExpress(router));
      const server = await listen(createServer(app));
      await expectTeeConsumed(server, seen, {
        get bytes() {
          return counted.bytes;
        },
      });
    });
  }

  for (const [label, Koa] of [
    ["Koa 2", Koa2 as unknown as typeof Koa3],
    ["Koa 3", Koa3],
  ] as const) {
    it(`${label}: 500 INTERNAL_ERROR, not the sender's 400 MALFORMED_BODY`, async () => {
      const { router, seen } = callbacks();
      const app = new Koa();
      let counted = { bytes: 0 };
      app.use((ctx, next) => {
        counted = tee(ctx.req);
        return next();
      });
      app.use(toKoa(router));
      const server = await listen(createServer(app.callback()));
      await expectTeeConsumed(server, seen, {
        get bytes() {
          return counted.bytes;
        },
      });
    });
  }
});

// Review r1, R2: a host that buffers the body and defines `req.body` as a getter parsing it on first
// read (Vercel's helpers: `setLazyProp(req, "body", …)`, which throws on bytes that are not JSON).
// Behind a parser the adapters read `req.body`; they read it first thing, unguarded, so such a body
// threw out of the listener before authentication: any caller could end the process with one
// request (node:http), or get the framework's HTML 500 instead of the library's 401 (Express, Koa).
// A getter that throws leaves no parsed body the library can read: the call is then the 500 above
// once authenticated, and a caller without a token still gets its 401.
describe("a parsed body whose getter throws (a host's lazy req.body, Vercel style)", () => {
  const NOT_JSON = "{not json";

  /** Reads the whole stream, then defines `body` on `holder` as a getter parsing it, as Vercel does. */
  function lazyBody(req: IncomingMessage, holder: object, next: () => void): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      Object.defineProperty(holder, "body", {
        configurable: true,
        enumerable: true,
        get: () => JSON.parse(raw) as unknown,
      });
      next();
    });
  }

  /** The servers, each with the callbacks behind such a host; `thrown` holds what came out of them. */
  const servers: [
    string,
    (
      router: ReturnType<typeof callbacks>["router"],
      thrown: unknown[],
    ) => Running | Promise<Running>,
  ][] = [
    [
      "node:http",
      (router, thrown) => {
        const listener = toNodeListener(router);
        return listen((req, res) =>
          lazyBody(req, req, () => {
            try {
              listener(req, res);
            } catch (error) {
              // Without this, a throw out of a 'request' listener ends the process.
              thrown.push(error);
              res.writeHead(599).end();
            }
          }),
        );
      },
    ],
    ...(
      [
        ["Express 4", express4 as unknown as typeof express5],
        ["Express 5", express5],
      ] as const
    ).map(
      ([label, express]): [
        string,
        (router: ReturnType<typeof callbacks>["router"], thrown: unknown[]) => Promise<Running>,
      ] => [
        label,
        (router, thrown) => {
          const app = express();
          app.use((req, _res, next) => lazyBody(req, req, next));
          app.use(toExpress(router));
          app.use((error: unknown, _req: unknown, res: express5.Response, _next: unknown) => {
            thrown.push(error);
            res.status(599).end();
          });
          return listen(createServer(app));
        },
      ],
    ),
    ...(
      [
        ["Koa 2", Koa2 as unknown as typeof Koa3],
        ["Koa 3", Koa3],
      ] as const
    ).map(
      ([label, Koa]): [
        string,
        (router: ReturnType<typeof callbacks>["router"], thrown: unknown[]) => Promise<Running>,
      ] => [
        label,
        (router, thrown) => {
          const app = new Koa();
          app.use(async (ctx, next) => {
            try {
              await next();
            } catch (error) {
              thrown.push(error);
              ctx.status = 599;
            }
          });
          app.use((ctx, next) =>
            new Promise<void>((resolve) => lazyBody(ctx.req, ctx.request, resolve)).then(next),
          );
          app.use(toKoa(router));
          return listen(createServer(app.callback()));
        },
      ],
    ),
  ];

  for (const [label, serve] of servers) {
    it(`${label}, a caller without a token: its 401, nothing thrown`, async () => {
      const { router, seen } = callbacks();
      const thrown: unknown[] = [];
      const server = await serve(router, thrown);
      try {
        const response = await server.send("/crossborder/SendOrderToMerchant", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: NOT_JSON,
        });
        expect(thrown).toStrictEqual([]);
        expect(response.status).toBe(401);
        expect(await json(response)).toStrictEqual(UNAUTHORIZED);
        expect(seen.merchant).toBe(0);
      } finally {
        await server.close();
      }
    });

    it(`${label}, an authenticated call: 500 INTERNAL_ERROR (no parsed body to read), nothing thrown`, async () => {
      const { router, seen } = callbacks();
      const thrown: unknown[] = [];
      const server = await serve(router, thrown);
      try {
        const response = await post(server, NOT_JSON);
        expect(thrown).toStrictEqual([]);
        await expectConsumed(response, seen);
        // The getter's error quotes the body (a card number, in a real one): it is not passed on.
        expect(seen.failures[0]?.error).toBeUndefined();
      } finally {
        await server.close();
      }
    });
  }

  it("node:http, an earlier answer (503 sent): left as it is, nothing thrown", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    const thrown: unknown[] = [];
    const server = await listen((req, res) =>
      lazyBody(req, req, () => {
        res.writeHead(503).end("busy");
        try {
          listener(req, res);
        } catch (error) {
          thrown.push(error);
        }
      }),
    );
    try {
      const response = await post(server, NOT_JSON);
      expect(response.status).toBe(503);
      expect(await response.text()).toBe("busy");
      expect(thrown).toStrictEqual([]);
      expect(seen.merchant).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe("a client gone after sending its whole body, before the listener ran", () => {
  /** Sends a whole order on a raw socket and hangs up; resolves once the listener has run. */
  async function goneClient(
    listener: (req: IncomingMessage, res: ServerResponse) => void,
  ): Promise<{ complete: boolean; readable: boolean; destroyed: boolean }[]> {
    const states: { complete: boolean; readable: boolean; destroyed: boolean }[] = [];
    let ran!: () => void;
    const listened = new Promise<void>((resolve) => {
      ran = resolve;
    });
    const server = createServer((req, res) => {
      // An async wrapper in front (tracing, a lookup): the client is gone when the listener runs.
      setTimeout(() => {
        states.push({ complete: req.complete, readable: req.readable, destroyed: req.destroyed });
        listener(req, res);
        setTimeout(ran, 100);
      }, 100);
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = fixture("SendOrderToMerchant");
      const socket = connect(port, "127.0.0.1", () => {
        socket.end(
          `POST /cb/SendOrderToMerchant HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        setTimeout(() => socket.destroy(), 20);
      });
      socket.on("error", () => undefined);
      await listened;
      return states;
    } finally {
      server.close();
    }
  }

  function goneRouter() {
    const failures: CallbackFailure[] = [];
    const seen = { merchant: 0 };
    const router = createCallbackRouter({
      basePath: "/cb",
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: {
        SendOrderToMerchant: () => {
          seen.merchant += 1;
          return { InternalOrderId: "M-1" };
        },
      },
    });
    return { router, failures, seen };
  }

  it("node:http: client_closed (499), not a setup 500 blaming a body parser there is not", async () => {
    const { router, failures, seen } = goneRouter();
    const states = await goneClient(toNodeListener(router));
    // The request as the listener saw it: whole, no longer readable, destroyed.
    expect(states).toStrictEqual([{ complete: true, readable: false, destroyed: true }]);
    expect(failures.map((failure) => [failure.kind, failure.status])).toStrictEqual([
      ["client_closed", 499],
    ]);
    expect(seen.merchant).toBe(0);
  });

  it("Express 4 behind a parser of another type (its {} left in req.body): client_closed (499), not a 400", async () => {
    const { router, failures, seen } = goneRouter();
    const app = express4()
      .use(express4.urlencoded({ extended: false }))
      .use(toExpress(router));
    await goneClient(app);
    expect(failures.map((failure) => [failure.kind, failure.status])).toStrictEqual([
      ["client_closed", 499],
    ]);
    expect(seen.merchant).toBe(0);
  });
});

describe("the router's 404 behind a parser, with a req.body its card walk cannot read", () => {
  it("node:http: still the JSON 404, reported to onError", async () => {
    const reports: string[] = [];
    const listener = toNodeListener(
      createCallbackRouter({
        basePath: "/cb",
        auth: false,
        onError: (failure) => void reports.push(failure.kind),
        handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
      }),
    );
    const server = await listen((req, res) => {
      req.resume();
      req.on("end", () => {
        const body = {};
        Object.defineProperty(body, "lazy", {
          enumerable: true,
          get() {
            throw new Error("4111111111111111");
          },
        });
        (req as IncomingMessage & { body?: unknown }).body = body;
        listener(req, res);
      });
    });
    try {
      const response = await server.send("/elsewhere", { method: "POST", body: "{}" });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ Success: false });
      expect(reports).toStrictEqual(["not_found"]);
    } finally {
      await server.close();
    }
  });
});

// Second reading of H2, D2: a serverless bridge builds an IncomingMessage, pushes the body itself
// and never sets `complete`. Once a parser reads it to its end, Node's autoDestroy runs _destroy,
// which sets `aborted` (the same on Bun): that is not a client gone, and the order must run.
describe("an IncomingMessage stand-in (a serverless bridge) read to its end by a parser", () => {
  it("node:http listener: 200 from req.body, the function runs once, no client_closed", async () => {
    const { router, seen } = callbacks();
    const listener = toNodeListener(router);
    const body = Buffer.from(ORDER);
    const req = new IncomingMessage(new Socket());
    Object.assign(req, {
      method: "POST",
      url: "/crossborder/SendOrderToMerchant",
      headers: {
        authorization: `Bearer ${await keys.sign()}`,
        "content-type": "application/json",
        "content-length": String(body.length),
      },
    });
    req._read = () => {
      req.push(body);
      req.push(null);
    };
    // The parser in front.
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => void chunks.push(chunk));
    await new Promise((resolve) => req.on("end", resolve));
    (req as IncomingMessage & { body?: unknown }).body = JSON.parse(
      Buffer.concat(chunks).toString(),
    );
    await new Promise((resolve) => setImmediate(resolve));
    // What the bridge leaves: ended, destroyed by autoDestroy, and so aborted.
    expect([req.readableEnded, req.destroyed, req.aborted]).toEqual([true, true, true]);
    const res = new ServerResponse(req);
    const written: Buffer[] = [];
    res.assignSocket(
      new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          written.push(chunk);
          done();
        },
      }) as unknown as Socket,
    );
    const finished = new Promise((resolve) => res.once("finish", resolve));
    listener(req, res);
    await finished;
    expect(res.statusCode).toBe(200);
    expect(Buffer.concat(written).toString()).toContain('"InternalOrderId":"M-');
    expect(seen.merchant).toBe(1);
    expect(seen.failures).toEqual([]);
  });
});
