/**
 * The one pipeline every operation goes through: request validation → URL, query and body →
 * merchant GUID, token, Idempotency-Key → fetch with a per-attempt timeout, the overall deadline
 * and the caller's signal → retry policy → response validation → a typed error or the body.
 */

import type { z } from "zod";
import { readStream, TIMED_OUT } from "../core/body.js";
import { parseBounded } from "../core/bounded-parse.js";
import { pathText, restoreExactNumbers, unsafeNumberPaths } from "../core/exact-numbers.js";
import { isHeaderBytes } from "../core/headers.js";
import { isRecord } from "../core/objects.js";
import { holdsSafely, readSafely } from "../core/report.js";
import { hasLoneSurrogate, wellFormedJson } from "../core/text.js";
import { MAX_TIMEOUT_MS } from "../core/timers.js";
import { parseSuccessValue } from "../schemas/response.js";
import { whenAborted } from "./abort.js";
import { documentedCode, type ServiceErrorCode, type ServiceFailureKind } from "./codes.js";
import {
  createServiceError,
  ServiceError,
  type ServiceIssue,
  ServiceRateLimitError,
  ServiceValidationError,
} from "./errors.js";
import { type FailureInfo, readErrorAnswer, readRefusal } from "./failures.js";
import {
  type InDoubtEntry,
  type InDoubtLedger,
  mayMeanAlreadyDone,
  requestIdentity,
} from "./in-doubt.js";
import {
  MERCHANT_GUID_HEADER,
  MERCHANT_GUID_QUERY,
  OPERATIONS,
  type OperationDefinition,
  type OperationName,
} from "./operations.js";
import type { Redactor } from "./redact.js";
import { backoffDelay, parseRetryAfter, type ResolvedRetry, sleep } from "./retry.js";
import type { TokenProvider } from "./token.js";

/** The `fetch` the client calls: the global one, or yours (proxies, tests, instrumentation). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** One attempt is about to be sent. Nothing here carries the GUID, the password or a token. */
export interface ServiceRequestEvent {
  readonly operation: OperationName;
  readonly attempt: number;
  readonly method: string;
  /** The URL, with the GUID redacted when it travels in the query. */
  readonly url: string;
  readonly idempotencyKey: string | undefined;
  /** The JSON body (redacted), only with `hooks.includeBodies`; never for the token request. */
  readonly body?: unknown;
}

/** One attempt ended: with a status line (`status`, even when its body was then cut off) or without. */
export interface ServiceResponseEvent {
  readonly operation: OperationName;
  readonly attempt: number;
  readonly method: string;
  readonly url: string;
  readonly status: number | undefined;
  /** How long the attempt took, in whole milliseconds (on a monotonic clock). */
  readonly durationMs: number;
  readonly requestId: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** `success`, or the failure kind of this attempt. */
  readonly outcome: "success" | ServiceFailureKind;
  readonly code: ServiceErrorCode | undefined;
  /** The parsed answer (redacted), only with `hooks.includeBodies`; never for the token answer. */
  readonly body?: unknown;
}

/** The call goes on after a failed attempt: a retry, or the replay after a token refresh. */
export interface ServiceRetryEvent {
  readonly operation: OperationName;
  /** The attempt that failed. */
  readonly attempt: number;
  readonly delayMs: number;
  /** `retry` (backoff or Retry-After), or `token-refresh` (one replay after a 401). */
  readonly reason: "retry" | "token-refresh";
  readonly status: number | undefined;
  readonly kind: ServiceFailureKind;
  readonly code: ServiceErrorCode;
  readonly idempotencyKey: string | undefined;
}

export interface ServiceHooks {
  /** Each hook: `null` or left out means not set. */
  readonly onRequest?: ((event: ServiceRequestEvent) => void) | null | undefined;
  readonly onResponse?: ((event: ServiceResponseEvent) => void) | null | undefined;
  readonly onRetry?: ((event: ServiceRetryEvent) => void) | null | undefined;
  /** Adds the (redacted) JSON bodies to onRequest and onResponse. Default false (also `null`). */
  readonly includeBodies?: boolean | null | undefined;
}

/** Per-call options of every method. */
export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** Per attempt, in milliseconds (default: the client's `timeoutMs`); at most 2^31 - 1. */
  readonly timeoutMs?: number | undefined;
  /**
   * For the whole call, retries and waits included (default: the client's `deadlineMs`); at most
   * 2^31 - 1.
   */
  readonly deadlineMs?: number | undefined;
}

export interface CallContext {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly merchantGuid: string;
  readonly merchantGuidIn: "header" | "query" | undefined;
  readonly fetch: FetchLike;
  /**
   * For the operations that are never retried: the merchant's `fetch`, or one that never sends a
   * request on a reused connection where the runtime's own would send it again (`unpooled.ts`).
   */
  readonly fetchNeverRetried: FetchLike;
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  readonly retry: ResolvedRetry;
  readonly hooks: ServiceHooks;
  readonly names: (operation: OperationName) => Readonly<Record<string, string>>;
  readonly path: (operation: OperationName) => string;
  readonly jwt: (operation: OperationName) => boolean;
  readonly tokenScheme: string | null;
  readonly userName: string | undefined;
  readonly tokens: TokenProvider | undefined;
  readonly redactor: Redactor;
  readonly maxResponseBytes: number;
  /**
   * Milliseconds on a monotonic clock, for durations and deadlines only (`deadlineMs`,
   * `durationMs`, the retry check): a wall-clock step must not change them. Never an epoch time.
   */
  readonly now: () => number;
  /** This client's calls that ended in doubt (`in-doubt.ts`); absent: none are remembered. */
  readonly inDoubt?: InDoubtLedger | undefined;
}

