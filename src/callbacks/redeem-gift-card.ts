import type { CallbackDefinition, CallbackFunction } from "../core/engine.js";
import { type GiftCardTransactionResult, giftCardShape, type NoResult } from "../core/responses.js";
import type { RedeemGiftCardRequest } from "../schemas/index.js";
import { GIFT_CARD_FAMILY, giftCardHandlerFactory } from "./shopper-session.js";

/**
 * Take an amount from a gift card: POST, the gift-card request's fields (the amount's own names
 * are not documented and arrive as sent), answered `{ Success, Balance?, … }`.
 */
export const redeemGiftCard: CallbackDefinition<
  RedeemGiftCardRequest,
  GiftCardTransactionResult | NoResult
> & {
  readonly name: "RedeemGiftCard";
} = {
  name: "RedeemGiftCard",
  ...GIFT_CARD_FAMILY,
  response: giftCardShape<GiftCardTransactionResult | NoResult>({ validation: false }),
};

/**
 * The handler of RedeemGiftCard (POST): the service calls it to take an amount from a gift card
 * when the order is placed, with the card and the cart (amounts as sent). Your function redeems it
 * and returns `{ Balance?, CurrencyCode?, … }` or nothing. The library answers
 * `{ Success: true, … }`; `IsValid: false`, an `ErrorCode` or an `ErrorText` is a 500: throw
 * `CallbackError` to refuse.
 */
export const createRedeemGiftCardHandler = giftCardHandlerFactory<
  "RedeemGiftCard",
  RedeemGiftCardRequest,
  GiftCardTransactionResult | NoResult
>(redeemGiftCard);

/** The merchant's function for RedeemGiftCard, to type a standalone function. */
export type RedeemGiftCardFunction = CallbackFunction<
  RedeemGiftCardRequest,
  GiftCardTransactionResult | NoResult
>;
