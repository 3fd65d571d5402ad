import { z } from "zod";
import { optionalString } from "./common.js";

// The gift-card and voucher family (service document, Part 5.4): only the validation request is
// documented; RedeemGiftCard, RefundGiftCard and ValidateVoucher share its fields and keep every
// other field they carry. Nothing is required: a 400 would refuse a shopper's card over a field
// the documents never promised.

/** An id documented without a type: text or number. */
const optionalId = z.union([z.string(), z.number()]).nullish();

/** `CardFields`: the card the shopper entered. */
export const cardFieldsSchema = z.looseObject({
  CardId: optionalId,
});

/** The card the shopper entered (`CardFields`); other fields (a PIN) are kept as sent. */
export interface CardFields {
  /** The card's number or code. */
  CardId?: string | number | null | undefined;
}

/** The fields of a gift-card or voucher request (Part 5.4). */
export const giftCardRequestSchema = z.looseObject({
  MerchantGUID: optionalString,
  ShippingCountryCode: optionalString,
  CardFields: cardFieldsSchema.nullish(),
  MerchantCartToken: optionalString,
  CustomerId: optionalId,
  CustomerEmail: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
  CartToken: optionalString,
  // The merchant's own shopper session: check them with `verifySession`; never quoted in reports.
  AuthToken: optionalString,
  SessionId: optionalString,
});

/** ValidateGiftCard's request schema: {@link giftCardRequestSchema}, under the callback's name. */
export const validateGiftCardSchema = giftCardRequestSchema;
/** RedeemGiftCard's request schema: {@link giftCardRequestSchema}, under the callback's name. */
export const redeemGiftCardSchema = giftCardRequestSchema;
/** RefundGiftCard's request schema: {@link giftCardRequestSchema}, under the callback's name. */
export const refundGiftCardSchema = giftCardRequestSchema;
/** ValidateVoucher's request schema: {@link giftCardRequestSchema}, under the callback's name. */
export const validateVoucherSchema = giftCardRequestSchema;

/** What every gift-card and voucher request carries (Part 5.4); unknown fields are kept. */
export interface GiftCardRequest {
  MerchantGUID?: string | null | undefined;
  ShippingCountryCode?: string | null | undefined;
  CardFields?: CardFields | null | undefined;
  MerchantCartToken?: string | null | undefined;
  CustomerId?: string | number | null | undefined;
  CustomerEmail?: string | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
  CartToken?: string | null | undefined;
  /** The merchant's own session token of the shopper: check it (`verifySession`), never log it. */
  AuthToken?: string | null | undefined;
  /** The merchant's own session id of the shopper: check it (`verifySession`), never log it. */
  SessionId?: string | null | undefined;
}

/** ValidateGiftCard: may the shopper pay with this gift card, and with how much? */
export interface ValidateGiftCardRequest extends GiftCardRequest {}
/** RedeemGiftCard: take the amount from the gift card (undocumented fields are kept). */
export interface RedeemGiftCardRequest extends GiftCardRequest {}
/** RefundGiftCard: give the amount back to the gift card (undocumented fields are kept). */
export interface RefundGiftCardRequest extends GiftCardRequest {}
/** ValidateVoucher: may the shopper use this voucher (undocumented fields are kept)? */
export interface ValidateVoucherRequest extends GiftCardRequest {}
