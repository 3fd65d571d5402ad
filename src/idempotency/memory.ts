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
  /**
   * Who completed it, once completed (its `complete` sent again answers true): a 32-bit digest of
   * the owner, not the owner's string (`crypto.randomUUID()` builds a rope of its pieces, some
   * 450 bytes a record kept for a day; two runs of one key whose owners share a digest, 1 in 4
   * billion, and whose results are equal, would pass for one).
   */
  recordedBy: number | undefined;
  result: string | undefined;
  /** The lease's end while running; the record's end once completed. */
  expiresAt: number;
  /** Its place in the heap of ends. */
  index: number;
}

/** FNV-1a over the owner's UTF-16 units: a number held in the entry itself. */
function digestOf(owner: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < owner.length; i++) {
    hash = Math.imul(hash ^ owner.charCodeAt(i), 0x01000193);
  }
  return hash | 0;
}

/** A value in a message: a number as it is, anything else by its type. */
function shown(value: unknown): string {
  return typeof value === "number" ? String(value) : typeof value;
}

/**
 * A duration given to a method: a finite number (a NaN end, from `Number(process.env.X)` unset,
 * would sit at the heap's root and stop every expiry, review second-soak-2; an infinite one
 * would be a lease that never ends). `withIdempotency` passes only whole positive ones.
 */
function duration(value: number, name: string): number {
  if (!Number.isFinite(value)) {
    throw new TypeError(
      `the memory idempotency store: ${name} must be a finite number of milliseconds, got ${shown(value)}`,
    );
  }
  return value;
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
   * The entries by their ends: a binary min-heap of exactly the map's entries, each knowing its
   * place (`index`), so an entry that leaves the map (released, forgotten, read expired) leaves
   * the heap at once, and a moved end moves its entry, each in O(log n). The expired entries are
   * found at the root without walking the map: before, a full store walked the whole map before
   * refusing each new key (21 ms at 500,000 records, review soak-2). One item per entry, so the
   * memory held is that of the live records, as `maxEntries` counts them: an entry left in the
   * heap until its old end (review second-soak-1) held 14 MB after 100,000 released leases.
   */
  let heap: Entry[] = [];
  /** The heap's longest length since its array was last copied. */
  let longest = 0;

  /** Moves the entry at `i` up while its parent ends later. */
  function up(entry: Entry, i: number): void {
    const end = entry.expiresAt;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent] as Entry;
      if (above.expiresAt <= end) break;
      heap[i] = above;
      above.index = i;
      i = parent;
    }
    heap[i] = entry;
    entry.index = i;
  }

  /** Moves the entry at `i` down to its place. */
  function down(entry: Entry, i: number): void {
    const end = entry.expiresAt;
    const size = heap.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (
        child + 1 < size &&
        (heap[child + 1] as Entry).expiresAt < (heap[child] as Entry).expiresAt
      ) {
        child++;
      }
      const below = heap[child] as Entry;
      if (below.expiresAt >= end) break;
      heap[i] = below;
      below.index = i;
      i = child;
    }
    heap[i] = entry;
    entry.index = i;
  }

  /** Puts the entry back in its place after its end moved. */
  function sift(entry: Entry): void {
    const i = entry.index;
    if (i > 0 && (heap[(i - 1) >> 1] as Entry).expiresAt > entry.expiresAt) up(entry, i);
    else down(entry, i);
  }

  /** Takes the entry out of the heap: the last item fills its place. */
  function unheap(entry: Entry): void {
    const last = heap.pop() as Entry;
    if (last !== entry) {
      heap[entry.index] = last;
      last.index = entry.index;
      sift(last);
    }
    entry.index = -1;
    // Removing leaves the array's storage as long as it ever was (a day's peak, held once its
    // records are gone): copied once a quarter of it is in use, O(1) amortised over the removals.
    if (longest > 1024 && heap.length * 4 < longest) {
      heap = heap.slice();
      longest = heap.length;
    }
  }

  /** Deletes every entry whose end is at or before `at`: O(log n) each. */
  function expire(at: number): void {
    while (heap.length > 0 && (heap[0] as Entry).expiresAt <= at) remove(heap[0] as Entry);
  }

  function add(key: string, owner: string | undefined, result: string | undefined, end: number) {
    const entry: Entry = {
      key,
      owner,
      recordedBy: undefined,
      result,
      expiresAt: end,
      index: heap.length,
    };
    entries.set(key, entry);
    heap.push(entry);
    if (heap.length > longest) longest = heap.length;
    up(entry, entry.index);
  }

  /** Moves an entry's end, and the entry to its new place in the heap. */
  function setEnd(entry: Entry, end: number): void {
    entry.expiresAt = end;
    sift(entry);
  }

  /** Deletes the key's entry, from the map and the heap. */
  function remove(entry: Entry): void {
    entries.delete(entry.key);
    unheap(entry);
  }

  /** The clock's reading: a NaN end would sit at the heap's root and stop every expiry. */
  function clock(): number {
    const at = now();
    if (!Number.isFinite(at)) {
      throw new TypeError(
        `the memory idempotency store's clock (now) answered ${shown(at)}, not a finite number of milliseconds`,
      );
    }
    return at;
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
      duration(leaseMs, "leaseMs");
      const at = clock();
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
      const at = clock();
      const entry = live(key, at);
      return entry && recordOf(entry, at);
    },
    complete(key, owner, result, ttlMs) {
      duration(ttlMs, "ttlMs");
      const at = clock();
      let entry = entries.get(key);
      // Another owner's live claim, or a live result: not ours to overwrite. The owner's own
      // record of this result (its write sent again) counts as written; another owner's record
      // of an equal text does not (review infra-5).
      if (entry !== undefined && entry.owner !== owner && entry.expiresAt > at) {
        return (
          entry.owner === undefined &&
          entry.recordedBy === digestOf(owner) &&
          entry.result === result
        );
      }
      if (entry === undefined) {
        add(key, undefined, result, at + ttlMs);
        entry = entries.get(key) as Entry;
        entry.recordedBy = digestOf(owner);
        return true;
      }
      // The lease's entry becomes the record.
      entry.owner = undefined;
      entry.recordedBy = digestOf(owner);
      entry.result = result;
      setEnd(entry, at + ttlMs);
      return true;
    },
    renew(key, owner, leaseMs) {
      duration(leaseMs, "leaseMs");
      const at = clock();
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
