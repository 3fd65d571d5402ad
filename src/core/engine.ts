import type { z } from "zod";
import type { Authenticator, AuthRequest, AuthResult } from "../auth/types.js";
import {
  compileDecoding,
  type DecodingOptions,
  type DecodingPlan,
  type DecodingReport,
} from "../decode/policy.js";
import {
  discardBody,
  parseForm,
  parseJson,
  type ReadBody,
  readBody,
  valueExceedsDepth,
} from "./body.js";
import { dropCvv, protectPaymentDetails } from "./card.js";
import type { CallbackFactory } from "./checked.js";
import { AuthenticationError, FAILURE_STATUS, isCallbackError, type OnError } from "./errors.js";
import { headerReader } from "./headers.js";
import { requestUrl } from "./paths.js";
import {
  defaultOnError,
  type Redactor,
  redactCards,
  requestRedactor,
  safeNotify,
  sanitizeError,
} from "./report.js";
import {
  failureResponse,
  type LibraryFailureKind,
  type ResponseShape,
  respond,
  type WrittenResult,
} from "./responses.js";
import type { CallbackEndpoint, CallbackName, CallbackRequest, CallbackResponse } from "./types.js";

/** 1 MiB: an order with hundreds of products is far below it. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Real payloads nest about eight levels; the bound keeps recursion anywhere downstream safe. */
export const DEFAULT_MAX_DEPTH = 64;

/** Options every handler factory and the router accept. */
export interface HandlerOptions {
  /**
   * How calls are authenticated: the result of `await createAuth(…)`, or `false` to accept
   * unauthenticated calls (only for local development). Required, so that forgetting it fails at
   * start-up instead of accepting forged orders. A promise of an authenticator is accepted where
   * the configuration arrives later (a Worker's `env`); if it rejects, every call is a 500.
   */
  auth: Authenticator | Promise<Authenticator> | false;
  /** Largest body read, in bytes; larger ones are answered 413 before parsing. Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Deepest JSON nesting accepted; deeper bodies are answered 400. Default 64. */
  maxDepth?: number | undefined;
  /** Decoding policy of the encoded fields (default `auto` for each). */
  decoding?: DecodingOptions | undefined;
  /**
   * Told of every failure: authentication, bad input, the merchant's exceptions (as a scrubbed
   * copy: name, message and stack without card data). Never receives the body or the token.
   * Default: one line on `console.error`.
   */
  onError?: OnError | undefined;
}

/** What a merchant's function receives beside the payload. */
export interface CallbackContext<TPayload> {
  readonly callback: CallbackName;
  readonly request: CallbackRequestInfo;
  /**
   * The validated payload before decoding, as the service sent it. Its PaymentDetails print masked
   * and lose the CVV when the function returns, like the payload's.
   */
  readonly rawPayload: TPayload;
  /** Which encoded fields were decoded, left unchanged, or left raw because malformed. */
  readonly decoding: DecodingReport;
  /** What authentication established (modes passed, verified JWT claims); undefined with `auth: false`. */
  readonly auth: AuthResult | undefined;
  /** Aborted when the caller goes away, where the runtime reports it. */
  readonly signal: AbortSignal | undefined;
  /**
   * Tells the handler's `onError` of a failure that does not decide the answer (kind
   * `store_failure`): for helpers around your function, such as `withIdempotency` when its store
   * fails while the delivery still goes on. Scrubbed like every report; safe to call after the
   * answer was sent.
   */
  readonly reportFailure: (reason: string, error?: unknown) => void;
}

/** The request as the merchant's function sees it. */
export interface CallbackRequestInfo {
  readonly method: string;
  readonly url: URL;
  readonly remoteAddress: string | undefined;
  /** A request header, case-insensitive; undefined when absent. */
  header(name: string): string | undefined;
}

export type CallbackFunction<TPayload, TResult> = (
  payload: TPayload,
  context: CallbackContext<TPayload>,
) => TResult | Promise<TResult>;

