/**
 * The store contract behind `withIdempotency`: one record per key, claimed atomically by one owner
 * with a lease, then completed with the result, or released. Every store (memory, Redis,
 * PostgreSQL, yours) implements these five operations and passes `idempotencyStoreConformance`.
 */

import { brandClass, isBrandedInstance } from "../core/brand.js";
import { describeError, readSafely } from "../core/describe.js";
import { isTimerDelay, MAX_TIMEOUT_MS } from "../core/timers.js";

/** A value, or a promise of it: a store may answer synchronously (memory) or not (a database). */
export type Awaitable<T> = T | Promise<T>;

/** What a store holds under a key that is still live (neither its lease nor its record expired). */
export type IdempotencyRecord =
  | {
      /** Claimed by an owner whose function is still running (or crashed: the lease tells). */
      readonly state: "running";
      /** Milliseconds until the lease expires and the key may be claimed again. */
      readonly leaseRemainingMs: number;
    }
  | {
      readonly state: "completed";
      /** The text the owner completed the key with (the serialised result). */
      readonly result: string;
    };

/** The answer to a claim: the key is now yours, or here is who has it. */
export type IdempotencyClaim =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly record: IdempotencyRecord };

/**
 * Where `withIdempotency` keeps its records. Keys are flat strings of at most 250 characters; an
 * owner is a random token per delivery. Times are milliseconds, measured on the store's own clock
 * where it has one (Redis `TIME`, PostgreSQL `clock_timestamp()`), so that instances whose clocks
 * disagree still agree on a lease.
 */
export interface IdempotencyStore {
  /**
   * Atomically: if the key has no live record (none, or its lease or its record expired), record
   * it as running for `owner` until `leaseMs` from now and answer `{ claimed: true }`; otherwise
   * answer the live record. Two claims of one key at once never both succeed.
   */
  claim(key: string, owner: string, leaseMs: number): Awaitable<IdempotencyClaim>;
  /** The live record of a key, or undefined: expired records are never answered. */
  get(key: string): Awaitable<IdempotencyRecord | undefined>;
  /**
   * Records the result, to be answered for `ttlMs`, unless someone else has the key: true when
   * the key was running for `owner` (even past its lease) or has no live record, and true,
   * changing nothing, when `owner`'s own record of `result` is there already (this write sent
   * again after an earlier one's answer was lost); false, changing nothing, when another owner's
   * lease is live or another live result is recorded, even one of an equal text (another run's:
   * `withIdempotency` then reports that the function may have run twice).
   */
  complete(key: string, owner: string, result: string, ttlMs: number): Awaitable<boolean>;
  /** Extends the lease of a key running for `owner` to `leaseMs` from now; false if not `owner`'s. */
  renew(key: string, owner: string, leaseMs: number): Awaitable<boolean>;
  /** Deletes a key running for `owner`, so that the next delivery runs; false if not `owner`'s. */
  release(key: string, owner: string): Awaitable<boolean>;
}

/**
 * A store that can also delete a completed record (the memory, Redis and PostgreSQL stores). A
 * store of your own may add `forget`: without it, a record an earlier version wrote whose result
 * the engine now refuses is answered 500 until it expires or is deleted.
 */
export interface ForgettingIdempotencyStore extends IdempotencyStore {
  /**
   * Deletes a key completed with exactly `result`, so that the next delivery runs; false, changing
   * nothing, otherwise. `withIdempotency` calls it for a record whose result the engine now
   * answers 500 (written by an earlier version, which recorded it).
   */
  forget(key: string, result: string): Awaitable<boolean>;
}

/**
 * A store's error for a record it holds but cannot read (written by something else, damaged), as
 * the Redis store throws it: `withIdempotency` refuses the delivery for it with or without
 * `failOpen`, as it does a record it cannot decode, since the function ran once already.
 */
export class UnreadableRecordError extends Error {
  override readonly name = "UnreadableRecordError";
}

/**
 * The store failed where `withIdempotency` needed its answer to decide; the delivery is refused.
 * Defined here, apart from the helper, so that the copy `onError` receives is one too (see
 * `scrubError`) without the callbacks' core importing the helper.
 */
export class IdempotencyStoreError extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "IdempotencyStoreError");
  }
  /** True for an `IdempotencyStoreError` from any copy of the library (and for a subclass of it). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked (a subclass's own brand), not this one
    return isBrandedInstance(this, value);
  }
  override readonly name = "IdempotencyStoreError";
  /** The store's error's string `code` (`ECONNREFUSED`), when it has one. */
  declare readonly code?: string;
  constructor(
    readonly operation: string,
    cause: unknown,
    outcome = "the delivery was refused so that the service retries it (failOpen is off)",
  ) {
    // An empty message (Node's AggregateError for a dual-stack host refusing) is told by its code
    // and inner errors; the text is scrubbed where it is reported.
    super(
      `withIdempotency: the store failed to ${operation} (${describeError(cause)}); ${outcome}`,
    );
    const code = readSafely(cause, "code");
    if (typeof code === "string") {
      Object.defineProperty(this, "code", { value: code, enumerable: true });
    }
  }
}

/** Whether `error` is an `UnreadableRecordError` (by name: each bundle may hold its own class). */
export function isUnreadableRecordError(error: unknown): boolean {
  return error instanceof Error && error.name === "UnreadableRecordError";
}

/** The longest key a store receives; longer keys are hashed by `withIdempotency` before. */
export const MAX_KEY_LENGTH = 250;

/** Checks a duration option: a positive safe integer of milliseconds. */
export function positiveMs(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive whole number of milliseconds`);
  }
  return value;
}

/** What a timer's delay may be, in the messages refusing more. */
export const TIMER_BOUND = `at most ${MAX_TIMEOUT_MS} (about 24.8 days)`;

/** Checks a duration option that becomes a timer's delay: positive and at most `MAX_TIMEOUT_MS`. */
export function timerMs(value: unknown, name: string): number {
  if (!isTimerDelay(value)) {
    throw new RangeError(`${name} must be a positive whole number of milliseconds, ${TIMER_BOUND}`);
  }
  return value;
}
