import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { RESPONSE_SHAPES } from "../callbacks/response-shapes.js";
import {
  cardSecretsOf,
  giftCardSecretsOf,
  maskCardNumber,
  namesCvv,
  redactCardNumbers,
} from "../core/card.js";
import { isCardNumberKey, mayBeCvv } from "../core/card-keys.js";
import type { CallbackContext, CallbackFunction } from "../core/engine.js";
import {
  detachedReporter,
  maskInRequestReports,
  requestCardMasker,
  requestCarriesCards,
  requestDataRedactors,
} from "../core/engine.js";
import { CallbackError } from "../core/errors.js";
import { isRecord } from "../core/objects.js";
import {
  cardNumbersMasker,
  createRedactor,
  type Redactor,
  secretSpellings,
} from "../core/redact.js";
import { scrubError } from "../core/report.js";
import {
  namesRead,
  PLAIN_RESULT_FIELDS,
  redactedTree,
  type WrittenResult,
} from "../core/responses.js";
import { findCardObjects } from "../core/seal.js";
import { unchanged } from "../core/text.js";
import { isTimerDelay, monotonicNow } from "../core/timers.js";
import { parseSuccessValue } from "../schemas/response.js";
import {
  checkNamespace,
  defaultIdempotencyKey,
  type IdempotencyKeyFunction,
  storedKey,
} from "./keys.js";
import { createMemoryIdempotencyStore } from "./memory.js";
import {
  type ForgettingIdempotencyStore,
  type IdempotencyStore,
  IdempotencyStoreError,
  isUnreadableRecordError,
  positiveMs,
  TIMER_BOUND,
  timerMs,
} from "./store.js";

export { IdempotencyStoreError };

export interface IdempotencyOptions<TPayload> {
  /**
   * The key of a delivery: deliveries with the same key run once. Default: per callback (see
   * `defaultIdempotencyKey` and the README), never holding card data. A key is stored in clear:
   * never put card data in yours, the CVV included. One quoting the delivery's card number (12
   * digits or more, in any spelling) is refused (a 500, before any store sees it); shorter secrets
   * (a CVV) cannot be told from an id's digits and are not looked for. Return `undefined` to run a
   * delivery without deduplication. The callback's name is always put in front, so one store can
   * serve every callback.
   */
  key?: IdempotencyKeyFunction<TPayload> | undefined;
  /**
   * Put in front of every key this function stores under (the default's and a `key` of yours
   * alike): `"<namespace>:<callback>:<key>"`. The keys hold no shop and no environment (the
   * service's order ids are its own, and may repeat between shops or between test and
   * production), so deliveries of two shops, or of test and production, sharing one store must
   * each have their own namespace (or Redis `prefix`, or PostgreSQL `table`): else one shop's
   * delivery is answered with the other's record and its function never runs. A non-empty text
   * of at most 128 characters, without control characters. Default: none (the keys as they
   * always were). See the README's "Several shops or environments on one store".
   */
  namespace?: string | undefined;
  /** Where records are kept. Default: a new in-memory store (this process only). */
  store?: IdempotencyStore | undefined;
  /** How long a result is answered to repeats. Default 24 hours. */
  ttlMs?: number | undefined;
  /**
   * How long a claim holds; renewed every third of it while the function runs and until its
   * result is recorded, so it runs out only when the process died or could not reach the store
   * for a whole lease (then another delivery may run the function too). A store can also lose it
   * sooner (a Redis without `appendonly yes` that restarts, an eviction, a failover): see the
   * README's "The lease". Default 30 seconds.
   */
  leaseMs?: number | undefined;
  /**
   * How long a repeat waits for the same delivery running elsewhere before it is answered
   * 503 `DELIVERY_IN_PROGRESS` (a failure the service retries). Default 10 seconds.
   */
  waitMs?: number | undefined;
  /** How long one store operation may take before it counts as the store failing. Default 2 seconds. */
  storeTimeoutMs?: number | undefined;
  /**
   * Opt-in bound on a run, from its claim: a function still running past it (one that never
   * returns: a call without a timeout on a connection that died silently) has its lease no longer
   * renewed, so that once it runs out (within `leaseMs`) the next delivery, on any instance, runs
   * the function again, **while this run may still go on** (a possible second side effect; its
   * result, should it come, is answered to its own delivery, not recorded if another run holds the
   * key or its record, and `onError` says the function ran twice; else recorded, and if that is
   * after its lease may have run out, `onError` says it may have run twice: another run may have
   * claimed the key and given it up, after a throw or a refusal). Told to `onError`. Default:
   * none, the lease is renewed for as long as the function runs, and `onError` is told once when
   * a run has held its key past `max(leaseMs, waitMs)`. Both are checked at each renewal (every
   * `leaseMs / 3`), not by a timer of their own: a run is stopped up to that much past
   * `maxRunMs`. See the README's "A function that does not return".
   */
  maxRunMs?: number | undefined;
  /**
   * When the store cannot be reached before the function runs: `false` (default) refuses the
   * delivery (HTTP 500, `Success: false`, so the service retries it later); `true` runs the
   * function without a record (duplicates between processes become possible). Reported to
   * `onError` either way.
   */
  failOpen?: boolean | undefined;
}

/** The answer to a repeat whose first delivery still runs past `waitMs`. */
export const DELIVERY_IN_PROGRESS = "DELIVERY_IN_PROGRESS";
/** The code of the 500 answering a delivery whose `key` option quoted its card data (review PIT-2). */
const KEY_QUOTES_CARD_DATA = "IDEMPOTENCY_KEY_QUOTES_CARD_DATA";

const DAY_MS = 24 * 60 * 60 * 1000;
const FIRST_POLL_MS = 25;
const LONGEST_POLL_MS = 500;
const LONGEST_RETRY_MS = 10_000;
/** What empties a lease before it runs out (the README's "Picking a store"). */
const LOST_LEASE =
  "restarted without an append-only file, evicted it, or failed over to a replica that had not received it";

/** What became of this process's handle on a key, for the deliveries waiting on it. */
type Outcome =
  | { readonly kind: "result"; readonly text: string }
  /** A result the engine answers 500, not recorded: its own delivery answers it, waiters run again. */
  | { readonly kind: "unusable"; readonly text: string }
  /**
   * A result JSON cannot write even as its answer, not recorded: handed to the engine as returned,
   * which reports it as an unusable result (review observe-1); waiters run again.
   */
  | { readonly kind: "unwritable"; readonly result: unknown }
  | { readonly kind: "again" }
  | { readonly kind: "busy" }
  | { readonly kind: "threw"; readonly error: unknown };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The promise's value, or undefined once `deadline` (on `monotonicNow`) passed (the timer cleared
 * either way).
 */
async function until<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - monotonicNow()));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function unref(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) timer.unref();
}

