/** A memory store whose first record writes fail, as over a connection that resets. */
import {
  createMemoryIdempotencyStore,
  type ForgettingIdempotencyStore,
  type IdempotencyStore,
} from "../../../src/index.js";

/**
 * `store` refuses its first `failing` calls of `complete` ("read ECONNRESET"), then writes to
 * `inner`; `writes()` counts every call of `complete`, failed or not.
 */
export function recordsFailingAtFirst(failing: number): {
  readonly store: IdempotencyStore;
  readonly inner: ForgettingIdempotencyStore;
  writes(): number;
} {
  const inner = createMemoryIdempotencyStore();
  let writes = 0;
  const store: IdempotencyStore = {
    ...inner,
    complete: async (key, owner, result, ttl) => {
      if (++writes <= failing) throw new Error("read ECONNRESET");
      return inner.complete(key, owner, result, ttl);
    },
  };
  return { store, inner, writes: () => writes };
}
