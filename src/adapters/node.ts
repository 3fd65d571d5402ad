/**
 * `crossborder-callbacks/node`: a handler or a router as a `node:http` (or `node:https`) request
 * listener.
 */
import type { CallbackEndpoint } from "../core/types.js";
import {
  assertEndpoint,
  closeSignal,
  handleSafely,
  type NodeRequestLike,
  type NodeResponseLike,
  nodeBody,
  nodeHeaders,
  peerAddress,
  writeNodeResponse,
} from "./internal.js";

export type { NodeRequestLike, NodeResponseLike } from "./internal.js";

/** A `node:http` request listener. */
export type NodeListener = (req: NodeRequestLike, res: NodeResponseLike) => void;

/**
 * A request listener answering the endpoint's callbacks; a router answers other paths with its 404.
 *
 * ```ts
 * createServer(toNodeListener(createCallbackRouter({ basePath: "/crossborder", auth, handlers })));
 * ```
 */
export function toNodeListener(endpoint: CallbackEndpoint): NodeListener {
  assertEndpoint(endpoint, "toNodeListener");
  return (req, res) => {
    void handleSafely(endpoint, {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers: nodeHeaders(req),
      body: nodeBody(req),
      remoteAddress: peerAddress(req),
      signal: closeSignal(res),
    }).then((response) => writeNodeResponse(res, response));
  };
}
