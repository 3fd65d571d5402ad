import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { SESSION_FIELDS } from "../callbacks/shopper-session.js";
import { brandClass, isBrandedInstance } from "../core/brand.js";
import { giftCardSecretsOf } from "../core/card.js";
import { HEADER_BYTES_RULE, isHeaderBytes } from "../core/headers.js";
import { isRecord } from "../core/objects.js";
import { createRedactor, type Redactor, secretSpellings } from "../core/redact.js";
import { isTimerDelay, MAX_TIMEOUT_MS } from "../core/timers.js";
import type { CallbackName } from "../core/types.js";
import {
  answerSuccess,
  assertCheckOptions,
  inspectAnswer,
  payloadCardSecrets,
  payloadValue,
} from "./check.js";
import { assertKitGlobals } from "./environment.js";
import { isCallbackName, samplePayload } from "./payload.js";
import { SAMPLE_MERCHANT_GUID } from "./samples.js";
import {
  type CryptoKeyLike,
  type JoseKeyLike,
  type KeyObjectLike,
  type SignServiceTokenOptions,
  signServiceToken,
  TOKEN_OPTION_NAMES,
} from "./token.js";

/** Options of `sendCallback`. */
export interface SendCallbackOptions {
  /** Signs a fresh token for the call (PKCS#8 PEM, `CryptoKey`, Node `KeyObject`, or jose 4/5's `KeyLike`). Without it and `token`, no `Authorization` header is sent. */
  readonly privateKey?: string | CryptoKeyLike | KeyObjectLike | JoseKeyLike | undefined;
  /** A ready token, sent as `Authorization: Bearer <token>`; wins over `privateKey`. */
  readonly token?: string | undefined;
  /** Claims of the signed token (issuer, audience, lifetime, body digest claim…); the body is filled in. */
  readonly tokenOptions?: Omit<SignServiceTokenOptions, "body"> | undefined;
  /**
   * The payload: for GetCheckoutCartInfo the query parameters, otherwise the JSON body (an object,
   * or a string sent as is). Default: `samplePayload(callbackName)`.
   */
  readonly payload?: unknown;
  /**
   * Written into the payload's `MerchantGUID`, for every callback and any `payload`: pass the GUID
   * your endpoint checks (`createAuth({ merchantGuid })`), which refuses the samples' own
   * `SAMPLE_MERCHANT_GUID` with a 401. GetCheckoutCartInfo carries one only by POST (the spec
   * requires it there): this GUID, else `SAMPLE_MERCHANT_GUID`.
   */
  readonly merchantGuid?: string | undefined;
  /**
   * A cart token your endpoint knows: written into GetCheckoutCartInfo's `merchantCartToken`, into
   * SendOrderToMerchant's `CartToken`, into RemoveRestrictedProducts' `CartId` (its merchant cart
   * identifier, spec 4.7; its `CartToken` is the service's own SendCart token, left as the sample's)
   * and into `MerchantCartToken` of the gift-card and voucher payloads.
   */
  readonly cartToken?: string | undefined;
  /**
   * A shopper session your endpoint knows (`verifySession`): written into `AuthToken` and
   * `SessionId` of the gift-card and voucher payloads.
   */
  readonly authToken?: string | undefined;
  readonly sessionId?: string | undefined;
  /** Default GET for GetCheckoutCartInfo (its parameters in the query), POST for the others. */
  readonly method?: "GET" | "POST" | undefined;
  /**
   * Writes `/` as `\/` in the JSON body, as PHP's `json_encode` does by default (wire-facts §6:
   * `"N\/A"`). A text `payload` is sent as it is.
   */
  readonly escapeSlashes?: boolean | undefined;
  /** Extra request headers (a custom secret header, HTTP Basic…); they win over the defaults. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Abort the call after this many milliseconds: a positive integer, at most 2^31-1 (a
   * `RangeError` otherwise). Default 10 000.
   */
  readonly timeoutMs?: number | undefined;
  /** Answers slower than this are reported in `problems`. Default 5000. */
  readonly slowMs?: number | undefined;
  /**
   * The statuses expected (`401` to test a refusal); any other is reported in `problems`.
   * Default: any 2xx. See `checkResponse`.
   */
  readonly expectStatus?: number | readonly number[] | undefined;
  /** `"refusal"` when the test expects the endpoint to turn the call down. See `checkResponse`. */
  readonly expect?: "success" | "refusal" | undefined;
  /**
   * The callback's path under the base URL. Default: the callback name (`/SendOrderToMerchant`),
   * unless the URL already ends with it. `""` sends to the URL as given.
   */
  readonly path?: string | undefined;
  /** The fetch to use, e.g. `(request) => app.fetch(request)` to call a fetch handler without a server. */
  readonly fetch?: ((request: Request) => Response | Promise<Response>) | undefined;
}

