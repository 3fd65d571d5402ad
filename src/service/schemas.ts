/**
 * The wire shapes of the operations the service hosts (document 000, Parts 2 and 4), with the
 * document's names. Requests are checked against the documented rules before they are sent;
 * responses are read leniently (unknown fields kept, optional fields may be null), so that the
 * client is never stricter than the service.
 */
import { z } from "zod";
import { deepFreeze } from "../core/objects.js";
import { vatRateTypeSchema } from "../schemas/cart.js";
import {
  openObjectSchema,
  optionalBoolean,
  optionalCount,
  optionalNumber,
  optionalString,
} from "../schemas/common.js";
import { codeNameSchema, productSchema } from "../schemas/product.js";
import { parseSuccessValue } from "../schemas/response.js";

/** A success flag as the service sends it: a boolean, or the text true/false in any case. */
const successFlag = z.preprocess((value) => parseSuccessValue(value) ?? value, z.boolean());
const optionalFlag = z.preprocess((value) => parseSuccessValue(value) ?? value, optionalBoolean);
/** An amount the document types as text; numbers are accepted as well. */
const amountText = z.union([z.string(), z.number()]).nullish();
const currencyCode = z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code in capitals, e.g. EUR");
const threeLetters = z.string().regex(/^[A-Za-z]{3}$/, "3 letters");
const twoLetterCountry = z.string().regex(/^[A-Za-z]{2}$/, "a 2-letter ISO country code");
const nonEmpty = z.string().min(1);
const stringList = z.array(z.string());

// ---------------------------------------------------------------- 5.2 GetAuthenticationToken

export const authenticationTokenRequestSchema = z.object({
  userName: nonEmpty,
  password: z.string().min(8).max(50),
});

/**
 * 5.2's `TTLInMinutes` ("integer, default 15"), read as leniently as the rest of an answer: a
 * positive number, or one written as text (`"15"`, as some gateways send it). Anything else — 0 (a
 * .NET `int` left unset), a negative number, other text, `null`, missing — states no lifetime: the
 * default applies (or the JWT's `exp - iat`, see `usableUntil`), and the token, which is fine, is
 * used. Refusing the answer would fail every token operation, each spending a token request on it.
 */
const lifetimeMinutes = z.preprocess((value) => {
  const minutes = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof minutes === "number" && Number.isFinite(minutes) && minutes > 0
    ? minutes
    : undefined;
}, z.number().positive().optional());

export const authenticationTokenResponseSchema = z.looseObject({
  Success: optionalFlag,
  Reason: optionalString,
  Token: nonEmpty,
  TTLInMinutes: lifetimeMinutes,
});

// ---------------------------------------------------------------- 4.1 billing summary

export const billingProductSchema = z.looseObject({
  code: z.string(),
  quantity: z.number(),
  price: z.number(),
});

export const billingSummaryRequestSchema = z.looseObject({
  subscriptionId: z.string().min(1).max(100),
  /** Filled in from the client's `merchantGuid` when omitted. */
  merchantGuid: z.guid(),
  currencyCode,
  products: z.array(billingProductSchema).min(1),
  /** Entry fields: not shown in the document; sent as given. */
  discounts: z.array(openObjectSchema).optional(),
  shippingAmount: z.number().min(0).optional(),
});

export const shippingOptionSchema = z.looseObject({
  optionId: z.string(),
  name: z.string(),
  price: z.number(),
  currencyCode: z.string(),
});

export const priceLineSchema = z.looseObject({
  name: optionalString,
  price: optionalNumber,
  rate: optionalNumber,
});

export const lineItemSchema = z.looseObject({
  index: optionalString,
  code: optionalString,
  hsCode: optionalString,
  dutyLines: z.array(priceLineSchema).nullish(),
  taxLines: z.array(priceLineSchema).nullish(),
});

export const additionalFeeSchema = z.looseObject({ name: optionalString, price: optionalNumber });

export const dtResultStatusSchema = z.looseObject({
  isSuccessful: successFlag,
  error: z.looseObject({ code: z.number(), description: optionalString }).nullish(),
});

