import type { CallbackDefinition, CallbackFunction } from "../core/engine.js";
import { giftCardShape, type ValidateGiftCardResult } from "../core/responses.js";
import type { ValidateGiftCardRequest } from "../schemas/index.js";
import { GIFT_CARD_FAMILY, giftCardHandlerFactory } from "./shopper-session.js";

/**
 * May the shopper pay with this gift card: POST, the card (`CardFields.CardId`), the cart and the
 * shopper's session, answered `{ Success, IsValid, Balance, CurrencyCode, … }` with `Balance` as
 * text. Check the session with `verifySession`.
 */
export const validateGiftCard: CallbackDefinition<
  ValidateGiftCardRequest,
  ValidateGiftCardResult
> & { readonly name: "ValidateGiftCard" } = {
  name: "ValidateGiftCard",
  ...GIFT_CARD_FAMILY,
  response: giftCardShape<ValidateGiftCardResult>({ required: ["IsValid"], validation: true }),
};

/**
 * The handler of ValidateGiftCard (POST): the service calls it when a shopper enters a gift card
 * at checkout, with `CardFields.CardId`, the cart, `AuthToken` and `SessionId`. Your function
 * returns `{ IsValid, Balance?, CurrencyCode?, … }` (`IsValid` required). The library answers
 * `{ Success: true, IsValid, Balance: "75.00", … }` (`Balance` as text); throw `CallbackError` to
 * refuse. Options: `verifySession` checks the shopper's session.
 */
export const createValidateGiftCardHandler = giftCardHandlerFactory<
  "ValidateGiftCard",
  ValidateGiftCardRequest,
  ValidateGiftCardResult
>(validateGiftCard);

/** The merchant's function for ValidateGiftCard, to type a standalone function. */
export type ValidateGiftCardFunction = CallbackFunction<
  ValidateGiftCardRequest,
  ValidateGiftCardResult
>;
