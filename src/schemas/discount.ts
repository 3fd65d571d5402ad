import { z } from "zod";
import { optionalInteger, optionalNumber, optionalString, optionalUnknown } from "./common.js";

/** Order discount (spec 2.5). */
export const discountSchema = z.looseObject({
  Name: optionalString,
  Description: optionalString,
  Price: z.number(),
  InternationalPrice: optionalNumber,
  DiscountType: optionalInteger,
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
  CalculationMode: optionalInteger,
});

export type Discount = z.output<typeof discountSchema>;