export const dtResultSchema = z.looseObject({
  deliveryId: z.string(),
  shippingServiceCode: optionalString,
  status: dtResultStatusSchema,
  lineItems: z.array(lineItemSchema),
  shipping: z.looseObject({ taxLines: z.array(priceLineSchema).nullish() }).nullish(),
  additionalFees: z.array(additionalFeeSchema),
  totals: z.looseObject({ taxes: z.number(), duties: z.number(), additionalFees: z.number() }),
});

export const fxRateSchema = z.looseObject({
  fxRate: optionalNumber,
  fxMarginRate: optionalNumber,
  /** An integer in 2.2; sent by the service, so not checked for being whole. */
  fxRateServiceProviderId: optionalCount,
  currencyFrom: optionalString,
  currencyTo: optionalString,
});

export const billingSummaryResponseSchema = z.looseObject({
  externalReference: z.string(),
  selectedShippingOption: shippingOptionSchema.nullish(),
  dtResults: z.array(dtResultSchema).min(1),
  fxRates: z.array(fxRateSchema).nullish(),
});

// ---------------------------------------------------------------- 4.2 DispatchConsolidatedShipment

export const dispatchConsolidatedShipmentRequestSchema = z
  .looseObject({
    OrderIds: stringList.optional(),
    MerchantOrderIds: stringList.optional(),
    HubCode: z.string().optional(),
    OuterBoxesAmount: z.number().int().min(0).optional(),
    // Named by B401, B402 and B404.
    ParcelCodes: stringList.optional(),
    TrackingNumbers: stringList.optional(),
  })
  .refine(
    (request) =>
      [
        request.OrderIds,
        request.MerchantOrderIds,
        request.ParcelCodes,
        request.TrackingNumbers,
      ].some((list) => list !== undefined && list.length > 0),
    {
      message:
        "at least one of OrderIds, MerchantOrderIds, ParcelCodes, TrackingNumbers must be given (B404)",
      path: ["OrderIds"],
    },
  );

export const orderDocumentSchema = z.looseObject({
  CreationDateTime: optionalString,
  DocumentData: optionalString,
  DocumentExtension: optionalString,
  DocumentReference: optionalString,
  DocumentTypeCode: optionalString,
  DocumentTypeName: optionalString,
  ErrorMessage: optionalString,
  ParcelCode: optionalString,
  ShippingServiceName: optionalString,
  TrackingNumber: optionalString,
  URL: optionalString,
});

export const dispatchParcelTrackingSchema = z.looseObject({
  ParcelCode: optionalString,
  ParcelTrackingNumber: optionalString,
  ParcelTrackingUrl: optionalString,
});

export const trackingDetailsSchema = z.looseObject({
  ShipperName: optionalString,
  TrackingNumber: optionalString,
  TrackingURL: optionalString,
});

export const deliveryAdviceInformationSchema = z.looseObject({
  CommercialInvoiceNumber: optionalString,
  CurrencyCode: optionalString,
  ParcelCode: optionalString,
  TotalValue: amountText,
});

export const dispatchConsolidatedShipmentResponseSchema = z.looseObject({
  IsSuccess: successFlag,
  ErrorText: optionalString,
  Documents: z.array(orderDocumentSchema).nullish(),
  ShipperManifests: z.array(orderDocumentSchema).nullish(),
  ParcelsTracking: z.array(dispatchParcelTrackingSchema).nullish(),
  TrackingDetails: trackingDetailsSchema.nullish(),
  DeliveryAdviceInformation: z.array(deliveryAdviceInformationSchema).nullish(),
});

// ---------------------------------------------------------------- 4.3 GetShippingDetailsExtended

/** 2.3: 1 Standard, 2 Express, … 19 TrackedPostToPickupLocation. */
export const SERVICE_LEVELS = /* @__PURE__ */ deepFreeze({
  1: "Standard",
  2: "Express",
  3: "PriorityPost",
  4: "Airmail",
  5: "VirtualGoods",
  6: "ExpressCourierWithoutSameDay",
  7: "UntrackedPost",
  8: "StoreCollection",
  9: "StandardPost",
  10: "StandardCourier",
  11: "ExpressShipping",
  12: "StandardShipping",
  13: "CollectionPoint",
  14: "MerchantOwnCarriage",
  15: "TrackedStandard",
  16: "ExpressPlus",
  17: "StandardExpress",
  18: "PremiumStandard",
  19: "TrackedPostToPickupLocation",
} as const);

