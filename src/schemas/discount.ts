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
  // The spec's "mode of calculation" integer; wire name from the cart discount.
  CalculationMode: z.number().int(),
});

export type Discount = z.output<typeof discountSchema>;
