import { assertKnownKeys, assertOptionalOneOf, optionNames } from "../auth/validate.js";
import { cartShape } from "../callbacks/get-checkout-cart-info.js";
import { cardSecretsOf, namesCvv } from "../core/card.js";
import { cardNumbersOf, isCvvNumberKey } from "../core/card-keys.js";
import { foldText } from "../core/fold.js";
import { isRecord } from "../core/objects.js";
import {
  cardDigits,
  createRedactor,
  maskSecret,
  type Redactor,
  readEscapes,
} from "../core/redact.js";
import { hasTextValue, PAYMENT_FIELDS } from "../core/responses.js";
import { findCardObjects } from "../core/seal.js";
import type { CallbackName } from "../core/types.js";
import { hasCardToCharge, paymentDetailsOf } from "../schemas/payment.js";
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
   * Any other status is a problem. With only non-2xx statuses listed, the status alone is
   * checked: the body of a refusal (an error page, plain text, nothing) is not judged. Default:
   * any 2xx, since the service counts every other answer as a failed call.
   */
  readonly expectStatus?: number | readonly number[] | undefined;
  /**
   * What the answer is expected to say. `"success"`: a refusal (`Success: false`, `IsSuccess:
   * false`, `"False"`, a refusal instead of a cart) is a problem, since the endpoint turned the
   * call down. `"refusal"`: a well-formed refusal is what the test expects (a forged call, an
   * unknown cart), and a success is the problem. Default: `"refusal"` when `expectStatus` lists
   * only statuses outside 2xx (their bodies are refusals), else `"success"`.
   */
  readonly expect?: "success" | "refusal" | undefined;
  /**
   * The payload the call carried (an object, or its JSON text). With it, a SendOrderToMerchant
   * success to an order that carried a card in `PaymentDetails` (the merchant performed the
   * payment; not `PaymentMethodCode` `"OT"`, which the service collected) is expected to say the
   * amount and currency charged: a warning when it does not.
   */
  readonly payload?: unknown;
}

const CHECK_OPTION_NAMES = optionNames<CheckResponseOptions>({
  durationMs: true,
  slowMs: true,
  expectStatus: true,
  expect: true,
  payload: true,
});

/** What `inspectResponse` found: problems (the service counts the call as failed, or cannot use the answer) and warnings. */
export interface ResponseInspection {
  readonly problems: string[];
  /** Worth a look, but not a failure: the service still counts the call as a success. */
  readonly warnings: string[];
}

/** Which field of the answer tells the service whether the callback succeeded. */
/** `SuccessText`: documented as the text "True"/"False" (a boolean is read too). */
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

/** A value of the answer as a problem quotes it, masked by `redact` (what the call sent). */
function describeValue(value: unknown, redact: Redactor): string {
  if (typeof value === "string") return `the text ${JSON.stringify(redact(value))}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${redact(String(value))}`;
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
 *   cannot parse (`"yes"`);
 * - a refusal (`Success: false`, `"False"`, `IsSuccess: false`, a refusal instead of a cart),
 *   unless `expect` (or `expectStatus`) says the test expects one — and then a success;
 * - a GetCheckoutCartInfo 2xx answer that is neither a cart with a `productsList` array nor a
 *   refusal (`Success: false`); a cart the library's cart schema refuses (a product that is not an
 *   object, a field of the wrong type); a product without `ProductCode`, a price (`ListPrice` or
 *   `SalePrice`) or `OrderedQuantity` (001 §2.3's SKU, price and quantity); a cart `currencyCode`
 *   or `originalCurrencyCode` that is not 3 letters, a `countryCode` that is not 2 or 3;
 * - a SendOrderToMerchant success without `InternalOrderId`, and a PerformOrderPayment success
 *   without `PaymentAmount` and `PaymentCurrencyCode` (text or a number, and not blank), or with
 *   an amount that is no number at all (`"abc"`) or a currency that is not 3 letters once trimmed
 *   (a decimal comma, `"104,00"`, is a warning of `inspectResponse`). The
 *   library's own handler answers such a result 200: a missing or wrong-typed field is left out,
 *   with a `result_incomplete` warning, a blank one answered as it is; the service then has no id
 *   or amount to keep;
 * - a successful ValidateGiftCard or ValidateVoucher answer without a boolean `IsValid`, a
 *   successful RedeemGiftCard or RefundGiftCard answer saying `IsValid` false (the service takes
 *   the card as debited or credited), and a gift-card or voucher answer whose `Balance` is not text;
 * - an answer slower than `slowMs` (when `durationMs` is given);
 * - given `payload`, whatever the status: the card data it carried sent back (its card number in
 *   any spelling the masking knows, its CVV under a key naming a CVV or next to its name in a
 *   text), the problem naming the field, never the value.
 *
 * A refusal is the endpoint turning the call down: a problem when a success is expected (a wrong
 * key, GUID or cart), what a test of a forged call expects (`expectStatus: 401` or
 * `expect: "refusal"`). SendRMAInfoToMerchant's `Success` may be a boolean or the text
 * `"True"`/`"False"`: the operator's own integration answers the boolean.
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
  return inspectAs("checkResponse", callbackName, status, contentType, text, options).problems;
}

