import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type NoResult, type ResponseInfoResult, responseInfoShape } from "../core/responses.js";
import {
  type UpdateOrderShippingInfoRequest,
  updateOrderShippingInfoSchema,
} from "../schemas/index.js";
import { ORDER_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * New shipping information of an order (addresses, shipping method, tracking): POST, the order
 * with its `OrderId`, answered with ResponseInfo. Its encoded fields are the order's.
 */
export const updateOrderShippingInfo: CallbackDefinition<
  UpdateOrderShippingInfoRequest,
  ResponseInfoResult | NoResult
> & { readonly name: "UpdateOrderShippingInfo" } = {
  name: "UpdateOrderShippingInfo",
  methods: ["POST"],
  source: { kind: "json" },
  schema: updateOrderShippingInfoSchema,
  encodedFields: ORDER_ENCODED_FIELDS,
  response: responseInfoShape<ResponseInfoResult | NoResult>(),
};

/**
 * The handler of UpdateOrderShippingInfo (POST): the service calls it when an order's shipping
 * information changes, with the order and its `OrderId`. Your function returns
 * `{ InternalOrderId, … }` or nothing, as UpdateOrderStatus's. The library answers ResponseInfo
 * `{ Success: true, … }`; throw `CallbackError` to refuse.
 */
export const createUpdateOrderShippingInfoHandler = handlerFactory(updateOrderShippingInfo);

/** The merchant's function for UpdateOrderShippingInfo, to type a standalone function. */
export type UpdateOrderShippingInfoFunction = CallbackFunction<
  UpdateOrderShippingInfoRequest,
  ResponseInfoResult | NoResult
>;
