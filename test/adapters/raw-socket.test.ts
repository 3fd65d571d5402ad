// Issue #10, findings 6–8, on real servers driven by a raw socket (a fetch client cannot send a
// header twice, stop half-way through a body, or trickle one byte at a time):
// - a header sent twice is a 401 (Node keeps only the first Authorization);
// - a client that goes away mid-body is reported as `client_closed`, not a 500;
// - a body that takes longer than `bodyTimeoutMs` is answered 408 and the connection let go;
// - a refused body is drained (the answer still reaches the client): below the drain cap (64 MiB)
//   the connection then serves the next request; a client streaming past it is cut off.
import { createServer, type RequestListener, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { deflateSync, gzipSync } from "node:zlib";
import express5 from "express";
import express4 from "express4";
import Koa3 from "koa";
import Koa2 from "koa2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { listen, type Running } from "./support/servers.js";

const ORDER = fixture("SendOrderToMerchant");
const BODY_TIMEOUT_MS = 400;

let keys: ServiceKeys;
beforeAll(async () => {
  keys = await createServiceKeys();
});

function router(failures: CallbackFailure[], bodyTimeoutMs = BODY_TIMEOUT_MS) {
  return createCallbackRouter({
    basePath: "/crossborder",
    auth: createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKeyPem } },
      merchantGuid: MERCHANT_GUID,
    }),
    bodyTimeoutMs,
    onError: (failure) => void failures.push(failure),
    handlers: {
      SendOrderToMerchant: (order) => ({ InternalOrderId: `M-${order.OrderId}` }),
    },
  });
}

type Build = (failures: CallbackFailure[], bodyTimeoutMs?: number) => RequestListener | Server;

const SERVERS: [string, Build][] = [
  [
    "node:http",
    (failures, bodyTimeoutMs) => toNodeListener(router(failures, bodyTimeoutMs)) as RequestListener,
  ],
  [
    "Express 4",
    (failures, bodyTimeoutMs) => {
      const app = (express4 as unknown as typeof express5)();
      app.use(toExpress(router(failures, bodyTimeoutMs)));
      return app as unknown as RequestListener;
    },
  ],
  [
    "Express 5",
    (failures, bodyTimeoutMs) => {
      const app = express5();
      app.use(toExpress(router(failures, bodyTimeoutMs)));
      return app as unknown as RequestListener;
    },
  ],
  [
    "Koa 2",
    (failures, bodyTimeoutMs) => {
      const app = new Koa2();
      // Koa reports the socket closed under a half-sent body on its own "error" event (the
      // default handler prints it); the library's report is the one asserted here.
      app.on("error", () => undefined);
      app.use(toKoa(router(failures, bodyTimeoutMs)) as never);
      return createServer(app.callback());
    },
  ],
  [
    "Koa 3",
    (failures, bodyTimeoutMs) => {
      const app = new Koa3();
      app.on("error", () => undefined);
      app.use(toKoa(router(failures, bodyTimeoutMs)));
      return createServer(app.callback());
    },
  ],
];

interface Exchange {
  /** Everything the server wrote. */
  readonly text: string;
  /** When the server ended or closed the connection, in ms after the request started. */
  readonly closedAfterMs: number;
}

function open(port: number): Socket {
  return connect(port, "127.0.0.1");
}

/** Collects what the server writes until it closes the connection (or `limitMs` passes). */
function readUntilClosed(socket: Socket, started: number, limitMs = 5000): Promise<Exchange> {
  return new Promise((resolve) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", () => undefined);
    const done = () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: performance.now() - started });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, limitMs);
    socket.once("close", done);
  });
}

function head(
  lines: string[],
  length: number,
  target = "/crossborder/SendOrderToMerchant",
): string {
  return `${[`POST ${target} HTTP/1.1`, "Host: 127.0.0.1", ...lines, `Content-Length: ${length}`, "Content-Type: application/json", "Connection: close"].join("\r\n")}\r\n\r\n`;
}

