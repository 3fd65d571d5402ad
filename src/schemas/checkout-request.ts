import { z } from "zod";

// Here, beside the other schemas, so that the generated checkers (src/generated/checkers.ts) can
// import it without importing the callback, which imports them.

/** The parameters of a GetCheckoutCartInfo call (spec 4.1, wire-facts §6). */
export const getCheckoutCartInfoRequestSchema = z.looseObject({
  merchantCartToken: z.string().nullish(),
  countryCode: z.string().nullish(),
  currencyCode: z.string().nullish(),
  cartToken: z.string().nullish(),
  MerchantGUID: z.string().nullish(),
  IsStockValidation: z.boolean().optional(),
  isFixedPriceSupported: z.boolean().optional(),
});

/** The same schema, under the callback's name (`<callback>Schema`, as every callback's). */
export const getCheckoutCartInfoSchema = getCheckoutCartInfoRequestSchema;
