import type { CallbackName } from "../core/types.js";
import type { AuthRequest } from "./types.js";

/**
 * The asymmetric JWS algorithms a token may use. `none` and the HMAC algorithms (`HS256`, …) are
 * deliberately absent: with a public key they would let anyone who knows the key forge tokens.
 */
export type JwsAlgorithm =
  | "RS256"
  | "RS384"
  | "RS512"
  | "PS256"
  | "PS384"
  | "PS512"
  | "ES256"
  | "ES384"
  | "ES512"
  | "EdDSA";

/** `test` covers the operator's staging, QA and QA-INT environments; `production` is production. */
export type ServiceEnvironment = "test" | "production";

/**
 * A public JSON Web Key (`kty` RSA, EC or OKP; no private members). `kty` is optional in the type
 * only so jose's `exportJWK` result fits; `createAuth` requires it. The members are those of
 * RFC 7517/7518, written out without an index signature, so that the `JWK` of jose 4, 5 (an
 * interface without one) and 6 all fit; the private members are listed because jose's `JWK`
 * declares them, and `createAuth` refuses a key that has one.
 */
export interface PublicJwk {
  readonly kty?: string | undefined;
  readonly kid?: string | undefined;
  readonly alg?: string | undefined;
  readonly use?: string | undefined;
  readonly key_ops?: readonly string[] | undefined;
  readonly ext?: boolean | undefined;
  readonly crv?: string | undefined;
  readonly x?: string | undefined;
  readonly y?: string | undefined;
  readonly n?: string | undefined;
  readonly e?: string | undefined;
  readonly x5c?: readonly string[] | undefined;
  readonly x5t?: string | undefined;
  readonly "x5t#S256"?: string | undefined;
  readonly x5u?: string | undefined;
  /** Private members: refused by `createAuth`. */
  readonly d?: string | undefined;
  readonly p?: string | undefined;
  readonly q?: string | undefined;
  readonly dp?: string | undefined;
  readonly dq?: string | undefined;
  readonly qi?: string | undefined;
  readonly oth?: readonly unknown[] | undefined;
  readonly k?: string | undefined;
  readonly priv?: string | undefined;
}

/**
 * One verification key:
 * - a PEM text: `-----BEGIN PUBLIC KEY-----` (SPKI, as the operator publishes it) or
 *   `-----BEGIN CERTIFICATE-----` (X.509; only its public key is used, the certificate is not
 *   validated). Normalised first (surrounding blanks, `\n` escapes, CRLF), so values from
 *   environment variables work;
 * - a public JWK (its `kid` is used for key selection);
 * - `{ key, kid }` to give a PEM key a `kid` for rotation.
 */
export type JwtKeyInput =
  | string
  | PublicJwk
  | { readonly key: string | PublicJwk; readonly kid?: string | undefined };

/** One key, or several tried in order (rotation). `undefined` counts as "none configured". */
export type JwtKeySet = JwtKeyInput | readonly JwtKeyInput[];

/**
 * Binds the token to the body: the claim must hold the SHA-256 of the raw body bytes. The URL's
 * query is not covered. A bodiless request whose token carries the claim must bind the empty body;
 * on GetCheckoutCartInfo the body's parameters then win over the query's.
 */
export interface BodyDigestOptions {
  /** Name of the claim carrying the digest. */
  readonly claim: string;
  /** How the digest is written in the claim (default `base64url`, unpadded; `hex` is case-insensitive). */
  readonly encoding?: "base64url" | "hex" | undefined;
}

