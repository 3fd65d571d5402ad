import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import {
  PAYMENT_FIELDS,
  type PerformOrderPaymentResult,
  responseInfoShape,
} from "../core/responses.js";
import { type PerformOrderPaymentRequest, performOrderPaymentSchema } from "../schemas/index.js";
import { ORDER_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * Payment of an order: POST, OrderId, MerchantGUID and PaymentDetails, answered with ResponseInfo
 * carrying the amount and currency actually charged. The card values are real for the function
 * and print masked everywhere; the CVV is dropped when the function returns.
 */
export const performOrderPayment: CallbackDefinition<
  PerformOrderPaymentRequest,
  PerformOrderPaymentResult
> & { readonly name: "PerformOrderPayment" } = {
  name: "PerformOrderPayment",
  methods: ["POST"],
  source: { kind: "json" },
  schema: performOrderPaymentSchema,
  encodedFields: ORDER_ENCODED_FIELDS,
  response: responseInfoShape<PerformOrderPaymentResult>(PAYMENT_FIELDS, "refuses"),
};

/**
 * The handler of PerformOrderPayment (POST): the service calls it to have an order paid, with
 * `OrderId` and `PaymentDetails` (no card when `PaymentMethodCode` is `OT`). Your function charges
 * the card, once per order, and returns `{ PaymentAmount, PaymentCurrencyCode, … }` (both
 * required). The library answers ResponseInfo `{ Success: true, … }`; an `ErrorCode` in the result
 * is a 500: throw `CallbackError` to refuse.
 */
export const createPerformOrderPaymentHandler = handlerFactory(performOrderPayment);

/** The merchant's function for PerformOrderPayment, to type a standalone function. */
export type PerformOrderPaymentFunction = CallbackFunction<
  PerformOrderPaymentRequest,
  PerformOrderPaymentResult
>;
