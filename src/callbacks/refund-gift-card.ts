import type { CallbackDefinition, CallbackFunction } from "../core/engine.js";
import { type GiftCardTransactionResult, giftCardShape, type NoResult } from "../core/responses.js";
import type { RefundGiftCardRequest } from "../schemas/index.js";
import { GIFT_CARD_FAMILY, giftCardHandlerFactory } from "./shopper-session.js";

/**
 * Give an amount back to a gift card: POST, the gift-card request's fields (the amount's own names
 * are not documented and arrive as sent), answered `{ Success, Balance?, … }`.
 */
export const refundGiftCard: CallbackDefinition<
  RefundGiftCardRequest,
  GiftCardTransactionResult | NoResult
> & {
  readonly name: "RefundGiftCard";
} = {
  name: "RefundGiftCard",
  ...GIFT_CARD_FAMILY,
  response: giftCardShape<GiftCardTransactionResult | NoResult>({ validation: false }),
};

/**
 * The handler of RefundGiftCard (POST): the service calls it to give an amount back to a gift
 * card, with the card and the cart (amounts as sent). Your function refunds it and returns
 * `{ Balance?, CurrencyCode?, … }` or nothing. The library answers `{ Success: true, … }`;
 * `IsValid: false`, an `ErrorCode` or an `ErrorText` is a 500: throw `CallbackError` to refuse.
 */
export const createRefundGiftCardHandler = giftCardHandlerFactory<
  "RefundGiftCard",
  RefundGiftCardRequest,
  GiftCardTransactionResult | NoResult
>(refundGiftCard);

/** The merchant's function for RefundGiftCard, to type a standalone function. */
export type RefundGiftCardFunction = CallbackFunction<
  RefundGiftCardRequest,
  GiftCardTransactionResult | NoResult
>;
