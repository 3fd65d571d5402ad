/**
 * A request whose abort signal is made when first read (the Node adapters' requests) carries the
 * maker under this key. The engine keeps the maker, not the request (its body, its headers), in
 * the merchant's context, and reads the signal only when the merchant does.
 */
export const LAZY_SIGNAL = Symbol("crossborder-callbacks.lazySignal");

export interface LazySignal {
  /** Made (with what aborts it) on the first read; the same signal afterwards. */
  readonly signal: AbortSignal | undefined;
}

/** The request's lazy signal maker, if it has one. */
export function lazySignalOf(request: object): LazySignal | undefined {
  return (request as { readonly [LAZY_SIGNAL]?: LazySignal })[LAZY_SIGNAL];
}
