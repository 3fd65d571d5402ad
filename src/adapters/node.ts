/**
 * `crossborder-callbacks/node`: a handler or a router as a `node:http` (or `node:https`) request
 * listener. Behind a body parser it answers from what the parser left in `req.body`, as on Express.
 */
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
  type ParsedBodyHolder,
  type PlainNodeRequest,
  pathnameOf,
  remoteAddressOption,
  requestBody,
  waitUntilOption,
  writeNodeResponse,
} from "./internal.js";

export type {
  NodeAdapterOptions,
  NodeRequestLike,
  NodeResponseLike,
  PlainNodeRequest,
} from "./internal.js";

/** A `node:http` request listener. */
export type NodeListener = (req: NodeRequestLike, res: NodeResponseLike) => void;

/**
 * A request listener answering the endpoint's callbacks; a router answers other paths with its 404.
 *
 * ```ts
 * createServer(toNodeListener(createCallbackRouter({ basePath: "/crossborder", auth, handlers })));
 * ```
 *
 * `options.remoteAddress(req)` gives the client's address in place of the socket's (behind a proxy
 * on a Unix socket, say: see `NodeAdapterOptions`).
 */
export function toNodeListener<TReq extends PlainNodeRequest = PlainNodeRequest>(
  endpoint: CallbackEndpoint,
  options: NodeAdapterOptions<TReq> = {},
): NodeListener {
  assertEndpoint(endpoint, "toNodeListener");
  const clientAddress = nodeAddressReader(remoteAddressOption(options, "toNodeListener")) as (
    req: NodeRequestLike,
  ) => string | undefined;
  const waitUntil = waitUntilOption(options, "toNodeListener");
  // A single handler serves what its `matches` serves; a router answers its own 404 (second-mig-2).
  const single = isSingleHandler(endpoint);
  return (req, res) => {
    // `req.body`: what a body parser in front of the listener left, if one ran (as on Express).
    const holder = req as NodeRequestLike & ParsedBodyHolder;
    if (answeredBefore(req, res, holder)) return;
    const request = new NodeCallbackRequest(
      req.method ?? "GET",
      req.url ?? "/",
      nodeHeaders(req),
      requestBody(req, holder, res),
      clientAddress(req),
      res,
      waitUntil,
    );
    if (single) {
      const pathname = pathnameOf(request.url);
      if (!endpoint.matches(pathname)) {
        writeNodeResponse(res, notServedResponse(endpoint, request.body, pathname));
        return;
      }
    }
    void handleSafely(endpoint, request).then((response) => writeNodeResponse(res, response));
  };
}
