import type { CallbackDefinition, CallbackFunction } from "../core/engine.js";
import { giftCardShape, type ValidateGiftCardResult } from "../core/responses.js";
import type { ValidateVoucherRequest } from "../schemas/index.js";
import { GIFT_CARD_FAMILY, giftCardHandlerFactory } from "./shopper-session.js";

/**
 * May the shopper use this voucher: POST, the gift-card request's fields (the voucher's own are
 * not documented and arrive as sent), answered like ValidateGiftCard.
 */
export const validateVoucher: CallbackDefinition<ValidateVoucherRequest, ValidateGiftCardResult> & {
  readonly name: "ValidateVoucher";
} = {
  name: "ValidateVoucher",
  ...GIFT_CARD_FAMILY,
  response: giftCardShape<ValidateGiftCardResult>({ required: ["IsValid"], validation: true }),
};

/**
 * The handler of ValidateVoucher (POST): the service calls it when a shopper enters a voucher
 * code at checkout, with the voucher, the cart, `AuthToken` and `SessionId` (as ValidateGiftCard's request). Your function returns
 * `{ IsValid, … }` as ValidateGiftCard's (`IsValid` required). The library answers
 * `{ Success: true, IsValid, … }`; throw `CallbackError` to refuse.
 */
export const createValidateVoucherHandler = giftCardHandlerFactory<
  "ValidateVoucher",
  ValidateVoucherRequest,
  ValidateGiftCardResult
>(validateVoucher);

/** The merchant's function for ValidateVoucher, to type a standalone function. */
export type ValidateVoucherFunction = CallbackFunction<
  ValidateVoucherRequest,
  ValidateGiftCardResult
>;
