import { z } from "zod";
import { optionalString, urlParametersSchema } from "./common.js";
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
export type UpdateParcelDispatchRequest = z.output<typeof updateParcelDispatchSchema>;
