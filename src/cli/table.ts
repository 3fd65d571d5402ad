/** Text from the network made safe for a terminal, and shortened. */

/**
 * Removes ANSI escape sequences and replaces other control characters with spaces: answers come
 * from the network and must not drive the terminal.
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
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? " " : text[i];
  }
  return out;
}

/** Shortens text to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}
