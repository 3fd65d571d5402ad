import type { HeaderReader } from "../auth/types.js";
import type { BodyInput } from "./types.js";

/** The outcome of reading a body: its bytes, a value a framework already parsed, or a failure. */
export type ReadBody =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array; readonly owned: boolean }
  | { readonly kind: "parsed"; readonly value: unknown }
  | { readonly kind: "empty" }
  | { readonly kind: "too_large" }
  | { readonly kind: "compressed"; readonly encoding: string };

const encoder = new TextEncoder();
const EMPTY: ReadBody = { kind: "empty" };

function isByteStream(body: object): body is ReadableStream<Uint8Array> {
  return typeof (body as ReadableStream).getReader === "function";
}

function isAsyncIterable(body: object): body is AsyncIterable<Uint8Array> {
  return typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === "function";
}

/**
 * Reads the body within `limit` bytes. The limit is enforced while reading (and up front from
 * `Content-Length`), so an oversized body is refused before it is buffered or parsed. A body the
 * engine reads itself must not be compressed: inflating is left to a framework that does it
 * within its own limit.
 */
export async function readBody(
  body: BodyInput,
  headers: HeaderReader,
  limit: number,
): Promise<ReadBody> {
  if (body === undefined || body === null) return EMPTY;
  if (typeof body === "string") {
    if (body.length === 0) return EMPTY;
    // UTF-8 never takes fewer bytes than UTF-16 code units; only a long text needs encoding first.
    if (body.length > limit) return { kind: "too_large" };
    const bytes = encoder.encode(body);
    return bytes.byteLength > limit ? { kind: "too_large" } : { kind: "bytes", bytes, owned: true };
  }
  if (body instanceof Uint8Array) {
    if (body.byteLength === 0) return EMPTY;
    return body.byteLength > limit
      ? { kind: "too_large" }
      : { kind: "bytes", bytes: body, owned: false };
  }
  if (typeof body !== "object") return { kind: "parsed", value: body };
  const streaming = isByteStream(body);
  if (!streaming && !isAsyncIterable(body)) return { kind: "parsed", value: body };

  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    await discard(body);
    return { kind: "compressed", encoding };
  }
  const declared = Number(headers.get("content-length") ?? Number.NaN);
  if (declared > limit) {
    await discard(body);
    return { kind: "too_large" };
  }
  return streaming ? readStream(body, limit) : readIterable(body, limit);
}

/** Reads a byte stream within `limit` bytes; cancels it as soon as the limit is passed. */
export async function readStream(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<ReadBody> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        return { kind: "too_large" };
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return concat(chunks, total);
}

async function readIterable(source: AsyncIterable<Uint8Array>, limit: number): Promise<ReadBody> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    total += bytes.byteLength;
    // Leaving the loop early ends the iteration, which destroys a Node stream: nothing more is read.
    if (total > limit) return { kind: "too_large" };
    chunks.push(bytes);
  }
  return concat(chunks, total);
}

function concat(chunks: Uint8Array[], total: number): ReadBody {
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
 * adapters then drain the rest, within a cap, so the answer still reaches the client). */
export async function discardBody(body: BodyInput): Promise<void> {
  if (body === null || typeof body !== "object" || body instanceof Uint8Array) return;
  if (isByteStream(body) || isAsyncIterable(body)) await discard(body);
}

async function discard(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>) {
  try {
    if (isByteStream(body)) await body.cancel();
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
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

/**
 * Decodes UTF-8 (a BOM is dropped), parses JSON and bounds its nesting depth. The reason never
 * quotes the body: V8's JSON.parse messages do, so they are not passed on.
 */
export function parseJson(bytes: Uint8Array, maxDepth: number): ParsedJson {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "Request body is not valid UTF-8" };
  }
  // Parsed first: JSON.parse is iterative in V8, JavaScriptCore and SpiderMonkey, so any depth
  // parses without recursion (and a RangeError would be caught below). Walking the parsed value
  // costs a fraction of scanning every byte; the byte scan runs only when parsing failed, so a
  // body both too deep and malformed is still reported as too deep, as before.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return exceedsDepth(bytes, maxDepth)
      ? { ok: false, reason: `Request body is nested deeper than ${maxDepth} levels` }
      : { ok: false, reason: "Request body is not valid JSON" };
  }
  if (valueExceedsDepth(value, maxDepth)) {
    return { ok: false, reason: `Request body is nested deeper than ${maxDepth} levels` };
  }
  return { ok: true, value };
}

/**
 * Parameters in a POST body (GetCheckoutCartInfo): a JSON object, or form fields
 * (`application/x-www-form-urlencoded`), which become an object of strings.
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
  for (const [key, value] of new URLSearchParams(text)) {
    // Own data properties only: a `__proto__` field stays a plain key.
    Object.defineProperty(fields, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { ok: true, value: fields };
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

/**
 * Depth of a parsed JSON value (ours, or a framework's `req.body`), bounded: stops as soon as
 * `maxDepth` is passed. Iterative, and allocates only its two stacks. The root counts as
 * level 1, like the byte scan's first bracket.
 */
export function valueExceedsDepth(root: unknown, maxDepth: number): boolean {
  if (root === null || typeof root !== "object") return false;
  const nodes: object[] = [root];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    const values: readonly unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (let i = 0; i < values.length; i++) {
      const child = values[i];
      if (child === null || typeof child !== "object") continue;
      if (depth >= maxDepth) return true;
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}
