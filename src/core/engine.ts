import type { z } from "zod";
import type { Authenticator, AuthRequest, AuthResult, HeaderReader } from "../auth/types.js";
import {
  compileDecoding,
  type DecodingOptions,
  type DecodingPlan,
  type DecodingReport,
} from "../decode/policy.js";
import { parseForm, parseJson, type ReadBody, readBody, valueExceedsDepth } from "./body.js";
import { dropCvv, protectPaymentDetails, redactCardNumbers } from "./card.js";
import {
  AuthenticationError,
  type CallbackFailure,
  FAILURE_CODE,
  FAILURE_STATUS,
  type FailureKind,
  isCallbackError,
  type OnError,
} from "./errors.js";
import { headerReader } from "./headers.js";
import type { FailureFields, ResponseShape } from "./responses.js";
import type { CallbackEndpoint, CallbackName, CallbackRequest, CallbackResponse } from "./types.js";

/** 1 MiB: an order with hundreds of products is far below it. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Real payloads nest about eight levels; the bound keeps recursion anywhere downstream safe. */
export const DEFAULT_MAX_DEPTH = 64;

/** Options every handler factory and the router accept. */
export interface HandlerOptions {
  /**
   * How calls are authenticated: the result of `createAuth(…)` (or its promise), or `false` to
   * accept unauthenticated calls (only for local development). Required, so that forgetting it
   * fails at start-up instead of accepting forged orders.
   */
  auth: Authenticator | Promise<Authenticator> | false;
  /** Largest body read, in bytes; larger ones are answered 413 before parsing. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Deepest JSON nesting accepted; deeper bodies are answered 400. Default 64. */
  maxDepth?: number;
  /** Decoding policy of the encoded fields (default `auto` for each). */
  decoding?: DecodingOptions;
  /**
   * Told of every failure: authentication, bad input, the merchant's exceptions. Never receives
   * the body, the token or card data. Default: one line on `console.error`.
   */
  onError?: OnError;
}

/** What a merchant's function receives beside the payload. */
export interface CallbackContext<TPayload> {
  readonly callback: CallbackName;
  readonly request: RequestInfo;
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
}

export interface RequestInfo {
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
}

/** A handler for one callback: answers framework-neutral requests. */
export interface CallbackHandler<TName extends CallbackName = CallbackName>
  extends CallbackEndpoint {
  readonly callback: TName;
}

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

const GENERIC_MESSAGE: Record<Exclude<FailureKind, "handler_failure">, string> = {
  malformed_body: "Malformed request body",
  invalid_payload: "Invalid request payload",
  unauthorized: "Unauthorized",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  payload_too_large: "Request body too large",
  unsupported_media_type: "Compressed request bodies are not accepted",
  header_too_large: "Request header too large",
  internal_error: "Internal error",
};

/** Internal control flow: a failure with its public texts and its reason for the log. */
class Failure {
  constructor(
    readonly kind: Exclude<FailureKind, "handler_failure">,
    readonly reason: string,
    /** Safe, input-free details for the caller (schema issue paths, the method allowed). */
    readonly description?: string,
    readonly error?: unknown,
  ) {}
}

export const defaultOnError: OnError = (failure) => {
  const where = failure.callback ?? "-";
  let line = `[crossborder-callbacks] ${where} ${failure.status} ${failure.kind}: ${failure.reason}`;
  if (failure.kind === "internal_error" && failure.error instanceof Error) {
    line += ` (${failure.error.name}: ${failure.error.message})`;
  }
  console.error(redactCardNumbers(line));
};

export function safeNotify(onError: OnError, failure: CallbackFailure): void {
  try {
    const result: unknown = onError(failure);
    // An async hook that rejects must not become an unhandled rejection either.
    if (result instanceof Promise) result.catch(() => undefined);
  } catch {
    // A failing hook must never turn into a failed answer.
  }
}

function isAuthenticator(value: unknown): value is Authenticator {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Authenticator).authenticateRequest === "function"
  );
}

class IncomingRequest implements RequestInfo {
  constructor(
    readonly method: string,
    readonly url: URL,
    readonly remoteAddress: string | undefined,
    private readonly headers: HeaderReader,
  ) {}