/**
 * `checkResponse`'s checks, with the warnings as well: an answer that passes but leaves out
 * something the document says it returns (a SendOrderToMerchant success to an order that carried
 * `PaymentDetails` without the amount and currency charged, or with an `ErrorCode`; give
 * `payload`), or a PerformOrderPayment, RedeemGiftCard or RefundGiftCard success carrying an error
 * code (`ErrorCode`; on the gift-card calls also `ErrorText`), which the service takes as a payment
 * made.
 */
export function inspectResponse(
  callbackName: CallbackName,
  status: number,
  contentType: string | null | undefined,
  text: string,
  options: CheckResponseOptions = {},
): ResponseInspection {
  return inspectAs("inspectResponse", callbackName, status, contentType, text, options);
}

/** `inspectResponse`, its refusals labelled with the function the merchant called. */
function inspectAs(
  owner: string,
  callbackName: CallbackName,
  status: number,
  contentType: string | null | undefined,
  text: string,
  options: CheckResponseOptions,
): ResponseInspection {
  // JavaScript callers pass a response object (supertest's, fetch's): say what is taken.
  const wrong =
    typeof status !== "number"
      ? "status must be a number"
      : contentType !== undefined && contentType !== null && typeof contentType !== "string"
        ? "contentType must be a string, null or undefined"
        : typeof text !== "string"
          ? "text must be a string"
          : undefined;
  if (wrong !== undefined) {
    throw new TypeError(
      `${owner}(callbackName, status, contentType, text, options): ${wrong} (pass the answer's parts, not a response object)`,
    );
  }
  // A misspelt option (`expected`, `expectedStatus`) would be ignored: a refusal expected, a
  // success checked for.
  if (isRecord(options)) assertKnownKeys(options, CHECK_OPTION_NAMES, "options", owner);
  // The payload's card data too: its CVV, which no pattern finds, quoted back in a refusal.
  const redact = createRedactor(payloadCardSecrets(options.payload));
  return inspectAnswer(callbackName, status, contentType, text, options, redact, owner);
}

/**
 * The card numbers and CVVs a payload carries, to be masked wherever an answer quotes them back:
 * in `problems`, and in the body the CLI prints with `--show-body`. Every card object the engine
 * finds (`findCardObjects`: an object under `PaymentDetails`, or with its own `CardNumber` or
 * `CVVNumber`, those keys in any case, at any depth) gives what the engine's own reports mask
 * (`cardSecretsOf`): its card numbers and CVVs, and its runs of 12 or more digits.
 */
export function payloadCardSecrets(payload: unknown): string[] {
  const value = payloadValue(payload);
  const secrets: string[] = [];
  if (value === null || typeof value !== "object") return secrets;
  for (const card of findCardObjects(value)) {
    cardSecretsOf(card as Record<string, unknown>, secrets);
  }
  return secrets;
}

