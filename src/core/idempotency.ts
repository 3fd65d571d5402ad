import { sha256Text } from "../auth/digest.js";
import type { CallbackContext, CallbackFunction } from "./engine.js";

/**
 * Where finished results are kept. The default is in memory, per process; give a shared store
 * (Redis, a database table) when several processes answer the same callbacks.
 */
export interface IdempotencyStore<TResult> {
  get(key: string): Promise<{ result: TResult } | undefined> | { result: TResult } | undefined;
  set(key: string, result: TResult, ttlMs: number): Promise<void> | void;
}

export interface IdempotencyOptions<TPayload, TResult> {
  /**
   * The key of a delivery. Default: the callback, the `OrderId` (or `RMANumber`, `CartId`) and a
   * SHA-256 of the whole payload as sent — a retry of the same call is the same key, an update of
   * the same order (other content) is not.
   */
  key?: (payload: TPayload, context: CallbackContext<TPayload>) => string | Promise<string>;
  store?: IdempotencyStore<TResult>;
  /** How long a result is remembered. Default 24 hours. */
  ttlMs?: number;
  /** Entries the default in-memory store keeps (oldest dropped first). Default 10,000. */
  maxEntries?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A bounded in-memory store with expiry; the oldest entry goes first when it is full. */
export function memoryIdempotencyStore<TResult>(maxEntries = 10_000): IdempotencyStore<TResult> {
  const entries = new Map<string, { result: TResult; expires: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expires <= Date.now()) {
        entries.delete(key);
        return undefined;
      }
      return { result: entry.result };
    },
    set(key, result, ttlMs) {
      entries.delete(key);
      entries.set(key, { result, expires: Date.now() + ttlMs });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value as string;
        entries.delete(oldest);
      }
    },
  };
}

async function defaultKey(payload: unknown, context: CallbackContext<unknown>): Promise<string> {
  const fields = payload as Record<string, unknown>;
  const id = fields.OrderId ?? fields.RMANumber ?? fields.CartId ?? "";
  // The raw payload prints card data masked: the digest never depends on a card number or CVV.
  const text = JSON.stringify(context.rawPayload);
  return `${context.callback}:${String(id)}:${await sha256Text(text, "hex")}`;
}

/**
 * Wraps a callback function so that the same delivery applies its side effect once. The service
 * can send the same order twice (an update, or a manual retry by the operator's support): a
 * repeat gets the first answer, and a repeat that arrives while the first is still running waits
 * for it. A function that throws is not remembered, so the next delivery runs it again.
 */
export function withIdempotency<TPayload, TResult>(
  fn: CallbackFunction<TPayload, TResult>,
  options: IdempotencyOptions<TPayload, TResult> = {},
): CallbackFunction<TPayload, TResult> {
  const store = options.store ?? memoryIdempotencyStore<TResult>(options.maxEntries);
  const ttlMs = options.ttlMs ?? DAY_MS;
  const keyOf = options.key ?? (defaultKey as NonNullable<typeof options.key>);
  const running = new Map<string, Promise<TResult>>();

  return async (payload, context) => {
    const key = await keyOf(payload, context);
    const pending = running.get(key);
    if (pending) return pending;
    const done = await store.get(key);
    if (done) return done.result;
    // Re-check: another delivery may have started while the store answered.
    const started = running.get(key);
    if (started) return started;
    const work = (async () => {
      const result = await fn(payload, context);
      await store.set(key, result, ttlMs);
      return result;
    })();
    running.set(key, work);
    try {
      return await work;
    } finally {
      running.delete(key);
    }
  };
}
