import type { CallbackName } from "../core/types.js";

/** Read-only view of the request headers; names are case-insensitive. */
export interface HeaderReader {
  /** The value, with repeated headers joined by `, ` as the fetch API does; null when absent. */
  get(name: string): string | null;
}

/** What an authenticator sees before the body is read. */
export interface AuthRequest {
  readonly callback: CallbackName;
  readonly method: string;
  /**
   * The request's URL, parsed when first read (a getter on the library's requests: a spread copy
   * does not carry it; pass the request on, or read `url` into the copy).
   */
  readonly url: URL;
  readonly headers: HeaderReader;
  readonly remoteAddress: string | undefined;
}

/** What authentication established; handed to the merchant as `context.auth`. */
export interface AuthResult {
  /** The modes that passed, in the order they ran (`"jwt"`, `"basic"`, `"ip"`, …). */
  readonly methods: readonly string[];
  /** The verified JWT claims, when a JWT was verified. */
  readonly claims?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The authentication seam of the engine. `authenticateRequest` runs before the body is read;
 * `authenticatePayload` after it is parsed and validated, for checks that need the body
 * (merchant GUID in the payload, a token's digest of the raw bytes).
 *
 * Both throw `AuthenticationError` to refuse (401; 431 when its `kind` is `header_too_large`).
 * When a check of the merchant's own could not decide (the cart token's `verify` threw), the
 * authenticator `createAuth` makes throws an outage instead, which refuses nothing: the call is a
 * 500 (`internal_error`) and `onError` gets what the check threw. Anything else they throw is
 * answered with 401.
 */
export interface Authenticator {
  /** True when `authenticatePayload` needs the raw body bytes of this callback (body digest). */
  needsRawBody(callback: CallbackName): boolean;
  authenticateRequest(request: AuthRequest): Promise<AuthResult> | AuthResult;
  /**
   * The checks that need the body. Returns the result with the modes it added (or nothing when
   * it added none); the engine hands that result to the merchant as `context.auth`. It reads the
   * payload and must not change it: the engine decodes and protects the payload after it, as it
   * was validated.
   */
  authenticatePayload?(
    result: AuthResult,
    payload: unknown,
    rawBody: Uint8Array | undefined,
    request: AuthRequest,
  ): Promise<AuthResult | undefined> | AuthResult | undefined;
}