/** A payload as given to the testing kit: the value, or the JSON text of it (`undefined` if not JSON). */
export function payloadValue(payload: unknown): unknown {
  if (typeof payload !== "string") return payload;
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

/**
 * The options that decide the verdict, checked before anything is judged (or sent, by
 * `sendCallback`): an `expect` of another value matched neither branch, so a refusal passed; a
 * `slowMs` of NaN made no answer slow, and 0 or less every one. Refused as the CLI refuses
 * `--expect` and `--slow-ms`. `null`, as `undefined`, means the default.
 */
export function assertCheckOptions(
  options: Pick<CheckResponseOptions, "expect" | "slowMs">,
  owner: string,
): void {
  assertOptionalOneOf(options.expect ?? undefined, ["success", "refusal"], "expect", owner);
  const slowMs: unknown = options.slowMs;
  if (slowMs != null && !(Number.isSafeInteger(slowMs) && (slowMs as number) > 0)) {
    throw new RangeError(`${owner}: slowMs must be a positive integer of milliseconds`);
  }
}

/**
 * `inspectResponse` with the redactor of what the call sent (`sendCallback`): a quoted field is
 * masked before it is cut to 80 characters, so a secret at the cut is not printed in part.
 */
export function inspectAnswer(
  callbackName: CallbackName,
  status: number,
  contentType: string | null | undefined,
  text: string,
  options: CheckResponseOptions,
  redact: Redactor,
  owner = "checkResponse",
): ResponseInspection {
  const problems: string[] = [];
  const warnings: string[] = [];
  const found = (): ResponseInspection => ({ problems, warnings });
  const verdict = VERDICT[callbackName];
  if (verdict === undefined) throw new TypeError(`${owner}: unknown callback "${callbackName}"`);
  assertCheckOptions(options, owner);
  const slowMs = options.slowMs ?? DEFAULT_SLOW_MS;

  const expected = options.expectStatus;
  const statuses: readonly number[] | undefined =
    typeof expected === "number" ? [expected] : expected;
  const outcome =
    options.expect ??
    (statuses !== undefined && statuses.length > 0 && !statuses.some(isSuccessStatus)
      ? "refusal"
      : "success");
  // An unexpected status already says the call failed: the refusal in its body is not repeated.
  let statusFailed = false;
  if (statuses !== undefined) {
    if (!statuses.includes(status)) {
      problems.push(`HTTP ${status}: expected ${statuses.join(" or ")}`);
      statusFailed = true;
    }
  } else {
    const problem = statusProblem(callbackName, status);
    if (problem !== undefined) problems.push(problem);
    statusFailed = problem !== undefined;
  }
  if (options.durationMs !== undefined && options.durationMs > slowMs) {
    problems.push(`slow: answered in ${Math.round(options.durationMs)} ms (limit ${slowMs} ms)`);
  }
  // Card data sent back is a problem whatever the status: a refusal quoting it leaks it too.
  problems.push(...echoedCardData(text, options.payload, redact));
  // A test of a refusal (a forged call: `expectStatus: 401`) expects a status the service never
  // reads a body of: the status alone is checked, whatever the body (an error page, plain text,
  // an empty body, a gateway's JSON), and nothing of it is quoted.
  if (outcomeIsStatusOnly(statuses)) return found();

  const type = mediaType(contentType);
  // The answer's content type, as its other texts, is quoted masked.
  const shownType = contentType ? redact(contentType) : contentType;
  const trimmed = text.trim();
  if (trimmed === "") {
    problems.push("empty body: expected a JSON object");
    return found();
  }
  if (type === "text/html" || looksLikeHtml(trimmed)) {
    if (!parseJson(trimmed).ok) {
      problems.push(
        `an HTML page instead of JSON (content-type ${shownType || "missing"}): an error page?`,
      );
      return found();
    }
  }
  const parsed = parseJson(trimmed);
  if (!parsed.ok) {
    problems.push(`body is not JSON (content-type ${shownType || "missing"})`);
    return found();
  }
  if (!isJsonMediaType(type)) {
    problems.push(
      `content-type is ${shownType ? `"${shownType}"` : "missing"}: answer with application/json`,
    );
  }
  const body = parsed.value;
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    problems.push(`body is ${describeValue(body, redact)}, expected a JSON object`);
    return found();
  }
  const record = body as Record<string, unknown>;
  if (holdsLoneSurrogate(trimmed)) {
    warnings.push(
      "a text holds a lone surrogate (half of an emoji, a text cut with slice): strict JSON readers such as .NET's System.Text.Json refuse it, and the service may count the call as failed (the library's own answers write U+FFFD in its place)",
    );
  }

  if (verdict === "cart") {
    const isCart = isSuccessStatus(status) && Array.isArray(record.productsList);
    if (isCart && outcome !== "refusal") checkCartContents(record, problems, redact);
    if (isSuccessStatus(status) && !isCart && parseSuccessValue(record.Success) !== false) {
      checkCart(record, problems, redact);
    } else if (!statusFailed) {
      if (isCart && outcome === "refusal") problems.push("a cart: expected a refusal");
      if (!isCart && outcome === "success")
        problems.push(refusalProblem(record, "Success", redact));
    }
    return found();
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
    return found();
  }
  const value = record[field];
  const giftCard = GIFT_CARD_ANSWERS[callbackName];
  if (giftCard !== undefined && parseSuccessValue(value) === true) {
    checkGiftCard(callbackName, record, giftCard.validation, problems, redact);
  }
  if (parseSuccessValue(value) === true && outcome !== "refusal") {
    if (callbackName === "SendOrderToMerchant") {
      checkOrderId(record, problems, redact);
      if (carriedPayment(options.payload)) {
        warnings.push(...uncharged(record, callbackName, redact));
        const { unusable, comma } = unreadableCharge(record, redact);
        warnings.push(...unusable, ...comma);
        // It charged the card (001 §4.2): an error code beside the success may be a decline.
        warnings.push(...errorsInSuccess(record, callbackName, ["ErrorCode"], redact));
      }
    }
    if (callbackName === "PerformOrderPayment") {
      problems.push(...uncharged(record, callbackName, redact));
      const { unusable, comma } = unreadableCharge(record, redact);
      problems.push(...unusable);
      warnings.push(...comma);
    }
    const errorFields = ERROR_FIELDS[callbackName];
    if (errorFields !== undefined)
      warnings.push(...errorsInSuccess(record, callbackName, errorFields, redact));
  }
  if (parseSuccessValue(value) === undefined) {
    problems.push(
      `"${field}" is ${describeValue(value, redact)}: the service cannot parse it and counts the call as failed (use ${verdict === "SuccessText" ? '"True" or "False"' : "true or false"})`,
    );
  } else if (!statusFailed) {
    // SendRMAInfoToMerchant's Success is documented as the text "True"/"False", but the
    // operator's own integration answers a boolean (wire-facts §6) and the service reads both:
    // a boolean is not a problem.
    const succeeded = parseSuccessValue(value);
    if (succeeded === false && outcome === "success")
      problems.push(refusalProblem(record, field, redact));
    if (succeeded === true && outcome === "refusal") {
      const said = typeof value === "boolean" ? String(value) : describeValue(value, redact);
      problems.push(`"${field}" is ${said}: expected a refusal`);
    }
  }
  return found();
}

