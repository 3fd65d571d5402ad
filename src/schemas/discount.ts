import { z } from "zod";
import { optionalCount, optionalNumber, optionalString, optionalUnknown } from "./common.js";

/** Order discount (spec 2.5). */
export const discountSchema = z.looseObject({
  Name: optionalString,
  Description: optionalString,
  // Required by the spec; optional here: the order is usable without a discount's amount, and
  // refusing it would lose the order.
  Price: optionalNumber,
  InternationalPrice: optionalNumber,
  DiscountType: optionalCount,
  // Required only for merchants in VAT countries; the service defaults it to 0.
  VATRate: optionalNumber,
  LocalVATRate: optionalNumber,
  // The spec's max 100 is the service's rule; inbound values are not rejected for length.
  CouponCode: optionalString,
  DiscountCode: optionalString,
  ProductCartItemId: optionalString,
  LoyaltyVoucherCode: optionalString,
  MetaData: optionalUnknown,
  // The spec's "mode of calculation" integer (required there) under the cart discount's wire name.
  // The order's own name for it is not shown: requiring a guessed name would lose every order
  // with a discount if the service spells it otherwise, so it is checked only when present.
  CalculationMode: optionalCount,
});

/** A discount of an order (spec 2.5): cart-level, product-level or shipping. */
export interface Discount {
  Name?: string | null | undefined;
  /** Free text, as sent (not decoded). */
  Description?: string | null | undefined;
  /** In the merchant's currency. */
  Price?: number | null | undefined;
  InternationalPrice?: number | null | undefined;
  DiscountType?: number | null | undefined;
  VATRate?: number | null | undefined;
  LocalVATRate?: number | null | undefined;
  CouponCode?: string | null | undefined;
  DiscountCode?: string | null | undefined;
  /** Set for a product-level discount, blank for a cart-level one. */
  ProductCartItemId?: string | null | undefined;
  LoyaltyVoucherCode?: string | null | undefined;
  MetaData?: unknown;
  CalculationMode?: number | null | undefined;
}
