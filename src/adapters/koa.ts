/**
 * `crossborder-callbacks/koa`: a handler or a router as Koa 2 / Koa 3 middleware.
 *
 * Mount it before any body parser: the engine then reads the body itself, within its own limit,
 * after authentication. Behind `@koa/bodyparser` (or `koa-bodyparser`) it uses the raw text the
 * parser keeps in `ctx.request.rawBody`, else the parsed `ctx.request.body`; either way the
 * parser's object keeps no card number in clear and no CVV once the call is answered.
 */
import { reportMissBelowMount } from "../core/paths.js";
import { reportUndelivered, UNDELIVERED, type UndeliveredCarrier } from "../core/responses.js";
import type { CallbackEndpoint, CallbackResponse } from "../core/types.js";
import {
  answeredBefore,
  assertEndpoint,
  connectionEnded,
  handleSafely,
  headersFor,
  type NodeAdapterOptions,
  NodeCallbackRequest,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeAddressReader,
  nodeHeaders,
  type PlainNodeRequest,
  pathnameOf,
  remoteAddressOption,
  requestBody,
  waitUntilOption,
} from "./internal.js";

export type {
  NodeAdapterOptions,
  NodeRequestLike,
  NodeResponseLike,
  PlainNodeRequest,
} from "./internal.js";

/** The parts of a Koa context the middleware uses (structural: no dependency on Koa's types). */
export interface KoaContextLike {
  readonly req: NodeRequestLike;
  readonly res: NodeResponseLike;
  readonly request: {
    /** Set by a body parser. */
    readonly body?: unknown;
    /** The raw text, kept by `@koa/bodyparser` and `koa-bodyparser`. */
    readonly rawBody?: unknown;
  };
  readonly method: string;
  /** The request target; relative to the mount path under `koa-mount`. */
  readonly url: string;
  /** The request target as it came in (Koa keeps it when a mount, koa-mount, cuts `url`). */
  readonly originalUrl?: unknown;
  status: number;
  body: unknown;
  set(field: string, value: string): void;
}

/** Koa middleware. */
export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/**
 * Koa middleware (Koa 2 and 3) answering the endpoint's callbacks; paths a router does not serve
 * go to `next()`.
 *
 * ```ts
 * app.use(toKoa(createCallbackRouter({ basePath: "/crossborder", auth, handlers })));
 * ```
 *
 * `options.remoteAddress(ctx.req)` gives the client's address in place of the socket's (behind a
 * proxy on a Unix socket, say: see `NodeAdapterOptions`).
 */
export function toKoa<TReq extends PlainNodeRequest = PlainNodeRequest>(
  endpoint: CallbackEndpoint,
  options: NodeAdapterOptions<TReq> = {},
): KoaMiddleware {
  assertEndpoint(endpoint, "toKoa");
  const clientAddress = nodeAddressReader(remoteAddressOption(options, "toKoa")) as (
    req: NodeRequestLike,
  ) => string | undefined;
  const waitUntil = waitUntilOption(options, "toKoa");
  return async (ctx, next) => {
    const url = ctx.url;
    if (!endpoint.matches(pathnameOf(url))) {
      // Mounted under a prefix the router's basePath repeats: said once (review migrate-4).
      const { originalUrl } = ctx;
      if (typeof originalUrl === "string" && originalUrl !== url) {
        const whole = pathnameOf(originalUrl);
        const below = pathnameOf(url);
        // The prefix koa-mount cut: what the whole path holds before the path the router saw.
        if (whole.endsWith(below)) {
          reportMissBelowMount(endpoint, whole, whole.slice(0, whole.length - below.length));
        }
      }
      await next();
      return;
    }
    if (answeredBefore(ctx.req, ctx.res, ctx.request, answeredInKoa(ctx))) return;
    // Behind a parser that keeps the raw text (`ctx.request.rawBody`), the engine reads its own copy
    // of it (its limit, its `__proto__` rule and a body digest hold there), and the parser's object
    // is protected (`requestBody`, shared with the Express and node adapters).
    const response = await handleSafely(
      endpoint,
      new NodeCallbackRequest(
        ctx.method,
        url,
        nodeHeaders(ctx.req),
        requestBody(ctx.req, ctx.request, ctx.res, true),
        clientAddress(ctx.req),
        ctx.res,
        waitUntil,
      ),
    );
    // Koa writes `ctx.body` after the chain, unless the answer cannot go out any more: something
    // else already sent one (a timeout middleware), or the connection closed. An answer given
    // after the merchant's function ran is then reported (`reportUndelivered`); if it can still
    // go out, the connection may yet close before Koa writes it (a middleware in front awaiting
    // after `next()`): `watchUntilWritten`.
    const { res } = ctx;
    if (res.headersSent) reportUndelivered(response, "preempted");
    else if (res.destroyed === true || connectionEnded(res)) reportUndelivered(response, "closed");
    else watchUntilWritten(res, response);
    ctx.status = response.status;
    // Headers first: Koa then keeps our Content-Type when the body is a string. Straight to the
    // response, as `ctx.set` does for a string value (and, like it, not once the headers are sent).
    if (!res.headersSent) {
      const headers = headersFor(res, response.headers);
      for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string);
    }
    ctx.body = response.body;
  };
}