/** Where a callback's payload comes from. */
export type PayloadSource =
  | { readonly kind: "json" }
  | {
      /** Query parameters (GET), or query then body fields (POST): GetCheckoutCartInfo. */
      readonly kind: "query";
      build(url: URL, body: unknown): unknown;
    };

/** Everything particular to one callback. */
export interface CallbackDefinition<TPayload, TResult> {
  readonly name: CallbackName;
  readonly methods: readonly string[];
  readonly source: PayloadSource;
  readonly schema: z.ZodType<TPayload>;
  /** Dotted paths of the values that arrive form-URL-encoded. */
  readonly encodedFields: readonly string[];
  readonly response: ResponseShape<TResult>;
  /** Top-level payload fields whose values are never quoted in what the library reports. */
  readonly secretFields?: readonly string[];
  /**
   * A check of the validated payload with the merchant's options, run before the merchant's
   * function (the gift-card callbacks' shopper session). Returns the reason of a refusal — a 401
   * with the generic body; the reason goes to `onError` and quotes no value — or undefined. If
   * it throws, the call is a 500 (`internal_error`) and `onError` gets the error, masked.
   */
  readonly authorize?: (
    payload: TPayload,
    context: CallbackContext<TPayload>,
    options: HandlerOptions,
  ) => string | undefined | Promise<string | undefined>;
}

/** A handler for one callback: answers framework-neutral requests. */
export interface CallbackHandler<TName extends CallbackName = CallbackName>
  extends CallbackEndpoint {
  readonly callback: TName;
}

/** Internal control flow: a failure with its public details and its reason for the log. */
class Failure {
  constructor(
    readonly kind: LibraryFailureKind,
    readonly reason: string,
    /** Safe, input-free details for the caller (schema issue paths, the method allowed). */
    readonly description?: string,
    readonly error?: unknown,
  ) {}
}

class IncomingRequestInfo implements CallbackRequestInfo {
  constructor(
    readonly method: string,
    readonly url: URL,
    readonly remoteAddress: string | undefined,
    private readonly headers: AuthRequest["headers"],
  ) {}

  header(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
}

/** Summarises zod issues as `path: message`. Zod keeps input values out of its messages. */
export function describeIssues(error: z.ZodError, limit = 10): string {
  const lines = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
  if (error.issues.length > limit) lines.push(`… and ${error.issues.length - limit} more`);
  return lines.join("; ");
}

function isAuthenticator(value: unknown): value is Authenticator {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Authenticator).authenticateRequest === "function" &&
    typeof (value as Authenticator).needsRawBody === "function"
  );
}

/** A status a merchant's `CallbackError` may set: another copy of the library is not trusted. */
function answerableStatus(status: unknown): number {
  return typeof status === "number" && Number.isInteger(status) && status >= 200 && status <= 599
    ? status
    : FAILURE_STATUS.handler_failure;
}

