/**
 * A request whose abort signal is made when first read (the Node adapters' requests) carries the
 * maker under this key. The engine keeps the maker, not the request (its body, its headers), in
 * the merchant's context, and reads the signal only when the merchant does. A registered, versioned
 * key (as every mark an adapter leaves for the engine, review dual-1/dual-3): the adapter may come
 * from the other build (CommonJS, ES modules) or another copy of the library than the handler, and
 * the engine would otherwise make every request's signal at once. `@1` is the maker's shape
 * (`{ signal }`); bump it when that changes.
 */
export const LAZY_SIGNAL = Symbol.for("crossborder-callbacks/lazySignal@1");

export interface LazySignal {
  /** Made (with what aborts it) on the first read; the same signal afterwards. */
  readonly signal: AbortSignal | undefined;
}

/** The request's lazy signal maker, if it has one. */
export function lazySignalOf(request: object): LazySignal | undefined {
  return (request as { readonly [LAZY_SIGNAL]?: LazySignal })[LAZY_SIGNAL];
}