/** Rejects when `promise` has not settled within `ms`. */
async function within<T>(promise: T | Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A store call, when it was sent, and whether it has settled: a call that timed out is kept, so
 * that the loops retrying in the background do not send the next one while it may still answer
 * (a client such as node-redis queues calls while disconnected and sends them all when it
 * reconnects), and a claim that lands after its delivery gave up can be released.
 */
interface Flight<T> {
  readonly promise: Promise<T>;
  /**
   * On `monotonicNow`, as every time this file keeps: durations and deadlines of this process
   * alone (a lease's renewals, waits, retries), which a wall-clock step must not change. Expiry
   * itself is the store's, on its own clock.
   */
  readonly sentAt: number;
  settled: "no" | "resolved" | "rejected";
}

/**
 * Whether a call still holds back the next one: unsettled and sent less than `ms` ago. Past that
 * it counts as lost (a pooled connection that died silently answers nothing for minutes), so that
 * one call that never settles cannot stop the loop.
 */
function holdsBack(flight: Flight<unknown> | undefined, ms: number): boolean {
  return flight?.settled === "no" && monotonicNow() - flight.sentAt < ms;
}

function fly<T>(operation: () => T | Promise<T>): Flight<T> {
  // Taken before the call: a store may start the lease, then work synchronously (a memory store
  // sweeping a large map) before it returns; `lostBefore` takes the lease to run from no earlier.
  const sentAt = monotonicNow();
  let promise: Promise<T>;
  try {
    promise = Promise.resolve(operation());
  } catch (error) {
    promise = Promise.reject(error);
  }
  const flight: Flight<T> = { promise, sentAt, settled: "no" };
  promise.then(
    () => {
      flight.settled = "resolved";
    },
    () => {
      flight.settled = "rejected";
    },
  );
  return flight;
}

function inProgress(): CallbackError {
  return new CallbackError(
    DELIVERY_IN_PROGRESS,
    "The same delivery is still being processed; retry later",
    undefined,
    { status: 503 },
  );
}

/**
 * Refuses a key of the `key` option that quotes this delivery's card number (review PIT-2): a
 * store keeps its keys in clear for a day (Redis `KEYS`, `MONITOR`, PostgreSQL rows, backups). A
 * card number is what a card object holds under `CardNumber` (in any case, or a key damaged in
 * transit that ends with it), 12 digits or more, found in the key in any spelling (spaces, dots,
 * dashes, no-break spaces: the masker of stored results, {@link maskersOf}). Shorter secrets (a
 * CVV, the test environment's masked `"1234"`) are not looked for: their digits are as often an
 * order number's, an amount's or a date's, and a refusal loses the order on every redelivery
 * (review SECOND-PITA-2). Keeping them out of a key is the merchant's (README "The key of a
 * delivery"). Throws a 500 `CallbackError` naming the option, the key masked, before any store
 * sees it and before the function runs. Only for a key of the merchant's own.
 */
function refuseKeyQuotingCards(key: string, context: CallbackContext<unknown>): void {
  const payload = context.rawPayload;
  if (!isRecord(payload)) return;
  const cards = findCardObjects(payload) as Record<string, unknown>[];
  if (cards.length === 0) return;
  if (cardNumbersMasker(cards)(key) === key) return;
  const { redact, ownCards } = maskersOf(context);
  throw new CallbackError(
    KEY_QUOTES_CARD_DATA,
    `withIdempotency: the key option returned a key quoting this delivery's card number (${redact(ownCards(key))}); it would be stored in clear, so the delivery is refused before any store sees it. Build the key from ids, never from card data`,
    undefined,
    { status: 500 },
  );
}

/**
 * The stored text of a result: `u` for none, or `j` and its JSON. Card data never reaches a store
 * (PCI DSS 3.3.1, 3.4.1): every key naming a CVV (`/cvv/i`) is left out (unless it holds a
 * boolean or a text without a digit, which cannot be one), a `CardNumber` property
 * (in any case, text or number) is masked, the delivery's own card numbers (every card object
 * of the request, in any spelling) are masked wherever quoted, and every other text or number
 * goes through the request's own redactor, the one its reports go through (card numbers, and this
 * request's card numbers and CVVs wherever quoted); a gift card's secrets (its `CardFields`
 * members but `CardId`) are masked in the names of fields left out, not in the answer's texts,
 * which are stored as the engine answers them (a repeat is the first answer). Amounts, codes and ids only have the
 * delivery's own cards masked: an order id that happens to pass the Luhn check is stored (and
 * answered) as it is. Throws when the result cannot be written as JSON (a cycle, a BigInt, a
 * getter that throws): see {@link encodeResult}.
 */
function encode(result: unknown, context: CallbackContext<unknown>): string {
  if (result === undefined) return "u";
  const shape = shapeOf(context.callback);
  if (shape?.asReturned === true && typeof result === "object" && result !== null) {
    // A cart answered to a request carrying card data is stored as the engine answers it,
    // masked at every depth (review second-doubt: it was stored with the card in clear).
    if (carriesCards(context)) {
      const { redact, ownCards } = maskersOf(context);
      const json = JSON.stringify(redactedTree(result, redact, ownCards, shape.dataLevel));
      if (json === undefined) throw new TypeError("the result is not something JSON can write");
      return `j${json}`;
    }
  }
  const { redact, redactAnswer, ownCards } =
    shape?.asReturned === true
      ? { redact: unchanged, redactAnswer: unchanged, ownCards: unchanged }
      : maskersOf(context);
  const json: string | undefined = JSON.stringify(result, (name, given: unknown) => {
    // JSON writes a boxed value (`new String(pan)`) as its primitive, after asking here.
    const value = unboxed(given);
    // A key naming a CVV (`CVVNumber`, `Cvv`, `cardCVV2`) is left out whole, unless what it holds
    // cannot be one (`cvvRequired: true`, `cvvResult: "M"`: review final2-6).
    if (namesCvv(name) && mayBeCvv(value)) return undefined;
    if (typeof value === "number") {
      const text = String(value);
      // A decimal point is no gap between digit groups: only a whole number may be a card number.
      if (!WHOLE_NUMBER.test(text)) return value;
      const masked = isCardNumberKey(name) ? maskCardNumber(text) : written(name, text);
      return masked === text ? value : masked;
    }
    if (typeof value === "string") {
      return isCardNumberKey(name) ? maskCardNumber(value) : written(name, value);
    }
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? withMaskedKeys(value as Record<string, unknown>)
      : value;
  });
  // A function, or a `toJSON` giving nothing: not a result JSON can write (see encodeResult).
  if (json === undefined) throw new TypeError("the result is not something JSON can write");
  return `j${json}`;

  function written(name: string, text: string): string {
    const masked = ownCards(text);
    return PLAIN_RESULT_FIELDS.has(name) ? masked : redactAnswer(masked);
  }

  /** The object itself, or a copy whose keys quoting card data are masked (`{"4111…": …}`). */
  function withMaskedKeys(value: Record<string, unknown>): Record<string, unknown> {
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const masked = redact(ownCards(key));
      if (masked === key && copy === undefined) continue;
      if (copy === undefined) {
        copy = {};
        for (let j = 0; j < i; j++) copy[keys[j] as string] = value[keys[j] as string];
      }
      copy[masked] = value[key];
    }
    return copy ?? value;
  }
}

/** Whether the delivery carries card data: the engine's finding, or its raw payload's cards. */
function carriesCards(context: CallbackContext<unknown>): boolean {
  const known = requestCarriesCards(context);
  if (known !== undefined) return known;
  const payload = context.rawPayload;
  return isRecord(payload) && findCardObjects(payload).length > 0;
}

/** A number's text that is a whole number written in digits (not `1.5`, not `1e+21`). */
const WHOLE_NUMBER = /^-?[0-9]+$/;

/**
 * The response shape the engine answers a callback with; undefined for a callback of your own.
 * A shape whose answer is the result as returned (the cart, its merchant's fields too) has it
 * stored as returned, its product codes and ids never masked (a Luhn-valid EAN is a product
 * code), as the engine answers it; card-named keys are still masked and CVV-named ones left out.
 */
function shapeOf(
  callback: string,
): (typeof RESPONSE_SHAPES)[keyof typeof RESPONSE_SHAPES] | undefined {
  return Object.hasOwn(RESPONSE_SHAPES, callback)
    ? RESPONSE_SHAPES[callback as keyof typeof RESPONSE_SHAPES]
    : undefined;
}

/** A boxed string, number or boolean as its primitive (what JSON writes); anything else as it is. */
function unboxed(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  try {
    if (value instanceof String) return String.prototype.valueOf.call(value);
    if (value instanceof Number) return Number.prototype.valueOf.call(value);
    if (value instanceof Boolean) return Boolean.prototype.valueOf.call(value);
  } catch {
    // Not really one (a prototype set by hand): JSON then writes it as an object.
  }
  return value;
}

/**
 * How a result's texts are masked: with the engine's own (the request's redactor, and the masker
 * of its card numbers wherever the walk found them), or, for a context of your own, from the card
 * objects of its raw payload found the same way.
 */
function maskersOf(context: CallbackContext<unknown>): {
  redact: (text: string) => string;
  redactAnswer: (text: string) => string;
  ownCards: (text: string) => string;
} {
  // The request's redactors for data: a stored result is replayed to the service (or returned to
  // the caller), so other card numbers are masked in their classic spelling only, as in a success
  // answer; a dotted date or tracking number passing the Luhn check is stored as written.
  const redactors = requestDataRedactors(context);
  const masker = requestCardMasker(context);
  // The engine's request: its redactor masks the gift card's secrets too (in the names of fields
  // left out); the answered texts are stored as the engine answers them, so a repeat is the same.
  if (redactors !== undefined && masker !== undefined) {
    return { redact: redactors.redact, redactAnswer: redactors.redactAnswer, ownCards: masker };
  }
  const giftCard = giftCardRedactor(context.rawPayload);
  const payload = context.rawPayload;
  const cards = isRecord(payload) ? (findCardObjects(payload) as Record<string, unknown>[]) : [];
  const secrets: string[] = [];
  // The engine's rule (texts and numbers, any CVV key, long digit runs), as the kit's.
  for (const card of cards) cardSecretsOf(card, secrets);
  const own = createRedactor(secrets, "data");
  const redact = giftCard === undefined ? own : (text: string) => giftCard(own(text));
  return {
    redact,
    redactAnswer: redact,
    ownCards: cardNumbersMasker(cards),
  };
}

/**
 * A redactor of a gift card's secrets (every `CardFields` member but `CardId`: a `Pin`, a
 * `SecurityCode`, texts or numbers, nested ones too) wherever a stored text quotes them, for a
 * context of your own (the engine's request redactor masks them already); undefined when the
 * payload has none.
 */
function giftCardRedactor(payload: unknown): ((text: string) => string) | undefined {
  const secrets = giftCardSecretsOf(payload);
  return secrets.length === 0 ? undefined : createRedactor(secrets, "data");
}

/**
 * The stored text of what the function returned: the part of it the engine answers (see
 * {@link answeredPart}). A result that cannot be read or written as JSON (a getter that throws, a
 * Proxy, a function) is stored as the answer the engine makes of it (the callback's known fields, as texts and booleans): the function has run,
 * and failing here would answer 500 and run it again on the redelivery. Throws only when even
 * that answer cannot be written (a callback of your own, a cart holding a cycle).
 */
function encodeResult(result: unknown, context: CallbackContext<unknown>): string {
  try {
    return encode(answeredPart(result, context.callback) ?? result, context);
  } catch (error) {
    const answer = answerOf(result, context.callback);
    if (answer === undefined) throw error;
    const text = encode(answer, context);
    // This delivery and every repeat are answered with that answer: what the result held
    // besides it (its unknown fields) is not reported again by the engine, so say it here.
    report(
      context,
      "the function's result could not be stored as returned (JSON cannot write it); the answer made of it was stored, and this delivery is answered with it",
      error,
    );
    return text;
  }
}

/** The verdicts a result may repeat: the engine writes them itself. */
const VERDICTS: ReadonlySet<string> = new Set(["Success", "IsSuccess"]);

/**
 * What of a result is stored: the answer the engine makes of it (its known fields as written,
 * texts and booleans), in the result's order, with the name of each unknown field (its value
 * `null`) and a known field of the wrong type as `{}`, never their values: read again, it gives
 * the same answer and the same warnings (`result_fields_ignored`, `result_incomplete`), and keeps
 * nothing the service is not answered (a copy of PaymentDetails, megabytes of lines). A result
 * that is not an object is kept as an empty one of its kind. A result answered as returned (the
 * cart) is stored as the body answered ({@link answeredBody}). Undefined, to store the result as
 * returned: a callback of your own, a result the engine refuses (never stored) or cannot read.
 */
