import { holdsSafely, readSafely } from "../core/describe.js";
import { AuthenticationError, AuthenticationOutage } from "../core/errors.js";
import { isPlainObject } from "../core/objects.js";
import { createRedactor, type Redactor, secretSpellings } from "../core/redact.js";
import { scrubError } from "../core/report.js";
import { hasControlCharacter } from "../core/text.js";
import { readCredentialHeader } from "./authorization.js";
import type { CartTokenOptions, HeaderSecretOptions, UrlSecretOptions } from "./config.js";
import { SecretDigest, sha256 } from "./digest.js";
import type { AuthRequest } from "./types.js";
import { assertKnownKeys, configError, requireString } from "./validate.js";

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const DEFAULT_CART_TOKEN_PARAMETER = "merchantCartToken";
/**
 * Whether no URL carries the text as written: whitespace (a trailing newline read from a file),
 * C0 controls or DEL.
 */
function unwritableInUrl(text: string): boolean {
  return /\s/u.test(text) || hasControlCharacter(text);
}

/** The one value of a query parameter; absent, empty or repeated is refused (repeats are ambiguous). */
function singleParameter(url: URL, name: string, label: string): string {
  const values = url.searchParams.getAll(name);
  if (values.length > 1) throw new AuthenticationError(`${label} URL parameter repeated`);
  const value = values[0];
  if (value === undefined || value.length === 0) {
    throw new AuthenticationError(`${label} URL parameter missing`);
  }
  return value;
}

/** The request's credentials other than the cart token, read only when a `verify` threw. */
export type Credentials = () => readonly string[];

const NO_CREDENTIALS: Credentials = () => [];

/**
 * A redactor masking these credentials wherever quoted: in each of their `secretSpellings` (as
 * they are, URL- and form-encoded, JSON-escaped), and as the request's URL writes
 * them (a query value encoded otherwise: `+` for a space, lower-case hex). Card numbers too.
 */
export function credentialRedactor(credentials: readonly string[], url: URL): Redactor {
  const forms = new Set<string>(secretSpellings(credentials));
  const kept = new Set(credentials);
  try {
    // Each raw `name=value` of the query whose value reads as one of the credentials.
    for (const pair of url.search.slice(1).split("&")) {
      const raw = pair.slice(pair.indexOf("=") + 1);
      if (raw === pair || raw === "") continue;
      const read = new URLSearchParams(`x=${raw}`).get("x");
      if (read !== null && kept.has(read)) forms.add(raw);
    }
  } catch {
    // A URL that cannot be read: the other forms still hold.
  }
  return createRedactor([...forms]);
}

/**
 * The digests of a secret option's `value` (one string, or a non-empty list during a rotation),
 * each string checked by `refuse` (which throws), errors naming `path.value` or `path.value[i]`.
 */
async function secretDigests(
  given: unknown,
  path: string,
  refuse: (value: string, at: string) => void,
): Promise<SecretDigest[]> {
  const list: readonly unknown[] = Array.isArray(given) ? given : [given];
  if (list.length === 0) {
    throw configError(
      `${path}.value`,
      "must hold at least one value (a string, or a list of them)",
    );
  }
  const secrets: SecretDigest[] = [];
  for (const [index, item] of list.entries()) {
    const at = Array.isArray(given) ? `${path}.value[${index}]` : `${path}.value`;
    const value = requireString(item, at);
    refuse(value, at);
    secrets.push(await SecretDigest.of(value));
  }
  return secrets;
}

/** A secret header, compared as SHA-256 digests. */
export class HeaderSecretVerifier {
  private constructor(
    readonly name: string,
    private readonly secrets: readonly SecretDigest[],
  ) {}

  static async compile(options: HeaderSecretOptions, path: string): Promise<HeaderSecretVerifier> {
    if (!isPlainObject(options)) throw configError(path, "must be { name, value }");
    assertKnownKeys(options, ["name", "value"], path);
    const name = requireString(options.name, `${path}.name`);
    if (!HEADER_NAME.test(name)) throw configError(`${path}.name`, "is not a valid header name");
    const secrets = await secretDigests(options.value, path, (value, at) => {
      if (value !== value.trim()) {
        throw configError(at, "cannot start or end with whitespace (HTTP strips it)");
      }
      if (value.includes(",")) {
        // A comma is how a repeated header arrives (joined by ", "), so such values are refused.
        throw configError(at, "cannot contain a comma (it reads as a repeated header)");
      }
    });
    // `this`, not the class's name (here and below): a class body that names its class is built
    // as `class _X` (esbuild), and `constructor.name` and util.inspect would say so.
    return new this(name.toLowerCase(), secrets);
  }

