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
