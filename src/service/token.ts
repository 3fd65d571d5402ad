/**
 * The token provider of 5.2: one token shared by every call until shortly before it expires, one
 * refresh at a time (single flight), nothing remembered from a failed refresh, and an optional
 * shared cache so that several server instances use one token.
 */

import { monotonicNow } from "../core/timers.js";
import { whenAborted } from "./abort.js";

/** What a token cache holds. */
export interface CachedToken {
  readonly token: string;
  /** When the client stops using it (epoch milliseconds): expiry minus the refresh margin. */
  readonly expiresAt: number;
}

/**
 * A cache several instances share (Redis, Memcached, a KV store). `get` and `set` may be async;
 * `set`'s TTL is how long the entry stays useful. A failing cache, or an entry that is not a
 * `CachedToken`, is treated as empty.
 */
export interface TokenCache {
  get(key: string): Promise<CachedToken | null | undefined> | CachedToken | null | undefined;
  set(key: string, value: CachedToken, ttlMs: number): Promise<void> | void;
  delete?(key: string): Promise<void> | void;
}

/** A token cache in this process's memory (the default cache is a private field of the provider). */
export function memoryTokenCache(now: () => number = Date.now): TokenCache {
  const entries = new Map<string, { value: CachedToken; until: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined || entry.until <= now()) return undefined;
      return entry.value;
    },
    set(key, value, ttlMs) {
      entries.set(key, { value, until: now() + ttlMs });
    },
    delete(key) {
      entries.delete(key);
    },
  };
}

export interface IssuedToken {
  readonly token: string;
  readonly ttlMinutes: number | undefined;
}

export interface TokenProviderOptions {
  /** Asks the service for a token (GetAuthenticationToken); rejects with a typed error. */
  readonly issue: () => Promise<IssuedToken>;
  readonly cache?: TokenCache | undefined;
  readonly cacheKey: string;
  /** Refresh this long before expiry (default 60 000), at most half the token's lifetime. */
  readonly marginMs?: number | undefined;
  readonly now?: (() => number) | undefined;
  /** Told about every token the provider hands out (for redaction). */
  readonly onToken?: ((token: string) => void) | undefined;
  /**
   * How long a refresh may be pending before it counts as lost (default: no bound): the longest
   * it can take when it runs (the token call's deadline and the cache's calls), so one still
   * pending past it will never settle, as where the request that started it ended and took its
   * I/O and timers along (a Worker: review serverless-3). The next `get` starts another.
   */
  readonly refreshLostAfterMs?: number | undefined;
}

export const DEFAULT_TOKEN_TTL_MINUTES = 15;
export const DEFAULT_REFRESH_MARGIN_MS = 60_000;

/** A JWT's claims, without verifying it (the service checks it); undefined for an opaque token. */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const json: unknown = JSON.parse(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)));
    return typeof json === "object" && json !== null
      ? (json as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A NumericDate claim (seconds since the epoch), or undefined. Below 1e11 s (year 5138): a value
 * in milliseconds, as some issuers write `iat`, is about 1.7e12 and is not taken for seconds.
 */
function claimSeconds(
  claims: Record<string, unknown> | undefined,
  name: string,
): number | undefined {
  const value = claims?.[name];
  return typeof value === "number" && value >= 0 && value < 1e11 ? value : undefined;
}

/**
 * Until when a token received at `now` (this machine's clock) is used: its lifetime as the service
 * states it — `TTLInMinutes`, or `exp - iat` when the JWT carries both in seconds, `exp` is later
 * than `iat` and that is shorter — counted from `now`, minus the margin. `exp` alone is a time on
 * the service's clock: compared with this one, a clock ahead of the service's would make every
 * fresh token look expired. An `exp` not after `iat` (an `iat` in ms, say) is an issuer's slip,
 * not a dead token: read as a lifetime of 0, it would cost a token request per call.
 */
export function usableUntil(
  issued: IssuedToken,
  now: number,
  marginMs = DEFAULT_REFRESH_MARGIN_MS,
): number {
  const ttl = (issued.ttlMinutes ?? DEFAULT_TOKEN_TTL_MINUTES) * 60_000;
  const claims = jwtClaims(issued.token);
  const exp = claimSeconds(claims, "exp");
  const iat = claimSeconds(claims, "iat");
  const span = exp !== undefined && iat !== undefined && exp > iat ? (exp - iat) * 1000 : undefined;
  const stated = span === undefined ? ttl : Math.min(ttl, span);
  const lifetime = Math.max(0, stated);
  return now + lifetime - Math.min(marginMs, lifetime / 2);
}

/**
 * A cache entry worth using, or undefined: what a shared cache returns is not trusted (null from
 * Redis, a serialised string, an entry without a token). Its `expiresAt` was set by the instance
 * that received the token, on its clock; the JWT's `exp` is not read against this one (see
 * `usableUntil`): a token the service no longer takes is refused (401), dropped and replaced.
 */
function usableEntry(entry: unknown, now: number): CachedToken | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const { token, expiresAt } = entry as Partial<Record<keyof CachedToken, unknown>>;
  if (typeof token !== "string" || token === "" || typeof expiresAt !== "number") return undefined;
  return expiresAt > now ? { token, expiresAt } : undefined;
}

