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

/** RemoveRestrictedProducts: products the service removed from a shopper's cart. */
export interface RemoveRestrictedProductsRequest {
  MerchantGUID?: string | null | undefined;
  /** The cart token from an earlier SendCart, kept in the shopper's session. */
  CartToken?: string | null | undefined;
  /** The merchant's own cart identifier: the cart to take the products out of. */
  CartId?: string | null | undefined;
  UserId?: string | null | undefined;
  CountryCode?: string | null | undefined;
  CurrencyCode?: string | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
  /** The SKU codes removed from the cart. */
  RemovedProductCodes: string[];
}
