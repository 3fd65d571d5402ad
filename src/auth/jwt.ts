import {
  decodeProtectedHeader,
  errors,
  importJWK,
  importSPKI,
  importX509,
  type JWK,
  type JWTVerifyOptions,
  jwtVerify,
} from "jose";
import { isBytes } from "../core/bytes.js";
import { AuthenticationError } from "../core/errors.js";
import { isPlainObject } from "../core/objects.js";
import { extractBearerToken, readCredentialHeader } from "./authorization.js";
import type {
  BodyDigestOptions,
  JwsAlgorithm,
  JwtKeyInput,
  JwtOptions,
  PublicJwk,
  ServiceEnvironment,
} from "./config.js";
import { equalBytes, sha256Text } from "./digest.js";
import { normalizePem, pemBlockCount, pemLabel } from "./pem.js";
import type { HeaderReader } from "./types.js";
import { assertKnownKeys, configError } from "./validate.js";

/** What Web Crypto must report for a key to serve each algorithm (mirrors jose's own check). */
const KEY_REQUIREMENTS: Readonly<
  Record<
    JwsAlgorithm,
    { readonly name: string; readonly hash?: string; readonly namedCurve?: string }
  >
> = {
  RS256: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  RS384: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" },
  RS512: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" },
  PS256: { name: "RSA-PSS", hash: "SHA-256" },
  PS384: { name: "RSA-PSS", hash: "SHA-384" },
  PS512: { name: "RSA-PSS", hash: "SHA-512" },
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  ES384: { name: "ECDSA", namedCurve: "P-384" },
  ES512: { name: "ECDSA", namedCurve: "P-521" },
  EdDSA: { name: "Ed25519" },
};

/** Every algorithm `algorithms` may name. */
export const SUPPORTED_ALGORITHMS = Object.keys(KEY_REQUIREMENTS) as readonly JwsAlgorithm[];

const DEFAULT_ALGORITHMS: readonly JwsAlgorithm[] = ["RS256"];
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 60;
const MIN_RSA_BITS = 2048;
/** 9999-12-31T23:59:59Z: a NumericDate beyond it is an attack or a bug, not a date. */
const MAX_NUMERIC_DATE = 253_402_300_799;
/** `.`, which ends a compact JWS's header segment. */
const DOT = 0x2e;
const TIME_CLAIMS = ["exp", "nbf", "iat"] as const;
/** Claim names jose may report; anything else is shown as "unspecified" so no input reaches the log. */
const REPORTABLE_CLAIMS = new Set(["exp", "nbf", "iat", "iss", "aud", "sub", "typ", "jti"]);

const JWT_OPTION_KEYS = [
  "environment",
  "keys",
  "algorithms",
  "issuer",
  "audience",
  "clockToleranceSeconds",
  "maxTokenAgeSeconds",
  "requireExpiration",
  "bodyDigest",
] as const;

interface ImportedKey {
  readonly kid: string | undefined;
  /** One CryptoKey per allowed algorithm the key fits (Web Crypto binds a key to one algorithm). */
  readonly byAlgorithm: ReadonlyMap<string, CryptoKey>;
}

/** The body-digest binding, resolved. */
export interface BodyDigest {
  readonly claim: string;
  readonly encoding: "base64url" | "hex";
}

/** A compiled JWT mode: keys imported, options fixed. */
export interface JwtVerifier {
  readonly bodyDigest: BodyDigest | undefined;
  /** Verifies the `Authorization` header and returns the verified claims, frozen. */
  verify(headers: HeaderReader): Promise<Readonly<Record<string, unknown>>>;
}

