// Review limits, on real servers driven by a raw socket:
// - limits-1: a GET (GetCheckoutCartInfo) carrying a body that never ends was answered, then its
//   connection held for as long as the client kept sending (neither `bodyTimeoutMs` nor the drain
//   cap applied), where a refusal on the same server is cut off at `bodyTimeoutMs`;
// - limits-2: Node keeps the first `maxHeadersCount` (2,000) header fields and drops the rest
//   silently, so an `Authorization` sent twice with 2,000 other headers between went through.
import { createServer, type RequestListener, type Server } from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { serve } from "@hono/node-server";
import express from "express";
import { Hono } from "hono";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import {
  type CallbackEndpoint,
  type CallbackFailure,
  createCallbackRouter,
} from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { nodeRefusesExtraHeaderFields } from "./support/servers.js";

const BODY_TIMEOUT_MS = 500;

let keys: ServiceKeys;
/** Node's own bare 431 for too many header fields, or the adapters' (review nodes-1). */
let nodeRefusesExtraFields: boolean;
beforeAll(async () => {
  keys = await createServiceKeys();
  nodeRefusesExtraFields = await nodeRefusesExtraHeaderFields();
});

interface Served {
  readonly port: number;
  close(): Promise<void>;
}

function plain(server: Server): Promise<Served> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    );
  });
}

const SERVERS: [string, (router: CallbackEndpoint) => Promise<Served>][] = [
  ["node:http", (router) => plain(createServer(toNodeListener(router) as RequestListener))],
  [
    "Express",
    (router) => {
      const app = express();
      app.use(toExpress(router));
      return plain(createServer(app));
    },
  ],
  [
    "Koa",
    (router) => {
      const app = new Koa();
      app.on("error", () => undefined);
      app.use(toKoa(router));
      return plain(createServer(app.callback()));
    },
  ],
  [
    "Hono (@hono/node-server)",
    (router) => {
      const app = new Hono();
      const handle = toFetch(router);
      app.all("/crossborder/*", (c) => handle(c.req.raw));
      return new Promise((resolve) => {
        const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) =>
          resolve({
            port: info.port,
            close: () =>
              new Promise<void>((done) => {
                (server as Server).closeAllConnections();
                server.close(() => done());
              }),
          }),
        );
      });
    },
  ],
];

/**
 * Sends `head` (a request line and headers), then a few body bytes every 50 ms; resolves with the
 * status the server answered and when it closed the connection (`null`: still open after `holdMs`).
 */
function trickle(
  port: number,
  head: string,
  holdMs: number,
): Promise<{ status: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.write(head);
    const sending = setInterval(() => {
      if (!socket.destroyed) socket.write('{"a":1,');
    }, 50);
    const giveUp = setTimeout(() => {
      clearInterval(sending);
      socket.destroy();
      resolve({ status: text.slice(9, 12), closedAfterMs: null });
    }, holdMs);
    socket.on("close", () => {
      clearInterval(sending);
      clearTimeout(giveUp);
      resolve({ status: text.slice(9, 12), closedAfterMs: performance.now() - started });
    });
  });
}

