import { z } from "zod";
import { optionalNumber, optionalString } from "./common.js";

/** Merchant.ParcelProduct: `Sku` (also seen `SKU`), cart item id, quantity. */
export const parcelProductSchema = z.looseObject({
  Sku: optionalString,
  SKU: optionalString,
  CartItemId: optionalString,
  // Spec 2.9 says decimal, 4.6 says integer: the wider type accepts both.
  Quantity: optionalNumber,
});

/** ParcelTracking of a dispatched parcel; the URL arrives percent-encoded. */
export const parcelTrackingSchema = z.looseObject({
  ParcelTrackingNumber: optionalString,
  ParcelTrackingUrl: optionalString,
  ParcelCode: optionalString,
});

/** Merchant.Parcel (spec 2.9) as UpdateParcelDispatch carries it (4.6). */
export const parcelSchema = z.looseObject({
  Code: optionalString,
  StatusName: optionalString,
  HubCode: optionalString,
  ParcelTracking: parcelTrackingSchema.nullish(),
  Products: z.array(parcelProductSchema).nullish(),
});

export type ParcelProduct = z.output<typeof parcelProductSchema>;
export type ParcelTracking = z.output<typeof parcelTrackingSchema>;
export type Parcel = z.output<typeof parcelSchema>;