export interface CallResult {
  readonly body: unknown;
  readonly status: number;
  readonly attempts: number;
  readonly requestId: string | undefined;
  readonly idempotencyKey: string | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REQUEST_ID_HEADERS = ["x-request-id", "request-id", "x-correlation-id", "x-trace-id"];

interface Prepared {
  readonly url: string;
  readonly body: string | undefined;
  readonly wireBody: unknown;
}

interface Failure extends FailureInfo {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs?: number | undefined;
  readonly cause?: Error | undefined;
  readonly mayHaveBeenApplied?: boolean | undefined;
  /**
   * The client's "may have been applied" note ("; …") for a failure whose description is the
   * service's text: said in the message only, so the description stays the service's.
   */
  readonly note?: string | undefined;
  /**
   * A 4xx status line whose body was not read (cut off, late, too large): a refusal whose code is
   * unknown, so it may be the one that means "already done" (`fail` consults the calls in doubt).
   */
  readonly unreadRefusal?: boolean | undefined;
}

/** An answer the client cannot use (not JSON, too large, not the operation's shape): never retried. */
function invalidResponse(
  description: string,
  status: number | undefined,
  mayHaveBeenApplied: boolean,
): Failure {
  return {
    kind: "server",
    code: "INVALID_RESPONSE",
    description,
    status,
    retryable: false,
    mayHaveBeenApplied,
  };
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

class ResponseTooLarge extends Error {}

/**
 * Lets go of the body of an answer that came after its attempt was given up. Never throws, nor
 * leaves a rejection: the `fetch` option may resolve anything then (a "log and go on" wrapper's
 * `undefined`, a Node stream body without `cancel`, a `cancel` that throws), and a throw here
 * would be an unhandled rejection, which ends a Node process (review SECOND-HOSTILE-3).
 */
function letGo(late: unknown): void {
  try {
    const body = (late as { body?: { cancel?: unknown } } | null | undefined)?.body;
    if (typeof body?.cancel !== "function") return;
    Promise.resolve(body.cancel()).catch(() => undefined);
  } catch {
    // Nothing to let go of, or nothing that can be.
  }
}

/** Runs one operation; resolves with the validated body or rejects with a `ServiceError`. */
export function callOperation(
  ctx: CallContext,
  name: OperationName,
  input: unknown,
  options: CallOptions = {},
  idempotencyKey?: string,
): Promise<CallResult> {
  return callOperationThen(ctx, name, input, options, idempotencyKey, (result) => result);
}

/**
 * Runs one operation and `finish` on its result, whose text (a client method's result or error
 * made from the answer) is redacted while the call still holds its tokens: each token the call
 * sends stays masked until the call has made its result or error (review HOSTILE-3), the
 * redactor's last few tokens alone would let it go once newer ones were issued, and a method that
 * made its result after the call returned (calculateBillingSummary's delivery error) had it
 * let go first (review SECOND-HOSTILE-2).
 */
export async function callOperationThen<R>(
  ctx: CallContext,
  name: OperationName,
  input: unknown,
  options: CallOptions,
  idempotencyKey: string | undefined,
  finish: (result: CallResult) => R | Promise<R>,
): Promise<R> {
  const held: (() => void)[] = [];
  try {
    const result = await runCall(ctx, name, input, options, idempotencyKey, (token) =>
      held.push(ctx.redactor.hold(token)),
    );
    return await finish(result);
  } finally {
    for (const release of held) release();
  }
}

async function runCall(
  ctx: CallContext,
  name: OperationName,
  input: unknown,
  options: CallOptions,
  idempotencyKey: string | undefined,
  hold: (token: string) => void,
): Promise<CallResult> {
  const op: OperationDefinition = OPERATIONS[name];
  const { signal } = options;
  if (signal?.aborted) throw signal.reason;
  const error = (failure: FailureInfo & { status?: number | undefined }, extra = {}) =>
    toError(ctx, name, op, failure, extra);

  const timeoutMs = positive(options.timeoutMs, "timeoutMs", ctx.timeoutMs, MAX_TIMEOUT_MS);
  const deadlineMs = positive(options.deadlineMs, "deadlineMs", ctx.deadlineMs, MAX_TIMEOUT_MS);
  const parsed = op.request.safeParse(input);
  if (!parsed.success) {
    throw error({ kind: "validation", code: "INVALID_REQUEST" }, { issues: issuesOf(ctx, parsed) });
  }
  // `new URL` resolves a `.` or `..` path segment: such a value would send the request (and the
  // GUID) to another path of the service. (`%2e` is sent as `%252e`, which nothing resolves.)
  for (const param of op.params.path ?? []) {
    if (isDotSegment(String((parsed.data as Record<string, unknown>)[param]))) {
      const issues = [{ path: param, message: "must not be a `.` or `..` path segment" }];
      throw error({ kind: "validation", code: "INVALID_REQUEST" }, { issues });
    }
  }
  // A lone surrogate (a text cut inside an emoji) has no UTF-8 form: `encodeURIComponent` threw a
  // raw URIError on it in a path, URLSearchParams sent U+FFFD in its place (another id asked for;
  // review i18n-3). Refused, the parameter named, before anything is sent.
  const surrogateIssues = loneSurrogateParams(op, parsed.data as Record<string, unknown>);
  if (surrogateIssues !== undefined) {
    throw error({ kind: "validation", code: "INVALID_REQUEST" }, { issues: surrogateIssues });
  }
  let key: string | undefined;
  if (op.retry === "idempotency-key") {
    key = idempotencyKey ?? crypto.randomUUID();
    if (!UUID.test(key)) {
      const issues = [{ path: "idempotencyKey", message: "must be a UUID" }];
      throw error({ kind: "validation", code: "INVALID_REQUEST" }, { issues });
    }
  }
  const jwt = ctx.jwt(name);
  if (jwt && ctx.tokens === undefined) {
    const description = "this operation sends a token: give the client credentials";
    throw error({ kind: "authentication", code: "NO_CREDENTIALS", description });
  }
  const prepared = prepare(ctx, name, op, parsed.data);
  // Only the operations that are never retried can end in doubt (PIT-8).
  const ledger = op.retry === "never" ? ctx.inDoubt : undefined;
  let known: string | undefined;
  const identity = () => {
    known ??= requestIdentity(name, op, parsed.data);
    return known;
  };
  const deadlineAt = ctx.now() + deadlineMs;
  const hooksBodies = ctx.hooks.includeBodies === true && op.base !== "auth";
  const redactedUrl = ctx.redactor.text(prepared.url);
  let attempt = 0;
  let retries = 0;
  let replayed = false;

  const pastDeadline = () =>
    error(
      { kind: "timeout", code: "DEADLINE_EXCEEDED" },
      { attempts: attempt, description: "the call's deadline passed before this attempt" },
    );

  for (;;) {
    if (deadlineAt - ctx.now() <= 0) throw pastDeadline();
    // The refresh is shared, so it goes on for the others; only this call stops waiting for it.
    const token = jwt
      ? await within((ctx.tokens as TokenProvider).get(signal), deadlineAt - ctx.now()).catch(
          (caught: unknown) => {
            throw tokenFailure(ctx, name, op, caught, attempt);
          },
        )
      : undefined;
    if (token === DEADLINE) throw pastDeadline();
    if (token !== undefined) hold(token);
    // Aborted while the token (cached, or just shared) was handed over: nothing is sent.
    if (signal?.aborted) throw signal.reason;
    const remaining = deadlineAt - ctx.now();
    if (remaining <= 0) throw pastDeadline();
    let headers: Headers;
    try {
      headers = requestHeaders(ctx, op, jwt ? token : undefined, key, prepared.body);
    } catch {
      // The GUID, user name and scheme were checked at creation: what fetch refuses here is the
      // token (issued, or from a shared cache), and its TypeError would quote it. Not kept.
      if (token !== undefined) ctx.tokens?.invalidate(token);
      const description =
        "the token cannot be sent in a header (a control character, or a character beyond U+00FF): nothing was sent";
      throw error({ kind: "server", code: "INVALID_RESPONSE", description }, { attempts: attempt });
    }
    attempt++;
    emit(ctx.hooks, "onRequest", {
      operation: name,
      attempt,
      method: op.method,
      url: redactedUrl,
      idempotencyKey: key,
      ...(hooksBodies ? { body: ctx.redactor.value(prepared.wireBody) } : {}),
    });
    const started = ctx.now();
    const result = await attemptOnce(ctx, op, prepared, headers, {
      signal,
      timeoutMs: Math.min(timeoutMs, remaining),
      byDeadline: remaining < timeoutMs,
    });
    const tookMs = ctx.now() - started;
    // Whole milliseconds, as the hooks reported it before ctx.now became performance.now().
    const durationMs = Math.round(tookMs);
    const outcome = "status" in result ? interpret(ctx, name, op, result, tookMs) : result;
    const requestId = "status" in result ? requestIdOf(ctx, result) : undefined;
    emit(ctx.hooks, "onResponse", {
      operation: name,
      attempt,
      method: op.method,
      url: redactedUrl,
      status: "status" in result ? result.status : result.failure.status,
      durationMs,
      requestId,
      idempotencyKey: key,
      outcome: "failure" in outcome ? outcome.failure.kind : "success",
      code: "failure" in outcome ? outcome.failure.code : undefined,
      ...(hooksBodies && "body" in outcome ? { body: ctx.redactor.value(outcome.body) } : {}),
    });
    if (!("failure" in outcome)) {
      // A success of a request once in doubt: it is no longer (nothing computed when none is).
      if (ledger !== undefined && ledger.size > 0) ledger.forget(identity());
      return {
        body: outcome.body,
        status: (result as Answer).status,
        attempts: attempt,
        requestId,
        idempotencyKey: key,
      };
    }
    const failure = outcome.failure;
    const retryEvent = {
      operation: name,
      attempt,
      status: failure.status,
      kind: failure.kind,
      code: failure.code,
      idempotencyKey: key,
    } as const;
    if (failure.kind === "authentication" && token !== undefined) {
      // The service refused the token: refresh it (shared with concurrent calls) and replay once,
      // but only when the refusal proves nothing was applied (review network-1): a 5xx naming
      // UNAUTHORIZED may be the service failing midway (a carrier refusing its own credentials),
      // and replaying a dispatch or a refund after it sent it twice. Such a call ends in doubt;
      // its token is not used again (the refusal may have been of it), so the next call asks anew.
      ctx.tokens?.invalidate(token);
      if (!replayed && failure.mayHaveBeenApplied !== true) {
        replayed = true;
        emit(ctx.hooks, "onRetry", { ...retryEvent, delayMs: 0, reason: "token-refresh" });
        continue;
      }
    }
    const fail = () => {
      const extra = {
        attempts: attempt,
        requestId,
        cause: failure.cause,
        ...(failure.issues === undefined ? {} : { issues: failure.issues }),
      };
      const made = error(failure, extra);
      // A call in doubt is remembered; a refusal that may mean an earlier one of the same request
      // was applied says so (nothing computed while none is remembered).
      if (ledger === undefined) return made;
      if (made.mayHaveBeenApplied) {
        ledger.record(identity(), made);
        return made;
      }
      // A 4xx whose body was not read may carry any code, "already done" among them.
      const maybeDone = failure.unreadRefusal === true || mayMeanAlreadyDone(op, made);
      if (ledger.size === 0 || !maybeDone || op.alreadyDone === undefined) return made;
      const earlier = ledger.find(identity());
      return earlier === undefined ? made : error(failure, { ...extra, earlier });
    };
    if (!failure.retryable || op.retry === "never" || retries + 1 >= ctx.retry.maxAttempts) {
      throw fail();
    }
    const delayMs = failure.retryAfterMs ?? backoffDelay(ctx.retry, retries + 1);
    if (ctx.now() + delayMs >= deadlineAt) throw fail();
    retries++;
    emit(ctx.hooks, "onRetry", { ...retryEvent, delayMs, reason: "retry" });
    await sleep(delayMs, signal);
  }
}

/**
 * The refresh is shared, and so is its failure: each call waiting on it gets an error of its own,
 * of the same class, code, status and description, naming its own operation, counting its own
 * attempts and the token request's, with the token request's error as `cause` (one object for
 * every caller, never rethrown as theirs).
 * Anything else (the caller's abort reason) is passed on as it is.
 */
function tokenFailure(
  ctx: CallContext,
  name: OperationName,
  op: OperationDefinition,
  caught: unknown,
  attempts: number,
): unknown {
  if (!(caught instanceof ServiceError) || caught.operation !== "getAuthenticationToken") {
    return caught;
  }
  return createServiceError(caught.kind, {
    operation: name,
    code: caught.code,
    message: ctx.redactor.text(`${op.wireName} failed: no token — ${caught.message}`),
    status: caught.status,
    requestId: caught.requestId,
    description: caught.description,
    attempts: attempts + caught.attempts,
    retryAfterMs: caught instanceof ServiceRateLimitError ? caught.retryAfterMs : undefined,
    issues: caught instanceof ServiceValidationError ? caught.issues : undefined,
    cause: caught,
  });
}

const DEADLINE = Symbol("deadline");

/** The promise's value, or DEADLINE when `ms` pass first; the timer never outlives the race. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof DEADLINE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof DEADLINE>((resolve) => {
    timer = setTimeout(() => resolve(DEADLINE), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The path and query parameters holding a lone surrogate, as issues; undefined when none. */
function loneSurrogateParams(
  op: OperationDefinition,
  fields: Record<string, unknown>,
): { path: string; message: string }[] | undefined {
  let issues: { path: string; message: string }[] | undefined;
  for (const param of [...(op.params.path ?? []), ...(op.params.query ?? [])]) {
    const value = fields[param];
    if (value === undefined || value === null) continue;
    const items: unknown[] = Array.isArray(value) ? value : [value];
    if (!items.some((item) => typeof item === "string" && hasLoneSurrogate(item))) continue;
    issues ??= [];
    issues.push({
      path: param,
      message: "must not hold a lone surrogate (half of a character cut from a text)",
    });
  }
  return issues;
}

function prepare(
  ctx: CallContext,
  name: OperationName,
  op: OperationDefinition,
  data: unknown,
): Prepared {
  const fields = { ...(data as Record<string, unknown>) };
  const names = ctx.names(name);
  let path = ctx.path(name);
  for (const param of op.params.path ?? []) {
    path = path.replace(`{${param}}`, encodeURIComponent(String(fields[param])));
    delete fields[param];
  }
  const base = op.base === "auth" ? ctx.authUrl : ctx.baseUrl;
  const url = new URL(`${base.replace(/\/+$/, "")}${path}`);
  for (const param of op.params.query ?? []) {
    const value = fields[param];
    delete fields[param];
    if (value === undefined || value === null) continue;
    const wireName = names[param] ?? param;
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(wireName, String(item));
    }
  }
  if (guidPlacement(ctx, op) === "query" || guidInUrlForToken(ctx, name, op)) {
    url.searchParams.set(MERCHANT_GUID_QUERY, ctx.merchantGuid);
  }
  let wireBody: unknown;
  if (op.params.body === "rest") {
    const renamed: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(fields)) renamed[names[field] ?? field] = value;
    wireBody = renamed;
  } else if (op.params.body !== "none") {
    wireBody = fields[op.params.body];
  }
  return {
    url: url.href,
    // A lone surrogate in a text (one cut inside an emoji) sent as U+FFFD, not as the escape
    // `\ud83d` strict readers (System.Text.Json) refuse, as the callback answers are (review
    // i18n-2). Only a body that holds `\ud` at all is looked at again.
    body: wireBody === undefined ? undefined : wellFormedJson(JSON.stringify(wireBody)),
    wireBody,
  };
}

