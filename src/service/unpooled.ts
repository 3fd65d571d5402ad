/**
 * The fetch for the operations that are never retried (dispatch, void, parcel status, refund) when
 * the merchant passed none (review bunodeno-1).
 *
 * Deno's own `fetch` sends a request again, once, on a new connection when a connection it took
 * from its pool closes before the answer (`connection closed before message completed`, a reset):
 * it reads that as a stale keep-alive connection the server never read from (denoland/deno#32566;
 * #36415 limits it to pooled connections; #35610). A service, gateway or load balancer that took
 * the request and then closed the connection gets it twice: two refunds from one call. A request
 * on a connection opened for it alone is not sent again, so these operations go through a Deno
 * `HttpClient` that keeps no idle connection (`poolMaxIdlePerHost: 0`), one per service client,
 * created on its first such call. The retried operations keep the global `fetch` and its pool:
 * a repeat of theirs is harmless, and a fresh connection (and TLS handshake) per call is not.
 *
 * Node's fetch (undici) and Bun's send such a request once. Where `Deno.createHttpClient` is
 * missing (Deno before 2.0 without `--unstable-http`, which did not send it again either; a host
 * that leaves it out) or throws, the global `fetch` is used.
 */
import type { FetchLike } from "./call.js";

interface DenoHttpApi {
  readonly createHttpClient?: unknown;
}

/** The global `fetch`, looked up on each call (a test or an instrumentation may replace it). */
export const globalFetch: FetchLike = (input, init) => fetch(input, init);

/**
 * A fetch whose requests each go out on a connection of their own on Deno; the global `fetch`
 * anywhere else.
 */
export function unpooledFetch(): FetchLike {
  const deno = (globalThis as { Deno?: DenoHttpApi }).Deno;
  const create = deno?.createHttpClient;
  if (typeof create !== "function") return globalFetch;
  // undefined: not made yet; null: could not be made (the global fetch is used).
  let client: object | null | undefined;
  return (input, init) => {
    if (client === undefined) {
      try {
        const made: unknown = create.call(deno, { poolMaxIdlePerHost: 0 });
        client = typeof made === "object" && made !== null ? made : null;
      } catch {
        client = null;
      }
    }
    return client === null ? fetch(input, init) : fetch(input, { ...init, client } as RequestInit);
  };
}
