// An answer that never reaches the service after the merchant's function ran (the client hung up,
// or a timeout middleware in front answered first) is reported once through the endpoint's
// onError, naming the callback and whether the answer was a success (review ops-1).
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import express from "express";
import Koa from "koa";
import Koa2 from "koa2";
import { describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { reportUndelivered } from "../../src/core/responses.js";
import type { CallbackEndpoint } from "../../src/core/types.js";
import {
  CallbackError,
  type CallbackFailure,
  createCallbackRouter,
  createSendOrderToMerchantHandler,
  withIdempotency,
} from "../../src/index.js";

const order = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(
  listener: Listener,
): Promise<{ port: number; close: () => void; server: ReturnType<typeof createServer> }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, server, close: () => server.close() };
}

/** Sends the order and hangs up after `ms`, before the (slower) answer. */
async function hangUp(port: number, path: string, ms: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const req = request({
      port,
      method: "POST",
      path,
      headers: { "content-type": "application/json" },
    });
    req.on("error", () => resolve());
    req.end(order);
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

/** Called by `slowOrder`'s function when it starts (set by `hangUpWhenRunning`). */
let onRunning: (() => void) | undefined;
/** Called by a Koa middleware in front once `next()` returned (set by `hangUpWhenUpstreamWaits`). */
let onUpstreamWait: (() => void) | undefined;

/**
 * Sends the order and hangs up when `arm`'s trigger is called: event-driven, so a loaded machine
 * cannot move the hang-up to another stage of the request.
 */
async function hangUpOn(
  port: number,
  path: string,
  arm: (trigger: (() => void) | undefined) => void,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = request({
      port,
      method: "POST",
      path,
      headers: { "content-type": "application/json" },
    });
    req.on("error", () => undefined);
    const timer = setTimeout(() => {
      arm(undefined);
      reject(new Error("the request did not reach the stage within 10 s"));
    }, 10_000);
    arm(() => {
      arm(undefined);
      clearTimeout(timer);
      req.destroy();
      resolve();
    });
    req.end(order);
  });
}

/** Hangs up once the merchant's function runs, before its (slower) answer. */
const hangUpWhenRunning = (port: number, path: string) =>
  hangUpOn(port, path, (trigger) => {
    onRunning = trigger;
  });

/** Hangs up once the answer is given and a Koa middleware in front awaits after `next()`. */
const hangUpWhenUpstreamWaits = (port: number, path: string) =>
  hangUpOn(port, path, (trigger) => {
    onUpstreamWait = trigger;
  });

/**
 * Waits until `count` failures are reported (at most 10 s), then 400 ms more, so that a second
 * report of the same answer, however late, is seen.
 */
async function reported(failures: readonly CallbackFailure[], count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (failures.length < count && Date.now() < deadline) await sleep(10);
  await sleep(400);
}

/** Exactly one failure was reported: SendOrderToMerchant's, a closed connection (499). */
function expectOneClosed(failures: readonly CallbackFailure[]): void {
  expect(failures).toHaveLength(1);
  expect(failures[0]).toMatchObject({
    kind: "client_closed",
    status: 499,
    callback: "SendOrderToMerchant",
  });
}

async function post(port: number, path: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(
      { port, method: "POST", path, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.on("error", () => resolve(undefined));
    req.end(order);
  });
}

function slowOrder(failures: CallbackFailure[], refuse = false, ms = 250) {
  return createSendOrderToMerchantHandler(
    async (o) => {
      onRunning?.();
      await sleep(ms);
      if (refuse) throw new CallbackError("OUT_OF_STOCK", "no stock");
      return { InternalOrderId: `M-${o.OrderId}` };
    },
    { auth: false, onError: (failure) => void failures.push(failure) },
  );
}

/** What a timeout middleware (connect-timeout style) does in front: answers 503 after 80 ms. */
function timeoutInFront(listener: Listener): Listener {
  return (req, res) => {
    const timer = setTimeout(() => {
      res.statusCode = 503;
      res.end("timeout");
    }, 80);
    res.on("finish", () => clearTimeout(timer));
    listener(req, res);
  };
}