function guidPlacement(ctx: CallContext, op: OperationDefinition): "header" | "query" | "none" {
  if (op.merchantGuid === "none") return "none";
  return ctx.merchantGuidIn ?? op.merchantGuid;
}

/**
 * 5.2: an operation that sends a token must "still provide the merchant GUID in the URL", wherever
 * `merchantGuidIn` puts it otherwise; the billing summary carries it in its body (2.1) instead.
 */
function guidInUrlForToken(
  ctx: CallContext,
  name: OperationName,
  op: OperationDefinition,
): boolean {
  return op.merchantGuid !== "none" && op.merchantGuidInBody !== true && ctx.jwt(name);
}

/**
 * Whether fetch can send `value` as a header value once `Headers` has trimmed its ends
 * (`isHeaderBytes`): what it refuses would be a TypeError quoting the GUID or a token in the
 * merchant's logs, or a NETWORK_ERROR that is retried.
 */
export function isHeaderValue(value: string): boolean {
  return isHeaderBytes(asSent(value));
}

/** A header value as fetch sends it: its ends trimmed of tabs, spaces and line breaks. */
export function asSent(value: string): string {
  return value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
}

function requestHeaders(
  ctx: CallContext,
  op: OperationDefinition,
  token: string | undefined,
  idempotencyKey: string | undefined,
  body: string | undefined,
): Headers {
  const headers = new Headers({ Accept: "application/json" });
  // Document 000: every POST has `Content-Type: application/json`, those of 4.7, 4.7a and 4.8
  // without a body too (nothing there says otherwise).
  if (body !== undefined || op.method === "POST") headers.set("Content-Type", "application/json");
  if (guidPlacement(ctx, op) === "header") headers.set(MERCHANT_GUID_HEADER, ctx.merchantGuid);
  if (token !== undefined) {
    // Checked here, not left to the dispatcher: its refusal is a NETWORK_ERROR, retried.
    if (!isHeaderValue(token)) throw new TypeError("the token cannot be sent in a header");
    const scheme = op.tokenScheme ?? ctx.tokenScheme;
    headers.set("Authorization", scheme === null ? token : `${scheme} ${token}`);
    if (ctx.userName !== undefined) headers.set("UserName", ctx.userName);
  }
  if (idempotencyKey !== undefined) headers.set("Idempotency-Key", idempotencyKey);
  return headers;
}

