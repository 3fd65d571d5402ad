/** Text tests shared across the library. */

/** Whether the text holds a C0 control character (NUL, CR, LF, TAB among them) or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** A text as it is: the masker or cleaner where nothing is to be masked. */
export function unchanged(text: string): string {
  return text;
}
