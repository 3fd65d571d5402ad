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