async function attemptOnce(
  ctx: CallContext,
  op: OperationDefinition,
  prepared: Prepared,
  headers: Headers,
  limits: { signal: AbortSignal | undefined; timeoutMs: number; byDeadline: boolean },
): Promise<Answer | { failure: Failure }> {
  // The last point before the send (the onRequest hook may have aborted): a listener added to a
  // signal that has already aborted is never called, so the request would go out.
  if (limits.signal?.aborted) throw limits.signal.reason;
  const controller = new AbortController();
  const { signal } = limits;
  // Settles when the attempt is aborted (its timer, the deadline, the caller's signal), raced with
  // the fetch and with every read of the body: a `fetch` option that does not pass `init.signal` on
  // (a wrapper that rebuilds `init`) never sees the abort, and the call would wait for ever.
  let abandon = (): void => {};
  const abandoned = new Promise<typeof TIMED_OUT>((resolve) => {
    abandon = () => resolve(TIMED_OUT);
  });
  controller.signal.addEventListener("abort", abandon, { once: true });
  const stop = signal && whenAborted(signal, () => controller.abort(signal.reason));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, limits.timeoutMs);
  try {
    const send = op.retry === "never" ? ctx.fetchNeverRetried : ctx.fetch;
    const sent = Promise.resolve(
      send(prepared.url, {
        method: op.method,
        headers,
        ...(prepared.body === undefined ? {} : { body: prepared.body }),
        // Never followed: fetch would carry the GUID and UserName headers, and a 307/308 the token
        // request's password, to whatever origin the Location names. A redirect is a failure.
        redirect: "manual",
        signal: controller.signal,
      }),
    );
    const first = await Promise.race([sent, abandoned]);
    if (first === TIMED_OUT) {
      // The answer of a fetch that went on regardless is not read: its body is let go when it
      // comes, and its failure is nobody's (no unhandled rejection).
      sent.then(letGo, () => undefined);
      throw new Error("the attempt was aborted");
    }
    const response = first;
    // The status line arrived: a body that does not is a failure that keeps its status.
    let text: string;
    try {
      text = await readText(response, ctx.maxResponseBytes, abandoned);
    } catch (caught) {
      if (limits.signal?.aborted) throw limits.signal.reason;
      const encoding = response.headers.get("content-encoding");
      return { failure: cutOff(ctx, op, response.status, caught, timedOut, limits, encoding) };
    }
    return { status: response.status, headers: response.headers, text };
  } catch (caught) {
    if (limits.signal?.aborted) throw limits.signal.reason;
    if (timedOut) {
      const code = limits.byDeadline ? "DEADLINE_EXCEEDED" : "TIMEOUT";
      const { note, mayHaveBeenApplied } = appliedUnknown(op);
      return {
        failure: {
          kind: "timeout",
          code,
          description: `no answer within ${Math.round(limits.timeoutMs)} ms${note}`,
          status: undefined,
          retryable: !limits.byDeadline,
          mayHaveBeenApplied,
        },
      };
    }
    const { note, mayHaveBeenApplied } = neverLeft(caught) ? NOT_APPLIED : appliedUnknown(op);
    return {
      failure: {
        kind: "network",
        code: "NETWORK_ERROR",
        description: `${ctx.redactor.text(describe(caught))}${note}`,
        status: undefined,
        retryable: true,
        cause: scrubbed(ctx, caught),
        mayHaveBeenApplied,
      },
    };
  } finally {
    clearTimeout(timer);
    stop?.();
    controller.signal.removeEventListener("abort", abandon);
  }
}

