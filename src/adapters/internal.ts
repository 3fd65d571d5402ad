/**
 * What the Node-based adapters (Express, Koa, node:http) share: structural types of a Node
 * request and response (so no framework's types reach the public declarations), the request
 * as the engine reads it (its body read by events, its signal made when first read), and writing
 * the engine's answer.
 */

import {
  assertKnownKeys,
  assertOptionalFunction,
  configError,
  optionNames,
} from "../auth/validate.js";
import {
  CONSUMED,
  CONSUMED_BODY,
  concat,
  DEFAULT_BODY_TIMEOUT_MS,
  decodedBody,
  discardBody,
  EMPTY,
  type ReadBody,
  SELF_DISCARD,
  SELF_READ,
  type SelfReadingBody,
  TIMEOUT,
  TOO_LARGE,
  UNREADABLE,
  zero,
} from "../core/body.js";
import { isBytes } from "../core/bytes.js";
import { protectParsedBody } from "../core/card.js";
import { distinctHeaders, HEADERS_CUT, keepRepeatedHeaders } from "../core/headers.js";
import { pathnameOf, reportNotServed } from "../core/paths.js";
import { failureResponse, reportUndelivered } from "../core/responses.js";
import { LAZY_SIGNAL, type LazySignal } from "../core/signal.js";
import type {
  BodyInput,
  CallbackEndpoint,
  CallbackRequest,
  CallbackResponse,
} from "../core/types.js";

/** The events of a Node request stream the body reader listens to (chunks excepted). */
type StreamEvent = "end" | "error" | "aborted" | "close";

/** The parts of a Node `IncomingMessage` the adapters use. */
export interface NodeRequestLike extends AsyncIterable<unknown> {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Node ≥ 18.3: every value of every header, repeats included. */
  readonly headersDistinct?: Readonly<Record<string, readonly string[] | undefined>>;
  /** Names and values as received, alternating: tells whether a header came more than once. */
  readonly rawHeaders?: readonly string[];
  readonly socket?: { readonly remoteAddress?: string | undefined } | null | undefined;
  readonly readableEnded?: boolean;
  readonly readable?: boolean;
  readonly complete?: boolean;
  /** Set when the client went away before the request's end (HTTP/2's compatibility request). */
  readonly aborted?: boolean;
  /** `"1.1"`, `"1.0"`, `"2.0"`: a 100 Continue is for HTTP/1.1 only (RFC 9110 §10.1.1). */
  readonly httpVersion?: string;
  /** `true` once a `data` listener or `resume()` made the stream flow. */
  readonly readableFlowing?: boolean | null;
  /** Node ≥ 16.7: `true` once the stream handed out a chunk (a `data` event, a `read()`). */
  readonly readableDidRead?: boolean;
  readonly readableObjectMode?: boolean;
  /** What `setEncoding` set: the text chunks are the bytes in this encoding (`null`: bytes). */
  readonly readableEncoding?: string | null;
  /**
   * The pieces the stream holds (a getter of every Node Readable, not in Node's documentation):
   * only its length is read, to take the body at once when it is one piece.
   */
  readonly readableBuffer?: { readonly length: number } | null;
  readonly destroyed?: boolean;
  /** The error the stream was destroyed with, if any. */
  readonly errored?: unknown;
  /** Node ≥ 16.3: an iterator that can leave the stream alive when the reader stops early. */
  iterator?(options: { destroyOnReturn: boolean }): AsyncIterator<unknown>;
  /** What the stream has buffered (bytes, or text after `setEncoding`), `null` when nothing. */
  read?(): Uint8Array | string | null;
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: StreamEvent, listener: (error?: unknown) => void): unknown;
  off?(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off?(event: StreamEvent, listener: (error?: unknown) => void): unknown;
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
  /** The status and every header in one call (Node's fast path when nothing was set before). */
  writeHead?(status: number, headers: Readonly<Record<string, string>>): unknown;
  end(chunk: string): unknown;
  once?(event: "close", listener: () => void): unknown;
  destroy?(error?: Error): unknown;
}

/** A body a runaway client keeps sending after it was refused is discarded up to this size. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * The request stream as the engine reads it: by its events (`data` into a list of chunks, one
 * copy at the end), or, for an endpoint that iterates the body itself, as an async iterable.
 * When the engine stops early (body too large, compressed, too slow, refused before reading),
 * the rest of the body is discarded instead of destroying the socket, so the answer (413, 415,
 * 408, 401) still reaches the client. A client that keeps sending past `MAX_DRAIN_BYTES`, or
 * past the endpoint's `bodyTimeoutMs` counted from the refusal, is cut off.
 */
class NodeBody implements SelfReadingBody, AsyncIterable<Uint8Array> {
  constructor(
    private readonly req: NodeRequestLike,
    private readonly res: NodeResponseLike | undefined,
  ) {}

  [SELF_READ](limit: number, timeoutMs: number): ReadBody | Promise<ReadBody> {
    return readByEvents(this.req, limit, timeoutMs, this.res);
  }

