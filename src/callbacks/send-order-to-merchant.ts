import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { responseInfoShape, type SendOrderToMerchantResult } from "../core/responses.js";
import { type SendOrderToMerchantRequest, sendOrderToMerchantSchema } from "../schemas/index.js";
import { ORDER_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * A new order, or an update of one: POST, the order as body, answered with ResponseInfo.
 * Return the merchant's ids and, when PaymentDetails is present, the amount and currency actually
 * charged. The same order can arrive more than once (an update, a manual retry).
 */
export const sendOrderToMerchant: CallbackDefinition<
  SendOrderToMerchantRequest,
  SendOrderToMerchantResult
> & { readonly name: "SendOrderToMerchant" } = {
  name: "SendOrderToMerchant",
  methods: ["POST"],
  source: { kind: "json" },
  schema: sendOrderToMerchantSchema,
  encodedFields: ORDER_ENCODED_FIELDS,
  response: responseInfoShape<SendOrderToMerchantResult>(["InternalOrderId"], "unconfirmed"),
};

/**
 * The handler of SendOrderToMerchant (POST): the service calls it when a shopper has placed an
 * order, with the order as the payload. Your function records the order and returns
 * `{ InternalOrderId }` (your id of it; also `PaymentAmount` and `PaymentCurrencyCode` when the
 * order carries `PaymentDetails` and you charged it). The library answers ResponseInfo
 * `{ Success: true, … }`; throw `CallbackError` to refuse (`{ Success: false, ErrorCode, … }`).
 */
export const createSendOrderToMerchantHandler = handlerFactory(sendOrderToMerchant);

/** The merchant's function for SendOrderToMerchant, to type a standalone function. */
export type SendOrderToMerchantFunction = CallbackFunction<
  SendOrderToMerchantRequest,
  SendOrderToMerchantResult
>;
