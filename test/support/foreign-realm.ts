/**
 * Bytes of another JavaScript realm (node:vm), as a test environment such as vitest's or jest's
 * `jsdom` hands them to the library: `instanceof Uint8Array` is false for them in this realm.
 */
import { runInNewContext } from "node:vm";

/** A Uint8Array of another realm holding `bytes` (text is encoded as UTF-8). */
export function foreignBytes(bytes: string | Uint8Array): Uint8Array {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const made = runInNewContext("(data) => new Uint8Array(data)")(Array.from(data)) as Uint8Array;
  if (made instanceof Uint8Array) throw new Error("node:vm gave bytes of this realm");
  return made;
}