export const shippingDetailsExtendedRequestSchema = z.looseObject({
  amount: z
    .number()
    .min(0)
    .refine((amount) => Math.abs(Math.round(amount * 100) - amount * 100) < 1e-6, {
      message: "up to two digits after the decimal point",
    }),
  currencyCode: threeLetters,
  cultureCode: z.string().optional(),
  destinationCountry: z
    .string()
    .regex(/^([A-Za-z]{2,3})?$/, "2 or 3 letters (ISO alpha-2 or alpha-3), or empty")
    .optional(),
  productCodes: stringList.nullish(),
  /** Wire name not shown in the document: sent as `names.getShippingDetailsExtended.serviceLevel`. */
  serviceLevel: z.number().int().min(1).max(19).optional(),
});

export const shippingRateSchema = z.looseObject({
  shippingMethodLocalizedName: optionalString,
  shippingMethodName: optionalString,
  rangeMinValue: optionalNumber,
  rangeMaxValue: optionalNumber,
  shippingCost: optionalNumber,
  shippingCostCurrency: optionalString,
  estimatedDeliveryDays: optionalString,
  specialOfferExpiryDate: optionalString,
});

export const shippingDestinationRatesSchema = z.looseObject({
  destinationCountry: z.string(),
  /** `active` or `noShippingMethodsAvailable`; other values are passed on. */
  status: z.string(),
  shippingRates: z.array(shippingRateSchema).nullish(),
});

export const shippingDetailsExtendedResponseSchema = z.array(shippingDestinationRatesSchema);

// ---------------------------------------------------------------- 4.4 VoidParcel

export const voidParcelRequestSchema = z
  .looseObject({
    OrderId: z.string().optional(),
    ParcelCode: nonEmpty,
    MerchantOrderId: z.string().optional(),
  })
  .refine((request) => Boolean(request.OrderId) || Boolean(request.MerchantOrderId), {
    message: "OrderId or MerchantOrderId is required",
    path: ["OrderId"],
  });

/** An entry of `Errors`: its fields are not shown in the document (see `names.voidParcel`). */
export const voidParcelErrorEntrySchema = z.union([z.string(), z.looseObject({})]);

export const voidParcelResponseSchema = z.looseObject({
  IsSuccess: successFlag,
  Errors: z.array(voidParcelErrorEntrySchema).nullish(),
});

// ---------------------------------------------------------------- 4.5 UpdateParcelStatus

export const updateParcelStatusRequestSchema = z.looseObject({
  /** Path parameter. */
  orderId: nonEmpty,
  /** Path parameter. */
  parcelCode: nonEmpty,
  merchantParcelStatusCode: nonEmpty,
});

export const updateParcelStatusResponseSchema = z.looseObject({
  Success: successFlag,
  Error: optionalString,
});

// ---------------------------------------------------------------- 2.3a browsing resources

export const productCountrySchema = z.looseObject({
  // Strings in 2.3a, but a product-level record (IsForbidden applies to every country) may name
  // no country, and nulls are everywhere in real answers (wire-facts §6): one such record must
  // not fail the page, or a product-country sync could never get past it.
  CountryCode: optionalString,
  ProductCode: optionalString,
  IsForbidden: optionalFlag,
  IsRestricted: optionalFlag,
  IsVerified: optionalFlag,
  ForbiddanceMessage: optionalString,
  RestrictionMessage: optionalString,
  TTL: optionalNumber,
  UploadedViaCatalog: optionalFlag,
  VATRateType: vatRateTypeSchema.nullish(),
});

export const vatCategoryCountrySchema = z.looseObject({
  CountryCode: optionalString,
  VATCategoryCode: optionalString,
  VATRateType: vatRateTypeSchema.nullish(),
});

