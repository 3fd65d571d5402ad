import { parseSuccessValue } from "../schemas/response.js";
import { maskCardNumber } from "./card.js";
import { mayBeCvv, namesCardNumber, namesCvv } from "./card-keys.js";
import type { RefusedFalse, RefusedFields } from "./checked.js";
import { FAILURE_CODE, FAILURE_STATUS, type FailureKind, type WarningKind } from "./errors.js";
import { wellFormedJson } from "./text.js";
import type { CallbackResponse } from "./types.js";

export { wellFormedJson };

/**
 * How each callback writes its answer. A shape turns the merchant's result into the success body,
 * and any failure (the library's own or a `CallbackError`) into the failure body.
 */

export interface FailureFields {
  readonly code: string;
  readonly message: string;
  readonly description: string | undefined;
}

/** What a shape makes of the merchant's result. */
export type WrittenResult =
  /**
   * The success body; `ignored` lists the result's unknown fields, left out of it, and
   * `incomplete` says what of the result could not be answered (an expected field missing, a
   * value of the wrong type, left out) or not surely (an integer beyond 2^53): each a warning.
   */
  | {
      readonly body: object;
      readonly ignored?: readonly string[];
      readonly incomplete?: string;
      /**
       * A field of the shape's `errors` set (or set but unusable) in a result that does not say
       * `Success: true` itself, where the shape answers it all the same (SendOrderToMerchant: the
       * order exists); the engine warns when the order carried a card to charge.
       */
      readonly unconfirmed?: string;
      /** What reading a field threw (the first such field's), for the `incomplete` warning. */
      readonly readError?: unknown;
    }
  /**
   * The result is unusable (a validation's verdict missing, `Success: false`): a 500; with
   * `readError` when a field it needed could not be read (what its getter threw).
   */
  | { readonly invalid: string; readonly readError?: unknown };

export interface ResponseShape<TResult> {
  /**
   * True when the success body is the result as returned (the cart, the merchant's own fields
   * included) rather than fields picked from it: a helper storing the result (`withIdempotency`)
   * keeps it as returned too.
   */
  readonly asReturned?: boolean;
  /**
   * For a shape answered as returned: its schema's levels, with only the fields that hold data
   * rather than free text (codes, ids, addresses, URLs). With card data in the request, their
   * texts have only its own card numbers masked; other texts are masked like a message's.
   */
  readonly dataLevel?: SchemaLevel | undefined;
  /**
   * True when a success may say `unconfirmed` (SendOrderToMerchant): the engine then reads,
   * before the function runs, whether the order carries a card to charge (the function may clear
   * the card number once charged).
   */
  readonly unconfirms?: boolean;
  /**
   * The names a result that is not a plain object is read for (the verdicts and the known fields),
   * as {@link namesRead} reads them; none for a shape answered with the result as returned.
   */
  readonly names?: readonly string[];
  /** The success body, or a reason when the merchant's result is unusable. */
  success(result: TResult): WrittenResult;
  failure(fields: FailureFields): object;
}

/** ResponseInfo as the library writes it (order callbacks). */
export interface ResponseInfo {
  Success: boolean;
  InternalOrderId?: string;
  OrderId?: string;
  PaymentAmount?: string;
  PaymentCurrencyCode?: string;
  StatusCode?: string;
  ErrorCode?: string;
  Message?: string;
  Description?: string;
}

/** What a merchant's order-callback function returns; the library adds `Success`. */
export interface ResponseInfoResult {
  /** The merchant's own unique order id. */
  InternalOrderId?: string | number | null | undefined;
  /** The order id shown to the shopper. */
  OrderId?: string | number | null | undefined;
  /** Total amount actually charged; written as a string. */
  PaymentAmount?: string | number | null | undefined;
  /** 3-letter currency of that payment. */
  PaymentCurrencyCode?: string | null | undefined;
  /** The merchant's own status code, written as text (a number is written as text). */
  StatusCode?: string | number | null | undefined;
  /** Documented for failures; integrations also send it (as `null`, or the number `100`). */
  ErrorCode?: string | number | null | undefined;
  Message?: string | null | undefined;
  Description?: string | null | undefined;
}

