import { z } from "zod";
import { type Address, addressSchema } from "./address.js";
import {
  type OpenObject,
  openObjectSchema,
  optionalBoolean,
  optionalCount,
  optionalNumber,
  optionalString,
  optionalUnknown,
  type UrlParameters,
  urlParametersSchema,
} from "./common.js";
import { type Discount, discountSchema } from "./discount.js";
import { type InternationalDetails, internationalDetailsSchema } from "./international.js";
import {
  type OrderPaymentMethod,
  orderPaymentMethodSchema,
  type PaymentDetails,
  paymentDetailsSchema,
} from "./payment.js";
import { type Product, type ProductLine, productLineSchema, productSchema } from "./product.js";

/** Order.Customer: who the primary (end) customer is and whether to send a confirmation. */
export const customerSchema = z.looseObject({
  EmailAddress: optionalString,
  IsEndCustomerPrimary: optionalBoolean,
  SendConfirmation: optionalBoolean,
});

/** Who the shopper is, and whether the merchant sends the confirmation e-mail. */
export interface Customer {
  EmailAddress?: string | null | undefined;
  /** True when the Primary* addresses are the shopper's (the Secondary* the operator's). */
  IsEndCustomerPrimary?: boolean | null | undefined;
  SendConfirmation?: boolean | null | undefined;
}

/** One AdditionalRequiredDocuments entry. */
export const additionalRequiredDocumentSchema = z.looseObject({
  DocumentTypeCode: optionalString,
  DocumentTypeName: optionalString,
});

/** A document the order waits for before fulfilment. */
export interface AdditionalRequiredDocument {
  DocumentTypeCode?: string | null | undefined;
  DocumentTypeName?: string | null | undefined;
}

/** OriginalOrder of a replacement order; only the service order id is documented. */
export const originalOrderSchema = z.looseObject({
  OrderId: optionalString,
});

/** The order a replacement order replaces. */
export interface OriginalOrder {
  OrderId?: string | null | undefined;
}

/** A sub-order of a mixed order (PerformOrderPayment's `Subs`): its fields are not documented. */
export type SubOrder = OpenObject;

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
  // Lenient lines: SendOrderToMerchant alone requires SKU, Price and Quantity (below).
  Products: z.array(productLineSchema).nullish(),
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
  OrderCreationSource: optionalCount,
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
  CookieConsent: optionalCount,
  TaxCalculationRule: optionalString,
  // Decoded by integrations (wire-facts §6).
  VATRegistrationNumber: optionalString,
  // "Various" in the spec: typed as unknown rather than guessed.
  ImporterDetails: optionalUnknown,
  GiftCards: optionalUnknown,
  Markups: optionalUnknown,
  ReservationRequestId: optionalUnknown,
  // Mandatory for mixed orders in PerformOrderPayment (spec 4.4); the entries are not documented.
  Subs: z.array(openObjectSchema).nullish(),
});

/**
 * The fields of the order object (spec 2.1), every one optional: what the order callbacks share.
 * Each callback's request type makes the fields it needs required.
 */