/** The drain cap of src/adapters/internal.ts (MAX_DRAIN_BYTES). */
const DRAIN_CAP = 64 * 1024 * 1024;
const MIB = 1024 * 1024;

/** A request head that keeps the connection open (HTTP/1.1's default). */
function keepAliveHead(authorization: string, length: number): string {
  return `${["POST /crossborder/SendOrderToMerchant HTTP/1.1", "Host: 127.0.0.1", `Authorization: ${authorization}`, `Content-Length: ${length}`, "Content-Type: application/json"].join("\r\n")}\r\n\r\n`;
}

/** Whether the text ends with a whole JSON answer (the library's answers are one object). */
function answered(text: string): true | undefined {
  return /\r\n\r\n\{.*\}$/s.test(text) ? true : undefined;
}

/** Writes `chunk` (with backpressure) until `total` bytes are written or the socket closes. */
async function stream(socket: Socket, chunk: Uint8Array, total: number): Promise<number> {
  let written = 0;
  while (written < total && !socket.destroyed) {
    const piece = chunk.subarray(0, Math.min(chunk.byteLength, total - written));
    const flushed = socket.write(piece);
    written += piece.byteLength;
    if (!flushed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off("drain", done);
          socket.off("close", done);
          resolve();
        };
        socket.once("drain", done);
        socket.once("close", done);
      });
    }
  }
  return written;
}

function statusOf(exchange: Exchange): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(exchange.text)?.[1] ?? 0);
}

