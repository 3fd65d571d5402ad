import type { CallbackName } from "../core/types.js";
import { parseSuccessValue } from "../schemas/response.js";

/** Above this many milliseconds an answer counts as slow (see `CheckResponseOptions.slowMs`). */
export const DEFAULT_SLOW_MS = 5000;

/** Options of `checkResponse`. */
export interface CheckResponseOptions {
  /** How long the answer took, in milliseconds; the slowness check needs it. */
  readonly durationMs?: number | undefined;
  /** Answers slower than this are a problem. Default 5000 ms. */
  readonly slowMs?: number | undefined;
  /**
   * The HTTP statuses the answer is expected to have (a test of a refusal: `401`, `[401, 403]`).
   * Any other status is a problem. Default: any 2xx, since the service counts every other answer
   * as a failed call.
   */
  readonly expectStatus?: number | readonly number[] | undefined;
}

/** Which field of the answer tells the service whether the callback succeeded. */
type Verdict = "Success" | "SuccessText" | "IsSuccess" | "cart";

const VERDICT: Record<CallbackName, Verdict> = {
  GetCheckoutCartInfo: "cart",
  SendOrderToMerchant: "Success",
  UpdateOrderStatus: "Success",
  PerformOrderPayment: "Success",
  SendRMAInfoToMerchant: "SuccessText",
  UpdateParcelDispatch: "Success",
  RemoveRestrictedProducts: "IsSuccess",
  SendAdditionalRequiredDocumentsToMerchant: "Success",
  ValidateGiftCard: "Success",
  RedeemGiftCard: "Success",
  RefundGiftCard: "Success",
  ValidateVoucher: "Success",
  NotifyOrderRefund: "Success",
  UpdateOrderShippingInfo: "Success",
};

/** The gift-card and voucher answers: `Balance` as text; the validations also say `IsValid`. */
const GIFT_CARD_ANSWERS: Partial<Record<CallbackName, { readonly validation: boolean }>> = {
  ValidateGiftCard: { validation: true },
  ValidateVoucher: { validation: true },
  RedeemGiftCard: { validation: false },
  RefundGiftCard: { validation: false },
};

/** The name of the success field a callback's answer carries (`productsList` for the cart). */
export function successFieldOf(
  callbackName: CallbackName,
): "Success" | "IsSuccess" | "productsList" {
  const verdict = VERDICT[callbackName];
  if (verdict === "cart") return "productsList";
  return verdict === "IsSuccess" ? "IsSuccess" : "Success";
}

function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function isJsonMediaType(type: string): boolean {
  return type === "application/json" || /^application\/[^/]+\+json$/.test(type);
}