/** Whether the expected statuses are refusals only (no 2xx): the status alone is checked. */
function outcomeIsStatusOnly(statuses: readonly number[] | undefined): boolean {
  return statuses !== undefined && statuses.length > 0 && !statuses.some(isSuccessStatus);
}

/** The card data a payload carried, which no answer may send back. */
interface SentCardData {
  /** The card numbers, their digits only (12 or more). */
  readonly numbers: readonly string[];
  /** The card numbers as the payload wrote them, when not digits only (`1234 5678  1234 5678`). */
  readonly spellings: readonly string[];
  /** The CVVs, trimmed (3 characters or more: a shorter one cannot be told from other text). */
  readonly cvvs: readonly string[];
}

/**
 * The card numbers and CVVs of every card object of a payload (`findCardObjects`, as the engine
 * and `payloadCardSecrets` find them): `CardNumber` in any case, and the keys that name a CVV
 * (`CVVNumber`, `cvv`, `Cvv2` in any case).
 */
function sentCardData(payload: unknown): SentCardData {
  const value = payloadValue(payload);
  const numbers = new Set<string>();
  const spellings = new Set<string>();
  const cvvs = new Set<string>();
  if (value === null || typeof value !== "object") return { numbers: [], spellings: [], cvvs: [] };
  for (const card of findCardObjects(value)) {
    const record = card as Record<string, unknown>;
    for (const number of cardNumbersOf(record)) {
      const digits = cardDigits(number);
      if (digits === undefined) continue;
      numbers.add(digits);
      const written = typeof number === "string" ? number.trim() : digits;
      if (written !== digits) spellings.add(written);
    }
    for (const key of Object.keys(record)) {
      if (!isCvvNumberKey(key) && !namesCvv(key)) continue;
      const cvv = scalarText(record[key])?.trim();
      if (cvv !== undefined && cvv.length >= MIN_CVV_LENGTH) cvvs.add(cvv);
    }
  }
  return { numbers: [...numbers], spellings: [...spellings], cvvs: [...cvvs] };
}

/** The shortest CVV looked for: shorter text cannot be told from other text. */
const MIN_CVV_LENGTH = 3;
/** At most this many places are named per finding; the rest are counted. */
const ECHO_PATHS = 5;

/** A string, or the text of a number. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  return typeof value === "number" ? String(value) : undefined;
}

/**
 * A CVV quoted in a text next to its name (`cvv 737`, `CVC: 737`, `(CVV2=737)`, the request's
 * JSON as text: `"CVVNumber" : "737"`, a PHP dump: `[CVVNumber] => 737`, `["CVVNumber"]=>
 * string(3) "737"`, an HTML table: `<th>CVVNumber</th><td>737</td>`), with no word between
 * them (`CVV check passed; code 737` is not one): the CVV's digits
 * elsewhere (a quantity, an amount, an order number) are not card data. Found on the text with the
 * CVV masked (`maskSecret`: only where it stands apart from other digits), so that no regular
 * expression is built from the request's data.
 */
const NAMED_MASK =
  /(?:cvv|cvc|csc|security code)(?:2|number|code)?(?:[^0-9a-z*]|<\/?t[dhr]>|string\(\d{1,2}\)){0,12}\*\*\*(?!\*)/i;

function quotesCvv(written: string, cvv: string): boolean {
  const text = foldText(written);
  const masked = maskSecret(text, cvv);
  return masked !== text && NAMED_MASK.test(masked) && !NAMED_MASK.test(text);
}

/**
 * The separators a card number written as one number may have between its digit groups: a space
 * (no-break and thin spaces too), a dash, a dot or a `+` (a form-encoded space).
 */
const CARD_SEPARATORS = " \u00a0\u2007\u2009\u202f-\u2010\u2011\u2012\u2013.+";

