import type { ResponseShape } from "../core/responses.js";
import type { CallbackName } from "../core/types.js";
import { cartShape } from "./get-checkout-cart-info.js";
import { notifyOrderRefund } from "./notify-order-refund.js";
import { performOrderPayment } from "./perform-order-payment.js";
import { redeemGiftCard } from "./redeem-gift-card.js";
import { refundGiftCard } from "./refund-gift-card.js";
import { removeRestrictedProducts } from "./remove-restricted-products.js";
import { sendAdditionalRequiredDocumentsToMerchant } from "./send-additional-required-documents-to-merchant.js";
import { sendOrderToMerchant } from "./send-order-to-merchant.js";
import { sendRMAInfoToMerchant } from "./send-rma-info-to-merchant.js";
import { updateOrderShippingInfo } from "./update-order-shipping-info.js";
import { updateOrderStatus } from "./update-order-status.js";
import { updateParcelDispatch } from "./update-parcel-dispatch.js";
import { validateGiftCard } from "./validate-gift-card.js";
import { validateVoucher } from "./validate-voucher.js";

/**
 * How the engine writes each callback's success answer from the merchant's result: helpers
 * around the merchant's function (`withIdempotency`) read a result the way the engine will.
 */
export const RESPONSE_SHAPES: {
  readonly [K in CallbackName]: Pick<
    ResponseShape<never>,
    "success" | "asReturned" | "names" | "dataLevel"
  >;
} = {
  GetCheckoutCartInfo: cartShape,
  SendOrderToMerchant: sendOrderToMerchant.response,
  UpdateOrderStatus: updateOrderStatus.response,
  PerformOrderPayment: performOrderPayment.response,
  SendRMAInfoToMerchant: sendRMAInfoToMerchant.response,
  UpdateParcelDispatch: updateParcelDispatch.response,
  RemoveRestrictedProducts: removeRestrictedProducts.response,
  SendAdditionalRequiredDocumentsToMerchant: sendAdditionalRequiredDocumentsToMerchant.response,
  ValidateGiftCard: validateGiftCard.response,
  RedeemGiftCard: redeemGiftCard.response,
  RefundGiftCard: refundGiftCard.response,
  ValidateVoucher: validateVoucher.response,
  NotifyOrderRefund: notifyOrderRefund.response,
  UpdateOrderShippingInfo: updateOrderShippingInfo.response,
};