const NOT_APPLIED = { note: "", mayHaveBeenApplied: false } as const;

/**
 * A status line that says the request was not applied where it was sent, though no answer follows
 * it: a 307 or 308 (the request is to be repeated elsewhere, as it was), or an interim 1xx. Any
 * other redirect may answer a POST that was processed: a 303 See Other is the standard answer to
 * one (RFC 9110 §15.4.4), a 301 or 302 is used that way too, and a browser's opaque redirect
 * (status 0) does not say which it was (review network-2).
 */
function redirectNotApplied(status: number): boolean {
  return status === 307 || status === 308 || (status >= 100 && status <= 199);
}

/**
 * Whether a fetch failure came before the request was written: the codes of `nothingSent`, a
 * connect(2) that failed (no route, host or network unreachable: Node's `syscall: "connect"`), a
 * server certificate the client refused (verified during the handshake, before undici or Bun
 * writes the request), or a URL whose port fetch refuses to contact (undici's "bad port", which
 * has no code). Anything else may have been sent: a reset or a timeout on a connection that was
 * open, an alert from the server (TLS 1.3 sends one about the client's certificate after the
 * request may have left), a failure it does not recognise. A wrong "not sent" would invite a
 * second dispatch or refund, so only these count.
 */
function neverLeft(error: unknown): boolean {
  if (nothingSent(error)) return true;
  // A forward proxy that refused the tunnel (undici's ProxyAgent: 407 for its credentials, 502
  // when it could not reach the service): the request is written only into an open tunnel
  // (review network-3).
  const refusedTunnel = causeChain(error).some((value) => {
    const message = readSafely(value, "message");
    return typeof message === "string" && PROXY_REFUSED.test(message);
  });
  if (refusedTunnel) return true;
  const cause = readSafely(error, "cause");
  return [error, cause].some((value) => {
    const code = readSafely(value, "code");
    if (typeof code === "string" && REFUSED_CERTIFICATE.has(code)) return true;
    if (readSafely(value, "syscall") === "connect") return true;
    return value === cause && code === undefined && readSafely(value, "message") === "bad port";
  });
}

/** undici's failure when a forward proxy answers the CONNECT with anything but 200. */
const PROXY_REFUSED = /^Proxy response \(\d{3}\) !== 200 when HTTP Tunneling$/;

/**
 * The codes Node (and Bun, which copies them) gives a server certificate the client refused:
 * OpenSSL's verification results and the host name check.
 */
const REFUSED_CERTIFICATE = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A request that may have reached the service, with no complete answer back (a timeout, a dropped
 * connection, an answer cut off): an operation that is never retried may have been applied, and
 * the error says so in one wording, as text and as `mayHaveBeenApplied`. A retried one was not
 * (or is safe to send again), so nothing is added.
 */
function appliedUnknown(op: OperationDefinition): { note: string; mayHaveBeenApplied: boolean } {
  if (op.retry !== "never") return NOT_APPLIED;
  return {
    note: `; ${op.wireName} is never retried and may have been applied: check before sending it again`,
    mayHaveBeenApplied: true,
  };
}

/**
 * Whether a failure answer leaves open what the service did: the service failing (the kind
 * `kindAt` or `readRefusal` gave: a 5xx naming no documented refusal, `INTERNAL_ERROR`, B700
 * "Unknown failure") at any 5xx — a gateway that forwarded the request and got no usable answer
 * (502, 504, Cloudflare's 520/524), and a 503, which the service means as "not handled" (RFC 9110
 * §15.6.4) but a gateway may send after forwarding (the two cannot be told apart) — or inside a
 * 2xx, which says no more than the 500 would. A 4xx is an answer, and so is any refusal (not found,
 * conflict, validation, permission, a refused token), at any status.
 */
function failedMidway(status: number, info: FailureInfo): boolean {
  const failing = (status >= 200 && status <= 299) || status >= 500;
  if (failing && info.kind === "server") return true;
  // A 5xx naming UNAUTHORIZED (review network-1): 7.1 gives it a 401, so at a 5xx it is the service
  // failing, perhaps on credentials of its own (a carrier's), after it may have begun the work. A
  // refused token request (TOKEN_REFUSED) is a refusal at any status: nothing was done.
  return status >= 500 && info.kind === "authentication" && info.code !== "TOKEN_REFUSED";
}

/**
 * Fetch failure codes that mean the request never left: the connection was refused, or the name
 * did not resolve (Node's and Bun's spellings). `neverLeft` adds the rest it knows.
 */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "ConnectionRefused",
]);

function nothingSent(error: unknown): boolean {
  // Every read guarded: a `fetch` option (instrumentation, a proxy agent) may throw anything.
  const cause = readSafely(error, "cause");
  return [error, cause].some((value) => {
    const code = readSafely(value, "code");
    return typeof code === "string" && NOT_SENT.has(code);
  });
}

