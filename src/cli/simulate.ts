import { HEADER_BYTES_RULE, isHeaderBytes } from "../core/headers.js";
import { isRecord } from "../core/objects.js";
import { createRedactor, type Redactor } from "../core/redact.js";
import { CALLBACK_NAMES, type CallbackName } from "../core/types.js";
import { encodeFormValue } from "../decode/form.js";
import { parseSuccessValue } from "../schemas/response.js";
import { inspectAnswer, payloadCardSecrets, successFieldOf } from "../testing/check.js";
import { createTestKeys } from "../testing/keys.js";
import { capturedPayload, hasCapturedPayload, samplePayload } from "../testing/payload.js";
import { SAMPLE_MERCHANT_ORDER_ID } from "../testing/samples.js";
import {
  SendCallbackError,
  type SendCallbackResult,
  sendCallback,
  sentRedactor,
  withMoreProblems,
} from "../testing/send.js";
import { signServiceToken } from "../testing/token.js";
import type { Colors } from "./colors.js";
import { UsageError } from "./errors.js";
import { cutText, printable, truncate } from "./table.js";

/**
 * What `simulate all` sends: every callback, in the order of a shopper's journey (the cart, the
 * gift card and voucher at checkout, the order and its payment, its documents, status, shipping
 * and parcels, a return and its refund), the restricted-products notice last.
 */
export const ALL_CALLBACKS: readonly CallbackName[] = [
  "GetCheckoutCartInfo",
  "ValidateGiftCard",
  "ValidateVoucher",
  "SendOrderToMerchant",
  "PerformOrderPayment",
  "RedeemGiftCard",
  "SendAdditionalRequiredDocumentsToMerchant",
  "UpdateOrderStatus",
  "UpdateOrderShippingInfo",
  "UpdateParcelDispatch",
  "SendRMAInfoToMerchant",
  "NotifyOrderRefund",
  "RefundGiftCard",
  "RemoveRestrictedProducts",
];

/**
 * The callbacks named on the command line: `all`, or names separated by commas, in any case
 * (`SendOrderToMerchant,updateorderstatus`). Throws `UsageError` for an unknown name.
 */
export function resolveCallbacks(spec: string): CallbackName[] {
  const names = spec
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length === 0) throw new UsageError("name a callback, or all");
  const chosen: CallbackName[] = [];
  for (const name of names) {
    const matched =
      name.toLowerCase() === "all"
        ? ALL_CALLBACKS
        : CALLBACK_NAMES.filter((callback) => callback.toLowerCase() === name.toLowerCase());
    if (matched.length === 0) {
      throw new UsageError(`unknown callback "${name}"; one of: all, ${CALLBACK_NAMES.join(", ")}`);
    }
    for (const callback of matched) if (!chosen.includes(callback)) chosen.push(callback);
  }
  return chosen;
}

/** What the run expects of every answer (`--expect`): a success by default. */
export interface Expectation {
  /** The statuses expected (`--expect 401`); default any 2xx. */
  readonly statuses?: readonly number[] | undefined;
  /** `"refusal"` (`--expect refusal`): the endpoint must turn the calls down. */
  readonly outcome?: "success" | "refusal" | undefined;
}

/**
 * `--expect` values: status codes (`401`) and `refusal` / `success`, repeated or separated by
 * commas (`--expect 401,refusal`).
 */
export function parseExpectation(values: readonly string[]): Expectation {
  const statuses: number[] = [];
  let outcome: "success" | "refusal" | undefined;
  for (const value of values.flatMap((text) => text.split(","))) {
    const word = value.trim().toLowerCase();
    if (/^[1-5]\d\d$/.test(word)) statuses.push(Number(word));
    else if (word === "refusal" || word === "success") {
      if (outcome !== undefined && outcome !== word) {
        throw new UsageError("--expect: refusal and success exclude each other");
      }
      outcome = word;
    } else {
      throw new UsageError(
        `--expect takes an HTTP status (401) or "refusal" or "success", got "${value.trim()}"`,
      );
    }
  }
  return { statuses: statuses.length > 0 ? statuses : undefined, outcome };
}

/** `--cart-method`: GET or POST, in any case. */
export function parseCartMethod(value: string | undefined): "GET" | "POST" | undefined {
  if (value === undefined) return undefined;
  const method = value.trim().toUpperCase();
  if (method !== "GET" && method !== "POST") {
    throw new UsageError(`--cart-method takes GET or POST, got "${value}"`);
  }
  return method;
}

/** `--path Callback=/path`, repeated: the callback's name in any case, the path under `--url`. */
export function parsePaths(values: readonly string[]): Partial<Record<CallbackName, string>> {
  const paths: Partial<Record<CallbackName, string>> = {};
  for (const value of values) {
    const at = value.indexOf("=");
    const name = value.slice(0, at).trim();
    const path = value.slice(at + 1).trim();
    if (at < 0 || name === "" || path === "") {
      throw new UsageError(
        `--path takes <Callback>=<path> (UpdateParcelDispatch=/parcels), got "${value}"`,
      );
    }
    const callback = CALLBACK_NAMES.find((known) => known.toLowerCase() === name.toLowerCase());
    if (callback === undefined) {
      throw new UsageError(
        `--path: unknown callback "${name}"; one of: ${CALLBACK_NAMES.join(", ")}`,
      );
    }
    paths[callback] = path;
  }
  return paths;
}

/** A header field name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `--header "Name: value"`, repeated. The values may be secrets: no message quotes one.
 */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(":");
    if (at < 0) throw new UsageError('--header takes "Name: value" (X-Shop-Secret: …)');
    const name = value.slice(0, at).trim();
    if (!HEADER_NAME.test(name)) {
      // Not quoted: with "=" instead of ":" or a forgotten colon, that text is the secret.
      throw new UsageError(
        '--header: the text before ":" is not a header name (letters, digits, and !#$%&\'*+-.^_`|~)',
      );
    }
    const text = value.slice(at + 1).trim();
    // Neither a line break (it would split headers) nor what fetch cannot send as bytes.
    if (!isHeaderBytes(text)) {
      throw new UsageError(`--header: the value of "${name}" cannot be sent: ${HEADER_BYTES_RULE}`);
    }
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

/** What `simulate` needs. */
export interface SimulateOptions {
  /** The base the callbacks are mounted under: each goes to `<url>/<CallbackName>`. */
  readonly url: string;
  readonly callbacks: readonly CallbackName[];
  /** Signs a token per call; without it no `Authorization` header is sent. */
  readonly privateKey?: string | CryptoKey | undefined;
  readonly merchantGuid?: string | undefined;
  /**
   * A cart the endpoint knows (GetCheckoutCartInfo's `merchantCartToken`, SendOrderToMerchant's
   * `CartToken`, RemoveRestrictedProducts' `CartId`).
   */
  readonly cartToken?: string | undefined;
  /** A shopper session the endpoint knows (the gift-card payloads' `AuthToken`, `SessionId`). */
  readonly authToken?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  /** The tokens' lifetime in seconds (`--expires-in`); negative: already expired. Default 300. */
  readonly expiresInSeconds?: number | undefined;
  readonly slowMs?: number | undefined;
  readonly timeoutMs?: number | undefined;
  /** What every answer must be (default: a 2xx success). */
  readonly expect?: Expectation | undefined;
  /** How GetCheckoutCartInfo is sent (default GET, its parameters in the query). */
  readonly cartMethod?: "GET" | "POST" | undefined;
  /** A callback's path under `url` where it is not `/<CallbackName>` (the router's `paths`). */
  readonly paths?: Partial<Record<CallbackName, string>> | undefined;
  /** Headers sent with every call (a header secret, Basic credentials). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * The payload of each callback; default its sample. A callback given a payload is not sent its
   * captured form.
   */
  readonly payloads?: Partial<Record<CallbackName, unknown>> | undefined;
  /** Called before each call is sent, and when its answer (or failure) is in. */
  readonly onSend?: ((callback: CallbackName) => void) | undefined;
  readonly onRow?: ((row: SimulationRow) => void) | undefined;
  /** For tests: a fetch to call instead of the network. */
  readonly fetch?: ((request: Request) => Response | Promise<Response>) | undefined;
}

