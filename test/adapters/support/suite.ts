/**
 * The round trips every adapter must get right, on a real server: a signed order, a signed cart
 * query, a forged token, oversized bodies (declared and streamed) and malformed JSON.
 */
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
