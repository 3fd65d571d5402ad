/**
 * `createServiceClient`: one typed method per operation of the service-hosted interface. Each
 * method is the `call` pipeline plus what is particular to its answer (the billing summary's
 * delivery that could not be priced, VoidParcel's C102 warning, RecentProductCountryS's paging).
 */
import {
  assertKnownKeys,
  assertOptionalFunction,
  assertOptionalOneOf,
  closest,
  configError,
  optionNames,
  unknownName,
} from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import { MAX_TIMEOUT_MS, monotonicNow } from "../core/timers.js";
import type { DocumentedInput } from "../schemas/common.js";
import {
  asSent,
  type CallContext,
  type CallOptions,
  type CallResult,
  callOperation,
  callOperationThen,
  type FetchLike,
  isHeaderValue,
  positive,
  type ServiceHooks,
} from "./call.js";
import type { VoidParcelCode } from "./codes.js";
import { createServiceError, type ServiceError } from "./errors.js";
import { voidParcelWarnings } from "./failures.js";
import { InDoubtLedger } from "./in-doubt.js";
import {
  OPERATIONS,
  type OperationName,
  type ServiceNames,
  type ServiceOperationName,
} from "./operations.js";
import { Redactor } from "./redact.js";
import { type RetryOptions, resolveRetry } from "./retry.js";
import type {
  AuthenticationTokenResponse,
  BillingSummaryRequest,
  BillingSummaryResponse,
  CreateOrderRefundRequest,
  CreateOrderRefundResponse,
  DispatchConsolidatedShipmentRequest,
  DispatchConsolidatedShipmentResponse,
  DtResult,
  GetOrderRefundsRequest,
  Location,
  LocationByIpRequest,
  OrderRefundDetails,
  ProductCountry,
  ProductCountryList,
  RecentProductCountriesResponse,
  SaveProductsListRequest,
  ShippingDetailsExtendedRequest,
  ShippingDetailsExtendedResponse,
  UpdateParcelStatusRequest,
  UpdateParcelStatusResponse,
  VatCategoryCountriesRequest,
  VatCategoryCountriesResponse,
  VoidParcelRequest,
  VoidParcelResponse,
} from "./schemas.js";
import {
  DEFAULT_REFRESH_MARGIN_MS,
  TOKEN_CACHE_TIMEOUT_MS,
  type TokenCache,
  TokenProvider,
} from "./token.js";
import { globalFetch, unpooledFetch } from "./unpooled.js";

export interface ServiceClientOptions {
  /** The service's base address ({base_url}). */
  readonly baseUrl: string;
  /** The token operation's base address ({auth_url}); default `baseUrl`. */
  readonly authUrl?: string | undefined;
  /**
   * Sent in the `MerchantGUID` header (or the `merchantGUID` query parameter); never logged. An
   * operation that sends a token also sends it in the query (5.2), except the billing summary.
   */
  readonly merchantGuid: string;
  /** The user the operator set up (5.2); needed by the operations that send a token. */
  readonly credentials?: { readonly userName: string; readonly password: string } | undefined;
  /**
   * Default: the global `fetch`. Yours must make one attempt per call and pass `init.signal` on
   * (the client aborts it on a timeout, the deadline or your signal, which frees the connection);
   * one that drops it does not hold a call up, but its request goes on until the service ends it.
   */
  readonly fetch?: FetchLike | undefined;
  /** Per attempt, in milliseconds. Default 15 000; at most 2^31 - 1. */
  readonly timeoutMs?: number | undefined;
  /** For a whole call, retries and waits included. Default 60 000; at most 2^31 - 1. */
  readonly deadlineMs?: number | undefined;
  /** Backoff of the operations that may be retried; `false` turns retries off. */
  readonly retries?: RetryOptions | false | undefined;
  /** `null` means not set. */
  readonly hooks?: ServiceHooks | null | undefined;
  /**
   * Where the GUID goes for every operation; default: the operation's (header, query for
   * CreateOrderRefund); `null` means not set. Any other value is refused at creation.
   */
  readonly merchantGuidIn?: "header" | "query" | null | undefined;
  /** Which operations send a token (5.2), overriding the defaults (billing summary and shipping details). */
  readonly jwt?: Partial<Record<ServiceOperationName, boolean | undefined>> | undefined;
  /** Prefix of the token in `Authorization` where the document does not show one: default `Bearer`; `null` sends the bare token. */
  readonly tokenScheme?: string | null | undefined;
  /** A cache shared by several instances (one token for all); default: this client's memory. */
  readonly tokenCache?: TokenCache | undefined;
  /** The key under which the token is cached. Default `crossborder-callbacks:token:<authUrl>:<userName>`. */
  readonly tokenCacheKey?: string | undefined;
  /** Refresh the token this long before it expires. Default 60 000 (at most half its lifetime). */
  readonly tokenRefreshMarginMs?: number | undefined;
  /** Wire names the document does not show, per operation (see the README). */
  readonly names?: ServiceNames | undefined;
  /** Paths per operation, e.g. where CreateOrderRefund lives for you. */
  readonly paths?: Partial<Record<ServiceOperationName, string | undefined>> | undefined;
  /** Answers larger than this are refused. Default 32 MiB (dispatch answers carry base64 documents). */
  readonly maxResponseBytes?: number | undefined;
}