  [SELF_DISCARD](timeoutMs?: number): void {
    drain(this.req, timeoutMs);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const req = this.req;
    if (this.res !== undefined) continueIfAwaited(req, this.res);
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
  }
}

export function nodeBody(req: NodeRequestLike, res?: NodeResponseLike): BodyInput {
  return new NodeBody(req, res);
}

/**
 * Writes `100 Continue` when the client asked for it (`Expect: 100-continue`) and it was not sent:
 * Node writes it itself before the listener runs unless the server has a `checkContinue` listener,
 * which leaves it to the merchant. Called when the body is to be read (after authentication), so a
 * refused call is answered without its body being uploaded. Whether one was sent is `_sent100`, as
 * Node's `writeHead` reads it (Bun's node:http keeps it too, but has no `_expect_continue`, so the
 * request's header is read, as Node matches it, on HTTP/1.1 only as Node does: an HTTP/1.0
 * client's expectation is ignored); HTTP/2's compatibility response keeps no `_sent100`, so nothing
 * is written there.
 */
function continueIfAwaited(req: NodeRequestLike, res: NodeResponseLike): void {
  const expecting = res as NodeResponseLike & {
    readonly _sent100?: boolean;
    writeContinue?(): unknown;
  };
  if (
    expecting._sent100 === false &&
    !res.headersSent &&
    typeof expecting.writeContinue === "function" &&
    req.httpVersion === "1.1" &&
    expectsContinue(req.headers.expect)
  ) {
    expecting.writeContinue();
  }
}

/** Whether an `Expect` header asks for `100-continue` (Node's own match, any case). */
function expectsContinue(expect: string | readonly string[] | undefined): boolean {
  return typeof expect === "string" && /(?:^|\W)100-continue(?:$|\W)/i.test(expect);
}

/** What the stream's async iterator rejects with when the stream closes before its end. */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/** What Node destroys a request with when its client goes away mid-body. */
function aborted(): Error {
  return Object.assign(new Error("aborted"), { code: "ECONNRESET" });
}

/**
 * HTTP/2's compatibility request, its stream reset or its connection lost: whether the body had
 * all arrived (END_STREAM) first cannot be told, as the request lets go of what it held either way.
 */
function http2Gone(): ReadBody {
  return { kind: "failed", error: aborted(), maybeWhole: true };
}

/**
 * Whether HTTP/2's compatibility request says its client went away (its stream reset, its
 * connection lost): it then ends and is never destroyed, so `aborted` is the only sign. Only there
 * (it has `stream`): an `IncomingMessage` is `aborted` by any destroy before `complete`, which a
 * serverless bridge's stand-in (its body pushed, `complete` never set) meets once a parser read it
 * to its end; on HTTP/1 a client gone destroys the request, which the callers check first.
 */
function http2Aborted(req: NodeRequestLike): boolean {
  return req.aborted === true && "stream" in req;
}

/**
 * Reads the whole body within `limit` bytes and `timeoutMs`, by the stream's events. Every way
 * out (end, limit, deadline, error, client gone) removes the five listeners and clears the timer;
 * what was read of a refused body is zeroed (it may hold card data).
 */
function readByEvents(
  req: NodeRequestLike,
  limit: number,
  timeoutMs: number,
  res: NodeResponseLike | undefined,
): ReadBody | Promise<ReadBody> {
  // Read to its end before us (a wrapper, a middleware): the body is gone unless none was sent.
  // Unless `aborted`: HTTP/2's compatibility request, its stream reset or its connection lost,
  // ends and lets go of what it held, and is never destroyed (the client went away: 499).
  if (req.readableEnded === true) {
    if (http2Aborted(req)) return http2Gone();
    return declaresBody(req) ? CONSUMED : EMPTY;
  }
  if (req.destroyed === true) {
    return { kind: "failed", error: req.errored ?? prematureClose() };
  }
  // The same, its end not emitted yet.
  if (http2Aborted(req)) return http2Gone();
  // Read in part before us, its end still to come (a middleware's `data` listener that lets the
  // call through, a byte counter, a raw-body logger): the chunks it was handed are gone, a reader
  // now gets only the tail, which would be the sender's 400. Nothing in this library or in the
  // frameworks reads the stream before this point (a paused stream or a `data` listener that saw
  // nothing yet still gets the whole body here).
  if (req.readableDidRead === true) return CONSUMED;
  const arrived = readArrived(req, limit, timeoutMs);
  if (arrived !== undefined) return arrived;
  // Not all here: a client that waits for a 100 before sending it gets it now.
  if (res !== undefined) continueIfAwaited(req, res);
  return new Promise<ReadBody>((resolve) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    // A stream without `off` keeps the listeners: nothing after the first way out counts (a `close`
    // after `end` must not zero the chunk that is the body).
    let settled = false;
    const settle = (result: ReadBody): void => {
      settled = true;
      clearTimeout(timer);
      if (typeof req.off === "function") {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onError);
        req.off("aborted", onAborted);
        req.off("close", onClose);
      }
      resolve(result);
    };
    const onData = (chunk: unknown): void => {
      if (settled) return;
      const bytes = bytesOf(chunk, req);
      if (bytes === undefined) {
        zero(chunks);
        settle(UNREADABLE);
        drain(req, timeoutMs);
        return;
      }
      total += bytes.byteLength;
      // Kept before the check, so a piece past the limit is zeroed with the rest.
      chunks.push(bytes);
      if (total > limit) {
        zero(chunks);
        settle(TOO_LARGE);
        drain(req, timeoutMs);
      }
    };
    const onEnd = (): void => {
      if (!settled) settle(concat(chunks, total));
    };
    const onError = (error: unknown): void => {
      if (settled) return;
      zero(chunks);
      settle({ kind: "failed", error });
    };
    // On HTTP/2 (`stream`), the reset may come after END_STREAM, the body's end not yet emitted.
    const onAborted = (): void => {
      if (settled) return;
      zero(chunks);
      settle("stream" in req ? http2Gone() : { kind: "failed", error: aborted() });
    };
    // After `end`, `close` finds no listener left: here it is a close before the end.
    const onClose = (): void => onError(prematureClose());
    const timer = setTimeout(() => {
      zero(chunks);
      settle(TIMEOUT);
      // The rest is let go; the answer's `Connection: close` ends the exchange.
      drain(req, timeoutMs);
    }, timeoutMs);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
    req.on("close", onClose);
    req.on("data", onData);
    // A stream paused by a middleware before us does not start on a `data` listener alone.
    req.resume();
  });
}