/** Whether a cache entry (not trusted, as in usableEntry) holds `token`. */
function isCached(entry: unknown, token: string): boolean {
  return (
    typeof entry === "object" && entry !== null && (entry as { token?: unknown }).token === token
  );
}

export class TokenProvider {
  readonly #options: TokenProviderOptions;
  readonly #now: () => number;
  #current: CachedToken | undefined;
  #pending: Promise<string> | undefined;
  /** When `#pending` was started (`monotonicNow`). */
  #pendingSince = 0;
  /** The latest refresh started: only it adopts its token (review second-sls-2). */
  #refreshes = 0;
  /** A token the service refused: not taken back from the shared cache. */
  #refused: string | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** A usable token; concurrent callers share one refresh. The signal only stops this caller's wait. */
  get(signal?: AbortSignal): Promise<string> {
    const current = this.#current;
    if (current !== undefined && current.expiresAt > this.#now()) {
      return abortable(Promise.resolve(current.token), signal);
    }
    if (
      this.#pending === undefined ||
      monotonicNow() - this.#pendingSince >=
        (this.#options.refreshLostAfterMs ?? Number.POSITIVE_INFINITY)
    ) {
      // None, or one that can no longer settle: a new one (the old one, if it ever settles,
      // clears nothing but itself).
      this.#pendingSince = monotonicNow();
      const pending = this.#refresh(++this.#refreshes);
      this.#pending = pending;
      const clear = () => {
        if (this.#pending === pending) this.#pending = undefined;
      };
      pending.then(clear, clear);
    }
    return abortable(this.#pending, signal);
  }

  /**
   * The service refused `token`: the next `get` fetches another one. The shared entry is deleted
   * only while it still holds `token`: another instance may already have stored the replacement,
   * and deleting that would make every instance issue its own.
   */
  invalidate(token: string): void {
    this.#refused = token;
    if (this.#current?.token !== token) return;
    this.#current = undefined;
    const { cache, cacheKey } = this.#options;
    if (cache?.delete === undefined) return;
    void askCache(() => cache.get(cacheKey))
      .then((entry) =>
        isCached(entry, token) ? askCache(() => cache.delete?.(cacheKey)) : undefined,
      )
      .catch(() => undefined);
  }

  /**
   * Fetches a token (from the cache, else issued). Refresh number `refresh`: once a later one was
   * started (this one counted as lost), what it fetches only answers its own waiters, and neither
   * replaces the later one's token nor is written over it in the cache (review second-sls-2).
   */
  async #refresh(refresh: number): Promise<string> {
    const { cache, cacheKey } = this.#options;
    const shared = cache === undefined ? undefined : await askCache(() => cache.get(cacheKey));
    const usable = usableEntry(shared, this.#now());
    if (usable !== undefined && usable.token !== this.#refused) {
      if (refresh === this.#refreshes) this.#adopt(usable);
      return usable.token;
    }
    const issued = await this.#options.issue();
    const now = this.#now();
    const entry: CachedToken = {
      token: issued.token,
      expiresAt: usableUntil(issued, now, this.#options.marginMs),
    };
    if (refresh !== this.#refreshes) return entry.token;
    this.#adopt(entry);
    if (cache !== undefined && entry.expiresAt > now) {
      await askCache(() => cache.set(cacheKey, entry, entry.expiresAt - now));
    }
    return entry.token;
  }

  #adopt(entry: CachedToken): void {
    this.#options.onToken?.(entry.token);
    this.#current = entry;
  }
}

/** How long a cache call may take before it counts as a miss. */
export const TOKEN_CACHE_TIMEOUT_MS = 1000;

/**
 * A cache call that throws or hangs counts as a miss: with one refresh shared by every call, a
 * cache that never answers would otherwise hold up every call that needs a token.
 */
async function askCache<T>(call: () => Promise<T> | T): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), TOKEN_CACHE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(call)
        .catch(() => undefined),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = whenAborted(signal, () => reject(signal.reason));
    promise.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}
