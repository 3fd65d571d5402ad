/**
 * `createServiceSimulator()`: a real HTTP server on loopback that answers the operations the
 * service hosts as document 000 specifies — tokens that expire, GUID checks, the documented codes
 * and statuses, idempotency, VoidParcel's C102, the clearance-threshold case — and fails on
 * request (hangs, dropped connections, answers cut off or stalled after their status line, 429
 * with Retry-After, 503s, malformed JSON). It records
 * every request so a test can count calls and token refreshes and read the headers sent.
 *
 * `node:http` is loaded when a simulator starts, through `process.getBuiltinModule` (Node ≥ 20.16,
 * Bun, Deno): no import statement at all, so `crossborder-callbacks/testing` still bundles and
 * loads where `node:http` does not exist (Workers), as it did before the simulator.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { assertKnownKeys, configError, optionNames } from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import {
  type AnswerContext,
  billingSummary,
  bindMembers,
  createRefund,
  createSimulatorState,
  dispatch,
  dispatchRefusal,
  locationByIp,
  orderRefunds,
  parcelStatus,
  recentProductCountries,
  type SimulatedAnswer,
  type SimulatedOperation,
  type SimulatedRequest,
  type SimulatorState,
  saveProducts,
  shippingDetails,
  subscriptionError,
  vatCategories,
  voidParcel,
  voidRefusal,
} from "./service-simulator-state.js";

export {
  type ProductCountryRecord,
  SIMULATED_COUNTRY_VAT,
  SIMULATED_ORDERS,
  SIMULATED_SUBSCRIPTIONS,
  type SimulatedOperation,
  type SimulatedOrder,
  type SimulatedParcel,
  type SimulatedSubscription,
  type SimulatorState,
} from "./service-simulator-state.js";

/** The simulator's merchant GUID, user name and password unless you give your own. */
export const SIMULATOR_MERCHANT_GUID = "6f1c3c2e-4b7a-4d55-9f0e-2a8b7c6d5e4f";
export const SIMULATOR_USER_NAME = "merchant-api-user";
export const SIMULATOR_PASSWORD = "simulated-password-1";

/** Part 7's codes the simulator can be told to answer with (`fail(operation, { code })`). */
const SUBSCRIPTION_STATUS: Record<string, number> = {
  INVALID_ORDER_ID: 400,
  INVALID_SUBSCRIPTION_ID: 400,
  INVALID_PRODUCT_CODE: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  ORDER_NOT_FOUND: 404,
  SUBSCRIPTION_NOT_FOUND: 404,
  SUBSCRIPTION_DETAILS_NOT_FOUND: 404,
  PRODUCT_NOT_FOUND: 404,
  EXTERNAL_REFERENCE_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  NO_SHIPPING_OPTION_AVAILABLE: 422,
  PRODUCT_RESTRICTED: 422,
  INVALID_ADDRESS: 422,
  COUNTRY_CHANGE_NOT_ALLOWED: 422,
  VALIDATION_FAILED: 422,
  INTERNAL_ERROR: 500,
};

/** What the next request(s) of an operation get instead of (or before) the normal answer. */
export type SimulatedFailure =
  /** An HTTP status, with `Retry-After` (seconds, a Date, or the header's text) and a body. */
  | {
      readonly status: number;
      readonly retryAfter?: number | Date | string | undefined;
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>> | undefined;
    }
  /** A documented code, answered the way the operation reports it (B-codes in IsSuccess false…). */
  | { readonly code: string; readonly description?: string | undefined }
  /** Never answers (until the client gives up or the simulator closes). */
  | { readonly hang: true }
  /**
   * Closes the connection without an answer: before the operation is applied, or with
   * `apply: true` after it (the answer was lost on its way back).
   */
  | { readonly drop: true; readonly apply?: boolean | undefined }
  /** Applies the operation, sends its status line, headers and half its body, then closes the connection. */
  | { readonly cutOff: true }
  /**
   * Applies the operation, sends its status line, headers and half its body, then sends nothing
   * more (until the client gives up or the simulator closes).
   */
  | { readonly stallBody: true }
  /** HTTP 200 with a truncated JSON body. */
  | { readonly malformed: true }
  /** Answers normally after a delay. */
  | { readonly delayMs: number };