/**
 * What a merchant's function returns when it has nothing to add: `undefined`, or nothing at all.
 * `void` keeps `async (order) => { await save(order); }` (a `Promise<void>`) a valid function.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a function without a return statement returns void
export type NoResult = undefined | void;

/** What SendRMAInfoToMerchant and UpdateParcelDispatch functions may return. */
export interface MessageResult {
  Message?: string | null | undefined;
  Description?: string | null | undefined;
}

/** SendOrderToMerchant: the merchant's own order id is what the service keeps. */
export interface SendOrderToMerchantResult extends ResponseInfoResult {
  InternalOrderId: string | number;
}

/**
 * The fields that say what a payment charged: the amount and its currency (001 §4.2, wire-facts
 * §1). A PerformOrderPayment success requires them (the types; at run time the handler answers
 * without them, with a warning, and `checkResponse` flags an answer without them); a SendOrderToMerchant whose order carried a card
 * in `PaymentDetails` returns them too (`inspectResponse` warns).
 */
export const PAYMENT_FIELDS = ["PaymentAmount", "PaymentCurrencyCode"] as const;

/**
 * A text field's value as an answer carries it: text, or a finite number written as text;
 * undefined for anything else. A result without such a value in an expected field is answered
 * with a warning; a present but blank value is answered without one: either way the function has
 * already created the order or charged the card, and a 500 would make the service deliver it again.
 */
export function writtenText(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return decimalText(value);
  return typeof value === "string" ? value : undefined;
}

/**
 * A finite number as decimal text without exponent (review truth TRUTH-5): JavaScript's shortest
 * digits of the double (`String`), which read back to the same number, with an exponent form
 * (`1e-7`, `1e+21`) written out (`0.0000001`, `1000000000000000000000`): an amount in exponent
 * form is not a decimal the service's readers take.
 */
function decimalText(value: number): string {
  const text = String(value);
  const e = text.indexOf("e");
  if (e === -1) return text;
  const negative = text.startsWith("-");
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf(".");
  const digits = point === -1 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  // Where the decimal point goes in `digits` (one digit before it in the mantissa).
  const at = 1 + exponent;
  const written =
    at <= 0
      ? `0.${"0".repeat(-at)}${digits}`
      : at >= digits.length
        ? digits + "0".repeat(at - digits.length)
        : `${digits.slice(0, at)}.${digits.slice(at)}`;
  return negative ? `-${written}` : written;
}

/**
 * Whether a number written in a result is an integer beyond 2^53 (±9007199254740991): its digits
 * are those of the nearest double, maybe not the id or amount meant (a rounded `JSON.parse`, an
 * id computed in a double). Written all the same, with a warning (`result_incomplete`).
 */
function isUnsafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value);
}

/**
 * The testing kit's rule for a required text field (`checkResponse` flags an answer without it):
 * the handlers' ({@link writtenText}), and not blank.
 */
export function hasTextValue(value: unknown): value is string | number {
  const text = writtenText(value);
  return text !== undefined && text.trim() !== "";
}

/**
 * PerformOrderPayment: the amount and currency actually charged. A result with an error code (and
 * without `Success: true` of its own, which the types do not take) is a declined payment returned
 * instead of thrown, answered 500: to refuse, throw a `CallbackError`. A result the factories or
 * the router infer that sets `ErrorCode` (to anything but `null`) does not compile; a value typed
 * `ResponseInfoResult`, where it is optional, does (a helper shared with the order callbacks).
 */
export interface PerformOrderPaymentResult extends ResponseInfoResult, RefusedFields<"ErrorCode"> {
  PaymentAmount: string | number;
  PaymentCurrencyCode: string;
}

/**
 * What a gift-card or voucher function returns (ValidateGiftCard and ValidateVoucher through
 * {@link ValidateGiftCardResult}, RedeemGiftCard and RefundGiftCard through
 * {@link GiftCardTransactionResult}, which takes this type); the library adds `Success`. Amounts
 * are written as text. `ErrorCode` and `ErrorText` belong to a validation's `IsValid: false`: in a
 * redemption's or refund's result without its own `Success: true` they are a 500.
 */
