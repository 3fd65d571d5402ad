/**
 * `crossborder-callbacks/koa`: a handler or a router as Koa 2 / Koa 3 middleware.
 *
 * Mount it before any body parser: the engine then reads the body itself, within its own limit,
 * after authentication. Behind `@koa/bodyparser` (or `koa-bodyparser`) it uses the raw text the
 * parser keeps in `ctx.request.rawBody`, else the parsed `ctx.request.body`.
 */
import type { BodyInput, CallbackEndpoint } from "../core/types.js";
import {
  answeredBefore,
  assertEndpoint,
  bodyConsumed,
  bodyLeft,
  handleSafely,
  headersFor,
  NodeCallbackRequest,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeBody,
  nodeHeaders,
  pathnameOf,
  peerAddress,
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
    if (answeredBefore(ctx.req, ctx.res)) return;
    const response = await handleSafely(
      endpoint,
      new NodeCallbackRequest(
        ctx.method,
        url,
        nodeHeaders(ctx.req),
        koaBody(ctx),
        peerAddress(ctx.req),
        ctx.res,
      ),
    );
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

function koaBody(ctx: KoaContextLike): BodyInput {
  const { rawBody, body } = ctx.request;
  if (typeof rawBody === "string" || rawBody instanceof Uint8Array) return rawBody;
  if (bodyConsumed(ctx.req)) return bodyLeft(ctx.req, body);
  return nodeBody(ctx.req);
}
