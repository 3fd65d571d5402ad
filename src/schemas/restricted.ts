import { z } from "zod";
import { optionalString } from "./common.js";

/** RemoveRestrictedProducts body (spec 4.7). */
export const removeRestrictedProductsSchema = z.looseObject({
  MerchantGUID: optionalString,
  CartToken: optionalString,
  CartId: optionalString,
  UserId: optionalString,
  CountryCode: optionalString,
  CurrencyCode: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
  // The SKU codes removed from the shopper's cart.
  RemovedProductCodes: z.array(z.string()),
});

export type RemoveRestrictedProductsRequest = z.output<typeof removeRestrictedProductsSchema>;