export interface GiftCardResult {
  /** Whether the card or voucher can be used. */
  IsValid?: boolean | null | undefined;
  /** The balance left, as text (a number is written as text). */
  Balance?: string | number | null | undefined;
  /** 3-letter currency of `Balance`. */
  CurrencyCode?: string | null | undefined;
  /** Whether the card is one of the operator's own gift cards. */
  IsOperatorGiftCard?: boolean | null | undefined;
  /** Why the card or voucher cannot be used (with `IsValid: false`). */
  ErrorCode?: string | number | null | undefined;
  Message?: string | null | undefined;
  Description?: string | null | undefined;
  ErrorText?: string | null | undefined;
}

/**
 * RedeemGiftCard and RefundGiftCard: a result is a debit or a credit made. One with an error code
 * or text (and without `Success: true` of its own, which the types do not take) is a refusal
 * returned instead of thrown, answered 500, as is `IsValid: false`. To refuse, throw a
 * `CallbackError`. A result the factories or the router infer that sets `ErrorCode` or `ErrorText`
 * (to anything but `null`), or `IsValid` to the literal `false`, does not compile; a widened
 * `boolean`, and a value typed `GiftCardResult`, where they are optional, do (a helper shared
 * with ValidateGiftCard).
 */
export interface GiftCardTransactionResult
  extends GiftCardResult,
    RefusedFields<"ErrorCode" | "ErrorText">,
    RefusedFalse<"IsValid"> {}

/** ValidateGiftCard and ValidateVoucher: whether the card or voucher is valid is required. */
export interface ValidateGiftCardResult extends GiftCardResult {
  IsValid: boolean;
}

/** How a result field is written: as text (numbers become text) or as a boolean. */
type FieldKind = "text" | "boolean";

const RESPONSE_INFO_FIELDS: Readonly<Record<keyof ResponseInfoResult, FieldKind>> = {
  InternalOrderId: "text",
  OrderId: "text",
  PaymentAmount: "text",
  PaymentCurrencyCode: "text",
  StatusCode: "text",
  ErrorCode: "text",
  Message: "text",
  Description: "text",
};

const MESSAGE_FIELDS: Readonly<Record<keyof MessageResult, FieldKind>> = {
  Message: "text",
  Description: "text",
};

const GIFT_CARD_FIELDS: Readonly<Record<keyof GiftCardResult, FieldKind>> = {
  IsValid: "boolean",
  Balance: "text",
  CurrencyCode: "text",
  IsOperatorGiftCard: "boolean",
  ErrorCode: "text",
  Message: "text",
  Description: "text",
  ErrorText: "text",
};

/**
 * The text fields of an answer that hold amounts, codes and ids, never free text: a CVV equal to
 * one (an amount of `737.00`, an order `M-737`), or an id that passes the Luhn check, is a
 * coincidence, and masking it would change what the service is told. Only the request's own card
 * number is masked in them.
 */
export const PLAIN_RESULT_FIELDS: ReadonlySet<string> = new Set([
  "InternalOrderId",
  "OrderId",
  "PaymentAmount",
  "PaymentCurrencyCode",
  "StatusCode",
  "Balance",
  "CurrencyCode",
]);

/**
 * A success body with its texts through a request's redactor (the amounts, codes and ids of
 * {@link PLAIN_RESULT_FIELDS} through `plain`, which masks the request's own card number only). The body itself when
 * nothing changed (the usual answer), else a copy; the booleans as they are.
 */
export function redactedBody(
  body: object,
  redact: (value: unknown) => string,
  plain: (text: string) => string,
): object {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(body)) {
    const value = (body as Record<string, unknown>)[key];
    if (typeof value !== "string") continue;
    const masked = PLAIN_RESULT_FIELDS.has(key) ? plain(value) : redact(value);
    if (masked === value) continue;
    copy ??= { ...body };
    copy[key] = masked;
  }
  return copy ?? body;
}

/**
 * One level of a response schema: the fields of an object there (lower-cased names, each with its
 * own level, `undefined` for a leaf) and the level of an array's items.
 */
export interface SchemaLevel {
  fields?: Map<string, SchemaLevel | undefined>;
  element?: SchemaLevel | undefined;
}