/**
 * The body of a message that has wholly arrived (the usual case: the engine reads it after the
 * JWT's verification, while which the parser has read the rest), taken from the stream's buffer
 * at once: no listener, no timer, no extra turn of the event loop (measured over HTTP, A/B of the
 * builds: Express 0.79 → 0.82x, Koa 0.78 → 0.80x, node:http 0.75 → 0.76x of the bare route).
 * Only for a body buffered in one piece, which `read()` hands back itself (zeroed after use like
 * every piece the events give): Node joins several pieces into a copy, leaving the pieces, which
 * may hold card data, out of this library's reach. `undefined` otherwise, or when the body may
 * still be arriving, or when the stream is not a paused Node stream of bytes or text: then it is
 * read by its events.
 */
function readArrived(req: NodeRequestLike, limit: number, timeoutMs: number): ReadBody | undefined {
  // `complete` (HTTP/1): Node's parser has pushed the whole body and its end. HTTP/2's
  // compatibility request says `complete` only once the body was read, or when it was aborted
  // (then `aborted`, or destroyed: refused before).
  if (
    req.complete !== true ||
    req.aborted === true ||
    typeof req.read !== "function" ||
    req.readableFlowing === true ||
    req.readableObjectMode === true ||
    req.readableBuffer?.length !== 1
  ) {
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let chunk = req.read(); chunk !== null; chunk = req.read()) {
    const bytes = bytesOf(chunk, req);
    if (bytes === undefined) {
      zero(chunks);
      drain(req, timeoutMs);
      return UNREADABLE;
    }
    total += bytes.byteLength;
    chunks.push(bytes);
    if (total > limit) {
      zero(chunks);
      drain(req, timeoutMs);
      return TOO_LARGE;
    }
  }
  return concat(chunks, total);
}

/**
 * A chunk of the request stream as bytes: text (after a middleware's `setEncoding`) back to the
 * bytes sent, with the stream's own encoding (latin1, hex, base64 are not UTF-8). `undefined` for
 * what is neither bytes nor text (the objects of a stream in object mode), or text in an encoding
 * Buffer does not know: the reader answers those 500 (the setup is at fault, not the sender).
 */
function bytesOf(chunk: unknown, req: NodeRequestLike): Uint8Array | undefined {
  if (isBytes(chunk)) return chunk;
  if (typeof chunk !== "string") return undefined;
  const encoding = req.readableEncoding ?? "utf8";
  return Buffer.isEncoding(encoding) ? Buffer.from(chunk, encoding) : undefined;
}

/**
 * Reads the rest of a body that will not be used and lets it go, so the answer reaches the client
 * and the connection serves its next request. Within `MAX_DRAIN_BYTES` and `timeoutMs` from now
 * (the endpoint's `bodyTimeoutMs`, as a body being read gets): past either, the request is let go
 * (`cutOff`), so a client that trickles a refused body (no token needed) holds the connection no
 * longer than one that trickles an accepted one (its 408).
 */
function drain(req: NodeRequestLike, timeoutMs = DEFAULT_BODY_TIMEOUT_MS): void {
  // All of it arrived (a GET without a body, the usual case): Node discards what is left unread
  // once the answer is written.
  if (req.readableEnded || req.complete === true) return;
  let drained = 0;
  const stop = (): void => {
    clearTimeout(timer);
    if (typeof req.off === "function") {
      req.off("data", onData);
      req.off("end", stop);
      req.off("close", stop);
      req.off("error", stop);
    }
  };
  const onData = (chunk: unknown) => {
    // Text and objects (a stream in object mode) count too, so the cap holds whatever flows.
    drained += isBytes(chunk) ? chunk.byteLength : typeof chunk === "string" ? chunk.length : 1;
    if (drained > MAX_DRAIN_BYTES) {
      stop();
      req.destroy?.();
    }
  };
  const timer = setTimeout(() => {
    stop();
    if (req.readableEnded !== true) cutOff(req);
  }, timeoutMs);
  // An open connection keeps the process alive already; the timer alone must not.
  timer.unref?.();
  req.on("data", onData);
  req.on("end", stop);
  req.on("close", stop);
  req.on("error", stop);
  req.resume();
}