  async verify(request: AuthRequest): Promise<void> {
    const presented = await sha256(readCredentialHeader(request.headers, this.name, "secret"));
    // Every value compared, no early exit: which one matched takes the same time.
    let matched = 0;
    for (const secret of this.secrets) matched |= secret.matchesDigest(presented) ? 1 : 0;
    if (matched === 0) throw new AuthenticationError("secret header does not match");
  }
}

/**
 * The value of the query parameter `name` as the URL writes it, not decoded (a literal `+` stays
 * a `+`, `%2B` stays `%2B`), from its last pair (the caller has refused a repeated one), or
 * undefined when no pair names it. Names are compared decoded, as `URLSearchParams` reads them.
 */
function writtenParameter(url: URL, name: string): string | undefined {
  let found: string | undefined;
  for (const pair of url.search.slice(1).split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const written = equals === -1 ? pair : pair.slice(0, equals);
    const decoded = /[%+]/.test(written)
      ? new URLSearchParams(written).keys().next().value
      : written;
    if (decoded === name) found = equals === -1 ? "" : pair.slice(equals + 1);
  }
  return found;
}

/**
 * A secret URL parameter (one value, or several during a rotation), compared as SHA-256 digests
 * with the parameter both decoded (`searchParams`: the URL registered with the secret
 * percent-encoded) and as the URL writes it (a `+` or `%` registered literally, which a decoder
 * would change), without an early exit (review migrate-5).
 */
export class UrlSecretVerifier {
  private constructor(
    readonly parameter: string,
    private readonly secrets: readonly SecretDigest[],
  ) {}

  static async compile(options: UrlSecretOptions, path: string): Promise<UrlSecretVerifier> {
    if (!isPlainObject(options)) throw configError(path, "must be { parameter, value }");
    assertKnownKeys(options, ["parameter", "value"], path);
    const parameter = requireString(options.parameter, `${path}.parameter`);
    const secrets = await secretDigests(options.value, path, (value, at) => {
      if (unwritableInUrl(value)) {
        throw configError(
          at,
          'cannot contain whitespace or control characters (no URL carries them as written: a trailing newline read from a file?); "+", "%", "&" and "#" are fine, in the URL you register percent-encoded (encodeURIComponent(value)), or "+" and "%" as they are',
        );
      }
    });
    return new this(parameter, secrets);
  }

  async verify(request: AuthRequest): Promise<void> {
    const { url } = request;
    const decoded = singleParameter(url, this.parameter, "secret");
    const written = writtenParameter(url, this.parameter) ?? decoded;
    const [asDecoded, asWritten] = await Promise.all([
      sha256(decoded),
      written === decoded ? undefined : sha256(written),
    ]);
    let matched = 0;
    for (const secret of this.secrets) {
      matched |= secret.matchesDigest(asDecoded) ? 1 : 0;
      if (asWritten !== undefined) matched |= secret.matchesDigest(asWritten) ? 1 : 0;
    }
    if (matched === 0) throw new AuthenticationError("secret URL parameter does not match");
  }
}

/**
 * The cart token: required, optionally checked by the merchant. On GetCheckoutCartInfo it is the
 * payload's `merchantCartToken` (`verifyPayload`), the value the merchant's function receives; on
 * another callback, where it is configured under `callbacks`, the URL parameter (`verifyUrl`).
 */
export class CartTokenVerifier {
  private constructor(
    private readonly parameter: string,
    private readonly check: CartTokenOptions["verify"],
  ) {}

  static compile(options: CartTokenOptions, path: string): CartTokenVerifier {
    if (!isPlainObject(options)) throw configError(path, "must be an object");
    assertKnownKeys(options, ["parameter", "verify"], path);
    const parameter =
      options.parameter === undefined
        ? DEFAULT_CART_TOKEN_PARAMETER
        : requireString(options.parameter, `${path}.parameter`);
    if (options.verify !== undefined && typeof options.verify !== "function") {
      throw configError(`${path}.verify`, "must be a function");
    }
    return new this(parameter, options.verify as CartTokenOptions["verify"]);
  }