/** JWT verification of the `Authorization` header (the service's documented mode). */
export interface JwtOptions {
  /**
   * Which of the operator's key sets verifies tokens. There is no fallback: a token signed with the
   * test key is refused in `production` and the reverse.
   */
  readonly environment: ServiceEnvironment;
  /**
   * The operator's public keys per environment. Keys of both environments are checked by
   * `createAuth`; only the selected environment's keys verify tokens.
   */
  readonly keys: {
    readonly test?: JwtKeySet | undefined;
    readonly production?: JwtKeySet | undefined;
  };
  /** Accepted `alg` values. Default `["RS256"]`. */
  readonly algorithms?: readonly JwsAlgorithm[] | undefined;
  /** Required `iss` value (or one of several). Not checked by default. */
  readonly issuer?: string | readonly string[] | undefined;
  /** Required `aud` value (or one of several). Not checked by default. */
  readonly audience?: string | readonly string[] | undefined;
  /** Allowed clock skew for `exp`, `nbf` and `iat`, in seconds. Default 60. */
  readonly clockToleranceSeconds?: number | undefined;
  /** Maximum age of the token from its `iat`, in seconds; `iat` then becomes required. Default: no limit. */
  readonly maxTokenAgeSeconds?: number | undefined;
  /** Whether a token without `exp` is refused. Default true. */
  readonly requireExpiration?: boolean | undefined;
  /** Bind the token to the body bytes. Off by default: the operator documents no such claim. */
  readonly bodyDigest?: BodyDigestOptions | undefined;
}

/** HTTP Basic credentials (RFC 7617). The user name cannot contain `:`. */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/** A secret header the service is configured to send. */
export interface HeaderSecretOptions {
  /** Header name (case-insensitive). */
  readonly name: string;
  /**
   * The secret, or several (a rotation: any of them matches). `createAuth` refuses a value that
   * starts or ends with whitespace (HTTP strips it) or holds a comma (a repeated header reads so).
   */
  readonly value: string | readonly string[];
}

/** A secret URL query parameter the service is configured to send. */
export interface UrlSecretOptions {
  /** Query parameter name (case-sensitive, as URLs are). */
  readonly parameter: string;
  /**
   * The secret, or several (a rotation: any of them matches). It matches the parameter as decoded
   * (register the URL with it percent-encoded, `encodeURIComponent(value)`) or as the URL writes
   * it (a `+` or `%` written as it is). `createAuth` refuses whitespace and control characters,
   * which no URL carries as written.
   */
  readonly value: string | readonly string[];
}

/** Only requests from these addresses pass. */
export interface IpAllowListOptions {
  /** IPv4 / IPv6 addresses and CIDR ranges. IPv4-mapped IPv6 addresses are treated as IPv4. */
  readonly allow: readonly string[];
  /**
   * CIDR ranges (or addresses) of your own proxies. Without it `X-Forwarded-For` is ignored and the
   * TCP peer address is checked. With it, `X-Forwarded-For` is walked from the right, starting at
   * the peer, past every trusted proxy; the first other address (or the left-most entry) is the client.
   */
  readonly trustedProxies?: readonly string[] | undefined;
}

/**
 * The cart token GetCheckoutCartInfo carries (required by the spec). On GetCheckoutCartInfo the
 * token checked is the payload's `merchantCartToken`, the very value your function receives: read
 * from the query (GET) or the query and the body (POST), under `merchantCartToken`, `cartToken` or
 * the handler's `parameterNames.merchantCartToken`. It is checked once the payload is built, after
 * `merchantGuid` and `jwt.bodyDigest`; a call without a token, or with an empty one, is refused.
 * Without `verify` it only proves that some token is present, which authenticates nothing.
 */
export interface CartTokenOptions {
  /**
   * The URL parameter read on a callback other than GetCheckoutCartInfo (`cartToken` set under
   * `callbacks`). Default `merchantCartToken`. Not used on GetCheckoutCartInfo: when the operator
   * sends the token there under another name, set the handler's `parameterNames.merchantCartToken`.
   */
  readonly parameter?: string | undefined;
  /**
   * Your own check of the token (a cart that exists, belongs to a live session, …); only a literal
   * `true` passes. With it, the cart token proves the caller; without it, it does not. Return
   * `false` for any token you do not accept (malformed, unknown, expired, a bad signature), or
   * throw `AuthenticationError`: a 401. Anything else thrown or rejected says it could not decide
   * (its store is down) and refuses nothing: the call is a 500 and `onError` gets the error, with
   * the token and the request's other credentials masked.
   */
  readonly verify?:
    | ((token: string, request: AuthRequest) => boolean | Promise<boolean>)
    | undefined;
}

