import { type CallbackDefinition, handlerFactory } from "../core/engine.js";
import { type NoResult, type ResponseInfoResult, responseInfoShape } from "../core/responses.js";
import { type PerformOrderPaymentRequest, performOrderPaymentSchema } from "../schemas/index.js";
import { ORDER_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * Payment of an order: POST, OrderId, MerchantGUID and PaymentDetails, answered with ResponseInfo
 * carrying the amount and currency actually charged. The card values are real for the function
 * and print masked everywhere; the CVV is dropped when the function returns.
 */
export const performOrderPayment: CallbackDefinition<
  PerformOrderPaymentRequest,
  ResponseInfoResult | NoResult
> & { readonly name: "PerformOrderPayment" } = {
  name: "PerformOrderPayment",
  methods: ["POST"],
  source: { kind: "json" },
  schema: performOrderPaymentSchema,
  encodedFields: ORDER_ENCODED_FIELDS,
  response: responseInfoShape,
};

export const createPerformOrderPaymentHandler = handlerFactory(performOrderPayment);
