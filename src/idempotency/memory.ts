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
  readonly key: string;
  /** Who runs it, while running; undefined once completed. */
  owner: string | undefined;
  result: string | undefined;
  /** The lease's end while running; the record's end once completed. */
  expiresAt: number;
}

/**
 * Records in this process's memory: one instance, nothing to install. Records leave when they
 * expire (every key is checked on read, and the expired ones leave the map at the next claim, in
 * order of their ends), so the window is the whole `ttlMs` (default 24 hours), whatever the number
 * of deliveries; memory grows with the deliveries of one window. Not shared between processes:
 * with more than one instance use the Redis or PostgreSQL store.
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

  /**
   * The entries by their ends: a binary min-heap of (end, entry) in two arrays. Every entry in
   * the map has an item here whose end is at most its own (an end moved later, by a renewal or
   * a lease becoming its record, is found when the item comes up, and the item goes back at the
   * new end); items of entries no longer in the map (released, forgotten, read expired) are
   * dropped when they come up. So the expired entries are found without walking the map, each
   * in O(log n), whatever its size: before, a full store walked the whole map before refusing
   * each new key (21 ms at 500,000 records, review soak-2), and every store once a minute.
   */
  let ends: number[] = [];
  let items: Entry[] = [];
  /** The heap's longest length since its arrays were last copied. */
  let longest = 0;

  function push(end: number, entry: Entry): void {
    let i = ends.length;
    ends.push(end);
    items.push(entry);
    if (i >= longest) longest = i + 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((ends[parent] as number) <= end) break;
      ends[i] = ends[parent] as number;
      items[i] = items[parent] as Entry;
      i = parent;
    }
    ends[i] = end;
    items[i] = entry;
  }

  /** Takes the earliest item off the heap. */
  function pop(): void {
    const end = ends.pop() as number;
    const entry = items.pop() as Entry;
    const size = ends.length;
    if (size === 0) return;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && (ends[child + 1] as number) < (ends[child] as number)) child++;
      if ((ends[child] as number) >= end) break;
      ends[i] = ends[child] as number;
      items[i] = items[child] as Entry;
      i = child;
    }
    ends[i] = end;
    items[i] = entry;
  }

  /** Deletes every entry whose end is at or before `at`: O(log n) an item that came up. */
  function expire(at: number): void {
    while (ends.length > 0 && (ends[0] as number) <= at) {
      const entry = items[0] as Entry;
      pop();
      if (entries.get(entry.key) !== entry) continue;
      if (entry.expiresAt <= at) entries.delete(entry.key);
      else push(entry.expiresAt, entry);
    }
    // Popping leaves an array's storage as long as it ever was (a day's peak, held once its
    // records are gone): copied once a quarter of it is in use, O(1) amortised over the pops.
    if (longest > 1024 && ends.length * 4 < longest) {
      ends = ends.slice();
      items = items.slice();
      longest = ends.length;
    }
  }

  function add(key: string, owner: string | undefined, result: string | undefined, end: number) {
    const entry: Entry = { key, owner, result, expiresAt: end };
    entries.set(key, entry);
    push(end, entry);
  }

  /**
   * Moves an entry's end. A later end is found from the item already on the heap when it comes
   * up (no heap work now: a renewal, a lease becoming the record); an earlier one (a shorter
   * `leaseMs` or `ttlMs`) gets an item of its own.
   */
  function setEnd(entry: Entry, end: number): void {
    if (end < entry.expiresAt) push(end, entry);
    entry.expiresAt = end;
  }

  /** Deletes the key's entry; its heap item is dropped when it comes up. */
  function remove(entry: Entry): void {
    entries.delete(entry.key);
    // Its strings not kept alive by the heap item until then.
    entry.owner = undefined;
    entry.result = undefined;
  }

  function live(key: string, at: number): Entry | undefined {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= at) {
      remove(entry);
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
      // Expired records never count: gone before a key is looked up or refused.
      expire(at);
      const entry = entries.get(key);
      if (entry) return { claimed: false, record: recordOf(entry, at) };
      if (entries.size >= maxEntries) {
        throw new Error(`the memory idempotency store is full (${maxEntries} live records)`);
      }
      add(key, owner, undefined, at + leaseMs);
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
      if (entry === undefined) {
        add(key, undefined, result, at + ttlMs);
        return true;
      }
      // The lease's entry becomes the record.
      entry.owner = undefined;
      entry.result = result;
      setEnd(entry, at + ttlMs);
      return true;
    },
    renew(key, owner, leaseMs) {
      const at = now();
      const entry = entries.get(key);
      // A lease that ran out is not renewed: another delivery may already have claimed the key.
      if (entry === undefined || entry.owner !== owner || entry.expiresAt <= at) return false;
      setEnd(entry, at + leaseMs);
      return true;
    },
    release(key, owner) {
      const entry = entries.get(key);
      if (entry === undefined || entry.owner !== owner) return false;
      remove(entry);
      return true;
    },
    forget(key, result) {
      const entry = entries.get(key);
      if (entry === undefined || entry.owner !== undefined || entry.result !== result) return false;
      remove(entry);
      return true;
    },
  };
}