/**
 * A later send of a row that found a problem: its redelivery or its captured form. The row's
 * `result` is the first answer, which passed; this is the answer that failed it.
 */
export interface FailedAnswer {
  readonly send: "redelivered" | "delivered twice at once" | "updated" | "as captured";
  readonly payload: unknown;
  readonly result: SendCallbackResult;
}

/** One line of the report: an answer, or why there was none. */
export type SimulationRow =
  | {
      readonly callback: CallbackName;
      readonly payload: unknown;
      readonly result: SendCallbackResult;
      /**
       * Present when the first answer passed and a later send (the redelivery, the captured
       * form) failed the row: the answers that did (none when the later send got no answer).
       */
      readonly failedAnswers?: readonly FailedAnswer[];
      /**
       * Why the row does not count (review cli-5): the check the run makes cannot apply to this
       * call. Its answer's problems are not the endpoint's.
       */
      readonly notApplicable?: string;
    }
  | { readonly callback: CallbackName; readonly payload: unknown; readonly error: string };

/**
 * The callbacks delivered twice with the identical payload, as the service may deliver the same
 * order again (wire-facts §3: an update, or a manual retry by the operator's support, the only
 * retry UpdateOrderStatus gets, 001 §4.3; README "Redelivery"): a second order, a second debit or
 * credit of a gift card, a repeat answered otherwise than the first time, or a failed second
 * delivery shows in the answer.
 */
export const REDELIVERED: readonly CallbackName[] = [
  "SendOrderToMerchant",
  "UpdateOrderStatus",
  "PerformOrderPayment",
  "SendRMAInfoToMerchant",
  "UpdateParcelDispatch",
  "RedeemGiftCard",
  "RefundGiftCard",
];

/**
 * The callbacks of `REDELIVERED` whose repeat must be answered as the first delivery, field by
 * field: a status, a return, a parcel dispatch. Another `Success`, or two different values of an
 * id or the status, is a problem; an id or status on one side only (an answer of "nothing" to a
 * status applied already: README table "same, or nothing"; 001 §4.3 shows only ResponseInfo),
 * or another `Message` or `Description` (error text, read on failure only: 001 §4.5, §7), a
 * warning.
 */
const SAME_ANSWER: readonly CallbackName[] = [
  "UpdateOrderStatus",
  "SendRMAInfoToMerchant",
  "UpdateParcelDispatch",
];
/**
 * The answer's ids and status: two different values on a repeat are a problem, a value left out
 * on one side a warning (review second-seq-4).
 */
const READ_ON_SUCCESS = ["InternalOrderId", "OrderId", "StatusCode"];

/** The gift-card calls of `REDELIVERED`: their redelivery must answer the first `Balance`. */
const GIFT_CARD_WRITES: readonly CallbackName[] = ["RedeemGiftCard", "RefundGiftCard"];

const REDELIVERED_PREFIX =
  "redelivered (the same payload again, as the service may send it again: an update, or a manual retry by the operator's support)";
/** What to do about a failed redelivery: an order keeps its id, a payment its answer. */
function redeliveryAdvice(callback: CallbackName): string {
  switch (callback) {
    case "SendOrderToMerchant":
      return "answer a redelivery as the first delivery (the same InternalOrderId, no second charge) and an update of the order (the same OrderId, changed content) with the same InternalOrderId: keep InternalOrderId per OrderId (README: Redelivery); withIdempotency alone does not cover updates";
    case "RedeemGiftCard":
    case "RefundGiftCard": {
      const what = callback === "RedeemGiftCard" ? "debit" : "credit";
      return `answer a redelivery as the first delivery (the same Balance, no second ${what}): wrap the function in withIdempotency (README: Redelivery) or record each ${callback === "RedeemGiftCard" ? "redemption" : "refund"} by its order and card`;
    }
    case "UpdateOrderStatus":
      return "answer a repeated status as the first delivery: apply a status once per OrderId and StatusCode (it sets the status, it does not toggle anything) or wrap the function in withIdempotency (README: Redelivery); UpdateOrderStatus has no automatic retries (001 §4.3): a refused status is lost unless the operator's support retries it by hand";
    case "SendRMAInfoToMerchant":
      return "answer a redelivered return as the first delivery: record it once by its RMANumber (unique per return, 001 §4.5) or wrap the function in withIdempotency (README: Redelivery)";
    case "UpdateParcelDispatch":
      return "answer a redelivered dispatch as the first delivery: record it once by its parcel Code or wrap the function in withIdempotency (README: Redelivery)";
    default:
      return "answer a redelivery as the first delivery (the same answer, no second charge): wrap the function in withIdempotency (README: Redelivery) or key it by OrderId";
  }
}

/**
 * The service order id of the order `simulate` delivers twice at once (a third order of the
 * journey, after the sample's and the captured one's): new to the endpoint, so a function that
 * looks the order up and then creates it, with an `await` between, makes two of it.
 */
export const OVERLAP_ORDER_ID = "GE927127003US";

const OVERLAP_PREFIX = `delivered twice at once (a new order, OrderId ${OVERLAP_ORDER_ID}, delivered again before its first delivery was answered: a retry of a slow call, two instances behind a load balancer)`;

const OVERLAP_ADVICE =
  "make one order per OrderId whatever the timing, and answer a repeat with that order (or, while the first still runs, with a 5xx the service retries, as withIdempotency's 503 DELIVERY_IN_PROGRESS), not with a refusal: wrap the function in withIdempotency (README: Redelivery), or make the write atomic per OrderId where the order lives (a unique key on the service's order id, INSERT … ON CONFLICT; README: Callbacks out of order)";

/** Both of the pair answered with a 5xx: no delivery was answered with the order. */
const OVERLAP_NONE_ADVICE =
  "neither delivery was answered with the order: answer the first with it (a repeat may wait for it, or be answered 503 while it runs, as withIdempotency does)";

/**
 * How a later send carrying the bare token (review fidelity-8) is named: the service's form of the
 * header is not fixed (wire-facts §5/§6: integrations accept both, the operator's cartridge strips an
 * optional `Bearer `), so one later send of each run (the first redelivery, or the first captured
 * form) carries `Authorization: <jwt>`.
 */
const BARE_TOKEN_FORM =
  'with the bare token ("Authorization: <jwt>" without "Bearer ", a form the service may send: wire-facts §5/§6)';
const BARE_TOKEN_ADVICE =
  'the library accepts the token with or without "Bearer ", and the same call with "Bearer " passed, so something in front of the library (a gateway, an authorizer, a middleware such as express-jwt) requires "Bearer ": let it accept the bare token too';

