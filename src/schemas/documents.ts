import { z } from "zod";
/** SendAdditionalRequiredDocumentsToMerchant: payload not specified, so any object is accepted. */
export const sendAdditionalRequiredDocumentsSchema = z.looseObject({});
/** The same schema, under the callback's name (`<callback>Schema`, as every callback's). */
export const sendAdditionalRequiredDocumentsToMerchantSchema =
  sendAdditionalRequiredDocumentsSchema;

/**
 * SendAdditionalRequiredDocumentsToMerchant: the specification does not show the payload, so
 * every field is `unknown` until you check it.
 */
export interface SendAdditionalRequiredDocumentsToMerchantRequest {
  [field: string]: unknown;
}
