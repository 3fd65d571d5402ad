import type { HeaderReader } from "../auth/types.js";
import { readFormFields } from "../decode/form.js";
import { isBytes } from "./bytes.js";
import type { BodyInput } from "./types.js";

/** The outcome of reading a body: its bytes, a value a framework already parsed, or a failure. */
export type ReadBody =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array; readonly owned: boolean }
  | { readonly kind: "parsed"; readonly value: unknown }
  | { readonly kind: "empty" }
  | { readonly kind: "too_large" }
  | { readonly kind: "compressed"; readonly encoding: string }
  /** Not complete within the deadline: the read was abandoned. */
  | { readonly kind: "timeout" }
  /**
   * The source failed while being read: the client went away, or its stream broke. `maybeWhole`:
   * the body may have arrived whole before the client left (HTTP/2's compatibility request, whose
   * reset ends it and lets go of what it held whether or not END_STREAM came first).
   */
  | { readonly kind: "failed"; readonly error: unknown; readonly maybeWhole?: true }
  /**
   * Something read the body before the library (a middleware), leaving no parsed body: the
   * merchant's setup is at fault, not the sender.
   */
  | { readonly kind: "consumed" }
  /**
   * The source handed over something other than bytes or text (a stream in object mode): the
   * merchant's setup is at fault, not the sender.
   */
  | { readonly kind: "unreadable" };

const encoder = new TextEncoder();
export const EMPTY: ReadBody = { kind: "empty" };
export const TOO_LARGE: ReadBody = { kind: "too_large" };
export const TIMEOUT: ReadBody = { kind: "timeout" };
export const CONSUMED: ReadBody = { kind: "consumed" };
export const UNREADABLE: ReadBody = { kind: "unreadable" };

/**
 * A body that reads itself, faster than through the async iteration it also offers: the Node
 * adapters' request stream, read by its events. `readBody` checks the encoding and the declared
 * length first, then hands over the limit and the deadline; `discardBody` lets it go.
 */
export const SELF_READ = Symbol.for("crossborder-callbacks/selfRead@1");
export const SELF_DISCARD = Symbol.for("crossborder-callbacks/selfDiscard@1");

/**
 * How long a body may take to arrive (`bodyTimeoutMs`'s default): also how long the rest of a
 * refused body is drained before the connection is let go.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
// Registered symbols (`Symbol.for`), not `instanceof`: an application may load the engine from one
// build (CommonJS) and an adapter from the other (ES modules), each with its own classes. Each
// key carries its protocol (`@1`), bumped when the shape behind it changes, so that two copies of
// different shapes ignore each other's marks instead of misreading them (review dual-3).
const DECODED = Symbol.for("crossborder-callbacks/decodedBody@1");

export interface SelfReadingBody {
  /**
   * Reads within `limit` bytes and `timeoutMs`; never rejects (a failure is `failed`). A body that
   * is all here may be answered as it is, without a promise (issue 13: a turn less per call).
   */
  [SELF_READ](limit: number, timeoutMs: number): ReadBody | Promise<ReadBody>;
  /**
   * Lets go of the body without reading it: the rest is drained, within a cap and within
   * `timeoutMs` (the endpoint's `bodyTimeoutMs`; its default when not given), then the connection
   * is let go.
   */
  [SELF_DISCARD](timeoutMs?: number): void;
}

/**
 * What an adapter passes for a body something read before the library, leaving nothing parsed
 * (a fetch `Request` whose body was used, a Node stream a middleware read to its end).
 */
export const CONSUMED_BODY = {
  [SELF_READ]: () => CONSUMED,
  [SELF_DISCARD]: () => undefined,
} satisfies SelfReadingBody as BodyInput;

/**
 * Text or bytes a framework's body parser left (`express.text()`, `express.raw()`, a Koa parser's
 * `rawBody`), as the body the engine takes: the parser undid the `Content-Encoding` (or refused
 * the body), so the engine reads it whatever that header says. Only a transfer coding besides
 * chunked, which parsers leave as it is, is refused.
 */