describe("an answer that cannot be delivered after the function ran", () => {
  it("node:http: the client hung up: one client_closed naming the callback and the success", async () => {
    const failures: CallbackFailure[] = [];
    const server = await serve(toNodeListener(slowOrder(failures)));
    await hangUpWhenRunning(server.port, "/x");
    await reported(failures, 1);
    server.close();
    expectOneClosed(failures);
    expect(failures[0]?.reason).toMatch(/after SendOrderToMerchant's function ran/);
    expect(failures[0]?.reason).toMatch(/a success, 200.*not delivered/);
  });

  it("node:http: a middleware answered first: one internal_error, the service got the 503", async () => {
    const failures: CallbackFailure[] = [];
    const server = await serve(timeoutInFront(toNodeListener(slowOrder(failures))));
    const status = await post(server.port, "/x");
    await sleep(400);
    server.close();
    expect(status).toBe(503);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ kind: "internal_error", callback: "SendOrderToMerchant" });
    expect(failures[0]?.reason).toMatch(/something else answered the request/);
    expect(failures[0]?.reason).toMatch(/a success, 200.*not delivered/);
  });

  it("a refusal lost is reported as a refusal, through the router's handler", async () => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      handlers: { SendOrderToMerchant: slowOrder(failures, true) },
    });
    const server = await serve(toNodeListener(router));
    await hangUpWhenRunning(server.port, "/SendOrderToMerchant");
    await reported(failures, 2);
    server.close();
    expect(failures.map((f) => f.kind)).toEqual(["handler_failure", "client_closed"]);
    expect(failures[1]?.reason).toMatch(/a refusal \(CallbackError\), 200/);
  });

  it("an answer delivered, or a client gone before the function ran, reports nothing more", async () => {
    const failures: CallbackFailure[] = [];
    const server = await serve(toNodeListener(slowOrder(failures)));
    expect(await post(server.port, "/x")).toBe(200);
    // A false alarm would come after the answer: give it the time a report takes.
    await sleep(400);
    server.close();
    expect(failures).toEqual([]);
  });

  /** `slowOrder` behind each framework's adapter, as a node:http listener. */
  const frameworks: [string, (failures: CallbackFailure[]) => Listener][] = [
    ["Express", (failures) => express().use(toExpress(slowOrder(failures)))],
    [
      "Koa",
      (failures) => {
        const app = new Koa().use(toKoa(slowOrder(failures)));
        app.silent = true; // no Koa error log on stderr; nothing asserted reads it
        return app.callback();
      },
    ],
  ];
  describe.each(frameworks)("%s", (_name, listenerFor) => {
    it("the client hung up", async () => {
      const failures: CallbackFailure[] = [];
      const server = await serve(listenerFor(failures));
      await hangUpWhenRunning(server.port, "/x");
      await reported(failures, 1);
      server.close();
      expect(failures.map((f) => [f.kind, f.callback])).toEqual([
        ["client_closed", "SendOrderToMerchant"],
      ]);
    });

    it("a timeout middleware answered first", async () => {
      const failures: CallbackFailure[] = [];
      const server = await serve(timeoutInFront(listenerFor(failures)));
      expect(await post(server.port, "/x")).toBe(503);
      await reported(failures, 1);
      server.close();
      expect(failures.map((f) => f.kind)).toEqual(["internal_error"]);
    });
  });

  it("fetch: a runtime that aborts request.signal when the client leaves: one client_closed", async () => {
    const failures: CallbackFailure[] = [];
    const handler = toFetch(slowOrder(failures));
    const leaving = new AbortController();
    setTimeout(() => leaving.abort(), 80);
    const sent = new Request("http://merchant.test/x", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: order,
      signal: leaving.signal,
    });
    await handler(sent);
    expect(failures.map((f) => [f.kind, f.callback])).toEqual([
      ["client_closed", "SendOrderToMerchant"],
    ]);
    // Delivered (not aborted): nothing.
    await toFetch(slowOrder(failures))(
      new Request("http://merchant.test/x", { method: "POST", body: order }),
    );
    expect(failures).toHaveLength(1);
  });

  // second-ops-9: the reporter was an own enumerable symbol of the answer, so a merchant's
  // toEqual({ status, headers, body }) of handle()'s answer failed.
  it("handle()'s answer is its documented shape, the reporter out of sight", async () => {
    for (const refuse of [false, true]) {
      const handler = createSendOrderToMerchantHandler(
        () => {
          if (refuse) throw new CallbackError("OUT_OF_STOCK", "no stock");
          return { InternalOrderId: "M-1" };
        },
        { auth: false, onError: () => undefined },
      );
      const answer = await handler.handle({
        method: "POST",
        url: "/x",
        headers: { "content-type": "application/json" },
        body: order,
      });
      const { status, headers, body } = answer;
      expect(answer).toStrictEqual({ status, headers, body });
      expect(Object.getOwnPropertySymbols(answer)).toEqual([]);
      expect(Reflect.ownKeys(answer)).toEqual(["status", "headers", "body"]);
    }
  });

  // second-ops-1: the report path read the answer outside any try, in a .then() nobody catches:
  // a custom endpoint resolving nothing was an unhandled rejection, which ends the process.
  describe("a custom endpoint that resolves nothing", () => {
    const nothing = {
      matches: () => true,
      handle: async () => {
        await sleep(200);
        return undefined;
      },
    } as unknown as CallbackEndpoint;

    async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
      const seen: unknown[] = [];
      const listener = (reason: unknown) => void seen.push(reason);
      process.on("unhandledRejection", listener);
      try {
        await run();
        await sleep(400);
      } finally {
        process.off("unhandledRejection", listener);
      }
      return seen;
    }

    for (const [name, listener] of [
      ["node:http", () => toNodeListener(nothing)],
      ["Express", () => express().use(toExpress(nothing))],
    ] as const) {
      it(`${name}: the client gone, nothing rejects unhandled`, async () => {
        const server = await serve(listener() as Listener);
        const seen = await unhandledDuring(() => hangUp(server.port, "/x", 50));
        server.close();
        expect(seen).toEqual([]);
      });

      it(`${name}: the client waiting, nothing rejects unhandled and the exchange ends`, async () => {
        const server = await serve(listener() as Listener);
        let status: number | undefined = 0;
        const seen = await unhandledDuring(async () => {
          status = await post(server.port, "/x");
        });
        server.close();
        expect(seen).toEqual([]);
        expect(status).toBeUndefined();
      });
    }

    it("reportUndelivered never throws, whatever the answer is", () => {
      const hostile = new Proxy(
        {},
        {
          get() {
            throw new Error("trap");
          },
        },
      );
      const throwing = {
        status: 200,
        headers: {},
        body: "",
        [Symbol.for("crossborder-callbacks/undelivered@1")]: () => {
          throw new Error("reporter");
        },
      };
      for (const answer of [undefined, null, 0, "text", hostile, throwing]) {
        expect(() => reportUndelivered(answer as never, "closed")).not.toThrow();
      }
    });
  });
});