/** The billing summary's options: the call options and the `Idempotency-Key`. */
export interface BillingSummaryOptions extends CallOptions {
  /**
   * Default: a new UUID for this call, sent unchanged on every retry. Yours must be a UUID too
   * (4.1: "uuid, required"), or the call is refused before sending (`INVALID_REQUEST`); derive
   * one per order or renewal if retries of your own must reuse it.
   */
  readonly idempotencyKey?: string | undefined;
}

/** The billing summary request; `merchantGuid` defaults to the client's. */
export type BillingSummaryInput = Omit<DocumentedInput<BillingSummaryRequest>, "merchantGuid"> & {
  readonly merchantGuid?: string | undefined;
};

/**
 * Every delivery the service priced: `delivery` is `dtResults[0]`, `deliveries` all of `dtResults`
 * (a hybrid subscription may have more than one), each with `status.isSuccessful` true.
 */
export interface PricedBillingSummary {
  readonly calculated: true;
  readonly delivery: DtResult;
  readonly deliveries: readonly DtResult[];
  readonly summary: BillingSummaryResponse;
  readonly idempotencyKey: string;
}

/**
 * A delivery the service could not calculate (4.1 rule 3, e.g. a total above the formal
 * clearance threshold): HTTP 200, but nothing to charge. There is no `delivery` to read totals
 * from; `error` is the `status.error` of the first entry of `dtResults` whose `isSuccessful` is
 * false (not only `dtResults[0]`: a later delivery that was not calculated makes the whole summary
 * not calculated), with that entry's `deliveryId`.
 */
export interface UncalculatedBillingSummary {
  readonly calculated: false;
  readonly error: {
    readonly code: number | undefined;
    readonly description: string | undefined;
    readonly deliveryId: string;
  };
  readonly summary: BillingSummaryResponse;
  readonly idempotencyKey: string;
}

export type BillingSummaryResult = PricedBillingSummary | UncalculatedBillingSummary;

/** A warning on a successful void: C102, the carrier's cancel failed (the parcel is voided). */
export interface VoidParcelWarning {
  readonly code: VoidParcelCode;
  readonly text: string;
  /** The service's text (the shipper's error code and text), when given. */
  readonly description: string | undefined;
}

export interface VoidParcelResult {
  readonly response: VoidParcelResponse;
  readonly warnings: readonly VoidParcelWarning[];
}

/**
 * One record of RecentProductCountryS with what to do with it locally: `delete` when it is back
 * at the country default (4.7: not restricted, not forbidden, default VAT rate), else `upsert`.
 * A `delete` always has both keys as strings; an `upsert`'s keys may be `null` or missing.
 */
export type ProductCountryChange =
  | {
      readonly action: "delete";
      readonly record: ProductCountry & {
        readonly CountryCode: string;
        readonly ProductCode: string;
      };
      /** The `RequestID` of the page it came in: store it once the page is applied, and resume from it. */
      readonly requestId: number;
    }
  | {
      readonly action: "upsert";
      readonly record: ProductCountry;
      /** The `RequestID` of the page it came in: store it once the page is applied, and resume from it. */
      readonly requestId: number;
    };