  header(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
}

/** Parses the request URL; a path-only URL gets a placeholder origin. */
export function requestUrl(url: string): URL {
  return new URL(url, "http://localhost");
}

function respond(status: number, body: object, extra?: Record<string, string>): CallbackResponse {
  return {
    status,
    // A fresh object each time: servers write into response headers (Hono adds content-length).
    headers: { ...JSON_HEADERS, ...extra },
    body: JSON.stringify(body),
  };
}

/** Summarises zod issues as `path: message` lines. Zod keeps input values out of its messages. */
function describeIssues(error: z.ZodError): string {
  const lines = error.issues.slice(0, 10).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
  if (error.issues.length > 10) lines.push(`… and ${error.issues.length - 10} more`);
  return lines.join("; ");
}

/** Builds the handler of one callback from its definition and the merchant's function. */
export function createCallbackHandler<TName extends CallbackName, TPayload, TResult>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
  fn: CallbackFunction<TPayload, TResult>,
  options: HandlerOptions,
): CallbackHandler<TName> {
  if (typeof fn !== "function") {
    throw new TypeError(`${definition.name}: the handler must be a function`);
  }
  if (options === undefined || options === null || !("auth" in options)) {
    throw new TypeError(
      `${definition.name}: options.auth is required — pass the result of createAuth(…), or auth: false to accept unauthenticated calls (local development only)`,
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new RangeError(`${definition.name}: maxBodyBytes must be a positive integer`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth <= 0) {
    throw new RangeError(`${definition.name}: maxDepth must be a positive integer`);
  }
  const plan: DecodingPlan = compileDecoding(definition.encodedFields, options.decoding);
  const onError = options.onError ?? defaultOnError;
  const authOption = options.auth;
  // `auth: undefined` (an unset variable) must not silently mean "no authentication".
  if (authOption !== false && !(authOption instanceof Promise) && !isAuthenticator(authOption)) {
    throw new TypeError(
      `${definition.name}: options.auth must be an authenticator (the result of createAuth(…)), its promise, or false`,
    );
  }
  if (authOption instanceof Promise) {
    // A configuration that fails is reported on each request; this only keeps Node from
    // reporting it as unhandled meanwhile.
    authOption.catch(() => undefined);
  }
  const allow = definition.methods.join(", ");
  const name = definition.name;

  function fail(failure: Failure): CallbackResponse {
    const kind = failure.kind;
    const httpStatus = FAILURE_STATUS[kind];
    safeNotify(onError, {
      kind,
      status: httpStatus,
      callback: name,
      reason: failure.reason,
      error: failure.error,
    });
    const fields: FailureFields = {
      code: FAILURE_CODE[kind],
      message: GENERIC_MESSAGE[kind],
      description: failure.description,
    };
    return respond(
      httpStatus,
      definition.response.failure(fields),
      kind === "method_not_allowed" ? { allow } : undefined,
    );
  }

  async function run(request: CallbackRequest): Promise<CallbackResponse> {
    const method = request.method.toUpperCase();
    if (!definition.methods.includes(method)) {
      return fail(new Failure("method_not_allowed", `method ${method}`, `Allowed: ${allow}`));
    }
    const url = requestUrl(request.url);
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
      return fail(new Failure("internal_error", reason));
    }
    if (auth !== false && !isAuthenticator(auth)) {
      const reason = "authentication is misconfigured: the promise did not yield an authenticator";
      return fail(new Failure("internal_error", reason));
    }
    let authResult: AuthResult | undefined;
    if (auth) {
      try {
        authResult = await auth.authenticateRequest(authRequest);
      } catch (error) {
        return fail(authFailure(error));
      }
    }

    // 2. Read within the limit and parse. GET has no body (GetCheckoutCartInfo).
    const read: ReadBody =
      method === "GET" ? EMPTY_BODY : await readBody(request.body, headers, maxBodyBytes);
    let body: unknown;
    let bytes: Uint8Array | undefined;
    switch (read.kind) {
      case "too_large":
        return fail(new Failure("payload_too_large", `body over ${maxBodyBytes} bytes`));
      case "compressed":
        return fail(new Failure("unsupported_media_type", `body encoded as ${read.encoding}`));
      case "empty":
        if (definition.source.kind === "json") {
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
        bytes = read.bytes;
        const parsed =
          definition.source.kind === "query" ? parseForm(bytes) : parseJson(bytes, maxDepth);
        if (!parsed.ok) {
          if (read.owned) bytes.fill(0);
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
        headers,
        authRequest,
        auth,
        authResult,
        body,
        read,
        bytes,
      });
    } finally {
      // The raw bytes may hold card data: nothing of ours keeps them past the answer.
      if (bytes && read.kind === "bytes" && read.owned) bytes.fill(0);
    }
  }

  async function validateAndCall(exchange: Exchange): Promise<CallbackResponse> {
    const { request, method, url, headers, authRequest, auth, authResult, body, read, bytes } =
      exchange;
    // 3. Validate against the callback's schema.
    let input = body;
    if (definition.source.kind === "query") {
      input = definition.source.build(url, body);
    } else if (body === null || typeof body !== "object" || Array.isArray(body)) {
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
    if (auth !== false && auth.authenticatePayload) {
      if (auth.needsRawBody && read.kind === "parsed") {
        return fail(new Failure("internal_error", RAW_BODY_CONSUMED));
      }
      try {
        await auth.authenticatePayload(authResult as AuthResult, rawPayload, bytes, authRequest);
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
      request: new IncomingRequest(method, url, request.remoteAddress, headers),
      rawPayload,
      decoding: report,
      auth: authResult,
      signal: request.signal,
    };

    // 6. Call the merchant, 7. write the callback's own response.
    let outcome: TResult;
    try {
      outcome = await fn(payload, context);
    } catch (error) {
      if (!isCallbackError(error)) {
        return fail(new Failure("internal_error", "the handler threw", undefined, error));
      }
      const reason = redactCardNumbers(`${error.code}: ${error.message}`);
      safeNotify(onError, {
        kind: "handler_failure",
        status: error.status,
        callback: name,
        reason,
        error,
      });
      // The merchant's texts go back to the service: a card number quoted in them is masked.
      const failureBody = definition.response.failure({
        code: redactCardNumbers(error.code),
        message: redactCardNumbers(error.message),
        description:
          error.description === undefined ? undefined : redactCardNumbers(error.description),
      });
      return respond(error.status, failureBody);
    } finally {
      for (const card of cards) dropCvv(card);
      // A framework's own parsed body is not ours, but it must not keep the CVV either.
      if (read.kind === "parsed") dropCvv(paymentDetailsOf(read.value));
    }
    const written = definition.response.success(outcome);
    if ("invalid" in written) {
      const reason = `the handler's result is unusable: ${written.invalid}`;
      return fail(new Failure("internal_error", reason));
    }
    return respond(200, written.body);
  }

  return {
    callback: name,
    async handle(request) {
      try {
        return await run(request);
      } catch (error) {
        // Reading the body failed (client went away) or a bug: still a well-formed answer.
        return fail(new Failure("internal_error", "unexpected failure", undefined, error));
      }
    },
    matches: () => true,
  };
}

const EMPTY_BODY: ReadBody = { kind: "empty" };

/** One request on its way through the engine, once authenticated and read. */
interface Exchange {
  readonly request: CallbackRequest;
  readonly method: string;
  readonly url: URL;
  readonly headers: HeaderReader;
  readonly authRequest: AuthRequest;
  readonly auth: Authenticator | false;
  readonly authResult: AuthResult | undefined;
  readonly body: unknown;
  readonly read: ReadBody;
  readonly bytes: Uint8Array | undefined;
}

const RAW_BODY_CONSUMED =
  'the authentication needs the raw body (body digest), but a body parser already consumed it: mount the handler before any body parser, or hand it the raw bytes (express.raw({ type: "*/*" }))';

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

/** The typed factory of one callback: `(fn, options) => handler`. */
export function handlerFactory<TName extends CallbackName, TPayload, TResult>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
): (fn: CallbackFunction<TPayload, TResult>, options: HandlerOptions) => CallbackHandler<TName> {
  return (fn, options) => createCallbackHandler(definition, fn, options);
}