/** An IP range bound: a number, or the exact decimal text of one beyond 2^53 (`BigInt(bound)`). */
const rangeBound = z.union([z.number(), z.string()]).nullish();

export const locationSchema = z.looseObject({
  City: codeNameSchema.nullish(),
  Country: z
    .looseObject({
      Code: optionalString,
      DefaultCurrencyCode: optionalString,
      DefaultVATRateType: vatRateTypeSchema.nullish(),
      IsOperatedByOperator: optionalFlag,
      IsStateMandatory: optionalFlag,
      Name: optionalString,
      SiteURL: optionalString,
      SupportsFixedPrices: optionalFlag,
      UseCountryVAT: optionalFlag,
    })
    .nullish(),
  // The range's bounds as integers (IPv4: 32 bits; IPv6: 128 bits, `Type: "IPV6"`). A bound
  // beyond 2^53, which JSON.parse would round, is its exact decimal text: use `BigInt(From)`.
  IPRange: z.looseObject({ From: rangeBound, To: rangeBound, Type: optionalString }).nullish(),
  Region: z
    .looseObject({ Code: optionalString, CountryCode: optionalString, Name: optionalString })
    .nullish(),
});

// ---------------------------------------------------------------- 4.6 SaveProductsList

export const saveProductsListRequestSchema = z.object({
  /** The body: Product objects of document 2. */
  products: z.array(productSchema).min(1),
  // Query parameters; their wire names are not shown (see `names.saveProductsList`).
  clientIP: z.string().min(1).optional(),
  countryCode: twoLetterCountry.optional(),
  cultureCode: z.string().min(1).optional(),
  includeVAT: z.number().int().optional(),
  inputDataCultureCode: z.string().min(1).optional(),
  originalCurrencyCode: threeLetters.optional(),
  priceCoefficientRate: z.number().optional(),
  roundingRuleId: z.number().int().optional(),
});

export const productCountryListSchema = z.looseObject({
  ProductCountry: z.array(productCountrySchema).nullish(),
});

// ---------------------------------------------------------------- 4.7 RecentProductCountryS

export const recentProductCountriesRequestSchema = z.object({
  /**
   * 0, or a `RequestID` the service answered: sent back as it came, whole or not, and negative
   * too (the answer's is not refused for it, so the next request must not be either).
   */
  requestId: z.number(),
});

export const recentProductCountriesResponseSchema = z.looseObject({
  ProductCountry: z.array(productCountrySchema).nullish(),
  /**
   * An integer in 4.7; sent by the service, so not checked for being whole. One beyond 2^53 is
   * refused: `JSON.parse` has already rounded it, and sending back the rounded id would resume
   * from another place.
   */
  RequestID: z.number().refine((id) => Math.abs(id) <= Number.MAX_SAFE_INTEGER, {
    message: "beyond 2^53: a JavaScript number cannot hold it exactly, so it cannot be sent back",
  }),
});

// ---------------------------------------------------------------- 4.7a LocationByIP

export const locationByIpRequestSchema = z.object({
  /** The shopper's IP address (IPv4 or IPv6). Wire name not shown: `names.locationByIp.ip`. */
  ip: z.union([z.ipv4(), z.ipv6()]),
});

// ---------------------------------------------------------------- 4.8 VATCategoryCountryS

export const vatCategoryCountriesRequestSchema = z.object({
  countryCode: twoLetterCountry,
  /** Omitted: every VATCategoryCountry of the country. Sent as a repeated query parameter. */
  vatCategoryCodes: z.array(nonEmpty).optional(),
});

export const vatCategoryCountriesResponseSchema = z.looseObject({
  VATCategoryCountry: z.array(vatCategoryCountrySchema).nullish(),
});

// ---------------------------------------------------------------- 4.9 refunds of an order

export const getOrderRefundsRequestSchema = z.object({ orderId: nonEmpty });

/**
 * A product of a refund GetOrderRefunds answers (4.9), amounts as text or number. Not the root's
 * `refundProductSchema` (NotifyOrderRefund's, amounts as the exact text sent).
 */
