/**
 * Normalises a PEM text as it arrives from an environment variable or a secrets manager:
 * surrounding whitespace is removed, literal `\n` / `\r\n` escape sequences become newlines, and
 * `\r\n` / `\r` line endings become `\n`. The result ends with one newline.
 *
 * It does not validate the key: `createAuth` does that when it imports it.
 */
export function normalizePem(text: string): string {
  if (typeof text !== "string") {
    throw new TypeError("normalizePem: expected a string");
  }
  const normalized = text
    .replace(/\\r\\n|\\n|\\r/g, "\n")
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .join("\n");
  return normalized.length === 0 ? "" : `${normalized}\n`;
}

/** The armour label of a PEM text (`PUBLIC KEY`, `CERTIFICATE`, …), or undefined when there is none. */
export function pemLabel(pem: string): string | undefined {
  return /^-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1];
}

/** How many PEM blocks a text holds: a chain or a key pasted twice is refused. */
export function pemBlockCount(pem: string): number {
  return pem.match(/-----BEGIN /g)?.length ?? 0;
}