async function waitFor<T>(probe: () => T | undefined, limitMs = 3000): Promise<T> {
  const until = performance.now() + limitMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (performance.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const [label, build] of SERVERS) {
  describe(label, () => {
    const failures: CallbackFailure[] = [];
    let server: Running;
    let port: number;
    beforeAll(async () => {
      server = await listen(build(failures));
      port = Number(new URL(server.baseUrl).port);
    });
    afterAll(() => server.close());

    async function send(request: string | Uint8Array): Promise<Exchange> {
      const socket = open(port);
      const started = performance.now();
      const reading = readUntilClosed(socket, started);
      socket.write(request);
      return reading;
    }

    it("control: one Authorization header, the order is accepted", async () => {
      const token = await keys.sign();
      const exchange = await send(
        `${head([`Authorization: Bearer ${token}`], Buffer.byteLength(ORDER))}${ORDER}`,
      );
      expect(statusOf(exchange)).toBe(200);
    });

    it.each([
      [
        "a valid token, then garbage",
        (token: string) => [`Authorization: Bearer ${token}`, "Authorization: garbage"],
      ],
      [
        "garbage, then a valid token",
        (token: string) => ["Authorization: garbage", `Authorization: Bearer ${token}`],
      ],
      [
        "the same valid token twice",
        (token: string) => [`Authorization: Bearer ${token}`, `authorization: Bearer ${token}`],
      ],
    ])("6. Authorization sent twice (%s): 401", async (_case, lines) => {
      failures.length = 0;
      const token = await keys.sign();
      const exchange = await send(`${head(lines(token), Buffer.byteLength(ORDER))}${ORDER}`);
      expect(statusOf(exchange)).toBe(401);
      expect(exchange.text).toContain('"ErrorCode":"UNAUTHORIZED"');
      expect(failures.map((f) => f.kind)).toEqual(["unauthorized"]);
    });

    // Node takes a Transfer-Encoding whose last coding is chunked (it answers 400 itself to one
    // that ends otherwise, `gzip` alone), undoes only the chunking and hands the gzip bytes on.
    it.each([
      ["gzip, chunked", 415],
      ["Deflate , chunked", 415],
      ["identity, chunked", 200],
      ["Chunked", 200],
    ])("Transfer-Encoding: %s (the body coded as it says): %i", async (coding, status) => {
      failures.length = 0;
      const token = await keys.sign();
      const body = /gzip|deflate/i.test(coding)
        ? (/gzip/i.test(coding) ? gzipSync : deflateSync)(ORDER)
        : Buffer.from(ORDER);
      const lines = [
        "POST /crossborder/SendOrderToMerchant HTTP/1.1",
        "Host: 127.0.0.1",
        `Authorization: Bearer ${token}`,
        `Transfer-Encoding: ${coding}`,
        "Content-Type: application/json",
        "Connection: close",
      ];
      const exchange = await send(
        Buffer.concat([
          Buffer.from(`${lines.join("\r\n")}\r\n\r\n${body.length.toString(16)}\r\n`),
          body,
          Buffer.from("\r\n0\r\n\r\n"),
        ]),
      );
      expect(statusOf(exchange)).toBe(status);
      if (status === 415) {
        expect(exchange.text).toContain('"ErrorCode":"UNSUPPORTED_MEDIA_TYPE"');
        expect(failures.map((f) => f.kind)).toEqual(["unsupported_media_type"]);
      } else expect(exchange.text).toContain('"InternalOrderId":"M-');
    });

    // Review H2, H1-3: Node hands an absolute-form target on as sent; its path is what follows the
    // authority up to `?` or `#`, empty (so `/`) when a `?` comes first, as Express and Koa read it.
    it.each([
      ["http://127.0.0.1/crossborder/SendOrderToMerchant", 200],
      ["http://127.0.0.1?/crossborder/SendOrderToMerchant", 404],
      ["http://127.0.0.1:80?/crossborder/SendOrderToMerchant", 404],
    ])("an absolute-form target, %s: %i", async (target, status) => {
      failures.length = 0;
      const token = await keys.sign();
      const exchange = await send(
        `${head([`Authorization: Bearer ${token}`], Buffer.byteLength(ORDER), target)}${ORDER}`,
      );
      expect(statusOf(exchange)).toBe(status);
      if (status === 200) expect(exchange.text).toContain('"InternalOrderId":"M-');
      else expect(exchange.text).not.toContain("InternalOrderId");
    });

    it("7. a client that goes away mid-body is reported as client_closed, not a 500", async () => {
      failures.length = 0;
      const token = await keys.sign();
      const socket = open(port);
      socket.on("error", () => undefined);
      socket.write(head([`Authorization: Bearer ${token}`], Buffer.byteLength(ORDER)));
      socket.write(ORDER.slice(0, 100));
      await waitFor(() => (socket.bytesWritten > 100 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      const failure = await waitFor(() => failures[0]);
      expect(failure).toMatchObject({
        kind: "client_closed",
        status: 499,
        callback: "SendOrderToMerchant",
      });
      expect(failures.some((f) => f.kind === "internal_error")).toBe(false);
    });

    it("8. a body trickling past bodyTimeoutMs is answered 408 and the connection let go", async () => {
      failures.length = 0;
      const token = await keys.sign();
      const socket = open(port);
      const started = performance.now();
      const reading = readUntilClosed(socket, started, 10_000);
      socket.write(head([`Authorization: Bearer ${token}`], Buffer.byteLength(ORDER)));
      // One byte every 50 ms: alive, but never done within the deadline.
      let sent = 0;
      const trickle = setInterval(() => {
        if (!socket.destroyed && sent < ORDER.length) socket.write(ORDER.charAt(sent++));
      }, 50);
      const exchange = await reading;
      clearInterval(trickle);
      expect(statusOf(exchange)).toBe(408);
      expect(exchange.text).toContain('"ErrorCode":"REQUEST_TIMEOUT"');
      expect(exchange.text.toLowerCase()).toContain("connection: close");
      // Answered at the deadline, then closed by the server: not at Node's 300 s.
      expect(exchange.closedAfterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 20);
      expect(exchange.closedAfterMs).toBeLessThan(BODY_TIMEOUT_MS + 4000);
      expect(failures.map((f) => f.kind)).toEqual(["request_timeout"]);
      expect(failures[0]?.status).toBe(408);
      // The server goes on serving.
      const next = await send(
        `${head([`Authorization: Bearer ${await keys.sign()}`], Buffer.byteLength(ORDER))}${ORDER}`,
      );
      expect(statusOf(next)).toBe(200);
    }, 15_000);

    it.each([
      ["401 before the body is read", "Bearer forged", 4 * MIB, 401],
      ["413 while it is read", "valid", 2 * MIB, 413],
    ])(
      "9. a refused body below the drain cap (%s) is drained: the connection serves the next request",
      async (_case, authorization, size, status) => {
        // The drain's deadline (bodyTimeoutMs from the refusal) must not be what this measures:
        // 4 MiB may take longer than this file's 400 ms on a loaded machine.
        const patient = await listen(build([], 60_000));
        const token = await keys.sign();
        const socket = open(Number(new URL(patient.baseUrl).port));
        socket.on("error", () => undefined);
        let text = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
          text += chunk;
        });
        const value = authorization === "valid" ? `Bearer ${token}` : authorization;
        socket.write(keepAliveHead(value, size));
        await stream(socket, new Uint8Array(MIB).fill(0x20), size);
        await waitFor(() => answered(text));
        expect(statusOf({ text, closedAfterMs: 0 })).toBe(status);
        expect(text.toLowerCase()).not.toContain("connection: close");
        // The same connection, the next request: the rest of the refused body was read and let go.
        text = "";
        socket.write(`${keepAliveHead(`Bearer ${token}`, Buffer.byteLength(ORDER))}${ORDER}`);
        await waitFor(() => answered(text));
        expect(statusOf({ text, closedAfterMs: 0 })).toBe(200);
        expect(socket.destroyed).toBe(false);
        socket.destroy();
        await patient.close();
      },
      15_000,
    );

    // Review wire-1: the drain of a refused body had no deadline, so a client with no token that
    // trickles its body held the connection for Node's requestTimeout (330 s measured), where a
    // valid token's trickle got its 408 at bodyTimeoutMs. A refused body is now drained within
    // bodyTimeoutMs of the refusal, then the connection is let go; the answer goes first, without
    // `Connection: close` (a fast client still reads it and keeps its connection: test 9).
    it.each([
      [
        "401, a forged token",
        "POST",
        "/crossborder/SendOrderToMerchant",
        "Bearer forged.forged.forged",
        5000,
        401,
      ],
      [
        "413, a Content-Length over the limit",
        "POST",
        "/crossborder/SendOrderToMerchant",
        "valid",
        2 * MIB,
        413,
      ],
      ["405, PUT", "PUT", "/crossborder/SendOrderToMerchant", "valid", 5000, 405],
      [
        "404, an unknown callback (the listener's own)",
        "POST",
        "/crossborder/Nope",
        "valid",
        5000,
        404,
      ],
    ])(
      "10. a refused body still trickling (%s) is let go within bodyTimeoutMs of the answer",
      async (_case, method, target, authorization, length, status) => {
        // Express and Koa hand a path the router does not serve to the framework (its own 404).
        if (status === 404 && label !== "node:http") return;
        const value = authorization === "valid" ? `Bearer ${await keys.sign()}` : authorization;
        const socket = open(port);
        const started = performance.now();
        const reading = readUntilClosed(socket, started, 15_000);
        let received = "";
        let answeredAt = Number.NaN;
        socket.on("data", (chunk: string) => {
          received += chunk;
          if (Number.isNaN(answeredAt) && answered(received)) answeredAt = performance.now();
        });
        socket.write(
          `${[`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: ${value}`, `Content-Length: ${length}`, "Content-Type: application/json"].join("\r\n")}\r\n\r\n{`,
        );
        // One byte every 50 ms: alive, never done.
        const trickle = setInterval(() => {
          if (!socket.destroyed) socket.write(" ");
        }, 50);
        const exchange = await reading;
        clearInterval(trickle);
        expect(statusOf(exchange)).toBe(status);
        // Answered at once, keeping the connection (draining first), then let go: not at 15 s
        // (today: Node's requestTimeout, 300 s).
        expect(exchange.text.toLowerCase()).not.toContain("connection: close");
        expect(exchange.closedAfterMs).toBeLessThan(BODY_TIMEOUT_MS + 6000);
        // Held bodyTimeoutMs from the refusal (the drain's deadline), which comes after the
        // request was sent and before the answer is written: the connection outlives the answer
        // by bodyTimeoutMs less the time the answer took (a few ms on a quiet machine). Measured
        // from the answer's arrival alone (as it was), a loaded machine's slower answer failed it
        // (held 301 ms after the 401 arrived, the event loop never held up past 32 ms).
        const answerTookMs = answeredAt - started;
        expect(answerTookMs).toBeLessThan(exchange.closedAfterMs);
        expect(
          exchange.closedAfterMs,
          `answered ${Math.round(answerTookMs)} ms after the request`,
        ).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
      },
      20_000,
    );

    it("9. a client streaming a refused body past the drain cap is answered, then cut off", async () => {
      // The cap, not the drain's deadline (bodyTimeoutMs from the refusal, test 10), cuts it off
      // here: 64 MiB may take longer than this file's 400 ms on a loaded machine.
      const patient = await listen(build([], 60_000));
      const socket = open(Number(new URL(patient.baseUrl).port));
      socket.on("error", () => undefined);
      const started = performance.now();
      const reading = readUntilClosed(socket, started, 15_000);
      // Declares 1 GiB; the server answers 413 after 1 MiB, then drains up to the cap.
      socket.write(keepAliveHead(`Bearer ${await keys.sign()}`, 1024 * MIB));
      const written = await stream(socket, new Uint8Array(MIB).fill(0x20), 3 * DRAIN_CAP);
      const exchange = await reading;
      expect(statusOf(exchange)).toBe(413);
      expect(exchange.text).toContain('"ErrorCode":"PAYLOAD_TOO_LARGE"');
      // Cut off near the cap (what the kernel buffers between the two ends aside), not at 3x it.
      expect(written).toBeGreaterThan(DRAIN_CAP);
      expect(written).toBeLessThan(DRAIN_CAP + 32 * MIB);
      expect(exchange.closedAfterMs).toBeLessThan(10_000);
      await patient.close();
    }, 20_000);
  });
}

// Review H2, H1-3: a guard mounted on the callbacks' path (a rate limiter, an IP allow-list) sees
// the path Express routes by; an absolute-form target whose query holds the callback's path must
// not reach the callback around it.
for (const [label, express] of [
  ["Express 4", express4 as unknown as typeof express5],
  ["Express 5", express5],
] as const) {
  describe(`${label}, a guard mounted on /crossborder in front of the callbacks`, () => {
    let server: Running;
    beforeAll(async () => {
      const app = express();
      app.use(
        "/crossborder",
        (_req, res) => void res.status(403).type("text/plain").send("guarded"),
      );
      app.use(toExpress(router([])));
      server = await listen(app as unknown as RequestListener);
    });
    afterAll(() => server.close());

    it.each([
      ["/crossborder/SendOrderToMerchant", 403],
      ["http://127.0.0.1/crossborder/SendOrderToMerchant", 403],
      ["http://127.0.0.1?/crossborder/SendOrderToMerchant", 404],
    ])("%s: %i, never the order's 200", async (target, status) => {
      const socket = open(Number(new URL(server.baseUrl).port));
      const reading = readUntilClosed(socket, performance.now());
      const token = await keys.sign();
      socket.write(
        `${head([`Authorization: Bearer ${token}`], Buffer.byteLength(ORDER), target)}${ORDER}`,
      );
      const exchange = await reading;
      expect(statusOf(exchange)).toBe(status);
      expect(exchange.text).not.toContain("InternalOrderId");
    });
  });
}

// Review H2, H1-4: a client that sends `Expect: 100-continue` and waits for the 100 before its body
// (RFC 9110 §10.1.1; .NET's HttpClient, curl for a large body). On Node's default server Node writes
// the 100 itself before the listener runs; with `server.on("checkContinue", …)` it leaves that to
// the listener, and the library writes it when it starts reading the body: after authentication,
// so a forged call is refused without its body being uploaded. Second reading of H2, D3: Bun's
// node:http keeps Node's `_sent100` but has no `_expect_continue`; the "bun flags" server leaves
// it unset the same way, so the library reads the request's Expect header instead.
type ContinueKind = "default" | "checkContinue" | "checkContinue, Bun's flags";
for (const [label, build] of SERVERS) {
  describe(`${label}, Expect: 100-continue`, () => {
    const failures: CallbackFailure[] = [];
    const servers: Record<ContinueKind, { port: number; close(): Promise<void> }> = {} as never;
    beforeAll(async () => {
      for (const kind of ["default", "checkContinue", "checkContinue, Bun's flags"] as const) {
        const built = build(failures);
        const server = typeof built === "function" ? createServer(built) : built;
        // The merchant decides: its request listener gets the request before any 100 is sent.
        if (kind !== "default") {
          server.on("checkContinue", (req, res) => {
            if (kind !== "checkContinue") {
              (res as { _expect_continue?: boolean | undefined })._expect_continue = undefined;
            }
            server.emit("request", req, res);
          });
        }
        const running = await listen(server);
        servers[kind] = { port: Number(new URL(running.baseUrl).port), close: running.close };
      }
    });
    afterAll(async () => {
      await servers.default?.close();
      await servers.checkContinue?.close();
      await servers["checkContinue, Bun's flags"]?.close();
    });

    /** Sends the head, waits for the server's first answer, then the body if that was a 100. */
    async function expecting(kind: ContinueKind, token: string) {
      failures.length = 0;
      const socket = open(servers[kind].port);
      const reading = readUntilClosed(socket, performance.now());
      let first = "";
      socket.on("data", (chunk: string) => {
        first += chunk;
      });
      socket.write(
        head([`Authorization: Bearer ${token}`, "Expect: 100-continue"], Buffer.byteLength(ORDER)),
      );
      await waitFor(() => (first.includes("\r\n\r\n") ? true : undefined));
      if (first.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) socket.write(ORDER);
      const exchange = await reading;
      const statuses = [...exchange.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map(([, code]) =>
        Number(code),
      );
      return { exchange, statuses };
    }

    it.each(["default", "checkContinue", "checkContinue, Bun's flags"] as const)(
      "%s: a valid call gets one 100 Continue, then its answer",
      async (kind) => {
        const { exchange, statuses } = await expecting(kind, await keys.sign());
        expect(statuses).toEqual([100, 200]);
        expect(exchange.text).toContain('"InternalOrderId":"M-');
      },
    );

    // RFC 9110 §10.1.1: an HTTP/1.0 client's expectation is ignored (Node sends it no 100 either).
    it.each(["default", "checkContinue, Bun's flags"] as const)(
      "%s: an HTTP/1.0 request with Expect: 100-continue gets no 100, only its answer",
      async (kind) => {
        failures.length = 0;
        const socket = open(servers[kind].port);
        const reading = readUntilClosed(socket, performance.now());
        const token = await keys.sign();
        socket.write(
          head(
            [`Authorization: Bearer ${token}`, "Expect: 100-continue"],
            Buffer.byteLength(ORDER),
          ).replace(" HTTP/1.1\r\n", " HTTP/1.0\r\n"),
        );
        // Long enough for the token's check and a 100, were one written.
        await new Promise((resolve) => setTimeout(resolve, 200));
        socket.write(ORDER);
        const exchange = await reading;
        expect(exchange.text).not.toContain("100 Continue");
        expect(statusOf(exchange)).toBe(200);
      },
    );

    it.each(["checkContinue", "checkContinue, Bun's flags"] as const)(
      "%s: a forged call is refused before its body is asked for (no 100)",
      async (kind) => {
        const { statuses } = await expecting(kind, "forged.forged.forged");
        expect(statuses).toEqual([401]);
        expect(failures.map((f) => f.kind)).toEqual(["unauthorized"]);
      },
    );
  });
}