export function decodedBody(value: string | Uint8Array): BodyInput {
  return new DecodedBody(value) as SelfReadingBody as BodyInput;
}

class DecodedBody implements SelfReadingBody {
  readonly [DECODED] = true;

  constructor(readonly value: string | Uint8Array) {}

  [SELF_READ](limit: number): ReadBody {
    return rawBody(this.value, limit);
  }

  [SELF_DISCARD](): void {
    // Already read by the parser: nothing to let go.
  }
}

function isDecoded(body: object): body is DecodedBody {
  return (body as Partial<DecodedBody>)[DECODED] === true;
}

function isSelfReading(body: object): body is SelfReadingBody {
  return typeof (body as Partial<SelfReadingBody>)[SELF_READ] === "function";
}
/** What an `expired` promise given to {@link readStream} resolves with. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/** A timer that resolves `expired` after `ms`; `clear()` once the read is over. */
function deadline(ms: number): { readonly expired: Promise<typeof TIMED_OUT>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  return { expired, clear: () => clearTimeout(timer) };
}

function isByteStream(body: object): body is ReadableStream<Uint8Array> {
  return typeof (body as ReadableStream).getReader === "function";
}

function isAsyncIterable(body: object): body is AsyncIterable<Uint8Array> {
  return typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === "function";
}

/**
 * Whether a body is an object a framework's parser made (`req.body`), not bytes or a stream the
 * engine reads: the value the engine takes as the parsed body.
 */
export function isParsedBody(body: unknown): boolean {
  return (
    typeof body === "object" &&
    body !== null &&
    !isBytes(body) &&
    !isSelfReading(body) &&
    !isByteStream(body) &&
    !isAsyncIterable(body)
  );
}

/**
 * A framework's parsed body: its parser read the bytes (and inflated them, if compressed), so only
 * the length the request declared is left to hold the library's limit to.
 */
function parsedWithin(value: unknown, headers: HeaderReader, limit: number): ReadBody {
  return declaredLength(headers) > limit ? TOO_LARGE : { kind: "parsed", value };
}

/** Text or bytes as the engine reads them: measured against `limit` (UTF-8 for text). */
function rawBody(body: string | Uint8Array, limit: number): ReadBody {
  if (typeof body === "string") {
    if (body.length === 0) return EMPTY;
    // UTF-8 never takes fewer bytes than UTF-16 code units; only a long text needs encoding first.
    if (body.length > limit) return TOO_LARGE;
    const bytes = encoder.encode(body);
    return bytes.byteLength > limit ? TOO_LARGE : { kind: "bytes", bytes, owned: true };
  }
  if (body.byteLength === 0) return EMPTY;
  return body.byteLength > limit ? TOO_LARGE : { kind: "bytes", bytes: body, owned: false };
}

/**
 * How the body is coded, when the engine cannot read it as it is: a `Content-Encoding` other than
 * identity, or a transfer coding (`transferCoding`). `undefined` for a plain body. A request with
 * a `Content-Length` (`length`, the header's value) has no transfer coding (RFC 9112 §6.2; Node
 * refuses one with both unless run with `insecureHTTPParser`), so the usual request costs no
 * look-up of a header it lacks; such a request's coded body is read as sent (a 400 if it is not
 * JSON then, not the 415).
 */
function codingOf(headers: HeaderReader, length: string | null): string | undefined {
  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") return encoding;
  return length === null ? transferCoding(headers) : undefined;
}

/**
 * A `Transfer-Encoding` with a coding besides chunked (and identity), with what it says:
 * `gzip, chunked` (Node undoes the chunking and hands the gzip bytes on; it answers 400 itself to
 * one not ending in chunked). `undefined` for none, or chunked alone.
 */
