import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type GiftCardResult, giftCardShape, type NoResult } from "../core/responses.js";
import { giftCardRequestSchema, type RedeemGiftCardRequest } from "../schemas/index.js";
import { GIFT_CARD_ENCODED_FIELDS } from "./encoded-fields.js";
import {
  checkShopperSession,
  type GiftCardHandlerOptions,
  SESSION_FIELDS,
} from "./shopper-session.js";

/**
 * Take an amount from a gift card: POST, the gift-card request's fields (the amount's own names
 * are not documented and arrive as sent), answered `{ Success, Balance?, … }`.
 */
export const redeemGiftCard: CallbackDefinition<
  RedeemGiftCardRequest,
  GiftCardResult | NoResult
> & {
  readonly name: "RedeemGiftCard";
} = {
  name: "RedeemGiftCard",
  methods: ["POST"],
  source: { kind: "json" },
  schema: giftCardRequestSchema,
  encodedFields: GIFT_CARD_ENCODED_FIELDS,
  response: giftCardShape<GiftCardResult | NoResult>({ validation: false }),
  secretFields: SESSION_FIELDS,
  authorize: checkShopperSession,
};

export const createRedeemGiftCardHandler = handlerFactory<
  "RedeemGiftCard",
  RedeemGiftCardRequest,
  GiftCardResult | NoResult,
  GiftCardHandlerOptions
>(redeemGiftCard);

/** The merchant's function for RedeemGiftCard, to type a standalone function. */
export type RedeemGiftCardFunction = CallbackFunction<
  RedeemGiftCardRequest,
  GiftCardResult | NoResult
>;
