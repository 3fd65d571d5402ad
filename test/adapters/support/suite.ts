/**
 * The round trips every adapter must get right, on a real server: a signed order, a signed cart
 * query, a forged token, oversized bodies (declared and streamed) and malformed JSON; on the
 * non-Node runtimes, a body trickling past `bodyTimeoutMs` too.
 */
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { expect, it } from "vitest";
import { fixture, type ServiceKeys } from "./keys.js";
import { cartFor } from "./merchant.js";
import { LOOPBACK } from "./servers.js";

/** Sends a request to the server under test; `path` starts with `/`. */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

export interface RoundTripOptions {
  readonly send: () => Send;
  readonly keys: () => ServiceKeys;
  /** Where the callbacks are served. Default `/crossborder`. */
  readonly basePath?: string;
  /** The peer address the merchant's function must see. */
  readonly remoteAddress: RegExp;
  /**
   * Waits after a refused, unread body before the next request. Only for servers that close such a
   * connection a moment later without saying so, where a client reusing it at once would fail.
   */
  readonly afterRefusal?: () => Promise<void>;
  /** Size of the streamed oversized body. Default 2 MiB. */
  readonly streamedSize?: number;
  /**
   * Adds the 408 case, over a raw socket (a fetch client cannot trickle a body): the server's
   * `http://127.0.0.1:PORT`, the short `bodyTimeoutMs` it was started with, and what the runtime
   * does with the answer's `Connection: close` (node:http's is in raw-socket.test.ts).
   */
  readonly bodyTimeout?: BodyTimeoutCase;
}

export interface BodyTimeoutCase {
  readonly baseUrl: () => string;
  readonly ms: number;
  /** Whether the runtime sends the library's `Connection: close` header on (workerd drops it). */
  readonly connectionHeader: boolean;
  /**
   * Whether the runtime closes the connection after the 408 while the client keeps sending
   * (Deno does not: README, "Deno").
   */
  readonly closes: boolean;
}

const ORDER = fixture("SendOrderToMerchant");
const ONE_MIB = 1024 * 1024;

export const UNAUTHORIZED = {
  Success: false,
  ErrorCode: "UNAUTHORIZED",
  Message: "Unauthorized",
  Description: "",
};
/** The 401 of the gift-card validations: a failure never reads as a valid card. */
export const GIFT_CARD_UNAUTHORIZED = {
  ...UNAUTHORIZED,
  IsValid: false,
  ErrorText: "Unauthorized",
};
export const PAYLOAD_TOO_LARGE = {
  Success: false,
  ErrorCode: "PAYLOAD_TOO_LARGE",
  Message: "Request body too large",
  Description: "",
};
export const REQUEST_TIMEOUT = {
  Success: false,
  ErrorCode: "REQUEST_TIMEOUT",
  Message: "Request body not received in time",
  Description: "",
};
export const MALFORMED_JSON = {
  Success: false,
  ErrorCode: "MALFORMED_BODY",
  Message: "Malformed request body",
  Description: "Request body is not valid JSON",
};

/** Reads a JSON answer, checking it is declared as JSON. */
export async function json(response: Response): Promise<unknown> {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return JSON.parse(await response.text());
}

export function orderResult(remoteAddress: RegExp | string) {
  return {
    Success: true,
    InternalOrderId: "M-GE927127001US",
    OrderId: "SHOP-58211",
    Message:
      typeof remoteAddress === "string" ? remoteAddress : expect.stringMatching(remoteAddress),
  };
}

/** A body of `size` bytes in 64 KiB chunks, with no Content-Length. */
export function streamedBody(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      const length = Math.min(64 * 1024, size - sent);
      if (length <= 0) {
        controller.close();
        return;
      }
      controller.enqueue(new Uint8Array(length).fill(0x20));
      sent += length;
    },
  });
}

export function signedPost(token: string, body: BodyInit): RequestInit {
  return {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
    // Node's fetch needs it for a stream body; the others ignore it.
    duplex: "half",
  } as RequestInit;
}

interface Trickled {
  /** The answer's head (status line and headers) and body, as the server wrote them. */
  readonly head: string;
  readonly body: string;
  /** When the whole answer was in, in ms after the request head was written. */
  readonly answeredAfterMs: number;
  /** When the server ended the connection after the answer, in ms after it; undefined if not seen. */
  readonly closedAfterAnswerMs: number | undefined;
}