/**
 * A success body answered as returned (the cart: nested, the merchant's own fields too) with
 * this request's card data masked at every depth, as {@link redactedBody} masks a flat one: texts
 * through `redact`, but those of the data fields (a field `dataLevel` knows where it stands:
 * codes, ids, addresses, URLs) through `plain` only, which masks this request's own card numbers;
 * a whole number quoting the request's card through `plain`; keys through both; a key naming a
 * card number with its value masked to its last four digits (one already so masked kept, so that
 * a repeat's stored answer is answered the same; a shorter one, a CVV, through `redact`); a key
 * naming a CVV left out (reviews adversary, second-doubt, second-seq). A copy of what
 * `JSON.stringify` writes (a `__proto__` key kept as a field); the body itself when JSON cannot
 * write it, whose answer then fails as it would have.
 */
export function redactedTree(
  body: object,
  redact: (text: string) => string,
  plain: (text: string) => string,
  dataLevel?: SchemaLevel,
): object {
  // The schema level of each object and array written so far (the copies made below included).
  const levels = new WeakMap<object, SchemaLevel | undefined>();
  let text: string | undefined;
  try {
    text = JSON.stringify(body, function (this: unknown, name: string, value: unknown) {
      const holder = this as object;
      const atRoot = name === "" && !levels.has(holder);
      const holderLevel = atRoot ? undefined : levels.get(holder);
      const level = atRoot
        ? dataLevel
        : Array.isArray(holder)
          ? holderLevel?.element
          : holderLevel?.fields?.get(name.toLowerCase());
      if (typeof value === "string") {
        if (namesCardNumber(name)) return maskedCardNumber(value, redact, plain);
        const isData = !atRoot && holderLevel?.fields?.has(name.toLowerCase()) === true;
        return isData && !Array.isArray(holder) ? plain(value) : redact(plain(value));
      }
      if (typeof value === "number") {
        if (!Number.isSafeInteger(value)) return value;
        const digits = String(value);
        const masked = namesCardNumber(name)
          ? maskedCardNumber(digits, redact, plain)
          : plain(digits);
        return masked === digits ? value : masked;
      }
      if (value === null || typeof value !== "object") return value;
      if (Array.isArray(value)) {
        levels.set(value, level);
        return value;
      }
      // No prototype: a `__proto__` key is a field like any other.
      const copy: Record<string, unknown> = Object.create(null);
      for (const key of Object.keys(value)) {
        const field = (value as Record<string, unknown>)[key];
        if (namesCvv(key) && mayBeCvv(field)) continue;
        copy[redact(plain(key))] = field;
      }
      levels.set(copy, level);
      return copy;
    });
  } catch {
    return body;
  }
  return text === undefined ? body : (JSON.parse(text) as object);
}

/**
 * A text already masked to a card number's last four digits (`************1111`, as
 * `maskCardNumber` writes a number of 12 or more digits): a CVV behind asterisks is not one.
 */
const MASKED_CARD_NUMBER = /^\*{8,}\d{4}$/;

/**
 * A card-number field's value masked to its last four digits; one already so masked as it is;
 * one of four digits or fewer (a CVV put there) through the request's redactor.
 */
function maskedCardNumber(
  text: string,
  redact: (text: string) => string,
  plain: (text: string) => string,
): string {
  if (MASKED_CARD_NUMBER.test(text)) return text;
  return text.replace(/\D/g, "").length <= 4
    ? redact(plain(text))
    : (maskCardNumber(text) as string);
}

/** The answer's verdict: the library writes it; a result may repeat it only as true. */
const VERDICT_LIST = ["Success", "IsSuccess"] as const;
const VERDICT_FIELDS: ReadonlySet<string> = new Set(VERDICT_LIST);

/**
 * A field's value as the answer writes it; undefined when unusable. A boolean is read like
 * `Success` (wire-facts §1): a boolean, or the text true or false in any case.
 */
function written(value: unknown, kind: FieldKind): string | boolean | undefined {
  if (kind === "boolean") return parseSuccessValue(value);
  return writtenText(value);
}

const UNREADABLE: unique symbol = Symbol("unreadable");

/**
 * What the last read answering UNREADABLE threw: taken (and cleared) by the caller at once, so
 * that a readable result allocates nothing for it and nothing of a request outlives its read.
 */
let lastReadError: unknown;

/** A result's field, or UNREADABLE when reading it throws (a getter, a Proxy). */
function readField(result: object, key: string): unknown {
  try {
    return (result as Record<string, unknown>)[key];
  } catch (error) {
    lastReadError = error;
    return UNREADABLE;
  }
}