export const serviceRefundProductSchema = z.looseObject({
  CartItemId: optionalString,
  RefundQuantity: amountText,
  RefundAmount: amountText,
  OriginalRefundAmount: amountText,
  RefundAmountPercent: amountText,
  RefundReason: optionalString,
  RefundComments: optionalString,
  Sku: optionalString,
  ProductCode: optionalString,
  productGroupCode: optionalString,
  ProductCodeSecondary: optionalString,
  productGroupCodeSecondary: optionalString,
});

export const refundSchema = z.looseObject({
  RefundID: optionalString,
  RMANumber: optionalString,
  MerchantRMANumber: optionalString,
  FullRefund: optionalFlag,
  ProductsDutiesRefund: optionalFlag,
  ShippingRefund: optionalFlag,
  RefundAsGiftCard: z.unknown().optional(),
  TotalRefundAmount: amountText,
  OriginalTotalRefundAmount: amountText,
  ServiceGestureAmount: amountText,
  TotalMoneyRefundAmount: amountText,
  DutiesAmount: amountText,
  ShippingAmount: amountText,
  CustomerPrepaidRefundAmount: amountText,
  OriginalCustomerPrepaidRefundAmount: amountText,
  TotalGiftCardsRefundAmount: amountText,
  TotalGiftCardsRefundAmountinMerchantCurrency: optionalNumber,
  TotalLoyaltyPointsRefunded: optionalNumber,
  TotalLoyaltyPointsRefundAmount: optionalNumber,
  GiftCardsData: z.array(z.looseObject({ CardId: optionalNumber })).nullish(),
  ExternalReference: optionalString,
  InitiatedBy: optionalString,
  CurrencyCode: optionalString,
  OriginalCurrencyCode: optionalString,
  RefundReason: z
    .looseObject({ OrderRefundReasonCode: optionalString, Name: optionalString })
    .nullish(),
  RefundProducts: z.array(serviceRefundProductSchema).nullish(),
  RefundComponents: z
    .array(
      z.looseObject({
        Amount: amountText,
        OriginalAmount: amountText,
        IsChargedToMerchant: z.union([z.string(), z.boolean()]).nullish(),
        ComponentType: optionalString,
      }),
    )
    .nullish(),
  RefundComments: optionalString,
  RefundDocument: z
    .array(
      z.looseObject({
        DocumentData: optionalString,
        CreditNoteUrl: optionalString,
        DocumentTypeCode: optionalString,
        DocumentTypeName: optionalString,
        DocumentExtension: optionalString,
      }),
    )
    .nullish(),
});

/**
 * What is left to refund of an order, as GetOrderRefunds answers it (4.9). Not the root's
 * `refundableAmountSchema` (NotifyOrderRefund's).
 */
export const serviceRefundableAmountSchema = z.looseObject({
  CurrencyCode: optionalString,
  TotalCreditAmount: optionalNumber,
  RefundableShippingAmount: optionalNumber,
  RefundableDutiesAmount: optionalNumber,
  ProductRefundableAmount: z
    .array(
      z.looseObject({
        CartItemId: optionalString,
        Sku: optionalString,
        ProductCode: optionalString,
        productGroupCode: optionalString,
        ProductCodeSecondary: optionalString,
        productGroupCodeSecondary: optionalString,
        RefundableTotalAmount: optionalNumber,
        /** An integer in 2.4, but order quantities are decimals (document 001, 2.3). */
        RefundableQuantity: optionalCount,
      }),
    )
    .nullish(),
});

export const orderRefundDetailsSchema = z.looseObject({
  OrderId: optionalString,
  MerchantOrderId: optionalString,
  MerchantInternalOrderId: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
  Refunds: z.array(refundSchema).nullish(),
  RefundableAmount: serviceRefundableAmountSchema.nullish(),
});

// ---------------------------------------------------------------- 4.10 CreateOrderRefund

export const createOrderRefundRequestSchema = z.looseObject({
  OrderId: nonEmpty,
  /** The list's wire name is not shown: `names.createOrderRefund.RefundProducts`. */
  RefundProducts: z
    // No type in 4.10, a string in 2.4, and order quantities are decimals (document 001, 2.3):
    // a part of a unit sold by weight can be refunded.
    .array(z.looseObject({ CartItemId: nonEmpty, RefundQuantity: z.number().positive() }))
    .min(1),
});

