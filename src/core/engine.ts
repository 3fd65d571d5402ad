import type { z } from "zod";
import type { Authenticator, AuthRequest, AuthResult } from "../auth/types.js";
import { assertKnownKeys, optionNames } from "../auth/validate.js";
import type { GiftCardHandlerOptions } from "../callbacks/shopper-session.js";
import {
  compileDecoding,
  type DecodedInPlace,
  type DecodingOptions,
  type DecodingPlan,
  type DecodingReport,
} from "../decode/policy.js";
import { ACCEPT, checkSealed, PAYLOAD_CHECKERS, prototypeIsClean } from "../generated/checkers.js";
import { PAYLOAD_DECODERS } from "../generated/decoders.js";
import { IdempotencyStoreError } from "../idempotency/store.js";
import { hasCardToCharge, paymentDetailsOf } from "../schemas/payment.js";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  discardBody,
  parseForm,
  parseJson,
  type ReadBody,
  readBody,
  tooDeep,
} from "./body.js";
import { describeIssueList, parseBounded } from "./bounded-parse.js";
import {
  cardSecretsLater,
  copyHiddenCardFields,
  dropCvv,
  protectCards,
  protectParsedBody,
  protectPaymentDetails,
} from "./card.js";
import type { CallbackFactory } from "./checked.js";
import {
  AuthenticationError,
  AuthenticationOutage,
  type CallbackFailure,
  FAILURE_STATUS,
  isAnswerableStatus,
  isCallbackError,
  type OnError,
} from "./errors.js";
import {
  type FieldStep,
  jsonText,
  pathText,
  restoreExactNumbers,
  unsafeNumberPaths,
} from "./exact-numbers.js";
import { headerReader, headersCutAt } from "./headers.js";
import { isRecord } from "./objects.js";
import { callbackNamedBy, isPathTarget, NOT_SERVED, requestUrl } from "./paths.js";
import { cardNumbersMasker, lazyRedactor, redactCardsInData, secretSpellings } from "./redact.js";
import {
  defaultOnError,
  holdsSafely,
  markTokenOrderId,
  notify,
  type Redactor,
  readSafely,
  redactCards,
  textOf,
} from "./report.js";
import {
  failureResponse,
  type LibraryFailureKind,
  type ResponseShape,
  redactedBody,
  redactedTree,
  respond,
  type UndeliveredCarrier,
  type UndeliveredReporter,
  undeliveredCarrier,
  type WrittenResult,
} from "./responses.js";
import { dropProtoKey, type CardSite as SealedSite, sealBody } from "./seal.js";
import { type LazySignal, lazySignalOf } from "./signal.js";
import { unchanged } from "./text.js";
import { isTimerDelay, MAX_TIMEOUT_MS } from "./timers.js";
import type { CallbackEndpoint, CallbackName, CallbackRequest, CallbackResponse } from "./types.js";

/** 1 MiB: an order with hundreds of products is far below it. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/**
 * 16 MiB: the default of NotifyOrderRefund and SendAdditionalRequiredDocumentsToMerchant, which
 * carry files as base64 `DocumentData` (a 900 kB PDF is 1.2 MB of JSON).
 */
export const DEFAULT_DOCUMENT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Real payloads nest about eight levels; the bound keeps recursion anywhere downstream safe. */
export const DEFAULT_MAX_DEPTH = 64;
/** 30 s to receive a body: a 1 MiB order at 35 kB/s. Node's own limit is 300 s. */
export { DEFAULT_BODY_TIMEOUT_MS };

/** Options every handler factory and the router accept. */
export interface HandlerOptions {
  /**
   * How calls are authenticated: the result of `await createAuth(…)`, or `false` to accept
   * unauthenticated calls (only for local development). Required, so that forgetting it fails at
   * start-up instead of accepting forged orders. A promise of an authenticator is accepted where
   * the configuration arrives later (a Worker's `env`); if it rejects, the rejection is reported
   * through `onError` at once (not at the first call), and every call is a 500.
   */
  auth: Authenticator | Promise<Authenticator> | false;
  /**
   * Largest body read, in bytes; larger ones are answered 413 before parsing (a body a framework
   * already parsed, by the request's `Content-Length`). Default 1 MiB
   * (16 MiB for NotifyOrderRefund and SendAdditionalRequiredDocumentsToMerchant, which carry
   * documents); a value set here applies to every callback it is given to.
   */
  maxBodyBytes?: number | undefined;
  /** Deepest JSON nesting accepted; deeper bodies are answered 400. Default 64. */
  maxDepth?: number | undefined;
  /**
   * Longest time spent receiving a body the engine reads itself (a stream), in milliseconds,
   * counted from the first read. A body not complete by then is answered 408 (`request_timeout`)
   * with `Connection: close`, and the read is abandoned. Default 30 000 (30 s).
   */
  bodyTimeoutMs?: number | undefined;
  /** Decoding policy of the encoded fields (default `auto` for each). */
  decoding?: DecodingOptions | undefined;
  /**
   * Told of every failure: authentication, bad input, the merchant's exceptions (as a scrubbed
   * copy: name, message, stack and code without card data). Never receives the body, the token,
   * a card number or a CVV. Default: one line on `console.error`.
   */
  onError?: OnError | undefined;
}

/**
 * The options every factory takes: `HandlerOptions`, and the gift-card and voucher factories'
 * `verifySession`, which the router gives every function it builds (as a merchant's one options
 * object for several factories may), and the other callbacks, with no session, have no use for.
 */
export const HANDLER_OPTION_KEYS: { readonly [K in keyof GiftCardHandlerOptions]-?: true } = {
  auth: true,
  maxBodyBytes: true,
  maxDepth: true,
  bodyTimeoutMs: true,
  decoding: true,
  onError: true,
  verifySession: true,
};
const HANDLER_OPTION_NAMES = optionNames<GiftCardHandlerOptions>(HANDLER_OPTION_KEYS);

const DECODING_OPTION_NAMES = optionNames<DecodingOptions>({ default: true, fields: true });

/**
 * A handler's options checked before it is built, each mistake a TypeError naming the option: an
 * unknown key (a misspelt `maxBodySize` would leave 1 MiB in place), an `onError` that is not a
 * function (every failure report would be dropped), a `decoding` that is not its object.
 * `extraOptions`: the names a factory takes beyond `HANDLER_OPTION_NAMES`.
 */
function checkOptionShapes(
  name: CallbackName,
  options: HandlerOptions,
  extraOptions: readonly string[],
): void {
  assertKnownKeys(
    options as unknown as Record<string, unknown>,
    [...HANDLER_OPTION_NAMES, ...extraOptions],
    "options",
    name,
  );
  const { onError, decoding } = options;
  if (onError !== undefined && onError !== null && typeof onError !== "function") {
    throw new TypeError(`${name}: onError must be a function (failure) => void`);
  }
  checkDecodingShape(decoding, name);
}

/**
 * A `decoding` option is `{ default?, fields? }` or undefined: a bare policy (`"off"`), null or a
 * misspelt key (`defaults`) is a TypeError after `owner`, the function it was given to (a factory,
 * or the router, which may build no handler that would check it). The policies themselves are
 * checked by `compileDecoding`.
 */
export function checkDecodingShape(decoding: unknown, owner: string): void {
  if (decoding === undefined) return;
  if (!isRecord(decoding)) {
    throw new TypeError(`${owner}: decoding must be an object { default?, fields? }`);
  }
  assertKnownKeys(decoding, DECODING_OPTION_NAMES, "decoding", owner);
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
   * `store_failure`, a warning): for helpers around your function, such as `withIdempotency`
   * when its store fails while the delivery still goes on. Scrubbed like every report; safe to
   * call after the answer was sent.
   */
  readonly reportFailure: (reason: string, error?: unknown) => void;
  /**
   * The runtime's `waitUntil` where the adapter was given one (Workers, Vercel: see the README's
   * "Serverless and edge runtimes"); undefined elsewhere (Node, Bun and Deno keep running after
   * the answer; a Lambda freezes and has none). Hand it a promise of work that must go on after
   * the answer; `withIdempotency` does so for its own.
   */
  readonly waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/** The request as the merchant's function sees it. */
export interface CallbackRequestInfo {
  readonly method: string;
  /** Parsed when first read (a getter: `{ ...context.request }` does not carry it). */
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
      /**
       * Query parameters (GET), or query then body fields (POST): GetCheckoutCartInfo.
       * `signedBody`: the authenticator binds the body (a JWT body digest), so the body's
       * parameters come first and the unsigned query cannot replace them.
       */
      readonly kind: "query";
      /**
       * `parsedForm`: the body is a form parser's object (`express.urlencoded()`: lists for repeats).
       * `read`: the body as read, for the exact text of a number beyond 2^53 (rare path only).
       * `found.queryMalformed`: set to the query parameters kept raw, their `%xx` not decoding.
       */
      build(
        url: URL,
        body: unknown,
        signedBody: boolean,
        parsedForm: boolean,
        read: ReadBody,
        found: { queryMalformed?: readonly string[] | undefined },
      ): unknown;
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
  /** The body limit when the merchant sets no `maxBodyBytes` (else DEFAULT_MAX_BODY_BYTES). */
  readonly defaultMaxBodyBytes?: number;
  /**
   * The id fields typed text or number (a gift card's `CardId`): one holding an integer beyond 2^53,
   * which `JSON.parse` has rounded, is given its exact digits as text from the body, or refused
   * with a 400 naming it when the body's text is not at hand (a framework parsed it).
   */
  readonly exactNumbers?: readonly (readonly FieldStep[])[];
  /** Top-level payload fields whose values are never quoted in what the library reports. */
  readonly secretFields?: readonly string[];
  /** Other values of the payload as sent never quoted in what the library reports (a gift card's PIN). */
  readonly secretValues?: (payload: unknown) => readonly string[];
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
    /** `error` is what was thrown, `undefined` included (reported as a `NonError` then). */
    readonly thrown = false,
  ) {}
}