/** What the last UNREADABLE read threw, no longer held here. */
function takeReadError(): unknown {
  const error = lastReadError;
  lastReadError = undefined;
  return error;
}

/**
 * The names a result's fields are read under, in the order they are read (review truth TRUTH-1):
 * its own keys for a plain object (prototype `Object.prototype` or `null`, the usual result), read
 * once; for any other (a class whose fields are getters on its prototype), `names` (the verdicts
 * and the shape's known fields, read whether own or not), then its own keys not among them (its
 * unknown fields, for the warning). The one reader of the engine ({@link pickFields}) and of what
 * `withIdempotency` stores of a result (review second-truth SECOND-TRUTH-2).
 */
export function namesRead(result: object, names: readonly string[]): readonly string[] {
  const own = Object.keys(result);
  const prototype = Object.getPrototypeOf(result);
  if (prototype === Object.prototype || prototype === null) return own;
  const read = [...names];
  for (const key of own) if (!names.includes(key)) read.push(key);
  return read;
}

/**
 * Copies the known fields of a result into `target`. The merchant's function has run when its
 * result is read: the order is created, the card charged or debited. So what cannot be answered
 * is left out and said in `incomplete` (a warning), and the answer is sent: a 500 would make the
 * service deliver the call again, and run the function again. That covers an `expected` field
 * missing (absent or null; a blank one is written, see {@link writtenText}), a value of the wrong
 * type or that cannot be read (a getter that throws), and a result that is not an object. Only a
 * `required` field (a validation's verdict,
 * where nothing has happened yet and an answer without it says nothing) makes such a result
 * unusable (a 500), as does a repeated `Success`/`IsSuccess` that is not true: a refusal is a
 * `CallbackError`; the same for a boolean of `refusals` that is false (a redemption's `IsValid`),
 * and for a text of `errors` that is set (not blank: a payment's or a redemption's `ErrorCode`; or
 * set but unusable, an object or a getter that throws) when the result does not say `Success` (or
 * `IsSuccess`) true itself.
 * An unknown field (a typo such as `InternalOrderID`) is left out of the answer and listed in
 * `ignored`.
 */