function answeredPart(result: unknown, callback: string): unknown {
  const shape = shapeOf(callback);
  if (shape === undefined) return undefined;
  if (shape.asReturned === true) return answeredBody(result, shape);
  if (result === undefined || result === null) return undefined;
  if (Array.isArray(result)) return [];
  if (typeof result === "string") return "";
  if (typeof result === "number") return 0;
  if (typeof result === "boolean") return false;
  if (typeof result !== "object") return undefined;
  try {
    const written = shape.success(result as never);
    if ("invalid" in written) return undefined;
    const body = written.body as Record<string, unknown>;
    const ignored = new Set(written.ignored);
    // No prototype: a field named `__proto__` is a field like any other.
    const part: Record<string, unknown> = Object.create(null);
    // Read as the engine reads it (review second-truth SECOND-TRUTH-2): a result whose fields are
    // getters of its class is stored with them.
    for (const key of namesRead(result, shape.names ?? [])) {
      if (VERDICTS.has(key)) {
        // A verdict the result says itself (true: the engine refuses any other) is kept: beside
        // an ErrorCode it is what makes a payment's or a redemption's result a success.
        if (parseSuccessValue((result as Record<string, unknown>)[key]) === true) part[key] = true;
        continue;
      }
      if (Object.hasOwn(body, key)) part[key] = body[key];
      else if (ignored.has(key)) part[key] = null;
      else {
        const value = (result as Record<string, unknown>)[key];
        if (value !== undefined && value !== null) part[key] = {};
      }
    }
    return part;
  } catch {
    // A getter or a Proxy that throws: stored as before (see encodeResult).
    return undefined;
  }
}

/**
 * What of a result answered as returned (the cart) is stored: the body the engine answers, what
 * it validated and sends (the cart's JSON form when it is not plain data: review second-truth
 * SECOND-TRUTH-2); undefined, to store the result as returned, when the engine refuses it or it
 * cannot be read.
 */
function answeredBody(
  result: unknown,
  shape: (typeof RESPONSE_SHAPES)[keyof typeof RESPONSE_SHAPES],
): unknown {
  try {
    const written = shape.success(result as never);
    return "invalid" in written ? undefined : written.body;
  } catch {
    return undefined;
  }
}

/** The success body the engine answers a result with; undefined when it refuses it (a 500). */
function answerOf(result: unknown, callback: string): object | undefined {
  const written = writtenAnswer(result, callback);
  return written === undefined || "invalid" in written ? undefined : written.body;
}

/**
 * What the engine makes of a result, read as it reads it (a result that cannot be read at all is
 * read as nothing); undefined for a callback of your own, which has no response shape.
 */
function writtenAnswer(result: unknown, callback: string): WrittenResult | undefined {
  const shape = shapeOf(callback);
  if (shape === undefined) return undefined;
  try {
    return shape.success(result as never);
  } catch {
    return shape.success(undefined as never);
  }
}

/**
 * The callbacks whose earlier records legitimately lack a verdict: a payment's, redemption's or
 * refund's result carrying an `ErrorCode` without `Success: true` was answered `Success: true`
 * then (review-left D1).
 */
const VERDICTLESS_SUCCESSES: ReadonlySet<string> = new Set([
  "PerformOrderPayment",
  "RedeemGiftCard",
  "RefundGiftCard",
]);

/** Whether a stored result names a verdict of its own (`Success`, `IsSuccess`, in any case). */
function namesVerdict(result: Record<string, unknown>): boolean {
  return Object.keys(result).some((name) => /^(?:is)?success$/i.test(name));
}

/**
 * A completed record as the engine is to read it. Earlier versions stored no verdict, and a
 * payment's, redemption's or refund's result carrying an `ErrorCode` without `Success: true` was
 * answered `Success: true` then; the engine refuses it now (review-left D1). Such a record (of one
 * of those callbacks, naming no verdict of its own in any case, that the engine refuses and would
 * answer with the verdict) is read with `Success: true`, as it was answered: deleted and run
 * again, the card could be charged or debited twice. Any other record (an unreadable one too) as
 * it is: one that says `Success: false` itself (a refusal an earlier version recorded, review
 * UPGRADE-1), or of another callback, is never made a success; the engine refuses it, and it is
 * deleted and run again (`refusedRecord`).
 */
function asAnswered(text: string, callback: string): string {
  if (!VERDICTLESS_SUCCESSES.has(callback)) return text;
  try {
    const result: unknown = decode(text);
    if (!isRecord(result) || namesVerdict(result)) return text;
    const written = writtenAnswer(result, callback);
    if (written === undefined || !("invalid" in written)) return text;
    const withVerdict = { ...result, Success: true };
    const again = writtenAnswer(withVerdict, callback);
    return again !== undefined && !("invalid" in again) ? `j${JSON.stringify(withVerdict)}` : text;
  } catch {
    return text;
  }
}

function decode<TResult>(text: string): TResult {
  if (text === "u") return undefined as TResult;
  if (!text.startsWith("j")) throw new SyntaxError("not a stored result (neither u nor j…)");
  return JSON.parse(text.slice(1)) as TResult;
}

/**
 * A result read from the store, checked: one that cannot be decoded (written by something else,
 * damaged) refuses the delivery, naming the record to delete, rather than running the function
 * again (it ran) or throwing a SyntaxError that names nothing.
 */
function stored(text: string, key: string): Outcome {
  try {
    decode(text);
    return { kind: "result", text };
  } catch (error) {
    return unreadableRecord(key, error);
  }
}

/** The refusal of a record that cannot be read back, with or without `failOpen`. */
function unreadableRecord(key: string, error: unknown): Outcome {
  return {
    kind: "threw",
    error: new IdempotencyStoreError(
      `read back the unreadable idempotency record under ${key}`,
      error,
      "every delivery of this key is refused until that record is deleted or expires",
    ),
  };
}

/**
 * Whether the engine will refuse this stored result (a 500: `Success: false` returned instead of
 * thrown, a redemption's `IsValid: false`, a validation without a boolean verdict), read with the callback's own response shape
 * from the text repeats would be answered with. Unknown callbacks (a context of your own) pass.
 */
function unusable(text: string, callback: string): boolean {
  const written = writtenAnswer(decode(text), callback);
  return written !== undefined && "invalid" in written;
}

/**
 * Each store's check of its setup: answered (one warning per store at most, whatever wraps it),
 * or not asked again before `next`, after waiting `backoff` once it failed.
 */
const setupChecks = new WeakMap<object, { answered: boolean; next: number; backoff: number }>();
/** The longest wait before asking again a store whose check keeps failing (INFO refused). */
const LONGEST_SETUP_RETRY_MS = 10 * 60_000;

/**
 * Asks a store to check its own setup (the Redis store's eviction policy and append-only file),
 * where it has such a check, until it has answered once. A check that fails (the connection
 * dropped, a server refusing it) is asked again at a later delivery, after a wait doubling up to
 * ten minutes; one with no answer within `storeTimeoutMs` (a slow or restarting server) is still
 * heard when it answers, and may be asked again meanwhile. In the background, never holding the
 * request, its failure changing no delivery.
 */
function checkSetupOnce(
  store: IdempotencyStore,
  storeTimeoutMs: number,
  context: CallbackContext<unknown>,
): void {
  const check = (store as { checkSetup?: unknown }).checkSetup;
  if (typeof check !== "function") return;
  let state = setupChecks.get(store);
  if (state === undefined) {
    state = { answered: false, next: 0, backoff: storeTimeoutMs };
    setupChecks.set(store, state);
  }
  if (state.answered || monotonicNow() < state.next) return;
  const asked = state;
  asked.next = monotonicNow() + storeTimeoutMs;
  // Detached: the check may answer long after the delivery, and keeps nothing of the request.
  const report = reporterOf(context);
  Promise.resolve()
    .then(() => check.call(store) as Promise<string | undefined>)
    .then(
      (problem) => {
        if (asked.answered) return;
        asked.answered = true;
        if (typeof problem === "string") report(problem);
      },
      () => {
        asked.next = Math.max(asked.next, monotonicNow() + asked.backoff);
        asked.backoff = Math.min(asked.backoff * 2, LONGEST_SETUP_RETRY_MS);
      },
    );
}

/** A claim of a refused delivery to release: the stored key and the claim's owner, nothing of the request. */
interface PendingRelease {
  readonly key: string;
  readonly owner: string;
  /** When the lease it may hold has run out anyway (the claim's sending plus `leaseMs`, monotonic). */
  readonly until: number;
  /** Not sent again before `next`, then after `delay` (doubling) once the store answered false. */
  next: number;
  delay: number;
  readonly timeoutMs: number;
  /** Settles what was handed to the request's `waitUntil` (if any) once the claim is done with. */
  readonly done: (() => void) | undefined;
}

/** The runtime's `waitUntil` (Workers' `ctx.waitUntil`, Vercel's), as the context gives it. */
type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * The context's `waitUntil` (the fetch adapter's, from the runtime; or a context of your own's),
 * read only once something must go on after the answer: undefined where there is none (Node, Bun,
 * Deno keep the process running; a Lambda has none, see the README's "Serverless and edge").
 */
function waitUntilOf(context: object): WaitUntil | undefined {
  try {
    const waitUntil = (context as { readonly waitUntil?: unknown }).waitUntil;
    return typeof waitUntil === "function" ? (waitUntil as WaitUntil) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Hands background work to the runtime, so that a Worker keeps the request's timers and I/O
 * going until it settles (or the runtime's own limit: 30 s after the answer on Workers), at most
 * until `ms` from now: past it the work is moot (a lease ran out). Never throws, never rejects.
 */
function handOver(waitUntil: WaitUntil, work: Promise<unknown>, ms: number): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, Math.min(ms, TIMER_LIMIT_MS)));
    unref(timer);
  });
  const settled = Promise.race([work.then(noop, noop), bound]).then(() => clearTimeout(timer));
  try {
    waitUntil(settled);
  } catch {
    // A runtime refusing it (the request already over): nothing better to do.
  }
}