export interface OrderBase {
  /** The service's order id. */
  OrderId?: string | null | undefined;
  MerchantGUID?: string | null | undefined;
  /** The merchant's order id, from an earlier SendOrderToMerchant answer. */
  MerchantOrderId?: string | null | undefined;
  CartId?: string | null | undefined;
  CartToken?: string | null | undefined;
  CartHash?: string | null | undefined;
  UserId?: string | null | undefined;
  CurrencyCode?: string | null | undefined;
  /** The merchant's status code; compare with `isOrderStatus` (casings vary). */
  StatusCode?: string | null | undefined;
  ClearCart?: boolean | null | undefined;
  /** Every field of a line may be missing; SendOrderToMerchant's lines are `Product`. */
  Products?: ProductLine[] | null | undefined;
  Customer?: Customer | null | undefined;
  PrimaryShipping?: Address | null | undefined;
  SecondaryShipping?: Address | null | undefined;
  PrimaryBilling?: Address | null | undefined;
  SecondaryBilling?: Address | null | undefined;
  ShippingMethodCode?: string | null | undefined;
  Discounts?: Discount[] | null | undefined;
  InternationalDetails?: InternationalDetails | null | undefined;
  /** When present, the merchant performs the payment. */
  PaymentDetails?: PaymentDetails | null | undefined;
  OrderPaymentMethods?: OrderPaymentMethod[] | null | undefined;
  AdditionalRequiredDocuments?: AdditionalRequiredDocument[] | null | undefined;
  PriceCoefficientRate?: number | null | undefined;
  RoundingRate?: number | null | undefined;
  EffectiveFXRate?: number | null | undefined;
  OrderCreationDate?: string | null | undefined;
  OrderCreationSource?: number | null | undefined;
  IsMoto?: boolean | null | undefined;
  ModifiedProduct?: string | null | undefined;
  /** The JSON text of `{Key, Value}` pairs, or the list itself: read it with `urlParameters()`. */
  UrlParameters?: UrlParameters;
  DiscountedShippingPrice?: number | null | undefined;
  DoNotChargeVAT?: boolean | null | undefined;
  AllowMailsFromMerchant?: boolean | null | undefined;
  AllowSMSFromMerchant?: boolean | null | undefined;
  AllowDirectCommunicationFromMerchant?: boolean | null | undefined;
  /** Free text of the shopper, as sent (not decoded). */
  CustomerComments?: string | null | undefined;
  IsFreeShipping?: boolean | null | undefined;
  FreeShippingCouponCode?: string | null | undefined;
  ShipToStoreCode?: string | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
  IsSplitOrder?: boolean | null | undefined;
  IsReplacementOrder?: boolean | null | undefined;
  OriginalOrder?: OriginalOrder | null | undefined;
  LoyaltyCode?: string | null | undefined;
  LoyaltyPointsEarned?: number | null | undefined;
  LoyaltyPointsSpent?: number | null | undefined;
  OTVoucherAmount?: number | null | undefined;
  OTVoucherCode?: string | null | undefined;
  OTVoucherCurrencyCode?: string | null | undefined;
  CultureCode?: string | null | undefined;
  InitialCheckoutCultureCode?: string | null | undefined;
  PreferredCultureCode?: string | null | undefined;
  HubId?: number | null | undefined;
  HubCode?: string | null | undefined;
  SameDayDispatch?: boolean | null | undefined;
  SameDayDispatchCost?: number | null | undefined;
  TotalDutiesAndTaxesPrice?: number | null | undefined;
  CCFPrice?: number | null | undefined;
  TotalDutiesPaidByCustomerPrice?: number | null | undefined;
  TotalValueForCustoms?: number | null | undefined;
  USSalesTax?: number | null | undefined;
  CustomerDTBreakdown?: OpenObject | null | undefined;
  MerchantDTBreakdown?: OpenObject | null | undefined;
  ShippingVATRate?: number | null | undefined;
  CookieConsent?: number | null | undefined;
  TaxCalculationRule?: string | null | undefined;
  VATRegistrationNumber?: string | null | undefined;
  ImporterDetails?: unknown;
  GiftCards?: unknown;
  Markups?: unknown;
  ReservationRequestId?: unknown;
  /** The sub-orders of a mixed order (PerformOrderPayment); their fields are not documented. */
  Subs?: SubOrder[] | null | undefined;
}

/**
 * SendOrderToMerchant: the order itself; OrderId and Products required, each line with a SKU,
 * Price and Quantity.
 */
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

/** UpdateOrderShippingInfo: an update of an order's shipping information; OrderId required. */
export const updateOrderShippingInfoSchema = orderBaseSchema.extend({
  OrderId: z.string(),
});

/** SendOrderToMerchant: a new order, or an update of one. */
export interface SendOrderToMerchantRequest extends OrderBase {
  OrderId: string;
  Products: Product[];
}

/** UpdateOrderStatus: a status change, a cancellation from the service side included. */
export interface UpdateOrderStatusRequest extends OrderBase {
  OrderId: string;
  StatusCode: string;
}

/** PerformOrderPayment: the payment of an order. */
export interface PerformOrderPaymentRequest extends OrderBase {
  OrderId: string;
  PaymentDetails: PaymentDetails;
}

/** UpdateOrderShippingInfo: new shipping information of an order (addresses, tracking…). */
export interface UpdateOrderShippingInfoRequest extends OrderBase {
  OrderId: string;
}

/** The order of SendOrderToMerchant (`SendOrderToMerchantRequest`). */
export type Order = SendOrderToMerchantRequest;