/** One request on its own connection; resolves with the status line's code. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("close", () => resolve(text.slice(9, 12) || "closed"));
    socket.write(request);
  });
}

describe.each(SERVERS)("%s", (name, start) => {
  const failures: CallbackFailure[] = [];
  let served: Served;
  beforeAll(async () => {
    served = await start(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: false,
        bodyTimeoutMs: BODY_TIMEOUT_MS,
        onError: (failure) => void failures.push(failure),
        handlers: {
          GetCheckoutCartInfo: () => ({ productsList: [] }),
          SendOrderToMerchant: (order) => ({ InternalOrderId: `M-${order.OrderId}` }),
        },
      }),
    );
  });
  afterAll(() => served.close());

  // A fetch Request has no body on a GET: @hono/node-server leaves Node's request unread, which
  // Node discards until its own `requestTimeout` (README, "Failures").
  if (!name.startsWith("Hono")) {
    it("cuts off a GET whose body never ends, as it cuts off a refused body (limits-1)", async () => {
      const head = (line: string, length: string) =>
        `${line} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${length}\r\n\r\n`;
      const [get, chunked, refused] = await Promise.all([
        trickle(
          served.port,
          head(
            "GET /crossborder/GetCheckoutCartInfo?merchantCartToken=c1",
            "Content-Length: 100000000",
          ),
          8_000,
        ),
        trickle(
          served.port,
          `GET /crossborder/GetCheckoutCartInfo?merchantCartToken=c1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n`,
          8_000,
        ),
        trickle(
          served.port,
          head("PUT /crossborder/SendOrderToMerchant", "Content-Length: 100000000"),
          8_000,
        ),
      ]);
      expect(refused.status).toBe("405");
      expect(refused.closedAfterMs).not.toBeNull();
      expect(get.status).toBe("200");
      expect(get.closedAfterMs, "the GET's connection still open after 8 s").not.toBeNull();
      expect(chunked.status).toBe("200");
      expect(
        chunked.closedAfterMs,
        "the chunked GET's connection still open after 8 s",
      ).not.toBeNull();
    }, 20_000);
  }

  it("a GET with a body that arrived whole is answered and the connection serves on", async () => {
    const socket = connect(served.port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    const get = "GET /crossborder/GetCheckoutCartInfo?merchantCartToken=c1 HTTP/1.1\r\nHost: x\r\n";
    socket.write(`${get}Content-Length: 2\r\n\r\n{}${get}\r\n`);
    await expect.poll(() => text.match(/HTTP\/1\.1 200/g)?.length ?? 0, { timeout: 5_000 }).toBe(2);
    socket.destroy();
  });
});

// Hono on @hono/node-server gets the headers Node kept, as a Request: the count is not seen there.
describe.each(SERVERS.slice(0, 3))("%s", (_name, start) => {
  it("refuses with 431 a request Node cut to its first maxHeadersCount headers (limits-2)", async () => {
    const failures: CallbackFailure[] = [];
    let runs = 0;
    const served = await start(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: createAuth({
          jwt: { environment: "test", keys: { test: keys.publicKeyPem } },
          merchantGuid: MERCHANT_GUID,
        }),
        onError: (failure) => void failures.push(failure),
        handlers: {
          SendOrderToMerchant: (order) => {
            runs++;
            return { InternalOrderId: `M-${order.OrderId}` };
          },
        },
      }),
    );
    try {
      const token = await keys.sign();
      const body = fixture("SendOrderToMerchant");
      const request = (headers: string) =>
        `POST /crossborder/SendOrderToMerchant HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;
      // About 16 KB of short headers, under Node's 16 KiB limit on the header section.
      const filler = Array.from({ length: 2_000 }, (_, i) => `x${i}:1\r\n`).join("");
      const twice = `Authorization: Bearer ${token}\r\n${filler}Authorization: Bearer other\r\n`;
      expect(await exchange(served.port, request(twice))).toBe("431");
      expect(runs).toBe(0);
      if (nodeRefusesExtraFields) {
        // Node's own bare 431: the adapter never sees the request (README, "Status codes").
        expect(failures).toEqual([]);
      } else {
        expect(failures.map((failure) => [failure.kind, failure.status])).toEqual([
          ["header_too_large", 431],
        ]);
        expect(failures[0]?.reason).toMatch(/^more than 1000 header fields/);
      }
      // Many headers under the limit are fine.
      const some = Array.from({ length: 100 }, (_, i) => `x${i}:1\r\n`).join("");
      expect(
        await exchange(served.port, request(`Authorization: Bearer ${token}\r\n${some}`)),
      ).toBe("200");
      expect(runs).toBe(1);
    } finally {
      await served.close();
    }
  });
});

// Review second-kit-3/4: a negative maxHeadersCount is no limit to Node (its parser keeps every
// field), and was read as the default; a GET sent without a body (no Content-Length, no
// Transfer-Encoding) set a drain timer and four listeners when nothing awaited before the read.
describe("node:http, the server's own limits", () => {
  async function serve(maxHeadersCount: number | undefined, bodyTimeoutMs = 4_321) {
    const failures: CallbackFailure[] = [];
    const server = createServer(
      toNodeListener(
        createCallbackRouter({
          basePath: "/crossborder",
          auth: false,
          bodyTimeoutMs,
          onError: (failure) => void failures.push(failure),
          handlers: { GetCheckoutCartInfo: () => ({ productsList: [] }) },
        }),
      ) as RequestListener,
    );
    if (maxHeadersCount !== undefined) server.maxHeadersCount = maxHeadersCount;
    return { failures, served: await plain(server) };
  }
  const get = (fields: number) =>
    `GET /crossborder/GetCheckoutCartInfo?merchantCartToken=c1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${Array.from({ length: fields }, (_, i) => `x${i}:1\r\n`).join("")}\r\n`;

  it("a negative or zero maxHeadersCount keeps every field: no 431", async () => {
    for (const max of [-1, 0]) {
      const { failures, served } = await serve(max);
      try {
        expect(await exchange(served.port, get(1_500))).toBe("200");
        expect(failures).toEqual([]);
      } finally {
        await served.close();
      }
    }
    const { failures, served } = await serve(50);
    try {
      expect(await exchange(served.port, get(40))).toBe("200");
      expect(await exchange(served.port, get(60))).toBe("431");
      expect(failures.map((failure) => failure.reason)).toEqual(
        nodeRefusesExtraFields
          ? []
          : [
              "more than 50 header fields: the server keeps the first 50 only, so a header sent twice could not be seen",
            ],
      );
    } finally {
      await served.close();
    }
  });

  it("a GET without a body sets no drain timer", async () => {
    const { served } = await serve(undefined);
    const real = globalThis.setTimeout;
    let timers = 0;
    globalThis.setTimeout = ((fn: () => void, ms?: number, ...rest: unknown[]) => {
      if (ms === 4_321) timers++;
      return real(fn, ms, ...rest);
    }) as typeof setTimeout;
    try {
      for (let i = 0; i < 3; i++) expect(await exchange(served.port, get(0))).toBe("200");
      // Nor one declaring an empty body (review last3-3).
      const empty = get(0).replace(
        "Connection: close\r\n",
        "Connection: close\r\nContent-Length: 0\r\n",
      );
      expect(await exchange(served.port, empty)).toBe("200");
    } finally {
      globalThis.setTimeout = real;
      await served.close();
    }
    expect(timers).toBe(0);
  });
});

// Over HTTP/2 a request needs neither Content-Length nor Transfer-Encoding to carry a body.
it("HTTP/2: a GET whose body never ends is let go at bodyTimeoutMs, its stream reset", async () => {
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth: false,
    bodyTimeoutMs: 300,
    onError: () => undefined,
    handlers: { GetCheckoutCartInfo: () => ({ productsList: [] }) },
  });
  const server = http2.createServer(toNodeListener(router) as never);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const stream = session.request(
      { ":method": "GET", ":path": "/crossborder/GetCheckoutCartInfo?merchantCartToken=c1" },
      { endStream: false },
    );
    stream.on("error", () => undefined);
    stream.write("{");
    const sending = setInterval(() => {
      if (!stream.destroyed && !stream.closed) stream.write(" ");
    }, 50);
    const closed = new Promise<boolean>((resolve) => {
      stream.on("close", () => resolve(true));
      setTimeout(() => resolve(false), 8_000);
    });
    const status = await new Promise((resolve) =>
      stream.on("response", (h) => resolve(h[":status"])),
    );
    stream.resume();
    expect(status).toBe(200);
    expect(await closed, "the GET's stream still open after 8 s").toBe(true);
    clearInterval(sending);
  } finally {
    session.destroy();
    server.close();
  }
}, 20_000);
