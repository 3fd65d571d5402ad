import { FAILURE_CODE, FAILURE_STATUS, type FailureKind } from "./errors.js";
import type { CallbackResponse } from "./types.js";

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

/** SendOrderToMerchant: the merchant's own order id is what the service keeps. */
export type SendOrderToMerchantResult = ResponseInfoResult & { InternalOrderId: string | number };

/** PerformOrderPayment: the amount and currency actually charged. */
export type PerformOrderPaymentResult = ResponseInfoResult & {
  PaymentAmount: string | number;
  PaymentCurrencyCode: string;
};

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

/**
 * Copies the allowed fields as strings. An unknown field (a typo such as `InternalOrderID`) or a
 * missing required one is an error, not silently dropped: the service would lose the id.
 */
function pickStrings(
  result: unknown,
  allowed: readonly string[],
  required: readonly string[],
  target: Record<string, unknown>,
): string | undefined {
  if (result !== undefined && result !== null) {
    if (typeof result !== "object" || Array.isArray(result)) {
      return `expected an object or nothing, got ${Array.isArray(result) ? "an array" : typeof result}`;
    }
    for (const key of Object.keys(result)) {
      if (!allowed.includes(key))
        return `unexpected field "${key}" (allowed: ${allowed.join(", ")})`;
      const value = (result as Record<string, unknown>)[key];
      if (value === undefined || value === null) continue;
      if (typeof value === "number" && Number.isFinite(value)) target[key] = String(value);
      else if (typeof value === "string") target[key] = value;
      else return `field "${key}" must be a string or a finite number`;
    }
  }
  const missing = required.filter((key) => target[key] === undefined);
  return missing.length > 0 ? `missing ${missing.join(", ")}` : undefined;
}

/**
 * The shape of the callbacks answered with `Success` and a few text fields: the success value
 * (`true`, or the text `"True"` for RMA), the failure value, and whether failures carry `ErrorCode`.
 */
function successShape<TResult>(options: {
  readonly success: true | "True";
  readonly failure: false | "False";
  readonly fields: readonly string[];
  readonly required?: readonly string[];
  readonly errorCode: boolean;
}): ResponseShape<TResult> {
  const required = options.required ?? [];
  return {
    success(result) {
      const body: Record<string, unknown> = { Success: options.success };
      const invalid = pickStrings(result, options.fields, required, body);
      return invalid ? { invalid } : { body };
    },
    failure(fields) {
      const code = options.errorCode ? { ErrorCode: fields.code } : {};
      return {
        Success: options.failure,
        ...code,
        Message: fields.message,
        Description: fields.description ?? "",
      };
    },
  };
}

/** ResponseInfo `{ Success, InternalOrderId, OrderId, PaymentAmount, … }`: the order callbacks. */
export function responseInfoShape<TResult>(
  required: readonly (keyof ResponseInfoResult)[] = [],
): ResponseShape<TResult> {
  return successShape({
    success: true,
    failure: false,
    fields: RESPONSE_INFO_FIELDS,
    required,
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
  success(result) {
    const invalid = pickStrings(result, [], [], {});
    return invalid ? { invalid } : { body: { IsSuccess: true } };
  },
  failure(fields) {
    return { IsSuccess: false, ErrorCode: fields.code, ErrorMessage: fields.message };
  },
};

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

/** An answer with a JSON body. A fresh headers object each time: servers write into it. */
export function respond(
  status: number,
  body: object,
  extraHeaders?: Readonly<Record<string, string>>,
): CallbackResponse {
  return { status, headers: { ...JSON_HEADERS, ...extraHeaders }, body: JSON.stringify(body) };
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

export type LibraryFailureKind = Exclude<FailureKind, "handler_failure">;

/** A failure of the library's own, in the callback's shape, with the status of the one table. */
export function failureResponse(
  kind: LibraryFailureKind,
  shape: Pick<ResponseShape<unknown>, "failure"> = DEFAULT_FAILURE_SHAPE,
  description?: string,
  extraHeaders?: Readonly<Record<string, string>>,
): CallbackResponse {
  const body = shape.failure({
    code: FAILURE_CODE[kind],
    message: GENERIC_MESSAGE[kind],
    description,
  });
  return respond(FAILURE_STATUS[kind], body, extraHeaders);
}

/** Where no callback is known yet (a router's 404, an adapter's last resort): ResponseInfo. */
const DEFAULT_FAILURE_SHAPE = responseInfoShape();