/** Whether `data` holds one complete HTTP/1.1 answer (by Content-Length or chunked end). */
function completeAnswer(data: string): { head: string; body: string } | undefined {
  const split = data.indexOf("\r\n\r\n");
  if (split < 0) return undefined;
  const head = data.slice(0, split);
  const rest = data.slice(split + 4);
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const size = Number(length[1]);
    return Buffer.byteLength(rest) >= size ? { head, body: rest.slice(0, size) } : undefined;
  }
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head) || !rest.endsWith("0\r\n\r\n")) {
    return undefined;
  }
  let body = "";
  for (let at = 0; ; ) {
    const eol = rest.indexOf("\r\n", at);
    const size = Number.parseInt(rest.slice(at, eol), 16);
    if (!(size > 0)) return { head, body };
    body += rest.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/**
 * POSTs `body` with its full Content-Length over a raw socket, writing its first 100 bytes at once
 * and then one byte every 100 ms, before and after the answer, until the server closes the
 * connection, `waitCloseMs` after the answer, or `limitMs` in all.
 */
function trickle(
  baseUrl: string,
  path: string,
  token: string,
  body: string,
  waitCloseMs: number,
  limitMs: number,
): Promise<Trickled> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const started = performance.now();
    let data = "";
    let sent = 0;
    let answer: { head: string; body: string; at: number } | undefined;
    let ticker: ReturnType<typeof setInterval> | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(limit);
      clearInterval(ticker);
      socket.destroy();
      if (!answer) {
        reject(new Error(`no complete answer (${closed ? "closed" : "timed out"}): ${data}`));
        return;
      }
      resolve({
        head: answer.head,
        body: answer.body,
        answeredAfterMs: answer.at - started,
        closedAfterAnswerMs: closed ? performance.now() - answer.at : undefined,
      });
    };
    const limit = setTimeout(() => finish(false), limitMs);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      if (answer) return;
      data += chunk;
      const complete = completeAnswer(data);
      if (!complete) return;
      answer = { ...complete, at: performance.now() };
      setTimeout(() => finish(false), waitCloseMs).unref();
    });
    socket.on("error", () => undefined);
    socket.once("close", () => finish(true));
    socket.once("connect", () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        `Host: ${url.host}`,
        `Authorization: Bearer ${token}`,
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
      ];
      socket.write(`${head.join("\r\n")}\r\n\r\n${body.slice(0, 100)}`);
      sent = 100;
      // Alive, but never done: the body is not complete for another five minutes.
      ticker = setInterval(() => {
        if (!socket.destroyed && sent < body.length) socket.write(body.charAt(sent++));
      }, 100);
    });
  });
}

/** Declares the round-trip tests (call inside a `describe`). */
export function roundTrips(options: RoundTripOptions): void {
  const base = options.basePath ?? "/crossborder";
  const post = async (path: string, init: RequestInit) => options.send()(`${base}${path}`, init);

  it("answers a signed SendOrderToMerchant with the merchant's ResponseInfo", async () => {
    const response = await post(
      "/SendOrderToMerchant",
      signedPost(await options.keys().sign(), ORDER),
    );
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(orderResult(options.remoteAddress));
  });

  it("answers a signed GET GetCheckoutCartInfo with the cart", async () => {
    const token = await options.keys().sign();
    const response = await post(
      "/GetCheckoutCartInfo?merchantCartToken=cart-42&countryCode=DE&currencyCode=EUR",
      { method: "GET", headers: { authorization: `Bearer ${token}` } },
    );
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(cartFor("cart-42", "DE", "EUR"));
  });

  it("refuses a token signed with another key: 401", async () => {
    const token = await options.keys().signWithStrangerKey();
    const response = await post("/SendOrderToMerchant", signedPost(token, ORDER));
    expect(response.status).toBe(401);
    expect(await json(response)).toEqual(UNAUTHORIZED);
  });

  it("refuses a body over 1 MiB with 413, then keeps serving", async () => {
    const keys = options.keys();
    const oversized = `{"OrderId":"${"x".repeat(ONE_MIB)}"}`;
    const response = await post("/SendOrderToMerchant", signedPost(await keys.sign(), oversized));
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(PAYLOAD_TOO_LARGE);
    await options.afterRefusal?.();
    const next = await post("/SendOrderToMerchant", signedPost(await keys.sign(), ORDER));
    expect(next.status).toBe(200);
  });

  it("refuses a streamed body (no Content-Length) over 1 MiB with 413 while reading", async () => {
    const body = streamedBody(options.streamedSize ?? 2 * ONE_MIB);
    const response = await post(
      "/SendOrderToMerchant",
      signedPost(await options.keys().sign(), body),
    );
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(PAYLOAD_TOO_LARGE);
    await options.afterRefusal?.();
  });

  it("answers malformed JSON with 400", async () => {
    const response = await post(
      "/SendOrderToMerchant",
      signedPost(await options.keys().sign(), '{"OrderId": "GE1",'),
    );
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual(MALFORMED_JSON);
  });

  const timeout = options.bodyTimeout;
  if (timeout) {
    it("answers a body trickling past bodyTimeoutMs with 408, then keeps serving", async () => {
      const exchange = await trickle(
        timeout.baseUrl(),
        `${base}/SendOrderToMerchant`,
        await options.keys().sign(),
        ORDER,
        // Long enough, either way, to see a runtime that does close (they close at once).
        timeout.closes ? 5_000 : 1_500,
        timeout.ms + 10_000,
      );
      expect(exchange.head).toMatch(/^HTTP\/1\.1 408 /);
      expect(exchange.head).toMatch(/\r\ncontent-type: application\/json/i);
      expect(JSON.parse(exchange.body)).toEqual(REQUEST_TIMEOUT);
      // At the deadline, not when the body would have ended (five minutes on).
      expect(exchange.answeredAfterMs).toBeGreaterThanOrEqual(timeout.ms - 50);
      expect(exchange.answeredAfterMs).toBeLessThan(timeout.ms + 5_000);
      expect(/\r\nconnection: close/i.test(exchange.head)).toBe(timeout.connectionHeader);
      // The README's word on each runtime: closed after the answer, or (Deno) kept open.
      if (timeout.closes) expect(exchange.closedAfterAnswerMs).toBeDefined();
      else expect(exchange.closedAfterAnswerMs).toBeUndefined();
      const next = await post(
        "/SendOrderToMerchant",
        signedPost(await options.keys().sign(), ORDER),
      );
      expect(next.status).toBe(200);
    }, 20_000);
  }
}