/**
 * An answer whose status line arrived and whose body did not (too large, reset, timed out): the
 * failure keeps the status, and for an operation that is never retried says it may have been
 * applied, since the service answered, unless that status was a 4xx (a refusal: nothing done)
 * or a 307/308 (a redirect, not followed: not applied there).
 */
function cutOff(
  ctx: CallContext,
  op: OperationDefinition,
  status: number,
  caught: unknown,
  timedOut: boolean,
  limits: { timeoutMs: number; byDeadline: boolean },
  encoding?: string | null,
): Failure {
  // A 4xx status line is the service's refusal: a complete 4xx says nothing was done whatever its
  // body reads, so one whose body is cut off, late or too large says no more (SECOND-DOUBT-7).
  // Nor does a 307/308 (a redirect, never followed: not applied there) or a 1xx, as when whole;
  // another 3xx may answer a request that was processed (a 303), cut off or not (network-2).
  const refused = status >= 400 && status <= 499;
  const notApplied = refused || redirectNotApplied(status);
  const { note, mayHaveBeenApplied } = notApplied ? NOT_APPLIED : appliedUnknown(op);
  // Its code is unknown: after a call in doubt it may be the refusal that means "already done".
  const unread = refused ? { unreadRefusal: true } : {};
  if (caught instanceof ResponseTooLarge) {
    const description = `the answer is larger than ${ctx.maxResponseBytes} bytes${note}`;
    return { ...invalidResponse(description, status, mayHaveBeenApplied), ...unread };
  }
  if (!timedOut && decodingFailed(caught)) {
    // The whole body came, but not in the encoding it declared (a proxy that labels an answer gzip
    // and does not compress it): the same answer every time, so not retried, and not "cut off"
    // (review network-5).
    const said = ctx.redactor.text(describe(caught));
    const declared = encoding === null || encoding === undefined ? "" : `: ${encoding}`;
    const description = `the answer could not be decoded as its Content-Encoding${ctx.redactor.text(declared)} says (${said})${note}`;
    return { ...invalidResponse(description, status, mayHaveBeenApplied), ...unread };
  }
  if (timedOut) {
    return {
      ...unread,
      kind: "timeout",
      code: limits.byDeadline ? "DEADLINE_EXCEEDED" : "TIMEOUT",
      description: `the answer began but did not end within ${Math.round(limits.timeoutMs)} ms${note}`,
      status,
      retryable: !limits.byDeadline,
      mayHaveBeenApplied,
    };
  }
  return {
    ...unread,
    kind: "network",
    code: "INCOMPLETE_RESPONSE",
    description: `the answer was cut off after its status line (${ctx.redactor.text(describe(caught))})${note}`,
    status,
    retryable: true,
    cause: scrubbed(ctx, caught),
    mayHaveBeenApplied,
  };
}

/** The codes zlib and brotli give a body that is not in the encoding it declares. */
const DECODING_FAILURE =
  /^(Z_DATA_ERROR|Z_BUF_ERROR|Z_NEED_DICT|Z_STREAM_ERROR|ERR_BROTLI_\w+|ERR__ERROR_\w+|ERR_ZSTD_\w+)$/;

/** Whether reading a body failed because it could not be decoded (its causes, a few deep). */
function decodingFailed(caught: unknown): boolean {
  return causeChain(caught).some((value) => {
    const code = readSafely(value, "code");
    return typeof code === "string" && DECODING_FAILURE.test(code);
  });
}

/**
 * The body's bytes as text: UTF-8 (RFC 8259 §8.1), unless they are not UTF-8, hold no well-formed
 * multi-byte UTF-8 sequence, and the answer declares a single-byte charset `TextDecoder` knows
 * (`iso-8859-1`, `windows-1252`), which is then used (review network-5: a Latin-1 answer's "Annulé"
 * became "Annul\uFFFD"). Otherwise UTF-8, a byte that is not UTF-8 read as U+FFFD: a label never
 * makes readable bytes unreadable or garbled (review second-client-2: UTF-8 with one stray byte
 * labelled `utf-16` became unreadable, labelled `iso-8859-1` it became mojibake).
 */
function decodeText(bytes: Uint8Array, contentType: string | null): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const declared = singleByteDecoder(contentType);
    if (declared !== undefined && !holdsUtf8Sequence(bytes)) return declared.decode(bytes);
    return new TextDecoder().decode(bytes);
  }
}

/** The encodings `TextDecoder` knows that are not single-byte (WHATWG Encoding). */
const MULTI_BYTE = new Set([
  "utf-8",
  "utf-16le",
  "utf-16be",
  "gbk",
  "gb18030",
  "big5",
  "euc-jp",
  "iso-2022-jp",
  "shift_jis",
  "euc-kr",
]);

/** A decoder for the charset a Content-Type declares, if `TextDecoder` knows it and it is single-byte. */
function singleByteDecoder(contentType: string | null): TextDecoder | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "")?.[1];
  if (charset === undefined) return undefined;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    return undefined; // A label TextDecoder does not know (or `replacement`).
  }
  return MULTI_BYTE.has(decoder.encoding) ? undefined : decoder;
}

/**
 * Whether the bytes hold a well-formed multi-byte UTF-8 sequence (`C3 A9`, "é"): text that is
 * UTF-8 but for a stray byte, which a single-byte charset would garble.
 */
function holdsUtf8Sequence(bytes: Uint8Array): boolean {
  const continuation = (at: number) => at < bytes.length && ((bytes[at] ?? 0) & 0xc0) === 0x80;
  for (let at = 0; at < bytes.length; at++) {
    const lead = bytes[at] ?? 0;
    if (lead < 0xc2 || lead > 0xf4) continue;
    const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    const second = bytes[at + 1] ?? 0;
    // The second byte's narrower range after E0, ED, F0 and F4 (RFC 3629 §4).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) continue;
    let whole = true;
    for (let next = at + 2; next < at + length; next++) whole &&= continuation(next);
    if (whole) return true;
  }
  return false;
}

/**
 * The body as text, read within the limit (fetch has already undone any Content-Encoding), and
 * before `abandoned` settles (the attempt aborted): a body whose stream does not end on the abort
 * (a `fetch` option that dropped the signal) is cancelled and the read fails.
 */
async function readText(
  response: Response,
  limit: number,
  abandoned: Promise<typeof TIMED_OUT>,
): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new ResponseTooLarge();
  }
  if (response.body === null) return "";
  const read = await readStream(response.body, limit, abandoned);
  if (read.kind === "too_large") throw new ResponseTooLarge();
  if (read.kind === "timeout") throw new Error("the attempt was aborted while its answer was read");
  return read.kind === "bytes" ? decodeText(read.bytes, response.headers.get("content-type")) : "";
}