const noop = (): void => undefined;

/**
 * Settles once the timers due now have run: two macrotask hops, since the first may run before
 * an interval overdue after a synchronous block (Node dates a new timer from the loop's cached
 * time, which can be older than that interval's due time).
 */
function timersRan(): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(() => setTimeout(resolve, 0), 0);
  });
}
const TIMER_LIMIT_MS = 2_147_483_647;

/**
 * A delivery leading `key` in this process: the others with the same key wait for `promise`
 * instead of polling the store. It stands for the lease its run keeps, and lasts no longer:
 * `liveUntil` (on `monotonicNow`) is a lease after the run's last renewal tick (every third of a
 * lease until the run ends, also once renewals stopped because the lease ran out or was lost: a
 * live run holds its key in this process until it settles, review second-sls-1; before the run,
 * a lease after the handle was made). A run stopped without settling it (a Worker's request
 * ended mid-function: its continuation and its timers never run again) ticks no more, and past
 * `liveUntil` (checked again once the timers due have run) a repeat drops the handle and goes
 * to the store like any other instance's (review serverless-1). Past maxRunMs, the run drops it.
 */
interface Handle {
  readonly promise: Promise<Outcome>;
  readonly settle: (outcome: Outcome) => void;
  liveUntil: number;
}

function newHandle(liveUntil: number): Handle {
  let settle!: (outcome: Outcome) => void;
  const promise = new Promise<Outcome>((resolve) => {
    settle = resolve;
  });
  return { promise, settle, liveUntil };
}

/** The background releases of one store: one loop, one release in flight at a time. */
interface Releases {
  readonly pending: Map<string, PendingRelease>;
  /** A round is sending. */
  sending: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The wait before the next round while the store fails (0: it answered last time). */
  failing: number;
  /** A release past its `timeoutMs` that has not settled: none is sent while it may still answer. */
  unanswered: Flight<boolean> | undefined;
  /**
   * When the loop last moved (a round started or sent a release, on `monotonicNow`), and when its
   * timer is due: a loop that has not moved for long past either stopped (its timer and its
   * round belonged to a Worker's request that ended) and the next release starts it again.
   */
  movedAt: number;
  dueAt: number;
  /** The round sending now: one started over a stopped one supersedes it. */
  round: object | undefined;
  /**
   * The claims released by their own request's work (`releaseOwn`), counted in the bound: each
   * owner with the time its loop is over by. Counted by that time, not by the loop's `finally`,
   * which never runs where the runtime dropped the rest of the request's work (review
   * second-ssls2b-1).
   */
  own: Map<string, number>;
}

const releasesOf = new WeakMap<object, Releases>();
/**
 * The most claims waiting for a release, per store (`mostPending`). At the bound a new one is not
 * kept: its lease, if the claim landed, runs out by itself after `leaseMs` (the retry answered 503
 * until then), while those already waiting are still released. Not exported by the package: a
 * test lowers it to reach the bound in a fraction of the time.
 */
export const releaseBound = { mostPending: 10_000 };
/** The longest wait between two releases of one claim, or two rounds while the store fails. */
const LONGEST_RELEASE_RETRY_MS = 5_000;

/**
 * Releases in the background the claim of a refused delivery (failed, or timed out) that may have
 * landed, or may land later: PostgreSQL goes on with a statement whose client gave up (waiting on
 * a row lock, say), so a first release answered false is sent again, until it deletes this
 * owner's lease or `until` (the lease would have run out anyway). Owner-checked: never another
 * delivery's lease. One loop per store, one release in flight at a time, waiting from
 * `storeTimeoutMs` doubling to 5 s between the releases of a claim and, while the store fails,
 * between rounds: an outage refusing many deliveries adds claims to the set, not load.
 */
function releaseLater(
  store: IdempotencyStore,
  key: string,
  owner: string,
  until: number,
  timeoutMs: number,
  track = false,
): Promise<void> | undefined {
  let releases = releasesOf.get(store);
  if (releases === undefined) {
    releases = {
      pending: new Map(),
      sending: false,
      timer: undefined,
      failing: 0,
      unanswered: undefined,
      movedAt: 0,
      dueAt: 0,
      round: undefined,
      own: new Map(),
    };
    releasesOf.set(store, releases);
  }
  const now = monotonicNow();
  if (now >= until) return undefined;
  if (releases.pending.size + releases.own.size >= releaseBound.mostPending) {
    for (const [loop, end] of releases.own) if (end <= now) releases.own.delete(loop);
    if (releases.pending.size + releases.own.size >= releaseBound.mostPending) return undefined;
  }
  // Where the runtime drops a request's timers and I/O once it ended (a Worker), the claim is
  // released by work of this request's own, handed to its `waitUntil` (review ssls2-2): a round
  // of the shared loop, or its next timer, may belong to another request, and be dropped with it.
  // Where timers outlive the request (Node, Bun, Deno), the shared loop releases it, one release
  // in flight per store (review second-ssls2b-2); the request's `waitUntil` is handed a promise
  // settling once the claim is done with (a frozen instance would only pause the loop).
  if (track && !timersOutliveRequests()) {
    return releaseOwn(store, releases, key, owner, until, timeoutMs);
  }
  let done: (() => void) | undefined;
  const handed = track ? new Promise<void>((resolve) => (done = resolve)) : undefined;
  releases.pending.set(owner, { key, owner, until, next: now, delay: timeoutMs, timeoutMs, done });
  // A loop that stopped moving (its round or timer was a Worker request's, dropped when it
  // ended: review serverless-4) is started again, or no claim of this store would be released.
  const stopped = releases.sending
    ? now - releases.movedAt > timeoutMs + LONGEST_RELEASE_RETRY_MS
    : releases.timer !== undefined && now - releases.dueAt > LONGEST_RELEASE_RETRY_MS;
  // Sent at once unless the store is failing (the next round takes it) or a round is sending.
  if (stopped || (releases.failing === 0 && !releases.sending)) {
    clearTimeout(releases.timer);
    releases.timer = undefined;
    void releaseRound(store, releases);
  }
  return handed;
}

/**
 * Whether timers and I/O outlive the request that made them: Node, Bun and Deno (by
 * `navigator.userAgent`, or Node's `process` where it has no `navigator`), not workerd
 * (`Cloudflare-Workers`) nor other edge runtimes, which drop a request's work once it ended.
 */
function timersOutliveRequests(): boolean {
  const userAgent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  if (typeof userAgent === "string") return /^(Node\.js|Bun|Deno)\//.test(userAgent);
  const versions = (globalThis as { process?: { versions?: { node?: unknown } } }).process
    ?.versions;
  return typeof versions?.node === "string";
}

/**
 * How long past a claim's `until` a release loop may go on: its last release, sent just before,
 * awaited for `timeoutMs` (and timers firing late). What is handed to `waitUntil` is bounded by it.
 */
const releaseEnd = (until: number, timeoutMs: number): number => until + 2 * timeoutMs;

/**
 * Releases one claim by itself, from the call that found it may have landed (a Worker request's
 * context, its timers its own), as the shared loop would: until the release deletes this owner's
 * lease or `until`, one release in flight at a time (an unanswered one holds back the next, until
 * it counts as lost), waiting from `timeoutMs` doubling to 5 s after a refusal or a failure.
 * Never rejects.
 */
async function releaseOwn(
  store: IdempotencyStore,
  releases: Releases,
  key: string,
  owner: string,
  until: number,
  timeoutMs: number,
): Promise<void> {
  releases.own.set(owner, releaseEnd(until, timeoutMs));
  let released = false;
  let unanswered: Flight<boolean> | undefined;
  let delay = timeoutMs;
  try {
    while (!released && monotonicNow() < until) {
      if (!holdsBack(unanswered, LONGEST_RELEASE_RETRY_MS)) {
        const flight = fly(() => store.release(key, owner));
        let timer: ReturnType<typeof setTimeout> | undefined;
        let deleted: boolean | "late";
        try {
          deleted = await Promise.race([
            flight.promise,
            new Promise<"late">((resolve) => {
              timer = setTimeout(() => resolve("late"), timeoutMs);
              unref(timer);
            }),
          ]);
        } catch {
          deleted = "late";
        } finally {
          clearTimeout(timer);
        }
        if (deleted === true) return;
        if (deleted === "late" && flight.settled === "no") {
          unanswered = flight;
          // Answered late: this owner's lease is gone, nothing more to send for it.
          flight.promise.then(
            (late) => {
              if (late) released = true;
            },
            () => undefined,
          );
        }
      }
      const wait = Math.min(delay, until - monotonicNow());
      if (wait > 0) {
        await new Promise<void>((resolve) => {
          unref(setTimeout(resolve, wait));
        });
      }
      delay = Math.min(delay * 2, LONGEST_RELEASE_RETRY_MS);
    }
  } finally {
    releases.own.delete(owner);
  }
}

/** Takes a claim out of the releases' set (released, answered late, or its lease ran out). */
function dropRelease(releases: Releases, owner: string): void {
  releases.pending.get(owner)?.done?.();
  releases.pending.delete(owner);
}