/** Builds the handler of one callback from its definition and the merchant's function. */
export function createCallbackHandler<TName extends CallbackName, TPayload, TResult>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
  fn: CallbackFunction<TPayload, TResult>,
  options: HandlerOptions,
): CallbackHandler<TName> {
  const name = definition.name;
  if (typeof fn !== "function") throw new TypeError(`${name}: the handler must be a function`);
  if (options === undefined || options === null || !("auth" in options)) {
    throw new TypeError(
      `${name}: options.auth is required — pass the result of await createAuth(…), or auth: false to accept unauthenticated calls (local development only)`,
    );
  }
  const authOption = options.auth;
  // `auth: undefined` (an unset variable) must not silently mean "no authentication".
  if (authOption !== false && !(authOption instanceof Promise) && !isAuthenticator(authOption)) {
    throw new TypeError(
      `${name}: options.auth must be an authenticator (the result of await createAuth(…)), its promise, or false`,
    );
  }
  // A rejected configuration is reported on each call; this keeps Node from calling it unhandled.
  if (authOption instanceof Promise) authOption.catch(() => undefined);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new RangeError(`${name}: maxBodyBytes must be a positive integer`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth <= 0) {
    throw new RangeError(`${name}: maxDepth must be a positive integer`);
  }
  const plan: DecodingPlan = compileDecoding(definition.encodedFields, options.decoding);
  const onError = options.onError ?? defaultOnError;
  const allowHeader = { allow: definition.methods.join(", ") };
  const source = definition.source;

  function fail(failure: Failure, redact: Redactor = redactCards): CallbackResponse {
    const { kind } = failure;
    safeNotify(onError, {
      kind,
      status: FAILURE_STATUS[kind],
      callback: name,
      reason: redact(failure.reason),
      error: failure.error === undefined ? undefined : sanitizeError(failure.error, redact),
    });
    const extra = kind === "method_not_allowed" ? allowHeader : undefined;
    return failureResponse(kind, definition.response, failure.description, extra);
  }

  /** A refusal before the body was read: the body is let go so the answer reaches the caller. */
  function refuse(request: CallbackRequest, failure: Failure): CallbackResponse {
    void discardBody(request.body);
    return fail(failure);
  }

  async function run(request: CallbackRequest): Promise<CallbackResponse> {
    const method = request.method.toUpperCase();
    if (!definition.methods.includes(method)) {
      const allowed = `Allowed: ${allowHeader.allow}`;
      return refuse(request, new Failure("method_not_allowed", `method ${method}`, allowed));
    }
    let url: URL;
    try {
      url = requestUrl(request.url);
    } catch {
      return refuse(request, new Failure("malformed_body", "the request target is not a URL"));
    }
    const headers = headerReader(request.headers);
    const authRequest: AuthRequest = {
      callback: name,
      method,
      url,
      headers,
      remoteAddress: request.remoteAddress,
    };

    // 1. Authenticate, before a byte of the body is read.
    let auth: Authenticator | false;
    try {
      auth = await authOption;
    } catch (error) {
      const reason = `authentication is misconfigured: ${errorText(error)}`;
      return refuse(request, new Failure("internal_error", reason));
    }
    if (auth !== false && !isAuthenticator(auth)) {
      const reason = "authentication is misconfigured: the promise did not yield an authenticator";
      return refuse(request, new Failure("internal_error", reason));
    }
    let authResult: AuthResult | undefined;
    if (auth) {
      try {
        authResult = await auth.authenticateRequest(authRequest);
      } catch (error) {
        return refuse(request, authFailure(error));
      }
    }

    // 2. Read within the limit, then parse. GET has no body (GetCheckoutCartInfo).
    const read: ReadBody =
      method === "GET" ? EMPTY_BODY : await readBody(request.body, headers, maxBodyBytes);
    let body: unknown;
    switch (read.kind) {
      case "too_large":
        return fail(new Failure("payload_too_large", `body over ${maxBodyBytes} bytes`));
      case "compressed":
        return fail(new Failure("unsupported_media_type", `body encoded as ${read.encoding}`));
      case "empty":
        if (source.kind === "json") {
          return fail(new Failure("malformed_body", "empty body", "Request body is empty"));
        }
        break;
      case "parsed":
        if (valueExceedsDepth(read.value, maxDepth)) {
          const reason = `Request body is nested deeper than ${maxDepth} levels`;
          return fail(new Failure("malformed_body", reason, reason));
        }
        body = read.value;
        break;
      case "bytes": {
        const parsed =
          source.kind === "query"
            ? parseForm(read.bytes, maxDepth)
            : parseJson(read.bytes, maxDepth);
        if (!parsed.ok) {
          if (read.owned) read.bytes.fill(0);
          return fail(new Failure("malformed_body", parsed.reason, parsed.reason));
        }
        body = parsed.value;
        break;
      }
    }

    try {
      return await validateAndCall({
        request,
        method,
        url,
        authRequest,
        auth,
        authResult,
        body,
        read,
      });
    } finally {
      // The raw bytes may hold card data: nothing of ours keeps them past the answer.
      if (read.kind === "bytes" && read.owned) read.bytes.fill(0);
    }
  }

  async function validateAndCall(exchange: Exchange): Promise<CallbackResponse> {
    const { request, method, url, authRequest, auth, read } = exchange;
    let { authResult } = exchange;

    // 3. Validate against the callback's schema.
    let input = exchange.body;
    if (source.kind === "query") {
      input = source.build(url, input);
    } else if (input === null || typeof input !== "object" || Array.isArray(input)) {
      const reason = "Request body must be a JSON object";
      return fail(new Failure("malformed_body", reason, reason));
    }
    const result = definition.schema.safeParse(input);
    if (!result.success) {
      const description = describeIssues(result.error);
      return fail(new Failure("invalid_payload", `schema: ${description}`, description));
    }
    const rawPayload = result.data;

    // 4. The checks that need the body: merchant GUID, body digest.
    if (auth !== false && auth.authenticatePayload !== undefined) {
      if (read.kind === "parsed" && auth.needsRawBody(name)) {
        return fail(new Failure("internal_error", RAW_BODY_CONSUMED));
      }
      const bytes = read.kind === "bytes" ? read.bytes : undefined;
      try {
        const updated = await auth.authenticatePayload(
          authResult as AuthResult,
          rawPayload,
          bytes,
          authRequest,
        );
        if (updated) authResult = updated;
      } catch (error) {
        return fail(authFailure(error));
      }
    }

    // 5. Decode the encoded fields once; protect card data in both copies.
    const { payload, report } = plan.apply(rawPayload);
    // Any callback's payload may carry PaymentDetails ("more parameters than listed").
    const cards = [paymentDetailsOf(rawPayload), paymentDetailsOf(payload)];
    for (const card of cards) protectPaymentDetails(card);
    const context: CallbackContext<TPayload> = {
      callback: name,
      request: new IncomingRequestInfo(method, url, request.remoteAddress, authRequest.headers),
      rawPayload,
      decoding: report,
      auth: authResult,
      signal: request.signal,
      reportFailure: (reason, error) => reportStoreFailure(onError, name, reason, error),
    };

    // Values never to be quoted (a shopper's session token), beside the card data.
    const secrets = (definition.secretFields ?? []).map((field) => fieldOf(rawPayload, field));

    // 6. Call the merchant, 7. write the callback's own response.
    let written: WrittenResult;
    let redactWarning: Redactor | undefined;
    try {
      if (definition.authorize !== undefined) {
        let refusal: string | undefined;
        try {
          refusal = await definition.authorize(payload, context, options);
        } catch (error) {
          const failure = new Failure("internal_error", AUTHORIZE_THREW, undefined, error);
          return fail(failure, requestRedactor(cards[0], secrets));
        }
        if (refusal !== undefined) return fail(new Failure("unauthorized", refusal));
      }
      written = definition.response.success(await fn(payload, context));
      // Built while the CVV is still known: an ignored field name quoting this card is masked.
      if ("body" in written && written.ignored !== undefined && written.ignored.length > 0) {
        redactWarning = requestRedactor(cards[0], secrets);
      }
    } catch (error) {
      // Built while the CVV is still known: a text quoting this card is masked.
      const redact = requestRedactor(cards[0], secrets);
      if (!isCallbackError(error)) {
        return fail(new Failure("internal_error", "the handler threw", undefined, error), redact);
      }
      const status = answerableStatus(error.status);
      const code = redact(String(error.code));
      const message = redact(String(error.message));
      safeNotify(onError, {
        kind: "handler_failure",
        status,
        callback: name,
        reason: `${code}: ${message}`,
        error: sanitizeError(error, redact),
      });
      const description = error.description == null ? undefined : redact(String(error.description));
      return respond(status, definition.response.failure({ code, message, description }));
    } finally {
      for (const card of cards) dropCvv(card);
      // A framework's own parsed body is not ours, but it must not keep the CVV either.
      if (read.kind === "parsed") dropCvv(paymentDetailsOf(read.value));
    }
    if ("invalid" in written) {
      const reason = `the handler's result is unusable: ${written.invalid}`;
      return fail(new Failure("internal_error", reason));
    }
    if (redactWarning !== undefined && written.ignored !== undefined) {
      safeNotify(onError, {
        kind: "result_fields_ignored",
        status: FAILURE_STATUS.result_fields_ignored,
        severity: "warning",
        callback: name,
        reason: redactWarning(describeIgnored(written.ignored)),
      });
    }
    return respond(200, written.body);
  }

  return {
    callback: name,
    async handle(request) {
      try {
        return await run(request);
      } catch (error) {
        // Reading the body failed (the caller went away) or a bug: still a well-formed answer.
        return fail(new Failure("internal_error", "unexpected failure", undefined, error));
      }
    },
    // A single handler answers wherever it is mounted; a router matches its own paths.
    matches: () => true,
  };
}

