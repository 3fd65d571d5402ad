import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type NoResult, restrictedProductsShape } from "../core/responses.js";
import {
  type RemoveRestrictedProductsRequest,
  removeRestrictedProductsSchema,
} from "../schemas/index.js";

/**
 * Restricted products were removed from a shopper's cart: POST, the cart and the removed SKUs,
 * answered with `{ IsSuccess }`. The merchant updates its own cart to match.
 */
export const removeRestrictedProducts: CallbackDefinition<
  RemoveRestrictedProductsRequest,
  NoResult
> & { readonly name: "RemoveRestrictedProducts" } = {
  name: "RemoveRestrictedProducts",
  methods: ["POST"],
  source: { kind: "json" },
  schema: removeRestrictedProductsSchema,
  encodedFields: [],
  response: restrictedProductsShape,
};

/**
 * The handler of RemoveRestrictedProducts (POST): the service calls it when it removed restricted
 * products from a cart, with the cart and `RemovedProductCodes`. Your function removes them from
 * your copy of the cart and returns nothing. The library answers `{ IsSuccess: true }`; throw
 * `CallbackError` to refuse.
 */
export const createRemoveRestrictedProductsHandler = handlerFactory(removeRestrictedProducts);

/** The merchant's function for RemoveRestrictedProducts, to type a standalone function. */
export type RemoveRestrictedProductsFunction = CallbackFunction<
  RemoveRestrictedProductsRequest,
  NoResult
>;
