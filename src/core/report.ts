/**
 * Telling the merchant's `onError` hook about failures, without ever handing it card data: every
 * text goes through the request's redactor (card numbers, and this request's own card number and
 * CVV), and an exception is replaced by a scrubbed copy. Nothing here may throw, whatever the
 * merchant threw: a string, a Proxy whose traps throw, an object whose `toString` throws.
 */
import type { CallbackFailure, OnError } from "./errors.js";
import { type Redactor, redactCards, textOf } from "./redact.js";
import { escapeControls } from "./text.js";

export { createRedactor, type Redactor, redactCards, textOf } from "./redact.js";

/** `value[key]`, or undefined when reading it throws (a getter, a Proxy trap). */
export function readSafely(value: unknown, key: string): unknown {
  if (value === null || (typeof value !== "object" && typeof value !== "function"))
    return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** Whether `test()` holds; false when asking throws (a Proxy's `getPrototypeOf` trap). */
export function holdsSafely(test: () => boolean): boolean {
  try {
    return test();
  } catch {
    return false;
  }
}

/**
 * What `onError` receives in place of an exception: its name, message, stack and string `code`,
 * each through the redactor, and nothing else. An exception may carry the request it failed on
 * (a payment provider's error with the posted card data, a `cause` chain); none of that is passed
 * on. Anything that is not an `Error` becomes one named `NonError` with its text as the message.
 */
export function scrubError(error: unknown, redact: Redactor): Error {
  const isError = holdsSafely(() => error instanceof Error);
  let message = isError ? (readSafely(error, "message") ?? "") : error;
  if (message === "") message = unsaidMessage(error);
  const copy = new Error(redact(message));
  const name = isError ? readSafely(error, "name") : undefined;
  copy.name = isError ? redact(name ?? "Error") : "NonError";
  const code = readSafely(error, "code");
  if (typeof code === "string")
    Object.defineProperty(copy, "code", { value: redact(code), enumerable: true });
  const stack = isError ? readSafely(error, "stack") : undefined;
  // No stack of this copy's own (it would show the library's frames) when the error had none.
  (copy as { stack?: string | undefined }).stack =
    typeof stack === "string" ? redact(stack) : undefined;
  return copy;
}

/** The inner errors an empty message is told by, at most. */
const MAX_INNER_ERRORS = 3;

/**
 * What an error with an empty message says otherwise: its string `code` and, for an
 * `AggregateError`, its inner errors' messages (Node's connect to a host with an IPv6 and an IPv4
 * address fails so: `AggregateError` with no message, `code` `ECONNREFUSED`, one inner error per
 * address). Empty when it says nothing. Every read is guarded; the caller redacts the text.
 */
export function unsaidMessage(error: unknown): string {
  const code = readSafely(error, "code");
  const inner: string[] = [];
  try {
    const errors = readSafely(error, "errors");
    if (Array.isArray(errors)) {
      for (const item of errors.slice(0, MAX_INNER_ERRORS)) {
        const text = readSafely(item, "message");
        if (typeof text === "string" && text !== "") inner.push(text);
      }
    }
  } catch {
    // A Proxy's trap: the code alone, if any.
  }
  const said = inner.length === 0 ? "" : inner.join("; ");
  if (typeof code !== "string" || code === "") return said;
  return said === "" ? code : `${code} (${said})`;
}

/**
 * An error as one text, `name: message` (the message told by `unsaidMessage` when empty), every
 * read guarded; anything else as its text. Not redacted: the caller does.
 */
export function describeError(error: unknown): string {
  if (!holdsSafely(() => error instanceof Error)) return textOf(error);
  const message = readSafely(error, "message");
  const text = typeof message === "string" && message !== "" ? message : unsaidMessage(error);
  return `${textOf(readSafely(error, "name") ?? "Error")}: ${text}`;
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
    if ("error" in failure) {
      const error =
        failure.error === undefined && !thrown ? undefined : scrubError(failure.error, redact);
      told = { ...told, error };
    }
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
 * scrubbed. A message's line breaks and other controls are escaped (`\n`) after the card numbers
 * are masked: an escape's digits (`\x01`) glued to a card number would make it a longer number,
 * which is not masked.
 */
export const defaultOnError: OnError = (failure) => {
  const where = failure.callback ?? "-";
  const warning = failure.severity === "warning";
  let line = `[crossborder-callbacks] ${where} ${failure.status} ${warning ? "warning " : ""}${failure.kind}: ${failure.reason}`;
  const shown = failure.kind === "internal_error" || failure.kind === "client_closed";
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