/** Sends the releases that are due, one at a time, then waits for the next one due. */
async function releaseRound(store: IdempotencyStore, releases: Releases): Promise<void> {
  const round = {};
  releases.round = round;
  releases.sending = true;
  releases.timer = undefined;
  releases.movedAt = monotonicNow();
  try {
    // Still unanswered: not another while a client may hold it queued (until it counts as lost).
    if (holdsBack(releases.unanswered, LONGEST_RELEASE_RETRY_MS)) {
      releases.failing = Math.min(Math.max(releases.failing * 2, 1), LONGEST_RELEASE_RETRY_MS);
      return;
    }
    releases.unanswered = undefined;
    for (const entry of [...releases.pending.values()]) {
      if (releases.round !== round) return;
      const now = monotonicNow();
      if (now >= entry.until) {
        dropRelease(releases, entry.owner);
        continue;
      }
      if (entry.next > now) continue;
      releases.movedAt = now;
      const flight = fly(() => store.release(entry.key, entry.owner));
      let deleted: boolean | "late";
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        // Its own unref'd timer: a background release never keeps the process alive.
        deleted = await Promise.race([
          flight.promise,
          new Promise<"late">((resolve) => {
            timer = setTimeout(() => resolve("late"), entry.timeoutMs);
            unref(timer);
          }),
        ]);
      } catch {
        deleted = "late";
      } finally {
        clearTimeout(timer);
      }
      // Superseded meanwhile (this round was taken for stopped): the new round goes on.
      if (releases.round !== round) return;
      if (deleted === "late") {
        // The store fails (or is slow): the rest wait for the next round.
        releases.failing = Math.min(
          releases.failing === 0 ? entry.timeoutMs : releases.failing * 2,
          LONGEST_RELEASE_RETRY_MS,
        );
        if (flight.settled === "no") {
          releases.unanswered = flight;
          // Answered late: this owner's lease is gone, nothing more to send for it.
          flight.promise.then(
            (late) => (late ? dropRelease(releases, entry.owner) : undefined),
            () => undefined,
          );
        }
        return;
      }
      releases.failing = 0;
      if (deleted) dropRelease(releases, entry.owner);
      else {
        entry.next = monotonicNow() + entry.delay;
        entry.delay = Math.min(entry.delay * 2, LONGEST_RELEASE_RETRY_MS);
      }
    }
  } finally {
    if (releases.round === round) {
      releases.round = undefined;
      releases.sending = false;
      scheduleReleases(store, releases);
    }
  }
}

function scheduleReleases(store: IdempotencyStore, releases: Releases): void {
  if (releases.pending.size === 0) {
    // Nothing waits for a round: the next failed claim is sent at once (releaseLater starts a
    // round only when not failing; a backoff kept here with no timer set would never end).
    releases.failing = 0;
    return;
  }
  let at = Number.POSITIVE_INFINITY;
  if (releases.failing > 0) at = monotonicNow() + releases.failing;
  else for (const entry of releases.pending.values()) at = Math.min(at, entry.next, entry.until);
  releases.dueAt = at;
  const timer = setTimeout(
    () => void releaseRound(store, releases),
    Math.max(0, at - monotonicNow()),
  );
  unref(timer);
  releases.timer = timer;
}

/** The payload's fields naming its cart: a key quoting one is masked where printed. */
const CART_FIELDS = ["CartId", "CartToken", "MerchantCartToken", "merchantCartToken"] as const;

/**
 * The masker of the cart id or token (`CartId`, `CartToken`, `MerchantCartToken`) of the
 * delivery's payload that its key quotes, in every spelling (review privacy-2): the default key of
 * a gift-card call without an `OrderId` is `<CartToken>:<digest>`, and the shopper's checkout
 * token, a credential, must not reach a report or the default line through a reason quoting the
 * key. The key itself is unchanged (README "Upgrading and rolling deploys"). Undefined when the
 * key quotes none.
 */
function cartTokenMask(key: string, context: CallbackContext<unknown>): Redactor | undefined {
  const raw = context.rawPayload;
  if (!isRecord(raw)) return undefined;
  const quoted: string[] = [];
  for (const name of CART_FIELDS) {
    const value = Object.hasOwn(raw, name) ? raw[name] : undefined;
    const text = typeof value === "number" ? String(value) : value;
    if (typeof text !== "string") continue;
    const trimmed = text.trim();
    if (trimmed.length >= 3 && key.includes(trimmed)) quoted.push(trimmed);
  }
  return quoted.length === 0 ? undefined : createRedactor(secretSpellings(quoted));
}

/**
 * The cart-token maskers of deliveries whose context is not the engine's (a context of your own):
 * the engine's own masks the token in every report once told (`maskInRequestReports`).
 */
const keyMasks = new WeakMap<object, Redactor>();

/** Tells the handler's `onError` (through the context the engine gives) without changing the answer. */
function report(context: CallbackContext<unknown>, reason: string, error?: unknown): void {
  const reportFailure = (context as { reportFailure?: CallbackContext<unknown>["reportFailure"] })
    .reportFailure;
  const mask = keyMasks.get(context);
  const said = mask === undefined ? reason : mask(reason);
  if (typeof reportFailure === "function") reportFailure(`withIdempotency: ${said}`, error);
  else reporterOf(context)(reason, error);
}

/** Reports to the handler's `onError` after the answer went out. */
type Reporter = (reason: string, error?: unknown) => void;

/**
 * A reporter for work that outlives the delivery (lease renewals, record retries, the setup
 * check) that keeps nothing of the request: never the context, whose payload holds the card
 * number and CVV. A context of your own gives its `reportFailure` (the function alone).
 */
function reporterOf(context: CallbackContext<unknown>): Reporter {
  const told = reporterKeepingNothing(context);
  // The cart token the key quotes (review privacy-2), kept as this masker only.
  const mask = keyMasks.get(context);
  if (mask === undefined) return told;
  return (reason, error) =>
    told(mask(reason), error === undefined ? undefined : scrubError(error, mask));
}

function reporterKeepingNothing(context: CallbackContext<unknown>): Reporter {
  const detached = detachedReporter(context);
  if (detached !== undefined)
    return (reason, error) => detached(`withIdempotency: ${reason}`, error);
  const reportFailure = (context as { reportFailure?: CallbackContext<unknown>["reportFailure"] })
    .reportFailure;
  if (typeof reportFailure === "function") {
    return (reason, error) => reportFailure(`withIdempotency: ${reason}`, error);
  }
  return (reason) =>
    console.error(redactCardNumbers(`[crossborder-callbacks] withIdempotency: ${reason}`));
}

const OPTION_NAMES = optionNames<IdempotencyOptions<unknown>>({
  key: true,
  store: true,
  namespace: true,
  ttlMs: true,
  leaseMs: true,
  waitMs: true,
  storeTimeoutMs: true,
  maxRunMs: true,
  failOpen: true,
});

/** The operations `withIdempotency` calls on every store (`forget` is optional). */
const STORE_OPERATIONS = ["claim", "get", "complete", "renew", "release"] as const;

/**
 * The options' shape, checked before any delivery: a misspelt key (`idempotencyStore` would leave
 * a per-process memory store in place, and duplicates through across instances), a `key` that is
 * not a function, a `store` without a store's operations (the raw Redis client) would otherwise
 * fail every delivery, or with `failOpen` run each one without a record. `null` is the default,
 * as `undefined`.
 */
function checkOptionShapes(options: unknown): void {
  if (!isRecord(options)) throw new TypeError("withIdempotency: options must be an object");
  assertKnownKeys(options, OPTION_NAMES, "options", "withIdempotency");
  const { key, store } = options;
  if (key !== undefined && key !== null && typeof key !== "function") {
    throw new TypeError(
      "withIdempotency: key must be a function (payload, context) => string | undefined",
    );
  }
  if (options.namespace !== undefined && options.namespace !== null)
    checkNamespace(options.namespace);
  if (store === undefined || store === null) return;
  const missing = STORE_OPERATIONS.find(
    (operation) => typeof (store as Record<string, unknown>)[operation] !== "function",
  );
  if (missing !== undefined) {
    throw new TypeError(
      `withIdempotency: store must be an idempotency store (createRedisIdempotencyStore(client), createPostgresIdempotencyStore(pool), createMemoryIdempotencyStore(), or yours with ${STORE_OPERATIONS.slice(0, -1).join(", ")} and ${STORE_OPERATIONS.at(-1)}): it has no ${missing}`,
    );
  }
}

/**
 * Wraps a callback function so that a delivery and its repeats apply its side effect once, across
 * every process that shares the store:
 * - the first delivery claims the key and runs the function; a repeat after it completed gets the
 *   stored result without running it;
 * - a repeat while it runs waits for it (in this process without polling; across processes by
 *   polling the store, up to `waitMs`) and answers its result, or past `waitMs` a 503 the service
 *   retries: never a second run;
 * - a function that throws, or returns a result the engine answers 500 (`Success: false`, a
 *   redemption's `IsValid: false`, a validation without its verdict), releases the key, so the service's retry runs it again (an
 *   incomplete result, an order without its id, is answered 200 and recorded);
 * - a process that dies while running leaves a lease that expires after `leaseMs`;
 * - the store failing before the function runs refuses the delivery (or runs it, `failOpen`);
 *   failing after it succeeded never turns the answer into a failure: see the README's
 *   "Redelivery" section.
 */
