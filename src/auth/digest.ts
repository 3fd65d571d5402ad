/**
 * The one home of the library's digest helpers: SHA-256 (Web Crypto), its hex and base64url forms,
 * and constant-time comparison. Used by the auth modes, the idempotency key and the test tokens.
 */
import { base64url } from "jose";

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
    // `this`, not the class's name: a class body that names its class is built as `class _X`
    // (esbuild), and `constructor.name` and util.inspect would say so.
    return new this(await sha256(secret));
  }

  /**
   * True when `presented` (the SHA-256 of what the caller sent) equals the secret's; both sides
   * are 32-byte digests, so timing is flat. One digest is compared with every configured value.
   */
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

/** How a digest is written as text: unpadded base64url (as JWTs write bytes) or lower-case hex. */
export type DigestEncoding = "base64url" | "hex";

/** SHA-256 of a text (UTF-8) or of raw bytes, written in `encoding`. */
export async function sha256Text(
  data: string | Uint8Array,
  encoding: DigestEncoding,
): Promise<string> {
  const digest = await sha256(data);
  return encoding === "hex" ? toHex(digest) : base64url.encode(digest);
}
