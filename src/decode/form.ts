/**
 * Form-URL encoding exactly as .NET's `HttpUtility.UrlEncode` writes it, its strict inverse, and
 * the heuristic that tells an encoded value from a plain one. Web APIs only: this runs in every
 * runtime the library supports (Node, Workers, Deno, Bun).
 */

const PLUS = 0x2b;
const PERCENT = 0x25;
const SPACE = 0x20;

/** 1 for the ASCII characters `HttpUtility.UrlEncode` keeps as they are. */
const URL_SAFE = new Uint8Array(128);
/** 1 for every ASCII character an encoded value can contain (what the encoder emits). */
const ENCODED_ALPHABET = new Uint8Array(128);
/** `%xx` with lower-case hex for every byte, as .NET writes it. */
const PCT_BYTE: readonly string[] = Array.from(
  { length: 256 },
  (_, b) => `%${b.toString(16).padStart(2, "0")}`,
);

for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!*()") {
  URL_SAFE[ch.charCodeAt(0)] = 1;
  ENCODED_ALPHABET[ch.charCodeAt(0)] = 1;
}
ENCODED_ALPHABET[PERCENT] = 1;
ENCODED_ALPHABET[PLUS] = 1;
// .NET Framework before 4.0 kept `'` unencoded: tolerate it so such values still count as encoded.
ENCODED_ALPHABET[0x27] = 1;
// An RFC 3986 encoder (`encodeURIComponent`, `Uri.EscapeDataString`) keeps `~`: 001 §4.6 says the
// tracking URL is sent percent-encoded, so such a value counts as encoded too (review spec).
ENCODED_ALPHABET[0x7e] = 1;

function pct(byte: number): string {
  return PCT_BYTE[byte] ?? "";
}

/**
 * Encodes like .NET's `HttpUtility.UrlEncode`: space → `+`; `A-Z a-z 0-9 - _ . ! * ( )` kept;
 * every other character → its UTF-8 bytes as `%xx` in lower-case hex (`+` → `%2b`, `@` → `%40`).
 * A lone surrogate is encoded as U+FFFD (`%ef%bf%bd`), as .NET's UTF-8 encoder replaces it.
 * Returns the input itself when nothing needs encoding.
 */
export function encodeFormValue(value: string): string {
  const len = value.length;
  let out = "";
  let last = 0;
  let changed = false;
  for (let i = 0; i < len; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) {
      if (URL_SAFE[c] === 1) continue;
      out += value.slice(last, i) + (c === SPACE ? "+" : pct(c));
    } else {
      out += value.slice(last, i);
      if (c < 0x800) {
        out += pct(0xc0 | (c >> 6)) + pct(0x80 | (c & 0x3f));
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const next = value.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          out +=
            pct(0xf0 | (cp >> 18)) +
            pct(0x80 | ((cp >> 12) & 0x3f)) +
            pct(0x80 | ((cp >> 6) & 0x3f)) +
            pct(0x80 | (cp & 0x3f));
          i++;
        } else {
          out += "%ef%bf%bd";
        }
      } else {
        out += pct(0xe0 | (c >> 12)) + pct(0x80 | ((c >> 6) & 0x3f)) + pct(0x80 | (c & 0x3f));
      }
    }
    last = i + 1;
    changed = true;
  }
  return changed ? out + value.slice(last) : value;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  // NaN (read past the end) fails both range checks and lands here as -1.
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/** The byte of the `%xx` triplet at `i` (whose `%` the caller checked), or -1 when malformed. */
function byteAt(s: string, i: number): number {
  const hi = hexDigit(s.charCodeAt(i + 1));
  const lo = hexDigit(s.charCodeAt(i + 2));
  return hi < 0 || lo < 0 ? -1 : (hi << 4) | lo;
}

/**
 * Percent-decodes as strict UTF-8 (Unicode Table 3-7: no overlongs, no surrogates, nothing above
 * U+10FFFF, no truncated sequences), each `+` of the text between the sequences a space. Written
 * by hand rather than with `decodeURIComponent` so a malformed value costs no exception and
 * behaves the same in V8 and JavaScriptCore. `plus` is the index of the first `+` (-1: none).
 */
function percentDecode(s: string, first: number, plus: number): string | undefined {
  let out = "";
  let last = 0;
  let i = first;
  while (i !== -1) {
    if (plus !== -1 && plus < i) {
      out += spaced(s, last, i, plus);
      plus = s.indexOf("+", i);
    } else {
      out += s.slice(last, i);
    }
    const b0 = byteAt(s, i);
    if (b0 < 0) return undefined;
    i += 3;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      last = i;
      i = s.indexOf("%", i);
      continue;
    }
    let need: number;
    let cp: number;
    let min = 0x80;
    let max = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      if (b0 === 0xe0) min = 0xa0;
      else if (b0 === 0xed) max = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      if (b0 === 0xf0) min = 0x90;
      else if (b0 === 0xf4) max = 0x8f;
    } else {
      return undefined;
    }
    for (let k = 0; k < need; k++) {
      if (s.charCodeAt(i) !== PERCENT) return undefined;
      const b = byteAt(s, i);
      if (b < min || b > max) return undefined;
      min = 0x80;
      max = 0xbf;
      cp = (cp << 6) | (b & 0x3f);
      i += 3;
    }
    out +=
      cp < 0x10000
        ? String.fromCharCode(cp)
        : String.fromCharCode(0xd7c0 + (cp >> 10), 0xdc00 | (cp & 0x3ff));
    last = i;
    if (plus !== -1 && plus < last) plus = s.indexOf("+", last);
    i = s.indexOf("%", i);
  }
  return plus === -1 ? out + s.slice(last) : out + spaced(s, last, s.length, plus);
}

