import { z } from "zod";
import { optionalCount, optionalNumber, optionalString } from "./common.js";

/** One ReturnedProducts entry of an RMA (spec 4.5). */
export const returnedProductSchema = z.looseObject({
  SKU: optionalString,
  // Order payloads spell it this way; accepted here too.
  Sku: optionalString,
  Name: optionalString,
  CartItemId: optionalString,
  ReturnQuantity: optionalCount,
  ReturnReasonName: optionalString,
  MerchantReturnReasonCode: optionalString,
  MerchantReturnReasonName: optionalString,
});

/** SendRMAInfoToMerchant body (spec 4.5). TrackingURL arrives encoded. */
export const sendRMAInfoToMerchantSchema = z.looseObject({
  OrderId: z.string(),
  MerchantOrderId: optionalString,
  RMANumber: z.string(),
  ShipperName: optionalString,
  ReturnTrackingNumber: optionalString,
  TrackingURL: optionalString,
  CreatedBy: optionalString,
  ReturnedProducts: z.array(returnedProductSchema),
  MerchantGUID: optionalString,
  CurrencyCode: optionalString,
  ReturnShippingCost: optionalNumber,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
});

/** A returned product of an RMA. */
export interface ReturnedProduct {
  SKU?: string | null | undefined;
  Sku?: string | null | undefined;
  Name?: string | null | undefined;
  CartItemId?: string | null | undefined;
  ReturnQuantity?: number | null | undefined;
  ReturnReasonName?: string | null | undefined;
  MerchantReturnReasonCode?: string | null | undefined;
  MerchantReturnReasonName?: string | null | undefined;
}

/** SendRMAInfoToMerchant: a return with an RMA number. */
export interface SendRMAInfoToMerchantRequest {
  OrderId: string;
  MerchantOrderId?: string | null | undefined;
  RMANumber: string;
  ShipperName?: string | null | undefined;
  ReturnTrackingNumber?: string | null | undefined;
  /** Arrives encoded; decoded. */
  TrackingURL?: string | null | undefined;
  CreatedBy?: string | null | undefined;
  ReturnedProducts: ReturnedProduct[];
  MerchantGUID?: string | null | undefined;
  CurrencyCode?: string | null | undefined;
  ReturnShippingCost?: number | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
}