/**
 * Lets go of a request whose body is still arriving after its answer: on HTTP/2 (Node's
 * compatibility request has a `stream`), its stream is reset with NO_ERROR once the answer is
 * written (RFC 9113 §8.1), as for the 408, the session serving on; on HTTP/1, the request is
 * destroyed, which closes the connection (Node cannot take the next request before this body's end).
 */
function cutOff(req: NodeRequestLike): void {
  const stream = (req as { readonly stream?: unknown }).stream;
  if (
    typeof stream === "object" &&
    stream !== null &&
    typeof (stream as Partial<Http2StreamLike>).close === "function"
  ) {
    endStreamAfterAnswer(stream as Http2StreamLike);
  } else req.destroy?.();
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

/**
 * The body of a stream a body parser or a middleware already read: what it parsed (`req.body`);
 * without that, nothing if nothing was sent, else a body read before the library, which the engine
 * answers 500 (the merchant's setup is at fault, not the sender).
 */
export function bodyLeft(req: NodeRequestLike, parsed: unknown): BodyInput {
  if (typeof parsed === "string" || isBytes(parsed)) return decodedBody(parsed);
  if (parsed !== undefined) return parsed as BodyInput;
  return declaresBody(req) ? CONSUMED_BODY : undefined;
}

/** Where a body parser leaves its result: `req` on Express and `node:http`, Koa's `ctx.request`. */
export interface ParsedBodyHolder {
  readonly body?: unknown;
  /**
   * The exact bytes or text of the body, kept beside the parsed one: by `@koa/bodyparser` and
   * `koa-bodyparser` (`ctx.request.rawBody`), by Google Cloud Functions' functions-framework and by
   * NestJS's `rawBody: true` (`req.rawBody`, a `Buffer`).
   */
  readonly rawBody?: unknown;
}

/**
 * The raw body a host or a parser kept in `holder.rawBody`, else `undefined`: bytes always; text
 * where `text` says the parser keeps the body's own text (Koa's parsers), or where its UTF-8 length
 * is the request's `Content-Length` (a merchant's own `verify` may keep it as latin1, base64 or
 * hex text, which is not the body: review second-adapt-1). A getter that throws keeps nothing (its
 * error is not kept, as it may quote the body).
 */
function rawBodyOf(
  req: NodeRequestLike,
  holder: ParsedBodyHolder,
  text: boolean,
): string | Uint8Array | undefined {
  let rawBody: unknown;
  try {
    rawBody = holder.rawBody;
  } catch {
    return undefined;
  }
  if (isBytes(rawBody)) return rawBody;
  if (typeof rawBody !== "string") return undefined;
  if (text) return rawBody;
  // With a length the text must match; without one (chunked) or with a Content-Encoding (the
  // length is the compressed one), a text whose characters are the bytes of UTF-8 (latin1 kept) is
  // not the body (review last4-2: a UTF-8 text on a chunked request is).
  const length = req.headers["content-length"];
  if (typeof length === "string" && req.headers["content-encoding"] === undefined) {
    return Number(length) === utf8Length(rawBody) ? rawBody : undefined;
  }
  return bytesOfUtf8(rawBody) ? undefined : rawBody;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether `text` holds characters of U+0080–U+00FF only as the bytes of UTF-8 sequences (the body's
 * bytes kept as latin1 text), with at least one such sequence: then it is not the body's text.
 */
function bytesOfUtf8(text: string): boolean {
  let high = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) return false;
    if (code >= 0x80) high = true;
  }
  if (!high) return false;
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The number of bytes UTF-8 takes for `text` (a lone surrogate as U+FFFD's 3). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * What a body parser left in `holder.body`. It may be a getter (a host's lazy parse of the bytes it
 * buffered, as Vercel's `setLazyProp(req, "body", …)`): one that throws leaves no body this library
 * can read, so `undefined`. Its error is not kept, as it may quote the body, card data included.
 */
export function parsedBody(holder: ParsedBodyHolder): unknown {
  try {
    return holder.body;
  } catch {
    return undefined;
  }
}

/**
 * The body of a Node request as the engine takes it: the stream, or, once a body parser read it,
 * the exact bytes or text kept in `holder.rawBody` (see `ParsedBodyHolder`; the engine then reads
 * its own copy, with the exact digits of an integer beyond 2^53 and the bytes a body digest signs),
 * else what the parser left in `holder` (`req.body`, Koa's `ctx.request.body`; see `bodyLeft`).
 * The parsed body is read only then, as reading it may run a host's parse. Beside a raw body, the
 * parsed object is not what the engine walks: it is protected here (no card number in clear, no
 * CVV), as the library answers without it.
 */
export function requestBody(
  req: NodeRequestLike & { readonly _body?: unknown },
  holder: ParsedBodyHolder,
  res?: NodeResponseLike,
  rawText = false,
): BodyInput {
  if (!bodyConsumed(req)) return nodeBody(req, res);
  // Destroyed before its end, and no parser read it (one finishes on the stream's end, or marks
  // `_body`), or aborted (HTTP/2's compatibility request, ended by a reset or a lost connection,
  // never destroyed): the client went away (499), whatever a parser of another type left (`{}`).
  // The engine then protects only the stream it is given: what a parser left is protected here, as
  // the library answers without it (it may hold the card number and CVV).
  if (
    (req.destroyed === true && req.readableEnded !== true && req._body !== true) ||
    http2Aborted(req)
  ) {
    protectParsedBodyOf(holder);
    return nodeBody(req, res);
  }
  const raw = rawBodyOf(req, holder, rawText);
  if (raw !== undefined) {
    protectParsedBodyOf(holder);
    return decodedBody(raw);
  }
  return bodyLeft(req, parsedBody(holder));
}

/** Whether the request says it carries a body (a length over 0, or chunks). */
function declaresBody(req: NodeRequestLike): boolean {
  const { headers } = req;
  const length = headers["content-length"];
  return (
    headers["transfer-encoding"] !== undefined || (typeof length === "string" && Number(length) > 0)
  );
}

/**
 * Whether an earlier middleware already answered (a rate limiter's 503 that still calls `next()`):
 * its headers sent, or `answered` (Koa's answer, which Koa sends after the whole chain). Then the
 * engine is not run, as the merchant's function must not act on a call whose answer it cannot
 * give (the service redelivers what it was told failed), and the body is let go: the stream is
 * drained, and a body a parser left (in `holder`) keeps no card number in clear and no CVV.
 */
export function answeredBefore(
  req: NodeRequestLike,
  res: NodeResponseLike,
  holder: ParsedBodyHolder,
  answered = false,
): boolean {
  if (!answered && !res.headersSent) return false;
  drain(req);
  protectParsedBodyOf(holder);
  return true;
}

/** `protectParsedBody` of what a parser left in `holder` (a getter that throws leaves nothing). */
export function protectParsedBodyOf(holder: ParsedBodyHolder): void {
  protectParsedBody(parsedBody(holder));
}

/** The signal aborted when the client goes away before the answer is written, made on first read. */
class ResponseCloseSignal implements LazySignal {
  #signal: AbortSignal | undefined = undefined;

  constructor(private readonly res: NodeResponseLike) {}

  get signal(): AbortSignal | undefined {
    if (this.#signal !== undefined) return this.#signal;
    const res = this.res;
    if (typeof res.once !== "function") return undefined;
    const controller = new AbortController();
    // HTTP/2's compatibility response has no `destroyed`, and a reset finishes its stream's writable
    // side: there the stream says it, `aborted` when it closed before the answer's end.
    const stream = http2StreamOf(res);
    // Already gone (the signal read late): aborted from the start.
    if ((res.destroyed === true && res.writableFinished !== true) || stream?.aborted === true) {
      controller.abort();
    } else {
      res.once("close", () => {
        if (!res.writableFinished || stream?.aborted === true) controller.abort();
      });
    }
    this.#signal = controller.signal;
    return this.#signal;
  }
}

/**
 * The request the engine reads. Its `signal` is made when first read (by the engine's context when
 * the merchant reads it), so a merchant that never reads it costs no `AbortController` and no
 * `close` listener. A class: the same shape for every request.
 */
export class NodeCallbackRequest implements CallbackRequest {
  readonly [LAZY_SIGNAL]: ResponseCloseSignal;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: CallbackRequest["headers"],
    readonly body: BodyInput,
    readonly remoteAddress: string | undefined,
    res: NodeResponseLike,
    /** The adapter's `waitUntil` option (see `NodeAdapterOptions`). */
    readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined = undefined,
  ) {
    this[LAZY_SIGNAL] = new ResponseCloseSignal(res);
  }

  get signal(): AbortSignal | undefined {
    return this[LAZY_SIGNAL].signal;
  }
}

/**
 * The request headers, with every value of a header Node keeps only the first of (Authorization).
 * Node's `headersDistinct` is built (and consulted) only when a name comes twice in `rawHeaders`;
 * HTTP/2's compatibility request has none, so its values are gathered from `rawHeaders` then.
 */
export function nodeHeaders(req: NodeRequestLike): CallbackRequest["headers"] {
  const raw = req.rawHeaders;
  if (Array.isArray(raw)) {
    const limit = headerFieldLimit(req);
    if (limit !== undefined && raw.length >= 2 * limit) {
      // Some may have been dropped: the engine refuses the request (review limits-2).
      const cut: Record<string | symbol, unknown> = Object.assign(Object.create(null), req.headers);
      cut[HEADERS_CUT] = limit;
      return cut as CallbackRequest["headers"];
    }
    if (!repeatsName(raw)) return req.headers;
  }
  const distinct = req.headersDistinct ?? (Array.isArray(raw) ? distinctHeaders(raw) : undefined);
  return keepRepeatedHeaders(req.headers, distinct);
}

/**
 * How many header fields Node's HTTP/1 parser keeps (`server.maxHeadersCount`; all when 0);
 * `undefined` when it keeps them all or the request is not Node's HTTP/1 (HTTP/2 refuses a request
 * with too many instead of cutting it). A request with that many in `rawHeaders` may have lost some.
 * Node 22.23.2, 24.18.1, 26.5.1 and later refuse such a request in the parser (a bare 431, no
 * listener run): there this check is never reached; Node 20 and earlier releases cut (review nodes-1).
 */
function headerFieldLimit(req: NodeRequestLike): number | undefined {
  if (req.httpVersion !== "1.1" && req.httpVersion !== "1.0") return undefined;
  const server = (req.socket as { readonly server?: { readonly maxHeadersCount?: unknown } } | null)
    ?.server;
  if (server === undefined || server === null) return undefined;
  const max = server.maxHeadersCount;
  if (typeof max !== "number") return NODE_DEFAULT_MAX_HEADERS;
  // As Node reads it (`maxHeaderPairs = maxHeadersCount << 1` raw entries, none when not above
  // 0): 0, a negative number, NaN keep every field (review second-kit-3).
  const entries = max << 1;
  return entries > 0 ? entries / 2 : undefined;
}

/**
 * What Node 20 keeps in `headers` when the server sets no `maxHeadersCount`: 1,000 fields (its
 * parser's 2,000 raw entries, though the documentation says 2,000 headers); `rawHeaders` keeps up
 * to the next batch of 32 the parser hands over.
 */
const NODE_DEFAULT_MAX_HEADERS = 1000;

/**
 * Up to this many header names, a repeat is searched for pair by pair (no allocation: the usual
 * request has about ten); above, one pass with a set (review wire-2: a client may send 2,000,
 * before any authentication, and the pairs cost 10 to 50 ms a request).
 */
const PAIRWISE_MAX_NAMES = 16;

/**
 * Whether a header name comes twice in Node's `rawHeaders` (name, value, name, value, …), in any
 * case. Letters are compared with their case bit cleared, which may see a repeat where there is
 * none (a slower path, same answer) but never misses one. No allocation up to
 * `PAIRWISE_MAX_NAMES` names; linear in the names above.
 */
function repeatsName(raw: readonly string[]): boolean {
  if (raw.length > 2 * PAIRWISE_MAX_NAMES) return repeatsNameAmongMany(raw);
  for (let i = 2; i < raw.length; i += 2) {
    const name = raw[i] as string;
    for (let j = 0; j < i; j += 2) {
      const other = raw[j] as string;
      if (other.length === name.length && sameName(other, name)) return true;
    }
  }
  return false;
}

/** `repeatsName` for many headers: one pass, each name lower-cased once into a set. */
function repeatsNameAmongMany(raw: readonly string[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

function sameName(a: string, b: string): boolean {
  for (let k = 0; k < a.length; k++) {
    if ((a.charCodeAt(k) | 0x20) !== (b.charCodeAt(k) | 0x20)) return false;
  }
  return true;
}

/** The peer address of the TCP connection (never `X-Forwarded-For`: authentication decides that). */
export function peerAddress(req: NodeRequestLike): string | undefined {
  return req.socket?.remoteAddress ?? undefined;
}

/**
 * The options of the Node adapters (`toExpress`, `toKoa`, `toNodeListener`): as `toFetch`'s, and
 * checked by the same code (`remoteAddressOption`, `addressOf`).
 */
/**
 * The request node:http and Koa hand `remoteAddress` (`ctx.req` under Koa): Node's own, which a
 * caller may annotate as `IncomingMessage`. A framework's richer request (Express's, Koa's
 * `ctx.request`, both with an `ip`) is refused at compile time: the function would get the plain
 * Node request and read `req.ip` as undefined (review second-deploy-2).
 */
export interface PlainNodeRequest extends NodeRequestLike {
  readonly ip?: never;
}

export interface NodeAdapterOptions<TReq extends NodeRequestLike = NodeRequestLike> {
  /**
   * The client's address, in place of the socket's peer address (`req.socket.remoteAddress`).
   * Only needed by an IP allow-list, where the socket has no IP address: behind a proxy on a Unix
   * socket (nginx `proxy_pass http://unix:/run/app.sock`), `() => "127.0.0.1"` with `127.0.0.1`
   * in `ipAllowList.trustedProxies`, on a server that listens on that socket alone. Receives the
   * Node request (`ctx.req` under Koa). Left out or `null`: the socket's peer address. Returning
   * `undefined`, `null` or anything but a string (a promise is not awaited), or throwing: no address
   * (an IP allow-list refuses the call).
   */
  remoteAddress?: ((req: TReq) => string | undefined | null) | null | undefined;
  /**
   * The runtime's `waitUntil`, for every request, where the process freezes or its work stops
   * once a request is answered (a Vercel Node function, the Next.js pages router on Vercel:
   * `waitUntil` from `@vercel/functions`): work after the answer (`withIdempotency`'s record
   * retried, a late claim released) is handed to it, and it is `context.waitUntil`. Left out or
   * `null`: none (Node keeps running). See the README's "Serverless and edge runtimes".
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | null | undefined;
}

/** The option names of the Node adapters. */
const ADAPTER_OPTION_NAMES = optionNames<NodeAdapterOptions>({
  remoteAddress: true,
  waitUntil: true,
});

/**
 * A Node adapter's `waitUntil` option (the names were checked by `remoteAddressOption`): a
 * function, or none; anything else is a `TypeError` naming it, when the adapter is made.
 */
export function waitUntilOption(
  options: { readonly waitUntil?: ((promise: Promise<unknown>) => void) | null | undefined },
  adapter: string,
): ((promise: Promise<unknown>) => void) | undefined {
  const given = options.waitUntil ?? undefined;
  assertOptionalFunction(given, "waitUntil", adapter);
  return given;
}

/**
 * An adapter's `remoteAddress` option, checked once, when the adapter is made: options that are not
 * an object, or a misspelt name (which would leave every call without an address, refused by an IP
 * allow-list), are a `TypeError` naming it; so is a `remoteAddress` that is not a function (a header
 * name put there would be read as "no address" on every call, as `addressOf` swallows the
 * `TypeError`). `null` is "not set", as elsewhere (the client, `withIdempotency`, `onError`).
 */
export function remoteAddressOption<TRead extends (...args: never[]) => unknown>(
  options: { readonly remoteAddress?: TRead | null | undefined },
  adapter: string,
  names: readonly string[] = ADAPTER_OPTION_NAMES,
): TRead | undefined {
  if (options === null || typeof options !== "object") {
    throw configError("options", "must be an object", adapter);
  }
  assertKnownKeys(options as Record<string, unknown>, names, "options", adapter);
  const read = options.remoteAddress ?? undefined;
  assertOptionalFunction(read, "remoteAddress", adapter);
  return read;
}

/**
 * What a `remoteAddress` option gives; unknown when it throws (a runtime's argument it expects
 * was not passed: `callbacks(c.req.raw)` without Hono's `c`), so the call is still answered (an
 * IP allow-list then refuses it, with the reason in `onError`). Anything but a string is unknown
 * too: a number, an object, or a promise (an `async` lookup, review misbehave-1), which is not
 * awaited; its rejection is handled here, where it would otherwise be unhandled on every call
 * (Node's default ends the process on one).
 */
export function addressOf<TFirst, TRest extends unknown[]>(
  read: (first: TFirst, ...rest: TRest) => string | undefined | null,
  first: TFirst,
  rest: TRest,
): string | undefined {
  let address: unknown;
  try {
    address = read(first, ...rest);
  } catch {
    return undefined;
  }
  if (typeof address === "string") return address;
  if ((typeof address === "object" && address !== null) || typeof address === "function") {
    settleQuietly(address);
  }
  return undefined;
}

/** Handles the rejection of a thenable nobody awaits; its `then` getter or call may throw. */
function settleQuietly(value: object): void {
  try {
    const then = (value as { readonly then?: unknown }).then;
    if (typeof then === "function") {
      Reflect.apply(then, value, [undefined, ignore]);
    }
  } catch {
    // A `then` that throws: nothing pending.
  }
}

function ignore(): void {}

const NO_REST: [] = [];

/**
 * How a Node adapter reads the client's address, chosen once when it is made: the socket's peer
 * address, or the `remoteAddress` option through `addressOf` (nothing more per request without it).
 */
export function nodeAddressReader<TReq extends NodeRequestLike>(
  read: ((req: TReq) => string | undefined | null) | undefined,
): (req: TReq) => string | undefined {
  return read === undefined ? peerAddress : (req) => addressOf(read, req, NO_REST);
}

/** Statuses whose answers carry no body, so no `Content-Length` of one. */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/**
 * Headers HTTP/2 forbids (RFC 9113 §8.2.2): Node's compatibility response drops them, with an
 * `UnsupportedWarning` on stderr.
 */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** The stream of an HTTP/2 compatibility response (`Http2ServerResponse`), which HTTP/1's lacks. */
interface Http2StreamLike {
  readonly closed?: boolean;
  /** Closed before its answer was ended (a reset, a lost connection). */
  readonly aborted?: boolean;
  close(code?: number): unknown;
}

function http2StreamOf(res: NodeResponseLike): Http2StreamLike | undefined {
  const stream = (res as { readonly stream?: unknown }).stream;
  return typeof stream === "object" &&
    stream !== null &&
    typeof (stream as Partial<Http2StreamLike>).close === "function"
    ? (stream as Http2StreamLike)
    : undefined;
}

/**
 * The answer's headers as this response can carry them. On HTTP/1, as they are. On HTTP/2 (Node's
 * compatibility API), without the connection-specific ones; and an answer that says
 * `Connection: close` (a 408: the rest of the body is not awaited) ends its stream once sent,
 * with RST_STREAM NO_ERROR (RFC 9113 §8.1; Node waits for the answer's end before sending it),
 * as HTTP/1 closes the connection: a trickling client no longer holds a stream.
 */
export function headersFor(
  res: NodeResponseLike,
  headers: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const stream = http2StreamOf(res);
  if (stream === undefined) return headers;
  const kept: Record<string, string> = {};
  let close = false;
  for (const name of Object.keys(headers)) {
    const value = headers[name] as string;
    const lower = name.toLowerCase();
    if (!CONNECTION_SPECIFIC.has(lower)) kept[name] = value;
    else if (lower === "connection" && /(^|[\s,])close([\s,]|$)/i.test(value)) close = true;
  }
  if (close) endStreamAfterAnswer(stream);
  return kept;
}

/** Resets the stream with NO_ERROR once the answer is written (the writable side ended). */
function endStreamAfterAnswer(stream: Http2StreamLike): void {
  const writable = stream as Http2StreamLike & {
    readonly writableEnded?: boolean;
    once?(event: "finish", listener: () => void): unknown;
  };
  const close = (): void => {
    if (stream.closed !== true) stream.close(0);
  };
  // Koa writes the body after the middleware returns: wait for it. `close` with NO_ERROR itself
  // waits for the data already written to be sent.
  if (writable.writableEnded === true || typeof writable.once !== "function") close();
  else writable.once("finish", close);
}

/**
 * Writes the engine's answer to a Node response: one `writeHead` with every header (its
 * `Content-Length` too, as `end` would have set it), then `end`.
 */
export function writeNodeResponse(res: NodeResponseLike, response: CallbackResponse): void {
  // The client went away (the engine noticed, or not), or the exchange ended with another answer
  // (a timeout middleware's, sent in full): nobody to answer. An answer given after the merchant's
  // function ran is reported (`reportUndelivered`): the service never learns it.
  if (res.destroyed) {
    reportUndelivered(response, res.headersSent ? "preempted" : "closed");
    return;
  }
  if (connectionEnded(res)) {
    // Node ended the connection's writable side (a client's half-close after its request): what
    // is written now goes nowhere, and the response would still say it finished.
    reportUndelivered(response, res.headersSent ? "preempted" : "closed");
    res.destroy?.();
    return;
  }
  if (res.headersSent) {
    // Something else answered meanwhile (a timeout middleware); the engine's answer cannot be written.
    res.destroy?.();
    reportUndelivered(response, "preempted");
    return;
  }
  try {
    const { status, body } = response;
    const headers = headersFor(res, response.headers);
    if (typeof res.writeHead === "function") {
      res.writeHead(
        status,
        bodiless(status) || hasContentLength(headers)
          ? headers
          : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      );
    } else {
      res.statusCode = status;
      for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string);
    }
    res.end(body);
  } catch {
    // A header the server refuses: end the exchange rather than leave it hanging.
    res.destroy?.();
    reportUndelivered(response, "unwritable");
  }
}

/**
 * Whether the response's connection can carry no answer any more while the response is not
 * destroyed: Node ended its writable side when the client half-closed after sending its request
 * (`httpAllowHalfOpen` false), the request being complete and so not destroyed (review wire-4).
 * An answer written then goes nowhere, and the response even says it finished. Two property
 * reads; not on HTTP/2 (`stream`), whose `socket` is the session's, a proxy that throws once the
 * session lets go of it.
 */
export function connectionEnded(res: NodeResponseLike): boolean {
  if ("stream" in res) return false;
  const socket = (res as { readonly socket?: { readonly writable?: unknown } | null }).socket;
  return socket?.writable === false;
}

/** Whether the answer sets its own length (the engine's answers never do; an endpoint may). */
function hasContentLength(headers: Readonly<Record<string, string>>): boolean {
  for (const name of Object.keys(headers)) {
    if (name.length === 14 && name.toLowerCase() === "content-length") return true;
  }
  return false;
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

/**
 * Whether the endpoint is a single handler (a factory's, of any copy, or a wrapper keeping its
 * `callback`), not a router: then an adapter without a framework's routing (node:http, fetch,
 * Express called without `next`) applies its `matches` itself (review second-mig-2), as its
 * `handle` serves any path it is given. Decided once per adapter: a router pays nothing per call.
 */
export function isSingleHandler(endpoint: CallbackEndpoint): boolean {
  const { callback } = endpoint as { readonly callback?: unknown };
  return typeof callback === "string" && !("routes" in endpoint);
}

/**
 * A single handler's answer to a path its `matches` refused: the router's 404, the body let go
 * (as the router's 404 lets it go) and a parser's `req.body` keeping no card data; the handler
 * reports it through its onError. Its function does not run.
 */
export function notServedResponse(
  endpoint: CallbackEndpoint,
  body: BodyInput,
  pathname: string,
): CallbackResponse {
  void discardBody(body, DEFAULT_BODY_TIMEOUT_MS);
  protectParsedBody(body);
  reportNotServed(endpoint, pathname);
  return failureResponse("not_found");
}

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