export function withIdempotency<TPayload, TResult>(
  fn: CallbackFunction<TPayload, TResult>,
  options: IdempotencyOptions<TPayload> = {},
): CallbackFunction<TPayload, TResult> {
  if (typeof fn !== "function") {
    const handler = fn as unknown as { callback?: unknown; handle?: unknown } | null;
    if (
      typeof handler === "object" &&
      handler !== null &&
      typeof handler.handle === "function" &&
      typeof handler.callback === "string"
    ) {
      throw new TypeError(
        `withIdempotency: got the ${handler.callback} handler: wrap the function, then pass it to the factory (create${handler.callback}Handler(withIdempotency(fn), options))`,
      );
    }
    throw new TypeError("withIdempotency: fn must be a function");
  }
  checkOptionShapes(options);
  const store = options.store ?? createMemoryIdempotencyStore();
  const ttlMs = positiveMs(options.ttlMs ?? DAY_MS, "ttlMs");
  // ttlMs sets no timer (the store keeps the record); the others are timers' delays.
  const leaseMs = timerMs(options.leaseMs ?? 30_000, "leaseMs");
  const waitMs = options.waitMs ?? 10_000;
  if (!isTimerDelay(waitMs, true)) {
    throw new RangeError(
      `waitMs must be a whole number of milliseconds, 0 or more, ${TIMER_BOUND}`,
    );
  }
  const storeTimeoutMs = timerMs(options.storeTimeoutMs ?? 2_000, "storeTimeoutMs");
  const maxRunMs =
    options.maxRunMs === undefined ? undefined : timerMs(options.maxRunMs, "maxRunMs");
  /**
   * How long a run holds its key before `onError` is told: past `waitMs` every repeat of the
   * delivery is answered 503, and past `leaseMs` the key is held longer than a dead process
   * would hold it; a run past both looks, to the service, like one that never ends.
   */
  const longRunMs = Math.max(leaseMs, waitMs);
  const failOpen = options.failOpen === true;
  const keyOf = (options.key ?? defaultIdempotencyKey) as IdempotencyKeyFunction<TPayload>;
  /** A key of the merchant's own is checked for the delivery's card data; the default holds none. */
  const ownKey = options.key !== undefined;
  /** In front of every stored key (`null` is the default, as `undefined`: none). */
  const namespace = options.namespace ?? undefined;
  /** This process's one handle per key: a delivery running or waiting for it elsewhere. */
  const handles = new Map<string, Handle>();
  /** Results whose record could not be written yet: answered from here meanwhile. */
  const unsaved = new Map<string, string>();

  /**
   * Lets go of a handle: this process's repeats then go to the store, as another instance's do,
   * and claim the key once the lease has run out (a run past maxRunMs, a handle past its lease).
   */
  function abandon(key: string, handle: Handle): void {
    if (handles.get(key) === handle) handles.delete(key);
    handle.settle({ kind: "again" });
  }

  type Context = CallbackContext<TPayload>;

  /**
   * Renews the lease every third of it until `stop`: while the function runs, and after it, while
   * its record is being written, so that no other instance takes the key over meanwhile. A run
   * still going past `longRunMs` is told to `onError` once; past `maxRunMs`, if set, renewals
   * stop and `abandon` lets this process's repeats go to the store (checked on the renewals'
   * ticks: no timer of its own).
   */
  function keepLease(
    key: string,
    owner: string,
    tell: Reporter,
    claimedAt: number,
    handle: Handle,
  ) {
    let phase: "running" | "recording" | "stopped" = "running";
    let reported = false;
    let toldLong = false;
    let overran = false;
    let renewing: Flight<boolean> | undefined;
    const every = Math.max(1, Math.floor(leaseMs / 3));
    // The lease surely ended in the store by then (granted before its answer arrived here).
    let heldUntil = monotonicNow() + leaseMs;
    // The handle lasts while this run keeps its lease: each tick below pushes it back (see `Handle`).
    handle.liveUntil = heldUntil;
    // When the last grant was sent: the store set its expiry after that, so it runs to this plus
    // leaseMs at least, and a refusal received before then means the store lost the lease.
    let grantSentAt = claimedAt;
    // When the last renewal that failed (an error, no answer within storeTimeoutMs) was sent:
    // after the last grant, the lease may have run out unrenewed.
    let failedSentAt = Number.NEGATIVE_INFINITY;
    // Whether renewals go on: off once this run's code stopped them (no grant for a whole lease,
    // the lease refused), while the interval keeps ticking for the handle until the run ends.
    let renewals = true;
    const timer = setInterval(async () => {
      // This run is alive in this process (a Worker drops the timers of a request that ended).
      handle.liveUntil = monotonicNow() + leaseMs;
      if (phase === "running" && ranTooLong()) return;
      // Renewals stopped: the tick only tells that the run is alive, while its handle is the
      // key's (review second-sls-1: a repeat in this process waits on it, as before, until it
      // settles; only another instance may run the function once the lease ran out).
      if (!renewals) {
        if (handles.get(key) !== handle) stop();
        return;
      }
      // One renewal at a time, while it may still answer: one unanswered past storeTimeoutMs
      // (or a tick) failed, and the next is sent, or one that never settles would let the lease
      // expire while the function runs (and another instance run it again).
      if (holdsBack(renewing, Math.min(storeTimeoutMs, every))) return;
      // No renewal answered for a whole lease: the store let it expire and refuses any other;
      // sending more would only queue them in a client waiting to reconnect.
      if (monotonicNow() >= heldUntil) {
        // Said once, while the function runs (review infra-6): a lease ended silently before.
        if (phase === "running") {
          tell(
            `the lease on ${key} was not renewed for a whole leaseMs (${leaseMs} ms) while the function ran, so it has run out in the store: another delivery may run it too; keep the store reachable, or raise leaseMs`,
          );
        }
        renewals = false;
        return;
      }
      const flight = fly(() => store.renew(key, owner, leaseMs));
      renewing = flight;
      // Every grant holds the lease, also one answered after storeTimeoutMs: a busy store that
      // applies each renewal and answers late must not stop them (and let another instance run).
      flight.promise.then(
        (late) => {
          if (!late) return;
          heldUntil = Math.max(heldUntil, monotonicNow() + leaseMs);
          grantSentAt = Math.max(grantSentAt, flight.sentAt);
        },
        () => undefined,
      );
      try {
        const renewed = await within(flight.promise, storeTimeoutMs, "renew");
        if (renewed || phase === "stopped" || !renewals) return;
        // Once recording, a refused renewal may be this run's own record landing: complete tells.
        if (phase === "running") {
          tell(
            lostBefore(monotonicNow())
              ? `the store lost the lease on ${key} while the function ran, before its leaseMs ran out (${LOST_LEASE}), so another delivery may run it too`
              : `the lease on ${key} was lost while the function ran (it expired in the store, so another delivery may run it too): raise leaseMs, or keep the store reachable`,
          );
        }
        renewals = false;
      } catch (error) {
        failedSentAt = Math.max(failedSentAt, flight.sentAt);
        // While recording, the failure to write the record is reported already.
        if (phase === "running" && !reported) {
          reported = true;
          tell(`could not renew the lease on ${key}`, error);
        }
      }
    }, every);
    unref(timer);
    function stop(): void {
      phase = "stopped";
      clearInterval(timer);
    }
    /** Whether the function, still running, passed maxRunMs (renewals stop); tells past longRunMs. */
    function ranTooLong(): boolean {
      const ranMs = monotonicNow() - claimedAt;
      if (maxRunMs !== undefined && ranMs >= maxRunMs) {
        overran = true;
        stop();
        abandon(key, handle);
        tell(
          `the function ran past maxRunMs (${maxRunMs} ms) on ${key} and has not returned: its lease is no longer renewed, so once it runs out (within leaseMs, ${leaseMs} ms) the next delivery, on any instance, may run it again while this run goes on`,
        );
        return true;
      }
      // Once renewals stopped, the run was told so already (the lease not renewed, or lost).
      if (renewals && !toldLong && ranMs >= longRunMs) {
        toldLong = true;
        // Worded from the lease's state (review infra-6): a renewal failed since the last grant,
        // so the lease may have run out, and another delivery may be running the function.
        if (failedSentAt > grantSentAt) {
          tell(
            `the function has run for ${longRunMs} ms or more on ${key} and has not returned, and its lease could not be renewed since its last grant, so it may have run out: another delivery, on any instance, may run the function meanwhile; keep the store reachable, and give the calls it makes a timeout`,
          );
          return false;
        }
        tell(
          `the function has run for ${longRunMs} ms or more on ${key} and has not returned: its lease is renewed while it runs, so every delivery of this key, on every instance, is answered 503 ${DELIVERY_IN_PROGRESS} meanwhile${
            maxRunMs === undefined
              ? ", and one that never returns (a call without a timeout) holds the key until this process exits: give the calls it makes a timeout, or set maxRunMs"
              : ` until maxRunMs (${maxRunMs} ms), when renewals stop: give the calls it makes a timeout`
          }`,
        );
      }
      return false;
    }
    /**
     * Whether a refusal received at `receivedAt` came while the store still owed the lease: before
     * leaseMs passed since the last grant was sent, with no renewal failed since that grant. The
     * store applies a call at some time before its answer arrives, so only the time the refusal
     * was received bounds it (a call sent in time may land late: a slow link, a client's queue
     * while it reconnects); a failed renewal means the lease may have run out unrenewed.
     */
    function lostBefore(receivedAt: number): boolean {
      return failedSentAt <= grantSentAt && receivedAt < grantSentAt + leaseMs;
    }
    return {
      stop,
      lostBefore,
      recording(): void {
        if (phase === "running") phase = "recording";
      },
      /** Whether renewals stopped because the function ran past maxRunMs. */
      get overran(): boolean {
        return overran;
      },
    };
  }

  type Lease = ReturnType<typeof keepLease>;

  /** Completes the key with the result (awaited within `storeTimeoutMs` by the callers). */
  function record(key: string, owner: string, text: string): Flight<boolean> {
    return fly(() => store.complete(key, owner, text, ttlMs));
  }

  /**
   * A record refused: another delivery holds the key. After a run past maxRunMs, that is what it
   * allowed. Else `lost` when the refusal was received while the lease was still granted, with no
   * renewal failed since (see `lostBefore`): the store lost it, and raising leaseMs would change
   * nothing.
   */
  function reportTakenOver(key: string, tell: Reporter, lease: Lease, receivedAt: number): void {
    if (lease.overran) {
      tell(
        `${key} was claimed by another delivery after this run passed maxRunMs (${maxRunMs} ms) and its lease ran out, so the function ran twice: this run's result was answered to its own delivery, not recorded`,
      );
      return;
    }
    tell(
      lease.lostBefore(receivedAt)
        ? `${key} was claimed by another delivery although this one's lease had not run out: the store lost the lease (${LOST_LEASE}), so the function may have run twice`
        : `${key} was claimed by another delivery after this one's lease expired, so the function may have run twice: keep the store reachable (renewals and the record must reach it within leaseMs), or raise leaseMs above the function's longest run`,
    );
  }

  /**
   * A record accepted after the run passed maxRunMs. Unless its answer came while the store still
   * owed this run the lease (`lostBefore`: no other claim could have been granted before it
   * landed), the lease may have run out first, and another delivery may have claimed the key, run
   * the function and given the key up (it threw, or returned a refusal): the store then holds no
   * row, takes this record, and nothing else would tell that the function ran twice.
   */
  function reportLateRecord(
    key: string,
    tell: Reporter,
    lease: Lease,
    receivedAt: number,
  ): boolean {
    if (!lease.overran || lease.lostBefore(receivedAt)) return false;
    tell(
      `${key} was recorded after this run passed maxRunMs (${maxRunMs} ms) and its lease may have run out first: another delivery may have claimed the key meanwhile, run the function and given the key up (it threw, or returned a result the engine refuses), so the function may have run twice`,
    );
    return true;
  }

  /**
   * Writes a result the store refused, with backoff (at most a third of the lease between tries),
   * renewing the lease meanwhile, until it lands or the record would have expired. One write at a
   * time, starting with the one that failed: an unanswered write is awaited again (and its late
   * answer used), and a new one is sent once the last one failed, or went unanswered for a whole
   * lease (one that never settles must not keep the record from landing).
   */
  function completeLater(
    key: string,
    owner: string,
    text: string,
    lease: Lease,
    tell: Reporter,
    first: Flight<boolean>,
    waitUntil: WaitUntil | undefined,
  ) {
    const giveUpAt = monotonicNow() + ttlMs;
    // Handed to the runtime where it drops a request's timers once answered (review
    // serverless-2): settled when the retries end.
    let ended: (() => void) | undefined;
    if (waitUntil !== undefined) {
      handOver(
        waitUntil,
        new Promise<void>((resolve) => {
          ended = resolve;
        }),
        ttlMs,
      );
    }
    const longest = Math.min(LONGEST_RETRY_MS, Math.max(1, Math.floor(leaseMs / 3)));
    let delay = Math.min(100, longest);
    let writing = first;
    const attempt = async (): Promise<void> => {
      try {
        if (
          writing.settled === "rejected" ||
          (writing.settled === "no" && !holdsBack(writing, leaseMs))
        ) {
          writing = record(key, owner, text);
        }
        const done = await within(writing.promise, storeTimeoutMs, "complete");
        const receivedAt = monotonicNow();
        lease.stop();
        unsaved.delete(key);
        // An earlier try that landed after all is this owner's record: the store answers true
        // for it (an equal text recorded by another run is no proof: review infra-5). The
        // delivery said it could not record it: said once that it is (review ssls2-3).
        if (done) {
          if (!reportLateRecord(key, tell, lease, receivedAt)) {
            tell(
              `the result of ${key} was recorded after all (retried in the background): the earlier "could not record" needs nothing more`,
            );
          }
        } else reportTakenOver(key, tell, lease, receivedAt);
        ended?.();
        return;
      } catch {
        if (monotonicNow() + delay >= giveUpAt) {
          lease.stop();
          unsaved.delete(key);
          tell(`gave up recording the result of ${key}: the store stayed down`);
          ended?.();
          return;
        }
      }
      unref(setTimeout(attempt, delay));
      delay = Math.min(delay * 2, longest);
    };
    unref(setTimeout(attempt, delay));
  }

  /** Gives the key up so that the next delivery runs the function again. */
  async function release(key: string, owner: string, context: Context, after: string) {
    try {
      await within(store.release(key, owner), storeTimeoutMs, "release");
    } catch (releaseError) {
      report(
        context,
        `could not release ${key} after ${after}: the retry waits until the lease expires (${leaseMs} ms)`,
        releaseError,
      );
    }
  }

  /**
   * Runs the function under a claim: complete on success, release on a throw or on a result the
   * engine answers 500 (recording it would answer every redelivery that 500 for `ttlMs`).
   */
  async function run(
    key: string,
    owner: string,
    payload: TPayload,
    context: Context,
    claimedAt: number,
    handle: Handle,
  ) {
    // What outlives this delivery (the lease, a record retried) reports through `tell` alone.
    const tell = reporterOf(context as CallbackContext<unknown>);
    const lease = keepLease(key, owner, tell, claimedAt, handle);
    let result: TResult;
    try {
      result = await fn(payload, context);
    } catch (error) {
      lease.stop();
      await release(key, owner, context, "the function threw");
      return { kind: "threw", error } as const;
    }
    lease.recording();
    let text: string;
    try {
      text = encodeResult(result, context as CallbackContext<unknown>);
    } catch (error) {
      lease.stop();
      // Not something JSON can write, even as its answer (a refusal returned beside a cycle, a
      // cart holding one): the engine answers this delivery 500, so the key is released like
      // that of any result it refuses. A callback of your own (no answer to read) keeps its
      // claim until the lease ends.
      if (shapeOf(context.callback) !== undefined) {
        await release(key, owner, context, "the function returned a result that cannot be stored");
        // The engine reads it and reports it as it would without withIdempotency (an unusable
        // result naming what JSON threw), not as a throw of the function's: it returned.
        return { kind: "unwritable", result } as const;
      }
      throw error;
    }
    if (unusable(text, context.callback)) {
      lease.stop();
      await release(key, owner, context, "the function returned a result the engine refuses");
      return { kind: "unusable", text } as const;
    }
    let writing = record(key, owner, text);
    let done: boolean | undefined;
    let failure: unknown;
    try {
      done = await within(writing.promise, storeTimeoutMs, "complete");
    } catch (error) {
      failure = error;
    }
    // A write refused at once (a connection reset, a failover) is sent once more before the
    // answer, within what is left of storeTimeoutMs: the background retries do not run where the
    // process freezes at the answer (a Lambda) or drops the request's timers (a Worker without
    // `waitUntil`): review serverless-2. One that went unanswered is not: it may still land.
    if (done === undefined && writing.settled === "rejected") {
      const left = writing.sentAt + storeTimeoutMs - monotonicNow();
      if (left >= 1) {
        writing = record(key, owner, text);
        try {
          done = await within(writing.promise, left, "complete");
        } catch (error) {
          failure = error;
        }
      }
    }
    if (done !== undefined) {
      const receivedAt = monotonicNow();
      lease.stop();
      // A first write refused: another delivery claimed the key after this one's lease expired.
      if (done) reportLateRecord(key, tell, lease, receivedAt);
      else reportTakenOver(key, tell, lease, receivedAt);
    } else {
      report(
        context,
        `could not record the result of ${key}; answered with it all the same, repeats reaching this process get it from memory, and the record is retried in the background while the lease is kept`,
        failure,
      );
      unsaved.set(key, text);
      completeLater(key, owner, text, lease, tell, writing, waitUntilOf(context));
    }
    return { kind: "result", text } as const;
  }

  /**
   * Keeps a run without a lease (`failOpen`, the store down) holding its handle until it settles,
   * as `keepLease` does for a recorded run (review ssls2-1): the handle is then the only thing
   * keeping a repeat in this process from running the function a second time while this run goes
   * on, also once the store is back. An unref'd tick every third of a lease pushes `liveUntil`
   * back; a runtime that drops the run's timers (a Worker's request that ended) stops the ticks,
   * and a lease after the last one the handle stands for nothing (the same rule as a recorded
   * run's). Past `maxRunMs`, the handle is let go and `onError` told. Returns the stop.
   */
  function keepHandle(key: string, handle: Handle, tell: Reporter): () => void {
    const startedAt = monotonicNow();
    handle.liveUntil = startedAt + leaseMs;
    const timer = setInterval(
      () => {
        handle.liveUntil = monotonicNow() + leaseMs;
        if (maxRunMs !== undefined && monotonicNow() - startedAt >= maxRunMs) {
          clearInterval(timer);
          abandon(key, handle);
          tell(
            `the function ran past maxRunMs (${maxRunMs} ms) on ${key} without a record (failOpen) and has not returned: the next delivery in this process may run it again while this run goes on`,
          );
        } else if (handles.get(key) !== handle) clearInterval(timer);
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    unref(timer);
    return () => clearInterval(timer);
  }

  /** Runs the function without a record: the store is down and `failOpen` is set. */
  async function runUnrecorded(
    key: string,
    handle: Handle,
    payload: TPayload,
    context: Context,
  ): Promise<Outcome> {
    let result: TResult;
    const stop = keepHandle(key, handle, reporterOf(context as CallbackContext<unknown>));
    try {
      result = await fn(payload, context);
    } catch (error) {
      return { kind: "threw", error };
    } finally {
      stop();
    }
    try {
      return { kind: "result", text: encodeResult(result, context as CallbackContext<unknown>) };
    } catch (error) {
      // As in a recorded run: a callback's result the engine reads and reports (observe-1).
      if (shapeOf(context.callback) !== undefined) return { kind: "unwritable", result };
      return { kind: "threw", error };
    }
  }

  async function storeFailed(
    operation: string,
    key: string,
    error: unknown,
    payload: TPayload,
    context: Context,
    handle: Handle,
  ): Promise<Outcome> {
    // A record the store holds but cannot read (the Redis scripts refuse it): the function ran.
    if (isUnreadableRecordError(error)) return unreadableRecord(key, error);
    if (!failOpen) return { kind: "threw", error: new IdempotencyStoreError(operation, error) };
    report(
      context,
      `the store failed to ${operation} ${key}; the function runs without a record (failOpen)`,
      error,
    );
    return runUnrecorded(key, handle, payload, context);
  }

  /** Waits for another process's run of `key`: its result, `again` when it left, `busy` past the deadline. */
  async function poll(key: string, deadline: number, context: Context): Promise<Outcome | "free"> {
    let delay = FIRST_POLL_MS;
    for (;;) {
      const remaining = deadline - monotonicNow();
      if (remaining <= 0 || context.signal?.aborted) return { kind: "busy" };
      await sleep(Math.min(remaining, delay * (0.75 + Math.random() / 2)));
      delay = Math.min(delay * 1.5, LONGEST_POLL_MS);
      const record = await within(store.get(key), storeTimeoutMs, "read");
      if (record === undefined) return "free";
      // A record the engine now refuses: the claim that follows deletes it (see `lead`).
      if (record.state === "completed") {
        const text = asAnswered(record.result, context.callback);
        return refusedRecord(text, context) ? "free" : stored(text, key);
      }
    }
  }

  /** Whether a completed record holds a result the engine refuses now (an earlier version wrote it). */
  function refusedRecord(text: string, context: Context): boolean {
    if (typeof (store as Partial<ForgettingIdempotencyStore>).forget !== "function") return false;
    try {
      return unusable(text, context.callback);
    } catch {
      // Unreadable: `stored` refuses it by name.
      return false;
    }
  }

  /**
   * Deletes a completed record holding a result the engine refuses now: written by an earlier
   * version, which recorded it (a redemption's `IsValid: false`). Answered from, it would be a 500
   * to every redelivery until it expires, the function never run again; it refused, so nothing was
   * done, and the delivery runs it. True when this delivery deleted it (and said so), or another
   * did meanwhile (its claim then answers what is there now). Throws when the store fails to
   * delete it (an error, or past `storeTimeoutMs`): a store failure like any other (`storeFailed`).
   */
  async function forgetRefused(key: string, text: string, context: Context): Promise<boolean> {
    const forget = (store as Partial<ForgettingIdempotencyStore>).forget;
    if (typeof forget !== "function") return false;
    const forgotten = await within(
      Promise.resolve().then(() => forget.call(store, key, text)),
      storeTimeoutMs,
      "delete",
    );
    if (forgotten) {
      report(
        context,
        `the record of ${key} was written by an earlier version with a result answered 500 now (a refusal returned, recorded then): deleted, and this delivery runs the function again, as after any refusal`,
      );
    }
    return true;
  }

  /** This delivery holds the process's handle on the key: claim, then run or wait. */
  async function lead(
    key: string,
    payload: TPayload,
    context: Context,
    deadline: number,
    handle: Handle,
  ): Promise<Outcome> {
    let forgotOnce = false;
    for (;;) {
      const owner = crypto.randomUUID();
      let claim: Awaited<ReturnType<IdempotencyStore["claim"]>>;
      const claiming = fly(() => store.claim(key, owner, leaseMs));
      try {
        claim = await within(claiming.promise, storeTimeoutMs, "claim");
      } catch (error) {
        // A claim that timed out may still land (a client queues it while disconnected), and one
        // that failed may have landed (the connection dropped after the server applied it,
        // before its reply), or land later (PostgreSQL goes on with a statement whose client
        // gave up): what it won is released, or the service's retry would wait for a lease
        // nobody holds. The release is owner-checked, sent until it deletes this owner's lease
        // or the lease ran out. Not after an unreadable record: nothing was claimed.
        // Where the runtime drops a request's I/O and timers once it is answered (a Worker), the
        // late reply and the releases are handed to its `waitUntil` (review serverless-4).
        const waitUntil = waitUntilOf(context);
        const track = waitUntil !== undefined;
        const until = claiming.sentAt + leaseMs;
        let after: Promise<unknown> | undefined;
        if (claiming.settled === "no") {
          after = claiming.promise.then(
            (late) =>
              late.claimed
                ? releaseLater(store, key, owner, until, storeTimeoutMs, track)
                : undefined,
            (late) =>
              isUnreadableRecordError(late)
                ? undefined
                : releaseLater(store, key, owner, until, storeTimeoutMs, track),
          );
        } else if (!isUnreadableRecordError(error)) {
          after = releaseLater(store, key, owner, until, storeTimeoutMs, track);
        }
        if (waitUntil !== undefined && after !== undefined) {
          // Past `until` too: the loop's last release, sent just before, is still answered.
          handOver(waitUntil, after, releaseEnd(until, storeTimeoutMs) - monotonicNow());
        }
        return storeFailed("claim", key, error, payload, context, handle);
      }
      if (claim.claimed) return run(key, owner, payload, context, claiming.sentAt, handle);
      if (claim.record.state === "completed") {
        const text = asAnswered(claim.record.result, context.callback);
        // Once per delivery: a store whose `forget` keeps answering false must not loop here.
        if (refusedRecord(text, context)) {
          if (forgotOnce) {
            // The store's forget answered false, yet the same record is still there.
            report(
              context,
              `the record of ${key}, written by an earlier version with a result answered 500 now, could not be deleted (the store's forget answered false and the record remains): answered 500 until it is deleted or expires`,
            );
            return stored(text, key);
          }
          forgotOnce = true;
          try {
            if (await forgetRefused(key, text, context)) continue;
          } catch (error) {
            // Safe to run unrecorded with failOpen: the record is a refusal, nothing was done.
            return storeFailed("delete", key, error, payload, context, handle);
          }
        }
        return stored(text, key);
      }
      let waited: Outcome | "free";
      try {
        waited = await poll(key, deadline, context);
      } catch (error) {
        return storeFailed("read", key, error, payload, context, handle);
      }
      if (waited !== "free") return waited;
    }
  }

  return async (payload, context) => {
    const derived = await keyOf(payload, context);
    if (derived === undefined) return fn(payload, context);
    if (typeof derived !== "string" || derived === "") {
      throw new TypeError("withIdempotency: key must return a non-empty string, or undefined");
    }
    if (ownKey) refuseKeyQuotingCards(derived, context as CallbackContext<unknown>);
    // A key quoting the payload's cart token (the default key of a gift-card call without an
    // OrderId) is stored as it is, and printed with the token masked (review privacy-2).
    const cartMask = cartTokenMask(derived, context as CallbackContext<unknown>);
    if (cartMask !== undefined) {
      keyMasks.set(context, cartMask);
      maskInRequestReports(context, cartMask);
    }
    const key = await storedKey(context.callback, derived, namespace);
    // In the background: a server that refuses the check (INFO disabled) changes no delivery.
    // Not a closure over the context: one would keep it (its card data) in this scope's closures.
    checkSetupOnce(store, storeTimeoutMs, context as CallbackContext<unknown>);
    const deadline = monotonicNow() + waitMs;
    for (;;) {
      const saved = unsaved.get(key);
      if (saved !== undefined) return decode<TResult>(saved);
      const handle = handles.get(key);
      if (handle) {
        // A handle whose run has not ticked for a whole leaseMs stands for nothing: the run
        // stopped without settling it (a Worker's request ended, and with it the run's timers).
        // Its lease has run out in the store too: this delivery goes to the store (claim, or
        // poll), as another instance's does.
        if (monotonicNow() >= handle.liveUntil) {
          // Unless a synchronous block in this process held back the run's ticks as well: they
          // are overdue then, and run once the timers do (review second-sls-1).
          await timersRan();
          if (handles.get(key) === handle && monotonicNow() >= handle.liveUntil) {
            abandon(key, handle);
          }
          continue;
        }
        // The same key is already running or awaited in this process: wait for it, no polling,
        // at most until its lease would have run out unrenewed (then looked at again).
        const outcome = await until(handle.promise, Math.min(deadline, handle.liveUntil));
        if (outcome === undefined) {
          if (monotonicNow() < deadline) continue;
          throw inProgress();
        }
        if (outcome.kind === "busy") throw inProgress();
        if (outcome.kind === "result") return decode<TResult>(outcome.text);
        if (monotonicNow() >= deadline) throw inProgress();
        continue;
      }
      const mine = newHandle(monotonicNow() + leaseMs);
      handles.set(key, mine);
      let outcome: Outcome = { kind: "again" };
      try {
        outcome = await lead(key, payload, context, deadline, mine);
      } finally {
        if (handles.get(key) === mine) handles.delete(key);
        // Waiters share a result; after a throw, an unusable result or a store failure each
        // tries on its own.
        mine.settle(
          outcome.kind === "result" || outcome.kind === "busy" ? outcome : { kind: "again" },
        );
      }
      switch (outcome.kind) {
        case "result":
        case "unusable":
          return decode<TResult>(outcome.text);
        case "unwritable":
          return outcome.result as TResult;
        case "busy":
          throw inProgress();
        case "threw":
          throw outcome.error;
        case "again":
          continue;
      }
    }
  };
}