/** The answer a response still has to write, when it carries a reporter (see `watchUntilWritten`). */
const PENDING_ANSWER = Symbol("crossborder-callbacks.koa.pendingAnswer");

/** A Node response being watched until its answer is written. */
interface WatchedResponse extends NodeResponseLike {
  [PENDING_ANSWER]?: CallbackResponse | undefined;
  on?(event: "close", listener: (this: WatchedResponse) => void): unknown;
}

/**
 * Reports the answer if the response closes before it was written in full (Koa writes it after
 * the whole chain: a middleware in front may still await, and the connection may close meanwhile),
 * or with another status than the answer's (a middleware in front threw or answered after it).
 * Only for an answer given after the merchant's function ran (it carries a reporter, inherited,
 * see `UNDELIVERED`); the others are not reported anyway, and cost nothing here. One `close`
 * listener shared by every response (`reportIfUnwritten`, called with the response as `this`:
 * nothing is allocated per request), the answer kept on the response itself. Not on HTTP/2's
 * compatibility response (it has a `stream`): it does not tell a closed stream (see README), nor
 * on a stand-in that does not say whether it finished (`writableFinished`).
 */
function watchUntilWritten(res: WatchedResponse, response: CallbackResponse): void {
  if ((response as Partial<UndeliveredCarrier>)[UNDELIVERED] === undefined) return;
  if (typeof res.writableFinished !== "boolean" || typeof res.on !== "function") return;
  if ((res as { readonly stream?: unknown }).stream !== undefined) return;
  // Listened to once per response, whatever the answers (a second endpoint mounted: the last one).
  if (res[PENDING_ANSWER] === undefined) res.on("close", reportIfUnwritten);
  res[PENDING_ANSWER] = response;
}

/**
 * A watched response closed: its answer is reported if it was not written in full (`closed`), or
 * if what was written has another status (`preempted`: a middleware in front threw after `next()`
 * and Koa answered 500, or it set its own status). An answer rewritten with the same status (a
 * compressed body, say) is taken as delivered: nothing here can tell it apart.
 */
function reportIfUnwritten(this: WatchedResponse): void {
  const answer = this[PENDING_ANSWER];
  if (answer === undefined) return;
  this[PENDING_ANSWER] = undefined;
  if (this.writableFinished !== true) reportUndelivered(answer, "closed");
  else if (this.statusCode !== answer.status) reportUndelivered(answer, "preempted");
}

/**
 * Whether an earlier middleware answered the Koa way (Koa writes the answer after the whole chain,
 * so no header is sent yet): only an error status it set (a rate limiter's 429 or 503, an auth's
 * 401) is an answer. Before `next()`, a status under 400 or a body is often a default (an "ok"
 * middleware's `ctx.status = 200`, a body echoed or cleared): skipping the callbacks there would
 * drop every delivery, while answering after it is safe, as Koa sends only the final `ctx`. 404 is
 * Koa's starting status, which Koa 2 and 3 tell from one set on purpose only by a private field
 * (`_explicitStatus`): never an answer.
 */
function answeredInKoa(ctx: KoaContextLike): boolean {
  const { status } = ctx;
  return status >= 400 && status !== 404;
}
