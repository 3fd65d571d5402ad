import { z } from "zod";
import { optionalInteger, optionalNumber, optionalString } from "./common.js";

/** One ReturnedProducts entry of an RMA (spec 4.5). */
export const returnedProductSchema = z.looseObject({
  SKU: optionalString,
  // Order payloads spell it this way; accepted here too.
  Sku: optionalString,
  Name: optionalString,
  CartItemId: optionalString,
  ReturnQuantity: optionalInteger,
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

export type ReturnedProduct = z.output<typeof returnedProductSchema>;
export type SendRMAInfoToMerchantRequest = z.output<typeof sendRMAInfoToMerchantSchema>;
