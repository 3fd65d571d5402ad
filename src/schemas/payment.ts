import { z } from "zod";
import { CARD_NUMBER, isCardNumberKey, isPaymentDetailsKey } from "../core/card-keys.js";
import { fieldInAnyCase, isRecord } from "../core/objects.js";
import { optionalBoolean, optionalNumber, optionalString, optionalUnknown } from "./common.js";

/**
 * PaymentDetails (spec 2.7). Card number and CVV are strings or `null` — `null` when the service
 * itself collected the money (payment method `OT`, wire-facts §6) — never numbers: as JSON
 * numbers a 16-digit PAN or a CVV with a leading zero is already corrupted, so a number is
 * rejected, never coerced. The spec's other "required" fields are accepted as `null` too: the
 * payment is still usable without them, and refusing it would lose it.
 */
export const paymentDetailsSchema = z.looseObject({
  CardNumber: optionalString,
  CVVNumber: optionalString,
  // YYYY-MM-DD per spec; the format is not enforced ("2020-2-29" and "2999-12-31" are seen).
  ExpirationDate: optionalString,
  OwnerFirstName: optionalString,
  OwnerLastName: optionalString,
  OwnerName: optionalString,
  PaymentMethodCode: optionalString,
  PaymentMethodName: optionalString,
  PaymentMethodTypeCode: optionalString,
  CountryCode: optionalString,
  CountryName: optionalString,
  Address1: optionalString,
  Address2: optionalString,
  City: optionalString,
  StateCode: optionalString,
  StateOrProvince: optionalString,
  StateOrProvice: optionalString,
  Zip: optionalString,
  Phone1: optionalString,
  Phone2: optionalString,
  Fax: optionalString,
  Email: optionalString,
  CountryCode3: optionalString,
});

/**
 * The card to charge (spec 2.7). The card number and CVV are real inside your function and print
 * masked everywhere; the CVV is dropped when your function returns. Both are `null` when the
 * service collected the payment itself (`PaymentMethodCode` `"OT"`).
 */
export interface PaymentDetails {
  CardNumber?: string | null | undefined;
  CVVNumber?: string | null | undefined;
  /** YYYY-MM-DD per the spec; kept as sent ("2020-2-29" is seen). */
  ExpirationDate?: string | null | undefined;
  OwnerFirstName?: string | null | undefined;
  OwnerLastName?: string | null | undefined;
  OwnerName?: string | null | undefined;
  /** `"OT"`: the service collected the money; there is no card. */
  PaymentMethodCode?: string | null | undefined;
  PaymentMethodName?: string | null | undefined;
  PaymentMethodTypeCode?: string | null | undefined;
  CountryCode?: string | null | undefined;
  CountryName?: string | null | undefined;
  Address1?: string | null | undefined;
  Address2?: string | null | undefined;
  City?: string | null | undefined;
  StateCode?: string | null | undefined;
  StateOrProvince?: string | null | undefined;
  StateOrProvice?: string | null | undefined;
  Zip?: string | null | undefined;
  Phone1?: string | null | undefined;
  Phone2?: string | null | undefined;
  Fax?: string | null | undefined;
  Email?: string | null | undefined;
  CountryCode3?: string | null | undefined;
}

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

/** How (part of) an order was paid (spec 2.8). */
export interface OrderPaymentMethod {
  PaymentMethodId?: number | null | undefined;
  PaymentMethodGuid?: string | null | undefined;
  PaymentMethodName?: string | null | undefined;
  IsGiftCard?: boolean | null | undefined;
  /** Shape not documented. */
  GiftCardFields?: unknown;
  PaidAmountInCustomerCurrency?: number | null | undefined;
  PaidAmountInMerchantCurrency?: number | null | undefined;
  PaymentMethodTypeCode?: string | null | undefined;
  PaymentMethodTypeName?: string | null | undefined;
}

/**
 * Details {@link hasCardToCharge} found a card to charge in. Type-only (nothing is added to the
 * object): the mark lets a no leave the details' type as it was.
 */
export interface CardToCharge {
  /**
   * Type-only mark, never set: not part of the API. A string key, not a `unique symbol`: the ES
   * module and CommonJS declarations would each declare their own symbol, and details narrowed by
   * one would not fit a function typed by the other (a project mixing `.cts` and `.mts` files).
   */
  readonly __crossborderCardToCharge: true;
}

/**
 * Whether a payment carries a card for the merchant to charge: a card number (not blank), and not
 * the service's own collection (`PaymentMethodCode` "OT", however spaced or cased; its
 * `CardNumber` is then `null`). Both keys are read in any letter case (`cardNumber`,
 * `paymentMethodCode`), as the library protects card data. Takes any value: anything but such an
 * object is `false`.
 *
 * A yes narrows `details` to an object (`order.PaymentDetails` is then not `null`): a
 * {@link CardToCharge}. A no narrows nothing: an `OT` payment is still its details. The card number
 * keeps its type (`CardNumber?: string | null`), as it may be under another letter case.
 */
export function hasCardToCharge<T>(details: T): details is T & object & CardToCharge {
  if (!isRecord(details)) return false;
  const method = fieldInAnyCase(details, "PaymentMethodCode");
  if (typeof method === "string" && OT_METHOD.test(method)) return false;
  // The exact key as read before (an own key or not), then every other own key that is
  // `CardNumber` in any case: the keys the library masks as the card number. Nothing is allocated
  // (the engine reads this for every SendOrderToMerchant carrying a card, before the function).
  // The other keys are read hidden too (a protected card object's card fields are non-enumerable).
  if (isCardText(details.CardNumber)) return true;
  for (const key of Object.getOwnPropertyNames(details)) {
    if (key !== CARD_NUMBER && isCardNumberKey(key)) {
      if (isCardText(details[key])) return true;
    }
  }
  return false;
}

/** `OT`, in any case, however spaced (as `trim()` spaces: `\s` is the same set). */
const OT_METHOD = /^\s*ot\s*$/i;
const NOT_BLANK = /\S/;

function isCardText(value: unknown): boolean {
  return typeof value === "string" && NOT_BLANK.test(value);
}

/**
 * The payment details of an order or a payment (SendOrderToMerchant, PerformOrderPayment): the
 * value under `PaymentDetails`, the exact key first, else under that key in any letter case
 * (`paymentDetails`), as the library protects card data; `undefined` without one. With
 * `hasCardToCharge` it tells whether to charge: `hasCardToCharge(paymentDetailsOf(order))`.
 */
export function paymentDetailsOf(value: unknown): unknown {
  if (!isRecord(value)) return undefined;
  if (Object.hasOwn(value, "PaymentDetails")) return value.PaymentDetails;
  const key = Object.keys(value).find(isPaymentDetailsKey);
  return key === undefined ? undefined : value[key];
}
