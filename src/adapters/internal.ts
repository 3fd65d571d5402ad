/**
 * What the Node-based adapters (Express, Koa, node:http) share: structural types of a Node
 * request and response (so no framework's types reach the public declarations), the request
 * body as an async iterable, and writing the engine's answer.
 */
import { keepRepeatedHeaders } from "../core/headers.js";
import { pathnameOf } from "../core/paths.js";
import { failureResponse } from "../core/responses.js";
import type { CallbackEndpoint, CallbackRequest, CallbackResponse } from "../core/types.js";

/** The parts of a Node `IncomingMessage` the adapters use. */
export interface NodeRequestLike extends AsyncIterable<unknown> {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Node ≥ 18.3: every value of every header, repeats included. */
  readonly headersDistinct?: Readonly<Record<string, readonly string[] | undefined>>;
  readonly socket?: { readonly remoteAddress?: string | undefined } | null | undefined;
  readonly readableEnded?: boolean;
  readonly readable?: boolean;
  readonly complete?: boolean;
  /** Node ≥ 16.3: an iterator that can leave the stream alive when the reader stops early. */
  iterator?(options: { destroyOnReturn: boolean }): AsyncIterator<unknown>;
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off?(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  resume(): unknown;
  destroy?(error?: Error): unknown;
}

/** The parts of a Node `ServerResponse` the adapters use. */
export interface NodeResponseLike {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableFinished?: boolean;
  readonly destroyed?: boolean;
  setHeader(name: string, value: string): unknown;
  end(chunk: string): unknown;
  once?(event: "close", listener: () => void): unknown;
  destroy?(error?: Error): unknown;
}

/** A body a runaway client keeps sending after it was refused is discarded up to this size. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * The request stream as the engine reads it. When the engine stops early (body too large,
 * compressed), the rest of the body is discarded instead of destroying the socket, so the answer
 * (413, 415) still reaches the client. A client that keeps sending past `MAX_DRAIN_BYTES` is cut off.
 */
export function nodeBody(req: NodeRequestLike): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const inner =
        typeof req.iterator === "function"
          ? req.iterator({ destroyOnReturn: false })
          : (req[Symbol.asyncIterator]() as AsyncIterator<unknown>);
      return {
        next: () => inner.next() as Promise<IteratorResult<Uint8Array>>,
        async return(): Promise<IteratorResult<Uint8Array>> {
          await inner.return?.();
          drain(req);
          return { done: true, value: undefined };
        },
      };
    },
  };
}

function drain(req: NodeRequestLike): void {
  if (req.readableEnded) return;
  let drained = 0;
  const onData = (chunk: Uint8Array) => {
    drained += chunk.byteLength;
    if (drained > MAX_DRAIN_BYTES) {
      req.off?.("data", onData);
      req.destroy?.();
    }
  };
  req.on("data", onData);
  req.resume();
}

/**
 * Whether a body parser already read the stream: body-parser 1 (Express 4) marks `_body`; body-parser
 * 2 (Express 5) and the Koa parsers leave a finished stream.
 */
export function bodyConsumed(req: NodeRequestLike & { readonly _body?: unknown }): boolean {
  return (
    req._body === true ||
    req.readableEnded === true ||
    (req.complete === true && req.readable === false)
  );
}

/** The signal aborted when the client goes away before the answer is written. */
export function closeSignal(res: NodeResponseLike): AbortSignal | undefined {
  if (typeof res.once !== "function") return undefined;
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** The request headers, with every value of a header Node keeps only the first of (Authorization). */
export function nodeHeaders(req: NodeRequestLike): CallbackRequest["headers"] {
  return keepRepeatedHeaders(req.headers, req.headersDistinct);
}

/** The peer address of the TCP connection (never `X-Forwarded-For`: authentication decides that). */
export function peerAddress(req: NodeRequestLike): string | undefined {
  return req.socket?.remoteAddress ?? undefined;
}

/** Writes the engine's answer to a Node response. */
export function writeNodeResponse(res: NodeResponseLike, response: CallbackResponse): void {
  // The client went away (the engine noticed, or not): nobody to answer.
  if (res.destroyed) return;
  if (res.headersSent) {
    // Something else answered meanwhile; the engine's answer cannot be written.
    res.destroy?.();
    return;
  }
  try {
    res.statusCode = response.status;
    for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
    res.end(response.body);
  } catch {
    // A header the server refuses: end the exchange rather than leave it hanging.
    res.destroy?.();
  }
}

/**
 * Calls the endpoint. The engine answers every failure itself; this only guards against a broken
 * custom endpoint, with a body-free 500.
 */
export async function handleSafely(
  endpoint: CallbackEndpoint,
  request: CallbackRequest,
): Promise<CallbackResponse> {
  try {
    return await endpoint.handle(request);
  } catch {
    return failureResponse("internal_error");
  }
}

export { pathnameOf };

/** Fails at build time of the middleware, not on the first request. */
export function assertEndpoint(
  endpoint: unknown,
  adapter: string,
): asserts endpoint is CallbackEndpoint {
  const candidate = endpoint as Partial<CallbackEndpoint> | null | undefined;
  if (
    typeof candidate !== "object" ||
    candidate === null ||
    typeof candidate.handle !== "function" ||
    typeof candidate.matches !== "function"
  ) {
    throw new TypeError(
      `${adapter}: expected a callback handler or a router (createCallbackRouter / create…Handler)`,
    );
  }
}
