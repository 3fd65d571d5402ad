/** Web Crypto helpers shared by the modes: SHA-256 digests and constant-time comparison. */

const encoder = new TextEncoder();

/** Web Crypto refuses views on a SharedArrayBuffer; copy only in that rare case. */
function ownBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : (new Uint8Array(bytes) as Uint8Array<ArrayBuffer>);
}

/** SHA-256 of a text (UTF-8) or of raw bytes, with Web Crypto. */
export async function sha256(data: string | Uint8Array): Promise<Uint8Array> {
  const bytes = typeof data === "string" ? encoder.encode(data) : ownBuffer(data);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/**
 * Compares two byte strings without an early exit. Lengths are not secret here (callers compare
 * fixed-length digests), so a length mismatch returns false at once.
 */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    diff |= (a[i] as number) ^ (b[i] as number);
  }
  return diff === 0;
}

/** A configured secret, kept only as its digest, compared with a presented value in constant time. */
export class SecretDigest {
  private constructor(private readonly digest: Uint8Array) {}

  static async of(secret: string): Promise<SecretDigest> {
    return new SecretDigest(await sha256(secret));
  }

  /** True when `presented` equals the secret; both sides are 32-byte digests, so timing is flat. */
  async matches(presented: string): Promise<boolean> {
    return equalBytes(await sha256(presented), this.digest);
  }

  /** Same, for a digest the caller already computed (Basic compares one digest with many). */
  matchesDigest(presented: Uint8Array): boolean {
    return equalBytes(presented, this.digest);
  }
}

const HEX = "0123456789abcdef";

/** Lower-case hexadecimal of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += (HEX[byte >> 4] as string) + (HEX[byte & 15] as string);
  return out;
}
