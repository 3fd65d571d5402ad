/** A plain-text table; colour is applied after padding so ANSI codes never skew the widths. */

/** One cell: its text, and optionally how to colour it. */
export interface Cell {
  readonly text: string;
  readonly color?: ((text: string) => string) | undefined;
  /** Default left. */
  readonly align?: "left" | "right" | undefined;
}

export type CellInput = string | Cell;

function cell(input: CellInput): Cell {
  return typeof input === "string" ? { text: input } : input;
}

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

/**
 * Renders rows under a header, columns separated by two spaces, the header underlined with
 * dashes. The last column is not padded. Returns the lines joined by `\n`, with a final newline.
 */
export function renderTable(
  header: readonly CellInput[],
  rows: readonly (readonly CellInput[])[],
  style: { readonly header?: (text: string) => string } = {},
): string {
  const all = [header, ...rows].map((row) => row.map(cell));
  const columns = Math.max(...all.map((row) => row.length));
  const widths: number[] = [];
  for (let c = 0; c < columns; c++) {
    widths.push(Math.max(...all.map((row) => row[c]?.text.length ?? 0)));
  }
  const line = (row: readonly Cell[], isHeader: boolean): string =>
    Array.from({ length: columns }, (_, c) => {
      const item = row[c] ?? { text: "" };
      const width = widths[c] ?? 0;
      const padded =
        item.align === "right"
          ? item.text.padStart(width)
          : c === columns - 1
            ? item.text
            : item.text.padEnd(width);
      const color = isHeader ? style.header : item.color;
      return color && item.text !== "" ? color(padded) : padded;
    })
      .join("  ")
      .trimEnd();
  const headerCells = all[0] ?? [];
  const rule = widths.map((width) => "-".repeat(width)).join("  ");
  const body = all.slice(1).map((row) => line(row, false));
  return `${[line(headerCells, true), rule, ...body].join("\n")}\n`;
}
