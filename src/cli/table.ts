/** Text from the network made safe for a terminal, and shortened. */

/**
 * The Unicode bidirectional format characters (`Bidi_Control`): LRE, RLE, PDF, LRO, RLO, the
 * isolates LRI, RLI, FSI, PDI, the marks LRM, RLM and ALM. Printed as sent they reorder what
 * follows on the line ("\u202Eeurt" shows as "true"), so they are shown as `\u202E`.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

/**
 * Removes ANSI escape sequences, replaces other control characters with spaces and shows the
 * bidi format characters escaped (`\u202E`): answers come from the network and must not drive
 * the terminal, nor reorder what it shows.
 */
export function printable(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x1b && text[i + 1] === "[") {
      // CSI: ESC [ parameters final-letter
      let end = i + 2;
      while (end < text.length && /[0-9;?]/.test(text[end] ?? "")) end++;
      i = end;
      continue;
    }
    const char = text[i] ?? "";
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) out += " ";
    else if (BIDI_CONTROL.test(char)) {
      out += `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;
    } else out += char;
  }
  return out;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The longest start of `text` of at most `max` UTF-16 units that ends on a whole grapheme (a
 * letter with its accents, an emoji with its joiners): no surrogate pair or grapheme is split.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (const { index, segment } of graphemes.segment(text)) {
    if (index + segment.length > max) break;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** Shortens text to `max` characters with an ellipsis, cut between graphemes. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${cutText(text, Math.max(0, max - 1))}…`;
}
