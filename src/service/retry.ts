/** The retry policy's arithmetic: backoff with full jitter, Retry-After, an abortable sleep. */

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

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; undefined when unusable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month; a bare number that is not delta-seconds is nothing.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