export interface RecentProductCountriesInput {
  /** Where to start: 0 (the default) for everything, or the last stored `requestId`. */
  readonly requestId?: number | undefined;
  /**
   * The country's default VAT rate (e.g. from LocationByIP's `Country.DefaultVATRateType.Rate`),
   * as a map or a function. Without it, only a record with no `VATRateType` counts as default;
   * a `VATRateType` without a `Rate` never does.
   */
  readonly defaultVatRates?:
    | Readonly<Record<string, number>>
    | ((countryCode: string) => number | undefined | Promise<number | undefined>)
    | undefined;
}

export interface ServiceClient {
  calculateBillingSummary(
    request: BillingSummaryInput,
    options?: BillingSummaryOptions,
  ): Promise<BillingSummaryResult>;
  dispatchConsolidatedShipment(
    request: DocumentedInput<DispatchConsolidatedShipmentRequest>,
    options?: CallOptions,
  ): Promise<DispatchConsolidatedShipmentResponse>;
  getShippingDetailsExtended(
    request: DocumentedInput<ShippingDetailsExtendedRequest>,
    options?: CallOptions,
  ): Promise<ShippingDetailsExtendedResponse>;
  voidParcel(
    request: DocumentedInput<VoidParcelRequest>,
    options?: CallOptions,
  ): Promise<VoidParcelResult>;
  updateParcelStatus(
    request: DocumentedInput<UpdateParcelStatusRequest>,
    options?: CallOptions,
  ): Promise<UpdateParcelStatusResponse>;
  saveProductsList(
    request: DocumentedInput<SaveProductsListRequest>,
    options?: CallOptions,
  ): Promise<ProductCountryList>;
  recentProductCountries(
    request?: RecentProductCountriesInput,
    options?: CallOptions,
  ): AsyncGenerator<ProductCountryChange, void, undefined>;
  locationByIp(request: LocationByIpRequest, options?: CallOptions): Promise<Location>;
  vatCategoryCountries(
    request: DocumentedInput<VatCategoryCountriesRequest>,
    options?: CallOptions,
  ): Promise<VatCategoryCountriesResponse>;
  getOrderRefunds(
    request: GetOrderRefundsRequest,
    options?: CallOptions,
  ): Promise<OrderRefundDetails>;
  createOrderRefund(
    request: DocumentedInput<CreateOrderRefundRequest>,
    options?: CallOptions,
  ): Promise<CreateOrderRefundResponse>;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_DEADLINE_MS = 60_000;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

function httpUrl(value: unknown, option: string): string {
  const text = String(value);
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new TypeError(`${option} must be an http(s) URL`);
  }
  // Paths are appended to it, and it names the shared token (cache key): no secrets, no query.
  // A bare `?` or `#` leaves `search` and `hash` empty but stays in `href`, and every path
  // appended after it would land in the query or the fragment: any `?` or `#` is refused.
  if (url.username !== "" || url.password !== "" || /[?#]/.test(text) || /[?#]/.test(url.href)) {
    throw new TypeError(
      `${option} must not carry credentials, a query or a fragment (no "?" or "#" in it)`,
    );
  }
  return url.href;
}

/**
 * `value` as fetch would send it in a header, its ends trimmed (a CRLF `.env` leaves a `\r`), so
 * that the query, the body and the redactor use the value the header carries; or a TypeError that
 * does not quote it.
 */
function headerValue(value: string, option: string): string {
  if (!isHeaderValue(value)) {
    throw new TypeError(
      `${option} must be a value an HTTP header can carry: no control character but tab, no character beyond Latin-1 (U+00FF)`,
    );
  }
  return asSent(value);
}

/**
 * The `paths` option, checked once: each value is appended to baseUrl (authUrl for the token
 * request), so one without its leading `/` ("Order/…", "@other.example/…") would send the GUID
 * and the token to another host, and one with a `?` or `#` to another path. The message names
 * the operation, never the value.
 */
function checkedPaths(
  paths: ServiceClientOptions["paths"],
  baseUrl: string,
  authUrl: string,
): Readonly<Record<string, string>> {
  const checked: Record<string, string> = {};
  for (const [operation, path] of Object.entries(paths ?? {})) {
    if (path === undefined) continue;
    const definition = OPERATIONS[operation as OperationName] as
      | (typeof OPERATIONS)[OperationName]
      | undefined;
    const [option, base] =
      definition?.base === "auth" ? ["authUrl", authUrl] : ["baseUrl", baseUrl];
    let origin: string | undefined;
    try {
      origin = new URL(`${base.replace(/\/+$/, "")}${path}`).origin;
    } catch {
      origin = undefined;
    }
    // A "?" or "#" would move the rest of the path into a second query or the fragment.
    if (
      typeof path !== "string" ||
      !path.startsWith("/") ||
      /[?#]/.test(path) ||
      origin !== new URL(base).origin
    ) {
      throw new TypeError(
        `paths.${operation} must be a path starting with "/", without "?" or "#", that stays on ${option}'s origin`,
      );
    }
    checked[operation] = path;
  }
  return checked;
}

const CLIENT_OPTION_NAMES = optionNames<ServiceClientOptions>({
  baseUrl: true,
  authUrl: true,
  merchantGuid: true,
  credentials: true,
  fetch: true,
  timeoutMs: true,
  deadlineMs: true,
  retries: true,
  hooks: true,
  merchantGuidIn: true,
  jwt: true,
  tokenScheme: true,
  tokenCache: true,
  tokenCacheKey: true,
  tokenRefreshMarginMs: true,
  names: true,
  paths: true,
  maxResponseBytes: true,
});

const RECENT_INPUT_NAMES = optionNames<RecentProductCountriesInput>({
  requestId: true,
  defaultVatRates: true,
});

const CALL_OPTION_NAMES = optionNames<CallOptions>({
  signal: true,
  timeoutMs: true,
  deadlineMs: true,
});
const BILLING_OPTION_NAMES = optionNames<BillingSummaryOptions>({
  signal: true,
  timeoutMs: true,
  deadlineMs: true,
  idempotencyKey: true,
});

/**
 * A call's options, checked before anything is sent: a misspelt one (`timeout`), or the billing
 * summary's `idempotencyKey` given to another method, would run the call without it, in silence.
 * Not an object (`undefined`): left to the pipeline, as before.
 */
function checkedCallOptions<T>(options: T, known: readonly string[], method: string): T {
  if (isRecord(options)) assertKnownKeys(options, known, "options", method);
  return options;
}

/**
 * The options read only when a call is made, checked now: a `merchantGuidIn` of any other value
 * sent the GUID nowhere, a `fetch` that is not a function failed every call as a retried network
 * error, and a hook that is not a function was never called. `null` keeps meaning "not set", as
 * the call reads these with `??` (and `includeBodies` with `=== true`).
 */
function checkSettings(options: ServiceClientOptions): void {
  const owner = "createServiceClient";
  const guidIn = options.merchantGuidIn ?? undefined;
  assertOptionalOneOf(guidIn, ["header", "query"], "merchantGuidIn", owner);
  assertOptionalFunction(options.fetch ?? undefined, "fetch", owner);
  const hooks: unknown = options.hooks ?? undefined;
  if (hooks === undefined) return;
  if (!isRecord(hooks)) throw configError("hooks", "must be an object", owner);
  const known = ["onRequest", "onResponse", "onRetry"];
  const members = [...known, "includeBodies"];
  // A misspelt hook (`onRequst`) would never be called, a misspelt `includeBody` never read.
  // Other members (a metrics object's `flush`), far from every name, are not hooks and compile:
  // they are left alone.
  for (const key of Object.keys(hooks)) {
    if (!members.includes(key) && (/^on/i.test(key) || closest(key, members) !== undefined)) {
      throw configError("hooks", `has an unknown hook ${unknownName(key, members)}`, owner);
    }
  }
  // A class instance (a tracer) has its methods on its prototypes: one close to a hook name
  // (`onRequst()`) is a misspelt hook. Only that close: a class's other methods, `on`-named ones
  // included (an EventEmitter's `on`, `once`), are its own business.
  for (
    let proto: object | null = Object.getPrototypeOf(hooks);
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key !== "constructor" && !members.includes(key) && closest(key, members) !== undefined) {
        throw configError("hooks", `has an unknown hook ${unknownName(key, members)}`, owner);
      }
    }
  }
  for (const hook of known) {
    assertOptionalFunction(hooks[hook] ?? undefined, `hooks.${hook}`, owner);
  }
  const includeBodies = hooks.includeBodies ?? undefined;
  if (includeBodies !== undefined && typeof includeBodies !== "boolean") {
    throw configError("hooks.includeBodies", "must be a boolean", owner);
  }
}

