/**
 * `crossborder-callbacks/express`: a handler or a router as Express 4 / Express 5 middleware.
 *
 * Mount it before any body parser (`express.json()`, …), after header-only middleware (`cors()`,
 * `helmet()`, which may stay in front): the engine then reads the body itself,
 * within its own limit, after authentication. Behind a parser it still works, from what the parser
 * left in `req.body` (held to the library's limit by its Content-Length), but the parser's own limit
 * and errors (its 413 for bodies over 100 kB) apply first.
 */
import { reportMissBelowMount } from "../core/paths.js";
import type { CallbackEndpoint } from "../core/types.js";
import {
  answeredBefore,
  assertEndpoint,
  handleSafely,
  isSingleHandler,
  type NodeAdapterOptions,
  NodeCallbackRequest,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeAddressReader,
  nodeHeaders,
  notServedResponse,
  pathnameOf,
  remoteAddressOption,
  requestBody,
  waitUntilOption,
  writeNodeResponse,
} from "./internal.js";

export type { NodeAdapterOptions, NodeRequestLike, NodeResponseLike } from "./internal.js";

/** The parts of an Express request the middleware reads (structural: no dependency on Express's types). */
export interface ExpressRequestLike extends NodeRequestLike {
  /** What a body parser left, if one ran. */
  readonly body?: unknown;
  /**
   * The exact bytes a host kept beside the parsed body (Google Cloud Functions, NestJS
   * `rawBody: true`): taken in place of `body`.
   */
  readonly rawBody?: unknown;
  /** The path Express mounted the middleware under (`app.use("/prefix", …)`), cut from `url`. */
  readonly baseUrl?: unknown;
  /** Set by body-parser 1 (Express 4) once it read the stream. */
  readonly _body?: unknown;
}

/** Express middleware: `(req, res, next) => void`. */
export type ExpressMiddleware = (
  req: ExpressRequestLike,
  res: NodeResponseLike,
  next: (error?: unknown) => void,
) => void;

/**
 * Express middleware (Express 4 and 5) answering the endpoint's callbacks.
 *
 * ```ts
 * app.use("/crossborder", toExpress(createCallbackRouter({ auth, handlers })));
 * // or: app.use(toExpress(createCallbackRouter({ basePath: "/crossborder", auth, handlers })));
 * ```
 *
 * Paths a router does not serve go to `next()` (called without one, as a Cloud Function is, the
 * router answers them with its 404). Paths are matched against `req.url`, which Express
 * makes relative to the mount path. Every answer, failures included, is written here: `next(err)`
 * is never called.
 *
 * `options.remoteAddress(req)` gives the client's address in place of the socket's (behind a proxy
 * on a Unix socket, say: see `NodeAdapterOptions`).
 */
export function toExpress<TReq extends ExpressRequestLike = ExpressRequestLike>(
  endpoint: CallbackEndpoint,
  options: NodeAdapterOptions<TReq> = {},
): ExpressMiddleware {
  assertEndpoint(endpoint, "toExpress");
  const clientAddress = nodeAddressReader(remoteAddressOption(options, "toExpress")) as (
    req: ExpressRequestLike,
  ) => string | undefined;
  const waitUntil = waitUntilOption(options, "toExpress");
  const single = isSingleHandler(endpoint);
  return (req, res, next) => {
    const url = req.url ?? "/";
    // Without a `next` (a host calling the middleware as `(req, res)`: Google Cloud Functions), a
    // path a router does not serve is answered here, with the router's 404 (review hosts-5).
    if (typeof next === "function" && !endpoint.matches(pathnameOf(url))) {
      // Mounted under a prefix the router's basePath repeats: said once (review migrate-4).
      const { baseUrl } = req;
      if (typeof baseUrl === "string" && baseUrl !== "") {
        reportMissBelowMount(endpoint, `${baseUrl}${pathnameOf(url)}`, baseUrl);
      }
      next();
      return;
    }
    if (answeredBefore(req, res, req)) return;
    const request = new NodeCallbackRequest(
      req.method ?? "GET",
      url,
      nodeHeaders(req),
      requestBody(req, req, res),
      clientAddress(req),
      res,
      waitUntil,
    );
    // Called without `next`: a single handler's refused path is the router's 404 (second-mig-2).
    if (single && typeof next !== "function" && !endpoint.matches(pathnameOf(url))) {
      writeNodeResponse(res, notServedResponse(endpoint, request.body, pathnameOf(url)));
      return;
    }
    void handleSafely(endpoint, request).then((response) => writeNodeResponse(res, response));
  };
}