export interface ParserFirstOptions {
  readonly send: () => Send;
  readonly keys: () => ServiceKeys;
  /** What the parser leaves behind that the adapter answers from (named in the test). */
  readonly parsedFrom: string;
  /** A content type the parser skips, so the adapter must read the stream itself. */
  readonly skippedContentType: string;
}

/**
 * Declares the tests of an adapter mounted behind a framework's body parser (call inside a
 * `describe`): it answers from what the parser left, reads the stream when the parser skipped the
 * request, still authenticates, and leaves GET alone.
 */
export function parserFirst(options: ParserFirstOptions): void {
  const order = async (token: string, contentType?: string) => {
    const init = signedPost(token, ORDER);
    if (contentType) {
      init.headers = { ...(init.headers as Record<string, string>), "content-type": contentType };
    }
    return options.send()("/crossborder/SendOrderToMerchant", init);
  };

  it(`answers from ${options.parsedFrom}`, async () => {
    const response = await order(await options.keys().sign());
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(orderResult(LOOPBACK));
  });

  it("reads the stream itself when the parser skipped the request (other content type)", async () => {
    const response = await order(await options.keys().sign(), options.skippedContentType);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(orderResult(LOOPBACK));
  });

  it("answers from what the parser inflated (Content-Encoding: gzip), and refuses what it reads itself: 415", async () => {
    const gzipped = async (contentType?: string) => {
      const init = signedPost(await options.keys().sign(), gzipSync(ORDER));
      init.headers = {
        ...(init.headers as Record<string, string>),
        "content-encoding": "gzip",
        ...(contentType ? { "content-type": contentType } : {}),
      };
      return options.send()("/crossborder/SendOrderToMerchant", init);
    };
    const inflated = await gzipped();
    expect(inflated.status).toBe(200);
    expect(await json(inflated)).toEqual(orderResult(LOOPBACK));
    const skipped = await gzipped(options.skippedContentType);
    expect(skipped.status).toBe(415);
    expect(await json(skipped)).toMatchObject({ ErrorCode: "UNSUPPORTED_MEDIA_TYPE" });
  });

  it("still authenticates: 401 for a forged token", async () => {
    const response = await order(await options.keys().signWithStrangerKey());
    expect(response.status).toBe(401);
    expect(await json(response)).toEqual(UNAUTHORIZED);
  });

  it("answers GET GetCheckoutCartInfo (the parser leaves GET alone)", async () => {
    const response = await options.send()(
      "/crossborder/GetCheckoutCartInfo?merchantCartToken=c&countryCode=FR&currencyCode=EUR",
      { headers: { authorization: `Bearer ${await options.keys().sign()}` } },
    );
    expect(response.status).toBe(200);
    expect(((await json(response)) as { cartId: string }).cartId).toBe("c");
  });
}