/** The authentication modes; every configured one must pass (AND). */
export interface AuthModes {
  /**
   * JWT in the `Authorization` header, verified with the operator's public keys.
   *
   * Accepted `Authorization` values, exactly: `Bearer <jwt>` (scheme in any letter case, one or
   * more spaces or tabs before the token) or the bare `<jwt>`; whitespace around the value is
   * ignored; `<jwt>` is a compact JWS (three non-empty base64url segments). Refused with 401: a
   * missing or blank header, a value containing a comma (the header sent twice), another scheme,
   * `Bearer` alone, anything after the token. A value over 16,384 characters is refused with 431.
   */
  readonly jwt?: JwtOptions | undefined;
  /**
   * Your merchant GUID(s): the payload's `MerchantGUID` must equal one of them (trimmed,
   * case-insensitive). Checked after the body is parsed. Required in every payload except where
   * the documented payload has none (GetCheckoutCartInfo by GET, NotifyOrderRefund,
   * SendAdditionalRequiredDocumentsToMerchant): there one sent must match (`null` or blank is
   * none), and none is required unless no other mode proves the caller. Not a secret: combine it
   * with a mode that proves the caller (`createAuth` refuses it alone unless `allowWeakAuth` is
   * set).
   *
   * Leave the key out to check none; given as `undefined` (an unset environment variable) it is
   * refused by `createAuth`, and under `exactOptionalPropertyTypes` by the compiler. (Under
   * `callbacks`, `undefined` inherits the top level's: see `CallbackAuthOverrides`.)
   */
  readonly merchantGuid?: string | readonly string[];
  /** HTTP Basic in the `Authorization` header; one credential or several (rotation). */
  readonly basic?: BasicCredentials | readonly BasicCredentials[] | undefined;
  readonly headerSecret?: HeaderSecretOptions | undefined;
  readonly urlSecret?: UrlSecretOptions | undefined;
  readonly ipAllowList?: IpAllowListOptions | undefined;
  /**
   * Cart token: GetCheckoutCartInfo's `merchantCartToken`. At the top level it applies to
   * GetCheckoutCartInfo only (the one callback that carries it); set it under `callbacks` to
   * require it elsewhere, read there from the URL parameter `parameter`.
   */
  readonly cartToken?: CartTokenOptions | undefined;
}

/** For one callback: a mode replaced by another configuration, or switched off with `false`. */
export type CallbackAuthOverrides = {
  readonly [Mode in keyof AuthModes]?: NonNullable<AuthModes[Mode]> | false | undefined;
};

/** The one authentication configuration shared by every handler and the router. */
export interface AuthConfig extends AuthModes {
  /** Per-callback replacements; modes not named here are inherited from the top level. */
  readonly callbacks?: { readonly [Name in CallbackName]?: CallbackAuthOverrides } | undefined;
  /**
   * Accept callbacks whose only modes prove nothing about the caller: `merchantGuid` (not a
   * secret: it travels in every payload) and `cartToken` without `verify` (any token passes).
   * By default `createAuth` refuses such a configuration; every callback must have at least one of
   * `jwt`, `basic`, `headerSecret`, `urlSecret`, `ipAllowList` or `cartToken` with `verify`. An
   * `ipAllowList` whose `allow` or `trustedProxies` ranges hold every IPv4 or every IPv6 address
   * (`0.0.0.0/0`, `::/0`, or ranges adding up to one) proves nothing either: the refusal names
   * that list; narrow it to the service's (`allow`) or your own proxies' (`trustedProxies`) ranges.
   *
   * Setting it to `true` means **you accept forged calls**: anyone who can reach the URL and knows
   * (or guesses) the GUID can call it. With `merchantGuid` set, it also makes the GUID required on
   * NotifyOrderRefund and SendAdditionalRequiredDocumentsToMerchant, where nothing else then
   * vouches for the call; NotifyOrderRefund's payload carries none, so those calls are refused.
   * Default false.
   */
  readonly allowWeakAuth?: boolean | undefined;
}

/** The mode names as they appear in `AuthResult.methods`. */
export type AuthMethod =
  | "ip"
  | "headerSecret"
  | "urlSecret"
  | "basic"
  | "jwt"
  | "cartToken"
  | "merchantGuid"
  | "bodyDigest";