/** A 401 to the bare token, after the same call with `Bearer ` passed: the header's form refused. */
function bareTokenFindings(prefix: string, answer: SendCallbackResult): string[] | undefined {
  return answer.status === 401
    ? [`${prefix} ${BARE_TOKEN_FORM}: HTTP 401; ${BARE_TOKEN_ADVICE}`]
    : undefined;
}

/** The order under `OVERLAP_ORDER_ID`; `undefined` for a payload that is not an object. */
function overlappingOrder(payload: unknown): unknown {
  return isRecord(payload) ? { ...payload, OrderId: OVERLAP_ORDER_ID } : undefined;
}

/**
 * Whether the service retries an answer: a 5xx (README "Redelivery": a 503 `DELIVERY_IN_PROGRESS`
 * of a repeat still running elsewhere past `waitMs`, a 500 of a store that cannot be reached; "a
 * 5xx is what any retrying sender retries"). A 4xx or a refusal is not retried.
 */
function isRetriedAnswer(result: SendCallbackResult): boolean {
  return result.status >= 500 && result.status <= 599;
}

/**
 * The problems of a 5xx answer besides its status, which the service retries without reading the
 * body: a slow answer, card data sent back.
 */
function retriedAnswerProblems(
  result: SendCallbackResult,
  payload: unknown,
  slowMs: number | undefined,
): string[] {
  return inspectAnswer(
    result.callback,
    result.status,
    result.contentType,
    result.text,
    { durationMs: result.durationMs, slowMs, expectStatus: [result.status], payload },
    sentRedactor(result, payload),
  ).problems;
}

/**
 * The findings of two overlapping deliveries of one new order (review fidelity-1): each answer's
 * own problems, or two different `InternalOrderId`s (two orders). A 5xx to one of the pair is the
 * expected answer of a repeat while the first runs (withIdempotency's 503 `DELIVERY_IN_PROGRESS`
 * past `waitMs`, review second-kit-1), a failure the service retries: that delivery is sent again
 * once both are answered (`resend`), as the service's retry would, and the `InternalOrderId` of
 * its answer compared with the other's. Only its own other problems (slow, card data sent back)
 * count. Both of the pair 5xx, a failure the service does not retry (a 4xx, a refusal), or a
 * failed answer to the resend is a problem. The answers that failed the row are returned with them.
 */
async function overlapFindings(
  first: SendCallbackResult,
  second: SendCallbackResult,
  resend: () => Promise<SendCallbackResult>,
  payload: unknown,
  slowMs: number | undefined,
): Promise<{ problems: string[]; failed: SendCallbackResult[]; passed: SendCallbackResult[] }> {
  const problems: string[] = [];
  const failed: SendCallbackResult[] = [];
  const passed: SendCallbackResult[] = [];
  const retried: SendCallbackResult[] = [];
  for (const answer of [first, second]) {
    if (answer.problems.length === 0) {
      passed.push(answer);
      continue;
    }
    if (!isRetriedAnswer(answer)) {
      failed.push(answer);
      problems.push(
        ...answer.problems.map((problem) => `${OVERLAP_PREFIX}: ${problem}; ${OVERLAP_ADVICE}`),
      );
      continue;
    }
    retried.push(answer);
    const others = retriedAnswerProblems(answer, payload, slowMs);
    if (others.length === 0) continue;
    failed.push(answer);
    problems.push(
      ...others.map(
        (problem) =>
          `${OVERLAP_PREFIX}: answered HTTP ${answer.status} (a failure the service retries): ${problem}`,
      ),
    );
  }
  if (problems.length > 0) return { problems, failed, passed };
  const [one] = passed;
  if (one === undefined) {
    // Both 5xx: the order was made by neither.
    return {
      problems: retried.flatMap((answer) =>
        answer.problems.map((problem) => `${OVERLAP_PREFIX}: ${problem}; ${OVERLAP_NONE_ADVICE}`),
      ),
      failed: retried,
      passed,
    };
  }
  let other = passed[1];
  let prefix = OVERLAP_PREFIX;
  if (other === undefined) {
    const status = retried[0]?.status;
    prefix = `${OVERLAP_PREFIX}; the one answered HTTP ${status} (a failure the service retries), sent again once both were answered`;
    try {
      other = await resend();
    } catch (error) {
      if (!(error instanceof SendCallbackError)) throw error;
      return { problems: [`${prefix}: no answer: ${error.reason}`], failed: [], passed };
    }
    if (other.problems.length > 0) {
      return {
        problems: other.problems.map((problem) => `${prefix}: ${problem}; ${OVERLAP_ADVICE}`),
        failed: [other],
        passed,
      };
    }
    passed.push(other);
  }
  const [a, b] = [internalOrderIdOf(one), internalOrderIdOf(other)];
  if (a === undefined || b === undefined || a === b) return { problems, failed, passed };
  return {
    problems: [
      `${prefix}: InternalOrderId ${JSON.stringify(a)} and ${JSON.stringify(b)}: two orders for one OrderId; ${OVERLAP_ADVICE}`,
    ],
    failed: [other],
    passed,
  };
}

const UPDATED_PREFIX =
  "updated (the same OrderId with another PrimaryShipping.Address2, as the service sends an order update)";

/** The Address2 values of the update, encoded as the service encodes it; the first that differs. */
const UPDATED_ADDRESS2 = ["Floor 3, Building B", "Floor 4, Building B"].map(encodeFormValue);

/**
 * The order as the service sends an update of it: the same payload, `OrderId` included, with
 * another `PrimaryShipping.Address2`. `undefined` when the payload has no `PrimaryShipping` to
 * change (a given payload).
 */
function orderUpdate(payload: unknown): unknown {
  if (!isRecord(payload) || !isRecord(payload.PrimaryShipping)) return undefined;
  const shipping = payload.PrimaryShipping;
  const address2 = UPDATED_ADDRESS2.find((value) => value !== shipping.Address2);
  return { ...payload, PrimaryShipping: { ...shipping, Address2: address2 } };
}

/**
 * The update's findings: its own problems, or an `InternalOrderId` other than the first's (an
 * update "runs again: it keeps the order's id").
 */
function updateFindings(first: SendCallbackResult, again: SendCallbackResult): string[] {
  const advice = redeliveryAdvice(first.callback);
  if (again.problems.length > 0) {
    return again.problems.map((problem) => `${UPDATED_PREFIX}: ${problem}; ${advice}`);
  }
  const before = internalOrderIdOf(first);
  const after = internalOrderIdOf(again);
  if (before === undefined || after === undefined || before === after) return [];
  return [
    `${UPDATED_PREFIX}: InternalOrderId ${JSON.stringify(before)} then ${JSON.stringify(after)}: a second order for the same OrderId; ${advice}`,
  ];
}

/** What each captured form carries, named in its problems. */
const CAPTURED_FORMS: Partial<Record<CallbackName, string>> = {
  GetCheckoutCartInfo: 'the token named cartToken, countryCode "GER", IsStockValidation=1',
  SendOrderToMerchant:
    'PaymentDetails null, " EUR", an all-null address, CRLF in Address2, encoding not following IsEndCustomerPrimary, \\/ escapes',
  PerformOrderPayment: 'CardNumber and CVVNumber null, PaymentMethodCode "OT"',
  UpdateOrderStatus:
    'StatusCode "CANCELLED" (wire-facts §3: compare case-insensitively, isOrderStatus), MerchantOrderId null (find the order by OrderId), \\/ escapes',
};

