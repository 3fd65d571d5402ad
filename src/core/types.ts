/**
 * The framework-neutral request and response the engine speaks. Adapters translate to and from
 * these; nothing else crosses the boundary.
 */

import { deepFreeze } from "./objects.js";

/** The names of the callbacks the service sends to a merchant. */
export const CALLBACK_NAMES = /* @__PURE__ */ deepFreeze([
  "GetCheckoutCartInfo",
  "SendOrderToMerchant",
  "UpdateOrderStatus",
  "PerformOrderPayment",
  "SendRMAInfoToMerchant",
  "UpdateParcelDispatch",
  "RemoveRestrictedProducts",
  "SendAdditionalRequiredDocumentsToMerchant",
  "ValidateGiftCard",
  "RedeemGiftCard",
  "RefundGiftCard",
  "ValidateVoucher",
  "NotifyOrderRefund",
  "UpdateOrderShippingInfo",
] as const);

export type CallbackName = (typeof CALLBACK_NAMES)[number];

/** Header values as Node (`IncomingHttpHeaders`) or the fetch API (`Headers`) carry them. */
export type HeadersInput =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * A body the engine can read:
 * - `Uint8Array` (a Node `Buffer` is one) or `string`: the raw body, coded as the headers say (a
 *   compressed one, by `Content-Encoding` or `Transfer-Encoding`, is refused with 415);
 * - `ReadableStream<Uint8Array>` or `AsyncIterable<Uint8Array>` (a Node `IncomingMessage`): read
 *   by the engine within the size limit;
 * - any other value: a body a framework already parsed as JSON (the raw bytes are then gone).
 */
export type BodyInput =
  | Uint8Array
  | string
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | null
  | undefined
  | ParsedBody;

/**
 * A body that a framework's JSON parser already turned into a value. Branded by a string key, not
 * a `unique symbol`: the ESM and CommonJS declarations would each declare their own symbol, and a
 * router typed by one would not fit an adapter typed by the other (a project mixing `.ts` and
 * `.mts` files).
 */
export interface ParsedBody {
  readonly __crossborderParsedBody?: never;
}

export interface CallbackRequest {
  /** HTTP method, any case. */
  readonly method: string;
  /** Absolute URL, or path with query (`/crossborder/GetCheckoutCartInfo?merchantCartToken=…`). */
  readonly url: string;
  readonly headers: HeadersInput;
  readonly body?: BodyInput;
  /** The peer address of the TCP connection, when the runtime knows it. */
  readonly remoteAddress?: string | undefined;
  /**
   * Aborted when the runtime reports the client gone: Node and Bun when the client leaves; Deno
   * then too for a GET or a small body, but for a larger one (an order) only once the answer is
   * written; local workerd never (README, "Fetch-based runtimes").
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * The runtime's `waitUntil`, where it drops a request's timers and I/O once answered (Cloudflare
   * Workers' `ctx.waitUntil`, Vercel's): callable unbound. Work after the answer (a record
   * retried, a late claim released) is handed to it. The fetch adapter finds it among the
   * arguments the runtime passes (README "Serverless and edge runtimes").
   */
  readonly waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

export interface CallbackResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Always a JSON text. */
  readonly body: string;
}

/** Anything that answers a framework-neutral request: one callback handler, or a router. */
export interface CallbackEndpoint {
  handle(request: CallbackRequest): Promise<CallbackResponse>;
  /**
   * Whether this endpoint serves the path (a pathname, no query; a router's paths match in any
   * case, with or without a trailing slash; a single handler serves every path but one whose last
   * segment names another callback, `/SendOrderToMerchant` or `/SendOrderToMerchant.php` for a
   * payment handler; its `handle` serves whatever path it is given). Adapters of
   * frameworks with their own routing (Express, Koa) pass unmatched requests on instead of
   * answering 404; on `node:http` and fetch runtimes, pick one of several routers with it (README
   * "Several routers on one server").
   */
  matches(pathname: string): boolean;
}