/** Imports and checks every configured key, then returns the verifier for the selected environment. */
export async function compileJwt(options: JwtOptions, path: string): Promise<JwtVerifier> {
  if (!isPlainObject(options)) throw configError(path, "must be an object");
  assertKnownKeys(options, JWT_OPTION_KEYS, path);

  const environment: unknown = options.environment;
  if (environment !== "test" && environment !== "production") {
    throw configError(
      `${path}.environment`,
      'must be "test" or "production" (there is no default and no fallback)',
    );
  }
  const algorithms = readAlgorithms(options.algorithms, `${path}.algorithms`);
  const clockTolerance = readSeconds(
    options.clockToleranceSeconds,
    `${path}.clockToleranceSeconds`,
    DEFAULT_CLOCK_TOLERANCE_SECONDS,
    true,
  );
  const maxTokenAge =
    options.maxTokenAgeSeconds === undefined
      ? undefined
      : readSeconds(options.maxTokenAgeSeconds, `${path}.maxTokenAgeSeconds`, 0, false);
  const requireExpiration = options.requireExpiration ?? true;
  if (typeof requireExpiration !== "boolean") {
    throw configError(`${path}.requireExpiration`, "must be a boolean");
  }
  const issuer = readStringOrList(options.issuer, `${path}.issuer`);
  const audience = readStringOrList(options.audience, `${path}.audience`);
  const bodyDigest = readBodyDigest(options.bodyDigest, `${path}.bodyDigest`);

  if (!isPlainObject(options.keys)) throw configError(`${path}.keys`, "must be an object");
  assertKnownKeys(options.keys, ["test", "production"], `${path}.keys`);
  let selected: ImportedKey[] | undefined;
  for (const env of ["test", "production"] as const satisfies readonly ServiceEnvironment[]) {
    const inputs = keyList(options.keys[env]);
    // Both sets are imported so a broken key fails at start-up even in the other environment.
    const imported: ImportedKey[] = [];
    for (const [index, input] of inputs.entries()) {
      imported.push(await importKey(input, algorithms, `${path}.keys.${env}[${index}]`));
    }
    if (env === environment) selected = imported;
  }
  if (
    (selected === undefined || selected.length === 0) &&
    Object.hasOwn(options.keys, environment) &&
    options.keys[environment] === undefined
  ) {
    // `keys: { production: process.env.SERVICE_PUBLIC_KEY }` with the variable unset (review dx-1).
    throw configError(
      `${path}.keys.${environment}`,
      `is undefined (an unset environment variable?): give the operator's public key for the selected environment "${environment}"`,
    );
  }
  if (selected === undefined || selected.length === 0) {
    throw configError(
      `${path}.keys.${environment}`,
      `no key configured for the selected environment "${environment}"`,
    );
  }

  const verifyOptions: JWTVerifyOptions = {
    algorithms: [...algorithms],
    clockTolerance,
    requiredClaims: requireExpiration ? ["exp"] : [],
    ...(issuer === undefined ? {} : { issuer }),
    ...(audience === undefined ? {} : { audience }),
    ...(maxTokenAge === undefined ? {} : { maxTokenAge }),
  };
  return new Verifier(selected, new Set(algorithms), verifyOptions, clockTolerance, bodyDigest);
}

class Verifier implements JwtVerifier {
  constructor(
    private readonly keys: readonly ImportedKey[],
    private readonly algorithms: ReadonlySet<string>,
    private readonly options: JWTVerifyOptions,
    private readonly clockTolerance: number,
    readonly bodyDigest: BodyDigest | undefined,
  ) {}