/**
 * The request as authentication reads it. Its `URL` is made on first read, by authentication (a
 * secret or cart token in the query), the cart's payload (its query) or the merchant
 * (`context.request.url`), and is then the same object for all of them: most calls never read it.
 * A target whose parse could fail is parsed before authentication, as it always was (see `run`).
 */
class IncomingAuthRequest implements AuthRequest {
  #url: URL | undefined;
  readonly #target: string;

  constructor(
    readonly callback: CallbackName,
    readonly method: string,
    target: string,
    url: URL | undefined,
    readonly headers: AuthRequest["headers"],
    readonly remoteAddress: string | undefined,
  ) {
    this.#target = target;
    this.#url = url;
  }

  get url(): URL {
    this.#url ??= requestUrl(this.#target);
    return this.#url;
  }
}

class IncomingRequestInfo implements CallbackRequestInfo {
  readonly #request: AuthRequest;

  constructor(
    readonly method: string,
    request: AuthRequest,
    readonly remoteAddress: string | undefined,
    private readonly headers: AuthRequest["headers"],
  ) {
    this.#request = request;
  }

  /** The request's URL (parsed on first read: see `IncomingAuthRequest`). */
  get url(): URL {
    return this.#request.url;
  }

  header(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
}

/**
 * What a merchant's function receives beside the payload: one small object per request, its
 * lazy parts (the raw view, the signal, the failure reporter) getters of the class, built only
 * when read. The request's internals are private fields: spreading, printing or serialising the
 * context shows none of them (nor the raw body). A request with a lazy signal (the Node
 * adapters') has it made only when the merchant reads `signal`: no `AbortController` and no
 * `close` listener for a merchant that never does. Only the maker is kept, never the request.
 */
class HandlerContext<TPayload> implements CallbackContext<TPayload> {
  readonly #decoded: DecodedInPlace<TPayload>;
  readonly #lazySignal: LazySignal | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  readonly #cards: ReadonlySet<object>;
  readonly #onError: OnError;
  readonly #call: Call;
  #raw: { value: TPayload } | undefined;
  #reportFailure: ((reason: string, error?: unknown) => void) | undefined;
  readonly decoding: DecodingReport;

  constructor(
    readonly callback: CallbackName,
    readonly request: CallbackRequestInfo,
    decoded: DecodedInPlace<TPayload>,
    readonly auth: AuthResult | undefined,
    incoming: CallbackRequest,
    cards: ReadonlySet<object>,
    onError: OnError,
    call: Call,
  ) {
    this.#decoded = decoded;
    this.decoding = decoded.report;
    this.#lazySignal = lazySignalOf(incoming);
    this.#signal = this.#lazySignal === undefined ? incoming.signal : undefined;
    this.#waitUntil = incoming.waitUntil;
    this.#cards = cards;
    this.#onError = onError;
    this.#call = call;
  }

