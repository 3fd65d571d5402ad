import { z } from "zod";
import { addressSchema } from "./address.js";
import {
  openObjectSchema,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  optionalUnknown,
  urlParametersSchema,
} from "./common.js";
import { discountSchema } from "./discount.js";
import { internationalDetailsSchema } from "./international.js";
import { orderPaymentMethodSchema, paymentDetailsSchema } from "./payment.js";
import { productSchema } from "./product.js";

/** Order.Customer: who the primary (end) customer is and whether to send a confirmation. */
export const customerSchema = z.looseObject({
  EmailAddress: optionalString,
  IsEndCustomerPrimary: optionalBoolean,
  SendConfirmation: optionalBoolean,
});

/** One AdditionalRequiredDocuments entry. */
export const additionalRequiredDocumentSchema = z.looseObject({
  DocumentTypeCode: optionalString,
  DocumentTypeName: optionalString,
});

/** OriginalOrder of a replacement order; only the service order id is documented. */
export const originalOrderSchema = z.looseObject({
  OrderId: optionalString,
});

/**
 * The order object (spec 2.1) with every field optional; each order callback tightens the
 * fields it requires with `.extend()`.
 */
export const orderBaseSchema = z.looseObject({
  OrderId: optionalString,
  MerchantGUID: optionalString,
  MerchantOrderId: optionalString,
  CartId: optionalString,
  CartToken: optionalString,
  CartHash: optionalString,
  UserId: optionalString,
  CurrencyCode: optionalString,
  StatusCode: optionalString,
  ClearCart: optionalBoolean,
  Products: z.array(productSchema).nullish(),
  Customer: customerSchema.nullish(),
  PrimaryShipping: addressSchema.nullish(),
  SecondaryShipping: addressSchema.nullish(),
  PrimaryBilling: addressSchema.nullish(),
  SecondaryBilling: addressSchema.nullish(),
  ShippingMethodCode: optionalString,
  Discounts: z.array(discountSchema).nullish(),
  InternationalDetails: internationalDetailsSchema.nullish(),
  PaymentDetails: paymentDetailsSchema.nullish(),
  OrderPaymentMethods: z.array(orderPaymentMethodSchema).nullish(),
  AdditionalRequiredDocuments: z.array(additionalRequiredDocumentSchema).nullish(),
  PriceCoefficientRate: optionalNumber,
  RoundingRate: optionalNumber,
  EffectiveFXRate: optionalNumber,
  // ISO 8601 per spec; not enforced, the service's own format varies.
  OrderCreationDate: optionalString,
  OrderCreationSource: optionalInteger,
  IsMoto: optionalBoolean,
  ModifiedProduct: optionalString,
  UrlParameters: urlParametersSchema,
  DiscountedShippingPrice: optionalNumber,
  DoNotChargeVAT: optionalBoolean,
  AllowMailsFromMerchant: optionalBoolean,
  AllowSMSFromMerchant: optionalBoolean,
  AllowDirectCommunicationFromMerchant: optionalBoolean,
  CustomerComments: optionalString,
  IsFreeShipping: optionalBoolean,
  FreeShippingCouponCode: optionalString,
  ShipToStoreCode: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
  IsSplitOrder: optionalBoolean,
  IsReplacementOrder: optionalBoolean,
  OriginalOrder: originalOrderSchema.nullish(),
  LoyaltyCode: optionalString,
  LoyaltyPointsEarned: optionalNumber,
  LoyaltyPointsSpent: optionalNumber,
  OTVoucherAmount: optionalNumber,
  OTVoucherCode: optionalString,
  OTVoucherCurrencyCode: optionalString,
  CultureCode: optionalString,
  InitialCheckoutCultureCode: optionalString,
  PreferredCultureCode: optionalString,
  HubId: optionalNumber,
  HubCode: optionalString,
  SameDayDispatch: optionalBoolean,
  SameDayDispatchCost: optionalNumber,
  TotalDutiesAndTaxesPrice: optionalNumber,
  CCFPrice: optionalNumber,
  TotalDutiesPaidByCustomerPrice: optionalNumber,
  TotalValueForCustoms: optionalNumber,
  USSalesTax: optionalNumber,
  CustomerDTBreakdown: openObjectSchema.nullish(),
  MerchantDTBreakdown: openObjectSchema.nullish(),
  ShippingVATRate: optionalNumber,
  CookieConsent: optionalInteger,
  TaxCalculationRule: optionalString,
  // "Various" in the spec: typed as unknown rather than guessed.
  ImporterDetails: optionalUnknown,
  GiftCards: optionalUnknown,
  Markups: optionalUnknown,
  ReservationRequestId: optionalUnknown,
  // Mandatory for mixed orders in PerformOrderPayment; shape not documented.
  Subs: optionalUnknown,
});

/** SendOrderToMerchant: the order itself; OrderId and Products required. */
export const sendOrderToMerchantSchema = orderBaseSchema.extend({
  OrderId: z.string(),
  Products: z.array(productSchema),
});

/** UpdateOrderStatus: the order with OrderId and StatusCode required. */
export const updateOrderStatusSchema = orderBaseSchema.extend({
  OrderId: z.string(),
  StatusCode: z.string(),
});

/** PerformOrderPayment: the order with OrderId and PaymentDetails required. */
export const performOrderPaymentSchema = orderBaseSchema.extend({
  OrderId: z.string(),
  PaymentDetails: paymentDetailsSchema,
});

export type Customer = z.output<typeof customerSchema>;
export type AdditionalRequiredDocument = z.output<typeof additionalRequiredDocumentSchema>;
export type Order = z.output<typeof sendOrderToMerchantSchema>;
export type SendOrderToMerchantRequest = Order;
export type UpdateOrderStatusRequest = z.output<typeof updateOrderStatusSchema>;
export type PerformOrderPaymentRequest = z.output<typeof performOrderPaymentSchema>;
