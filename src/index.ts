// The package root: handler factories, the router, errors, helpers and the wire types.

export * from "./auth/index.js";
export {
  createGetCheckoutCartInfoHandler,
  type GetCheckoutCartInfoOptions,
  type GetCheckoutCartInfoRequest,
} from "./callbacks/get-checkout-cart-info.js";
export { createPerformOrderPaymentHandler } from "./callbacks/perform-order-payment.js";
export { createRemoveRestrictedProductsHandler } from "./callbacks/remove-restricted-products.js";
export { createSendAdditionalRequiredDocumentsToMerchantHandler } from "./callbacks/send-additional-required-documents-to-merchant.js";
export { createSendOrderToMerchantHandler } from "./callbacks/send-order-to-merchant.js";
export { createSendRMAInfoToMerchantHandler } from "./callbacks/send-rma-info-to-merchant.js";
export { createUpdateOrderStatusHandler } from "./callbacks/update-order-status.js";
export { createUpdateParcelDispatchHandler } from "./callbacks/update-parcel-dispatch.js";
export { maskCardNumber, redactCardNumbers } from "./core/card.js";
export {
  type CallbackContext,
  type CallbackFunction,
  type CallbackHandler,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_DEPTH,
  type HandlerOptions,
  type RequestInfo,
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
export type { MessageResult, ResponseInfo, ResponseInfoResult } from "./core/responses.js";
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