const SEND_OPTION_NAMES = optionNames<SendCallbackOptions>({
  privateKey: true,
  token: true,
  tokenOptions: true,
  payload: true,
  merchantGuid: true,
  cartToken: true,
  authToken: true,
  sessionId: true,
  method: true,
  escapeSlashes: true,
  headers: true,
  timeoutMs: true,
  slowMs: true,
  expectStatus: true,
  expect: true,
  path: true,
  fetch: true,
});

/** What came back from one callback. */
export interface SendCallbackResult {
  readonly callback: CallbackName;
  readonly method: "GET" | "POST";
  /**
   * The URL called (with the query of GetCheckoutCartInfo), the value of each query parameter of
   * the URL given (a `urlSecret`) printed `***`, as `SendCallbackError`'s `url`.
   */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  readonly body: unknown;
  readonly text: string;
  /** From sending the request to the end of the body, in milliseconds. */
  readonly durationMs: number;
  /**
   * What the answer says: the parsed `Success` (`IsSuccess` for RemoveRestrictedProducts); for
   * GetCheckoutCartInfo, whether a 2xx answer carries a `productsList` array. Undefined when it
   * says nothing usable.
   */
  readonly success: boolean | undefined;
  /** Shape problems of the answer (`checkResponse`); empty when well-formed. */
  readonly problems: string[];
  /**
   * What deserves a look without failing the call (`inspectResponse`): a SendOrderToMerchant
   * success to an order with `PaymentDetails` that does not say what was charged; a 401 to a
   * call sent without an `Authorization` header.
   */
  readonly warnings: string[];
}

/**
 * Thrown when no answer arrives: refused connection, timeout, DNS failure. `instanceof` holds for
 * one from any copy of the library: see `core/brand.ts`.
 */