/**
 * Whether a text writes the card number (its digits, `card`) as one number: whole groups of
 * digits, one after the other, with the same separator (see {@link CARD_SEPARATORS}) between all
 * of them, or none, escapes read. Separate numbers whose digits happen to join into the card (a
 * BIN, the last four, an amount, an auth code: `411111******1111 approved, code 111111`) are not
 * the card number: an answer may quote those.
 */
function writesCardNumber(text: string, card: string): boolean {
  const read = foldText(readEscapes(text));
  const groups: string[] = [];
  const separators: string[] = [];
  let i = 0;
  while (i < read.length) {
    if (!isDigitAt(read, i)) {
      i++;
      continue;
    }
    // One run: digit groups joined by single separators.
    groups.length = 0;
    separators.length = 0;
    for (;;) {
      const from = i;
      while (isDigitAt(read, i)) i++;
      groups.push(read.slice(from, i));
      const separator = read.charAt(i);
      if (separator === "" || !CARD_SEPARATORS.includes(separator) || !isDigitAt(read, i + 1)) {
        break;
      }
      separators.push(separator);
      i++;
    }
    if (runHoldsCard(groups, separators, card)) return true;
  }
  return false;
}

/** Whether some whole groups of a run, in a row and joined by one separator, are the card. */
function runHoldsCard(groups: readonly string[], separators: readonly string[], card: string) {
  for (let a = 0; a < groups.length; a++) {
    let size = 0;
    for (let b = a; b < groups.length; b++) {
      if (b > a + 1 && separators[b - 1] !== separators[a]) break;
      const group = groups[b] as string;
      if (!card.startsWith(group, size)) break;
      size += group.length;
      if (size === card.length) return true;
    }
  }
  return false;
}

/** Whether a text holds `written` (a card number as the payload wrote it) apart from other digits. */
function quotesSpelling(text: string, written: string): boolean {
  const read = foldText(readEscapes(text));
  for (let at = read.indexOf(written); at !== -1; at = read.indexOf(written, at + 1)) {
    if (!isDigitAt(read, at - 1) && !isDigitAt(read, at + written.length)) return true;
  }
  return false;
}

function isDigitAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 48 && code <= 57;
}

/** A JSON number of 12 digits or more, as the answer's text writes it (it may not read exactly). */
const LONG_JSON_NUMBER = /[:[,]\s*(\d{12,})\s*(?=[,\]}])/g;

/** A place of the answer's walk: the key that leads to it from its parent (none at the top). */
interface Place {
  readonly value: object;
  readonly parent: Place | undefined;
  readonly key: string;
}

/** The path of a place (and then `key`), built only for a finding. */
function pathOf(place: Place, key?: string): string[] {
  const path: string[] = key === undefined ? [] : [key];
  for (let at: Place | undefined = place; at?.parent !== undefined; at = at.parent) {
    path.push(at.key);
  }
  return path.reverse();
}

/**
 * Where an answer sends back the card data the call carried, one problem per kind (card number,
 * CVV), naming the places (a JSON path, `a key of "X"`, or `the body` for an answer that is not
 * JSON), never the values:
 * - a card number: a string (or a key) that writes it as one number (see
 *   {@link writesCardNumber}: `4111 1111 1111 1111`, `4111-1111…`, `4111%201111…`) or as the
 *   payload wrote it, digits of other scripts and other spaces and dashes folded first
 *   (`foldText`, as the library's masking reads them), or a JSON number equal to it;
 * - a CVV: the value of a key that names a CVV (`CVVNumber`, `cvv`, `Cvv2`, in any case) equal to
 *   it, or a text quoting it next to its name (`cvv 737`). A CVV is three or four digits: the same
 *   digits in a quantity, an amount or another field are not taken for it.
 * The places are masked with `redact` (a key of the answer may hold a secret). The walk keeps a
 * link to each parent and builds a path only for a finding: a deeply nested answer costs no more
 * than a flat one of its size.
 */