function pickFields(
  result: unknown,
  fields: Readonly<Record<string, FieldKind>>,
  /** The verdicts and `fields`' names: what a result that is not a plain object is read for. */
  readNames: readonly string[],
  required: readonly string[],
  expected: readonly string[],
  target: Record<string, unknown>,
  refusals: readonly string[] = [],
  errors: readonly string[] = [],
  errorsRefuse = true,
): WrittenResult {
  // Made only when something is left out: the usual result allocates nothing here.
  let ignored: string[] | undefined;
  let unusable: string[] | undefined;
  // Whether the result says Success (or IsSuccess) true itself: a ported answer's ErrorCode 100.
  let saysSuccess = false;
  // One of `errors` set but unusable (an object, a boolean, NaN, a getter that throws): it is
  // left out of the answer, yet it says a refusal all the same.
  let unusableError: string | undefined;
  // What the first field that could not be read (and is said) threw: the warning's error.
  let readFailed = false;
  let readError: unknown;
  if (result !== undefined && result !== null) {
    if (typeof result !== "object" || Array.isArray(result)) {
      const got = `expected an object or nothing, got ${Array.isArray(result) ? "an array" : typeof result}`;
      if (required.length > 0) return { invalid: got };
      unusable = [got];
    } else {
      // The fields are read as their types read them, by property access (review truth TRUTH-1):
      // see namesRead.
      for (const key of namesRead(result, readNames)) {
        const value = readField(result, key);
        if (value === UNREADABLE) {
          const thrown = takeReadError();
          const unreadable = `field "${key}" could not be read`;
          if (required.includes(key)) return { invalid: unreadable, readError: thrown };
          // A verdict that cannot be read says nothing: as if absent (the library writes it).
          if (VERDICT_FIELDS.has(key)) continue;
          if (errors.includes(key)) unusableError ??= key;
          if (Object.hasOwn(fields, key)) {
            unusable = add(unusable, unreadable);
            if (!readFailed) {
              readFailed = true;
              readError = thrown;
            }
          } else ignored = add(ignored, key);
          continue;
        }
        if (VERDICT_FIELDS.has(key)) {
          if (value === undefined || value === null) continue;
          if (parseSuccessValue(value) === true) {
            saysSuccess = true;
            continue;
          }
          return { invalid: `"${key}" is not true: throw a CallbackError to refuse` };
        }
        const kind = Object.hasOwn(fields, key) ? fields[key] : undefined;
        if (kind === undefined) {
          ignored = add(ignored, key);
          continue;
        }
        if (value === undefined || value === null) continue;
        const text = written(value, kind);
        if (text === undefined) {
          const type = kind === "boolean" ? "a boolean" : "a string or a finite number";
          const wrong = `field "${key}" must be ${type}`;
          if (required.includes(key)) return { invalid: wrong };
          if (errors.includes(key)) unusableError ??= key;
          unusable = add(unusable, wrong);
          continue;
        }
        // A redemption's `IsValid: false`: the card was not debited, a refusal returned.
        if (text === false && refusals.includes(key)) {
          return { invalid: `"${key}" is false: throw a CallbackError to refuse` };
        }
        target[key] = text;
        if (isUnsafeInteger(value)) {
          unusable = add(
            unusable,
            `field "${key}" is an integer beyond 2^53, written ${text}, which may not be the number meant: return it as text`,
          );
        }
      }
    }
  }
  // An error code (or text) without the result's own Success: true: a refusal returned (or, where
  // the shape answers it all the same, `unconfirmed`).
  let unconfirmed = saysSuccess ? undefined : unusableError;
  if (!saysSuccess && unconfirmed === undefined) {
    for (const key of errors) {
      const text = target[key];
      if (typeof text === "string" && text.trim() !== "") {
        unconfirmed = key;
        break;
      }
    }
  }
  if (unconfirmed !== undefined && errorsRefuse) {
    return {
      invalid: `"${unconfirmed}" is set without "Success": true: throw a CallbackError to refuse`,
      ...(readFailed ? { readError } : {}),
    };
  }
  const missingRequired = absent(required, target);
  if (missingRequired !== undefined) return { invalid: `missing ${missingRequired.join(", ")}` };
  const missing = absent(expected, target);
  if (missing !== undefined) unusable = add(unusable, `missing ${missing.join(", ")}`);
  if (ignored === undefined && unusable === undefined && unconfirmed === undefined) {
    return { body: target };
  }
  return {
    body: target,
    ...(ignored === undefined ? {} : { ignored }),
    ...(unusable === undefined ? {} : { incomplete: unusable.join("; ") }),
    ...(unconfirmed === undefined ? {} : { unconfirmed }),
    ...(readFailed ? { readError } : {}),
  };
}

/** The keys `target` lacks, in order; undefined when it has them all. */
function absent(keys: readonly string[], target: Record<string, unknown>): string[] | undefined {
  let missing: string[] | undefined;
  for (const key of keys) if (target[key] === undefined) missing = add(missing, key);
  return missing;
}

/** `list` with `item` at its end: a new list for the first. */
function add(list: string[] | undefined, item: string): string[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}

/**
 * The shape of the callbacks answered with `Success` and a few fields: the success value
 * (`true`, or the text `"True"` for RMA), the failure value, and what failures carry.
 */
function successShape<TResult>(options: {
  readonly success: true | "True";
  readonly failure: false | "False";
  readonly fields: Readonly<Record<string, FieldKind>>;
  /** Fields without which the result is unusable (a 500): a validation's verdict. */
  readonly required?: readonly string[];
  /** Fields the answer should carry: without them it is sent all the same, with a warning. */
  readonly expected?: readonly string[];
  /** Booleans that, false, make the result a refusal returned instead of thrown (a 500). */
  readonly refusals?: readonly string[];
  /**
   * Texts that, set (not blank) in a result that does not say `Success: true` itself, make it a
   * refusal returned instead of thrown (a 500): a payment's or a redemption's `ErrorCode`.
   */
  readonly errors?: readonly string[];
  /** Whether `errors` refuse (a 500); otherwise the success is answered, `unconfirmed` said. */
  readonly errorsRefuse?: boolean;
  readonly errorCode: boolean;
  /** Extra fields of a failure: `IsValid: false` and `ErrorText` for gift cards. */
  readonly failureExtra?: (fields: FailureFields) => Record<string, unknown>;
}): ResponseShape<TResult> {
  const required = options.required ?? [];
  const expected = options.expected ?? [];
  const refusals = options.refusals ?? [];
  const errors = options.errors ?? [];
  const names = [...VERDICT_LIST, ...Object.keys(options.fields)];
  return {
    unconfirms: errors.length > 0 && options.errorsRefuse === false,
    names,
    success(result) {
      return pickFields(
        result,
        options.fields,
        names,
        required,
        expected,
        { Success: options.success },
        refusals,
        errors,
        options.errorsRefuse ?? true,
      );
    },
    failure(fields) {
      const code = options.errorCode ? { ErrorCode: fields.code } : {};
      return {
        Success: options.failure,
        ...code,
        Message: fields.message,
        Description: fields.description ?? "",
        ...options.failureExtra?.(fields),
      };
    },
  };
}

