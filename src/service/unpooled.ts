/**
 * The fetch for the operations that are never retried (dispatch, void, parcel status, refund) when
 * the merchant passed none (review bunodeno-1).
 *
 * Deno's own `fetch` sends a request again, once, on a new connection when a connection it took
 * from its pool closes before the answer (`connection closed before message completed`, a reset):
 * it reads that as a stale keep-alive connection the server never read from (denoland/deno#32566;
 * #36415 limits it to pooled connections; #35610). A service, gateway or load balancer that took
 * the request and then closed the connection gets it twice: two refunds from one call. A request
 * on a connection opened for it alone is not sent again (on a Deno with #36415, 2.9.6 measured),
 * so these operations go through a Deno `HttpClient` that keeps no idle connection
 * (`poolMaxIdlePerHost: 0`), one per request, closed once the answer's body has been read to its
 * end, cancelled or has failed, or when the fetch rejects (a timeout, an abort): a client that is
 * not closed stays in Deno's resource table for good (about 110 KiB) and fails a `deno test` run
 * with the resource sanitizer on (review second-deno-1/2). It keeps no idle connection, so sharing
 * one would save only its construction. The caller reads or cancels every body (call.ts). The
 * retried operations keep the global `fetch` and its pool: a repeat of theirs is harmless, and a
 * fresh connection (and TLS handshake) per call is not.
 *
 * Node's fetch (undici) and Bun's send such a request once. Where `Deno.createHttpClient` is
 * missing (Deno before 2.0 without `--unstable-http`, which did not send it again either; a host
 * that leaves it out) or throws, the global `fetch` is used.
 */
import type { FetchLike } from "./call.js";

interface DenoHttpApi {
  readonly createHttpClient?: unknown;
}

interface Closable {
  close(): void;
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
  // Set once creating a client failed (or gave no closable object): the global fetch from then on.
  let unavailable = false;
  return async (input, init) => {
    let client: Closable | undefined;
    if (!unavailable) {
      try {
        const made: unknown = create.call(deno, { poolMaxIdlePerHost: 0 });
        if (typeof (made as Partial<Closable> | null)?.close === "function") {
          client = made as Closable;
        }
      } catch {
        // Left undefined.
      }
      unavailable = client === undefined;
    }
    if (client === undefined) return fetch(input, init);
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      try {
        (client as Closable).close();
      } catch {
        // Already closed.
      }
    };
    let response: Response;
    try {
      response = await fetch(input, { ...init, client } as RequestInit);
    } catch (error) {
      close();
      throw error;
    }
    return closingWithBody(response, close);
  };
}

/**
 * The answer, its body passed on as read and `close` called when the body ends, is cancelled or
 * fails; at once if it has none.
 */
function closingWithBody(response: Response, close: () => void): Response {
  const source = response.body;
  if (source === null) {
    close();
    return response;
  }
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const step = await reader.read();
        if (step.done) {
          close();
          controller.close();
        } else controller.enqueue(step.value);
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        close();
      }
    },
  });
  try {
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  } catch {
    // A status a Response cannot be made with (outside 200–599; Deno's fetch gives none): the
    // answer as it came, its client closed now.
    reader.releaseLock();
    close();
    return response;
  }
}