function transferCoding(headers: HeaderReader): string | undefined {
  const transfer = headers.get("transfer-encoding");
  if (transfer === null || transfer === "chunked") return undefined;
  for (const part of transfer.split(",")) {
    const coding = part.trim().toLowerCase();
    if (coding !== "" && coding !== "chunked" && coding !== "identity") {
      return `${transfer.trim().toLowerCase()} (Transfer-Encoding)`;
    }
  }
  return undefined;
}

/** The request's `Content-Length`, `NaN` when absent or not a number. */
function declaredLength(headers: HeaderReader): number {
  return Number(headers.get("content-length") ?? Number.NaN);
}

/**
 * Reads the body within `limit` bytes and `timeoutMs`. The limit is enforced while reading (and up
 * front from `Content-Length`), so an oversized body is refused before it is buffered or parsed.
 * A stream not complete within `timeoutMs` is abandoned (`timeout`), one that fails is `failed`.
 * A body the engine reads itself (a stream, text or bytes) must not be compressed: inflating is
 * left to a framework that does it within its own limit (its text or bytes: `decodedBody`).
 */
export function readBody(
  body: BodyInput,
  headers: HeaderReader,
  limit: number,
  timeoutMs: number,
): ReadBody | Promise<ReadBody> {
  if (body === undefined || body === null) {
    // No body, but one declared compressed (Bun hands `null` for an empty gzip body): 415, as the
    // same request gets where the runtime passes the empty stream on.
    const encoding = codingOf(headers, headers.get("content-length"));
    return encoding === undefined ? EMPTY : { kind: "compressed", encoding };
  }
  if (typeof body === "object" && isDecoded(body)) {
    const encoding = headers.get("content-length") === null ? transferCoding(headers) : undefined;
    return encoding === undefined ? rawBody(body.value, limit) : { kind: "compressed", encoding };
  }
  // Text or bytes are the raw body, coded as the headers say (a custom adapter's, a serverless
  // platform's): refused when compressed, as a stream is.
  if (typeof body === "string" || isBytes(body)) {
    const encoding = codingOf(headers, headers.get("content-length"));
    return encoding === undefined ? rawBody(body, limit) : { kind: "compressed", encoding };
  }
  if (typeof body !== "object") return parsedWithin(body, headers, limit);
  const selfReading = isSelfReading(body);
  const streaming = !selfReading && isByteStream(body);
  if (!selfReading && !streaming && !isAsyncIterable(body)) {
    return parsedWithin(body, headers, limit);
  }

  const length = headers.get("content-length");
  const encoding = codingOf(headers, length);
  if (encoding !== undefined) return discarded(body, timeoutMs, { kind: "compressed", encoding });
  if (Number(length ?? Number.NaN) > limit) {
    return discarded(body, timeoutMs, { kind: "too_large" });
  }
  if (selfReading) {
    let reading: ReadBody | PromiseLike<ReadBody>;
    try {
      reading = body[SELF_READ](limit, timeoutMs);
      // A body all here comes as it is (the Node adapters'): no promise, no turn of the queue. A
      // `then` that cannot be read fails the read, as a rejection does (review second-speed-4).
      if (!isThenable(reading)) return reading;
    } catch (error) {
      return { kind: "failed", error };
    }
    return settledRead(reading);
  }
  return readSource(body, streaming, limit, timeoutMs);
}

/** A self-reading body's read when it comes as a promise: a rejection is a `failed` read. */
async function settledRead(reading: PromiseLike<ReadBody>): Promise<ReadBody> {
  try {
    return await reading;
  } catch (error) {
    return { kind: "failed", error };
  }
}

/** What `readBody` answers for a body it lets go unread (compressed, declared too large). */
async function discarded(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | SelfReadingBody,
  timeoutMs: number,
  result: ReadBody,
): Promise<ReadBody> {
  await discard(body, timeoutMs);
  return result;
}

