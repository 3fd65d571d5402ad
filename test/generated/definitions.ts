// Every callback definition the library exports, by name (GetCheckoutCartInfo's is made inside its
// factory, with no encoded fields).
import { notifyOrderRefund } from "../../src/callbacks/notify-order-refund.js";
import { performOrderPayment } from "../../src/callbacks/perform-order-payment.js";
import { redeemGiftCard } from "../../src/callbacks/redeem-gift-card.js";
import { refundGiftCard } from "../../src/callbacks/refund-gift-card.js";
import { removeRestrictedProducts } from "../../src/callbacks/remove-restricted-products.js";
import { sendAdditionalRequiredDocumentsToMerchant } from "../../src/callbacks/send-additional-required-documents-to-merchant.js";
import { sendOrderToMerchant } from "../../src/callbacks/send-order-to-merchant.js";
import { sendRMAInfoToMerchant } from "../../src/callbacks/send-rma-info-to-merchant.js";
import { updateOrderShippingInfo } from "../../src/callbacks/update-order-shipping-info.js";
import { updateOrderStatus } from "../../src/callbacks/update-order-status.js";
import { updateParcelDispatch } from "../../src/callbacks/update-parcel-dispatch.js";
import { validateGiftCard } from "../../src/callbacks/validate-gift-card.js";
import { validateVoucher } from "../../src/callbacks/validate-voucher.js";
import type { CallbackName } from "../../src/core/types.js";

export interface DefinitionFields {
  readonly name: CallbackName;
  readonly encodedFields: readonly string[];
}

export const DEFINITIONS: {
  readonly [K in Exclude<CallbackName, "GetCheckoutCartInfo">]: DefinitionFields;
} = {
  SendOrderToMerchant: sendOrderToMerchant,
  UpdateOrderStatus: updateOrderStatus,
  PerformOrderPayment: performOrderPayment,
  SendRMAInfoToMerchant: sendRMAInfoToMerchant,
  UpdateParcelDispatch: updateParcelDispatch,
  RemoveRestrictedProducts: removeRestrictedProducts,
  SendAdditionalRequiredDocumentsToMerchant: sendAdditionalRequiredDocumentsToMerchant,
  ValidateGiftCard: validateGiftCard,
  RedeemGiftCard: redeemGiftCard,
  RefundGiftCard: refundGiftCard,
  ValidateVoucher: validateVoucher,
  NotifyOrderRefund: notifyOrderRefund,
  UpdateOrderShippingInfo: updateOrderShippingInfo,
};
