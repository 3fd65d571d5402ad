import { AuthenticationError } from "../core/errors.js";
import type { HeaderReader } from "./types.js";

/** Longest credential header value read, in characters (16 KiB); longer is refused with 431. */
export const MAX_CREDENTIAL_HEADER_LENGTH = 16 * 1024;

/**
 * Reads a credential header (Authorization, a secret header): refuses a missing or blank value,
 * one over 16 KiB (`header_too_large`) and one with a comma (the header was sent twice and joined).
 * Returns the value without surrounding whitespace.
 */
export function readCredentialHeader(headers: HeaderReader, name: string, label: string): string {
  const raw = headers.get(name);
  if (raw === null) throw new AuthenticationError(`${label} header missing`);
  if (raw.length > MAX_CREDENTIAL_HEADER_LENGTH) {
    throw new AuthenticationError(
      `${label} header longer than ${MAX_CREDENTIAL_HEADER_LENGTH} characters`,
      "header_too_large",
    );
  }
  const value = raw.trim();
  if (value.length === 0) throw new AuthenticationError(`${label} header empty`);
  if (value.includes(",")) {
    throw new AuthenticationError(`${label} header repeated or contains a comma`);
  }
  return value;
}

/** A compact JWS: three non-empty base64url segments. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BEARER_PREFIX = /^bearer[ \t]+/i;

/**
 * Extracts the JWT from an `Authorization` value (already trimmed by `readCredentialHeader`).
 *
 * Accepted, exactly:
 * - `Bearer <jwt>`: the scheme in any letter case, then one or more spaces or tabs, then the token;
 * - `<jwt>`: the bare token, as some service configurations send it.
 *
 * Whitespace around the whole value is ignored. `<jwt>` must be a compact JWS: three non-empty
 * base64url segments joined by dots, nothing before or after. Everything else is refused: another
 * scheme (`Basic …`, `JWT …`), `Bearer` without a token, two tokens, JSON-serialised JWS.
 */
export function extractBearerToken(value: string): string {
  const prefix = BEARER_PREFIX.exec(value);
  const token = prefix === null ? value : value.slice(prefix[0].length);
  if (!COMPACT_JWS.test(token)) {
    throw new AuthenticationError(
      prefix === null && /^bearer$/i.test(token)
        ? "Authorization header has the Bearer scheme but no token"
        : "Authorization header does not hold a compact JWT",
    );
  }
  return token;
}