/** Whatever `await` would adopt: an object or a function with a `then` method. */
function isThenable(value: unknown): value is PromiseLike<ReadBody> {
  return (
    ((typeof value === "object" && value !== null) || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** A stream or an async iterable of the body's bytes, read within the limit and the deadline. */
async function readSource(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  streaming: boolean,
  limit: number,
  timeoutMs: number,
): Promise<ReadBody> {
  // Locked by a reader someone else took: its bytes are out of reach (getReader would throw).
  if (streaming && (body as ReadableStream<Uint8Array>).locked) return CONSUMED;
  const timer = deadline(timeoutMs);
  try {
    return streaming
      ? await readStream(body as ReadableStream<Uint8Array>, limit, timer.expired)
      : await readIterable(body as AsyncIterable<Uint8Array>, limit, timer.expired);
  } catch (error) {
    // The source failed while being read: the client went away, or its stream broke.
    return { kind: "failed", error };
  } finally {
    timer.clear();
  }
}

/**
 * Reads a byte stream within `limit` bytes, cancelling it as soon as the limit is passed, and
 * before `expired` settles (`timeout`), if given. A stream that fails rejects, what was read of it
 * zeroed first.
 *
 * Without a deadline each read is awaited alone, never raced with a promise that never settles:
 * every race adds a reaction to each promise raced, kept until that promise settles, and the
 * reaction holds the race's result (the chunk read). Raced with a long-lived promise, every chunk
 * ever read would stay reachable. `expired` is the request's own, let go with it.
 */
export async function readStream(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  expired?: Promise<typeof TIMED_OUT>,
): Promise<ReadBody> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const step =
        expired === undefined ? await reader.read() : await Promise.race([reader.read(), expired]);
      if (step === TIMED_OUT) {
        // Not awaited: a source that hangs must not hold the answer back.
        reader.cancel().catch(() => undefined);
        zero(chunks);
        return TIMEOUT;
      }
      if (step.done) break;
      const chunk: unknown = step.value;
      if (!isBytes(chunk)) {
        await reader.cancel().catch(() => undefined);
        zero(chunks);
        return UNREADABLE;
      }
      total += chunk.byteLength;
      // Kept before the check, so a piece past the limit is zeroed with the rest.
      chunks.push(chunk);
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        zero(chunks);
        return TOO_LARGE;
      }
    }
  } catch (error) {
    zero(chunks);
    throw error;
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // A read still pending on a cancelled stream: the lock goes with the stream.
    }
  }
  return concat(chunks, total);
}

async function readIterable(
  source: AsyncIterable<Uint8Array>,
  limit: number,
  expired: Promise<typeof TIMED_OUT>,
): Promise<ReadBody> {
  const iterator = source[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), expired]);
      if (step === TIMED_OUT) {
        // Ends the iteration without waiting for it (a pending read may never settle); the Node
        // adapters then let the rest go, and the answer's `Connection: close` ends the exchange.
        void endIteration(iterator);
        zero(chunks);
        return TIMEOUT;
      }
      if (step.done) break;
      const chunk: unknown = step.value;
      if (typeof chunk !== "string" && !isBytes(chunk)) {
        await endIteration(iterator);
        zero(chunks);
        return UNREADABLE;
      }
      const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
      total += bytes.byteLength;
      chunks.push(bytes);
      if (total > limit) {
        // Ending the iteration early lets the Node adapters discard the rest: nothing more is kept.
        await endIteration(iterator);
        zero(chunks);
        return TOO_LARGE;
      }
    }
  } catch (error) {
    zero(chunks);
    throw error;
  }
  return concat(chunks, total);
}

async function endIteration(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    await iterator.return?.();
  } catch {
    // The body is being refused; a failure to end its iteration changes nothing.
  }
}

/** Zeroes what was read of a body that will not be used (it may hold card data). */
export function zero(chunks: readonly Uint8Array[]): void {
  for (const chunk of chunks) chunk.fill(0);
}