/** ResponseInfo `{ Success, InternalOrderId, OrderId, PaymentAmount, … }`: the order callbacks. */
export function responseInfoShape<TResult>(
  expected: readonly (keyof ResponseInfoResult)[] = [],
  /**
   * What an `ErrorCode` in a result without its own `Success: true` is: `"refuses"`, a refusal
   * returned (a 500): PerformOrderPayment, whose success tells the service the card was charged;
   * `"unconfirmed"`, answered all the same and said in `unconfirmed` (SendOrderToMerchant, which
   * charges an order's card, but whose order exists); otherwise nothing.
   */
  errorCode?: "refuses" | "unconfirmed",
): ResponseShape<TResult> {
  return successShape({
    success: true,
    failure: false,
    fields: RESPONSE_INFO_FIELDS,
    expected,
    errors: errorCode === undefined ? [] : ["ErrorCode"],
    errorsRefuse: errorCode === "refuses",
    errorCode: true,
  });
}

/** `{ Success: "True" | "False", Message, Description }`: SendRMAInfoToMerchant. */
export const rmaShape = successShape<MessageResult | NoResult>({
  success: "True",
  failure: "False",
  fields: MESSAGE_FIELDS,
  errorCode: false,
});

/** `{ Success, Message, Description }`: UpdateParcelDispatch. */
export const parcelDispatchShape = successShape<MessageResult | NoResult>({
  success: true,
  failure: false,
  fields: MESSAGE_FIELDS,
  errorCode: false,
});

/** `{ IsSuccess }`, and `{ IsSuccess: false, ErrorCode, ErrorMessage }`: RemoveRestrictedProducts. */
export const restrictedProductsShape: ResponseShape<NoResult> = {
  names: VERDICT_LIST,
  success(result) {
    return pickFields(result, {}, VERDICT_LIST, [], [], { IsSuccess: true });
  },
  failure(fields) {
    return { IsSuccess: false, ErrorCode: fields.code, ErrorMessage: fields.message };
  },
};

/**
 * The gift-card and voucher answer `{ Success, IsValid, Balance, CurrencyCode, IsOperatorGiftCard,
 * ErrorCode, Message, Description, ErrorText }`. A failure carries `ErrorText` (the message) and,
 * for a validation, `IsValid: false`, so that no failure can read as a valid card. A redemption or
 * refund (not a validation) whose result says `IsValid: false` (read like `Success`) did not take
 * place: answering it `Success: true` would tell the service the card was debited, so it is a
 * refusal returned instead of thrown, a 500 like `Success: false`. So is a redemption's or
 * refund's result that carries an `ErrorCode` or `ErrorText` without its own `Success: true`.
 */
export function giftCardShape<TResult>(options: {
  readonly required?: readonly (keyof GiftCardResult)[];
  readonly validation: boolean;
}): ResponseShape<TResult> {
  return successShape({
    success: true,
    failure: false,
    fields: GIFT_CARD_FIELDS,
    required: options.required ?? [],
    refusals: options.validation ? [] : ["IsValid"],
    errors: options.validation ? [] : ["ErrorCode", "ErrorText"],
    errorCode: true,
    failureExtra: (fields) =>
      options.validation
        ? { IsValid: false, ErrorText: fields.message }
        : { ErrorText: fields.message },
  });
}

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

