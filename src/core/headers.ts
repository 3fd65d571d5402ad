import type { HeaderReader } from "../auth/types.js";
import type { HeadersInput } from "./types.js";

/** Node header records and fetch `Headers` behind one case-insensitive reader. */
export function headerReader(input: HeadersInput): HeaderReader {
  if (typeof (input as Headers).get === "function") return input as Headers;
  return new RecordHeaders(
    input as Readonly<Record<string, string | readonly string[] | undefined>>,
  );
}

class RecordHeaders implements HeaderReader {
  readonly #record: Readonly<Record<string, string | readonly string[] | undefined>>;

  constructor(record: Readonly<Record<string, string | readonly string[] | undefined>>) {
    this.#record = record;
  }

  get(name: string): string | null {
    const lower = name.toLowerCase();
    // Node lower-cases names; a hand-built record may not.
    let value = Object.hasOwn(this.#record, lower) ? this.#record[lower] : undefined;
    if (value === undefined) {
      for (const key of Object.keys(this.#record)) {
        if (key.toLowerCase() === lower) {
          value = this.#record[key];
          break;
        }
      }
    }
    if (value === undefined) return null;
    return typeof value === "string" ? value : value.join(", ");
  }
}

type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Node's `IncomingMessage.headers` keeps only the first of a repeated `Authorization` (and of a
 * few other headers), so a header sent twice would pass as sent once; so does HTTP/2's
 * `Http2ServerRequest.headers` (`Content-Encoding` too). Given every value of every header
 * (`IncomingMessage.headersDistinct`, or `distinctHeaders` of the raw headers), this returns the
 * headers with every value of such a header, which the authentication then refuses as repeated.
 * Without repeats, `headers` itself.
 */
export function keepRepeatedHeaders(
  headers: HeaderRecord,
  distinct: Readonly<Record<string, readonly string[] | undefined>> | undefined,
): HeaderRecord {
  if (distinct === undefined || distinct === null) return headers;
  let merged: Record<string, string | readonly string[] | undefined> | undefined;
  for (const name of Object.keys(distinct)) {
    const values = distinct[name];
    // Node joins most repeated headers (so the value is not the first alone) and keeps arrays
    // for set-cookie: only a header it cut to its first value needs its other values back.
    if (!Array.isArray(values) || values.length < 2 || headers[name] !== values[0]) continue;
    merged ??= { ...headers };
    merged[name] = values;
  }
  return merged ?? headers;
}

/**
 * Every value of every header in Node's `rawHeaders` (name, value, name, value, …), under its
 * lower-cased name: `headersDistinct` for a request that has none (HTTP/2's
 * `Http2ServerRequest`, whose `rawHeaders` still hold every header as received).
 */
export function distinctHeaders(raw: readonly string[]): Record<string, string[]> {
  // No prototype: a header named `__proto__` or `constructor` is a name like any other.
  const distinct: Record<string, string[]> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    const value = String(raw[i + 1]);
    const values = distinct[name];
    if (values === undefined) distinct[name] = [value];
    else values.push(value);
  }
  return distinct;
}

/**
 * Whether fetch sends `value`, as it is, as a header value, by Node's rules (undici): no control
 * character but tab, no DEL, nothing beyond U+00FF (a header is bytes). `Headers` refuses NUL and
 * line breaks with a TypeError that quotes the value, its dispatcher the rest (a network error).
 */
export function isHeaderBytes(value: string): boolean {
  return !/[^\t\x20-\x7e\x80-\xff]/.test(value);
}

/** `isHeaderBytes`'s rule, in words, for an error that names a value without quoting it. */
export const HEADER_BYTES_RULE =
  "it must be text of Latin-1 characters (U+0020–U+007E, U+0080–U+00FF, or a tab), without a line break or other control character";

/**
 * Set by a Node adapter on the headers of a request whose header fields reached the server's
 * `maxHeadersCount` (2,000 by default): Node keeps that many and drops the rest without a word, so
 * a header sent twice (`Authorization`) could not be seen. The engine refuses such a request
 * (431) before reading a credential (review limits-2). Its value is the limit. A registered,
 * versioned key, not a `Symbol()` of this module: the adapter may come from the other build or
 * another copy of the library than the handler, which then never saw the mark and took the request
 * (review dual-1). `@1` is the value's meaning (a number, the limit); bump it when that changes.
 */
export const HEADERS_CUT: unique symbol = Symbol.for("crossborder-callbacks/headersCut@1") as never;

/** The limit a Node adapter found the request's header fields cut at, if it did. */
export function headersCutAt(headers: unknown): number | undefined {
  if (headers === null || typeof headers !== "object") return undefined;
  const limit = (headers as { readonly [HEADERS_CUT]?: unknown })[HEADERS_CUT];
  return typeof limit === "number" ? limit : undefined;
}
