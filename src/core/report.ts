/**
 * Telling the merchant's `onError` hook about failures, without ever handing it card data: every
 * text goes through the request's redactor (card numbers, and this request's own card number and
 * CVV), and an exception is replaced by a scrubbed copy. Nothing here may throw, whatever the
 * merchant threw: a string, a Proxy whose traps throw, an object whose `toString` throws.
 */
import { IdempotencyStoreError } from "../idempotency/store.js";
import { holdsSafely, readSafely, unsaidMessage } from "./describe.js";
import {
  AuthenticationError,
  CallbackError,
  type CallbackFailure,
  FAILURE_STATUS,
  isAnswerableStatus,
  isCallbackError,
  type OnError,
} from "./errors.js";
import { type Redactor, redactCards } from "./redact.js";
import { escapeControls } from "./text.js";

export { describeError, holdsSafely, readSafely, unsaidMessage } from "./describe.js";
export { createRedactor, type Redactor, redactCards, textOf } from "./redact.js";

/**
 * What `onError` receives in place of an exception: its name, message, stack and string `code`,
 * each through the redactor and each an enumerable own property (so a JSON logger writes them),
 * and nothing else. An exception may carry the request it failed on
 * (a payment provider's error with the posted card data, a `cause` chain); none of that is passed
 * on. Anything that is not an `Error` becomes one named `NonError` with its text as the message.
 * The library's own errors are copied as their class, with their fields (see `libraryCopy`).
 */
export function scrubError(error: unknown, redact: Redactor): Error {
  const isError = holdsSafely(() => error instanceof Error);
  let message = isError ? (readSafely(error, "message") ?? "") : error;
  if (message === "") message = unsaidMessage(error);
  const copy =
    (isError && libraryCopy(error, redact(message), redact)) || new Error(redact(message));
  const name = isError ? readSafely(error, "name") : undefined;
  copy.name = isError ? redact(name ?? "Error") : "NonError";
  const code = readSafely(error, "code");
  if (typeof code === "string")
    Object.defineProperty(copy, "code", { value: redact(code), enumerable: true });
  const stack = isError ? readSafely(error, "stack") : undefined;
  // No stack of this copy's own (it would show the library's frames) when the error had none.
  // The message and the stack are enumerable, as the name and the fields are: a JSON logger
  // (pino's `logger.error(failure)`, winston's json format, `JSON.stringify`) writes an error by
  // its enumerable own properties, and would otherwise write `{"name":…}` alone. Node's `inspect`
  // shows neither twice. Both are already scrubbed.
  enumerableText(copy, "message", copy.message);
  // Without one, no own `stack` at all: an undefined enumerable one is printed by console.log as
  // `{ stack: undefined }` (review second-obs-4).
  if (typeof stack === "string") enumerableText(copy, "stack", redact(stack));
  else delete copy.stack;
  return copy;
}

/** Sets an own data property that `JSON.stringify` and `Object.keys` see. */
function enumerableText(target: Error, key: string, value: string): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * A copy of one of the library's errors that reach `onError` as an instance of its class (so that
 * `instanceof` works, as the README promises) with its documented fields, read one by one (a
 * getter may throw) and each text through the redactor: a `CallbackError`'s `code`, `description`
 * and `status`, an `AuthenticationError`'s `kind`, an `IdempotencyStoreError`'s `operation`. No
 * `cause`. Undefined for any other error, or when the copy cannot be made.
 */
function libraryCopy(error: unknown, message: string, redact: Redactor): Error | undefined {
  try {
    if (holdsSafely(() => isCallbackError(error))) {
      const status = readSafely(error, "status");
      const description = readSafely(error, "description");
      return new CallbackError(
        redact(readSafely(error, "code")),
        message,
        description === undefined || description === null ? undefined : redact(description),
        { status: isAnswerableStatus(status) ? status : FAILURE_STATUS.handler_failure },
      );
    }
    if (holdsSafely(() => error instanceof AuthenticationError)) {
      const tooLarge = readSafely(error, "kind") === "header_too_large";
      return new AuthenticationError(message, tooLarge ? "header_too_large" : "unauthorized");
    }
    if (holdsSafely(() => error instanceof IdempotencyStoreError)) {
      const copy = new IdempotencyStoreError(redact(readSafely(error, "operation")), undefined);
      copy.message = message;
      return copy;
    }
  } catch {
    // A copy that cannot be made is a plain Error, as any other.
  }
  return undefined;
}

/**
 * On a report whose `orderId` is a cart token (GetCheckoutCartInfo's `merchantCartToken`, a gift
 * card's `MerchantCartToken`), not enumerable: `defaultOnError` does not print it, as the same token
 * may be another callback's credential (`createAuth`'s `cartToken`; review second-idem-1). This
 * module's own `Symbol()`: only this copy's `notify` and `defaultOnError` read it (review dual-1).
 */
const ORDER_ID_IS_TOKEN = Symbol("crossborder-callbacks.orderIdIsToken");