export class SendCallbackError extends Error {
  static {
    // biome-ignore lint/complexity/noThisInStatic: the class named here would be renamed `_X` by esbuild (core/brand.ts)
    brandClass(this, "SendCallbackError");
  }
  /** True for a `SendCallbackError` from any copy of the library (and for a subclass of it). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class checked (a subclass's own brand), not this one
    return isBrandedInstance(this, value);
  }
  override readonly name = "SendCallbackError";
  constructor(
    message: string,
    readonly callback: CallbackName,
    readonly url: string,
    /** Why no answer arrived: `no answer within 100 ms`, `ECONNREFUSED: …`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The URL as an error prints it: the value of each query parameter of the URL given (a
 * `urlSecret`, `?key=…`) as `***`, as the values of the headers given are masked; the parameters
 * the kit sets itself (the cart's) are kept, they say what was asked.
 */
function printedUrl(url: URL, given: readonly (readonly [string, string])[]): string {
  if (given.length === 0) return url.href;
  const names = new Set(given.map(([name]) => name));
  const shown = new URL(url.href);
  const entries = [...url.searchParams].map(([name, value]): [string, string] => [
    name,
    names.has(name) && value !== "" ? "***" : value,
  ]);
  shown.search = new URLSearchParams(entries).toString();
  return shown.href;
}

/**
 * A URL as the kit prints it (the CLI's banner and `--json`): the value of each of its query
 * parameters as `***` (a `urlSecret`), as `printedUrl` prints the URL given.
 */
export function maskedUrl(url: string | URL): string {
  const parsed = new URL(url);
  return printedUrl(parsed, [...parsed.searchParams]);
}

/**
 * A text quoting the request (a fetch error's cause) with the URL printed as `printedUrl` does,
 * and the given query's values of 4 characters or more masked wherever else they are quoted
 * (a shorter one, `?shop=eu`, would mask words).
 */
function withoutQuery(
  text: string,
  url: URL,
  shown: string,
  given: readonly (readonly [string, string])[],
): string {
  if (given.length === 0) return text;
  let masked = text.replaceAll(url.href, shown);
  for (const [, value] of given) {
    if (value.length < 4) continue;
    const form = new URLSearchParams([["", value]]).toString().slice(1);
    for (const spelling of new Set([value, encodeURIComponent(value), form])) {
      masked = masked.replaceAll(spelling, "***");
    }
  }
  return masked;
}

/** `base` + `/CallbackName`, unless the URL already names the callback. */
export function callbackUrl(
  baseOrFullUrl: string | URL,
  callbackName: CallbackName,
  path?: string,
): URL {
  const url = new URL(baseOrFullUrl);
  const pathname = url.pathname.replace(/\/+$/, "");
  let tail = path;
  if (tail === undefined) {
    const last = pathname.slice(pathname.lastIndexOf("/") + 1);
    tail = last.toLowerCase() === callbackName.toLowerCase() ? "" : callbackName;
  }
  tail = tail.replace(/^\/+/, "");
  if (tail !== "") url.pathname = `${pathname}/${tail}`;
  return url;
}

function queryValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" && !cause.message.includes(code)
      ? `${code}: ${cause.message}`
      : cause.message;
  }
  return error.message;
}

/**
 * Base64 credentials as text: UTF-8 when they are valid UTF-8, and byte for byte (Latin-1) too,
 * as an endpoint may decode them either way. Empty when they are not base64.
 */
function decodedCredentials(base64: string): string[] {
  let binary: string;
  try {
    binary = atob(base64);
  } catch {
    return [];
  }
  const texts = [binary];
  try {
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    const utf8 = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    if (utf8 !== binary) texts.push(utf8);
  } catch {
    // Not UTF-8: the bytes as they are.
  }
  return texts;
}

/**
 * What a call sends in its headers that nothing printed may repeat: the value of every header
 * given in `headers`, and of the `Authorization` header sent (a signed token or the given one),
 * its credentials after the scheme, and Basic's `user:password` and password decoded. Each also
 * as JSON writes it inside a string (a quote or backslash escaped), where a check quotes a value
 * whole or a body holds it.
 */
function headerSecrets(
  sent: Readonly<Record<string, string>>,
  given: Readonly<Record<string, unknown>>,
): string[] {
  // fetch sends a number (a JavaScript caller's) as its text: masked as that text.
  const secrets = Object.entries(given)
    .filter(([name, value]) => value !== undefined && value !== null && !isStandardHeader(name))
    .map(([, value]) => String(value))
    // A flag (`X-Debug: false`) hides nothing, and masked it would hide a body's own `false`.
    .filter((value) => !/^\s*(true|false|null)\s*$/i.test(value));
  const authorization = sent.authorization?.trim();
  if (authorization !== undefined) {
    secrets.push(authorization);
    const space = authorization.search(/\s/);
    if (space > 0) {
      const credentials = authorization.slice(space).trim();
      secrets.push(credentials);
      if (authorization.slice(0, space).toLowerCase() === "basic") {
        for (const pair of decodedCredentials(credentials)) {
          secrets.push(pair);
          const colon = pair.indexOf(":");
          if (colon >= 0) secrets.push(pair.slice(colon + 1));
        }
      }
    }
  }
  return secretSpellings(secrets);
}

