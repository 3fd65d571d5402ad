/**
 * Telling the merchant's `onError` hook about failures, without ever handing it card data: every
 * text is scrubbed of card numbers, and of this request's own card number and CVV.
 */
import { redactCardNumbers } from "./card.js";
import type { CallbackFailure, OnError } from "./errors.js";

export type Redactor = (text: string) => string;

/** Masks Luhn-valid card numbers; the redactor of a request without card data. */
export const redactCards: Redactor = redactCardNumbers;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A redactor that also masks this request's own card number and CVV where a text quotes them
 * literally (a CVV is three or four digits: only the request knows which ones are card data).
 * Built only on a failure path, never on the way to a success.
 */
export function requestRedactor(
  paymentDetails: unknown,
  /** Further values of this request never to be quoted (a shopper's session token). */
  otherSecrets: readonly unknown[] = [],
): Redactor {
  const { CardNumber, CVVNumber } =
    paymentDetails !== null && typeof paymentDetails === "object"
      ? (paymentDetails as Record<string, unknown>)
      : {};
  const secrets = [CardNumber, CVVNumber, ...otherSecrets].filter(
    (value): value is string => typeof value === "string" && value.trim().length >= 3,
  );
  if (secrets.length === 0) return redactCards;
  // Not inside a longer run of digits: "737" is masked in "cvv 737", not in "order 17371".
  const pattern = new RegExp(
    secrets.map((secret) => `(?<!\\d)${escapeRegExp(secret.trim())}(?!\\d)`).join("|"),
    "g",
  );
  return (text) => redactCardNumbers(text).replace(pattern, "***");
}

/**
 * What `onError` receives in place of an exception: its name, message and stack, scrubbed, and
 * nothing else. An exception may carry the request it failed on (a payment provider's error
 * with the posted card data, a `cause` chain); none of that is passed on.
 */
export function sanitizeError(error: unknown, redact: Redactor): Error {
  const source = error instanceof Error ? error : undefined;
  const sanitized = new Error(redact(source ? source.message : String(error)));
  sanitized.name = source?.name ?? "NonError";
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string")
    Object.defineProperty(sanitized, "code", { value: redact(code), enumerable: true });
  sanitized.stack = source?.stack === undefined ? undefined : redact(source.stack);
  return sanitized;
}

/** One line on `console.error` per failure (`console.warn` per warning), card numbers masked. */
export const defaultOnError: OnError = (failure) => {
  const where = failure.callback ?? "-";
  const warning = failure.severity === "warning";
  let line = `[crossborder-callbacks] ${where} ${failure.status} ${warning ? "warning " : ""}${failure.kind}: ${failure.reason}`;
  if (failure.kind === "internal_error" && failure.error instanceof Error) {
    line += ` (${failure.error.name}: ${failure.error.message})`;
  }
  if (warning) console.warn(redactCardNumbers(line));
  else console.error(redactCardNumbers(line));
};

/** Calls the hook; neither its exception nor its rejected promise can change the answer. */
export function safeNotify(onError: OnError, failure: CallbackFailure): void {
  try {
    const result: unknown = onError(failure);
    if (result instanceof Promise) result.catch(() => undefined);
  } catch {
    // A failing hook must never turn into a failed answer.
  }
}