/** An answer's outcome: the validated body, or the failure it reports. */
function interpret(
  ctx: CallContext,
  name: OperationName,
  op: OperationDefinition,
  answer: Answer,
  /** How long the attempt took until its answer was read (monotonic), for a Retry-After date. */
  attemptMs: number,
): { body: unknown } | { failure: Failure; body?: unknown } {
  let body: unknown;
  let parsedJson = true;
  try {
    body = answer.text.trim() === "" ? undefined : JSON.parse(answer.text.replace(/^\uFEFF/, ""));
  } catch {
    parsedJson = false;
  }
  const status = answer.status;
  // The service's texts are redacted before they are cut (src/service/failures.ts).
  const clean = (text: string) => ctx.redactor.text(text);
  // 3xx, or 0: a browser's opaque answer to a redirect it was told not to follow.
  if (status < 200 || (status >= 300 && status < 400)) {
    const description =
      "the service answered with a redirect, which the client does not follow (the credentials stay with the configured URL): check baseUrl and authUrl";
    // Only a 307 or 308 asks for the request to be sent elsewhere, unapplied here; a 303 answers a
    // POST that was processed (POST/redirect/GET, RFC 9110 §15.4.4), a 301/302 may be used so, and
    // an opaque redirect does not say which (review network-2).
    const { note, mayHaveBeenApplied } = redirectNotApplied(status)
      ? NOT_APPLIED
      : appliedUnknown(op);
    return {
      failure: {
        kind: "server",
        code: `HTTP_${status}`,
        description,
        note,
        status,
        retryable: false,
        mayHaveBeenApplied,
      },
      body,
    };
  }
  if (status >= 300) {
    const info = readErrorAnswer(status, body, op.failures, ctx.names(name), clean);
    // An HTTP date is a time on the service's clock: read against this machine's clock (an epoch
    // time, not ctx.now, which is monotonic) while the answer's Date header falls within the
    // attempt, and against that header when the clocks plainly disagree.
    const retryAfterMs = parseRetryAfter(
      answer.headers.get("retry-after"),
      Date.now(),
      answer.headers.get("date"),
      attemptMs,
    );
    // A 5xx naming a documented refusal is an answer: not sent again, and not applied. One naming
    // UNAUTHORIZED is not retried either, but may have been applied (failedMidway).
    const midway = failedMidway(status, info);
    const retryable = status === 429 || (midway && info.kind === "server");
    const { note, mayHaveBeenApplied } = midway ? appliedUnknown(op) : NOT_APPLIED;
    return {
      failure: {
        ...info,
        code: safeCode(ctx, info),
        note,
        status,
        retryable,
        retryAfterMs,
        mayHaveBeenApplied,
      },
      body,
    };
  }
  // A 2xx that does not say what happened (not JSON, not the documented shape, or a refund answer
  // that does not confirm it): an operation that is never retried may have been applied all the
  // same. The refund says how to check; the others get the note of an answer that was lost.
  const saysNothing = (reason: string): { failure: Failure; body?: unknown } => {
    const { note, mayHaveBeenApplied } = appliedUnknown(op);
    const description =
      op.unconfirmed === undefined ? reason + note : `${reason}, so ${op.unconfirmed}`;
    return {
      failure: invalidResponse(
        description,
        status,
        mayHaveBeenApplied || op.unconfirmed !== undefined,
      ),
      body,
    };
  };
  if (!parsedJson) return saysNothing("the answer is not JSON");
  const refused = readRefusal(body, op.failures, ctx.names(name), clean);
  if (refused !== undefined) {
    // Never sent again (a refusal in a 2xx is an answer), but one naming the service's failure
    // may have been applied, as the same body at a 500.
    const { note, mayHaveBeenApplied } = failedMidway(status, refused)
      ? appliedUnknown(op)
      : NOT_APPLIED;
    return {
      failure: {
        ...refused,
        code: safeCode(ctx, refused),
        note,
        status,
        retryable: false,
        mayHaveBeenApplied,
      },
      body,
    };
  }
  // zod on the failing parts only, the first five described: an answer of up to
  // `maxResponseBytes` costs what is described, not its size (review AMP-5).
  const checked = parseBounded(op.response, body, MAX_ANSWER_ISSUES);
  if (!checked.success) {
    const paths = checked.issues
      .slice(0, MAX_ANSWER_ISSUES)
      .map((issue) => `${issuePath(issue) || "(root)"}: ${ctx.redactor.text(issue.message)}`);
    return saysNothing(`the answer does not have the documented shape (${paths.join("; ")})`);
  }
  if (op.unconfirmed !== undefined && !confirmed(body)) {
    return saysNothing("the answer says neither Success nor IsSuccess true");
  }
  // A number beyond 2^53 where the answer may hold one (an IPv6 bound): its exact digits, as
  // text, from the answer's text (only when one is there), never the number JSON.parse rounded.
  if (op.exactNumbers !== undefined) {
    const unsafe = unsafeNumberPaths(checked.data, op.exactNumbers);
    if (unsafe !== undefined) {
      const text = answer.text.replace(/^\uFEFF/, "");
      const lost = restoreExactNumbers(checked.data, unsafe, text);
      if (lost.length > 0) {
        const paths = lost.map(pathText).join(", ");
        return saysNothing(
          `the answer's ${paths}: a number beyond 2^53 not written as an integer of at most 400 digits`,
        );
      }
    }
  }
  return { body: checked.data };
}

/** Whether an answer says it succeeded: `Success` or `IsSuccess` true. */
function confirmed(body: unknown): boolean {
  return isRecord(body) && parseSuccessValue(body.IsSuccess ?? body.Success) === true;
}

/** A code read from the service's answer, which may echo a secret in it. */
function safeCode(ctx: CallContext, info: FailureInfo): ServiceErrorCode {
  return ctx.redactor.text(String(info.code));
}

/** The service's request id (redacted: the service may echo a secret in it too). */
function requestIdOf(ctx: CallContext, answer: Answer): string | undefined {
  let found: string | undefined;
  for (const header of REQUEST_ID_HEADERS) {
    found ||= answer.headers.get(header) ?? undefined;
  }
  found ||= /"traceId"\s*:\s*"([^"]{1,200})"/.exec(answer.text)?.[1];
  return found === undefined ? undefined : ctx.redactor.text(found);
}