/**
 * The shopper session a gift-card or voucher payload carries (`AuthToken`, `SessionId`), which
 * the library never quotes in what it reports, in each of its spellings.
 */
function sessionSecrets(payload: unknown): string[] {
  const value = payloadValue(payload);
  if (!isRecord(value)) return [];
  const record = value;
  return secretSpellings(
    SESSION_FIELDS.map((field) => record[field]).filter((text) => typeof text === "string"),
  );
}

/**
 * A gift card's security codes the payload carries (`giftCardSecretsOf`: every `CardFields`
 * member but `CardId`, a `Pin`, a `SecurityCode`), which the library never quotes either: masked
 * where an answer quotes them, in each spelling, as the session values are (review privacy-3).
 */
function giftCardSecrets(payload: unknown): string[] {
  return secretSpellings(giftCardSecretsOf(payloadValue(payload)));
}

/**
 * Request headers whose values say how to answer, not who asks: the answer may repeat them
 * (`application/json`) and they are not masked as secrets.
 */
function isStandardHeader(name: string): boolean {
  return /^(accept(-.*)?|content-(type|language|encoding)|user-agent|cache-control|pragma)$/i.test(
    name.trim(),
  );
}

/** The redactor each result's texts were masked with (see {@link sentRedactor}). */
const redactors = new WeakMap<SendCallbackResult, Redactor>();

/** The warning of a 401 answered to a call that carried no `Authorization` header. */
const UNSIGNED_401 =
  "the call carried no Authorization header (neither privateKey nor token was given): an endpoint that verifies the service's JWT answers it 401";

/**
 * The redactor `sendCallback` masked a result's problems and warnings with: the card data of
 * the payload and the secrets of the headers it sent (see `headerSecrets`), for whatever else
 * prints the answer (`simulate --show-body`, `--json`). For a result it did not make: the card
 * data of the payload.
 */
export function sentRedactor(result: SendCallbackResult, payload: unknown): Redactor {
  return redactors.get(result) ?? createRedactor(payloadCardSecrets(payload));
}

/**
 * The result with more problems and warnings (the simulator's redelivery and captured-form
 * findings), masked as the result's own: its redactor goes with it.
 */
export function withMoreProblems(
  result: SendCallbackResult,
  problems: readonly string[],
  warnings: readonly string[] = [],
): SendCallbackResult {
  if (problems.length === 0 && warnings.length === 0) return result;
  const more: SendCallbackResult = {
    ...result,
    problems: [...result.problems, ...problems],
    warnings: [...result.warnings, ...warnings],
  };
  const redact = redactors.get(result);
  if (redact !== undefined) redactors.set(more, redact);
  return more;
}

/**
 * Sends one callback the way the service does and checks the answer: POST with the JSON payload
 * and `Authorization: Bearer <jwt>`; GetCheckoutCartInfo as GET with its parameters in the query
 * (with `method: "POST"`: a JSON body of its parameters and `MerchantGUID`, the cart token also
 * in the query). Resolves with the answer whatever its status; rejects with `SendCallbackError`
 * only when no answer arrives.
 *
 * @param baseOrFullUrl the base the callbacks are mounted under (`http://127.0.0.1:3000/crossborder`)
 *   or the full URL of this callback.
 * @example
 * const result = await sendCallback(baseUrl, "SendOrderToMerchant", { privateKey: keys.privateKey });
 * expect(result.problems).toEqual([]);
 * expect(result.body).toMatchObject({ Success: true });
 */
