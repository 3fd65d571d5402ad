/**
 * How each callback writes its answer. A shape turns the merchant's result into the success body,
 * and any failure (the library's own or a `CallbackError`) into the failure body.
 */

export interface FailureFields {
  readonly code: string;
  readonly message: string;
  readonly description: string | undefined;
}

export interface ResponseShape<TResult> {
  /** The success body, or a reason when the merchant's result is unusable. */
  success(result: TResult): { readonly body: object } | { readonly invalid: string };
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
  InternalOrderId?: string | number;
  /** The order id shown to the shopper. */
  OrderId?: string | number;
  /** Total amount actually charged; written as a string. */
  PaymentAmount?: string | number;
  /** 3-letter currency of that payment. */
  PaymentCurrencyCode?: string;
  /** The merchant's own status code. */
  StatusCode?: string;
  Message?: string;
  Description?: string;
}

/**
 * What a merchant's function returns when it has nothing to add: `undefined`, or nothing at all.
 * `void` keeps `async (order) => { await save(order); }` (a `Promise<void>`) a valid function.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a function without a return statement returns void
export type NoResult = undefined | void;

/** What SendRMAInfoToMerchant and UpdateParcelDispatch functions may return. */
export interface MessageResult {
  Message?: string;
  Description?: string;
}

const RESPONSE_INFO_FIELDS = [
  "InternalOrderId",
  "OrderId",
  "PaymentAmount",
  "PaymentCurrencyCode",
  "StatusCode",
  "Message",
  "Description",
] as const;

const MESSAGE_FIELDS = ["Message", "Description"] as const;

/** Copies the listed fields as strings; anything else in the result is an error, not ignored. */
function pickStrings(
  result: unknown,
  fields: readonly string[],
  target: Record<string, unknown>,
): string | undefined {
  if (result === undefined || result === null) return undefined;
  if (typeof result !== "object" || Array.isArray(result)) {
    return `expected an object or nothing, got ${Array.isArray(result) ? "an array" : typeof result}`;
  }
  for (const key of Object.keys(result)) {
    if (!fields.includes(key)) return `unexpected field "${key}" (allowed: ${fields.join(", ")})`;
    const value = (result as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (typeof value === "number" && Number.isFinite(value)) target[key] = String(value);
    else if (typeof value === "string") target[key] = value;
    else return `field "${key}" must be a string or a finite number`;
  }
  return undefined;
}

function messageFields(fields: FailureFields): { Message: string; Description: string } {
  return { Message: fields.message, Description: fields.description ?? "" };
}

/** `{ Success, InternalOrderId, OrderId, PaymentAmount, … }` — the order callbacks. */
export const responseInfoShape: ResponseShape<ResponseInfoResult | NoResult> = {
  success(result) {
    const body: Record<string, unknown> = { Success: true };
    const invalid = pickStrings(result, RESPONSE_INFO_FIELDS, body);
    return invalid ? { invalid } : { body };
  },
  failure(fields) {
    return { Success: false, ErrorCode: fields.code, ...messageFields(fields) };
  },
};

/** `{ Success: "True" | "False", Message, Description }` — SendRMAInfoToMerchant. */
export const rmaShape: ResponseShape<MessageResult | NoResult> = {
  success(result) {
    const body: Record<string, unknown> = { Success: "True" };
    const invalid = pickStrings(result, MESSAGE_FIELDS, body);
    return invalid ? { invalid } : { body };
  },
  failure(fields) {
    return { Success: "False", ...messageFields(fields) };
  },
};

/** `{ Success, Message, Description }` — UpdateParcelDispatch. */
export const parcelDispatchShape: ResponseShape<MessageResult | NoResult> = {
  success(result) {
    const body: Record<string, unknown> = { Success: true };
    const invalid = pickStrings(result, MESSAGE_FIELDS, body);
    return invalid ? { invalid } : { body };
  },
  failure(fields) {
    return { Success: false, ...messageFields(fields) };
  },
};

/** `{ IsSuccess }`, and `{ IsSuccess: false, ErrorCode, ErrorMessage }` — RemoveRestrictedProducts. */
export const restrictedProductsShape: ResponseShape<NoResult> = {
  success(result) {
    const invalid = pickStrings(result, [], {});
    return invalid ? { invalid } : { body: { IsSuccess: true } };
  },
  failure(fields) {
    return { IsSuccess: false, ErrorCode: fields.code, ErrorMessage: fields.message };
  },
};
