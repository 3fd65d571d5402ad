import { z } from "zod";
import { type Address, addressShape } from "./address.js";
import {
  type KeyValuePair,
  keyValuePairSchema,
  type OpenObject,
  openObjectSchema,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  type ProductAttribute,
  productAttributeSchema,
} from "./common.js";
import { type ProductMetaData, productMetaDataSchema } from "./product.js";

// CheckoutCartInfo is written by the merchant: camelCase at the top, PascalCase nested.

/** VATRateType / LocalVATRateType of a cart product. */
export const vatRateTypeSchema = z.looseObject({
  VATRateTypeCode: optionalString,
  Name: optionalString,
  Rate: optionalNumber,
});

/**
 * A product attribute of the cart: `{AttributeKey, AttributeValue}` as documented, or
 * `{AttributeCode, AttributeTypeCode, Name}` as one integration writes it (wire-facts §6).
 */
export const cartProductAttributeSchema = z.looseObject({
  ...productAttributeSchema.shape,
  AttributeCode: optionalString,
  AttributeTypeCode: optionalString,
  Name: optionalString,
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
  Attributes: z.array(cartProductAttributeSchema).nullish(),
  ProductClassCode: optionalString,
  PriceCoefficientRate: optionalNumber,
  MetaData: productMetaDataSchema.nullish(),
  // Not in the documents; merchants send them (wire-facts §6).
  Weight: optionalNumber,
  Height: optionalNumber,
  Width: optionalNumber,
  Length: optionalNumber,
  ImageHeight: optionalNumber,
  ImageWidth: optionalNumber,
  IsVirtual: optionalBoolean,
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

// The merchant writes the cart, so its types are the schema's input side: the documented fields
// only, so that a misspelt field name (`currencyCod`) is a compile error instead of a field the
// service ignores. At run time the schema still lets unknown fields through (they are sent).

/** A VAT rate type of a cart product. */
export interface VATRateType {
  VATRateTypeCode?: string | null | undefined;
  Name?: string | null | undefined;
  Rate?: number | null | undefined;
}

/** A product attribute of the cart, in either of the two shapes merchants write. */
export interface CartProductAttribute extends ProductAttribute {
  AttributeCode?: string | null | undefined;
  AttributeTypeCode?: string | null | undefined;
  Name?: string | null | undefined;
}

/** A product of the cart (`productsList`). */
export interface CartProduct {
  ProductCode?: string | null | undefined;
  ProductGroupCode?: string | null | undefined;
  CartItemId?: string | null | undefined;
  ParentCartItemId?: string | null | undefined;
  CartItemOptionId?: string | null | undefined;
  Name?: string | null | undefined;
  Description?: string | null | undefined;
  URL?: string | null | undefined;
  ImageURL?: string | null | undefined;
  ListPrice?: number | null | undefined;
  OriginalListPrice?: number | null | undefined;
  SalePrice?: number | null | undefined;
  OriginalSalePrice?: number | null | undefined;
  IsFixedPrice?: boolean | null | undefined;
  OrderedQuantity?: number | null | undefined;
  VATRateType?: VATRateType | null | undefined;
  LocalVATRateType?: VATRateType | null | undefined;
  Attributes?: CartProductAttribute[] | null | undefined;
  ProductClassCode?: string | null | undefined;
  PriceCoefficientRate?: number | null | undefined;
  MetaData?: ProductMetaData | null | undefined;
  Weight?: number | null | undefined;
  Height?: number | null | undefined;
  Width?: number | null | undefined;
  Length?: number | null | undefined;
  ImageHeight?: number | null | undefined;
  ImageWidth?: number | null | undefined;
  IsVirtual?: boolean | null | undefined;
}

/** A discount of the cart (`discountsList`). */
export interface CartDiscount {
  OriginalDiscountValue?: number | null | undefined;
  DiscountValue?: number | null | undefined;
  VATRate?: number | null | undefined;
  LocalVATRate?: number | null | undefined;
  Name?: string | null | undefined;
  Description?: string | null | undefined;
  /** At most 100 characters. */
  CouponCode?: string | null | undefined;
  ProductCartItemId?: string | null | undefined;
  DiscountCode?: string | null | undefined;
  LoyaltyVoucherCode?: string | null | undefined;
  DiscountType?: number | null | undefined;
  CalculationMode?: number | null | undefined;
}

/** The type of a personal id number. */
export interface UserIdNumberType {
  UserIdNumberTypeCode?: string | null | undefined;
  Name?: string | null | undefined;
}

/** The fields of a user: an address plus identity (the cart side spells `StateOrProvice`). */
export interface UserFields extends Address {
  UserId?: string | null | undefined;
  UserIdNumber?: string | null | undefined;
  UserIdNumberType?: UserIdNumberType | null | undefined;
  FirstNameInLocalCulture?: string | null | undefined;
  LastNameInLocalCulture?: string | null | undefined;
}

/** An entry of the user's address book (`AddressDetails`). */
export interface AddressBookEntry extends UserFields {
  IsShipping?: boolean | null | undefined;
  IsBilling?: boolean | null | undefined;
  IsDefaultShipping?: boolean | null | undefined;
  IsDefaultBilling?: boolean | null | undefined;
}

/** `billingDetails`, `shippingDetails` and `userDetails` (the latter with its address book). */
export interface UserDetails extends UserFields {
  AddressDetails?: AddressBookEntry[] | null | undefined;
}

/** What GetCheckoutCartInfo answers: the cart, as the merchant writes it (spec 2.10). */
export interface CheckoutCartInfo {
  productsList: CartProduct[];
  clientIP?: string | null | undefined;
  clientIp?: string | null | undefined;
  countryCode?: string | null | undefined;
  cultureCode?: string | null | undefined;
  currencyCode?: string | null | undefined;
  originalCurrencyCode?: string | null | undefined;
  discountsList?: CartDiscount[] | null | undefined;
  /** The spelling of the operator's docs table. */
  discountList?: CartDiscount[] | null | undefined;
  doNotChargeVAT?: boolean | null | undefined;
  isFreeShipping?: boolean | null | undefined;
  /** At most 50 characters. */
  freeShippingCouponCode?: string | null | undefined;
  hubId?: number | null | undefined;
  includeVAT?: boolean | number | null | undefined;
  priceCoefficientRate?: number | null | undefined;
  loyaltyCode?: string | null | undefined;
  loyaltyPointsEarned?: number | null | undefined;
  loyaltyPointsSpent?: number | null | undefined;
  loyaltyPointsTotal?: number | null | undefined;
  merchantCartHash?: string | null | undefined;
  /** The older spelling of `merchantCartHash`. */
  CartHash?: string | null | undefined;
  cartId?: string | null | undefined;
  otVoucherCode?: string | null | undefined;
  otVoucherAmount?: number | null | undefined;
  otVoucherCurrencyCode?: string | null | undefined;
  /** A string such as `"{2,4,6,8}"`. */
  paymentInstallments?: string | null | undefined;
  billingDetails?: UserDetails | null | undefined;
  shippingDetails?: UserDetails | null | undefined;
  userDetails?: UserDetails | null | undefined;
  shippingOptionsList?: OpenObject[] | null | undefined;
  urlParameters?: KeyValuePair[] | null | undefined;
  vatRegistrationNumber?: string | null | undefined;
  /** At most 100 characters. */
  webStoreCode?: string | null | undefined;
  webStoreInstanceCode?: string | null | undefined;
  allowMailsFromMerchant?: boolean | null | undefined;
}