export interface RecordedServiceRequest {
  /** Undefined for a path the simulator does not serve. */
  readonly operation: SimulatedOperation | undefined;
  readonly method: string;
  readonly path: string;
  /** Query parameters by name as sent. */
  readonly query: Readonly<Record<string, readonly string[]>>;
  /** Headers by lower-cased name. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly text: string;
  /** When it arrived (epoch ms, real clock). */
  readonly at: number;
  readonly status: number | undefined;
}

export interface ServiceSimulatorOptions {
  readonly merchantGuid?: string | undefined;
  readonly userName?: string | undefined;
  readonly password?: string | undefined;
  /** `TTLInMinutes` of issued tokens. Default 15. */
  readonly tokenTtlMinutes?: number | undefined;
  /** The JWT's `exp` after issue, in ms. Default: `tokenTtlMinutes`. Short values test expiry. */
  readonly tokenLifetimeMs?: number | undefined;
  /**
   * Operations that require a token, and (the billing summary excepted) the GUID in the URL (5.2).
   * Default: the billing summary and GetShippingDetailsExtended. An operation the simulator
   * does not have is a TypeError naming the known ones.
   */
  readonly jwtOperations?: readonly SimulatedOperation[] | undefined;
  /** Billing summary totals above this cannot be calculated (4.1 rule 3). Default 1000. */
  readonly clearanceThreshold?: number | undefined;
  /** Records per RecentProductCountryS page. Default 2. */
  readonly pageSize?: number | undefined;
  /** Default 0 (any free port). */
  readonly port?: number | undefined;
}