const RETRY_OPTION_NAMES = optionNames<RetryOptions>({
  maxAttempts: true,
  baseDelayMs: true,
  maxDelayMs: true,
});

/** Every operation, the token operation included (its path is yours to set, as the others'). */
const OPERATION_NAMES: readonly string[] = Object.freeze(Object.keys(OPERATIONS));

/**
 * The nested option objects' keys, checked as the client's own: a misspelt one was ignored in
 * silence (`retries: { maxAtempts }` kept the default attempts, `jwt: { VoidParcel: true }` sent
 * no token, `names: { voidParcel: { errorCod } }` read the default name, `paths: { createOrderRefnd }`
 * called the default path). Checked as the top level is: own keys of any object (a class
 * instance's fields, a null prototype), a key given as undefined included; `retries: false`, and
 * each object left out (undefined), or an operation's names given as undefined, are not looked at.
 * The values too: a `jwt` value must be a boolean and a name a non-empty string (the message names
 * the option, never the value); undefined keeps the default.
 */
function checkNestedKeys(options: ServiceClientOptions): void {
  const owner = "createServiceClient";
  const retries: unknown = options.retries;
  if (isRecord(retries)) assertKnownKeys(retries, RETRY_OPTION_NAMES, "retries", owner);
  for (const option of ["jwt", "names", "paths"] as const) {
    const map: unknown = options[option];
    // Read with `?.[operation]` (`Object.entries` for paths): `jwt: true` or `names: "IP"` was
    // read as no override at all. `null` reads as not set, as before.
    if (map === undefined || map === null) continue;
    if (!isRecord(map)) throw configError(option, "must be an object", owner);
    assertKnownKeys(map, OPERATION_NAMES, option, owner);
  }
  // Each value as it is read (`jwt[operation]`, a class's getter included): a string ("false")
  // is truthy and sent a token. Undefined is the operation's default; null is refused, as it
  // would read as the default where it may have meant "no token".
  const jwt: unknown = options.jwt;
  if (isRecord(jwt)) {
    for (const operation of OPERATION_NAMES) {
      const value = jwt[operation];
      if (value !== undefined && typeof value !== "boolean") {
        throw configError(`jwt.${operation}`, "must be a boolean", owner);
      }
    }
  }
  const names: unknown = options.names;
  if (!isRecord(names)) return;
  for (const operation of OPERATION_NAMES) {
    const overrides = names[operation];
    if (overrides === undefined) continue;
    const path = `names.${operation}`;
    // Spread into the operation's names: a string ("Kode") would become names "0", "1"…
    if (!isRecord(overrides)) throw configError(path, "must be an object", owner);
    const known = Object.keys(OPERATIONS[operation as OperationName].names);
    assertKnownKeys(overrides, known, path, owner);
    // A wire name: anything but a non-empty string went out as "42", "null" or an empty name.
    // Undefined is the default name (left out of the spread below). The value is never quoted.
    for (const [field, name] of Object.entries(overrides)) {
      if (name !== undefined && (typeof name !== "string" || name === "")) {
        throw configError(`${path}.${field}`, "must be a non-empty string", owner);
      }
    }
  }
}