/** The report, marked as naming a cart token in `orderId` (see `ORDER_ID_IS_TOKEN`). */
export function markTokenOrderId<T extends CallbackFailure>(report: T): T {
  Object.defineProperty(report, ORDER_ID_IS_TOKEN, { value: true });
  return report;
}

function namesToken(failure: CallbackFailure): boolean {
  return (failure as { readonly [ORDER_ID_IS_TOKEN]?: unknown })[ORDER_ID_IS_TOKEN] === true;
}

/**
 * Tells `onError` of a failure: the reason and the error's copy go through `redact` here, so no
 * caller can forget it. Neither the hook's exception nor its rejected promise changes the answer.
 */
export function notify(
  onError: OnError,
  failure: CallbackFailure,
  redact: Redactor,
  /** The error is something thrown, `undefined` included (then a `NonError` too). */
  thrown = false,
): void {
  let told: CallbackFailure;
  try {
    told = {
      kind: failure.kind,
      status: failure.status,
      callback: failure.callback,
      reason: redact(failure.reason),
    };
    if (failure.severity !== undefined) told = { ...told, severity: failure.severity };
    // The service's id of the order (or cart), as the payload sent it but for card data: the
    // engine masked this request's card number in it, and a Luhn-valid run is masked as in the
    // reason (security.md #27; review second-obs).
    if (typeof failure.orderId === "string") {
      told = { ...told, orderId: redactCards(failure.orderId) };
    }
    if ("error" in failure) {
      const error =
        failure.error === undefined && !thrown ? undefined : scrubError(failure.error, redact);
      told = { ...told, error };
    }
    if (told.orderId !== undefined && namesToken(failure)) markTokenOrderId(told);
  } catch {
    return;
  }
  try {
    const result: unknown = onError(told);
    // Any thenable, a promise of another realm (a `vm` context, a sandbox) included.
    if (typeof readSafely(result, "then") === "function") {
      Promise.resolve(result).catch(() => undefined);
    }
  } catch {
    // A failing hook must never turn into a failed answer.
  }
}

/** The longest order id the default line shows; a longer one is cut, so the status stays in. */
const MAX_ORDER_ID = 100;

/**
 * An order id for the default line: masked first (a card number cut short would no longer read as
 * one), then cut to `MAX_ORDER_ID` characters, never inside a run of digits, with `…` (found by
 * the fuzzer: an id of thousands of characters pushed the status, kind and reason past the line's
 * cut).
 */
function shownOrderId(orderId: string): string {
  const masked = redactCards(orderId);
  if (masked.length <= MAX_ORDER_ID) return masked;
  let end = MAX_ORDER_ID;
  while (end > 0 && /[0-9]/.test(masked.charAt(end - 1))) end--;
  return `${masked.slice(0, end)}…`;
}

/** The longest default console line; a longer one is cut (never inside a run of digits). */
const MAX_LINE = 8 * 1024;

/** The line cut to `MAX_LINE` characters, if longer. */
function cutLine(line: string): string {
  if (line.length <= MAX_LINE) return line;
  // Cutting inside a run of digits could leave a shorter run that reads as a card or a CVV.
  let end = MAX_LINE;
  while (end > 0 && /[0-9]/.test(line.charAt(end - 1))) end--;
  return `${line.slice(0, end)}…[cut]`;
}

/**
 * One line on `console.error` per failure (`console.warn` per warning), of texts `notify` already
 * scrubbed: the reason, then the error's name and message for a 500, a 499 and a warning. A message's line breaks and other controls are escaped (`\n`) after the card numbers
 * are masked: an escape's digits (`\x01`) glued to a card number would make it a longer number,
 * which is not masked.
 */
export const defaultOnError: OnError = (failure) => {
  // The order too (already masked like the reason), so that two orders' or two shops' failures
  // are told apart (review tenancy-2).
  // Never a cart token: it may be another callback's credential (review second-idem-1).
  const order =
    typeof failure.orderId === "string" && !namesToken(failure)
      ? ` order ${shownOrderId(failure.orderId)}`
      : "";
  const where = `${failure.callback ?? "-"}${order}`;
  const warning = failure.severity === "warning";
  let line = `[crossborder-callbacks] ${where} ${failure.status} ${warning ? "warning " : ""}${failure.kind}: ${failure.reason}`;
  // The error says why (a store's ECONNREFUSED, what a result's getter threw), for a warning too
  // (review observe-2); a refusal's reason already quotes its message.
  const shown = warning || failure.kind === "internal_error" || failure.kind === "client_closed";
  if (shown && failure.error instanceof Error) {
    line += ` (${failure.error.name}: ${failure.error.message})`;
  }
  // Cut once, after escaping (which may lengthen the line): a second cut would cut into the
  // first one's marker. Escaping never shortens the line, so nothing past MAX_LINE characters is
  // printed: a giant message is bounded first (without a marker) so the masking reads less.
  const bounded = line.length > 2 * MAX_LINE ? line.slice(0, 2 * MAX_LINE) : line;
  line = cutLine(escapeControls(redactCards(bounded)));
  if (warning) console.warn(line);
  else console.error(line);
};
