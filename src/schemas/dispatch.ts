import { z } from "zod";
import { optionalString, type UrlParameters, urlParametersSchema } from "./common.js";
import { type Parcel, parcelSchema } from "./parcel.js";

/** UpdateParcelDispatch body (spec 4.6, wire-facts §3). */
export const updateParcelDispatchSchema = z.looseObject({
  UrlParameters: urlParametersSchema,
  DispatchedParcel: parcelSchema,
  OrderId: z.string(),
  MerchantOrderId: optionalString,
  StatusCode: optionalString,
  MerchantGUID: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
});

export type DispatchedParcel = Parcel;
/** UpdateParcelDispatch: updated dispatch information of a parcel. */
export interface UpdateParcelDispatchRequest {
  /** The JSON text of `{Key, Value}` pairs, or the list itself: read it with `urlParameters()`. */
  UrlParameters?: UrlParameters;
  DispatchedParcel: DispatchedParcel;
  OrderId: string;
  MerchantOrderId?: string | null | undefined;
  StatusCode?: string | null | undefined;
  MerchantGUID?: string | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
}
