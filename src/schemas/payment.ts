import { z } from "zod";
import { addressSchema } from "./address.js";
import { optionalBoolean, optionalNumber, optionalString, optionalUnknown } from "./common.js";

/**
 * PaymentDetails (spec 2.7). Card number and CVV are strings only: as JSON numbers a 16-digit PAN
 * or a CVV with a leading zero is already corrupted, so a number is rejected, never coerced.
 */
export const paymentDetailsSchema = addressSchema
  .pick({
    Address1: true,
    Address2: true,
    City: true,
    StateCode: true,
    StateOrProvince: true,
    StateOrProvice: true,
    Zip: true,
    Phone1: true,
    Phone2: true,
    Fax: true,
    Email: true,
    CountryCode3: true,
  })
  .extend({
    CardNumber: z.string(),
    CVVNumber: z.string(),
    // YYYY-MM-DD per spec; the format is not enforced (test payloads arrive masked).
    ExpirationDate: z.string(),
    OwnerFirstName: optionalString,
    OwnerLastName: optionalString,
    OwnerName: optionalString,
    PaymentMethodCode: z.string(),
    PaymentMethodName: z.string(),
    PaymentMethodTypeCode: z.string(),
    CountryCode: z.string(),
    CountryName: z.string(),
  });

/** One OrderPaymentMethods entry (spec 2.8). */
export const orderPaymentMethodSchema = z.looseObject({
  PaymentMethodId: optionalNumber,
  PaymentMethodGuid: optionalString,
  PaymentMethodName: optionalString,
  IsGiftCard: optionalBoolean,
  // Shape not documented.
  GiftCardFields: optionalUnknown,
  PaidAmountInCustomerCurrency: optionalNumber,
  PaidAmountInMerchantCurrency: optionalNumber,
  PaymentMethodTypeCode: optionalString,
  PaymentMethodTypeName: optionalString,
});

export type PaymentDetails = z.output<typeof paymentDetailsSchema>;
export type OrderPaymentMethod = z.output<typeof orderPaymentMethodSchema>;