/** The chunks as one body (each zeroed once copied); one chunk is the body itself. */
export function concat(chunks: Uint8Array[], total: number): ReadBody {
  if (total === 0) return EMPTY;
  if (chunks.length === 1) return { kind: "bytes", bytes: chunks[0] as Uint8Array, owned: true };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
    chunk.fill(0);
  }
  return { kind: "bytes", bytes, owned: true };
}

/** Lets go of a body that will not be read: cancels a stream, ends an iteration (the Node
 * adapters then drain the rest, within a cap and `timeoutMs`, so the answer still reaches the
 * client and a client that keeps sending is let go). */
export async function discardBody(body: BodyInput, timeoutMs?: number): Promise<void> {
  if (body === null || typeof body !== "object" || isBytes(body)) return;
  if (isSelfReading(body) || isByteStream(body) || isAsyncIterable(body)) {
    await discard(body, timeoutMs);
  }
}

async function discard(
  body: SelfReadingBody | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  timeoutMs?: number,
) {
  try {
    if (isSelfReading(body)) body[SELF_DISCARD](timeoutMs);
    else if (isByteStream(body)) await body.cancel();
    else {
      const iterator = body[Symbol.asyncIterator]();
      await iterator.return?.();
    }
  } catch {
    // The body is being refused; a failure to drain it changes nothing.
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });

export type ParsedJson =
  | {
      readonly ok: true;
      readonly value: unknown;
      /** A form's fields kept raw, their `%xx` not decoding (`parseForm`; rare). */
      readonly malformed?: readonly string[];
    }
  | { readonly ok: false; readonly reason: string };

/** Why a body nested too deep is refused: the same words for the byte scan and the walk. */
export function tooDeep(maxDepth: number): string {
  return `Request body is nested deeper than ${maxDepth} levels`;
}

/**
 * Decodes UTF-8 (a BOM is dropped) and parses JSON. Its nesting depth is bounded afterwards, by
 * the walk that seals the parsed value (`sealBody`). The reason never quotes the body: V8's
 * JSON.parse messages do, so they are not passed on.
 */
export function parseJson(bytes: Uint8Array, maxDepth: number): ParsedJson {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "Request body is not valid UTF-8" };
  }
  // JSON.parse is iterative in V8, JavaScriptCore and SpiderMonkey, so any depth parses without
  // recursion (and a RangeError would be caught below). The byte scan runs only when parsing
  // failed, so a body both too deep and malformed is still reported as too deep.
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return {
      ok: false,
      reason: exceedsDepth(bytes, maxDepth) ? tooDeep(maxDepth) : "Request body is not valid JSON",
    };
  }
}

/**
 * Parameters in a POST body (GetCheckoutCartInfo): a JSON object, or form fields
 * (`application/x-www-form-urlencoded`), which become an object of strings. A field repeated in
 * a form keeps its first value, as a repeated query parameter does (`URLSearchParams.get`); a
 * name or value whose `%xx` does not decode is kept raw and listed in `malformed`.
 */
export function parseForm(bytes: Uint8Array, maxDepth: number): ParsedJson {
  let text: string;
  try {
    text = decoder.decode(bytes).trim();
  } catch {
    return { ok: false, reason: "Request body is not valid UTF-8" };
  }
  if (text.startsWith("{")) return parseJson(bytes, maxDepth);
  const fields: Record<string, string> = {};
  // Decoded as the query is: a value whose `%xx` does not decode is kept raw, and named
  // (SECOND-ENC-3). Own data properties only: a `__proto__` field stays a plain key (until
  // `sealBody` drops it).
  const malformed = readFormFields(text, fields);
  return malformed === undefined
    ? { ok: true, value: fields }
    : { ok: true, value: fields, malformed };
}

/** Scans the raw JSON bytes for bracket depth, skipping strings. No recursion, no allocation. */
function exceedsDepth(bytes: Uint8Array, maxDepth: number): boolean {
  // Every level costs at least one byte; a short body cannot be too deep.
  if (bytes.byteLength <= maxDepth) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (b === 0x7d || b === 0x5d) depth--;
  }
  return false;
}