  /**
   * The last header segment that passed the checks below, with what they read of it. The checks
   * are a function of the segment alone, and the service signs every token with the same header:
   * a token starting with this segment skips decoding it again (jose still parses it itself).
   */
  #lastHeader: {
    readonly segment: string;
    readonly alg: string;
    readonly kid: string | undefined;
  } = { segment: "", alg: "", kid: undefined };

  async verify(headers: HeaderReader): Promise<Readonly<Record<string, unknown>>> {
    const token = extractBearerToken(
      readCredentialHeader(headers, "authorization", "Authorization"),
    );
    // A compact JWS from here on: three non-empty base64url segments.
    let { segment, alg, kid } = this.#lastHeader;
    if (segment === "" || !token.startsWith(segment) || token.charCodeAt(segment.length) !== DOT) {
      ({ alg, kid } = this.#checkHeader(token));
      segment = token.slice(0, token.indexOf("."));
      this.#lastHeader = { segment, alg, kid };
    }

    let tried = false;
    for (let pass = 0; pass < 2; pass++) {
      for (const key of this.keys) {
        if ((pass === 0) !== (kid !== undefined && key.kid === kid)) continue;
        const cryptoKey = key.byAlgorithm.get(alg);
        if (cryptoKey === undefined) continue;
        tried = true;
        let payload: Record<string, unknown>;
        try {
          ({ payload } = await jwtVerify(token, cryptoKey, this.options));
        } catch (error) {
          // A wrong key fails the signature only: try the next one. Anything else is final.
          if (error instanceof errors.JWSSignatureVerificationFailed) continue;
          throw new AuthenticationError(describeJoseFailure(error));
        }
        checkTimeClaims(payload, this.clockTolerance);
        return Object.freeze(payload);
      }
    }
    throw new AuthenticationError(
      tried
        ? "JWT signature verification failed"
        : "JWT algorithm fits none of the configured keys",
    );
  }

  /** What a token's header allows, decided before any key is touched; throws when it allows nothing. */
  #checkHeader(token: string): { alg: string; kid: string | undefined } {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw new AuthenticationError("JWT header is not base64url-encoded JSON");
    }
    const alg = header.alg;
    // `none`, HS* and unlisted algorithms never reach jose.
    if (typeof alg !== "string" || !this.algorithms.has(alg)) {
      throw new AuthenticationError("JWT algorithm not allowed");
    }
    // The service uses no JWS extensions; `b64` without `crit` would otherwise be silently ignored.
    if (header.crit !== undefined) throw new AuthenticationError("JWT crit header not supported");
    if (header.b64 !== undefined) throw new AuthenticationError("JWT b64 header not supported");
    // Only a string kid can match; `jwk`, `jku`, `x5u`, `x5c` are never read.
    return { alg, kid: typeof header.kid === "string" ? header.kid : undefined };
  }
}

/**
 * A reason for the log built only from jose's fixed codes and claim names: jose's own error objects
 * carry the whole token payload (`err.payload`) and are never passed on.
 */
function describeJoseFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) {
    const claim = REPORTABLE_CLAIMS.has(error.claim) ? error.claim : "unspecified";
    return error.reason === "missing"
      ? `JWT claim "${claim}" missing`
      : `JWT claim "${claim}" check failed`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "JWT algorithm not allowed";
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return "JWT malformed";
  }
  if (error instanceof errors.JOSENotSupported) return "JWT uses an unsupported feature";
  if (error instanceof errors.JOSEError) return `JWT rejected (${error.code})`;
  return "JWT rejected: the token does not fit the configured key";
}

/**
 * RFC 7519 allows fractional NumericDates; the service writes whole seconds, so anything else
 * (string, fraction, negative, `1e300`) is refused the same way every time.
 */
function checkTimeClaims(payload: Record<string, unknown>, clockTolerance: number): void {
  for (const claim of TIME_CLAIMS) {
    const value = payload[claim];
    if (value === undefined) continue;
    if (
      typeof value !== "number" ||
      !Number.isSafeInteger(value) ||
      value < 0 ||
      value > MAX_NUMERIC_DATE
    ) {
      throw new AuthenticationError(`JWT claim "${claim}" is not a whole number of seconds`);
    }
  }
  // jose checks a future `iat` only with maxTokenAge; a token from the future is refused always.
  const iat = payload.iat;
  if (typeof iat === "number" && iat > Math.floor(Date.now() / 1000) + clockTolerance) {
    throw new AuthenticationError('JWT claim "iat" is in the future');
  }
}

/** Early refusal, before the body is read, of a token that lacks the body-digest claim. */
export function assertDigestClaim(claims: Readonly<Record<string, unknown>>, digest: BodyDigest) {
  if (typeof claims[digest.claim] !== "string") {
    throw new AuthenticationError("JWT body digest claim missing or not a string");
  }
}

