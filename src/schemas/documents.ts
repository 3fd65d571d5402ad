import { z } from "zod";

/** SendAdditionalRequiredDocumentsToMerchant: payload not specified, so any object is accepted. */
export const sendAdditionalRequiredDocumentsSchema = z.looseObject({});

export type SendAdditionalRequiredDocumentsToMerchantRequest = z.output<
  typeof sendAdditionalRequiredDocumentsSchema
>;
