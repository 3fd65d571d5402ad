import {
  type CallbackDefinition,
  type CallbackFunction,
  DEFAULT_DOCUMENT_MAX_BODY_BYTES,
  handlerFactory,
} from "../core/engine.js";
import { EACH } from "../core/exact-numbers.js";
import { type NoResult, type ResponseInfoResult, responseInfoShape } from "../core/responses.js";
import { type NotifyOrderRefundRequest, notifyOrderRefundSchema } from "../schemas/index.js";
import { REFUND_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * An order was refunded: POST, the order's ids and the refund (amounts as the exact text sent,
 * `"170.1000"`), answered with ResponseInfo.
 */
export const notifyOrderRefund: CallbackDefinition<
  NotifyOrderRefundRequest,
  ResponseInfoResult | NoResult
> & { readonly name: "NotifyOrderRefund" } = {
  name: "NotifyOrderRefund",
  methods: ["POST"],
  source: { kind: "json" },
  schema: notifyOrderRefundSchema,
  encodedFields: REFUND_ENCODED_FIELDS,
  response: responseInfoShape<ResponseInfoResult | NoResult>(),
  // RefundDocument carries the credit note as base64 DocumentData.
  defaultMaxBodyBytes: DEFAULT_DOCUMENT_MAX_BODY_BYTES,
  // A gift card's CardId beyond 2^53 arrives as its exact digits (text), never rounded.
  exactNumbers: [
    ["GiftCardsData", EACH, "CardId"],
    ["Refunds", EACH, "GiftCardsData", EACH, "CardId"],
  ],
};

/**
 * The handler of NotifyOrderRefund (POST): the service calls it when an order is refunded, with
 * `OrderId` and the refund (amounts as text, `"170.1000"`; documents allowed, 16 MiB by default).
 * Your function returns `{ InternalOrderId, … }` or nothing, as UpdateOrderStatus's. The library
 * answers ResponseInfo `{ Success: true, … }`; throw `CallbackError` to refuse.
 */
export const createNotifyOrderRefundHandler = handlerFactory(notifyOrderRefund);

/** The merchant's function for NotifyOrderRefund, to type a standalone function. */
export type NotifyOrderRefundFunction = CallbackFunction<
  NotifyOrderRefundRequest,
  ResponseInfoResult | NoResult
>;