function echoedCardData(text: string, payload: unknown, redact: Redactor): string[] {
  if (payload === undefined) return [];
  const sent = sentCardData(payload);
  if (sent.numbers.length === 0 && sent.cvvs.length === 0) return [];
  const holdsNumber = (value: string) =>
    sent.numbers.some((digits) => writesCardNumber(value, digits)) ||
    sent.spellings.some((written) => quotesSpelling(value, written));
  const cardAt: string[] = [];
  const cvvAt: string[] = [];
  const parsed = parseJson(text.trim());
  if (parsed.ok && parsed.value !== null && typeof parsed.value === "object") {
    // An explicit stack: a deeply nested answer must not overflow the call stack.
    const stack: Place[] = [{ value: parsed.value, parent: undefined, key: "" }];
    while (stack.length > 0) {
      const place = stack.pop() as Place;
      const { value } = place;
      const isArray = Array.isArray(value);
      const entries = isArray
        ? value.map((item, index) => [String(index), item] as const)
        : Object.entries(value as Record<string, unknown>);
      for (const [key, item] of entries) {
        if (!isArray && holdsNumber(key)) cardAt.push(keyPlace(pathOf(place), redact));
        if (item !== null && typeof item === "object") {
          stack.push({ value: item, parent: place, key });
          continue;
        }
        const itemText = scalarText(item);
        if (itemText === undefined) continue;
        if (holdsNumber(itemText)) cardAt.push(pathPlace(pathOf(place, key), redact));
        const cvvKey = !isArray && (isCvvNumberKey(key) || namesCvv(key));
        if (
          sent.cvvs.some(
            (cvv) => (cvvKey && foldText(itemText).trim() === cvv) || quotesCvv(itemText, cvv),
          )
        ) {
          cvvAt.push(pathPlace(pathOf(place, key), redact));
        }
      }
    }
    // A JSON number too long to read exactly (19 digits): its digits as the answer writes them.
    if (cardAt.length === 0) {
      for (const match of text.matchAll(LONG_JSON_NUMBER)) {
        if (sent.numbers.includes(match[1] as string)) {
          cardAt.push("the body");
          break;
        }
      }
    }
  } else {
    if (holdsNumber(text)) cardAt.push("the body");
    if (sent.cvvs.some((cvv) => quotesCvv(text, cvv))) cvvAt.push("the body");
  }
  const problems: string[] = [];
  if (cardAt.length > 0) problems.push(echoProblem("the card number", cardAt));
  if (cvvAt.length > 0) problems.push(echoProblem("the CVV", cvvAt));
  return problems;
}

/** A JSON path as `--set` writes it (`PaymentDetails.CardNumber`, `Lines.0.Note`), quoted. */
function pathPlace(path: readonly string[], redact: Redactor): string {
  return `"${redact(path.join("."))}"`;
}

/** A key of the object at `path` (the top level: the answer). */
function keyPlace(path: readonly string[], redact: Redactor): string {
  return path.length === 0 ? "a key of the answer" : `a key of ${pathPlace(path, redact)}`;
}

function echoProblem(what: string, places: readonly string[]): string {
  const unique = [...new Set(places)];
  const shown = unique.slice(0, ECHO_PATHS).join(", ");
  const more = unique.length > ECHO_PATHS ? ` and ${unique.length - ECHO_PATHS} more` : "";
  return `the answer sends back ${what} this call carried, at ${shown}${more}: card data must never be echoed`;
}

function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * A field of a refusal worth quoting (its ErrorCode, Message), short and without card numbers:
 * masked before it is cut, so that no part of a secret is left at the cut.
 */
function quoted(body: Record<string, unknown>, name: string, redact: Redactor): string | undefined {
  const value = body[name];
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const text = redact(String(value));
  return `${name} ${JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text)}`;
}

/** `a refusal: "Success" is false (ErrorCode "X", Message "…"): the endpoint turned the call down` */
function refusalProblem(body: Record<string, unknown>, field: string, redact: Redactor): string {
  const details = ["ErrorCode", "Message", "ErrorMessage"]
    .map((name) => quoted(body, name, redact))
    .filter((text) => text !== undefined);
  const why = details.length > 0 ? ` (${details.join(", ")})` : "";
  const value = body[field];
  const said = typeof value === "boolean" ? String(value) : describeValue(value, redact);
  return `a refusal: "${field}" is ${said}${why}: the endpoint turned the call down`;
}

