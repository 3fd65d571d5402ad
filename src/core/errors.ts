import { brandClass, isBrandedInstance } from "./brand.js";
import { deepFreeze } from "./objects.js";
import type { CallbackName } from "./types.js";

/**
 * Every way a callback can fail, and the one table that maps each to an HTTP status.
 * The README prints this table; change both together.
 */
export const FAILURE_STATUS = /* @__PURE__ */ deepFreeze({
  /** Body is not JSON, not UTF-8, not an object, or nested too deep. */
  malformed_body: 400,
  /** Body is JSON but does not match the callback's schema. */
  invalid_payload: 400,
  /** Authentication failed (token, key, GUID, Basic, IP, secret). */
  unauthorized: 401,
  /** No callback is mounted at this path (a router), or it names another callback (a single handler). */
  not_found: 404,
  /** The callback does not answer this HTTP method. */
  method_not_allowed: 405,
  /** The body did not arrive within `bodyTimeoutMs`; the connection is closed after the answer. */
  request_timeout: 408,
  /** Body larger than the configured limit. */
  payload_too_large: 413,
  /**
   * Compressed body (`Content-Encoding`, or a `Transfer-Encoding` other than chunked), which the
   * engine does not inflate; or gzip bytes (`1f 8b`) a parser in front left compressed, found
   * when they fail to parse.
   */
  unsupported_media_type: 415,
  /** A request header (Authorization) larger than the engine reads. */
  header_too_large: 431,
  /**
   * The connection closed (by the client, a proxy or a server timeout: the adapter cannot tell
   * which) before the body was complete, or, on HTTP/2, before the request was answered (a reset,
   * a lost connection); or the body's stream failed. Nobody is left to read the answer; 499 is
   * nginx's "client closed request", so logs do not count it as a server error. Also reported
   * (the answer is not sent) when the connection closed after the merchant's function ran,
   * before its answer was written.
   */
  client_closed: 499,
  /** The merchant's function threw a `CallbackError`: a business answer, read through `Success`. */
  handler_failure: 200,
  /**
   * The merchant's function threw anything else, or returned something unusable (a validation
   * without its verdict, `Success: false`, a redemption's or refund's `IsValid: false`, a
   * PerformOrderPayment, RedeemGiftCard or RefundGiftCard result with an `ErrorCode`, or on the
   * gift-card calls an `ErrorText`, without its own `Success: true`: set, or of a type no answer
   * can carry, it is a refusal returned instead of thrown; a cart that is not a
   * CheckoutCartInfo); or the body was read before the library (a middleware) and no parsed body
   * was left; or a check of the merchant's could not decide (`verifySession`, the cart token's
   * `verify`, threw). Also reported (the answer is not sent) when something else answered the request
   * while the merchant's function ran (a timeout middleware in front), or the server refused to
   * write its answer.
   */
  internal_error: 500,
  /**
   * Not a failure: a warning (`severity: "warning"`). The merchant's result carried fields the
   * callback does not answer with (a typo such as `OrderID`): answered 200 without them.
   */
  result_fields_ignored: 200,
  /**
   * Not a failure: a warning (`severity: "warning"`). The merchant's result lacked a field the
   * answer should carry (SendOrderToMerchant's `InternalOrderId`, the amount a payment charged),
   * held a value of the wrong type, or was not an object: answered 200 without it, since the
   * function has run and a 500 would make the service deliver the call again (but for the
   * `ErrorCode` or `ErrorText` of a payment, redemption or refund without `Success: true`, an
   * `internal_error`). Also a SendOrderToMerchant result carrying an `ErrorCode` without its own
   * `Success: true` when the order came with a card to charge: answered 200 all the same (the
   * order exists), as the card may have been declined.
   */
  result_incomplete: 200,
  /**
   * Not a failure: a warning (`severity: "warning"`). A helper around the merchant's function
   * (`withIdempotency`) could not use its store while the delivery went on, stored a result as
   * the answer made of it (JSON cannot write it as returned), or saw the function hold its key
   * long (or past `maxRunMs`); it decides no answer. One exception
   * to "the delivery went on": an earlier version's refusal record its store's `forget` would not
   * delete is reported so, and the delivery is answered 500 (reported apart, `internal_error`).
   */
  store_failure: 200,
} as const satisfies Record<string, number>);

export type FailureKind = keyof typeof FAILURE_STATUS;

/** The kinds that report a call answered successfully (`severity: "warning"`). */
export type WarningKind = "result_fields_ignored" | "result_incomplete" | "store_failure";

/** The error codes the library writes into `ErrorCode` for its own failures. */
export const FAILURE_CODE: Readonly<
  Record<Exclude<FailureKind, WarningKind | "handler_failure">, string>
> = {
  malformed_body: "MALFORMED_BODY",
  invalid_payload: "INVALID_PAYLOAD",
  unauthorized: "UNAUTHORIZED",
  not_found: "NOT_FOUND",
  method_not_allowed: "METHOD_NOT_ALLOWED",
  request_timeout: "REQUEST_TIMEOUT",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  header_too_large: "HEADER_TOO_LARGE",
  client_closed: "CLIENT_CLOSED",
  internal_error: "INTERNAL_ERROR",
};