/** An answer with a JSON body. A fresh headers object each time: servers write into it. */
export function respond(
  status: number,
  body: object,
  extraHeaders?: Readonly<Record<string, string>>,
  undelivered?: UndeliveredCarrier,
): CallbackResponse {
  const headers = { ...JSON_HEADERS, ...extraHeaders };
  if (undelivered === undefined) {
    return { status, headers, body: wellFormedJson(JSON.stringify(body)) };
  }
  // The reporter is inherited, not an own property: the answer is `{ status, headers, body }` to
  // every comparison and copy (a merchant's `toStrictEqual`), and it is still one object.
  const answer = Object.create(undelivered) as {
    -readonly [K in keyof CallbackResponse]: CallbackResponse[K];
  };
  answer.status = status;
  answer.headers = headers;
  answer.body = wellFormedJson(JSON.stringify(body));
  return answer;
}

/**
 * How an answer failed to reach the caller: its connection closed (`closed`: by the client, a
 * proxy or a server timeout, which the adapter cannot tell apart), something else answered the
 * request first (`preempted`: a timeout middleware in front), or the server refused to write it
 * (`unwritable`).
 */
export type Undelivered = "closed" | "preempted" | "unwritable";

/** Tells the endpoint's `onError` that this answer was not delivered (see `UNDELIVERED`). */
export type UndeliveredReporter = (how: Undelivered, response: CallbackResponse) => void;

/**
 * On an answer given after the merchant's function ran (a success, its refusal, its failure),
 * inherited from its prototype: the handler's reporter, one per handler and kind of answer
 * (nothing is made per request). An adapter that cannot deliver the answer calls it; the other
 * answers have none (nothing happened that the service will not ask again). A registered symbol,
 * as in core/body.ts: a handler of the CommonJS build served by the ES module build's adapter (or
 * the other way round) still reports.
 */
export const UNDELIVERED: unique symbol = Symbol.for("crossborder-callbacks/undelivered@1");

/** The prototype of the answers one reporter reports: it holds the reporter, and nothing else. */
export interface UndeliveredCarrier {
  readonly [UNDELIVERED]: UndeliveredReporter;
}

/** The prototype carrying a reporter, made once per handler and kind of answer. */
export function undeliveredCarrier(report: UndeliveredReporter): UndeliveredCarrier {
  return { [UNDELIVERED]: report };
}

/**
 * Reports an answer that could not be delivered, if it was given after the function ran. Never
 * throws: the adapters call it where nothing catches (a custom endpoint's answer may be anything,
 * `undefined`, a Proxy whose trap throws, a reporter of its own that throws).
 */
export function reportUndelivered(response: CallbackResponse, how: Undelivered): void {
  if (response === null || typeof response !== "object") return;
  try {
    const report = (response as { readonly [UNDELIVERED]?: unknown })[UNDELIVERED];
    if (typeof report === "function") (report as UndeliveredReporter)(how, response);
  } catch {
    // Not the engine's answer: nothing to report.
  }
}

/** The public texts of the library's own failures: generic, never built from the request. */
const GENERIC_MESSAGE: Readonly<Record<LibraryFailureKind, string>> = {
  malformed_body: "Malformed request body",
  invalid_payload: "Invalid request payload",
  unauthorized: "Unauthorized",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  request_timeout: "Request body not received in time",
  payload_too_large: "Request body too large",
  unsupported_media_type: "Compressed request bodies are not accepted",
  header_too_large: "Request header too large",
  client_closed: "Client closed the request",
  internal_error: "Internal error",
};

export type LibraryFailureKind = Exclude<FailureKind, "handler_failure" | WarningKind>;

/** A failure of the library's own, in the callback's shape, with the status of the one table. */
export function failureResponse(
  kind: LibraryFailureKind,
  shape: Pick<ResponseShape<unknown>, "failure"> = DEFAULT_FAILURE_SHAPE,
  description?: string,
  extraHeaders?: Readonly<Record<string, string>>,
  undelivered?: UndeliveredCarrier,
): CallbackResponse {
  const body = shape.failure({
    code: FAILURE_CODE[kind],
    message: GENERIC_MESSAGE[kind],
    description,
  });
  return respond(FAILURE_STATUS[kind], body, extraHeaders, undelivered);
}

/** Where no callback is known yet (a router's 404, an adapter's last resort): ResponseInfo. */
const DEFAULT_FAILURE_SHAPE = responseInfoShape();