/** Compares the token's digest claim with SHA-256 of the raw body, in constant time. */
export async function verifyBodyDigest(
  claims: Readonly<Record<string, unknown>> | undefined,
  rawBody: Uint8Array | undefined,
  digest: BodyDigest,
): Promise<void> {
  const claimed = claims?.[digest.claim];
  if (typeof claimed !== "string") {
    throw new AuthenticationError("JWT body digest claim missing or not a string");
  }
  if (rawBody === undefined) {
    throw new AuthenticationError(
      "raw body unavailable for the JWT body digest check (was it parsed by a framework?)",
    );
  }
  const expected = await sha256Text(rawBody, digest.encoding);
  const presented = digest.encoding === "hex" ? claimed.toLowerCase() : claimed.replace(/=+$/, "");
  const encoder = new TextEncoder();
  if (!equalBytes(encoder.encode(presented), encoder.encode(expected))) {
    throw new AuthenticationError("JWT body digest does not match the body");
  }
}

async function importKey(
  input: JwtKeyInput,
  algorithms: readonly JwsAlgorithm[],
  path: string,
): Promise<ImportedKey> {
  let material: unknown = input;
  let kid: string | undefined;
  if (isPlainObject(input) && !("kty" in input) && "key" in input) {
    assertKnownKeys(input, ["key", "kid"], path);
    material = input.key;
    if (input.kid !== undefined) {
      if (typeof input.kid !== "string" || input.kid.length === 0) {
        throw configError(`${path}.kid`, "must be a non-empty string");
      }
      kid = input.kid;
    }
  }

  let importFor: (alg: JwsAlgorithm) => Promise<CryptoKey | Uint8Array>;
  let candidates = algorithms;
  if (typeof material === "string") {
    const pem = normalizePem(material);
    const label = pemLabel(pem);
    if (label === undefined && material.trim().startsWith("{")) {
      // A JWK kept as JSON in an environment variable (review dx-4).
      throw configError(
        path,
        "is a JWK as JSON text: pass JSON.parse(…) of it (a JWK object), or a PEM text",
      );
    }
    if (label === undefined) {
      throw configError(path, "is not a PEM text (expected -----BEGIN PUBLIC KEY-----)");
    }
    if (label.includes("PRIVATE")) {
      throw configError(path, "is a private key; configure the operator's public key");
    }
    if (pemBlockCount(pem) !== 1) throw configError(path, "must hold exactly one PEM block");
    if (label === "PUBLIC KEY") importFor = (alg) => importSPKI(pem, alg);
    else if (label === "CERTIFICATE") importFor = (alg) => importX509(pem, alg);
    else if (label === "RSA PUBLIC KEY") {
      throw configError(
        path,
        "is a PKCS#1 RSA key; convert it to SPKI (openssl rsa -RSAPublicKey_in -pubout)",
      );
    } else throw configError(path, `has an unsupported PEM type "${label}"`);
  } else if (isPlainObject(material) && typeof material.kty === "string") {
    const jwk = material as PublicJwk;
    checkPublicJwk(jwk, path);
    if (kid === undefined && typeof jwk.kid === "string" && jwk.kid.length > 0) kid = jwk.kid;
    if (jwk.alg !== undefined) {
      if (!algorithms.includes(jwk.alg as JwsAlgorithm)) {
        throw configError(path, `has "alg" ${String(jwk.alg)}, which is not an allowed algorithm`);
      }
      candidates = [jwk.alg as JwsAlgorithm];
    }
    // jose reads `alg` and `use` from the JWK itself; we pass the alg explicitly.
    importFor = (alg) => importJWK({ ...(jwk as JWK), alg }, alg);
  } else {
    throw configError(path, "must be a PEM string, a public JWK or { key, kid }");
  }

  const byAlgorithm = new Map<string, CryptoKey>();
  let firstProblem: string | undefined;
  for (const alg of candidates) {
    let key: CryptoKey | Uint8Array;
    try {
      key = await importFor(alg);
    } catch (error) {
      firstProblem ??= error instanceof Error ? error.message : String(error);
      continue;
    }
    if (isBytes(key) || key.type !== "public") {
      throw configError(path, "is not a public key");
    }
    const requirement = KEY_REQUIREMENTS[alg];
    const algorithm = key.algorithm as KeyAlgorithm & {
      hash?: { name?: string };
      namedCurve?: string;
      modulusLength?: number;
    };
    if (
      algorithm.name !== requirement.name ||
      (requirement.hash !== undefined && algorithm.hash?.name !== requirement.hash) ||
      (requirement.namedCurve !== undefined && algorithm.namedCurve !== requirement.namedCurve)
    ) {
      continue;
    }
    if (algorithm.modulusLength !== undefined && algorithm.modulusLength < MIN_RSA_BITS) {
      throw configError(
        path,
        `is an RSA key of ${algorithm.modulusLength} bits; at least ${MIN_RSA_BITS} are required`,
      );
    }
    byAlgorithm.set(alg, key);
  }
  if (byAlgorithm.size === 0) {
    throw configError(
      path,
      `is not a usable public key for the allowed algorithms (${algorithms.join(", ")})` +
        (firstProblem === undefined ? "" : `: ${firstProblem}`),
    );
  }
  return { kid, byAlgorithm };
}