  /**
   * The payload as sent, rebuilt on first read from the values decoding recorded. A
   * PaymentDetails it copies prints masked like its original, and loses its CVV with it.
   */
  get rawPayload(): TPayload {
    if (this.#raw === undefined) {
      const cards = this.#cards;
      const value = this.#decoded.raw((original, copy) => {
        if (!cards.has(original)) return;
        // The copy is a spread of its original, which leaves the hidden card fields out.
        copyHiddenCardFields(original, copy);
        protectPaymentDetails(copy);
        (cards as Set<object>).add(copy);
      });
      this.#raw = { value };
    }
    return this.#raw.value;
  }

  get signal(): AbortSignal | undefined {
    return this.#lazySignal === undefined ? this.#signal : this.#lazySignal.signal;
  }

  get waitUntil(): ((promise: Promise<unknown>) => void) | undefined {
    return this.#waitUntil;
  }

  /** The redactor of the request behind a context this engine made; undefined for any other value. */
  static redactorOf(value: unknown): Redactor | undefined {
    return typeof value === "object" && value !== null && #call in value
      ? (value as HandlerContext<unknown>).#call.redact
      : undefined;
  }

  /**
   * Masks what `extra` masks too in every text the request reports from now on (its `onError`
   * reports, the default line, a thrown error's message and description), not in its data (a
   * success answer, a stored result). False for a context this engine did not make.
   */
  static maskInReports(value: unknown, extra: Redactor): boolean {
    if (typeof value !== "object" || value === null || !(#call in value)) return false;
    const call = (value as HandlerContext<unknown>).#call;
    const before = call.redact;
    call.redact = (text) => extra(before(text));
    return true;
  }

  /** The masker of the request's own card numbers (identity without card data); see below. */
  static answerRedactorOf(value: unknown): Redactor | undefined {
    return typeof value === "object" && value !== null && #call in value
      ? (value as HandlerContext<unknown>).#call.redactAnswer
      : undefined;
  }

  /** `redactorOf` and `answerRedactorOf` for the merchant's data (a stored result); see `Call`. */
  static dataRedactorsOf(
    value: unknown,
  ): { readonly redact: Redactor; readonly redactAnswer: Redactor } | undefined {
    if (typeof value !== "object" || value === null || !(#call in value)) return undefined;
    const call = (value as HandlerContext<unknown>).#call;
    return { redact: call.redactData, redactAnswer: call.redactAnswerData };
  }

  /** Whether the request behind a context this engine made carries card data; else undefined. */
  static carriesCardsOf(value: unknown): boolean | undefined {
    return typeof value === "object" && value !== null && #call in value
      ? (value as HandlerContext<unknown>).#cards.size > 0
      : undefined;
  }

  static cardMaskerOf(value: unknown): ((text: string) => string) | undefined {
    return typeof value === "object" && value !== null && #call in value
      ? (value as HandlerContext<unknown>).#call.ownCards
      : undefined;
  }

  /**
   * A reporter like `reportFailure` for a context this engine made, that keeps nothing of the
   * request (not the context, its payload or its card data): it holds the handler's `onError`
   * and the callback's name, and masks card numbers wherever quoted (not this request's CVV,
   * which it does not keep). For reports after the answer; undefined for any other value.
   */
  static detachedReporterOf(
    value: unknown,
  ): ((reason: string, error?: unknown) => void) | undefined {
    if (typeof value !== "object" || value === null || !(#call in value)) return undefined;
    const context = value as HandlerContext<unknown>;
    const onError = context.#onError;
    const callback = context.callback;
    return (reason, error) =>
      notify(
        onError,
        {
          kind: "store_failure",
          status: FAILURE_STATUS.store_failure,
          severity: "warning",
          callback,
          reason,
          error,
        },
        redactCards,
      );
  }

  get reportFailure(): (reason: string, error?: unknown) => void {
    this.#reportFailure ??= (reason, error) =>
      notify(
        this.#onError,
        {
          kind: "store_failure",
          status: FAILURE_STATUS.store_failure,
          severity: "warning",
          callback: this.callback,
          reason,
          error,
        },
        this.#call.redact,
      );
    return this.#reportFailure;
  }
}

/**
 * The redactor of the request a context belongs to (this request's card numbers and CVVs, as the
 * engine's reports mask them), for helpers around the merchant's function (`withIdempotency`);
 * undefined when the context was not made by this engine. Internal: not exported by the package.
 */
export function requestRedactor(context: unknown): Redactor | undefined {
  return HandlerContext.redactorOf(context);
}

/**
 * Masks what `extra` masks in everything the request behind a context reports from now on (not
 * in its data): `withIdempotency`'s key quoting the payload's cart token. False when the context
 * was not made by this engine. Internal: not exported by the package.
 */
export function maskInRequestReports(context: unknown, extra: Redactor): boolean {
  return HandlerContext.maskInReports(context, extra);
}

/**
 * The request's redactor without a gift card's secret values (see `Call.redactAnswer`), for the
 * stored copy of an answer; undefined when the context was not made by this engine. Internal.
 */
export function requestAnswerRedactor(context: unknown): Redactor | undefined {
  return HandlerContext.answerRedactorOf(context);
}

/**
 * The request's redactor and answer redactor for the merchant's data (a stored result, which is
 * replayed to the service): other card numbers masked only in their classic spelling (see
 * `createRedactor`'s `"data"` scan). Undefined when the context was not made by this engine.
 */
export function requestDataRedactors(
  context: unknown,
): { readonly redact: Redactor; readonly redactAnswer: Redactor } | undefined {
  return HandlerContext.dataRedactorsOf(context);
}

/**
 * Masks the card number of each of the request's card objects (wherever the walk found them, in
 * any spelling) in a text, as the engine masks the ids and amounts of its answer; undefined when
 * the context was not made by this engine. Internal: not exported by the package.
 */
export function requestCardMasker(context: unknown): ((text: string) => string) | undefined {
  return HandlerContext.cardMaskerOf(context);
}

/**
 * Whether the request a context belongs to carries card data (a PaymentDetails or any card
 * object the engine found); undefined when the context was not made by this engine. Internal.
 */
export function requestCarriesCards(context: unknown): boolean | undefined {
  return HandlerContext.carriesCardsOf(context);
}

/**
 * A failure reporter for the context's handler that keeps nothing of its request, for helpers
 * reporting after the answer went out (`withIdempotency`'s background record retries); undefined
 * when the context was not made by this engine. Internal: not exported by the package.
 */
export function detachedReporter(
  context: unknown,
): ((reason: string, error?: unknown) => void) | undefined {
  return HandlerContext.detachedReporterOf(context);
}

/**
 * The connection closed before the body's end (a reset or a lost connection mid-body), or the
 * body's stream failed. As `UNDELIVERED_AS.closed`, the text names no culprit: the client, a proxy
 * or the server's own timeout may have closed it, and the adapter cannot tell which.
 */
const CLOSED_MID_BODY =
  "the connection closed (by the client, a proxy or a server timeout) before the body was complete, or its body stream failed";
/** The same when the body may have arrived whole (HTTP/2: a reset after END_STREAM). */
const CLOSED_BEFORE_ANSWER =
  "the connection closed (by the client, a proxy or a server timeout) before the request was answered";

/**
 * Why bytes that are gzip data are refused: the engine reads compressed bodies nowhere (a body it
 * reads itself is refused by its `Content-Encoding` before it is read), so these came from a
 * parser in front that does not inflate (a raw-body middleware), or without the header.
 */
const GZIP_BODY =
  "body is gzip data (it starts 1f 8b), which the callbacks do not inflate: a body parser in front left it compressed (mount the callbacks before it, or use one that inflates)";

/** Whether bytes start as gzip data does (RFC 1952 §2.3.1: ID1 0x1f, ID2 0x8b). */
function isGzip(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Whether a payment object refuses what protection does to it (a prototype, deleting the CVV). */
function isLocked(details: object): boolean {
  if (!Object.isExtensible(details)) return true;
  const cvv = Object.getOwnPropertyDescriptor(details, "CVVNumber");
  return cvv !== undefined && cvv.configurable !== true;
}

/**
 * A plain copy of a parsed body (objects and arrays, own enumerable string keys, no `__proto__`
 * key), its objects made with `prototype` (`null`: none). Only for a body the walk has already
 * bounded in depth, so the recursion is bounded too.
 */
function plainCopy(value: unknown, prototype: object | null = Object.prototype): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => plainCopy(item, prototype));
  const copy: Record<string, unknown> = Object.create(prototype);
  for (const key of Object.keys(value)) {
    if (key === "__proto__") continue;
    copy[key] = plainCopy((value as Record<string, unknown>)[key], prototype);
  }
  return copy;
}

/** The issues an invalid payload's description names, at most. */
const MAX_DESCRIBED_ISSUES = 10;

/** Summarises zod issues as `path: message`. Zod keeps input values out of its messages. */
export function describeIssues(error: z.ZodError, limit = MAX_DESCRIBED_ISSUES): string {
  return describeIssueList(error.issues, limit);
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
  return isAnswerableStatus(status) ? status : FAILURE_STATUS.handler_failure;
}

/**
 * The decoder generated for a callback (src/generated/decoders.ts), when the handler decodes with
 * the default plan (no `decoding` option) and the decoder was generated from the very field list
 * of this definition (compared element by element); `undefined` otherwise. Internal: exported for
 * the tests.
 */
export function generatedDecoderFor(
  definition: { readonly name: CallbackName; readonly encodedFields: readonly string[] },
  decoding: DecodingOptions | undefined,
): ((payload: unknown) => DecodedInPlace<unknown> | undefined) | undefined {
  if (decoding !== undefined) return undefined;
  const generated = PAYLOAD_DECODERS[definition.name];
  if (generated === undefined) return undefined;
  const { fields } = generated;
  const listed = definition.encodedFields;
  if (fields.length !== listed.length) return undefined;
  for (let i = 0; i < fields.length; i++) if (fields[i] !== listed[i]) return undefined;
  return generated.decode;
}

/** Whether `auth: false` has been reported in this process (once: review PIT-5). */
let authOffReported = false;

/**
 * Says once per process, on `console.warn`, that a handler was created with `auth: false` while
 * `NODE_ENV` is `"production"`: the option accepts any caller, forged orders included. Read at
 * creation only, never per call; where there is no `process` (Workers, Deno without Node's
 * globals) or its environment cannot be read, nothing is said.
 */
function reportAuthOff(name: string): void {
  if (authOffReported) return;
  let env: string | undefined;
  try {
    const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
    env = proc?.env?.NODE_ENV;
  } catch {
    return;
  }
  if (env !== "production") return;
  authOffReported = true;
  console.warn(
    `crossborder-callbacks: auth: false while NODE_ENV is "production" (first on the ${name} handler; said once): every handler so configured accepts any caller, forged calls included. Pass your createAuth(…) result as auth (auth: false is for local development only).`,
  );
}

/** The hooks each promise of an authenticator has been reported to (once each: review dx-1). */
const watchedAuth = new WeakMap<Promise<unknown>, Set<OnError>>();

/**
 * Reports a promise of an authenticator that rejects (an unset key variable, a bad PEM, a typo in
 * an unawaited `createAuth(…)`, the README's quick start) through `onError` as soon as it rejects,
 * not at the first order: once per promise and hook, so that a router and the handlers it builds,
 * or several factories given one promise, say it once. Attaching the handler at once also keeps
 * Node from calling the rejection unhandled. `callback` is undefined for the router.
 */
export function watchAuth(
  promise: Promise<unknown>,
  onError: OnError,
  callback: CallbackName | undefined,
): void {
  let hooks = watchedAuth.get(promise);
  if (hooks === undefined) {
    hooks = new Set();
    watchedAuth.set(promise, hooks);
  }
  if (hooks.has(onError)) return;
  hooks.add(onError);
  const where = callback === undefined ? "every callback of the router" : "every call";
  // The reason quotes the refusal (as each call's report does), so no error rides along: the
  // default line would print it twice.
  const report = (reason: string): void => {
    const failure: CallbackFailure = {
      kind: "internal_error",
      status: FAILURE_STATUS.internal_error,
      callback,
      reason: `authentication is misconfigured (${where} will be answered 500 until it is fixed and the process restarted): ${reason}`,
    };
    notify(onError, failure, redactCards);
  };
  promise.then(
    (auth) => {
      if (auth !== false && !isAuthenticator(auth)) {
        report("the promise did not yield an authenticator");
      }
    },
    (error: unknown) => report(errorText(error)),
  );
}

/**
 * Handles a promise of an authenticator before any argument is checked: a refused argument
 * throws, and the promise's rejection must not then go unhandled (reviews final3-2, last3-2).
 * `watchAuth` reports it once the options hold. Every factory calls it first.
 */
export function handleAuthEarly(options: unknown): void {
  if (options === null || typeof options !== "object") return;
  const auth = (options as { readonly auth?: unknown }).auth;
  if (auth instanceof Promise) auth.catch(() => undefined);
}

/** Builds the handler of one callback from its definition and the merchant's function. */
export function createCallbackHandler<TName extends CallbackName, TPayload, TResult>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
  fn: CallbackFunction<TPayload, TResult>,
  options: HandlerOptions,
  extraOptions: readonly string[] = [],
): CallbackHandler<TName> {
  handleAuthEarly(options);
  const name = definition.name;
  if (typeof fn !== "function") throw new TypeError(`${name}: the handler must be a function`);
  if (options !== undefined && options !== null && typeof options !== "object") {
    throw new TypeError(
      `${name}: options must be an object { auth, … } (got a ${typeof options}): pass { auth: await createAuth(…) }, or { auth: false } for local development`,
    );
  }
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
  if (authOption === false) reportAuthOff(name);
  checkOptionShapes(name, options, extraOptions);
  // A rejected configuration is reported as soon as it rejects (once), and on each call's 500.
  if (authOption instanceof Promise) watchAuth(authOption, options.onError ?? defaultOnError, name);
  const maxBodyBytes =
    options.maxBodyBytes ?? definition.defaultMaxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new RangeError(`${name}: maxBodyBytes must be a positive integer`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth <= 0) {
    throw new RangeError(`${name}: maxDepth must be a positive integer`);
  }
  if (!isTimerDelay(bodyTimeoutMs)) {
    throw new RangeError(
      `${name}: bodyTimeoutMs must be a positive integer of milliseconds (at most ${MAX_TIMEOUT_MS})`,
    );
  }
  const plan: DecodingPlan = compileDecoding(definition.encodedFields, options.decoding);
  // The plan unrolled at build time (issue 13), for a JSON body this engine parsed and the sealed
  // check accepted (see callWithPayload).
  const generatedDecode =
    definition.source.kind === "json"
      ? generatedDecoderFor(definition, options.decoding)
      : undefined;
  const onError = options.onError ?? defaultOnError;
  const extraHeaders: Partial<Record<LibraryFailureKind, Readonly<Record<string, string>>>> = {
    method_not_allowed: { allow: definition.methods.join(", ") },
    // The rest of a body that did not arrive in time is not awaited: the connection goes.
    request_timeout: { connection: "close" },
  };
  const source = definition.source;
  // The checker generated from this callback's schema (src/generated/checkers.ts), used only for
  // the very schema it was generated from.
  const generated = PAYLOAD_CHECKERS[name];
  const checker = generated?.schema === definition.schema ? generated : undefined;
  const check = checker?.check;
  const { exactNumbers } = definition;

  /**
   * Every failure of a request ends here: `onError` is told (through `notify`, which scrubs it
   * with the request's redactor) and the callback's failure shape is answered.
   */
  function fail(
    call: Call,
    failure: Failure,
    undelivered?: UndeliveredCarrier,
    /** The validated payload, whose order (or cart) the report names: see `orderIdOf`. */
    payload?: unknown,
  ): CallbackResponse {
    const { kind } = failure;
    const status = FAILURE_STATUS[kind];
    const report = { kind, status, callback: name, reason: failure.reason, error: failure.error };
    notify(onError, about(report, call, payload), call.redact, failure.thrown);
    // The library's own description names paths, never request values: the answer's redactor
    // (card data), as for codes. The request's masks a gift card's secrets too, and a PIN that is
    // a word of a path ("Card") made CardFields.CardId read ***Fields.***Id.
    const description =
      failure.description === undefined ? undefined : call.redactAnswer(failure.description);
    return failureResponse(kind, definition.response, description, extraHeaders[kind], undelivered);
  }

  // What an adapter calls when an answer given after the function ran cannot be delivered: one
  // reporter per kind of answer, made here once (nothing per request), on the prototype of the
  // answers it reports.
  const lostSuccess = undeliveredCarrier(undeliveredReporter(name, onError, "a success"));
  const lostRefusal = undeliveredCarrier(
    undeliveredReporter(name, onError, "a refusal (CallbackError)"),
  );
  const lostFailure = undeliveredCarrier(undeliveredReporter(name, onError, "a failure"));

  /**
   * A refusal before the body was read: the body is let go so the answer reaches the caller (a
   * framework's parsed body is protected once `handle` ends, as after every answer).
   */
  function refuse(call: Call, request: CallbackRequest, failure: Failure): CallbackResponse {
    void discardBody(request.body, bodyTimeoutMs);
    return fail(call, failure);
  }

  async function run(request: CallbackRequest, call: Call): Promise<CallbackResponse> {
    const method = request.method.toUpperCase();
    if (!definition.methods.includes(method)) {
      const allowed = `Allowed: ${definition.methods.join(", ")}`;
      return refuse(call, request, new Failure("method_not_allowed", `method ${method}`, allowed));
    }
    // A path (`/…`, not `//` nor `/\\`) parses against the placeholder origin whatever follows, so
    // its URL is left until read; any other target is parsed now, and refused if it cannot be.
    let target: string;
    let url: URL | undefined;
    try {
      const given: unknown = request.url;
      if (typeof given === "string" && isPathTarget(given)) target = given;
      else {
        url = requestUrl(given as string);
        target = url.href;
      }
    } catch {
      return refuse(
        call,
        request,
        new Failure("malformed_body", "the request target is not a URL"),
      );
    }
    const headers = headerReader(request.headers);
    const cutAt = headersCutAt(request.headers);
    if (cutAt !== undefined) {
      const reason = `more than ${cutAt} header fields: the server keeps the first ${cutAt} only, so a header sent twice could not be seen`;
      return refuse(call, request, new Failure("header_too_large", reason));
    }
    const authRequest: AuthRequest = new IncomingAuthRequest(
      name,
      method,
      target,
      url,
      headers,
      request.remoteAddress,
    );

    // 1. Authenticate, before a byte of the body is read.
    let auth: Authenticator | false;
    try {
      // An authenticator given as it is needs no await (a promise of one is awaited each time).
      auth = authOption instanceof Promise ? await authOption : authOption;
    } catch (error) {
      const reason = `authentication is misconfigured: ${errorText(error)}`;
      return refuse(call, request, new Failure("internal_error", reason));
    }
    if (auth !== false && !isAuthenticator(auth)) {
      const reason = "authentication is misconfigured: the promise did not yield an authenticator";
      return refuse(call, request, new Failure("internal_error", reason));
    }
    let authResult: AuthResult | undefined;
    if (auth) {
      try {
        authResult = await auth.authenticateRequest(authRequest);
      } catch (error) {
        return refuse(call, request, authFailure(error));
      }
    }

    // 2. Read within the limit and the deadline, then parse. GET has no body (GetCheckoutCartInfo):
    // one sent is let go as a refused one is, under the same deadline and cap (review limits-1: a
    // body that never ended held the connection as long as its client kept sending).
    let read: ReadBody;
    if (method === "GET") {
      // Over HTTP/1, a request without Content-Length (or with 0) or Transfer-Encoding has no body
      // (RFC 9112 §6.3); over HTTP/2 (Node's compatibility request keeps the `:method` pseudo-header in its
      // headers record; a fetch `Headers` has no such property, and its `get` would throw) it may.
      const length = headers.get("content-length");
      if (
        (length !== null && length.trim() !== "0") ||
        headers.get("transfer-encoding") !== null ||
        typeof (request.headers as { readonly [":method"]?: unknown })[":method"] === "string"
      ) {
        void discardBody(request.body, bodyTimeoutMs);
      }
      read = EMPTY_BODY;
    } else {
      // A body all here (bytes, text, the Node adapters' arrived body) is read without a promise.
      const reading = readBody(request.body, headers, maxBodyBytes, bodyTimeoutMs);
      read = reading instanceof Promise ? await reading : reading;
    }
    let body: unknown;
    let formMalformed: readonly string[] | undefined;
    switch (read.kind) {
      case "too_large":
        return fail(call, new Failure("payload_too_large", `body over ${maxBodyBytes} bytes`));
      case "compressed":
        return fail(
          call,
          new Failure("unsupported_media_type", `body encoded as ${read.encoding}`),
        );
      case "timeout":
        return fail(
          call,
          new Failure("request_timeout", `the body was not received within ${bodyTimeoutMs} ms`),
        );
      case "failed": {
        const reason = read.maybeWhole === true ? CLOSED_BEFORE_ANSWER : CLOSED_MID_BODY;
        return fail(call, new Failure("client_closed", reason, undefined, read.error));
      }
      case "consumed":
        return fail(
          call,
          new Failure(
            "internal_error",
            "the request body was already read before the callbacks, by a middleware or a body parser that left no parsed body (req.body) the library can read: mount the callbacks before it",
          ),
        );
      case "unreadable":
        return fail(call, new Failure("internal_error", UNREADABLE_BODY));
      case "empty":
        if (source.kind === "json") {
          return fail(call, new Failure("malformed_body", "empty body", "Request body is empty"));
        }
        break;
      case "parsed":
        body = read.value;
        break;
      case "bytes": {
        const parsed =
          source.kind === "query"
            ? parseForm(read.bytes, maxDepth)
            : parseJson(read.bytes, maxDepth);
        if (!parsed.ok) {
          // Only here, after the parse failed: gzip data (1f 8b, never UTF-8) that a parser in
          // front left compressed is the table's compressed body, not a malformed one.
          const gzip = isGzip(read.bytes);
          if (read.owned) read.bytes.fill(0);
          if (gzip) return fail(call, new Failure("unsupported_media_type", GZIP_BODY));
          return fail(call, new Failure("malformed_body", parsed.reason, parsed.reason));
        }
        body = parsed.value;
        formMalformed = parsed.malformed;
        break;
      }
    }

    try {
      const answered = validateAndCall(call, {
        request,
        method,
        authRequest,
        auth,
        authResult,
        body,
        read,
        queryMalformed: formMalformed,
      });
      // An answer given at once is not awaited (issue 13: an `await` of a value costs a promise).
      return answered instanceof Promise ? await answered : answered;
    } finally {
      // The raw bytes may hold card data: nothing of ours keeps them past the answer.
      if (read.kind === "bytes" && read.owned) read.bytes.fill(0);
    }
  }

  /**
   * Not an async function (issue 13): each layer of promises costs every call a promise and a turn
   * of the microtask queue. What it throws reaches `run`'s `await` as a rejection would.
   */
  function validateAndCall(
    call: Call,
    exchange: Exchange,
  ): CallbackResponse | Promise<CallbackResponse> {
    // 3. Seal the parsed body in one walk (depth, `__proto__` keys, card fields wherever a
    // PaymentDetails appears), then validate it against the callback's schema.
    const { body } = exchange;
    // The cart's payload is built from the body's fields: the walk covers those, and the body's
    // own top level (a framework's req.body) loses its `__proto__` key the same way.
    if (source.kind === "query") dropProtoKey(body);
    // With a body digest the token signs the body, not the query: the body's parameters win.
    let input =
      source.kind === "query"
        ? source.build(
            exchange.authRequest.url,
            body,
            exchange.auth !== false && exchange.auth.needsRawBody(name),
            exchange.read.kind === "parsed" && isFormType(exchange.authRequest.headers),
            exchange.read,
            exchange,
          )
        : body;
    // The usual payload needs nothing of the walk: the generated checker accepts it and finds its
    // card objects in the same pass (`checkSealed`), and the walk runs only when that cannot tell.
    // Only for a body this engine parsed (or the cart's, built from the query): the sealed check
    // relies on enumerable own data properties, as JSON.parse makes them, which a framework's own
    // parsed body need not have (a hidden field, a key holding undefined): that takes the walk.
    const found =
      checker === undefined || exchange.read.kind === "parsed"
        ? undefined
        : checkSealed(checker, input, maxDepth);
    if (found !== undefined && !found.some(isLocked)) {
      const sites = found.map((details) => ({ details: details as Record<string, unknown> }));
      return guardCards(call, exchange, input, sites, true);
    }
    let sealing = sealBody(input, maxDepth);
    if (sealing.ok && sealing.cards.some((site) => isLocked(site.details))) {
      // A frozen or sealed payment object (a framework's own body) can neither take the masked
      // views nor lose its CVV: the merchant gets a plain copy of the body instead, walked again.
      input = plainCopy(input);
      sealing = sealBody(input, maxDepth);
    }
    if (!sealing.ok) {
      // A refused body keeps no card data either (a framework's req.body outlives the request).
      if (sealing.cards.length > 0) refuseCards(call, sealing.cards);
      if (input === body) call.bodyWalked = true;
      if (sealing.problem === "too_deep") {
        const reason = tooDeep(maxDepth);
        return fail(call, new Failure("malformed_body", reason, reason));
      }
      const { description } = sealing;
      return fail(call, new Failure("invalid_payload", `card data: ${description}`, description));
    }
    return guardCards(call, exchange, input, sealing.cards, false);
  }

  /**
   * From here on, every text let out masks this request's own card numbers and CVVs (and its
   * secret fields: a shopper's session token), and however the request ends, the parsed body
   * (ours, or a framework's req.body) keeps no CVV. `accepted`: the generated checker has already
   * accepted `input`.
   */
  function guardCards(
    call: Call,
    exchange: Exchange,
    input: unknown,
    sites: readonly CardSite[],
    accepted: boolean,
  ): CallbackResponse | Promise<CallbackResponse> {
    const details = sites.map((site) => site.details);
    const sessionSecrets = secretFieldsOf(definition.secretFields, input);
    const { secretValues } = definition;
    if (secretValues === undefined) {
      // Every callback but the gift-card family: one redactor for the logs and the answer.
      const redact = redactorFor(details, sessionSecrets);
      if (redact !== undefined) {
        call.redact = call.redactAnswer = redact.wide;
        call.redactData = call.redactAnswerData = redact.data;
      }
    } else {
      const redact = redactorFor(details, [...sessionSecrets, ...secretValues(input)]);
      if (redact !== undefined) {
        call.redact = redact.wide;
        call.redactData = redact.data;
      }
      // Codes and answered texts: a gift card's PIN is often a few digits, which a code may hold.
      const redactAnswer = redactorFor(details, sessionSecrets);
      if (redactAnswer !== undefined) {
        call.redactAnswer = redactAnswer.wide;
        call.redactAnswerData = redactAnswer.data;
      }
    }
    const walked = input === exchange.body;
    if (sites.length === 0) {
      // The walk found no card object in the body: nothing in it to protect.
      if (walked) call.bodyWalked = true;
      return callWithPayload(call, exchange, input, sites, accepted);
    }
    call.ownCards = ownCardsMasker(sites);
    return callProtectingCards(call, exchange, input, sites, accepted, walked);
  }

  /**
   * `callWithPayload` for a request with card objects, which lose their CVV however it ends. Not
   * an async function (issue 13): an answer given at once is given at once, and only a call still
   * pending (an awaited function, an authenticator) waits in `protectingCardsWhenSettled`.
   */
  function callProtectingCards(
    call: Call,
    exchange: Exchange,
    input: unknown,
    sites: readonly CardSite[],
    accepted: boolean,
    walked: boolean,
  ): CallbackResponse | Promise<CallbackResponse> {
    let answered: CallbackResponse | Promise<CallbackResponse>;
    try {
      answered = callWithPayload(call, exchange, input, sites, accepted);
    } catch (error) {
      protectCardsAfterCall(call, sites, walked);
      throw error;
    }
    if (answered instanceof Promise)
      return protectingCardsWhenSettled(call, answered, sites, walked);
    protectCardsAfterCall(call, sites, walked);
    return answered;
  }

  async function protectingCardsWhenSettled(
    call: Call,
    answered: Promise<CallbackResponse>,
    sites: readonly CardSite[],
    walked: boolean,
  ): Promise<CallbackResponse> {
    try {
      return await answered;
    } finally {
      protectCardsAfterCall(call, sites, walked);
    }
  }

  function protectCardsAfterCall(call: Call, sites: readonly CardSite[], walked: boolean): void {
    // Done after the function (its card objects include every site); not yet after a refusal
    // before it (a schema 400, the body's checks).
    if (!call.cardsDone) {
      for (const site of sites) {
        protectPaymentDetails(site.details);
        dropCvv(site.details);
      }
    }
    // Every card object of the body is protected now, and has lost its CVV.
    if (walked) call.bodyWalked = true;
  }

  /**
   * A body refused by the walk (card data, depth): its card objects print masked and lose their
   * CVV before the refusal is answered, and the refusal's texts mask their card numbers and CVVs.
   */
  function refuseCards(call: Call, cards: readonly object[]): void {
    const redact = redactorFor(cards, []);
    call.redact = redact?.wide ?? call.redact;
    call.redactAnswer = call.redact;
    call.redactData = redact?.data ?? call.redactData;
    call.redactAnswerData = call.redactData;
    protectCards(cards);
  }

  /**
   * Not an async function (issue 13): a function answering at once is answered at once; an
   * authenticator's `authenticatePayload`, an `authorize` step or a returned promise (or other
   * thenable) continue in an async function of their own.
   */
  function callWithPayload(
    call: Call,
    exchange: Exchange,
    input: unknown,
    sites: readonly CardSite[],
    accepted: boolean,
  ): CallbackResponse | Promise<CallbackResponse> {
    const { auth, read } = exchange;
    // 3b. The object check, then the schema.
    if (
      source.kind === "json" &&
      (input === null || typeof input !== "object" || Array.isArray(input))
    ) {
      const reason = "Request body must be a JSON object";
      return fail(call, new Failure("malformed_body", reason, reason));
    }
    // The generated checker first: when it accepts, zod's output would deep-equal the body, so the
    // checked body itself is the payload (no copy). Otherwise zod decides, on the failing parts
    // only (their issues: a refused body costs what is described, not its size; AMP-4).
    let rawPayload: TPayload;
    if (accepted) {
      rawPayload = input as TPayload;
    } else {
      // Object.prototype holding a field's name (a polluting dependency) would lend its value to a
      // body lacking that field, in the checker and in zod alike, and to the merchant's reads of
      // the payload: zod then reads a copy without prototypes, and the payload is its output made
      // without prototypes too (review second-speed2-4). `checkSealed` accepts nothing then, so
      // this is the walk's way, its depth already bounded.
      const clean = prototypeIsClean();
      const subject = clean ? input : plainCopy(input, null);
      if (check !== undefined && check(subject) === ACCEPT) {
        rawPayload = subject as TPayload;
      } else {
        const result = parseBounded(definition.schema, subject, MAX_DESCRIBED_ISSUES);
        if (!result.success) {
          const description = describeIssueList(
            result.issues,
            MAX_DESCRIBED_ISSUES,
            result.complete,
          );
          return fail(call, new Failure("invalid_payload", `schema: ${description}`, description));
        }
        rawPayload = clean ? result.data : (plainCopy(result.data, null) as TPayload);
      }
    }
    // 4. The checks that need the body: merchant GUID, body digest.
    // Read once: the method decided on is the one called (review second-speed2-1).
    const checkPayload = auth === false ? undefined : auth.authenticatePayload;
    if (checkPayload !== undefined) {
      if (read.kind === "parsed" && (auth as Authenticator).needsRawBody(name)) {
        return fail(call, new Failure("internal_error", RAW_BODY_CONSUMED));
      }
      return authenticateThenCall(call, exchange, checkPayload, rawPayload, sites, accepted);
    }
    return callWithAuthenticated(call, exchange, rawPayload, sites, accepted, exchange.authResult);
  }

  /** `callWithPayload`'s step 4 with an authenticator that reads the payload. */
  async function authenticateThenCall(
    call: Call,
    exchange: Exchange,
    checkPayload: NonNullable<Authenticator["authenticatePayload"]>,
    rawPayload: TPayload,
    sites: readonly CardSite[],
    accepted: boolean,
  ): Promise<CallbackResponse> {
    const { authRequest, auth, read } = exchange;
    let { authResult } = exchange;
    const bytes = read.kind === "bytes" ? read.bytes : undefined;
    try {
      const updated = await checkPayload.call(
        auth as Authenticator,
        authResult as AuthResult,
        rawPayload,
        bytes,
        authRequest,
      );
      if (updated) authResult = updated;
    } catch (error) {
      return fail(call, authFailure(error));
    }
    return callWithAuthenticated(call, exchange, rawPayload, sites, accepted, authResult);
  }

  /** `callWithPayload` from step 4b on: the payload authenticated. */
  function callWithAuthenticated(
    call: Call,
    exchange: Exchange,
    rawPayload: TPayload,
    sites: readonly CardSite[],
    accepted: boolean,
    authResult: AuthResult | undefined,
  ): CallbackResponse | Promise<CallbackResponse> {
    const { request, method, authRequest, read } = exchange;
    call.auth = authResult;

    // An id beyond 2^53 (ENC-1): its exact digits from the body's text, never the rounded number.
    // The check reads a few fields; the text is scanned only when one holds such a number, once
    // for all of them, and only after the authentication that reads the payload (SECOND-ENC-1:
    // a wrong MerchantGUID or body digest is refused before the body's text is scanned).
    if (exactNumbers !== undefined) {
      const unsafe = unsafeNumberPaths(rawPayload, exactNumbers);
      if (unsafe !== undefined) {
        const text = read.kind === "bytes" ? jsonText(read.bytes) : undefined;
        const lost = restoreExactNumbers(rawPayload, unsafe, text);
        if (lost.length > 0) {
          const why = text === undefined ? LOST_DIGITS : NOT_AN_INTEGER;
          const description = lost.map((path) => `${pathText(path)}: ${why}`).join("; ");
          return fail(call, new Failure("invalid_payload", `schema: ${description}`, description));
        }
      }
    }

    // 5. Decode the encoded fields once, in place (the raw view is rebuilt only if read);
    // protect card data in the payload, and in any copy the raw view makes.
    // The generated decoder only for a body the sealed check accepted (so JSON.parse made it, not
    // a framework: the preconditions of src/generated/decoders.ts); for any other body, or when it
    // answers `undefined` (Object.prototype holds a value under a field's name), the plan.
    const decoded =
      (accepted && generatedDecode !== undefined
        ? (generatedDecode(rawPayload) as DecodedInPlace<TPayload> | undefined)
        : undefined) ?? plan.decodeInPlace(rawPayload);
    const payload = decoded.payload;
    // The cart's query parameters kept raw, as the body's values are (review ENC-4).
    if (exchange.queryMalformed !== undefined) {
      (decoded.report.malformed as string[]).push(...exchange.queryMalformed);
    }
    const cards = sites.length === 0 ? NO_CARDS : cardObjects(sites, rawPayload, payload);
    for (const card of cards) protectPaymentDetails(card);
    const context = new HandlerContext<TPayload>(
      name,
      new IncomingRequestInfo(method, authRequest, request.remoteAddress, authRequest.headers),
      decoded,
      authResult,
      request,
      cards,
      onError,
      call,
    );

    // SendOrderToMerchant: whether the order carries a card it charges (001 §4.2), read before
    // the function, which may clear the card number once charged. Nothing is allocated.
    const chargesCard =
      definition.response.unconfirms === true && sites.length > 0 && carriesCardToCharge(payload);

    // 6. Call the merchant (after the callback's own check, if any), 7. write its response.
    if (definition.authorize !== undefined) {
      return authorizeThenCall(call, payload, context, cards, sites, chargesCard);
    }
    let outcome: TResult | undefined;
    let pending: PromiseLike<TResult> | undefined;
    try {
      const returned = fn(payload, context);
      if (isThenable(returned)) pending = returned;
      else outcome = returned;
    } catch (error) {
      return answerThrown(call, error, payload);
    } finally {
      // The payload, the raw payload and the parsed body: no CVV is kept past the function (a
      // promise's: once it settles, in `answerWhenSettled`).
      if (pending === undefined) cardsDone(call, cards);
    }
    if (pending !== undefined)
      return answerWhenSettled(call, pending, payload, cards, sites, chargesCard);
    return answerResult(call, outcome as TResult, payload, sites, chargesCard);
  }

  /** No CVV is kept past the merchant's function, however it ended. */
  function cardsDone(call: Call, cards: ReadonlySet<object>): void {
    for (const card of cards) dropCvv(card);
    call.cardsDone = true;
  }

  /** Steps 6–7 for a function that returned a promise or another thenable. */
  async function answerWhenSettled(
    call: Call,
    pending: PromiseLike<TResult>,
    payload: TPayload,
    cards: ReadonlySet<object>,
    sites: readonly CardSite[],
    chargesCard: boolean,
  ): Promise<CallbackResponse> {
    let outcome: TResult;
    try {
      outcome = await pending;
    } catch (error) {
      return answerThrown(call, error, payload);
    } finally {
      cardsDone(call, cards);
    }
    return answerResult(call, outcome, payload, sites, chargesCard);
  }

  /** Steps 6–7 for a callback with its own check before the function (`authorize`). */
  async function authorizeThenCall(
    call: Call,
    payload: TPayload,
    context: HandlerContext<TPayload>,
    cards: ReadonlySet<object>,
    sites: readonly CardSite[],
    chargesCard: boolean,
  ): Promise<CallbackResponse> {
    let outcome: TResult;
    try {
      let refusal: string | undefined;
      try {
        refusal = await definition.authorize?.(payload, context, options);
      } catch (error) {
        const failure = new Failure("internal_error", AUTHORIZE_THREW, undefined, error, true);
        return fail(call, failure, undefined, payload);
      }
      if (refusal !== undefined) {
        return fail(call, new Failure("unauthorized", refusal), undefined, payload);
      }
      const returned = fn(payload, context);
      outcome = isThenable(returned) ? await returned : returned;
    } catch (error) {
      return answerThrown(call, error, payload);
    } finally {
      cardsDone(call, cards);
    }
    return answerResult(call, outcome, payload, sites, chargesCard);
  }

  /** Step 7: the function's result read, checked and answered. */
  function answerResult(
    call: Call,
    outcome: TResult,
    payload: TPayload,
    sites: readonly CardSite[],
    chargesCard: boolean,
  ): CallbackResponse {
    // A result that cannot be read at all (a Proxy whose keys throw) is answered as nothing,
    // unless the callback requires a verdict: the function has run.
    let written: WrittenResult;
    let unreadable = false;
    let readError: unknown;
    try {
      written = definition.response.success(outcome);
    } catch (error) {
      unreadable = true;
      readError = error;
      written = definition.response.success(undefined as TResult);
    }
    // What reading the result threw, when it did (the whole of it, or the first field it needed
    // that could not be read): the only clue to why (review ops-9). Scrubbed by notify.
    const threw = unreadable || "readError" in written;
    const thrown = unreadable ? readError : written.readError;
    if ("invalid" in written) {
      const why = unreadable ? "reading it threw" : written.invalid;
      const reason = `the handler's result is unusable: ${why}`;
      const failure = threw
        ? new Failure("internal_error", reason, undefined, thrown, true)
        : new Failure("internal_error", reason);
      return fail(call, failure, lostFailure, payload);
    }
    if (written.ignored !== undefined && written.ignored.length > 0) {
      // The redactor still knows this request's secrets: a field name quoting the CVV is masked.
      const reason = describeIgnored(written.ignored);
      const status = FAILURE_STATUS.result_fields_ignored;
      const warning = { kind: "result_fields_ignored", status, severity: "warning" } as const;
      notify(onError, about({ ...warning, callback: name, reason }, call, payload), call.redact);
    }
    const incomplete = !unreadable
      ? written.incomplete
      : ["reading it threw", written.incomplete].filter((part) => part !== undefined).join("; ");
    if (incomplete !== undefined) {
      const reason = `the handler's result is incomplete, answered 200 all the same (the function has run): ${incomplete}`;
      const status = FAILURE_STATUS.result_incomplete;
      const warning = { kind: "result_incomplete", status, severity: "warning" } as const;
      // The error goes in before `about`, whose mark (a cart token) a spread would not copy.
      const report = threw
        ? { ...warning, callback: name, reason, error: thrown }
        : { ...warning, callback: name, reason };
      notify(onError, about(report, call, payload), call.redact, threw);
    }
    // SendOrderToMerchant: an error code without the result's own Success: true, in an order whose
    // card it charges (001 §4.2), may be a decline the service takes as paid. Still a success (the
    // order exists: a 500 would deliver it again), with a warning. The card as the order came in.
    if (written.unconfirmed !== undefined && chargesCard) {
      const reason = `the handler's result carries "${written.unconfirmed}" without "Success": true, answered 200 all the same (the order exists: a 500 would deliver it again): the order carried a card, which ${name} charges (001 §4.2), and the service takes it as paid; if the payment was refused, throw a CallbackError`;
      const status = FAILURE_STATUS.result_incomplete;
      const warning = { kind: "result_incomplete", status, severity: "warning" } as const;
      notify(onError, about({ ...warning, callback: name, reason }, call, payload), call.redact);
    }
    // A result may quote the card like a refusal may: with card data in the request, its texts
    // go through the request's redactor too (its ids, amounts and codes are masked only where they
    // quote this request's own card: an order id may pass the Luhn check). A request without card
    // data pays nothing for it.
    try {
      return respond(
        200,
        sites.length === 0
          ? written.body
          : definition.response.asReturned === true
            ? redactedTree(
                written.body,
                call.redactData,
                call.ownCards,
                definition.response.dataLevel,
              )
            : redactedBody(written.body, call.redactData, call.ownCards),
        undefined,
        lostSuccess,
      );
    } catch (error) {
      // The answer's own JSON.stringify threw: a result answered as returned (the cart) that the
      // checks accept holds, in a field of the merchant's own, something JSON cannot write (a
      // BigInt, a cycle, a toJSON that throws). The result is unusable, not a bug of the library's
      // (review observe-1). Caught here, where the text is written: a success pays nothing.
      return fail(call, unwritableResult(error), lostFailure, payload);
    }
  }

  /**
   * What the merchant's function threw: a `CallbackError` (read field by field, as any of its
   * getters may throw) is the merchant's refusal; anything else is a 500.
   */
  function answerThrown(call: Call, error: unknown, payload: unknown): CallbackResponse {
    if (!holdsSafely(() => isCallbackError(error))) {
      // withIdempotency refusing the delivery (its store failed to claim, read or delete, or
      // holds a record it cannot read) before the merchant's function ran: not the handler's.
      const storeFailed = holdsSafely(() => error instanceof IdempotencyStoreError);
      const reason = storeFailed ? IDEMPOTENCY_STORE_FAILED : "the handler threw";
      const failure = new Failure("internal_error", reason, undefined, error, true);
      return fail(call, failure, lostFailure, payload);
    }
    const { redact } = call;
    const status = answerableStatus(readSafely(error, "status"));
    // The code is the service's to act on: only card data is masked in it, never a gift card's PIN.
    const code = call.redactAnswer(readSafely(error, "code"));
    // A message that cannot be read (its getter throws) is the code, never the text "undefined".
    const read = readSafely(error, "message");
    const message = read === undefined ? code : redact(read);
    const text = readSafely(error, "description");
    const description = text === undefined || text === null ? undefined : redact(text);
    notify(
      onError,
      about(
        {
          kind: "handler_failure",
          status,
          callback: name,
          reason:
            read === undefined ? `${code}: (its message could not be read)` : `${code}: ${message}`,
          error,
        },
        call,
        payload,
      ),
      redact,
    );
    return respond(
      status,
      definition.response.failure({ code, message, description }),
      undefined,
      lostRefusal,
    );
  }

  function newCall(): Call {
    return {
      redact: redactCards,
      redactAnswer: redactCards,
      redactData: redactCardsInData,
      redactAnswerData: redactCardsInData,
      ownCards: unchanged,
      cardsDone: false,
      bodyWalked: false,
      auth: undefined,
    };
  }

  const handler: CallbackHandler<TName> = {
    callback: name,
    // Whatever path it is given (a router's `paths` may put it anywhere): which paths a single
    // handler serves is `matches`, applied by the adapters (review second-mig-2).
    async handle(request) {
      const call = newCall();
      try {
        return await run(request, call);
      } catch (error) {
        // A bug, or an adapter's request that throws when read: still a well-formed answer.
        return fail(
          call,
          new Failure("internal_error", "unexpected failure", undefined, error, true),
        );
      } finally {
        // A framework's req.body outlives the request: whatever the answer (a refusal before the
        // body was read, a 413, a GET's ignored body), it keeps no card number in clear and no CVV.
        if (!call.bodyWalked) protectBodyOf(request);
      }
    },
    // A single handler answers wherever it is mounted, but on another callback's path (its last
    // segment, in any case, with or without an extension: review migrate-1, second-mig-1); a
    // router matches its own paths.
    matches: (pathname) => {
      const named = callbackNamedBy(pathname);
      return named === undefined || named === name;
    },
  };
  // What an adapter (node:http, fetch, Express without next) tells the handler when it answered a
  // path `matches` refused with the router's 404: reported through onError, by callback names only.
  Object.defineProperty(handler, NOT_SERVED, {
    value: (pathname: string) => {
      const named = callbackNamedBy(pathname);
      const what = named === undefined ? "another callback" : `${named}, another callback`;
      const reason = `the path names ${what}: this handler serves ${name} only (mount it on a path of its own, app.post(path, …), or serve several callbacks with createCallbackRouter)`;
      fail(newCall(), new Failure("not_found", reason));
    },
  });
  return handler;
}

/**
 * What an undelivered answer is reported as, by how it was lost (see `UNDELIVERED`). A closed
 * connection says nothing of who closed it (the client, a proxy, the server's own timeout): the
 * kind stays `client_closed`, the text names no culprit.
 */
const UNDELIVERED_AS = {
  closed: {
    kind: "client_closed",
    why: "the connection closed (by the client, a proxy or a server timeout)",
  },
  preempted: {
    kind: "internal_error",
    why: "something else answered the request (a timeout middleware in front?)",
  },
  unwritable: { kind: "internal_error", why: "the server refused to write the answer" },
} as const;

/**
 * The reporter of an answer given after the function ran that the adapter could not deliver:
 * one `onError` call naming the callback and what the answer was (`what`: a success, a refusal, a
 * failure), kind `client_closed` when the connection closed, else `internal_error`. The texts are
 * the library's own (no request value), masked for card numbers all the same. They say only what
 * this request knows: its answer did not go out on it. Whether the service knows the outcome
 * anyway is not known here (under `withIdempotency`, a duplicate's answer is the one another
 * delivery of the same call may have delivered already).
 */
function undeliveredReporter(
  callback: CallbackName,
  onError: OnError,
  what: string,
): UndeliveredReporter {
  return (how, response) => {
    const { kind, why } = UNDELIVERED_AS[how];
    const reason = `${why} after ${callback}'s function ran: its answer (${what}, ${response.status}) was not delivered on this request, so the service may not know its outcome`;
    notify(onError, { kind, status: FAILURE_STATUS[kind], callback, reason }, redactCards);
  };
}

/** Whether a value is a promise or another thenable (then awaited; anything else is used as it is). */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** What one request carries through the engine: the redactor every text it lets out goes through. */
interface Call {
  redact: Redactor;
  /**
   * `redact` without a gift card's secret values (its `CardFields` members but `CardId`): for a
   * `CallbackError`'s code and for the stored copy of an answer, which must reach the service as
   * the merchant wrote them (a code like `4001` may hold a four-digit PIN).
   */
  redactAnswer: Redactor;
  /**
   * `redact` and `redactAnswer` for the merchant's data, a success answer's texts and a stored
   * result: other card numbers masked only in their classic spelling (one space, dash or `+`
   * between groups), so that a dotted date or tracking number passing the Luhn check is answered
   * as written; this request's own card and CVV as in `redact`.
   */
  redactData: Redactor;
  redactAnswerData: Redactor;
  /**
   * Masks the card number of each of the request's card objects, in any spelling (read before the
   * merchant's function); the text as it is when the request has none.
   */
  ownCards: (text: string) => string;
  /** The card objects were protected and stripped of their CVV after the merchant's function. */
  cardsDone: boolean;
  /**
   * The walk ran over the request's body itself (not a copy, not a payload built from it), and its
   * card objects were protected and stripped of their CVV: the body needs no second pass.
   */
  bodyWalked: boolean;
  /** What authentication established, once it did: a report reads it (see `orderIdOf`). */
  auth?: AuthResult | undefined;
}

/** Protects a framework's parsed body the engine did not walk itself (see `protectParsedBody`). */
function protectBodyOf(request: CallbackRequest): void {
  try {
    protectParsedBody(request.body);
  } catch {
    // A request whose body throws when read: there is no body this library can reach.
  }
}

/**
 * A payment object of the request: where the sealing walk found it, or (no path) one the generated
 * checker found in the checked body, which is then the raw payload itself.
 */
type CardSite = Omit<SealedSite, "path"> & { readonly path?: SealedSite["path"] };

/** Never added to: a copy is added only when its original is in the set. */
const NO_CARDS: ReadonlySet<object> = new Set();

/** The values of a definition's secret fields in the payload as sent (strings only). */
function secretFieldsOf(fields: readonly string[] | undefined, input: unknown): string[] {
  const secrets: string[] = [];
  if (fields === undefined || input === null || typeof input !== "object") return secrets;
  for (const field of fields) {
    const value = Object.hasOwn(input, field)
      ? (input as Record<string, unknown>)[field]
      : undefined;
    if (typeof value === "string") secrets.push(value);
  }
  return secrets;
}

/** Field names as a reason quotes them: identifiers only, the others counted. */
function describeIgnored(fields: readonly string[]): string {
  const named = fields.filter((field) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(field));
  const others = fields.length - named.length;
  const list = named.map((field) => `"${field}"`);
  if (others > 0) list.push(`${others} more`);
  return `the result's unknown fields were left out of the answer: ${list.join(", ")}`;
}

/**
 * The redactor of a request with these payment objects and secret field values: their card
 * numbers and CVVs masked wherever quoted, the secrets collected only if a text is ever redacted
 * (from values copied now). `undefined` when there is nothing of the request's own to mask.
 */
function redactorFor(cards: readonly object[], fields: readonly string[]): Redactors | undefined {
  if (cards.length === 0 && fields.length === 0) return undefined;
  const later = cards.map((details) => cardSecretsLater(details as Record<string, unknown>));
  let secrets: string[] | undefined;
  // One collection for both: each redactor is built only when it first redacts something.
  const collect = () => {
    if (secrets === undefined) {
      const found: string[] = [];
      for (const add of later) add(found);
      // The session values and security codes in each spelling a text may quote them in (an
      // error quoting the session service's URL, a JSON body), as the cart token's check does.
      found.push(...secretSpellings(fields));
      secrets = found;
    }
    return secrets;
  };
  return { wide: lazyRedactor(collect), data: lazyRedactor(collect, "data") };
}

/** A request's redactor for reports (`wide`) and for the merchant's data (see `Call.redactData`). */
interface Redactors {
  readonly wide: Redactor;
  readonly data: Redactor;
}

/** Whether an order carries a card to charge (`hasCardToCharge`); false if reading it throws. */
function carriesCardToCharge(payload: unknown): boolean {
  try {
    return hasCardToCharge(paymentDetailsOf(payload));
  } catch {
    return false;
  }
}

/** Masks the card number of each payment object of the request (see `cardNumbersMasker`). */
function ownCardsMasker(sites: readonly CardSite[]): (text: string) => string {
  return cardNumbersMasker(sites.map((site) => site.details));
}

/**
 * Every PaymentDetails object of the request: where the walk found it in the parsed body, and at
 * the same path in the validated payload (zod copies the objects it knows) and in the decoded one
 * (the same object, decoded in place, unless a frozen container had to be copied). The raw view
 * adds its own copies when it is built.
 */
function cardObjects(
  sites: readonly CardSite[],
  rawPayload: unknown,
  payload: unknown,
): Set<object> {
  const cards = new Set<object>();
  for (const site of sites) {
    cards.add(site.details);
    // Found by the generated checker in a body this engine parsed, which is the raw payload:
    // JSON.parse makes nothing read-only, so decoding wrote into it in place and the payload
    // holds this very object.
    if (site.path === undefined) continue;
    const found = objectAt(rawPayload, site.path);
    if (found !== undefined) cards.add(found);
    if (payload === rawPayload) continue;
    const decodedCard = objectAt(payload, site.path);
    if (decodedCard !== undefined) cards.add(decodedCard);
  }
  return cards;
}

function objectAt(root: unknown, path: readonly (string | number)[]): object | undefined {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node !== null && typeof node === "object" ? node : undefined;
}

const EMPTY_BODY: ReadBody = { kind: "empty" };

/** One request on its way through the engine, once authenticated and read. */
/** Whether a request declares a form body (`application/x-www-form-urlencoded`). */
function isFormType(headers: AuthRequest["headers"]): boolean {
  const type = headers.get("content-type");
  return type !== null && /^\s*application\/x-www-form-urlencoded\s*(?:;|$)/i.test(type);
}

interface Exchange {
  readonly request: CallbackRequest;
  readonly method: string;
  readonly authRequest: AuthRequest;
  readonly auth: Authenticator | false;
  readonly authResult: AuthResult | undefined;
  readonly body: unknown;
  readonly read: ReadBody;
  /**
   * The query's and form body's parameters whose `%xx` would not decode, kept raw
   * (GetCheckoutCartInfo; rare).
   */
  queryMalformed?: readonly string[] | undefined;
}

const AUTHORIZE_THREW = "the authorization check before the handler threw";

/**
 * The order (or cart) a validated payload is about, for a report (review observe-3): its
 * `OrderId`, else a cart's id (RemoveRestrictedProducts' `CartId`) or token (GetCheckoutCartInfo's
 * `merchantCartToken`, a gift card's `MerchantCartToken`). Never card data: this request's own
 * card number is masked should one of them quote it. Read only when a report is made.
 */
function orderIdOf(
  payload: unknown,
  call: Call,
): { readonly orderId: string; readonly token: boolean } | undefined {
  // A cart token that authenticated the call is a credential, masked in its check's reports: it
  // names no cart in a report (review final2).
  const tokenIsCredential = call.auth?.methods.includes("cartToken") === true;
  // A field holding the payload's token is that token: the operator may send the cart token under
  // another name (`parameterNames: { merchantCartToken: "CartId" }`), which the payload keeps
  // beside `merchantCartToken` (review final3-1).
  const tokens = TOKEN_FIELDS.map((field) => readSafely(payload, field));
  for (const field of ORDER_ID_FIELDS) {
    const value = readSafely(payload, field);
    if (typeof value !== "string" || value === "") continue;
    // RemoveRestrictedProducts' `CartId` holds the cart token the service was given for the cart
    // (GetCheckoutCartInfo's `merchantCartToken`, which a `cartToken` check takes as a credential):
    // a token too (review last3-1).
    const token = field !== "OrderId" || tokens.includes(value);
    if (token && tokenIsCredential) continue;
    return { orderId: call.ownCards(value), token };
  }
  return undefined;
}

const TOKEN_FIELDS: readonly string[] = ["merchantCartToken", "MerchantCartToken"];
const ORDER_ID_FIELDS: readonly string[] = ["OrderId", "CartId", ...TOKEN_FIELDS];

/**
 * A report with the `orderId` of the payload it is about, when it names one; one naming a cart
 * token is marked so (`ORDER_ID_IS_TOKEN`), and the default line leaves it out: the same token may
 * be another callback's credential (`createAuth`'s `cartToken`; review second-idem-1).
 */
function about<T extends CallbackFailure>(report: T, call: Call, payload: unknown): T {
  if (payload === undefined) return report;
  let found: ReturnType<typeof orderIdOf>;
  try {
    found = orderIdOf(payload, call);
  } catch {
    return report;
  }
  if (found === undefined) return report;
  const named = { ...report, orderId: found.orderId };
  return found.token ? markTokenOrderId(named) : named;
}

/**
 * A result whose answer JSON cannot write: an unusable result, the error `JSON.stringify` threw
 * (or a `toJSON` of the merchant's) as the report's. JSON's own errors (a BigInt, a cycle) are
 * TypeErrors and named in the reason; what a `toJSON` threw is the report's error only.
 */
function unwritableResult(error: unknown): Failure {
  const message = holdsSafely(() => error instanceof TypeError)
    ? readSafely(error, "message")
    : undefined;
  const why = typeof message === "string" && message !== "" ? `: ${message}` : "";
  const reason = `the handler's result is unusable: it cannot be written as JSON${why}`;
  return new Failure("internal_error", reason, undefined, error, true);
}
/** The 400 of an id beyond 2^53 whose digits are lost (ENC-1). */
export const LOST_DIGITS =
  "an integer beyond 2^53 whose exact digits are lost (the body was parsed before the callbacks): send it as text, or mount the callbacks before the body parser";

/** The 400 of a number beyond 2^53 not written as an integer (`1.5`, `1e400`; SECOND-ENC-2). */
export const NOT_AN_INTEGER =
  "a number beyond 2^53 not written as an integer of at most 400 digits: send the id as text";

/** The reason of a delivery `withIdempotency` refused because its store failed (an `IdempotencyStoreError`). */
const IDEMPOTENCY_STORE_FAILED = "the idempotency store failed; the function did not run";

const UNREADABLE_BODY =
  "the request stream gave a chunk that is neither bytes nor text (a stream in object mode?): pass the callbacks the request as the server gave it";
const RAW_BODY_CONSUMED =
  'the authentication needs the raw body (body digest), but a body parser already consumed it: mount the handler before any body parser, or hand it the raw bytes (express.raw({ type: "*/*" }))';

function authFailure(error: unknown): Failure {
  // The merchant's own check threw (the cart token's `verify`): an outage, not a forged call. Read
  // safely, as below: from another copy, it may be any Error carrying the brand.
  if (holdsSafely(() => error instanceof AuthenticationOutage)) {
    const reason = `${errorText(error)} (the call was neither accepted nor refused)`;
    return new Failure("internal_error", reason, undefined, readSafely(error, "thrown"), true);
  }
  // From any copy of the library: an authenticator made by the CommonJS build refuses as one made
  // by this build (a 431 stays a 431, the reason names the check). Read safely, and `kind` only as
  // one of its two values: it may be any object carrying the brand.
  if (holdsSafely(() => error instanceof AuthenticationError)) {
    const kind =
      readSafely(error, "kind") === "header_too_large" ? "header_too_large" : "unauthorized";
    return new Failure(kind, errorText(error), undefined, error);
  }
  // jose throws plain TypeErrors on key confusion: still a refusal, never a 500. The error itself
  // is not passed on: it may carry the token's payload.
  return new Failure("unauthorized", `authentication failed: ${errorName(error)}`);
}

function errorName(error: unknown): string {
  return holdsSafely(() => error instanceof Error)
    ? textOf(readSafely(error, "name"))
    : typeof error;
}

function errorText(error: unknown): string {
  return textOf(holdsSafely(() => error instanceof Error) ? readSafely(error, "message") : error);
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