function looksLikeHtml(text: string): boolean {
  return /^<(!doctype\s+html|html|head|body|\?xml|!--|h\d|p|pre|div|title)\b/i.test(text);
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return `the text ${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

/** A key that differs from `name` only in case, if the object has one. */
function caseVariant(body: Record<string, unknown>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(body).find((key) => key !== name && key.toLowerCase() === lower);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Checks a merchant's answer to one callback the way the service reads it, and returns the
 * problems found as sentences (empty when the answer is well-formed). It flags:
 * - any status but 2xx (the service counts the call as failed): a server error (5xx), a redirect
 *   (3xx), a 404/405 (nothing answers at that URL), a refusal (any other 4xx) — or, with
 *   `expectStatus`, any status not listed there;
 * - an empty body, an HTML page (error pages), a body that is not JSON or not a JSON object,
 *   a JSON body without a JSON content type;
 * - a missing `Success` (or `IsSuccess` for RemoveRestrictedProducts), and a value the service
 *   cannot parse (`"yes"`); for SendRMAInfoToMerchant a boolean instead of the text
 *   `"True"`/`"False"`;
 * - a GetCheckoutCartInfo 2xx answer that is neither a cart with a `productsList` array nor a
 *   refusal (`Success: false`);
 * - a successful ValidateGiftCard or ValidateVoucher answer without a boolean `IsValid`, and a
 *   gift-card or voucher answer whose `Balance` is not text;
 * - an answer slower than `slowMs` (when `durationMs` is given).
 *
 * A well-formed refusal answered 200 (`Success: false`) is not a problem: the service reads it.
 * A refusal with a 4xx status is, unless `expectStatus` lists it (a test that expects a 401).
 *
 * @example
 * expect(checkResponse("SendOrderToMerchant", res.status, res.headers.get("content-type"), text)).toEqual([]);
 */
export function checkResponse(
  callbackName: CallbackName,
  status: number,
  contentType: string | null | undefined,
  text: string,
  options: CheckResponseOptions = {},
): string[] {
  const problems: string[] = [];
  const verdict = VERDICT[callbackName];
  if (verdict === undefined)
    throw new TypeError(`checkResponse: unknown callback "${callbackName}"`);
  const slowMs = options.slowMs ?? DEFAULT_SLOW_MS;

  const expected = options.expectStatus;
  if (expected !== undefined) {
    const list: readonly number[] = typeof expected === "number" ? [expected] : expected;
    if (!list.includes(status)) problems.push(`HTTP ${status}: expected ${list.join(" or ")}`);
  } else {
    const problem = statusProblem(callbackName, status);
    if (problem !== undefined) problems.push(problem);
  }
  if (options.durationMs !== undefined && options.durationMs > slowMs) {
    problems.push(`slow: answered in ${Math.round(options.durationMs)} ms (limit ${slowMs} ms)`);
  }

  const type = mediaType(contentType);
  const trimmed = text.trim();
  if (trimmed === "") {
    problems.push("empty body: expected a JSON object");
    return problems;
  }
  if (type === "text/html" || looksLikeHtml(trimmed)) {
    if (!parseJson(trimmed).ok) {
      problems.push(
        `an HTML page instead of JSON (content-type ${contentType || "missing"}): an error page?`,
      );
      return problems;
    }
  }
  const parsed = parseJson(trimmed);
  if (!parsed.ok) {
    problems.push(`body is not JSON (content-type ${contentType || "missing"})`);
    return problems;
  }
  if (!isJsonMediaType(type)) {
    problems.push(
      `content-type is ${contentType ? `"${contentType}"` : "missing"}: answer with application/json`,
    );
  }
  const body = parsed.value;
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    problems.push(`body is ${describeValue(body)}, expected a JSON object`);
    return problems;
  }
  const record = body as Record<string, unknown>;

  if (verdict === "cart") {
    if (status >= 200 && status < 300) checkCart(record, problems);
    return problems;
  }
  const field = verdict === "IsSuccess" ? "IsSuccess" : "Success";
  if (!Object.hasOwn(record, field)) {
    const variant = caseVariant(record, field);
    const other = field === "Success" ? "IsSuccess" : "Success";
    let hint = "";
    if (variant) hint = ` (found "${variant}": the name is "${field}")`;
    else if (Object.hasOwn(record, other)) {
      hint =
        field === "IsSuccess"
          ? ` (found "Success": RemoveRestrictedProducts answers {"IsSuccess": true})`
          : ` (found "IsSuccess", which only RemoveRestrictedProducts uses)`;
    }
    problems.push(`missing "${field}"${hint}: the service counts the call as failed`);
    return problems;
  }
  const value = record[field];
  const giftCard = GIFT_CARD_ANSWERS[callbackName];
  if (giftCard !== undefined && parseSuccessValue(value) === true) {
    checkGiftCard(callbackName, record, giftCard.validation, problems);
  }
  if (parseSuccessValue(value) === undefined) {
    problems.push(
      `"${field}" is ${describeValue(value)}: the service cannot parse it and counts the call as failed (use ${verdict === "SuccessText" ? '"True" or "False"' : "true or false"})`,
    );
  } else if (verdict === "SuccessText" && typeof value !== "string") {
    problems.push(
      `"Success" is ${describeValue(value)}: SendRMAInfoToMerchant answers the text "True" or "False"`,
    );
  }
  return problems;
}

function checkGiftCard(
  callbackName: CallbackName,
  body: Record<string, unknown>,
  validation: boolean,
  problems: string[],
): void {
  if (validation && typeof body.IsValid !== "boolean") {
    const found = Object.hasOwn(body, "IsValid")
      ? `is ${describeValue(body.IsValid)}`
      : "is missing";
    problems.push(
      `"IsValid" ${found}: ${callbackName} answers whether the card is valid (true or false)`,
    );
  }
  if (Object.hasOwn(body, "Balance") && body.Balance !== null && typeof body.Balance !== "string") {
    problems.push(
      `"Balance" is ${describeValue(body.Balance)}: the service reads the balance as text ("25.00")`,
    );
  }
}

/** What is wrong with a status when a success is expected: anything but 2xx. */
function statusProblem(callbackName: CallbackName, status: number): string | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status >= 500 && status <= 599) {
    return `HTTP ${status}: a server error, the service counts the call as failed`;
  }
  if (status >= 300 && status < 400) {
    return `HTTP ${status}: a redirect; the callback URL must answer directly`;
  }
  if (status === 404 || status === 405) {
    return `HTTP ${status}: no ${callbackName} endpoint answers at this URL and method`;
  }
  if (status >= 400 && status < 500) {
    return `HTTP ${status}: not a 2xx answer, the service counts the call as failed`;
  }
  return `HTTP ${status}: not a final HTTP status`;
}

function checkCart(body: Record<string, unknown>, problems: string[]): void {
  if (Array.isArray(body.productsList)) return;
  // A refusal (`{ Success: false, ErrorCode, Message }`, what the library writes for a
  // CallbackError) is a valid answer, not a malformed cart.
  if (parseSuccessValue(body.Success) === false) return;
  const variant = caseVariant(body, "productsList");
  if (variant !== undefined && Array.isArray(body[variant])) {
    problems.push(`CheckoutCartInfo has "${variant}": the name is "productsList"`);
  } else if (Object.hasOwn(body, "productsList")) {
    problems.push(
      `CheckoutCartInfo "productsList" is ${describeValue(body.productsList)}, expected an array`,
    );
  } else {
    problems.push(`CheckoutCartInfo without a "productsList" array`);
  }
}

/**
 * What the answer says about success: the parsed `Success` (`IsSuccess` for
 * RemoveRestrictedProducts); for GetCheckoutCartInfo, whether a 2xx answer carries a
 * `productsList` array (or the parsed `Success` of a refusal). Undefined when it says nothing
 * usable.
 */
export function answerSuccess(
  callbackName: CallbackName,
  status: number,
  body: unknown,
): boolean | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  if (VERDICT[callbackName] === "cart") {
    if (status >= 200 && status < 300 && Array.isArray(record.productsList)) return true;
    return parseSuccessValue(record.Success);
  }
  return parseSuccessValue(record[successFieldOf(callbackName)]);
}
