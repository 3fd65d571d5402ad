/**
 * Reading what was thrown without ever throwing: a getter, a Proxy trap or a `toString` may throw.
 * Used by the failure reports and by the errors that quote a store's or a service's error.
 */
import { textOf } from "./redact.js";

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
