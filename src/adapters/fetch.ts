/**
 * `crossborder-callbacks/fetch`: a handler or a router as a fetch handler,
 * `(request: Request) => Promise<Response>`, for every runtime built on the fetch API: Hono, Next.js
 * route handlers, Cloudflare Workers, Bun, Deno. Web APIs only.
 */

import { assertOptionalFunction, optionNames } from "../auth/validate.js";
import { CONSUMED_BODY } from "../core/body.js";
import { pathnameOf } from "../core/paths.js";
import { reportUndelivered } from "../core/responses.js";
import type { CallbackEndpoint } from "../core/types.js";
import {
  addressOf,
  assertEndpoint,
  handleSafely,
  isSingleHandler,
  notServedResponse,
  remoteAddressOption,
} from "./internal.js";

/** A fetch handler; extra arguments (Bun's server, Deno's info, a Worker's env) go to `remoteAddress`. */
export type FetchHandler<TRest extends unknown[] = unknown[]> = (
  request: Request,
  ...rest: TRest
) => Promise<Response>;

export interface FetchAdapterOptions<TRest extends unknown[] = unknown[]> {
  /**
   * The client's address, from what the runtime passes beside the request. Only needed by an IP
   * allow-list. Each runtime exposes it differently:
   * - Bun: `(request, server) => server.requestIP(request)?.address`
   * - Deno: `(request, info) => info.remoteAddr.hostname`
   * - Cloudflare Workers: `(request) => request.headers.get("CF-Connecting-IP") ?? undefined`
   * - Hono on Node: `(request, c) => getConnInfo(c).remote.address` (the handler called with `c`).
   *
   * Read a header only where the platform sets it and clients cannot: anywhere else it is forged
   * at will. Throwing, or giving anything but a string (`undefined`, `null`, a promise: not
   * awaited), leaves the address unknown (an IP allow-list refuses the call).
   */
  remoteAddress?:
    | ((request: Request, ...rest: TRest) => string | undefined | null)
    | null
    | undefined;
  /**
   * The runtime's `waitUntil`, for every request: where a request's timers and I/O stop once it
   * is answered, work after the answer (`withIdempotency`'s record retried, a late claim
   * released) is handed to it. Left out, it is found among the arguments the runtime passes beside
   * the request: an object with a `waitUntil` function (a Worker's `ctx`, as in
   * `fetch(request, env, ctx)`; a Vercel Edge function's second argument). Give it where it is a
   * function of its own (`waitUntil` from `@vercel/functions`, `after` from `next/server`).
   * `null`: none, not even from the arguments. See the README's "Serverless and edge runtimes".
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | null | undefined;
}

const FETCH_OPTION_NAMES = optionNames<FetchAdapterOptions>({
  remoteAddress: true,
  waitUntil: true,
});

/**
 * A fetch handler answering the endpoint's callbacks; a router answers other paths with its 404.
 * The body stream is read by the engine, within its limit, after authentication.
 *
 * ```ts
 * const handler = toFetch(createCallbackRouter({ basePath: "/crossborder", auth, handlers }));
 * export default { fetch: handler };                    // Cloudflare Workers, Bun
 * Deno.serve(handler);                                  // Deno
 * export { handler as GET, handler as POST };           // Next.js app/crossborder/[callback]/route.ts
 * app.all("/crossborder/*", (c) => handler(c.req.raw)); // Hono
 * ```
 */
export function toFetch<TRest extends unknown[] = unknown[]>(
  endpoint: CallbackEndpoint,
  options: FetchAdapterOptions<TRest> = {},
): FetchHandler<TRest> {
  assertEndpoint(endpoint, "toFetch");
  // A misspelt name or a `remoteAddress` that is not a function: a TypeError now, by name.
  const remoteAddress = remoteAddressOption(options, "toFetch", FETCH_OPTION_NAMES);
  const given = options.waitUntil;
  assertOptionalFunction(given ?? undefined, "waitUntil", "toFetch");
  const single = isSingleHandler(endpoint);
  return async (request, ...rest) => {
    // Read defensively: a request that only looks like a fetch Request (Azure Functions v4's
    // `HttpRequest` has no `signal`) must not throw once the merchant's function ran (review hosts-1).
    const signal = abortSignalOf(request);
    // A path this endpoint does not serve (a router's 404) leaves the body as it is, neither read
    // nor cancelled: the request may go on to another router ("try A, then B on a 404", review
    // tenancy-3); the runtime deals with a body nobody reads.
    const pathname = pathnameOf(request.url);
    const served = endpoint.matches(pathname);
    // A single handler serves any path it is given: its `matches` is applied here (second-mig-2).
    if (!served && single) {
      const response = notServedResponse(endpoint, null, pathname);
      return new Response(response.body, { status: response.status, headers: response.headers });
    }
    const response = await handleSafely(endpoint, {
      method: request.method,
      url: request.url,
      headers: request.headers,
      // Already read (a middleware's `request.json()`): the merchant's setup, answered 500.
      body: !served ? null : request.bodyUsed ? CONSUMED_BODY : request.body,
      remoteAddress:
        remoteAddress === undefined ? undefined : addressOf(remoteAddress, request, rest),
      signal,
      waitUntil: given === undefined ? waitUntilAmong(rest) : (given ?? undefined),
    });
    // Where the runtime aborts the signal when the client leaves (Node's Hono server, Bun), an
    // answer given after the merchant's function ran to a client already gone is reported; one
    // lost once handed back to the runtime is not seen here (see README "Fetch-based runtimes").
    if (signal?.aborted === true) reportUndelivered(response, "closed");
    // The engine hands out a fresh headers object per answer: a runtime may write into it.
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}

/**
 * The request's `signal` if it is one (it says whether it is `aborted`), else `undefined`: a
 * request-like object without it (Azure Functions v4's `HttpRequest`) or whose `signal` throws when
 * read. Nothing that is not a signal is handed to the merchant's function.
 */
function abortSignalOf(request: Request): AbortSignal | undefined {
  try {
    const { signal } = request as { readonly signal?: unknown };
    return typeof signal === "object" &&
      signal !== null &&
      typeof (signal as Partial<AbortSignal>).aborted === "boolean"
      ? (signal as AbortSignal)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `waitUntil` of what the runtime passed beside the request, bound to its object: a Worker's
 * `ctx` (`fetch(request, env, ctx)`), a Vercel Edge function's context. Read defensively (a getter
 * that throws, as Hono's `c.executionCtx` on Node, is skipped); undefined when none has one (Node,
 * Bun's server, Deno's info: no allocation then).
 */
function waitUntilAmong(
  rest: readonly unknown[],
): ((promise: Promise<unknown>) => void) | undefined {
  for (const holder of rest) {
    if (typeof holder !== "object" || holder === null) continue;
    try {
      const waitUntil = (holder as { readonly waitUntil?: unknown }).waitUntil;
      if (typeof waitUntil === "function") {
        return (promise) => {
          (waitUntil as (promise: Promise<unknown>) => void).call(holder, promise);
        };
      }
    } catch {
      // Not this one.
    }
  }
  return undefined;
}