export interface ServiceSimulator {
  /** The base URL ({base_url}), also the token operation's ({auth_url}). */
  readonly url: string;
  readonly merchantGuid: string;
  readonly credentials: { readonly userName: string; readonly password: string };
  /** Every request received, in order. */
  readonly requests: readonly RecordedServiceRequest[];
  /** Tokens issued so far (GetAuthenticationToken successes). */
  readonly tokensIssued: number;
  /** Orders, parcels, subscriptions and product-country changes; change them to set up a case. */
  readonly state: SimulatorState;
  /**
   * The requests of one operation (or all). An operation the simulator does not have is a
   * TypeError naming the known ones, as for `fail`.
   */
  count(operation?: SimulatedOperation): number;
  requestsOf(operation: SimulatedOperation): RecordedServiceRequest[];
  /**
   * Queues failures for the next requests of an operation (`"*"`: of any operation), one each. An
   * operation the simulator does not have is a TypeError naming the known ones.
   */
  fail(operation: SimulatedOperation | "*", ...failures: SimulatedFailure[]): void;
  /** Moves the simulator's clock (token expiry) forward. */
  advanceClock(ms: number): void;
  /** Makes every token issued so far invalid (as an operator-side revocation would). */
  revokeTokens(): void;
  /** Forgets requests, queued failures, tokens and idempotency keys, and reseeds the state. */
  reset(): void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;

interface Route {
  readonly operation: SimulatedOperation;
  readonly method: "GET" | "POST";
  readonly pattern: RegExp;
  readonly params: readonly string[];
}

const OWNER = "createServiceSimulator";

const SIMULATOR_OPTION_NAMES = optionNames<ServiceSimulatorOptions>({
  merchantGuid: true,
  userName: true,
  password: true,
  tokenTtlMinutes: true,
  tokenLifetimeMs: true,
  jwtOperations: true,
  clearanceThreshold: true,
  pageSize: true,
  port: true,
});

/**
 * The keys of every kind of failure: the kinds may be combined (`{ delayMs, status }` waits, then
 * answers the status), so a key of any kind is known in every failure.
 */
type FailureKey = SimulatedFailure extends infer Failure
  ? Failure extends unknown
    ? keyof Failure
    : never
  : never;
const FAILURE_KEYS = optionNames<Record<FailureKey, unknown>>({
  status: true,
  retryAfter: true,
  body: true,
  headers: true,
  code: true,
  description: true,
  hang: true,
  drop: true,
  apply: true,
  cutOff: true,
  stallBody: true,
  malformed: true,
  delayMs: true,
});

/**
 * A failure with a misspelt key (`{ stauts: 503 }`) matched no kind and the request was answered
 * as usual; one beside a known key (`{ status: 429, retyAfter: 2 }`) was left out of the answer.
 * Checked as the options are (own keys of any object); anything but an object failed the request
 * with the simulator's own 500. All are checked before any is queued.
 */
function assertFailures(failures: readonly unknown[]): void {
  failures.forEach((failure, index) => {
    const path = `fail() failures[${index}]`;
    if (!isRecord(failure)) throw configError(path, "must be an object", OWNER);
    assertKnownKeys(failure, FAILURE_KEYS, path, OWNER);
  });
}

/**
 * A name no request has: a failure queued under it never happens, a count of it is 0, and a
 * jwtOperations entry checks no token, so the test written around it passes without a word.
 */
function assertSimulated(operation: unknown, path: string, also = ""): void {
  if (ROUTES.some((route) => route.operation === operation)) return;
  const known = also + ROUTES.map((route) => route.operation).join(", ");
  const given = JSON.stringify(String(operation));
  throw configError(path, `has no operation ${given}; known: ${known}`, OWNER);
}

/** The document's paths (Part 4), matched case-insensitively as ASP.NET routes are. */
const ROUTES: readonly Route[] = [
  route("getAuthenticationToken", "POST", "/Authentication/GetAuthenticationToken"),
  route("calculateBillingSummary", "POST", "/subscriptions/billing-summary/calculate"),
  route("dispatchConsolidatedShipment", "POST", "/Order/DispatchConsolidatedShipment"),
  route("getShippingDetailsExtended", "POST", "/ShippingDetails/GetShippingDetailsExtended"),
  route("voidParcel", "POST", "/Parcel/VoidParcel"),
  route("updateParcelStatus", "POST", "/orders/{orderId}/parcels/{parcelCode}/statuses"),
  route("saveProductsList", "POST", "/Browsing/SaveProductsList"),
  route("recentProductCountries", "POST", "/Browsing/RecentProductCountryS"),
  route("locationByIp", "POST", "/Browsing/LocationByIP"),
  route("vatCategoryCountries", "POST", "/Browsing/VATCategoryCountryS"),
  route("getOrderRefunds", "GET", "/v1/orders/{orderId}/refunds"),
  route("createOrderRefund", "POST", "/Order/CreateOrderRefund"),
];

function route(operation: SimulatedOperation, method: "GET" | "POST", path: string): Route {
  const params: string[] = [];
  const source = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    params.push(name);
    return "([^/]+)";
  });
  return { operation, method, pattern: new RegExp(`^${source}/?$`, "i"), params };
}

/**
 * A Date of any realm (a jsdom or vm test environment's fails `instanceof Date`) as an HTTP date;
 * undefined for anything else (the method checks the Date's internal slot, not its prototype).
 */
function httpDate(value: unknown): string | undefined {
  try {
    return Date.prototype.toUTCString.call(value);
  } catch {
    return undefined;
  }
}

function nodeHttp(): typeof import("node:http") {
  const host = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  const http = host.process?.getBuiltinModule?.("node:http") as
    | typeof import("node:http")
    | undefined;
  if (http === undefined) {
    throw new Error(
      "createServiceSimulator needs node:http: run it in Node (>= 20.16), Bun or Deno",
    );
  }
  return http;
}