/** An operation's names: the defaults, then the overrides given (an undefined one keeps the default). */
function mergedNames(
  defaults: Readonly<Record<string, string>>,
  overrides: unknown,
): Readonly<Record<string, string>> {
  const merged: Record<string, string> = { ...defaults };
  if (!isRecord(overrides)) return merged;
  for (const [field, name] of Object.entries(overrides)) {
    if (typeof name === "string") merged[field] = name;
  }
  return merged;
}

/**
 * A RecentProductCountryS page whose `RequestID` went back: the answer cannot be used, as one not
 * of the documented shape cannot (INVALID_RESPONSE, a read, nothing applied).
 */
function wentBack(answer: CallResult, previous: number, redactor: Redactor): ServiceError {
  const id = (answer.body as RecentProductCountriesResponse).RequestID;
  // Through the redactor as every error text is (an id may read as a card number).
  const description = redactor.text(
    `the answer's RequestID ${id} is lower than the previous page's, ${previous}: its changes are older than those already handed out (a replica behind, or ids that cycle), so paging stops; resume from ${previous}`,
  );
  return createServiceError("server", {
    operation: "recentProductCountries",
    code: "INVALID_RESPONSE",
    message: `RecentProductCountryS failed: INVALID_RESPONSE — ${description}`,
    status: answer.status,
    requestId: answer.requestId,
    description,
    attempts: answer.attempts,
  });
}

