import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type NoResult, type ResponseInfoResult, responseInfoShape } from "../core/responses.js";
import { type UpdateOrderStatusRequest, updateOrderStatusSchema } from "../schemas/index.js";
import { ORDER_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * A status change of an order, including a cancellation from the service side: POST, the order
 * with OrderId and StatusCode, answered with ResponseInfo. There are no automatic retries: the
 * operator's support retries by hand. Compare statuses with `isOrderStatus` (casings vary).
 */
export const updateOrderStatus: CallbackDefinition<
  UpdateOrderStatusRequest,
  ResponseInfoResult | NoResult
> & { readonly name: "UpdateOrderStatus" } = {
  name: "UpdateOrderStatus",
  methods: ["POST"],
  source: { kind: "json" },
  schema: updateOrderStatusSchema,
  encodedFields: ORDER_ENCODED_FIELDS,
  // The order schema accepts PaymentDetails here too: masked, and the CVV dropped, like the others.
  response: responseInfoShape<ResponseInfoResult | NoResult>(),
};

/**
 * The handler of UpdateOrderStatus (POST): the service calls it when an order's status changes,
 * with the order's `OrderId` and `StatusCode`. Your function returns `{ InternalOrderId, … }` or
 * nothing. The library answers ResponseInfo `{ Success: true, … }`; throw `CallbackError` to
 * refuse.
 */
export const createUpdateOrderStatusHandler = handlerFactory(updateOrderStatus);

/** The merchant's function for UpdateOrderStatus, to type a standalone function. */
export type UpdateOrderStatusFunction = CallbackFunction<
  UpdateOrderStatusRequest,
  ResponseInfoResult | NoResult
>;
