import { z } from "zod";
import { addressShape } from "./address.js";
import {
  type DocumentedFields,
  keyValuePairSchema,
  openObjectSchema,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  productAttributeSchema,
} from "./common.js";
import { productMetaDataSchema } from "./product.js";

// CheckoutCartInfo is written by the merchant: camelCase at the top, PascalCase nested.

/** VATRateType / LocalVATRateType of a cart product. */
export const vatRateTypeSchema = z.looseObject({
  VATRateTypeCode: optionalString,
  Name: optionalString,
  Rate: optionalNumber,
});

/** A product of `productsList`. */
export const cartProductSchema = z.looseObject({
  ProductCode: optionalString,
  ProductGroupCode: optionalString,
  CartItemId: optionalString,
  ParentCartItemId: optionalString,
  CartItemOptionId: optionalString,
  Name: optionalString,
  Description: optionalString,
  URL: optionalString,
  ImageURL: optionalString,
  ListPrice: optionalNumber,
  OriginalListPrice: optionalNumber,
  SalePrice: optionalNumber,
  OriginalSalePrice: optionalNumber,
  IsFixedPrice: optionalBoolean,
  OrderedQuantity: optionalNumber,
  VATRateType: vatRateTypeSchema.nullish(),
  LocalVATRateType: vatRateTypeSchema.nullish(),
  Attributes: z.array(productAttributeSchema).nullish(),
  ProductClassCode: optionalString,
  PriceCoefficientRate: optionalNumber,
  MetaData: productMetaDataSchema.nullish(),
});

/** A discount of `discountsList`. */
export const cartDiscountSchema = z.looseObject({
  OriginalDiscountValue: optionalNumber,
  DiscountValue: optionalNumber,
  VATRate: optionalNumber,
  LocalVATRate: optionalNumber,
  Name: optionalString,
  Description: optionalString,
  // The merchant writes this one, so the service's documented limit is checked here.
  CouponCode: z.string().max(100).nullish(),
  ProductCartItemId: optionalString,
  DiscountCode: optionalString,
  LoyaltyVoucherCode: optionalString,
  DiscountType: optionalInteger,
  CalculationMode: optionalInteger,
});

/** UserIdNumberType: the type of a personal id number. */
export const userIdNumberTypeSchema = z.looseObject({
  UserIdNumberTypeCode: optionalString,
  Name: optionalString,
});

// The user fields: the address of spec 2.4 (with both state spellings) plus user identity.
const userFieldsShape = {
  ...addressShape,
  UserId: optionalString,
  UserIdNumber: optionalString,
  UserIdNumberType: userIdNumberTypeSchema.nullish(),
  FirstNameInLocalCulture: optionalString,
  LastNameInLocalCulture: optionalString,
};

/** An `AddressDetails` entry of the user's address book. */
export const addressBookEntrySchema = z.looseObject({
  ...userFieldsShape,
  IsShipping: optionalBoolean,
  IsBilling: optionalBoolean,
  IsDefaultShipping: optionalBoolean,
  IsDefaultBilling: optionalBoolean,
});

/** `billingDetails`, `shippingDetails` and `userDetails` (the latter with its address book). */
export const userDetailsSchema = z.looseObject({
  ...userFieldsShape,
  AddressDetails: z.array(addressBookEntrySchema).nullish(),
});

/** The GetCheckoutCartInfo response (spec 2.10, names from wire-facts §2). */
export const checkoutCartInfoSchema = z.looseObject({
  productsList: z.array(cartProductSchema),
  clientIP: optionalString,
  clientIp: optionalString,
  countryCode: optionalString,
  cultureCode: optionalString,
  currencyCode: optionalString,
  originalCurrencyCode: optionalString,
  discountsList: z.array(cartDiscountSchema).nullish(),
  // Spelling shown in the operator's docs table.
  discountList: z.array(cartDiscountSchema).nullish(),
  doNotChargeVAT: optionalBoolean,
  isFreeShipping: optionalBoolean,
  freeShippingCouponCode: z.string().max(50).nullish(),
  hubId: optionalNumber,
  // Type undocumented: seen as a flag and as an integer mode.
  includeVAT: z.union([z.boolean(), z.number().int()]).nullish(),
  priceCoefficientRate: optionalNumber,
  loyaltyCode: optionalString,
  loyaltyPointsEarned: optionalNumber,
  loyaltyPointsSpent: optionalNumber,
  loyaltyPointsTotal: optionalNumber,
  merchantCartHash: optionalString,
  // Older spelling.
  CartHash: optionalString,
  cartId: optionalString,
  otVoucherCode: optionalString,
  otVoucherAmount: optionalNumber,
  otVoucherCurrencyCode: optionalString,
  // A string such as "{2,4,6,8}".
  paymentInstallments: optionalString,
  billingDetails: userDetailsSchema.nullish(),
  shippingDetails: userDetailsSchema.nullish(),
  userDetails: userDetailsSchema.nullish(),
  shippingOptionsList: z.array(openObjectSchema).nullish(),
  urlParameters: z.array(keyValuePairSchema).nullish(),
  vatRegistrationNumber: optionalString,
  webStoreCode: z.string().max(100).nullish(),
  webStoreInstanceCode: optionalString,
  allowMailsFromMerchant: optionalBoolean,
});

// The merchant writes the cart, so its types are the schema's input side.
/**
 * What the merchant writes: the documented fields only, so a misspelt field name (`currencyCod`)
 * is a compile error instead of a field the service ignores. At run time the schema still lets
 * unknown fields through; cast to add one on purpose.
 */
export type CheckoutCartInfo = DocumentedFields<z.input<typeof checkoutCartInfoSchema>>;
export type CartProduct = DocumentedFields<z.input<typeof cartProductSchema>>;
export type CartDiscount = DocumentedFields<z.input<typeof cartDiscountSchema>>;
export type UserDetails = DocumentedFields<z.input<typeof userDetailsSchema>>;
export type AddressBookEntry = DocumentedFields<z.input<typeof addressBookEntrySchema>>;
export type VATRateType = z.input<typeof vatRateTypeSchema>;
