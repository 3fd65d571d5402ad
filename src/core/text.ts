/** Text tests shared across the library. */

/** Whether the text holds a C0 control character (NUL, CR, LF, TAB among them) or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

const NAMED_ESCAPES: Readonly<Record<number, string>> = { 10: "\\n", 13: "\\r", 9: "\\t" };

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
function breaksLine(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
}

/**
 * The text on one line of a log: C0 controls, DEL and C1 controls (NEL, a terminal's CSI) and the
 * Unicode line and paragraph separators written as escapes (`\n`, `\r`, `\t`, `\x1b`,
 * `\u2028`), so that a message cannot break the line or forge another one.
 */
export function escapeControls(text: string): string {
  let out = "";
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!breaksLine(code)) continue;
    const written =
      NAMED_ESCAPES[code] ??
      (code > 0xff
        ? `\\u${code.toString(16).padStart(4, "0")}`
        : `\\x${code.toString(16).padStart(2, "0")}`);
    out += text.slice(copied, i) + written;
    copied = i + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A text as it is: the masker or cleaner where nothing is to be masked. */
export function unchanged(text: string): string {
  return text;
}

/**
 * `JSON.stringify`'s text with no lone surrogate (ENC-2): it writes one (a merchant's text cut
 * inside an emoji) as the escape `\ud83d`, valid JSON but not I-JSON (RFC 7493 §2.1), which strict
 * readers (System.Text.Json) refuse. Each becomes `\ufffd`, as .NET's encoders replace it. Only
 * when the text holds `\ud` at all (one `includes`); a pair is written raw by `JSON.stringify`, so
 * every such escape it wrote is a lone one (an escaped backslash before `ud…` is text, kept).
 */
export function wellFormedJson(text: string): string {
  return text.includes("\\ud") ? text.replace(LONE_SURROGATE_ESCAPE, "$1\\ufffd") : text;
}

const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/gi;

/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether a text holds a lone surrogate (half of a character outside the BMP: a text cut inside an
 * emoji), which no UTF-8 encoder can write: `encodeURIComponent` throws on it, `URLSearchParams`
 * and `TextEncoder` write U+FFFD instead. A text without surrogates at all costs one test.
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
