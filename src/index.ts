// The package root: handler factories, the router, errors, helpers and the wire types.

export * from "./auth/index.js";
export {
  createGetCheckoutCartInfoHandler,
  type GetCheckoutCartInfoFunction,
  type GetCheckoutCartInfoOptions,
  type GetCheckoutCartInfoRequest,
} from "./callbacks/get-checkout-cart-info.js";
export {
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentFunction,
} from "./callbacks/perform-order-payment.js";
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
export {
  createUpdateOrderStatusHandler,
  type UpdateOrderStatusFunction,
} from "./callbacks/update-order-status.js";
export {
  createUpdateParcelDispatchHandler,
  type UpdateParcelDispatchFunction,
} from "./callbacks/update-parcel-dispatch.js";
export { maskCardNumber, redactCardNumbers } from "./core/card.js";
export {
  type CallbackContext,
  type CallbackFunction,
  type CallbackHandler,
  type CallbackRequestInfo,
  DEFAULT_BODY_TIMEOUT_MS,
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
} from "./core/errors.js";
export {
  type IdempotencyOptions,
  type IdempotencyStore,
  memoryIdempotencyStore,
  withIdempotency,
} from "./core/idempotency.js";
export type {
  MessageResult,
  NoResult,
  PerformOrderPaymentResult,
  ResponseInfo,
  ResponseInfoResult,
  SendOrderToMerchantResult,
} from "./core/responses.js";
export {
  type CallbackHandlers,
  type CallbackRouter,
  type CallbackRouterOptions,
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
export * from "./schemas/index.js";