/**
 * calculateBillingSummary's result from its answer: every delivery, not the first only, is
 * checked, since one that was not calculated (a hybrid subscription's second, say) leaves nothing
 * of the summary to charge.
 */
function billingResult(result: CallResult, redactor: Redactor): BillingSummaryResult {
  // Its texts (a delivery id, an error's description) are the service's, which may echo what the
  // call sent: the client's secrets are replaced while the call still holds its token (review
  // third-3). A billing call carries no card: product codes (an EAN-13 may pass the Luhn check)
  // are kept as sent (review final-1).
  const summary = redactor.secrets(result.body) as BillingSummaryResponse;
  const idempotencyKey = result.idempotencyKey as string;
  const failed = summary.dtResults.find((entry) => !entry.status.isSuccessful);
  if (failed === undefined) {
    const delivery = summary.dtResults[0] as DtResult;
    const deliveries = summary.dtResults;
    return { calculated: true, delivery, deliveries, summary, idempotencyKey };
  }
  const error = {
    code: failed.status.error?.code,
    description:
      failed.status.error?.description == null
        ? undefined
        : redactor.text(failed.status.error.description),
    deliveryId: redactor.text(failed.deliveryId),
  };
  return { calculated: false, error, summary, idempotencyKey };
}

/** The rule of 4.7: a record back at the country default is deleted locally, not stored. */
export function isBackAtDefault(
  record: ProductCountry,
  defaultVatRate: number | undefined,
): boolean {
  if (record.IsRestricted === true || record.IsForbidden === true) return false;
  // No VATRateType at all: the country's default applies. One without a Rate still names a
  // category (a reduced rate, say) that cannot be told to be the default: it is kept.
  if (record.VATRateType == null) return true;
  const rate = record.VATRateType.Rate;
  return rate != null && defaultVatRate !== undefined && Math.abs(rate - defaultVatRate) < 1e-9;
}