export async function sendCallback(
  baseOrFullUrl: string | URL,
  callbackName: CallbackName,
  options: SendCallbackOptions = {},
): Promise<SendCallbackResult> {
  if (!isCallbackName(callbackName)) {
    throw new TypeError(`sendCallback: unknown callback "${String(callbackName)}"`);
  }
  assertKitGlobals("sendCallback", [
    "crypto.subtle",
    "TextEncoder",
    "structuredClone",
    ...(isRecord(options) && options.fetch !== undefined ? [] : (["fetch"] as const)),
  ]);
  // A misspelt option (`expectedStatus`, a token's `expiresIn`) would be ignored, in silence:
  // a test of a refusal would check for a success instead.
  if (isRecord(options)) {
    assertKnownKeys(options, SEND_OPTION_NAMES, "options", "sendCallback");
    const tokenOptions: unknown = options.tokenOptions;
    if (isRecord(tokenOptions)) {
      assertKnownKeys(tokenOptions, TOKEN_OPTION_NAMES, "tokenOptions", "sendCallback");
    }
  }
  const isCart = callbackName === "GetCheckoutCartInfo";
  const method = options.method ?? (isCart ? "GET" : "POST");
  if (method !== "GET" && method !== "POST") {
    throw new TypeError(`sendCallback: method must be GET or POST, got ${String(method)}`);
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  // A longer delay is no timer at all: AbortSignal.timeout would abort the call at once.
  if (!isTimerDelay(timeoutMs)) {
    throw new RangeError(
      `sendCallback: timeoutMs must be a positive integer of milliseconds (at most ${MAX_TIMEOUT_MS}), got ${String(timeoutMs)}`,
    );
  }
  assertCheckOptions(options, "sendCallback");
  const url = callbackUrl(baseOrFullUrl, callbackName, options.path);
  // fetch's own refusal quotes the URL, password included (review second-obs-5).
  if (url.username !== "" || url.password !== "") {
    throw new TypeError(
      "sendCallback: the URL must not carry a user name or password (fetch refuses it): the service authenticates with its token",
    );
  }
  // The query of the URL given (a `urlSecret`): never printed (review observe-7).
  const givenQuery = [...url.searchParams];
  let payload: unknown =
    options.payload === undefined ? samplePayload(callbackName) : options.payload;
  if (options.merchantGuid !== undefined && !isCart && isRecord(payload)) {
    payload = { ...payload, MerchantGUID: options.merchantGuid };
  }
  if (options.cartToken !== undefined && isRecord(payload)) {
    if (isCart) {
      // The name the payload gives the token: `cartToken` in the captured GET form (§6).
      const name =
        Object.hasOwn(payload, "cartToken") && !Object.hasOwn(payload, "merchantCartToken")
          ? "cartToken"
          : "merchantCartToken";
      payload = { ...payload, [name]: options.cartToken };
    } else if (callbackName === "RemoveRestrictedProducts")
      payload = { ...payload, CartId: options.cartToken };
    else if (Object.hasOwn(payload, "MerchantCartToken"))
      payload = { ...payload, MerchantCartToken: options.cartToken };
    else if (Object.hasOwn(payload, "CartToken"))
      payload = { ...payload, CartToken: options.cartToken };
  }
  for (const [field, value] of [
    ["AuthToken", options.authToken],
    ["SessionId", options.sessionId],
  ] as const) {
    if (value !== undefined && isRecord(payload) && Object.hasOwn(payload, field)) {
      payload = { ...payload, [field]: value };
    }
  }

  const headers: Record<string, string> = { accept: "application/json" };
  let body: string | undefined;
  if (isCart && method === "GET") {
    if (isRecord(payload)) {
      for (const [key, value] of Object.entries(payload)) {
        const text = queryValue(value);
        if (text !== undefined) url.searchParams.append(key, text);
      }
    }
  } else if (isCart) {
    // POST: the parameters and MerchantGUID as JSON (as the service sends them), the cart token
    // in the URL too (the spec requires it there for GET and POST).
    if (isRecord(payload)) {
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(payload)) {
        if (value !== undefined && value !== null) fields[key] = value;
      }
      fields.MerchantGUID = options.merchantGuid ?? fields.MerchantGUID ?? SAMPLE_MERCHANT_GUID;
      // Under the name the payload gives it (`cartToken` in a captured form).
      const name = fields.merchantCartToken === undefined ? "cartToken" : "merchantCartToken";
      const token = queryValue(fields[name]);
      if (token !== undefined) url.searchParams.set(name, token);
      body = JSON.stringify(fields);
    } else body = typeof payload === "string" ? payload : JSON.stringify(payload);
    headers["content-type"] = "application/json; charset=utf-8";
  } else if (method === "POST") {
    body = typeof payload === "string" ? payload : JSON.stringify(payload);
    headers["content-type"] = "application/json; charset=utf-8";
  }
  if (options.escapeSlashes === true && typeof payload !== "string" && body !== undefined) {
    body = body.replaceAll("/", "\\/");
  }

  // Checked here, before anything is signed or sent: fetch's own TypeError quotes the value,
  // and its dispatcher's refusal would read as the endpoint's fault (no answer).
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    // Any value fetch would send as its text (a number, an object from a JavaScript caller).
    if (value !== undefined && value !== null && !isHeaderBytes(String(value))) {
      throw new TypeError(
        `sendCallback: the value of header "${name}" cannot be sent: ${HEADER_BYTES_RULE}`,
      );
    }
  }
  if (typeof options.token === "string" && !isHeaderBytes(options.token)) {
    throw new TypeError(`sendCallback: the token cannot be sent in a header: ${HEADER_BYTES_RULE}`);
  }
  const token =
    options.token ??
    (options.privateKey === undefined
      ? undefined
      : await signServiceToken(options.privateKey, { ...options.tokenOptions, body: body ?? "" }));
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  for (const [name, value] of Object.entries(options.headers ?? {}))
    headers[name.toLowerCase()] = value;

  const request = new Request(url, {
    method,
    headers,
    body: body ?? null,
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  // A problem may quote the answer (a refusal's Message, a debug page listing the request's
  // headers), and the reason of a call without an answer quotes the fetch's error (which may
  // quote the request): the card and CVV sent, the header values and the credentials sent stay
  // masked. Only what is quoted from the answer or the error is masked with the header secrets:
  // the library's own sentences keep their words (`answer with application/json`), and only
  // card data is masked in them.
  const cards = payloadCardSecrets(payload);
  const redact = createRedactor([
    ...cards,
    ...headerSecrets(headers, options.headers ?? {}),
    ...sessionSecrets(payload),
    ...giftCardSecrets(payload),
  ]);
  const doFetch = options.fetch ?? fetch;
  const started = performance.now();
  let response: Response;
  let text: string;
  try {
    response = await doFetch(request);
    text = await response.text();
  } catch (error) {
    const timedOut =
      error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const shown = printedUrl(url, givenQuery);
    const why = timedOut
      ? `no answer within ${timeoutMs} ms`
      : redact(withoutQuery(describeCause(error), url, shown, givenQuery));
    const message = `${callbackName}: ${method} ${shown} failed: ${why}`;
    throw new SendCallbackError(message, callbackName, shown, why, { cause: error });
  }
  const durationMs = performance.now() - started;
  const contentType = response.headers.get("content-type") ?? undefined;
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const redactCardData = createRedactor(cards);
  const inspection = inspectAnswer(
    callbackName,
    response.status,
    contentType,
    text,
    {
      durationMs,
      slowMs: options.slowMs,
      expectStatus: options.expectStatus,
      expect: options.expect,
      payload,
    },
    redact,
    "sendCallback",
  );
  const result: SendCallbackResult = {
    callback: callbackName,
    method,
    url: printedUrl(url, givenQuery),
    status: response.status,
    contentType,
    body: parsed,
    text,
    durationMs,
    success: answerSuccess(callbackName, response.status, parsed),
    problems: inspection.problems.map(redactCardData),
    warnings: inspection.warnings.map(redactCardData),
  };
  if (
    response.status === 401 &&
    headers.authorization === undefined &&
    !(Array.isArray(options.expectStatus)
      ? options.expectStatus.includes(401)
      : options.expectStatus === 401)
  ) {
    // A 401 to a call sent without a token is most often a test that forgot its key.
    result.warnings.push(UNSIGNED_401);
  }
  redactors.set(result, redact);
  return result;
}
