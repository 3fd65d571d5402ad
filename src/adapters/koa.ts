/**
 * `crossborder-callbacks/koa`: a handler or a router as Koa 2 / Koa 3 middleware.
 *
 * Mount it before any body parser: the engine then reads the body itself, within its own limit,
 * after authentication. Behind `@koa/bodyparser` (or `koa-bodyparser`) it uses the raw text the
 * parser keeps in `ctx.request.rawBody`, else the parsed `ctx.request.body`; either way the
 * parser's object keeps no card number in clear and no CVV once the call is answered.
 */
import { decodedBody } from "../core/body.js";
import { reportUndelivered } from "../core/responses.js";
import type { CallbackEndpoint } from "../core/types.js";
import {
  answeredBefore,
  assertEndpoint,
  handleSafely,
  headersFor,
  NodeCallbackRequest,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeHeaders,
  pathnameOf,
  peerAddress,
  protectParsedBodyOf,
  requestBody,
} from "./internal.js";

export type { NodeRequestLike, NodeResponseLike } from "./internal.js";

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
 */
export function toKoa(endpoint: CallbackEndpoint): KoaMiddleware {
  assertEndpoint(endpoint, "toKoa");
  return async (ctx, next) => {
    const url = ctx.url;
    if (!endpoint.matches(pathnameOf(url))) {
      await next();
      return;
    }
    if (answeredBefore(ctx.req, ctx.res, ctx.request, answeredInKoa(ctx))) return;
    const { rawBody } = ctx.request;
    const raw = typeof rawBody === "string" || rawBody instanceof Uint8Array;
    const response = await handleSafely(
      endpoint,
      new NodeCallbackRequest(
        ctx.method,
        url,
        nodeHeaders(ctx.req),
        raw ? decodedBody(rawBody) : requestBody(ctx.req, ctx.request, ctx.res),
        peerAddress(ctx.req),
        ctx.res,
      ),
    );
    // The engine read its own copy, from the parser's text (its limit, its `__proto__` rule and a
    // body digest hold there): the parser's object is protected here, however the call ended.
    if (raw) protectParsedBodyOf(ctx.request);
    // Koa writes `ctx.body` after the chain, unless the answer cannot go out any more: something
    // else already sent one (a timeout middleware), or the client went away. An answer given after
    // the merchant's function ran is then reported (`reportUndelivered`).
    const gone = ctx.res.headersSent
      ? "preempted"
      : ctx.res.destroyed === true
        ? "closed"
        : undefined;
    if (gone !== undefined) reportUndelivered(response, gone);
    ctx.status = response.status;
    // Headers first: Koa then keeps our Content-Type when the body is a string. Straight to the
    // response, as `ctx.set` does for a string value (and, like it, not once the headers are sent).
    const { res } = ctx;
    if (!res.headersSent) {
      const headers = headersFor(res, response.headers);
      for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string);
    }
    ctx.body = response.body;
  };
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