/** GetCheckoutCartInfo's captured POST form (wire-facts §6), for `--cart-method POST`. */
const POST_CART_FORM = 'POST {MerchantGUID, merchantCartToken, countryCode "GER"}';

function capturedPostCart(): unknown {
  const { cartToken, countryCode } = capturedPayload("GetCheckoutCartInfo");
  return { merchantCartToken: cartToken, countryCode };
}

/** The `InternalOrderId` of an answer, when it carries one (text not blank, or a number). */
function internalOrderIdOf(result: SendCallbackResult): string | undefined {
  const { body } = result;
  if (!isRecord(body)) return undefined;
  const id = body.InternalOrderId;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return typeof id === "string" && id.trim() !== "" ? id : undefined;
}

/** A payload's `OrderId` (the service's order id), when it carries one as text. */
function orderIdOf(payload: unknown): string | undefined {
  if (!isRecord(payload)) return undefined;
  const id = payload.OrderId;
  return typeof id === "string" && id.trim() !== "" ? id : undefined;
}

/** What an order stated it costs: `InternationalDetails`' transaction total and currency. */
interface StatedTotal {
  readonly amount: unknown;
  readonly currency: unknown;
}

function statedTotalOf(payload: unknown): StatedTotal | undefined {
  if (!isRecord(payload) || !isRecord(payload.InternationalDetails)) return undefined;
  const details = payload.InternationalDetails;
  const amount = details.TransactionTotalPrice ?? details.TotalPrice;
  const currency = details.TransactionCurrencyCode ?? details.CurrencyCode;
  if (amount == null && currency == null) return undefined;
  return { amount, currency };
}

/** An amount as a number (`"123.73"` and `123.73` are one), NaN when it is none. */
function amountNumber(value: unknown): number {
  return typeof value === "number" || (typeof value === "string" && value.trim() !== "")
    ? Number(value)
    : Number.NaN;
}

/** A currency code compared as the service reads it: trimmed, in any case (`" EUR"`, `usd`). */
function currencyText(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim().toUpperCase() : undefined;
}

const CHARGED_ADVICE =
  "a merchant charging in its own currency rightly answers its own amount and currency; otherwise check the unit (cents?) and the currency of what was charged: the service records PaymentAmount and PaymentCurrencyCode as the amount actually charged (001 §4.4)";

/**
 * A PerformOrderPayment answer's `PaymentAmount`/`PaymentCurrencyCode` against what the run sent
 * (the payment's `InternationalDetails`, else its order's): a difference is a warning, not a
 * failure (review cli-2).
 */
function chargedWarnings(result: SendCallbackResult, stated: StatedTotal | undefined): string[] {
  if (stated === undefined || !isRecord(result.body)) return [];
  const { PaymentAmount: amount, PaymentCurrencyCode: currency } = result.body;
  if (amount == null && currency == null) return [];
  const [paid, due] = [amountNumber(amount), amountNumber(stated.amount)];
  const amountDiffers = Number.isFinite(paid) && Number.isFinite(due) && paid !== due;
  const [paidIn, dueIn] = [currencyText(currency), currencyText(stated.currency)];
  const currencyDiffers = paidIn !== undefined && dueIn !== undefined && paidIn !== dueIn;
  if (!amountDiffers && !currencyDiffers) return [];
  const show = (value: unknown) => (typeof value === "string" ? value.trim() : String(value));
  return [
    `PaymentAmount ${show(amount)} ${show(currency)}, the order stated ${show(stated.amount)} ${show(stated.currency)}: ${CHARGED_ADVICE}`,
  ];
}

/**
 * The payload with the merchant's own order id (the `InternalOrderId` answered earlier) as its
 * `MerchantOrderId` (001 §2.1), where it still holds the sample's placeholder.
 */
function withMerchantOrderId(payload: unknown, merchantOrderId: string | undefined): unknown {
  if (merchantOrderId === undefined || !isRecord(payload)) return payload;
  if (payload.MerchantOrderId !== SAMPLE_MERCHANT_ORDER_ID) return payload;
  return { ...payload, MerchantOrderId: merchantOrderId };
}

/** Whether an answer is a refusal (`Success` false in a JSON object), not a crash (5xx). */
function isRefusal(result: SendCallbackResult): boolean {
  return (
    result.status < 500 &&
    isRecord(result.body) &&
    parseSuccessValue(result.body[successFieldOf(result.callback)]) === false
  );
}

/** How `checkResponse` begins the problem of a refusal where a success was expected. */
const REFUSAL_PROBLEM = "a refusal: ";

/**
 * The redelivery's findings: its own problems, or an `InternalOrderId` other than the first's
 * (compared only when both answers carry one: PerformOrderPayment need not answer it). A
 * PerformOrderPayment refused the second time with a 2xx is a warning: the spec documents no
 * error for a repeated payment, so refusing it is not wrong, only not answering as the first
 * delivery. Only the refusal itself: card data sent back, a non-2xx status, a body that is not
 * JSON or a slow answer stay problems.
 */
function redeliveryFindings(
  first: SendCallbackResult,
  again: SendCallbackResult,
): { problems: string[]; warnings: string[] } {
  if (again.problems.length > 0) {
    const found = { problems: [] as string[], warnings: [] as string[] };
    const refusedPayment =
      (first.callback === "PerformOrderPayment" || GIFT_CARD_WRITES.includes(first.callback)) &&
      again.status >= 200 &&
      again.status < 300 &&
      isRefusal(again);
    for (const problem of again.problems) {
      const line = `${REDELIVERED_PREFIX}: ${problem}; ${redeliveryAdvice(first.callback)}`;
      if (refusedPayment && problem.startsWith(REFUSAL_PROBLEM)) found.warnings.push(line);
      else found.problems.push(line);
    }
    return found;
  }
  if (GIFT_CARD_WRITES.includes(first.callback)) return giftCardFindings(first, again);
  if (SAME_ANSWER.includes(first.callback)) return sameAnswerFindings(first, again);
  const before = internalOrderIdOf(first);
  const after = internalOrderIdOf(again);
  if (before === undefined || after === undefined || before === after) {
    return { problems: [], warnings: [] };
  }
  const what = first.callback === "SendOrderToMerchant" ? "a duplicate order" : "a second order id";
  return {
    problems: [
      `${REDELIVERED_PREFIX}: InternalOrderId ${JSON.stringify(before)} then ${JSON.stringify(after)}: ${what} on redelivery; ${redeliveryAdvice(first.callback)}`,
    ],
    warnings: [],
  };
}

/** A member of an answer's JSON object, when the body is one. */
function answerField(result: SendCallbackResult, name: string): unknown {
  return isRecord(result.body) ? result.body[name] : undefined;
}

/**
 * Whether two `Balance`s state one amount: as numbers when both are (`"75.00"` and `"75"` are one,
 * review second-pit-3), else as sent.
 */
function sameAmount(before: unknown, after: unknown): boolean {
  const number = (value: unknown) =>
    typeof value === "number" || (typeof value === "string" && value.trim() !== "")
      ? Number(value)
      : Number.NaN;
  const [a, b] = [number(before), number(after)];
  if (Number.isFinite(a) && Number.isFinite(b)) return a === b;
  return JSON.stringify(before) === JSON.stringify(after);
}