/** The answer is not shown in the document: any object, every field kept. */
export const createOrderRefundResponseSchema = z.looseObject({
  Success: optionalFlag,
  IsSuccess: optionalFlag,
});

// ---------------------------------------------------------------- types

export type AuthenticationTokenRequest = z.input<typeof authenticationTokenRequestSchema>;
export type AuthenticationTokenResponse = z.output<typeof authenticationTokenResponseSchema>;
export type BillingProduct = z.output<typeof billingProductSchema>;
export type BillingSummaryRequest = z.input<typeof billingSummaryRequestSchema>;
export type BillingSummaryResponse = z.output<typeof billingSummaryResponseSchema>;
export type ShippingOption = z.output<typeof shippingOptionSchema>;
export type PriceLine = z.output<typeof priceLineSchema>;
export type LineItem = z.output<typeof lineItemSchema>;
export type AdditionalFee = z.output<typeof additionalFeeSchema>;
export type DtResult = z.output<typeof dtResultSchema>;
export type FxRate = z.output<typeof fxRateSchema>;
export type DispatchConsolidatedShipmentRequest = z.input<
  typeof dispatchConsolidatedShipmentRequestSchema
>;
export type DispatchConsolidatedShipmentResponse = z.output<
  typeof dispatchConsolidatedShipmentResponseSchema
>;
export type OrderDocument = z.output<typeof orderDocumentSchema>;
export type DispatchParcelTracking = z.output<typeof dispatchParcelTrackingSchema>;
export type TrackingDetails = z.output<typeof trackingDetailsSchema>;
export type DeliveryAdviceInformation = z.output<typeof deliveryAdviceInformationSchema>;
export type ServiceLevel = keyof typeof SERVICE_LEVELS;
export type ShippingDetailsExtendedRequest = z.input<typeof shippingDetailsExtendedRequestSchema>;
export type ShippingDetailsExtendedResponse = z.output<
  typeof shippingDetailsExtendedResponseSchema
>;
export type ShippingDestinationRates = z.output<typeof shippingDestinationRatesSchema>;
export type ShippingRate = z.output<typeof shippingRateSchema>;
export type VoidParcelRequest = z.input<typeof voidParcelRequestSchema>;
export type VoidParcelResponse = z.output<typeof voidParcelResponseSchema>;
export type UpdateParcelStatusRequest = z.input<typeof updateParcelStatusRequestSchema>;
export type UpdateParcelStatusResponse = z.output<typeof updateParcelStatusResponseSchema>;
export type ProductCountry = z.output<typeof productCountrySchema>;
export type VATCategoryCountry = z.output<typeof vatCategoryCountrySchema>;
export type Location = z.output<typeof locationSchema>;
export type SaveProductsListRequest = z.input<typeof saveProductsListRequestSchema>;
export type ProductCountryList = z.output<typeof productCountryListSchema>;
export type RecentProductCountriesRequest = z.input<typeof recentProductCountriesRequestSchema>;
export type RecentProductCountriesResponse = z.output<typeof recentProductCountriesResponseSchema>;
export type LocationByIpRequest = z.input<typeof locationByIpRequestSchema>;
export type VatCategoryCountriesRequest = z.input<typeof vatCategoryCountriesRequestSchema>;
export type VatCategoryCountriesResponse = z.output<typeof vatCategoryCountriesResponseSchema>;
export type GetOrderRefundsRequest = z.input<typeof getOrderRefundsRequestSchema>;
export type OrderRefundDetails = z.output<typeof orderRefundDetailsSchema>;
export type Refund = z.output<typeof refundSchema>;
export type ServiceRefundProduct = z.output<typeof serviceRefundProductSchema>;
export type ServiceRefundableAmount = z.output<typeof serviceRefundableAmountSchema>;
export type CreateOrderRefundRequest = z.input<typeof createOrderRefundRequestSchema>;
export type CreateOrderRefundResponse = z.output<typeof createOrderRefundResponseSchema>;