const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k", "priv"];

function checkPublicJwk(jwk: PublicJwk, path: string): void {
  if (jwk.kty === "oct") throw configError(path, "is a symmetric (oct) JWK; only public keys");
  if (jwk.kty !== "RSA" && jwk.kty !== "EC" && jwk.kty !== "OKP") {
    throw configError(path, `has an unsupported "kty" ${JSON.stringify(jwk.kty)}`);
  }
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) {
    throw configError(path, "is a private JWK; configure the public key only");
  }
  if (jwk.use !== undefined && jwk.use !== "sig") {
    throw configError(path, 'has "use" other than "sig"');
  }
}

function keyList(set: unknown): readonly JwtKeyInput[] {
  if (set === undefined || set === null) return [];
  return (Array.isArray(set) ? set : [set]) as readonly JwtKeyInput[];
}

function readAlgorithms(value: unknown, path: string): readonly JwsAlgorithm[] {
  if (value === undefined) return DEFAULT_ALGORITHMS;
  if (!Array.isArray(value) || value.length === 0) {
    throw configError(path, "must be a non-empty array");
  }
  const out: JwsAlgorithm[] = [];
  for (const alg of value) {
    if (typeof alg === "string" && (alg.toLowerCase() === "none" || /^hs/i.test(alg))) {
      throw configError(
        path,
        `"${alg}" is not allowed: only asymmetric algorithms (${SUPPORTED_ALGORITHMS.join(", ")})`,
      );
    }
    if (typeof alg !== "string" || !(SUPPORTED_ALGORITHMS as readonly string[]).includes(alg)) {
      throw configError(
        path,
        `${JSON.stringify(alg)} is not one of ${SUPPORTED_ALGORITHMS.join(", ")}`,
      );
    }
    if (!out.includes(alg as JwsAlgorithm)) out.push(alg as JwsAlgorithm);
  }
  return out;
}

function readSeconds(value: unknown, path: string, fallback: number, zeroAllowed: boolean): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < 0 ||
    (!zeroAllowed && value === 0)
  ) {
    throw configError(path, zeroAllowed ? "must be a number ≥ 0" : "must be a number > 0");
  }
  return value;
}

function readStringOrList(value: unknown, path: string): string | string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && value.length > 0) return value;
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === "string" && item.length > 0)
  ) {
    return [...(value as string[])];
  }
  throw configError(path, "must be a non-empty string or a non-empty array of them");
}

function readBodyDigest(value: unknown, path: string): BodyDigest | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw configError(path, "must be an object");
  assertKnownKeys(value, ["claim", "encoding"], path);
  const { claim, encoding = "base64url" } = value as Partial<BodyDigestOptions>;
  if (typeof claim !== "string" || claim.length === 0) {
    throw configError(`${path}.claim`, "must be a non-empty string");
  }
  if (encoding !== "base64url" && encoding !== "hex") {
    throw configError(`${path}.encoding`, 'must be "base64url" or "hex"');
  }
  return { claim, encoding };
}