function issuesOf(ctx: CallContext, result: z.ZodSafeParseError<unknown>): ServiceIssue[] {
  return result.error.issues.map((issue) => ({
    path: issuePath(issue),
    message: ctx.redactor.text(issue.message),
  }));
}

/** The issues an invalid answer's description names, at most. */
const MAX_ANSWER_ISSUES = 5;

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join(".");
}

/** How many causes of a fetch failure are read: undici's proxy refusal is the third. */
const MAX_CAUSES = 3;

/** A fetch failure and its causes, nearest first, each read guarded; at most `MAX_CAUSES` causes. */
function causeChain(error: unknown): unknown[] {
  const chain = [error];
  let cause = readSafely(error, "cause");
  while (chain.length <= MAX_CAUSES && cause !== undefined && cause !== null) {
    if (chain.includes(cause)) break;
    chain.push(cause);
    cause = readSafely(cause, "cause");
  }
  return chain;
}

function describe(error: unknown): string {
  // Every read guarded (a getter, a Proxy's trap may throw): what cannot be read is left out.
  if (!holdsSafely(() => error instanceof Error)) return "the request failed";
  const message = readSafely(error, "message");
  const said: string[] = typeof message === "string" && message !== "" ? [message] : [];
  // Each cause's code and text (review network-6: undici's UND_ERR_SOCKET without "other side
  // closed"; network-3: a proxy's refusal of the tunnel, two causes down, was never shown).
  for (const cause of causeChain(error).slice(1)) {
    const code = readSafely(cause, "code");
    const detail = readSafely(cause, "message");
    const text = typeof detail === "string" ? detail : "";
    const named = typeof code === "string" && code !== "" && !text.includes(code) ? code : "";
    const part = named !== "" && text !== "" ? `${named}: ${text}` : named || text;
    if (part !== "" && !said.includes(part)) said.push(part);
  }
  return said.join(": ") || "the request failed";
}

/** A copy of a fetch failure with its text redacted and no further cause (which may quote the URL). */
function scrubbed(ctx: CallContext, error: unknown): Error {
  const copy = new Error(ctx.redactor.text(describe(error)));
  const name = holdsSafely(() => error instanceof Error) ? readSafely(error, "name") : undefined;
  copy.name = typeof name === "string" ? ctx.redactor.text(name) : "Error";
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}

function toError(
  ctx: CallContext,
  name: OperationName,
  op: OperationDefinition,
  failure: FailureInfo & { status?: number | undefined },
  extra: {
    attempts?: number;
    requestId?: string | undefined;
    cause?: Error | undefined;
    issues?: readonly ServiceIssue[];
    description?: string;
    /** An earlier call of the same request that ended in doubt, which this refusal may confirm. */
    earlier?: InDoubtEntry;
  },
): ServiceError {
  const description = extra.description ?? failure.description;
  const safeDescription = description === undefined ? undefined : ctx.redactor.text(description);
  const code = String(failure.code);
  const status =
    failure.status === undefined || code.startsWith("HTTP_") ? "" : ` (HTTP ${failure.status})`;
  const known = documentedCode(code)?.text;
  const issues = extra.issues?.map((issue) => `${issue.path || "(root)"}: ${issue.message}`);
  // The service often repeats the code and the document's text: say each once.
  let detail = issues?.length ? issues.join("; ") : safeDescription;
  if (detail?.startsWith(code)) detail = detail.slice(code.length).replace(/^\s*[:\-–]\s*/, "");
  if (detail !== undefined && known !== undefined && detail.toLowerCase() === known.toLowerCase()) {
    detail = undefined;
  }
  // The note follows the service's text ("; …"), or stands alone without one.
  let note = (failure as Failure).note ?? "";
  const earlier = extra.earlier;
  if (earlier !== undefined) {
    note += `; an earlier call of ${op.wireName} with the same request ended in doubt at ${earlier.at.toISOString()} (${String(earlier.error.code)}): this refusal may mean it was applied, so check before sending it again`;
  }
  const tail = detail ? ` — ${detail}${note}` : note === "" ? "" : ` — ${note.slice(2)}`;
  const message = `${op.wireName} failed: ${code}${known ? ` ${known}` : ""}${status}${tail}`;
  return createServiceError(failure.kind, {
    operation: name,
    code: failure.code,
    message: ctx.redactor.text(message),
    status: failure.status,
    requestId: extra.requestId,
    description: safeDescription,
    attempts: extra.attempts ?? 0,
    retryAfterMs: (failure as Failure).retryAfterMs,
    issues: extra.issues,
    cause: extra.cause,
    mayHaveBeenApplied: earlier !== undefined || (failure as Failure).mayHaveBeenApplied,
    earlierInDoubt: earlier?.error,
  });
}

/** The hooks `emit` calls, each with its event. */
type HookEvents = {
  readonly [K in "onRequest" | "onResponse" | "onRetry"]: Parameters<
    NonNullable<ServiceHooks[K]>
  >[0];
};

function emit<K extends keyof HookEvents>(
  hooks: ServiceHooks,
  name: K,
  event: HookEvents[K],
): void {
  // A hook is for observing; its failure (thrown, or an async hook's rejection) must not change
  // the call's outcome, nor surface as an unhandled rejection. Called as a method of the hooks
  // object: a tracer written as a class reaches its own state through `this`.
  try {
    const hook = hooks[name] as ((event: HookEvents[K]) => unknown) | null | undefined;
    if (hook === undefined || hook === null) return;
    const returned = hook.call(hooks, event) as PromiseLike<unknown> | undefined;
    if (typeof returned?.then === "function") Promise.resolve(returned).catch(() => undefined);
  } catch {
    // ignored, as above
  }
}

/**
 * A limit of the client or of one call (`timeoutMs`, `deadlineMs`, …): a positive, finite number
 * up to `max`, or the fallback when not given; anything else is a TypeError before anything is
 * sent. The limits that arm a timer pass `MAX_TIMEOUT_MS`.
 */
export function positive(
  value: number | undefined,
  option: string,
  fallback: number,
  max = Number.MAX_VALUE,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > max) {
    const bound = max < Number.MAX_VALUE ? ` of at most ${max}` : "";
    throw new TypeError(`${option} must be a positive number${bound}`);
  }
  return value;
}

/** `.` or `..`: a segment WHATWG URL resolves (the value is encoded first, so `%2e` is not one). */
function isDotSegment(value: string): boolean {
  return value === "." || value === "..";
}
