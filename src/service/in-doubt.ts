/**
 * The calls of one client that ended in doubt (PIT-8): an operation that is never retried whose
 * request may have reached the service with no complete answer back (`mayHaveBeenApplied`). A
 * later call of the same operation with the same request that the service refuses in a way that
 * may mean "already done" (B002 for a dispatch already made, C104 for a parcel already voided…)
 * is told so, instead of reading as "nothing happened" at the end of a retry loop of the caller's.
 *
 * Bounded in count (`MAX_IN_DOUBT`, the oldest goes first) and age (`IN_DOUBT_TTL_MS`, on the
 * monotonic clock, dropped as soon as the ledger is looked at). Nothing is computed on the normal
 * path: a request's identity is made only when a call ends in doubt, or when the ledger holds
 * something not yet expired.
 */
import { isRecord } from "../core/objects.js";
import type { ServiceError } from "./errors.js";
import type { OperationDefinition, OperationName } from "./operations.js";

/** At most this many calls in doubt are kept per client; the oldest is forgotten first. */
export const MAX_IN_DOUBT = 100;
/** A call in doubt is kept this long (10 minutes), then forgotten. */
export const IN_DOUBT_TTL_MS = 10 * 60_000;

export interface InDoubtEntry {
  /** The error the call in doubt ended with (`mayHaveBeenApplied: true`). */
  readonly error: ServiceError;
  /** When it ended, as wall-clock time (for the message only). */
  readonly at: Date;
  /** When it ended, on the monotonic clock (for the age bound). */
  readonly mono: number;
}

/**
 * The request as the operation's schema gave it (its wire names are the client's, the same for
 * every call), with object keys sorted and the lists the service reads as sets (`anyOrder`: the
 * orders to dispatch, a refund's lines) sorted by each element's canonical form: two calls whose
 * arguments differ only in key order, or in the order of such a list, are the same request. The
 * elements are kept as given (a repeated one counts), and any other list keeps its order.
 */
export function requestIdentity(
  name: OperationName,
  op: OperationDefinition,
  data: unknown,
): string {
  const sets = op.anyOrder;
  if (sets === undefined || !isRecord(data)) return `${name}\u0000${canonical(data)}`;
  const keys = Object.keys(data)
    .filter((key) => data[key] !== undefined)
    .sort();
  const fields = keys.map((key) => {
    const value = data[key];
    const text =
      sets.includes(key) && Array.isArray(value)
        ? `[${value.map(canonical).sort().join(",")}]`
        : canonical(value);
    return `${JSON.stringify(key)}:${text}`;
  });
  return `${name}\u0000{${fields.join(",")}}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Whether a refusal of the operation may mean that an earlier, identical request was applied. */
export function mayMeanAlreadyDone(op: OperationDefinition, error: ServiceError): boolean {
  const rule = op.alreadyDone;
  if (rule === undefined || error.code === "INVALID_REQUEST") return false;
  return (
    (rule.codes?.includes(String(error.code)) ?? false) ||
    (rule.kinds?.includes(error.kind) ?? false)
  );
}

export class InDoubtLedger {
  readonly #entries = new Map<string, InDoubtEntry>();
  readonly #now: () => number;
  readonly #maxEntries: number;
  readonly #ttlMs: number;

  constructor(now: () => number, maxEntries = MAX_IN_DOUBT, ttlMs = IN_DOUBT_TTL_MS) {
    this.#now = now;
    this.#maxEntries = maxEntries;
    this.#ttlMs = ttlMs;
  }

  /**
   * How many calls in doubt are kept, the expired ones dropped first: the success path reads this
   * (and computes the request's identity only when it is not 0), so once every entry is past its
   * age nothing is computed again, and their errors are let go.
   */
  get size(): number {
    this.#prune();
    return this.#entries.size;
  }

  /** Remembers a call that ended in doubt (a newer one for the same request replaces it). */
  record(identity: string, error: ServiceError): void {
    this.#prune();
    this.#entries.delete(identity);
    this.#entries.set(identity, { error, at: new Date(), mono: this.#now() });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** The call in doubt with this identity, if one is remembered and not too old. */
  find(identity: string): InDoubtEntry | undefined {
    this.#prune();
    return this.#entries.get(identity);
  }

  /** Forgets the request: a call of it succeeded. */
  forget(identity: string): void {
    this.#entries.delete(identity);
  }

  /**
   * Drops the entries past their age (in insertion order, which is their order of age): a look at
   * the oldest one's time when none is; nothing, not even the clock, when the ledger is empty.
   */
  #prune(): void {
    if (this.#entries.size === 0) return;
    const limit = this.#now() - this.#ttlMs;
    for (const [identity, entry] of this.#entries) {
      if (entry.mono > limit) break;
      this.#entries.delete(identity);
    }
  }
}