// second-ops-8: the reason claimed what the adapter cannot know. A closed connection may be the
// client's doing, a proxy's or the server's own timeout; and under withIdempotency a duplicate's
// lost answer is the answer another delivery already gave, so the service may well know it.
// Review wire-4: a client that sends its whole request, then half-closes (FIN; it could still
// read). Node (httpAllowHalfOpen false) ends the socket's writable side without destroying the
// request, which is complete; the function ran, and node:http and Express wrote the answer into
// the ended socket: lost, and not reported (Koa's close watch reported it). Event-driven: the
// function answers once the server has ended its side.
describe("a client that half-closes after its request, the function answering after Node ended the socket", () => {
  const builds: [string, (failures: CallbackFailure[], ran: () => Promise<void>) => Listener][] = [
    ["node:http", (failures, ran) => toNodeListener(orderAfter(failures, ran)) as Listener],
    [
      "Express 5",
      (failures, ran) => {
        const app = express();
        app.use(toExpress(orderAfter(failures, ran)));
        return app as unknown as Listener;
      },
    ],
    [
      "Koa 3",
      (failures, ran) => {
        const app = new Koa();
        app.on("error", () => undefined);
        app.use(toKoa(orderAfter(failures, ran)));
        return app.callback() as unknown as Listener;
      },
    ],
  ];

  function orderAfter(failures: CallbackFailure[], ran: () => Promise<void>) {
    return createSendOrderToMerchantHandler(
      async (o) => {
        await ran();
        return { InternalOrderId: `M-${o.OrderId}` };
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
  }

  for (const [label, build] of builds) {
    it(`${label}: the answer that cannot go out is reported once as client_closed`, async () => {
      const failures: CallbackFailure[] = [];
      let serverSocket: import("node:net").Socket | undefined;
      let returned: () => void = () => undefined;
      const answering = new Promise<void>((resolve) => {
        returned = resolve;
      });
      // Resolves once Node has handled the client's FIN (its own `end` listener came first).
      const ended = () =>
        new Promise<void>((resolve) => {
          const socket = serverSocket as import("node:net").Socket;
          const go = () => {
            resolve();
            returned();
          };
          if (socket.writableEnded) go();
          else socket.once("end", () => setImmediate(go));
        });
      const server = await serve(build(failures, ended));
      server.server.on("connection", (socket) => {
        serverSocket = socket;
      });
      const { connect } = await import("node:net");
      const client = connect(server.port, "127.0.0.1");
      client.on("error", () => undefined);
      let answer = "";
      client.setEncoding("utf8");
      client.on("data", (chunk: string) => {
        answer += chunk;
      });
      client.end(
        `POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(order)}\r\n\r\n${order}`,
      );
      await answering;
      // After the adapter's write (a few promise turns, before any timer), then the connection's end
      // (Koa's watch reports at the response's close).
      await sleep(50);
      client.destroy();
      await reported(failures, 1);
      server.close();
      // Delivered (the client can still read), or reported: never lost without a word.
      if (answer.startsWith("HTTP/1.1 200")) expect(failures).toEqual([]);
      else {
        expect(answer).toBe("");
        expectOneClosed(failures);
        expect(failures[0]?.reason).toMatch(/after SendOrderToMerchant's function ran/);
      }
    });
  }
});

describe("the reason of an undelivered answer says only what is known", () => {
  it("a server's own socket timeout (server.timeout) is a closed connection, not the client closing", async () => {
    const failures: CallbackFailure[] = [];
    const server = await serve(toNodeListener(slowOrder(failures)));
    server.server.timeout = 100; // the merchant's server gives up; the service was still waiting
    expect(await post(server.port, "/x")).toBeUndefined();
    await sleep(400);
    server.close();
    expectOneClosed(failures);
    expect(failures[0]?.reason).toMatch(
      /^the connection closed \(by the client, a proxy or a server timeout\) after SendOrderToMerchant's function ran: its answer \(a success, 200\) was not delivered/,
    );
    expect(failures[0]?.reason).not.toMatch(/client closed/);
  });

  // fix-left2: a connection closed before the function ran was still put down to the client
  // ("the client went away …"), though the server's own timeout or a proxy may have closed it.
  it("before the function ran: a server's own socket timeout mid-body is a closed connection, not the client going away", async () => {
    const failures: CallbackFailure[] = [];
    let ran = false;
    const handler = createSendOrderToMerchantHandler(
      (o) => {
        ran = true;
        return { InternalOrderId: `M-${o.OrderId}` };
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    const server = await serve(toNodeListener(handler));
    server.server.timeout = 100; // the merchant's server gives up on a body that stopped coming
    await new Promise<void>((resolve) => {
      const req = request({
        port: server.port,
        method: "POST",
        path: "/x",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(order),
        },
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.write(order.slice(0, 40)); // and the rest never comes
    });
    await reported(failures, 1);
    server.close();
    expect(ran).toBe(false);
    expectOneClosed(failures);
    expect(failures[0]?.reason).toBe(
      "the connection closed (by the client, a proxy or a server timeout) before the body was complete, or its body stream failed",
    );
    expect(failures[0]?.reason).not.toMatch(/client (went away|closed)/);
  });

  it("withIdempotency: a duplicate whose client left while the first delivery got its 200 does not say the service did not learn the outcome", async () => {
    const failures: CallbackFailure[] = [];
    let runs = 0;
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async (o) => {
        runs++;
        await sleep(500);
        return { InternalOrderId: `M-${o.OrderId}` };
      }),
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    const server = await serve(toNodeListener(handler));
    const first = post(server.port, "/x");
    await sleep(50);
    await hangUp(server.port, "/x", 150);
    expect(await first).toBe(200);
    await sleep(300);
    server.close();
    expect(runs).toBe(1);
    expect(failures.map((f) => f.kind)).toEqual(["client_closed"]);
    expect(failures[0]?.reason).not.toMatch(/did not learn/);
    expect(failures[0]?.reason).toMatch(
      /not delivered on this request, so the service may not know/,
    );
  });
});

// second-ops-7: Koa writes ctx.body after the whole chain. toKoa looked at the response only when
// it returned, so a client that left later (an upstream middleware awaiting after next(), as
// koa-session commits to its store) lost the answer without a word.
describe("Koa: an answer lost after toKoa returned", () => {
  /** A middleware in front that awaits after next() (a session commit, say). */
  const waitAfterNext = (ms: number) => async (_ctx: unknown, next: () => Promise<unknown>) => {
    await next();
    onUpstreamWait?.();
    await sleep(ms);
  };

  for (const [name, K] of [
    ["Koa 3", Koa],
    ["Koa 2", Koa2 as unknown as typeof Koa],
  ] as const) {
    it(`${name}: the client leaves while an upstream middleware awaits after next(): one client_closed`, async () => {
      const failures: CallbackFailure[] = [];
      const app = new K();
      app.silent = true;
      app.use(waitAfterNext(200));
      app.use(toKoa(slowOrder(failures, false, 100)));
      const server = await serve(app.callback());
      await hangUpWhenUpstreamWaits(server.port, "/x");
      await reported(failures, 1);
      server.close();
      expect(failures.map((f) => [f.kind, f.callback])).toEqual([
        ["client_closed", "SendOrderToMerchant"],
      ]);
      expect(failures[0]?.reason).toMatch(/a success, 200\) was not delivered/);
    });

    it(`${name}: a middleware in front throws after next() (Koa answers 500): one internal_error`, async () => {
      const failures: CallbackFailure[] = [];
      const app = new K();
      app.silent = true;
      app.use(async (_ctx, next) => {
        await next();
        throw new Error("session store down");
      });
      app.use(toKoa(slowOrder(failures, false, 20)));
      const server = await serve(app.callback());
      expect(await post(server.port, "/x")).toBe(500);
      await reported(failures, 1);
      server.close();
      expect(failures.map((f) => [f.kind, f.callback])).toEqual([
        ["internal_error", "SendOrderToMerchant"],
      ]);
      expect(failures[0]?.reason).toMatch(
        /something else answered.*a success, 200\) was not delivered/,
      );
    });

    it(`${name}: a middleware in front replaces the answer after next() (ctx.status = 503): one internal_error`, async () => {
      const failures: CallbackFailure[] = [];
      const app = new K();
      app.use(async (ctx, next) => {
        await next();
        ctx.status = 503;
        ctx.body = "maintenance";
      });
      app.use(toKoa(slowOrder(failures, false, 20)));
      const server = await serve(app.callback());
      expect(await post(server.port, "/x")).toBe(503);
      await reported(failures, 1);
      server.close();
      expect(failures.map((f) => f.kind)).toEqual(["internal_error"]);
    });

    it(`${name}: a delivered answer, after an upstream middleware's wait, reports nothing`, async () => {
      const failures: CallbackFailure[] = [];
      const app = new K();
      app.use(waitAfterNext(150));
      app.use(toKoa(slowOrder(failures, false, 50)));
      const server = await serve(app.callback());
      expect(await post(server.port, "/x")).toBe(200);
      expect(await post(server.port, "/x")).toBe(200);
      await sleep(100);
      server.close();
      expect(failures).toEqual([]);
    });
  }

  it("an answer given before the function ran (a 400), lost after toKoa returned, is not reported", async () => {
    const failures: CallbackFailure[] = [];
    const app = new Koa();
    app.silent = true;
    app.use(waitAfterNext(200));
    app.use(toKoa(slowOrder(failures)));
    const server = await serve(app.callback());
    await new Promise<void>((resolve) => {
      const req = request({ port: server.port, method: "POST", path: "/x" });
      req.on("error", () => resolve());
      req.end("{ not json");
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    await sleep(300);
    server.close();
    expect(failures.map((f) => f.kind)).toEqual(["malformed_body"]);
  });

  it("HTTP/2 (Koa on Node's compatibility API): a delivered answer, after an upstream wait, reports nothing", async () => {
    const failures: CallbackFailure[] = [];
    const app = new Koa();
    app.use(waitAfterNext(100));
    app.use(toKoa(slowOrder(failures, false, 50)));
    const server = http2.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const status = await new Promise<unknown>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/x",
        "content-type": "application/json",
      });
      stream.on("response", (headers) => resolve(headers[":status"]));
      stream.on("error", reject);
      stream.resume();
      stream.end(order);
    });
    await sleep(100);
    session.close();
    server.close();
    expect(status).toBe(200);
    expect(failures).toEqual([]);
  });
});