/** Starts a simulator on 127.0.0.1. Close it when done (`await simulator.close()`). */
export async function createServiceSimulator(
  options: ServiceSimulatorOptions = {},
): Promise<ServiceSimulator> {
  // A misspelt option (`credentials`, `pagesize`) would leave the simulator on its default.
  if (isRecord(options)) assertKnownKeys(options, SIMULATOR_OPTION_NAMES, "options", OWNER);
  const { createServer } = nodeHttp();
  const merchantGuid = options.merchantGuid ?? SIMULATOR_MERCHANT_GUID;
  const credentials = {
    userName: options.userName ?? SIMULATOR_USER_NAME,
    password: options.password ?? SIMULATOR_PASSWORD,
  };
  const ttlMinutes = options.tokenTtlMinutes ?? 15;
  const lifetimeMs = options.tokenLifetimeMs ?? ttlMinutes * 60_000;
  const jwtList: unknown = options.jwtOperations ?? undefined;
  if (jwtList !== undefined && !Array.isArray(jwtList)) {
    throw configError("jwtOperations", "must be a list of operation names", OWNER);
  }
  for (const operation of jwtList ?? []) assertSimulated(operation, "jwtOperations");
  const jwtOperations = new Set<SimulatedOperation>(
    jwtList ?? ["calculateBillingSummary", "getShippingDetailsExtended"],
  );
  let state = createSimulatorState();
  let clockOffset = 0;
  let tokensIssued = 0;
  let answers = 0;
  const now = () => Date.now() + clockOffset;
  /**
   * The `{ delayMs }` waits under way: `close()` and `reset()` end them (the request is let go,
   * its handler does not run), so no timer outlives the simulator nor keeps the process alive
   * (review testkit-3). Unref'd besides: a test that forgets `close()` does not wait either.
   */
  const delays = new Set<() => void>();
  const delay = (ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const cancel = (): void => {
        clearTimeout(timer);
        delays.delete(cancel);
        resolve(false);
      };
      const timer = setTimeout(() => {
        delays.delete(cancel);
        resolve(true);
      }, ms);
      timer.unref?.();
      delays.add(cancel);
    });
  const cancelDelays = (): void => {
    for (const cancel of [...delays]) cancel();
  };
  const tokens = new Map<string, number>();
  const requests: RecordedServiceRequest[] = [];
  const failures = new Map<SimulatedOperation | "*", SimulatedFailure[]>();
  const answerContext = (): AnswerContext => ({
    state,
    merchantGuid,
    clearanceThreshold: options.clearanceThreshold ?? 1000,
    pageSize: options.pageSize ?? 2,
    now,
  });

  function issueToken(): string {
    // base64url of the JSON's UTF-8 bytes, as a JWT is written: `btoa` on the text itself
    // throws above U+00FF (a user name such as "Łukasz"), which answered the token request 500.
    const encode = (value: unknown) => {
      let binary = "";
      for (const byte of new TextEncoder().encode(JSON.stringify(value))) {
        binary += String.fromCharCode(byte);
      }
      return btoa(binary).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    };
    const issuedAt = now();
    const exp = Math.floor((issuedAt + lifetimeMs) / 1000);
    const payload = {
      sub: credentials.userName,
      iat: Math.floor(issuedAt / 1000),
      exp,
      jti: crypto.randomUUID(),
    };
    const token = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}.${encode(crypto.randomUUID())}`;
    tokens.set(token, issuedAt + lifetimeMs);
    tokensIssued++;
    return token;
  }

  function tokenAnswer(body: unknown): SimulatedAnswer {
    const fields = isRecord(body) ? body : {};
    const validation = (errors: Record<string, string[]>): SimulatedAnswer => ({
      status: 400,
      body: {
        type: "https://tools.ietf.org/html/rfc7231#section-6.5.1",
        title: "One or more validation errors occurred.",
        status: 400,
        traceId: `00-${crypto.randomUUID().replace(/-/g, "")}-01`,
        errors,
      },
    });
    const { userName, password } = fields;
    if (typeof password !== "string" || password.length < 8 || password.length > 50) {
      return validation({ Password: ["The Password must be between 8 and 50 characters."] });
    }
    if (userName !== credentials.userName || password !== credentials.password) {
      return validation({ Password: ["The user name or password is incorrect."] });
    }
    return { status: 200, body: { Success: true, Token: issueToken(), TTLInMinutes: ttlMinutes } };
  }

  /** Why a request is not authenticated, or undefined when it is. */
  function refusal(
    operation: SimulatedOperation,
    request: SimulatedRequest,
  ): SimulatedAnswer | undefined {
    const unauthorized = (description: string): SimulatedAnswer =>
      operation === "calculateBillingSummary"
        ? subscriptionError("UNAUTHORIZED", 401, description)
        : { status: 401, body: { Message: description } };
    // 5.2: a token call must "still provide the merchant GUID in the URL"; the billing summary
    // carries it in its body (2.1).
    const inUrl = jwtOperations.has(operation) && operation !== "calculateBillingSummary";
    const inQuery = request.query.get("merchantguid")?.[0];
    const guid = inUrl ? inQuery : (request.headers.merchantguid ?? inQuery);
    if (guid === undefined || guid.toLowerCase() !== merchantGuid.toLowerCase()) {
      return unauthorized(
        inUrl
          ? "The merchant GUID is missing from the URL or unknown"
          : "The merchant GUID is missing or unknown",
      );
    }
    if (!jwtOperations.has(operation)) return undefined;
    const header = request.headers.authorization ?? "";
    // 5.2 shows `Bearer` for the subscription operation only; the others may send the bare token.
    const bearer = /^Bearer\s+/i.test(header);
    if (operation === "calculateBillingSummary" && !bearer) {
      return unauthorized("Authorization must be Bearer <token>");
    }
    const token = header.replace(/^Bearer\s+/i, "");
    const expires = tokens.get(token);
    if (expires === undefined || expires <= now()) {
      return unauthorized("The token is missing, unknown or expired");
    }
    if (
      operation !== "calculateBillingSummary" &&
      request.headers.username !== credentials.userName
    ) {
      return unauthorized("The UserName header does not match the token");
    }
    return undefined;
  }

  function codeAnswer(
    operation: SimulatedOperation,
    request: SimulatedRequest,
    code: string,
    description?: string,
  ): SimulatedAnswer {
    const text = description ?? `Simulated ${code}`;
    if (/^B\d{3}$/.test(code)) {
      return operation === "updateParcelStatus"
        ? { status: 200, body: { Success: false, Error: `${code}: ${text}` } }
        : dispatchRefusal(code, text);
    }
    if (/^C\d{3}$/.test(code)) {
      if (code === "C102" && operation === "voidParcel") {
        // C102 says the parcel is voided (7.3): void it as the data allows, so that voiding it
        // again answers C104; a parcel the data cannot void is refused as the data says.
        const voided = voidParcel(answerContext(), request);
        if (!isRecord(voided.body) || voided.body.IsSuccess !== true) return voided;
        return {
          status: 200,
          body: { IsSuccess: true, Errors: [{ ErrorCode: code, ErrorText: text }] },
        };
      }
      if (code === "C102") {
        return {
          status: 200,
          body: { IsSuccess: true, Errors: [{ ErrorCode: code, ErrorText: text }] },
        };
      }
      return voidRefusal(code, text);
    }
    return subscriptionError(code, SUBSCRIPTION_STATUS[code] ?? 400, text);
  }

  function answer(operation: SimulatedOperation, request: SimulatedRequest): SimulatedAnswer {
    const ctx = answerContext();
    switch (operation) {
      case "getAuthenticationToken":
        return tokenAnswer(request.body);
      case "calculateBillingSummary":
        return billingSummary(ctx, request, request.headers["idempotency-key"]);
      case "dispatchConsolidatedShipment":
        return dispatch(ctx, request);
      case "getShippingDetailsExtended":
        return shippingDetails(request);
      case "voidParcel":
        return voidParcel(ctx, request);
      case "updateParcelStatus":
        return parcelStatus(ctx, request);
      case "saveProductsList":
        return saveProducts(ctx, request);
      case "recentProductCountries":
        return recentProductCountries(ctx, request);
      case "locationByIp":
        return locationByIp(request);
      case "vatCategoryCountries":
        return vatCategories(request);
      case "getOrderRefunds":
        return orderRefunds(ctx, request);
      case "createOrderRefund":
        return createRefund(ctx, request);
    }
  }

  function nextFailure(operation: SimulatedOperation): SimulatedFailure | undefined {
    for (const key of [operation, "*"] as const) {
      const queue = failures.get(key);
      if (queue !== undefined && queue.length > 0) return queue.shift();
    }
    return undefined;
  }

  function send(
    res: ServerResponse,
    record: { status: number | undefined },
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    record.status = status;
    const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, {
      "Content-Type": "application/json; charset=utf-8",
      "X-Request-Id": `sim-${++answers}`,
      ...headers,
    });
    res.end(text);
  }

  /** The status line, the headers (with the whole body's length) and half the body; then `then`. */
  function sendPart(
    res: ServerResponse,
    record: { status: number | undefined },
    status: number,
    body: unknown,
    then: "cutOff" | "stallBody",
  ): void {
    record.status = status;
    const bytes = Buffer.from(typeof body === "string" ? body : (JSON.stringify(body) ?? ""));
    res.writeHead(status, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": String(bytes.length),
      "X-Request-Id": `sim-${++answers}`,
    });
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => {
      if (then === "cutOff") res.socket?.destroy();
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://simulator.invalid");
    const matched = ROUTES.map((candidate) => ({
      candidate,
      match: candidate.pattern.exec(url.pathname),
    })).find(({ candidate, match }) => match !== null && candidate.method === req.method);
    const { text, tooLarge } = await readBody(req);
    let body: unknown;
    let malformed = false;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      malformed = true;
    }
    const query: Record<string, string[]> = {};
    const lowerQuery = new Map<string, string[]>();
    for (const [name, value] of url.searchParams) {
      query[name] = [...(query[name] ?? []), value];
      const lower = lowerQuery.get(name.toLowerCase()) ?? [];
      lower.push(value);
      lowerQuery.set(name.toLowerCase(), lower);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers[name] = value;
      else if (Array.isArray(value)) headers[name] = value.join(", ");
    }
    const operation = matched?.candidate.operation;
    const record = {
      operation,
      method: req.method ?? "",
      path: url.pathname,
      query,
      headers,
      body,
      text,
      at: Date.now(),
      status: undefined as number | undefined,
    };
    requests.push(record);
    if (matched === undefined || operation === undefined) {
      send(res, record, 404, { Message: `No operation at ${req.method} ${url.pathname}` });
      return;
    }
    if (tooLarge) return send(res, record, 413, { Message: "The request body is too large" });
    const failure = nextFailure(operation);
    // What happens once the answer is known: sent whole, dropped, cut off or stalled mid-body.
    let delivery: "whole" | "drop" | "cutOff" | "stallBody" = "whole";
    if (failure !== undefined) {
      if ("hang" in failure) return;
      if ("drop" in failure) {
        if (failure.apply !== true) {
          req.socket.destroy();
          return;
        }
        delivery = "drop";
      }
      if ("cutOff" in failure) delivery = "cutOff";
      if ("stallBody" in failure) delivery = "stallBody";
      if ("malformed" in failure) return send(res, record, 200, '{"IsSuccess": tru');
      if ("delayMs" in failure && !(await delay(failure.delayMs))) {
        // Closed or reset meanwhile: the request is let go unanswered.
        req.socket.destroy();
        return;
      }
      if ("status" in failure) {
        const retryAfter: Record<string, string> =
          failure.retryAfter === undefined
            ? {}
            : {
                "Retry-After": httpDate(failure.retryAfter) ?? String(failure.retryAfter),
              };
        const defaultBody =
          operation === "calculateBillingSummary" && failure.status >= 500
            ? { error: "Internal error", code: "INTERNAL_ERROR", description: "Simulated failure" }
            : { Message: `Simulated HTTP ${failure.status}` };
        return send(res, record, failure.status, failure.body ?? defaultBody, {
          ...retryAfter,
          ...failure.headers,
        });
      }
    }
    const deliver = (answered: SimulatedAnswer): void => {
      if (delivery === "drop") req.socket.destroy();
      else if (delivery === "whole") send(res, record, answered.status, answered.body);
      else sendPart(res, record, answered.status, answered.body, delivery);
    };
    const params: Record<string, string> = {};
    matched.candidate.params.forEach((name, index) => {
      params[name] = decodeURIComponent(matched.match?.[index + 1] ?? "");
    });
    // Read as the service's model binds it (any letter case); recorded above as it was sent.
    const request: SimulatedRequest = {
      body: bindMembers(operation, body),
      query: lowerQuery,
      params,
      headers,
    };
    // Authentication first (the GUID and the token are read from headers and query only), as an
    // ASP.NET-style service authorizes before it binds a body.
    if (operation !== "getAuthenticationToken") {
      const refused = refusal(operation, request);
      if (refused !== undefined) return deliver(refused);
    }
    // Document 000: requests are JSON with `Content-Type: application/json`. A body declared as
    // anything else (or not declared) is refused as an ASP.NET-style service refuses it; the
    // status is not shown (7.4): 415. An empty body (4.7, 4.7a, 4.8 are query only) has nothing
    // to read, so its Content-Type, whatever it is, is not looked at.
    if (req.method === "POST" && text !== "" && !isJsonMediaType(headers["content-type"])) {
      const description = "The request's Content-Type must be application/json";
      return deliver(
        operation === "calculateBillingSummary"
          ? subscriptionError("UNSUPPORTED_MEDIA_TYPE", 415, description)
          : { status: 415, body: { Message: description } },
      );
    }
    if (malformed) {
      return deliver({ status: 400, body: { Message: "The request body is not valid JSON" } });
    }
    deliver(
      failure !== undefined && "code" in failure
        ? codeAnswer(operation, request, failure.code, failure.description)
        : answer(operation, request),
    );
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "application/json" });
      res.end('{"Message":"The simulator failed"}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    merchantGuid,
    credentials,
    get requests() {
      return requests;
    },
    get tokensIssued() {
      return tokensIssued;
    },
    get state() {
      return state;
    },
    count(operation) {
      if (operation === undefined) return requests.length;
      assertSimulated(operation, "count()");
      return requests.filter((r) => r.operation === operation).length;
    },
    requestsOf(operation) {
      assertSimulated(operation, "requestsOf()");
      return requests.filter((r) => r.operation === operation);
    },
    fail(operation, ...queued) {
      if (operation !== "*") assertSimulated(operation, "fail()", '"*", ');
      assertFailures(queued);
      const queue = failures.get(operation) ?? [];
      queue.push(...queued);
      failures.set(operation, queue);
    },
    advanceClock(ms) {
      clockOffset += ms;
    },
    revokeTokens() {
      tokens.clear();
    },
    reset() {
      cancelDelays();
      requests.length = 0;
      failures.clear();
      tokens.clear();
      tokensIssued = 0;
      clockOffset = 0;
      state = createSimulatorState();
    },
    close() {
      cancelDelays();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * What ASP.NET Core's JSON input formatter takes: `application/json`, `text/json` and
 * `application/*+json`, in any case, with parameters (`; charset=utf-8`).
 */
function isJsonMediaType(value: string | undefined): boolean {
  return (
    value !== undefined && /^\s*(application\/([\w.-]+\+)?json|text\/json)\s*(;|$)/i.test(value)
  );
}

async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  }
  return { text: tooLarge ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge };
}
