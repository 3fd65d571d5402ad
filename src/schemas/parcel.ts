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

/** A product of a parcel: `Sku` (also seen `SKU`), cart item id, quantity. */
export interface ParcelProduct {
  Sku?: string | null | undefined;
  SKU?: string | null | undefined;
  CartItemId?: string | null | undefined;
  Quantity?: number | null | undefined;
}

/** How a parcel is tracked; the URL arrives encoded and is decoded. */
export interface ParcelTracking {
  ParcelTrackingNumber?: string | null | undefined;
  ParcelTrackingUrl?: string | null | undefined;
  ParcelCode?: string | null | undefined;
}

/** A parcel (spec 2.9) as UpdateParcelDispatch carries it. */
export interface Parcel {
  Code?: string | null | undefined;
  StatusName?: string | null | undefined;
  HubCode?: string | null | undefined;
  ParcelTracking?: ParcelTracking | null | undefined;
  Products?: ParcelProduct[] | null | undefined;
}