/**
 * Decodes a form-URL-encoded value exactly once: `+` → space first, then `%xx` (either case of
 * hex) as UTF-8. Returns `undefined` for a malformed sequence (`%`, `%zz`, `100%`, `%E0%A4%A`,
 * `%ED%A0%80`) and never throws. Returns the input itself when it has no `%` and no `+`.
 *
 * Issue 13: one pass. A `+` never becomes a `%` nor a hex digit (nor the reverse), so turning each
 * `+` of the text between the sequences into a space as it is copied gives what turning them all
 * first did, without the intermediate string (and its flattening for the `%` search).
 */
export function decodeFormValue(value: string): string | undefined {
  const plus = value.indexOf("+");
  const percent = value.indexOf("%");
  if (percent === -1) return plus === -1 ? value : spaced(value, 0, value.length, plus);
  return percentDecode(value, percent, plus);
}

/**
 * `value.slice(from, to)` with each `+` a space; `first` is the index of its first `+` (within
 * the range). An indexOf walk measured faster than `replaceAll` on V8 for short values.
 */
function spaced(value: string, from: number, to: number, first: number): string {
  let out = "";
  let last = from;
  for (let i = first; i !== -1 && i < to; i = value.indexOf("+", last)) {
    out += `${value.slice(last, i)} `;
    last = i + 1;
  }
  return out + value.slice(last, to);
}

/**
 * Whether a value looks form-encoded (the `auto` policy). The rule, in order:
 * 1. no `%` and no `+` → false: there is nothing to decode;
 * 2. starts with `+` and the rest holds no other `+` and no `%` → false: a phone's plus
 *    (`+442079460958`). With a second `+` or a `%` it is an encoded value whose text starts with
 *    a space (`+548+Market+St.`, `+jane%2btag%40example.com`): .NET writes a real plus as `%2b`,
 *    so a phone's plus is never followed by another `+`. Left plain: a leading space followed by
 *    one word of the encoder's alphabet (`+York`), which cannot be told from a phone;
 * 3. contains any character the encoder never emits → false. The encoder's output holds only
 *    `A-Z a-z 0-9 - _ . ! * ( ) % +` (and `'` from old .NET, `~` from an RFC 3986 encoder), so this covers a literal space or
 *    `@` (the operator's plain addresses) as well as `:`, `/`, `,`, `#`, tabs and any non-ASCII;
 * 4. otherwise → true.
 */
export function looksEncoded(value: string): boolean {
  if (value.indexOf("%") === -1 && value.indexOf("+") === -1) return false;
  if (
    value.charCodeAt(0) === PLUS &&
    value.indexOf("+", 1) === -1 &&
    value.indexOf("%", 1) === -1
  ) {
    return false;
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80 || ENCODED_ALPHABET[c] !== 1) return false;
  }
  // Both `~` and `+`: neither encoder's output (an RFC 3986 encoder writes a space and a plus as
  // %20 and %2B; HttpUtility.UrlEncode writes `~` as %7e): a plain value (review final2).
  return value.indexOf("~") === -1 || value.indexOf("+") === -1;
}

/**
 * The fields of a form-URL-encoded text (a query without its `?`, a form body) into `fields`, in
 * one pass, the first value of a repeated name winning, each an own data property (a
 * `__proto__` name too). Without a `%` (the common case) `URLSearchParams` reads it: `+` is a space
 * and nothing else changes. With one, each name and value is decoded by `decodeFormValue` (`+`,
 * then strict UTF-8 `%xx`); one that does not decode (`cart%ff1`, `%E0%A4%A`) is kept raw, as
 * sent, instead of U+FFFD (two tokens would become one), and its name is returned (for
 * `context.decoding.malformed`). GetCheckoutCartInfo's query and its POST form body both read so
 * (review ENC-4, SECOND-ENC-3).
 */
export function readFormFields(
  text: string,
  fields: Record<string, unknown>,
): string[] | undefined {
  if (!text.includes("%")) {
    for (const [key, value] of new URLSearchParams(text)) {
      if (!Object.hasOwn(fields, key)) setOwn(fields, key, value);
    }
    return undefined;
  }
  let malformed: string[] | undefined;
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const rawValue = equals === -1 ? "" : pair.slice(equals + 1);
    const name = decodeFormValue(rawName);
    const value = decodeFormValue(rawValue);
    const key = name ?? rawName;
    if (Object.hasOwn(fields, key)) continue;
    setOwn(fields, key, value ?? rawValue);
    if (name === undefined || value === undefined) {
      malformed ??= [];
      malformed.push(key);
    }
  }
  return malformed;
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