export interface CallbackErrorOptions {
  /**
   * HTTP status of the failure response; defaults to the table's `handler_failure` (200). 200 to
   * 599, but not 204, 205 or 304, which carry no body (a `RangeError`).
   */
  readonly status?: number | undefined;
  readonly cause?: unknown;
}

/**
 * Thrown by a merchant's function to answer with a failure in the callback's own shape
 * (`Success: false`, `IsSuccess: false`, `Success: "False"`), with this code and texts.
 * `instanceof CallbackError` holds for one from any copy of the library (its ES module and
 * CommonJS builds both loaded): see `core/brand.ts`.
 */
export class CallbackError extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "CallbackError");
  }
  /** True for a `CallbackError` from any copy of the library (and for a subclass of it). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked (a subclass's own brand), not this one
    return isBrandedInstance(this, value);
  }
  override readonly name = "CallbackError";
  readonly code: string;
  readonly description: string | undefined;
  readonly status: number;

  constructor(code: string, message: string, description?: string, options?: CallbackErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.description = description;
    const status = options?.status ?? FAILURE_STATUS.handler_failure;
    if (!isAnswerableStatus(status)) {
      throw new RangeError(
        `CallbackError status must be an HTTP status with a body (200-599, not 204, 205 or 304), got ${status}`,
      );
    }
    this.status = status;
  }
}

/**
 * Whether a failure can be answered with this status: 200 to 599, except 204, 205 and 304, whose
 * answers carry no body (the callback's failure shape could not be sent; fetch's `Response`
 * refuses a body with them).
 */
export function isAnswerableStatus(status: unknown): status is number {
  return (
    typeof status === "number" &&
    Number.isInteger(status) &&
    status >= 200 &&
    status <= 599 &&
    status !== 204 &&
    status !== 205 &&
    status !== 304
  );
}

/** True for a `CallbackError` from any copy of the library. */
export function isCallbackError(error: unknown): error is CallbackError {
  return error instanceof CallbackError;
}

/**
 * Thrown by an authenticator. Its `reason` goes to the `onError` hook only; the caller always
 * sees the same generic 401 body.
 */
export class AuthenticationError extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "AuthenticationError");
  }
  /** True for an `AuthenticationError` from any copy of the library (and for a subclass of it). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked (a subclass's own brand), not this one
    return isBrandedInstance(this, value);
  }
  override readonly name = "AuthenticationError";
  /** `header_too_large` when the credential itself was oversized; otherwise `unauthorized`. */
  readonly kind: "unauthorized" | "header_too_large";

  constructor(reason: string, kind: "unauthorized" | "header_too_large" = "unauthorized") {
    super(reason);
    this.kind = kind;
  }
}

/**
 * Thrown by an authenticator when a check of the merchant's own could not decide (the cart token's
 * `verify` threw: its store is down): an outage, not a refusal. The engine answers it 500
 * (`internal_error`) and hands `onError` the thrown value, scrubbed. Internal: not exported.
 */
export class AuthenticationOutage extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "AuthenticationOutage");
  }
  /** True for an `AuthenticationOutage` from any copy of the library (createAuth from the other build). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked, not this one
    return isBrandedInstance(this, value);
  }
  override readonly name = "AuthenticationOutage";

  constructor(
    reason: string,
    /** What the merchant's check threw. */
    readonly thrown: unknown,
  ) {
    super(reason);
  }
}

/** What the `onError` hook receives. Never carries the body, the token or card data. */
export interface CallbackFailure {
  readonly kind: FailureKind;
  readonly status: number;
  /** The callback, when the request reached one. */
  readonly callback: CallbackName | undefined;
  /**
   * `"warning"` when the call was answered successfully and something deserves a look
   * (`result_fields_ignored`, `result_incomplete`, `store_failure`); absent when the call failed.
   */
  readonly severity?: "warning";
  /**
   * A reason for the operator's log, scrubbed like every text the library lets out: card numbers
   * and this request's own card number and CVV (and the shopper's session) are masked.
   */
  readonly reason: string;
  /**
   * The order the report is about, once the payload was validated: its `OrderId`, else the cart's
   * id or token (`CartId`, `merchantCartToken`, `MerchantCartToken`). Never card data. Absent
   * before validation (a 400, a 401 before the body) and on a payload that names none.
   */
  readonly orderId?: string;
  /**
   * The underlying error, as a scrubbed copy (an `Error` with the original's name, message,
   * stack and string `code`, each with card numbers and this request's card data masked; no
   * `cause`, no other property; each an enumerable own property, so `JSON.stringify` and a JSON
   * logger write them): of the merchant's exception for `internal_error` and
   * `handler_failure`, of the `AuthenticationError` for authentication failures, of the stream's
   * error for `client_closed`, of what reading the result threw (its first field's getter that
   * threw) for `result_incomplete`; otherwise undefined. Never the original object, which may carry
   * the request it failed on. Something thrown that is not an `Error` arrives as an `Error` named
   * `NonError`; an `Error` with an empty message (Node's `AggregateError` for a dual-stack host)
   * arrives with its `code` and inner errors' messages as the message. The library's own errors
   * arrive as copies of their class, with their fields scrubbed the same way: a `CallbackError`
   * (`code`, `description`, `status`), an `AuthenticationError` (`kind`), an
   * `IdempotencyStoreError` (`operation`, `code`).
   */
  readonly error?: unknown;
}

export type OnError = (failure: CallbackFailure) => void;