/** A client for the operations the service hosts. No request is sent until a method is called. */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  // A misspelt option (`timeoutMS`) would be ignored in silence, as the handler factories refuse.
  if (!isRecord(options)) {
    throw new TypeError(
      'createServiceClient: options must be an object { baseUrl, merchantGuid, … } (see the README\'s "Calling the service")',
    );
  }
  assertKnownKeys(options, CLIENT_OPTION_NAMES, "options", "createServiceClient");
  checkNestedKeys(options);
  const baseUrl = httpUrl(options.baseUrl, "baseUrl");
  const authUrl = options.authUrl === undefined ? baseUrl : httpUrl(options.authUrl, "authUrl");
  if (typeof options.merchantGuid !== "string" || options.merchantGuid.trim() === "") {
    throw new TypeError("merchantGuid is required");
  }
  const credentials = options.credentials;
  if (credentials !== undefined && !isRecord(credentials)) {
    throw configError(
      "credentials",
      "must be an object { userName, password }",
      "createServiceClient",
    );
  }
  if (credentials !== undefined) {
    assertKnownKeys(credentials, ["userName", "password"], "credentials", "createServiceClient");
  }
  if (
    credentials !== undefined &&
    (typeof credentials.userName !== "string" || typeof credentials.password !== "string")
  ) {
    throw new TypeError("credentials needs userName and password");
  }
  // Sent in the MerchantGUID and UserName headers: refused now, not by fetch on the first call;
  // trimmed once, as the header carries them, for every other place they go (the password, sent
  // in a body only, is sent as given).
  const merchantGuid = headerValue(options.merchantGuid, "merchantGuid");
  const account =
    credentials === undefined
      ? undefined
      : {
          userName: headerValue(credentials.userName, "credentials.userName"),
          password: credentials.password,
        };
  const tokenScheme =
    typeof options.tokenScheme === "string"
      ? headerValue(options.tokenScheme, "tokenScheme")
      : options.tokenScheme;
  const paths = checkedPaths(options.paths, baseUrl, authUrl);
  checkSettings(options);
  const fetchImpl: FetchLike = options.fetch ?? globalFetch;
  const redactor = new Redactor([merchantGuid, credentials?.password]);
  const names = (operation: OperationName) =>
    mergedNames(OPERATIONS[operation].names, options.names?.[operation as ServiceOperationName]);
  const ctx: CallContext = {
    baseUrl,
    authUrl,
    merchantGuid,
    merchantGuidIn: options.merchantGuidIn ?? undefined,
    fetch: fetchImpl,
    // Deno's own fetch sends a request again after a reused connection closed before the answer
    // (`unpooled.ts`): the operations that are never retried go out on connections of their own.
    fetchNeverRetried: options.fetch ?? unpooledFetch(),
    timeoutMs: positive(options.timeoutMs, "timeoutMs", DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
    deadlineMs: positive(options.deadlineMs, "deadlineMs", DEFAULT_DEADLINE_MS, MAX_TIMEOUT_MS),
    retry: resolveRetry(options.retries),
    hooks: options.hooks ?? {},
    names,
    path: (operation) =>
      Object.hasOwn(paths, operation) ? (paths[operation] as string) : OPERATIONS[operation].path,
    jwt: (operation) =>
      operation !== "getAuthenticationToken" &&
      (options.jwt?.[operation] ?? OPERATIONS[operation].jwt),
    tokenScheme: tokenScheme === undefined ? "Bearer" : tokenScheme,
    userName: account?.userName,
    get tokens() {
      return tokens;
    },
    redactor,
    maxResponseBytes: positive(
      options.maxResponseBytes,
      "maxResponseBytes",
      DEFAULT_MAX_RESPONSE_BYTES,
    ),
    now: monotonicNow,
    inDoubt: new InDoubtLedger(monotonicNow),
  };
  // The token provider calls the pipeline for GetAuthenticationToken, so it is built after `ctx`.
  const tokens: TokenProvider | undefined =
    account === undefined
      ? undefined
      : new TokenProvider({
          issue: async () => {
            const { body } = await callOperation(ctx, "getAuthenticationToken", account);
            const answer = body as AuthenticationTokenResponse;
            redactor.addToken(answer.Token);
            return { token: answer.Token, ttlMinutes: answer.TTLInMinutes ?? undefined };
          },
          cache: options.tokenCache,
          cacheKey:
            options.tokenCacheKey ?? `crossborder-callbacks:token:${authUrl}:${account.userName}`,
          marginMs: positive(
            options.tokenRefreshMarginMs,
            "tokenRefreshMarginMs",
            DEFAULT_REFRESH_MARGIN_MS,
          ),
          onToken: (token) => redactor.addToken(token),
          // The longest a refresh takes while it runs: the cache's read and write (if any), then
          // the token call within its deadline (retries included), and a margin. One pending
          // longer lost its I/O (a Worker's request that ended: review serverless-3).
          refreshLostAfterMs:
            ctx.deadlineMs +
            (options.tokenCache === undefined ? 0 : 2 * TOKEN_CACHE_TIMEOUT_MS) +
            1_000,
        });

  const call = async <T>(name: ServiceOperationName, input: unknown, callOptions?: CallOptions) => {
    const options = checkedCallOptions(callOptions, CALL_OPTION_NAMES, name);
    return (await callOperation(ctx, name, input, options)).body as T;
  };

  return {
    async calculateBillingSummary(request, options) {
      const callOptions = checkedCallOptions(
        options,
        BILLING_OPTION_NAMES,
        "calculateBillingSummary",
      );
      // Anything but an object is left to the request schema to refuse (INVALID_REQUEST).
      const input = isRecord(request)
        ? { ...request, merchantGuid: request.merchantGuid ?? merchantGuid }
        : request;
      // The result is made while the call holds its token, which a delivery's error may echo.
      return callOperationThen(
        ctx,
        "calculateBillingSummary",
        input,
        callOptions ?? {},
        callOptions?.idempotencyKey,
        (result) => billingResult(result, redactor),
      );
    },
    dispatchConsolidatedShipment: (request, callOptions) =>
      call("dispatchConsolidatedShipment", request, callOptions),
    getShippingDetailsExtended: (request, callOptions) =>
      call("getShippingDetailsExtended", request, callOptions),
    async voidParcel(request, callOptions) {
      const response = await call<VoidParcelResponse>("voidParcel", request, callOptions);
      const clean = (text: string) => redactor.text(text);
      const warnings = voidParcelWarnings(response, names("voidParcel"), clean).map((warning) => ({
        code: warning.code,
        text: "parcel voided but the carrier cancel failed",
        description:
          warning.description === undefined ? undefined : redactor.text(warning.description),
      }));
      return { response, warnings };
    },
    updateParcelStatus: (request, callOptions) => call("updateParcelStatus", request, callOptions),
    saveProductsList: (request, callOptions) => call("saveProductsList", request, callOptions),
    async *recentProductCountries(request = {}, callOptions) {
      // Not an object: refused by the pipeline's request check, as any method's request is.
      if (!isRecord(request as unknown)) await call("recentProductCountries", request, callOptions);
      // Read here, never sent as it is: a misspelt key (`requestID`, `defaultVatRate`) would be
      // dropped in silence, restarting from 0 or turning every delete into an upsert.
      else {
        const owner = "recentProductCountries";
        assertKnownKeys(request as Record<string, unknown>, RECENT_INPUT_NAMES, "request", owner);
      }
      let requestId = request.requestId ?? 0;
      const rates = request.defaultVatRates;
      const defaultRate = async (country: string) =>
        typeof rates === "function" ? await rates(country) : rates?.[country];
      const options = checkedCallOptions(callOptions, CALL_OPTION_NAMES, "recentProductCountries");
      for (let pages = 0; ; pages++) {
        const answer = await callOperation(ctx, "recentProductCountries", { requestId }, options);
        const page = answer.body as RecentProductCountriesResponse;
        // After the first page, each must move forwards: one lower than the page before (a replica
        // behind the others, ids that cycle) would be followed for ever, its older changes
        // applied over newer ones and the resume point moved back. The first page is not compared
        // with the id given: a service whose ids restarted answers a stored one with a lower id.
        if (pages > 0 && page.RequestID < requestId) throw wentBack(answer, requestId, redactor);
        const records = page.ProductCountry ?? [];
        if (records.length === 0) return;
        for (const record of records) {
          // A record without a country has no country default to compare its rate with. One
          // without either key is never a delete: there is no (country, product) to delete, and
          // a filter given a null or missing key could match far more than this record.
          const { CountryCode: country, ProductCode: product } = record;
          if (
            country != null &&
            product != null &&
            isBackAtDefault(record, await defaultRate(country))
          ) {
            // Both keys were just checked to be strings: the record is yielded as it came.
            const keyed = record as ProductCountry & { CountryCode: string; ProductCode: string };
            yield { action: "delete", record: keyed, requestId: page.RequestID };
          } else yield { action: "upsert", record, requestId: page.RequestID };
        }
        // No progress means no more changes (and guards against a loop on a stuck RequestID).
        if (page.RequestID === requestId) return;
        requestId = page.RequestID;
      }
    },
    locationByIp: (request, callOptions) => call("locationByIp", request, callOptions),
    vatCategoryCountries: (request, callOptions) =>
      call("vatCategoryCountries", request, callOptions),
    getOrderRefunds: (request, callOptions) => call("getOrderRefunds", request, callOptions),
    createOrderRefund: (request, callOptions) => call("createOrderRefund", request, callOptions),
  };
}