const EMPTY_BODY: ReadBody = { kind: "empty" };

/** A helper's failure that decides no answer: the delivery went on (status 200). */
function reportStoreFailure(
  onError: OnError,
  callback: CallbackName,
  reason: string,
  error: unknown,
): void {
  safeNotify(onError, {
    kind: "store_failure",
    status: FAILURE_STATUS.store_failure,
    severity: "warning",
    callback,
    reason: redactCards(String(reason)),
    error: error === undefined ? undefined : sanitizeError(error, redactCards),
  });
}

/** One request on its way through the engine, once authenticated and read. */
interface Exchange {
  readonly request: CallbackRequest;
  readonly method: string;
  readonly url: URL;
  readonly authRequest: AuthRequest;
  readonly auth: Authenticator | false;
  readonly authResult: AuthResult | undefined;
  readonly body: unknown;
  readonly read: ReadBody;
}

const AUTHORIZE_THREW = "the authorization check before the handler threw";

const RAW_BODY_CONSUMED =
  'the authentication needs the raw body (body digest), but a body parser already consumed it: mount the handler before any body parser, or hand it the raw bytes (express.raw({ type: "*/*" }))';

/** Field names as a reason quotes them: identifiers only, the others counted. */
function describeIgnored(fields: readonly string[]): string {
  const named = fields.filter((field) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(field));
  const others = fields.length - named.length;
  const list = named.map((field) => `"${field}"`);
  if (others > 0) list.push(`${others} more`);
  return `the result's unknown fields were left out of the answer: ${list.join(", ")}`;
}

function fieldOf(payload: unknown, field: string): unknown {
  return payload !== null && typeof payload === "object" && Object.hasOwn(payload, field)
    ? (payload as Record<string, unknown>)[field]
    : undefined;
}

function paymentDetailsOf(payload: unknown): unknown {
  return (payload as { PaymentDetails?: unknown }).PaymentDetails;
}

function authFailure(error: unknown): Failure {
  if (error instanceof AuthenticationError) {
    return new Failure(error.kind, error.message, undefined, error);
  }
  // jose throws plain TypeErrors on key confusion: still a refusal, never a 500. The error itself
  // is not passed on: it may carry the token's payload.
  return new Failure("unauthorized", `authentication failed: ${errorName(error)}`);
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The typed factory of one callback: `(fn, options) => handler`, generic in what `fn` returns so
 * that a misspelt result field is a compile error (see `Checked`).
 */
export function handlerFactory<
  TName extends CallbackName,
  TPayload,
  TResult,
  TOptions extends HandlerOptions = HandlerOptions,
>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
): CallbackFactory<TName, TPayload, TResult, TOptions> {
  return (fn, options) =>
    createCallbackHandler(definition, fn as CallbackFunction<TPayload, TResult>, options);
}

export { defaultOnError };