  /** Whether the merchant's `verify` checks the token; without it any token passes. */
  get verifies(): boolean {
    return this.check !== undefined;
  }

  /**
   * A callback other than GetCheckoutCartInfo: the token of the URL parameter. `credentials`: the
   * request's other credentials, masked with the token in what a throwing `verify` lets out.
   */
  async verifyUrl(request: AuthRequest, credentials: Credentials = NO_CREDENTIALS): Promise<void> {
    const token = singleParameter(request.url, this.parameter, "cart token");
    await this.accept(token, request, credentials);
  }

  /**
   * GetCheckoutCartInfo: the built payload's `merchantCartToken`, from the query or the body under
   * whichever name the handler reads it, so the token checked is the one the merchant is handed.
   */
  async verifyPayload(
    payload: unknown,
    request: AuthRequest,
    credentials: Credentials = NO_CREDENTIALS,
  ): Promise<void> {
    const token =
      typeof payload === "object" && payload !== null && Object.hasOwn(payload, "merchantCartToken")
        ? (payload as { merchantCartToken?: unknown }).merchantCartToken
        : undefined;
    if (typeof token !== "string" || token.length === 0) {
      throw new AuthenticationError("cart token (the payload's merchantCartToken) missing");
    }
    await this.accept(token, request, credentials);
  }

  private async accept(token: string, request: AuthRequest, credentials: Credentials) {
    if (this.check === undefined) return;
    let accepted: unknown;
    try {
      accepted = await this.check(token, request);
    } catch (error) {
      // What it threw may quote the token (pg's `invalid input syntax for type uuid: "<token>"`)
      // or the request's other credentials: masked in every text that goes out, as card data is.
      const redact = credentialRedactor([token, ...credentials()], request.url);
      // The library's own refusal, thrown instead of returning false: a refusal (401).
      if (holdsSafely(() => error instanceof AuthenticationError)) {
        const message = readSafely(error, "message");
        const said = message === undefined || message === "" ? "" : `: ${redact(message)}`;
        throw new AuthenticationError(`cart token rejected by verify function${said}`);
      }
      // Anything else: the check could not decide (its cart store is down), an outage answered
      // 500 with the error in onError, not a refusal (a 401 would tell ops it was a forged call).
      throw new AuthenticationOutage(
        "the cart token's verify function threw",
        scrubError(error, redact),
      );
    }
    // Only a literal true passes: a truthy string or object returned by mistake does not.
    if (accepted !== true) throw new AuthenticationError("cart token rejected by verify function");
  }
}

/** The merchant GUID(s) a payload's `MerchantGUID` must match, trimmed and lower-cased. */
export function compileMerchantGuid(
  value: string | readonly string[],
  path: string,
): ReadonlySet<string> {
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) {
    throw configError(path, "must be a GUID string or a non-empty array of them");
  }
  const set = new Set<string>();
  for (const [index, guid] of list.entries()) {
    const at = typeof value === "string" ? path : `${path}[${index}]`;
    if (typeof guid !== "string" || guid.trim().length === 0) {
      throw configError(at, "must be a non-empty string");
    }
    set.add(guid.trim().toLowerCase());
  }
  return set;
}

/**
 * Checks every top-level key of the payload spelled `MerchantGUID` in any case (the service binds
 * names case-insensitively): all must match, at least one must exist. Returns false when the
 * payload carries none and `optional` is set (GetCheckoutCartInfo by GET has no body); then a key
 * holding `null` or blank text counts as none (a serializer that writes every key writes it so).
 */
export function checkMerchantGuid(
  guids: ReadonlySet<string>,
  payload: unknown,
  optional: boolean,
): boolean {
  let found = false;
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) {
    const record = payload as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (key.length !== 12 || key.toLowerCase() !== "merchantguid") continue;
      const value = record[key];
      if (optional && (value === null || (typeof value === "string" && value.trim() === ""))) {
        continue;
      }
      if (typeof value !== "string" || !guids.has(value.trim().toLowerCase())) {
        throw new AuthenticationError("MerchantGUID does not match");
      }
      found = true;
    }
  }
  if (!found && !optional) throw new AuthenticationError("MerchantGUID missing from the payload");
  return found;
}