/**
 * A status, return or parcel dispatch redelivered: answered as the first delivery, field by field
 * (`Success` read as the library reads it: `true` and `"True"` are one). Another `Success`, or
 * two different values of `InternalOrderId`, `OrderId` or `StatusCode`, is a problem; one of those
 * left out on one side, or another value of any other field (`Message`, `Description`), a warning.
 */
function sameAnswerFindings(
  first: SendCallbackResult,
  again: SendCallbackResult,
): { problems: string[]; warnings: string[] } {
  const found = { problems: [] as string[], warnings: [] as string[] };
  const advice = redeliveryAdvice(first.callback);
  const success = successFieldOf(first.callback);
  const fields = new Set([
    ...(isRecord(first.body) ? Object.keys(first.body) : []),
    ...(isRecord(again.body) ? Object.keys(again.body) : []),
  ]);
  for (const field of fields) {
    const before = answerField(first, field);
    const after = answerField(again, field);
    const same =
      field === success
        ? parseSuccessValue(before) === parseSuccessValue(after)
        : JSON.stringify(before) === JSON.stringify(after);
    if (same) continue;
    const line = `${REDELIVERED_PREFIX}: ${field} ${JSON.stringify(before) ?? "absent"} then ${JSON.stringify(after) ?? "absent"}: another answer on redelivery; ${advice}`;
    const bothPresent = before != null && after != null;
    if (field === success || (READ_ON_SUCCESS.includes(field) && bothPresent)) {
      found.problems.push(line);
    } else found.warnings.push(line);
  }
  return found;
}

/**
 * A gift card's redelivery answered as the first delivery: the same `Balance` (the same amount: a
 * second debit or credit changes it) and the same `Success` (read as the library reads it: `true` and
 * `"True"` are one).
 */
function giftCardFindings(
  first: SendCallbackResult,
  again: SendCallbackResult,
): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const advice = redeliveryAdvice(first.callback);
  const what = first.callback === "RedeemGiftCard" ? "a second debit" : "a second credit";
  const before = answerField(first, "Balance");
  const after = answerField(again, "Balance");
  if (!sameAmount(before, after)) {
    problems.push(
      `${REDELIVERED_PREFIX}: Balance ${JSON.stringify(before) ?? "absent"} then ${JSON.stringify(after) ?? "absent"}: ${what} on redelivery; ${advice}`,
    );
  }
  const field = successFieldOf(first.callback);
  const successBefore = parseSuccessValue(answerField(first, field));
  const successAfter = parseSuccessValue(answerField(again, field));
  if (successBefore !== successAfter) {
    problems.push(
      `${REDELIVERED_PREFIX}: ${field} ${JSON.stringify(answerField(first, field)) ?? "absent"} then ${JSON.stringify(answerField(again, field)) ?? "absent"}: another answer on redelivery; ${advice}`,
    );
  }
  return { problems, warnings: [] };
}

/**
 * Sends the callbacks one after the other, as the service would, and collects the answers. Once
 * SendOrderToMerchant is answered with an `InternalOrderId`, the later calls carry it as their
 * `MerchantOrderId` (unless their payload was given with another). Where a success is expected
 * and the answer passed: the callbacks of `REDELIVERED` are delivered again with the identical
 * payload, and the callbacks with a captured form
 * (`capturedPayload`, wire-facts §6) are sent that form too, unless their payload was given; what
 * those find is added to the row's problems (a refused repeated payment or gift-card call answered
 * 2xx: to its warnings), and their answers that failed it to its `failedAnswers`. "A success is
 * expected": no `expect`, or one that lists only 2xx statuses and not the outcome `refusal`.
 */
