import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import type { ForgettingIdempotencyStore, IdempotencyClaim, IdempotencyRecord } from "./store.js";

export interface MemoryIdempotencyStoreOptions {
  /**
   * Most records kept at once. When full, a new key is refused (the store throws, so the delivery
   * fails closed and is reported) rather than a live record forgotten. Default: no limit; records
   * leave when they expire.
   */
  readonly maxEntries?: number | undefined;
  /** The clock, in milliseconds (tests pass their own). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

const MEMORY_OPTION_NAMES = optionNames<MemoryIdempotencyStoreOptions>({
  maxEntries: true,
  now: true,
});

interface Entry {
  /** Who runs it, while running; undefined once completed. */
  owner: string | undefined;
  result: string | undefined;
  /** The lease's end while running; the record's end once completed. */
  expiresAt: number;
}

/** How often at most the whole map is swept of expired records: each sweep is O(entries). */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Records in this process's memory: one instance, nothing to install. Records leave when they
 * expire (every key is checked on read, and the map is swept of expired records at most once a
 * minute, on use), so the window is the whole `ttlMs` (default 24 hours), whatever the number of
 * deliveries; memory grows with the deliveries of one window. Not shared between processes: with
 * more than one instance use the Redis or PostgreSQL store.
 */
export function createMemoryIdempotencyStore(
  options: MemoryIdempotencyStoreOptions = {},
): ForgettingIdempotencyStore {
  // A bare number (maxEntries alone) would leave the store unbounded without a word.
  if (!isRecord(options as unknown)) {
    throw new TypeError(
      "createMemoryIdempotencyStore: options must be an object { maxEntries?, now? }",
    );
  }
  assertKnownKeys(
    options as Record<string, unknown>,
    MEMORY_OPTION_NAMES,
    "options",
    "createMemoryIdempotencyStore",
  );
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  if (
    !(
      maxEntries === Number.POSITIVE_INFINITY ||
      (Number.isSafeInteger(maxEntries) && maxEntries > 0)
    )
  ) {
    throw new RangeError("maxEntries must be a positive whole number");
  }
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let nextSweep = now() + SWEEP_INTERVAL_MS;

  function sweep(at: number): void {
    if (at < nextSweep) return;
    nextSweep = at + SWEEP_INTERVAL_MS;
    for (const [key, entry] of entries) if (entry.expiresAt <= at) entries.delete(key);
  }

  function live(key: string, at: number): Entry | undefined {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= at) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  }

  function recordOf(entry: Entry, at: number): IdempotencyRecord {
    return entry.owner === undefined
      ? { state: "completed", result: entry.result as string }
      : { state: "running", leaseRemainingMs: entry.expiresAt - at };
  }

  return {
    claim(key, owner, leaseMs): IdempotencyClaim {
      const at = now();
      sweep(at);
      const entry = live(key, at);
      if (entry) return { claimed: false, record: recordOf(entry, at) };
      if (entries.size >= maxEntries) {
        // Expired records count until swept: sweep them now, before refusing a key.
        nextSweep = at;
        sweep(at);
        if (entries.size >= maxEntries) {
          throw new Error(`the memory idempotency store is full (${maxEntries} live records)`);
        }
      }
      entries.set(key, { owner, result: undefined, expiresAt: at + leaseMs });
      return { claimed: true };
    },
    get(key) {
      const at = now();
      const entry = live(key, at);
      return entry && recordOf(entry, at);
    },
    complete(key, owner, result, ttlMs) {
      const at = now();
      const entry = entries.get(key);
      // Another owner's live claim, or a live result: not ours to overwrite.
      if (entry !== undefined && entry.owner !== owner && entry.expiresAt > at) return false;
      // A fresh entry (not the claimed one) goes last in the map's order.
      entries.delete(key);
      entries.set(key, { owner: undefined, result, expiresAt: at + ttlMs });
      return true;
    },
    renew(key, owner, leaseMs) {
      const at = now();
      const entry = entries.get(key);
      // A lease that ran out is not renewed: another delivery may already have claimed the key.
      if (entry === undefined || entry.owner !== owner || entry.expiresAt <= at) return false;
      entry.expiresAt = at + leaseMs;
      return true;
    },
    release(key, owner) {
      const entry = entries.get(key);
      if (entry === undefined || entry.owner !== owner) return false;
      entries.delete(key);
      return true;
    },
    forget(key, result) {
      const entry = entries.get(key);
      if (entry === undefined || entry.owner !== undefined || entry.result !== result) return false;
      entries.delete(key);
      return true;
    },
  };
}
