/** The retry policy's arithmetic: backoff with full jitter, Retry-After, an abortable sleep. */

import { whenAborted } from "./abort.js";

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retries off). */
  readonly maxAttempts?: number | undefined;
  /** The backoff before the first retry is drawn from 0..baseDelayMs (default 200). */
  readonly baseDelayMs?: number | undefined;
  /** The cap of the exponential backoff (default 5000). */
  readonly maxDelayMs?: number | undefined;
}

export interface ResolvedRetry {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: ResolvedRetry = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5000 };

export function resolveRetry(options: RetryOptions | false | undefined): ResolvedRetry {
  if (options === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  // An option given as undefined keeps its default.
  const resolved = {
    maxAttempts: options?.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
    baseDelayMs: options?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: options?.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isFinite(value) || value < 0) {
      throw new TypeError(`retries.${name} must be a non-negative number`);
    }
  }
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    throw new TypeError("retries.maxAttempts must be a whole number of at least 1");
  }
  return resolved;
}

/** Full jitter: a random delay between 0 and the capped exponential step of this retry. */
export function backoffDelay(retry: ResolvedRetry, retryNumber: number, random = Math.random) {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (retryNumber - 1));
  return Math.floor(random() * ceiling);
}

/**
 * `Retry-After` in milliseconds: delta-seconds or an HTTP date; undefined when unusable. A date is
 * a time on the service's clock. It is read against `now` (this machine's clock, epoch
 * milliseconds, finer than the header's whole seconds) when the answer has no valid `Date` header
 * (`date`) or one that falls within the attempt: from a second before it was sent (the header's
 * truncation) to `now`, the attempt having taken `attemptMs` so far (measured on a monotonic
 * clock, so a step of this machine's clock during the attempt does not widen it). Such a header
 * says the clocks agree to within the exchange, and measuring from it would add the answer's
 * transit to the wait. Only a header outside that window (clocks that plainly disagree, or this
 * one stepped) is the reference itself: a skew of seconds neither cancels nor stretches the wait.
 */
export function parseRetryAfter(
  value: string | null,
  now: number,
  date?: string | null,
  attemptMs = 0,
): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = httpDate(trimmed, now);
  if (at === undefined) return undefined;
  const sent = date === null || date === undefined ? undefined : httpDate(date.trim(), now);
  const withinAttempt =
    sent !== undefined && sent >= now - Math.max(0, attemptMs) - 1000 && sent <= now;
  const from = sent === undefined || withinAttempt ? now : sent;
  return Math.max(0, at - from);
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = new RegExp(
  `^(?:mon|tue|wed|thu|fri|sat|sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`,
  "i",
);
/** The obsolete rfc850-date: `Sunday, 06-Nov-94 08:49:37 GMT`. */
const RFC850_DATE = new RegExp(
  `^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
  "i",
);
/** The obsolete asctime-date: `Sun Nov  6 08:49:37 1994` (GMT). */
const ASCTIME_DATE = new RegExp(
  `^(?:mon|tue|wed|thu|fri|sat|sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`,
  "i",
);

/** An HTTP-date's fields as [day, month, year, hour, minute, second], whichever its form. */
function dateFields(text: string, now: number): string[] | undefined {
  const fixdate = IMF_FIXDATE.exec(text);
  if (fixdate !== null) return fixdate.slice(1);
  const rfc850 = RFC850_DATE.exec(text);
  if (rfc850 !== null) {
    // A two-digit year more than 50 years ahead is the latest past year with those digits.
    const thisYear = new Date(now).getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(rfc850[3]);
    if (year > thisYear + 50) year -= 100;
    return [...rfc850.slice(1, 3), String(year), ...rfc850.slice(4)];
  }
  const asctime = ASCTIME_DATE.exec(text);
  if (asctime === null) return undefined;
  const [, month, day, hour, minute, second, year] = asctime;
  return [day, month, year, hour, minute, second].map((field) => String(field).trim());
}

/**
 * An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, or one of the two obsolete forms a recipient must
 * also accept) in epoch milliseconds; undefined for any other text. `Date.parse` is not used: it
 * reads nearly anything ("Retry in 5" is a date in 2001), and an asctime-date as local time.
 */
function httpDate(text: string, now: number): number | undefined {
  const fields = dateFields(text, now);
  if (fields === undefined) return undefined;
  const [day = 0, year = 0, hour = 0, minute = 0, second = 0] = [0, 2, 3, 4, 5].map((i) =>
    Number(fields[i]),
  );
  const month = MONTHS.indexOf(String(fields[1]).toLowerCase());
  // setUTCFullYear, not Date.UTC, which reads the years 0-99 as 1900-1999.
  const midnight = new Date(0).setUTCFullYear(year, month, day);
  // A day past the month's end (31 Apr) is not a date; a second of 60 is a leap second.
  if (new Date(midnight).getUTCDate() !== day) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  return midnight + ((hour * 60 + minute) * 60 + second) * 1000;
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      stop?.();
      resolve();
    }, ms);
    const stop =
      signal &&
      whenAborted(signal, () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
  });
}
