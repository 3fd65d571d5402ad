// The package root: handler factories, the router, errors, helpers and the wire types.

export * from "./auth/index.js";
export {
  createGetCheckoutCartInfoHandler,
  type GetCheckoutCartInfoFunction,
  type GetCheckoutCartInfoOptions,
  type GetCheckoutCartInfoRequest,
} from "./callbacks/get-checkout-cart-info.js";
export {
  createNotifyOrderRefundHandler,
  type NotifyOrderRefundFunction,
} from "./callbacks/notify-order-refund.js";
export {
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentFunction,
} from "./callbacks/perform-order-payment.js";
export {
  createRedeemGiftCardHandler,
  type RedeemGiftCardFunction,
} from "./callbacks/redeem-gift-card.js";
export {
  createRefundGiftCardHandler,
  type RefundGiftCardFunction,
} from "./callbacks/refund-gift-card.js";
export {
  createRemoveRestrictedProductsHandler,
  type RemoveRestrictedProductsFunction,
} from "./callbacks/remove-restricted-products.js";
export {
  createSendAdditionalRequiredDocumentsToMerchantHandler,
  type SendAdditionalRequiredDocumentsToMerchantFunction,
} from "./callbacks/send-additional-required-documents-to-merchant.js";
export {
  createSendOrderToMerchantHandler,
  type SendOrderToMerchantFunction,
} from "./callbacks/send-order-to-merchant.js";
export {
  createSendRMAInfoToMerchantHandler,
  type SendRMAInfoToMerchantFunction,
} from "./callbacks/send-rma-info-to-merchant.js";
export type { GiftCardHandlerOptions, VerifySession } from "./callbacks/shopper-session.js";
export {
  createUpdateOrderShippingInfoHandler,
  type UpdateOrderShippingInfoFunction,
} from "./callbacks/update-order-shipping-info.js";
export {
  createUpdateOrderStatusHandler,
  type UpdateOrderStatusFunction,
} from "./callbacks/update-order-status.js";
export {
  createUpdateParcelDispatchHandler,
  type UpdateParcelDispatchFunction,
} from "./callbacks/update-parcel-dispatch.js";
export {
  createValidateGiftCardHandler,
  type ValidateGiftCardFunction,
} from "./callbacks/validate-gift-card.js";
export {
  createValidateVoucherHandler,
  type ValidateVoucherFunction,
} from "./callbacks/validate-voucher.js";
export { redactCardNumbers } from "./core/card.js";
export type {
  CallbackFactory,
  Checked,
  CheckedFunction,
  NoExtraFields,
} from "./core/checked.js";
export {
  type CallbackContext,
  type CallbackFunction,
  type CallbackHandler,
  type CallbackRequestInfo,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_DOCUMENT_MAX_BODY_BYTES,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_DEPTH,
  type HandlerOptions,
} from "./core/engine.js";
export {
  AuthenticationError,
  CallbackError,
  type CallbackErrorOptions,
  type CallbackFailure,
  FAILURE_STATUS,
  type FailureKind,
  type OnError,
  type WarningKind,
} from "./core/errors.js";
export type {
  GiftCardResult,
  GiftCardTransactionResult,
  MessageResult,
  NoResult,
  PerformOrderPaymentResult,
  ResponseInfo,
  ResponseInfoResult,
  SendOrderToMerchantResult,
  ValidateGiftCardResult,
} from "./core/responses.js";
export {
  type CallbackFunctions,
  type CallbackHandlers,
  type CallbackRouter,
  type CallbackRouterOptions,
  type CheckedHandlers,
  createCallbackRouter,
} from "./core/router.js";
export {
  type BodyInput,
  CALLBACK_NAMES,
  type CallbackEndpoint,
  type CallbackName,
  type CallbackRequest,
  type CallbackResponse,
  type HeadersInput,
} from "./core/types.js";
export { decodeFormValue, encodeFormValue } from "./decode/form.js";
export type { DecodePolicy, DecodingOptions, DecodingReport } from "./decode/policy.js";
export {
  contentDigest,
  defaultIdempotencyKey,
  type IdempotencyKeyFunction,
} from "./idempotency/keys.js";
export {
  createMemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from "./idempotency/memory.js";
export type {
  Awaitable,
  ForgettingIdempotencyStore,
  IdempotencyClaim,
  IdempotencyRecord,
  IdempotencyStore,
} from "./idempotency/store.js";
export {
  DELIVERY_IN_PROGRESS,
  type IdempotencyOptions,
  IdempotencyStoreError,
  withIdempotency,
} from "./idempotency/with-idempotency.js";
export * from "./schemas/index.js";
