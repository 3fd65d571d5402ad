import { z } from "zod";
import {
  type OpenObject,
  openObjectSchema,
  optionalBoolean,
  optionalNumber,
  optionalString,
  optionalUnknown,
} from "./common.js";

/** InternationalDetails of an order (spec 2.6): the shopper-side totals, shipping and tracking. */
export const internationalDetailsSchema = z.looseObject({
  CurrencyCode: optionalString,
  TotalPrice: optionalNumber,
  TransactionCurrencyCode: optionalString,
  TransactionTotalPrice: optionalNumber,
  TotalShippingPrice: optionalNumber,
  DiscountedShippingPrice: optionalNumber,
  TotalDutiesPrice: optionalNumber,
  TotalCCFPrice: optionalNumber,
  TotalVATAmount: optionalNumber,
  ConsignmentFee: optionalNumber,
  RemoteAreaSurcharge: optionalNumber,
  SameDayDispatchCost: optionalNumber,
  SizeOverchargeValue: optionalNumber,
  CashOnDeliveryFee: optionalNumber,
  ShippingVATRate: optionalNumber,
  DutiesGuaranteed: optionalBoolean,
  PaymentMethodCode: optionalString,
  PaymentMethodName: optionalString,
  PaymentTransactionReference: optionalString,
  ShippingMethodCode: optionalString,
  ShippingMethodName: optionalString,
  ShippingMethodTypeCode: optionalString,
  ShippingMethodTypeName: optionalString,
  ShippingMethodStatusCode: optionalString,
  ShippingMethodStatusName: optionalString,
  DeliveryDaysFrom: optionalNumber,
  DeliveryDaysTo: optionalNumber,
  DeliveryDateFrom: optionalString,
  DeliveryDateTo: optionalString,
  OrderTrackingNumber: optionalString,
  OrderTrackingUrl: optionalString,
  OrderWaybillNumber: optionalString,
  OrderWaybillUrl: optionalString,
  CardNumberLastFourDigits: optionalString,
  ExpirationDate: optionalString,
  // Shape not documented.
  ParcelsTracking: optionalUnknown,
  CustomerDTBreakdown: openObjectSchema.nullish(),
  MerchantDTBreakdown: openObjectSchema.nullish(),
  ShipmentLocation: optionalString,
  ShipmentStatusUpdateTime: optionalString,
});

/** The shopper-side totals, shipping and tracking of an order (spec 2.6). */
export interface InternationalDetails {
  /** The shopper's currency (stray spaces kept as sent: `" EUR"` is seen). */
  CurrencyCode?: string | null | undefined;
  TotalPrice?: number | null | undefined;
  TransactionCurrencyCode?: string | null | undefined;
  TransactionTotalPrice?: number | null | undefined;
  TotalShippingPrice?: number | null | undefined;
  DiscountedShippingPrice?: number | null | undefined;
  TotalDutiesPrice?: number | null | undefined;
  TotalCCFPrice?: number | null | undefined;
  TotalVATAmount?: number | null | undefined;
  ConsignmentFee?: number | null | undefined;
  RemoteAreaSurcharge?: number | null | undefined;
  SameDayDispatchCost?: number | null | undefined;
  SizeOverchargeValue?: number | null | undefined;
  CashOnDeliveryFee?: number | null | undefined;
  ShippingVATRate?: number | null | undefined;
  DutiesGuaranteed?: boolean | null | undefined;
  PaymentMethodCode?: string | null | undefined;
  PaymentMethodName?: string | null | undefined;
  PaymentTransactionReference?: string | null | undefined;
  ShippingMethodCode?: string | null | undefined;
  ShippingMethodName?: string | null | undefined;
  ShippingMethodTypeCode?: string | null | undefined;
  ShippingMethodTypeName?: string | null | undefined;
  ShippingMethodStatusCode?: string | null | undefined;
  ShippingMethodStatusName?: string | null | undefined;
  DeliveryDaysFrom?: number | null | undefined;
  DeliveryDaysTo?: number | null | undefined;
  DeliveryDateFrom?: string | null | undefined;
  DeliveryDateTo?: string | null | undefined;
  OrderTrackingNumber?: string | null | undefined;
  OrderTrackingUrl?: string | null | undefined;
  OrderWaybillNumber?: string | null | undefined;
  OrderWaybillUrl?: string | null | undefined;
  CardNumberLastFourDigits?: string | null | undefined;
  /** YYYY-MM-DD per the spec; kept as sent. */
  ExpirationDate?: string | null | undefined;
  /** Shape not documented. */
  ParcelsTracking?: unknown;
  CustomerDTBreakdown?: OpenObject | null | undefined;
  MerchantDTBreakdown?: OpenObject | null | undefined;
  ShipmentLocation?: string | null | undefined;
  ShipmentStatusUpdateTime?: string | null | undefined;
}