export async function simulate(options: SimulateOptions): Promise<SimulationRow[]> {
  const rows: SimulationRow[] = [];
  // `--expect 200` expects a success too: only a non-2xx status or a refusal skips the later sends.
  const expectsSuccess =
    options.expect?.outcome !== "refusal" &&
    (options.expect?.statuses ?? []).every((status) => status >= 200 && status < 300);
  let merchantOrderId: string | undefined;
  let capturedMerchantOrderId: string | undefined;
  // The captured payment is for the captured order: sent only once that order passed in this run.
  let capturedOrderPassed = false;
  // One later send per run carries the bare token (review fidelity-8): only where simulate signs
  // the tokens (an Authorization given with --header is sent as it is).
  let bareTokenDue =
    options.privateKey !== undefined &&
    !Object.keys(options.headers ?? {}).some((name) => name.toLowerCase() === "authorization");
  const takeBareToken = () => {
    const due = bareTokenDue;
    bareTokenDue = false;
    return due;
  };
  // A captured form carries it only in a run with no redelivery: the cart's captured GET comes
  // first in the default order, and often without the JWT, so a guard requiring "Bearer" on the
  // order callbacks would pass the run (review final3-3).
  const runRedelivers = options.callbacks.some((callback) => REDELIVERED.includes(callback));
  // A forged call with a wrong --guid (review cli-5): a valid token, not expired, a GUID given and a
  // 401 expected. The cart's GET carries no MerchantGUID, so its 2xx is not the endpoint's fault.
  const wrongGuidCheck =
    options.merchantGuid !== undefined &&
    options.privateKey !== undefined &&
    (options.expiresInSeconds === undefined || options.expiresInSeconds > 0) &&
    (options.expect?.statuses ?? []).includes(401);
  // The merchant order answered for each service order of the run, and back (review cli-1): two
  // OrderIds answered with one InternalOrderId are two orders merged into one.
  const merchantOrderOf = new Map<string, string>();
  const serviceOrderOf = new Map<string, string>();
  const statedTotals = new Map<string, StatedTotal>();
  /** Records a passing order answer; the problem when its id is another order's already. */
  const claimOrder = (payload: unknown, answer: SendCallbackResult): string | undefined => {
    const orderId = orderIdOf(payload);
    const internal = internalOrderIdOf(answer);
    if (orderId === undefined || internal === undefined || answer.problems.length > 0) {
      return undefined;
    }
    const stated = statedTotalOf(payload);
    if (stated !== undefined && !statedTotals.has(orderId)) statedTotals.set(orderId, stated);
    const owner = serviceOrderOf.get(internal);
    if (owner !== undefined && owner !== orderId) {
      return `${orderId} answered InternalOrderId ${JSON.stringify(internal)}, already the merchant order of ${owner}: two orders merged into one (the service records it as the merchant order of both, so the second is never fulfilled and its later callbacks update the first); key InternalOrderId by OrderId, not by the cart or the shopper (README: Redelivery)`;
    }
    serviceOrderOf.set(internal, orderId);
    if (!merchantOrderOf.has(orderId)) merchantOrderOf.set(orderId, internal);
    return undefined;
  };
  /**
   * The warnings of a passing answer about another order (review cli-2): an `InternalOrderId`
   * other than the one answered for its `OrderId`; for a payment, another amount or currency.
   */
  const orderWarnings = (payload: unknown, answer: SendCallbackResult): string[] => {
    const orderId = orderIdOf(payload);
    if (orderId === undefined || answer.problems.length > 0) return [];
    const found: string[] = [];
    if (answer.callback === "PerformOrderPayment") {
      found.push(...chargedWarnings(answer, statedTotalOf(payload) ?? statedTotals.get(orderId)));
    }
    const internal = internalOrderIdOf(answer);
    const known = merchantOrderOf.get(orderId);
    if (internal !== undefined && known !== undefined && internal !== known) {
      const other = serviceOrderOf.get(internal);
      found.push(
        `InternalOrderId ${JSON.stringify(internal)}, but the order ${orderId} was answered ${JSON.stringify(known)} by SendOrderToMerchant${other === undefined ? "" : ` (${JSON.stringify(internal)} is the merchant order of ${other})`}: this answer names another order; answer the order's own id`,
      );
    }
    return found;
  };
  for (const callback of options.callbacks) {
    const given = options.payloads?.[callback];
    const payload = withMerchantOrderId(given ?? samplePayload(callback), merchantOrderId);
    options.onSend?.(callback);
    // Each call signs a token of its own (a random jti, review fidelity-9): RS256 is
    // deterministic, so a redelivery signed in the same second would repeat the first token byte
    // for byte, and a merchant's replay guard would fail it; the service's real redelivery comes later.
    const tokenOptions = {
      issuer: options.issuer,
      audience: options.audience,
      expiresInSeconds: options.expiresInSeconds,
    };
    const send = async (
      body: unknown,
      escapeSlashes?: boolean,
      bareToken?: boolean,
      signingKey?: string,
    ) =>
      sendCallback(options.url, callback, {
        payload: body,
        escapeSlashes,
        privateKey: bareToken ? undefined : (signingKey ?? options.privateKey),
        merchantGuid: options.merchantGuid,
        cartToken: options.cartToken,
        authToken: options.authToken,
        sessionId: options.sessionId,
        tokenOptions: { ...tokenOptions, claims: { jti: crypto.randomUUID() } },
        slowMs: options.slowMs,
        timeoutMs: options.timeoutMs,
        expectStatus: options.expect?.statuses,
        expect: options.expect?.outcome,
        fetch: options.fetch,
        method: callback === "GetCheckoutCartInfo" ? options.cartMethod : undefined,
        path: options.paths?.[callback],
        headers:
          bareToken && options.privateKey !== undefined
            ? {
                ...options.headers,
                authorization: await signServiceToken(options.privateKey, {
                  ...tokenOptions,
                  claims: { jti: crypto.randomUUID() },
                }),
              }
            : options.headers,
      });
    let row: SimulationRow;
    try {
      const result = await send(payload);
      if (
        wrongGuidCheck &&
        callback === "GetCheckoutCartInfo" &&
        options.cartMethod !== "POST" &&
        result.status >= 200 &&
        result.status < 300
      ) {
        // A wrong --guid with a valid key, or a stranger key the cart does not check? A token of
        // a key made now, which no endpoint knows, tells them apart: refused, the run's key is
        // the endpoint's and only the GUID, which the GET does not carry, is wrong.
        const stranger = (await createTestKeys()).privateKey;
        const probe = await send(payload, undefined, false, stranger);
        row =
          probe.status >= 200 && probe.status < 300
            ? {
                callback,
                payload,
                result: withMoreProblems(result, [UNCHECKED_CART_TOKEN]),
              }
            : { callback, payload, result, notApplicable: WRONG_GUID_CART };
        rows.push(row);
        options.onRow?.(row);
        continue;
      }
      if (callback === "SendOrderToMerchant") merchantOrderId = internalOrderIdOf(result);
      const more: string[] = [];
      const warnings: string[] = [];
      const failedAnswers: FailedAnswer[] = [];
      if (expectsSuccess && result.problems.length === 0) {
        if (callback === "SendOrderToMerchant") {
          const merged = claimOrder(payload, result);
          if (merged !== undefined) more.push(merged);
        } else warnings.push(...orderWarnings(payload, result));
        if (REDELIVERED.includes(callback)) {
          try {
            const bareToken = takeBareToken();
            const again = await send(payload, undefined, bareToken);
            const bareRefused = bareToken
              ? bareTokenFindings(REDELIVERED_PREFIX, again)
              : undefined;
            const found = bareRefused
              ? { problems: bareRefused, warnings: [] }
              : redeliveryFindings(result, again);
            more.push(...found.problems);
            warnings.push(...found.warnings);
            if (found.problems.length > 0) {
              failedAnswers.push({ send: "redelivered", payload, result: again });
            }
          } catch (error) {
            if (!(error instanceof SendCallbackError)) throw error;
            more.push(`${REDELIVERED_PREFIX}: no answer: ${error.reason}`);
          }
        }
        const overlap = callback === "SendOrderToMerchant" ? overlappingOrder(payload) : undefined;
        if (overlap !== undefined) {
          try {
            // Both sent before either is answered.
            const [one, two] = await Promise.all([send(overlap), send(overlap)]);
            const found = await overlapFindings(
              one,
              two,
              () => send(overlap),
              overlap,
              options.slowMs,
            );
            more.push(...found.problems);
            for (const answer of found.failed) {
              failedAnswers.push({
                send: "delivered twice at once",
                payload: overlap,
                result: answer,
              });
            }
            for (const answer of found.passed) {
              const merged = claimOrder(overlap, answer);
              if (merged === undefined) continue;
              more.push(merged);
              failedAnswers.push({
                send: "delivered twice at once",
                payload: overlap,
                result: answer,
              });
              break;
            }
          } catch (error) {
            if (!(error instanceof SendCallbackError)) throw error;
            more.push(`${OVERLAP_PREFIX}: no answer: ${error.reason}`);
          }
        }
        const update = callback === "SendOrderToMerchant" ? orderUpdate(payload) : undefined;
        if (update !== undefined) {
          try {
            const answer = await send(update);
            const found = updateFindings(result, answer);
            more.push(...found);
            if (found.length > 0)
              failedAnswers.push({ send: "updated", payload: update, result: answer });
          } catch (error) {
            if (!(error instanceof SendCallbackError)) throw error;
            more.push(`${UPDATED_PREFIX}: no answer: ${error.reason}`);
          }
        }
        const capturedSent =
          given === undefined &&
          hasCapturedPayload(callback) &&
          (callback !== "PerformOrderPayment" || capturedOrderPassed);
        if (capturedSent) {
          const postCart = callback === "GetCheckoutCartInfo" && options.cartMethod === "POST";
          const prefix = `as captured (wire-facts §6: ${postCart ? POST_CART_FORM : CAPTURED_FORMS[callback]})`;
          const captured = postCart
            ? capturedPostCart()
            : withMerchantOrderId(capturedPayload(callback), capturedMerchantOrderId);
          try {
            const bareToken = runRedelivers ? false : takeBareToken();
            const answer = await send(captured, true, bareToken);
            if (callback === "SendOrderToMerchant") {
              capturedMerchantOrderId = internalOrderIdOf(answer);
              capturedOrderPassed = answer.problems.length === 0;
              const merged = claimOrder(captured, answer);
              if (merged !== undefined) {
                more.push(merged);
                failedAnswers.push({ send: "as captured", payload: captured, result: answer });
              }
            }
            more.push(
              ...((bareToken ? bareTokenFindings(prefix, answer) : undefined) ??
                answer.problems.map((problem) => `${prefix}: ${problem}`)),
            );
            if (answer.problems.length > 0) {
              failedAnswers.push({ send: "as captured", payload: captured, result: answer });
            }
          } catch (error) {
            if (!(error instanceof SendCallbackError)) throw error;
            more.push(`${prefix}: no answer: ${error.reason}`);
          }
        }
      }
      row = {
        callback,
        payload,
        result: withMoreProblems(result, more, warnings),
        // The first answer passed (the later sends run only then): its body is not the failure.
        ...(more.length > 0 ? { failedAnswers } : {}),
      };
    } catch (error) {
      if (!(error instanceof SendCallbackError)) throw error;
      row = { callback, payload, error: error.reason };
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

/**
 * Why GetCheckoutCartInfo by GET answered 2xx in a wrong-GUID check does not count: it carries
 * no MerchantGUID (its query holds the cart, the country and the currency), so nothing in it is
 * wrong for the endpoint to refuse.
 */
export const WRONG_GUID_CART =
  "not applicable: GetCheckoutCartInfo by GET carries no MerchantGUID, so a wrong --guid cannot be refused there; not counted (the token was checked: one signed by a key made for the check was refused)";

/** The cart answered 2xx to a token of a key made for the check too: it checks no token. */
const UNCHECKED_CART_TOKEN =
  "GetCheckoutCartInfo also answered 2xx to a token signed by a key made for this check, which no endpoint knows: it verifies no token on the cart; verify it there too (the cart's GET carries the token, not the GUID)";

/** The problems of a row: the answer's problems, or the failed request; none when not applicable. */
export function rowProblems(row: SimulationRow): readonly string[] {
  if ("error" in row) return [`no answer: ${row.error}`];
  return row.notApplicable === undefined ? row.result.problems : [];
}

/** 0 when every answer is as expected, 1 when any is not or any request got no answer. */
export function exitCodeOf(rows: readonly SimulationRow[]): number {
  return rows.some((row) => rowProblems(row).length > 0) ? 1 : 0;
}

/**
 * The Success column: the value as it arrived (`true`, `"True"`, `"yes"`), `-` when absent; for
 * GetCheckoutCartInfo the number of products of a cart. Quoted from the answer, so masked with
 * what the call sent (`sentRedactor`): a card number or a header secret shows as `***`.
 */
export function successText(row: SimulationRow): string {
  return "error" in row ? "-" : answerSuccessText(row.callback, row.result, row.payload);
}

/** The Success column of one answer to `payload` (see `successText`). */
function answerSuccessText(
  callback: CallbackName,
  result: SendCallbackResult,
  payload: unknown,
): string {
  const { body } = result;
  if (!isRecord(body)) return "-";
  const field = successFieldOf(callback);
  if (field === "productsList" && Array.isArray(body.productsList)) {
    const count = body.productsList.length;
    return `${count} product${count === 1 ? "" : "s"}`;
  }
  // A cart refusal carries `Success` like the order callbacks.
  const name = field === "productsList" ? "Success" : field;
  const value = Object.hasOwn(body, name) ? body[name] : undefined;
  if (value === undefined) return "-";
  // Masked before it is cut, as the problems are: no part of a secret is left at the cut.
  // A boolean or null quotes nothing.
  const json = JSON.stringify(value);
  const masked =
    typeof value === "boolean" || value === null ? json : sentRedactor(result, payload)(json);
  return truncate(printable(masked), 24);
}

/** Streams the report: one line per callback as its answer arrives, problems below it. */
export class ReportWriter {
  readonly #width: number;
  constructor(
    callbacks: readonly CallbackName[],
    private readonly write: (text: string) => void,
    private readonly colors: Colors,
    private readonly showBody: boolean,
  ) {
    this.#width = Math.max(...callbacks.map((name) => name.length));
  }

  /** `→ SendOrderToMerchant … ` — written before the call, so a slow endpoint is visible. */
  sending(callback: CallbackName): void {
    this.write(`${this.colors.dim("→")} ${callback.padEnd(this.#width)} ${this.colors.dim("…")} `);
  }

  /**
   * `← 200  true   34 ms  ok`, then each problem, then the body of a failed answer: the first
   * answer's, or each failing later send's (`as captured: ← 500  -`, then its body).
   */
  answered(row: SimulationRow): void {
    const { colors } = this;
    const problems = rowProblems(row).map((problem) => printable(problem));
    if ("error" in row) {
      this.write(`${colors.red("← no answer")}\n`);
    } else {
      const { status, durationMs } = row.result;
      const statusColor = status >= 500 ? colors.red : status >= 300 ? colors.yellow : colors.green;
      const success = successText(row);
      const verdict =
        row.notApplicable !== undefined
          ? colors.yellow("not applicable")
          : problems.length === 0
            ? colors.green("ok")
            : colors.red(`${problems.length} problem${problems.length === 1 ? "" : "s"}`);
      const ms = `${String(Math.round(durationMs)).padStart(5)} ms`;
      this.write(`← ${statusColor(String(status))}  ${success.padEnd(12)} ${ms}  ${verdict}\n`);
    }
    for (const problem of problems) this.write(`    ${colors.red(problem)}\n`);
    if (!("error" in row) && row.notApplicable !== undefined) {
      this.write(`    ${colors.yellow(row.notApplicable)}\n`);
    }
    const warnings = "error" in row || row.notApplicable !== undefined ? [] : row.result.warnings;
    for (const warning of warnings) {
      this.write(`    ${colors.yellow(`warning: ${printable(warning)}`)}\n`);
    }
    if (this.showBody && problems.length > 0 && !("error" in row)) {
      const later = row.failedAnswers;
      if (later === undefined) {
        const redact = sentRedactor(row.result, row.payload);
        this.write(`${indent(maskedBody(redact, row.result.text))}\n`);
      }
      for (const answer of later ?? []) {
        const { send, payload, result } = answer;
        const success = answerSuccessText(row.callback, result, payload);
        this.write(`    ${send}: ← ${result.status}  ${success}\n`);
        this.write(`${indent(maskedBody(laterRedactor(row, answer), result.text))}\n`);
      }
    }
  }
}

/**
 * A later send's answer masked by what that call sent and by the card data the row's first call
 * sent: the captured payment carries no card, but its answer may quote the one sent before it.
 */
function laterRedactor(row: { readonly payload: unknown }, answer: FailedAnswer): Redactor {
  const own = sentRedactor(answer.result, answer.payload);
  const first = createRedactor(payloadCardSecrets(row.payload));
  return (value) => first(own(value));
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    | ${line}`)
    .join("\n");
}

const BODY_LIMIT = 2000;

/**
 * An answer's body as printable text: masked by the redactor of what the call sent (any
 * Luhn-valid number, the card and CVV the payload carried, the `--header` values, the Basic
 * credentials and the token sent: `sentRedactor`), control characters out, bidi controls
 * escaped, at most 2,000 characters, cut between graphemes.
 */
export function maskedBody(redact: Redactor, text: string): string {
  const masked = redact(text);
  const lines = masked.split(/\r?\n/).map((line) => printable(line));
  const body = lines.join("\n");
  if (body.trim() === "") return "(empty body)";
  if (body.length <= BODY_LIMIT) return body;
  // Cut between graphemes: no half emoji printed as U+FFFD.
  const cut = cutText(body, BODY_LIMIT);
  return `${cut}… (${body.length - cut.length} more characters)`;
}

/** The closing line: all passed, or how many did not. */
export function renderSummary(rows: readonly SimulationRow[], colors: Colors): string {
  const unanswered = rows.filter((row) => "error" in row).length;
  const failed = rows.filter((row) => !("error" in row) && rowProblems(row).length > 0).length;
  const skipped = rows.filter((row) => !("error" in row) && row.notApplicable !== undefined).length;
  const total = rows.length;
  if (unanswered === 0 && failed === 0) {
    return colors.green(
      skipped === 0
        ? `${total} of ${total} passed.`
        : `${total - skipped} of ${total} passed, ${skipped} not applicable.`,
    );
  }
  const parts: string[] = [];
  if (failed > 0) parts.push(`${failed} of ${total} failed`);
  if (unanswered > 0) parts.push(`${unanswered} of ${total} got no answer`);
  if (skipped > 0) parts.push(`${skipped} not applicable`);
  return colors.red(`${parts.join(", ")}.`);
}

/** What the hints quote of the run: the commands of the forged-call checks (review cli-4). */
export interface HintContext {
  /** `… simulate all --url <url> --private-key <another key> --expect 401` */
  readonly forgedCheck?: string | undefined;
  /** `… --private-key <your key> --guid … --expires-in -3600 --expect 401` */
  readonly expiredCheck?: string | undefined;
}

/** The certificate errors of a TLS endpoint Node does not trust (a self-signed or private CA). */
const UNTRUSTED_CERTIFICATE =
  /DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/;

/** Advice for the failures seen, one line each (text output only). */
export function renderHints(
  rows: readonly SimulationRow[],
  expect: Expectation,
  context: HintContext = {},
): string[] {
  const hints: string[] = [];
  if (rows.some((row) => "error" in row && UNTRUSTED_CERTIFICATE.test(row.error))) {
    hints.push(
      "TLS: the endpoint's certificate is not signed by a CA Node trusts (self-signed, or a private CA). Give Node that certificate (or its CA) in PEM: NODE_EXTRA_CA_CERTS=<ca.pem> crossborder-callbacks simulate … (or test a local endpoint over http://).",
    );
  }
  const failed = rows.flatMap((row) =>
    "error" in row || rowProblems(row).length === 0 ? [] : [row.result],
  );
  if (failed.some((result) => result.status === 401) && !expect.statuses?.includes(401)) {
    hints.push(
      "401: the endpoint refused the call's authentication. Check --private-key (the pair of the public key it verifies with), --guid (its merchant GUID), and for the gift-card callbacks --auth-token and --session-id.",
    );
  }
  // A refusal answered with a 2xx where none was expected: the user may have meant to test one. An
  // expectation already given, or a 404/405 (nothing at that URL), is not that.
  const unexpectedRefusal = (result: (typeof failed)[number]) =>
    result.success === false && result.status >= 200 && result.status < 300;
  const nothingExpected =
    expect.outcome === undefined && (expect.statuses === undefined || expect.statuses.length === 0);
  // A payment refused where the run sent no order before it: the payment states no amount
  // (001 §4.4), so an endpoint that never received its order (a fresh start) rightly refuses it.
  const orderless = new Set<SendCallbackResult>();
  let orderSent = false;
  for (const row of rows) {
    // Only an order answered and passed (its first answer; a later send may have failed the row)
    // is one the endpoint holds: after an order that got no answer, the payment's refusal is
    // that order's doing, not a refusal the user meant to test.
    if (row.callback === "SendOrderToMerchant") {
      orderSent ||=
        !("error" in row) && (row.result.problems.length === 0 || row.failedAnswers !== undefined);
    } else if (row.callback === "PerformOrderPayment" && !orderSent && !("error" in row)) {
      orderless.add(row.result);
    }
  }
  if (
    nothingExpected &&
    failed.some((result) => orderless.has(result) && unexpectedRefusal(result))
  ) {
    hints.push(
      "PerformOrderPayment refused without its order: the payment states no amount (001 §4.4), so your endpoint answers it from the order SendOrderToMerchant sent before. Send the order first, as the service does: simulate SendOrderToMerchant,PerformOrderPayment (simulate all does).",
    );
  }
  if (
    nothingExpected &&
    failed.some((result) => !orderless.has(result) && unexpectedRefusal(result))
  ) {
    hints.push(
      "A refusal is what you meant to test? Pass --expect refusal (or --expect 401 for a forged call). --show-body prints each failed answer.",
    );
  }
  const allPassed = rows.length > 0 && rows.every((row) => rowProblems(row).length === 0);
  if (nothingExpected && allPassed && context.forgedCheck !== undefined) {
    const expired =
      context.expiredCheck === undefined ? "" : `, and an expired token: ${context.expiredCheck}`;
    hints.push(
      `authentication not checked: this run sent valid calls only, which an endpoint that verifies nothing passes too. Check that a forged call is refused: ${context.forgedCheck}${expired}`,
    );
  }
  return hints;
}

/** One simulation result as `--json` prints it. */
export function jsonRow(row: SimulationRow, showBody: boolean): Record<string, unknown> {
  if ("error" in row) {
    return { callback: row.callback, ok: false, problems: rowProblems(row), error: row.error };
  }
  const { result } = row;
  if (row.notApplicable !== undefined) {
    return {
      callback: row.callback,
      ok: true,
      notApplicable: row.notApplicable,
      method: result.method,
      url: result.url,
      status: result.status,
      success: result.success ?? null,
      durationMs: Math.round(result.durationMs),
      problems: [],
    };
  }
  return {
    callback: row.callback,
    ok: result.problems.length === 0,
    method: result.method,
    url: result.url,
    status: result.status,
    success: result.success ?? null,
    durationMs: Math.round(result.durationMs),
    problems: result.problems,
    // Warnings do not fail the row: listed only when there are any.
    ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    // The body of the answer that failed: the first's, or each failing later send's.
    ...(showBody && result.problems.length > 0 && row.failedAnswers === undefined
      ? { body: maskedBody(sentRedactor(result, row.payload), result.text) }
      : {}),
    ...(row.failedAnswers === undefined
      ? {}
      : {
          failedAnswers: row.failedAnswers.map((answer) => ({
            send: answer.send,
            status: answer.result.status,
            success: answer.result.success ?? null,
            ...(showBody
              ? {
                  body: maskedBody(laterRedactor(row, answer), answer.result.text),
                }
              : {}),
          })),
        }),
  };
}

/** Names no payload path may take: they would reach a prototype. */
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Applies `--set Path=text` (the value as text) or `--set Path:=json` (the value as JSON) to a
 * payload: `PrimaryShipping.City=Berlin`, `Products.0.Quantity:=2`, `ClearCart:=true`. Missing
 * objects on the way are created. Returns a new payload; the given one is not changed.
 */
export function applySet(payload: unknown, assignment: string): unknown {
  const match = /^([^=:]+?)(:?=)([\s\S]*)$/.exec(assignment);
  if (!match) {
    // The value is never quoted: it may be a card number or a CVV.
    throw new UsageError(
      "--set takes Path=text or Path:=json (e.g. OrderId=GE-1, Products.0.Quantity:=2)",
    );
  }
  const [, rawPath = "", operator, rawValue = ""] = match;
  const path = rawPath.trim().split(".");
  if (path.some((segment) => segment === "" || FORBIDDEN.has(segment))) {
    throw new UsageError(`--set: "${rawPath}" is not a usable path`);
  }
  let value: unknown = rawValue;
  if (operator === ":=") {
    try {
      value = JSON.parse(rawValue);
    } catch {
      throw new UsageError(
        `--set ${rawPath}:= needs JSON (a text is set with ${rawPath}=…); the value is not printed`,
      );
    }
  }
  const root: unknown = structuredClone(isRecord(payload) || Array.isArray(payload) ? payload : {});
  let node = root as Record<string, unknown>;
  for (const [i, segment] of path.entries()) {
    if (i === path.length - 1) {
      node[segment] = value;
      break;
    }
    const next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (!isRecord(next) && !Array.isArray(next)) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  }
  return root;
}