function checkGiftCard(
  callbackName: CallbackName,
  body: Record<string, unknown>,
  validation: boolean,
  problems: string[],
  redact: Redactor,
): void {
  if (validation && typeof body.IsValid !== "boolean") {
    const found = Object.hasOwn(body, "IsValid")
      ? `is ${describeValue(body.IsValid, redact)}`
      : "is missing";
    problems.push(
      `"IsValid" ${found}: ${callbackName} answers whether the card is valid (true or false)`,
    );
  }
  // A redemption or refund the endpoint did not make: a success the service acts on all the same.
  if (!validation && parseSuccessValue(body.IsValid) === false) {
    problems.push(
      `"IsValid" is false in a success: the service reads "Success" and takes ${callbackName} as done; answer a refusal ("Success": false) instead`,
    );
  }
  if (Object.hasOwn(body, "Balance") && body.Balance !== null && typeof body.Balance !== "string") {
    problems.push(
      `"Balance" is ${describeValue(body.Balance, redact)}: the service reads the balance as text ("25.00")`,
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

/**
 * A SendOrderToMerchant success names the merchant's own order (ResponseInfo's `InternalOrderId`,
 * text or a number): without it the service cannot link the order it placed.
 */
function checkOrderId(body: Record<string, unknown>, problems: string[], redact: Redactor): void {
  const id = body.InternalOrderId;
  if (hasTextValue(id)) return;
  const found = Object.hasOwn(body, "InternalOrderId")
    ? `is ${describeValue(id, redact)}`
    : "is missing";
  problems.push(
    `"InternalOrderId" ${found}: a SendOrderToMerchant success names the merchant's order id`,
  );
}

/**
 * Whether a payload carried a card to charge in `PaymentDetails` (the key in any letter case, as
 * the library protects it): the merchant performs the payment. Not when the service collected it
 * itself (`PaymentMethodCode` `"OT"`, no card: wire-facts §6), nor without a card number.
 */
function carriedPayment(payload: unknown): boolean {
  let value = payload;
  if (typeof value === "string") {
    const parsed = parseJson(value);
    value = parsed.ok ? parsed.value : undefined;
  }
  return hasCardToCharge(paymentDetailsOf(value));
}

const CHARGED: Record<(typeof PAYMENT_FIELDS)[number], string> = {
  PaymentAmount: "the amount actually charged",
  PaymentCurrencyCode: "the currency of that amount",
};

/**
 * Whether a JSON text holds a lone surrogate, raw or as a `\\u` escape (a pair written either way
 * is not one): what strict JSON readers refuse (review ENC-2). One pass, no recursion.
 */
function holdsLoneSurrogate(text: string): boolean {
  let high = false; // the code unit before was a high surrogate
  for (let i = 0; i < text.length; i++) {
    let unit = text.charCodeAt(i);
    if (unit === 0x5c) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x75) {
        unit = Number.parseInt(text.slice(i + 2, i + 6), 16);
        i += 5;
      } else {
        unit = next;
        i++;
      }
    }
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    if (high !== low) return true;
    high = !high && unit >= 0xd800 && unit <= 0xdbff;
  }
  return high;
}

/**
 * The payment fields a success leaves out or leaves blank (`hasTextValue`: text or a number, and
 * not blank; the library's PerformOrderPayment handler answers without them, with a
 * `result_incomplete` warning for a missing or wrong-typed one), one sentence each.
 */
function uncharged(
  body: Record<string, unknown>,
  callbackName: CallbackName,
  redact: Redactor,
): string[] {
  const paidOrder = callbackName === "SendOrderToMerchant";
  const why = paidOrder
    ? "the order carried a card in PaymentDetails, so the payment was performed and the answer returns"
    : "a PerformOrderPayment success returns";
  return PAYMENT_FIELDS.filter((name) => !hasTextValue(body[name])).map((name) => {
    const found = Object.hasOwn(body, name)
      ? `is ${describeValue(body[name], redact)}`
      : "is missing";
    return `"${name}" ${found}: ${why} ${CHARGED[name]}${paidOrder ? " (001 §4.2)" : ""}`;
  });
}

/**
 * Amount text the service may read: digits with dots or commas, a sign, spaces around. Only what
 * is certainly no amount (`"abc"`, `"10 EUR"`) fails it: the kit is never stricter than the
 * service, whose parsing is not documented.
 */
const AMOUNT_TEXT = /^[+-]?(\d[\d.,]*|[.,]\d[\d.,]*)$/;
/** A currency code: 3 letters (wire-facts §1, 001 §2.10), once trimmed (`" EUR"` is one). */
const CURRENCY_CODE = /^[A-Za-z]{3}$/;
/** A country code: 2 letters (001 §2.10) or 3 (ISO-3, wire-facts §6), once trimmed. */
const COUNTRY_CODE = /^[A-Za-z]{2,3}$/;

/**
 * The payment fields present (text or a number, not blank) in a form the service cannot read as
 * an amount or a currency (`unusable`: an amount that is no number, a currency that is not 3
 * letters), and an amount written with a decimal comma (`comma`: the README's rule is a dot; how
 * the service reads a comma is not documented, a .NET invariant parse takes `104,00` for 10400).
 */
function unreadableCharge(
  body: Record<string, unknown>,
  redact: Redactor,
): { unusable: string[]; comma: string[] } {
  const unusable: string[] = [];
  const comma: string[] = [];
  const amount = body.PaymentAmount;
  if (hasTextValue(amount) && typeof amount === "string") {
    const text = amount.trim();
    if (!AMOUNT_TEXT.test(text)) {
      unusable.push(
        `"PaymentAmount" is ${describeValue(amount, redact)}: the service reads it as the amount charged; answer a number or decimal text with a dot ("104.00")`,
      );
    } else if (text.includes(",")) {
      comma.push(
        `"PaymentAmount" is ${describeValue(amount, redact)}, with a comma: write the amount with a dot as the decimal separator and no thousands separator ("1234.56"); how the service reads a comma is not documented (a .NET invariant parse takes "104,00" for 10400)`,
      );
    }
  }
  const currency = body.PaymentCurrencyCode;
  if (
    hasTextValue(currency) &&
    !(typeof currency === "string" && CURRENCY_CODE.test(currency.trim()))
  ) {
    unusable.push(
      `"PaymentCurrencyCode" is ${describeValue(currency, redact)}: the service reads it as the currency of that amount, 3 letters ("USD")`,
    );
  }
  return { unusable, comma };
}

/**
 * The callbacks whose success tells the service that money moved (a card charged, a gift card
 * debited or credited), and the fields that say a failure in them (001 §2.2 "ErrorCode: error code
 * on error"; the gift-card answer's ErrorText). The library's own handlers answer such a result
 * without its own `Success: true` with a 500; with it (a ported answer's `ErrorCode: 100`) the
 * answer is a success, so an answer carrying one is a warning, not a problem.
 */
const ERROR_FIELDS: Partial<Record<CallbackName, readonly string[]>> = {
  PerformOrderPayment: ["ErrorCode"],
  RedeemGiftCard: ["ErrorCode", "ErrorText"],
  RefundGiftCard: ["ErrorCode", "ErrorText"],
};

/** An error code or text (not blank) in a success, one sentence each. */
function errorsInSuccess(
  body: Record<string, unknown>,
  callbackName: CallbackName,
  fields: readonly string[],
  redact: Redactor,
): string[] {
  return fields
    .filter((name) => hasTextValue(body[name]))
    .map(
      (name) =>
        `${quoted(body, name, redact)} in a success: the service reads "Success" and takes ${callbackName} as done; if it was refused, answer a refusal ("Success": false)`,
    );
}

/** At most this many product problems are listed; the rest are counted. */
const PRODUCT_PROBLEMS = 5;

/**
 * A cart the library's handler would send: its cart schema (a product that is not an object, a
 * price given as text, a field of the wrong type), and what 001 §2.3 requires of a product under
 * the cart's names: the SKU (`ProductCode`), a price (`ListPrice` or `SalePrice`) and the quantity
 * (`OrderedQuantity`). Not its VAT rate: real cart answers leave `VATRateType` out (wire-facts §6).
 */
function checkCartContents(
  body: Record<string, unknown>,
  problems: string[],
  redact: Redactor,
): void {
  const written = cartShape.success(body as never);
  if ("invalid" in written) {
    const issues = written.invalid.replace(/^not a CheckoutCartInfo: /, "");
    problems.push(
      `CheckoutCartInfo does not match the cart schema (its handler would answer 500): ${issues}`,
    );
  }
  const missing: string[] = [];
  const products = body.productsList as unknown[];
  products.forEach((product, index) => {
    if (!isRecord(product)) return;
    const code = product.ProductCode;
    if (typeof code !== "string" || code.trim() === "") {
      missing.push(`product ${index} has no "ProductCode": 001 §2.3 requires each product's SKU`);
    }
    if (!isFiniteNumber(product.ListPrice) && !isFiniteNumber(product.SalePrice)) {
      missing.push(
        `product ${index} has no price ("ListPrice" or "SalePrice"): 001 §2.3 requires the price`,
      );
    }
    if (!isFiniteNumber(product.OrderedQuantity)) {
      missing.push(`product ${index} has no "OrderedQuantity": 001 §2.3 requires the quantity`);
    }
  });
  problems.push(...missing.slice(0, PRODUCT_PROBLEMS));
  if (missing.length > PRODUCT_PROBLEMS) {
    problems.push(`… and ${missing.length - PRODUCT_PROBLEMS} more product problems`);
  }
  // The cart's codes (001 §2.10), as text the service can read as one; absent, null or blank is
  // fine: the service itself writes "" for a value it does not have (wire-facts §6), and
  // countryCode is optional in the request (review second-kit-2).
  const codes = [
    ["countryCode", COUNTRY_CODE, 'a country code, 2 or 3 letters ("DE", "DEU")'],
    ["currencyCode", CURRENCY_CODE, 'a currency code, 3 letters ("EUR")'],
    ["originalCurrencyCode", CURRENCY_CODE, 'a currency code, 3 letters ("EUR")'],
  ] as const;
  for (const [name, pattern, form] of codes) {
    const value = body[name];
    if (typeof value === "string" && value.trim() !== "" && !pattern.test(value.trim())) {
      problems.push(
        `CheckoutCartInfo "${name}" is ${describeValue(value, redact)}: expected ${form}`,
      );
    }
  }
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** What is wrong with a 2xx answer that is neither a cart nor a refusal. */
function checkCart(body: Record<string, unknown>, problems: string[], redact: Redactor): void {
  const variant = caseVariant(body, "productsList");
  if (variant !== undefined && Array.isArray(body[variant])) {
    problems.push(`CheckoutCartInfo has "${variant}": the name is "productsList"`);
  } else if (Object.hasOwn(body, "productsList")) {
    problems.push(
      `CheckoutCartInfo "productsList" is ${describeValue(body.productsList, redact)}, expected an array`,
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
