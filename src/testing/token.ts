import { importPKCS8, type JWTPayload, type KeyInput, SignJWT } from "jose";
import { sha256Text } from "../auth/digest.js";
import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import { assertKitGlobals } from "./environment.js";

/** Options of `signServiceToken`. */
export interface SignServiceTokenOptions {
  /** `iss` claim. Absent by default. */
  readonly issuer?: string | undefined;
  /** `aud` claim. Absent by default. */
  readonly audience?: string | readonly string[] | undefined;
  /** Lifetime from `iat` to `exp`, in seconds. Default 300. A negative value gives an expired token. */
  readonly expiresInSeconds?: number | undefined;
  /** `iat`, in seconds since the epoch. Default: now. */
  readonly issuedAt?: number | undefined;
  /** `kid` header, for key rotation tests. Absent by default. */
  readonly keyId?: string | undefined;
  /** Further claims. `iat`, `exp`, `iss` and `aud` given by the options above win over these. */
  readonly claims?: Readonly<Record<string, unknown>> | undefined;
  /** The exact body the token will travel with; only used for `bodyDigestClaim`. */
  readonly body?: string | Uint8Array | undefined;
  /**
   * Name of the claim holding the SHA-256 of `body` (the `jwt.bodyDigest.claim` configured in
   * `createAuth`). Without it no digest is added.
   */
  readonly bodyDigestClaim?: string | undefined;
  /** How the digest is written: `base64url` (unpadded, the default) or lower-case `hex`. */
  readonly bodyDigestEncoding?: "base64url" | "hex" | undefined;
}

/** The options `sendCallback` takes as `tokenOptions`: all but `body`, which it fills in. */
export const TOKEN_OPTION_NAMES = optionNames<Omit<SignServiceTokenOptions, "body">>({
  issuer: true,
  audience: true,
  expiresInSeconds: true,
  issuedAt: true,
  keyId: true,
  claims: true,
  bodyDigestClaim: true,
  bodyDigestEncoding: true,
});
/** `signServiceToken`'s options: `sendCallback`'s token options and the `body` it signs. */
const SIGN_OPTION_NAMES: readonly string[] = Object.freeze([...TOKEN_OPTION_NAMES, "body"]);

/**
 * A Web Crypto key, as `crypto.subtle` gives it: the DOM's `CryptoKey` and Node's
 * `webcrypto.CryptoKey` both fit. Written out rather than naming the global `CryptoKey`, which only
 * the DOM library declares (not `"lib": ["esnext"]` with @types/node 20 or 22): there the global
 * name is an error in these declarations, or `any` under `skipLibCheck`.
 */
export interface CryptoKeyLike {
  readonly type: string;
  readonly extractable: boolean;
  readonly algorithm: { readonly name: string };
  readonly usages: readonly string[];
}

/**
 * A Node.js `KeyObject`, as `crypto.createPrivateKey(pem)` or `generateKeyPairSync("rsa")` gives
 * it (jose signs with it too). Written out, as `CryptoKeyLike`, so that the declarations name no
 * type of @types/node.
 */
export interface KeyObjectLike {
  readonly type: "secret" | "public" | "private";
  readonly asymmetricKeyType?: string | undefined;
  export(options?: never): unknown;
}

/**
 * The private key of jose 4 and 5 (`KeyLike`, what their `generateKeyPair()` and `importPKCS8()`
 * answer): a `KeyObject` or a `CryptoKey` under a narrower type. jose checks it at run time.
 */
export interface JoseKeyLike {
  readonly type: string;
}

/** SHA-256 of the body, written as `createAuth`'s body binding expects it. */
export async function bodyDigest(
  body: string | Uint8Array,
  encoding: "base64url" | "hex" = "base64url",
): Promise<string> {
  assertKitGlobals("bodyDigest", ["crypto.subtle", "TextEncoder"]);
  return sha256Text(body, encoding);
}

/**
 * Signs a token as the service does: RS256, with `iat` and `exp` (300 s by default), an optional
 * issuer and audience, and — when `bodyDigestClaim` is given — the SHA-256 of `body` in that
 * claim. Send it as `Authorization: Bearer <token>`.
 *
 * @param privateKey a PKCS#8 PEM (from `createTestKeys`), an RSA private `CryptoKey` or Node
 * `KeyObject` (jose 4/5's `KeyLike` too).
 * @example
 * const token = await signServiceToken(keys.privateKey, { issuer: "https://service.example" });
 */
export async function signServiceToken(
  privateKey: string | CryptoKeyLike | KeyObjectLike | JoseKeyLike,
  options: SignServiceTokenOptions = {},
): Promise<string> {
  assertKitGlobals("signServiceToken", ["crypto.subtle", "TextEncoder"]);
  // A misspelt option (`expiresIn`) would sign a token without it, in silence.
  if (isRecord(options)) {
    assertKnownKeys(options, SIGN_OPTION_NAMES, "options", "signServiceToken");
  }
  // A CryptoKeyLike is a CryptoKey, a KeyObjectLike a KeyObject: jose checks either at run time
  // (an RSA private key), as it did when the parameter was typed CryptoKey.
  const key: KeyInput =
    typeof privateKey === "string"
      ? await importPKCS8(privateKey, "RS256")
      : (privateKey as KeyInput);
  const lifetime = options.expiresInSeconds ?? 300;
  if (!Number.isFinite(lifetime)) {
    throw new RangeError("signServiceToken: expiresInSeconds must be a finite number");
  }
  const issuedAt = options.issuedAt ?? Math.floor(Date.now() / 1000);
  if (!Number.isFinite(issuedAt)) {
    throw new RangeError("signServiceToken: issuedAt must be a finite number");
  }
  const claims: JWTPayload = { ...(options.claims ?? {}) };
  if (options.bodyDigestClaim !== undefined) {
    if (options.body === undefined) {
      throw new TypeError(
        "signServiceToken: bodyDigestClaim needs the body the token travels with",
      );
    }
    claims[options.bodyDigestClaim] = await bodyDigest(options.body, options.bodyDigestEncoding);
  }
  const jwt = new SignJWT(claims)
    .setProtectedHeader(
      options.keyId === undefined
        ? { alg: "RS256", typ: "JWT" }
        : { alg: "RS256", typ: "JWT", kid: options.keyId },
    )
    .setIssuedAt(issuedAt)
    .setExpirationTime(Math.floor(issuedAt + lifetime));
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer);
  const audience = options.audience;
  if (audience !== undefined)
    jwt.setAudience(typeof audience === "string" ? audience : [...audience]);
  return jwt.sign(key);
}
