/**
 * `crossborder-callbacks/service`: a typed client for the operations the service hosts (document
 * 000): billing summary, consolidated dispatch, shipping rates, parcel void and status, product
 * browsing data, geo-location and refunds, with the token of 5.2, retries by operation, typed
 * errors and redacted hooks. Runs on `fetch` alone: Node, Bun, Deno, Workers.
 */
export type {
  CallOptions,
  FetchLike,
  ServiceHooks,
  ServiceRequestEvent,
  ServiceResponseEvent,
  ServiceRetryEvent,
} from "./call.js";
export {
  type BillingSummaryInput,
  type BillingSummaryOptions,
  type BillingSummaryResult,
  createServiceClient,
  isBackAtDefault,
  type PricedBillingSummary,
  type ProductCountryChange,
  type RecentProductCountriesInput,
  type ServiceClient,
  type ServiceClientOptions,
  type UncalculatedBillingSummary,
  type VoidParcelResult,
  type VoidParcelWarning,
} from "./client.js";
export {
  type ClientErrorCode,
  DISPATCH_ERROR_CODES,
  type DispatchErrorCode,
  type ServiceErrorCode,
  type ServiceFailureKind,
  SUBSCRIPTION_ERROR_CODES,
  type SubscriptionErrorCode,
  VOID_PARCEL_CODES,
  type VoidParcelCode,
} from "./codes.js";
export {
  type AnyServiceError,
  isServiceError,
  ServiceAuthenticationError,
  ServiceConflictError,
  ServiceError,
  type ServiceIssue,
  ServiceNetworkError,
  ServiceNotFoundError,
  ServicePermissionError,
  ServiceRateLimitError,
  ServiceServerError,
  ServiceTimeoutError,
  ServiceValidationError,
} from "./errors.js";
export {
  MERCHANT_GUID_HEADER,
  MERCHANT_GUID_QUERY,
  type OperationName,
  type RetryPolicy,
  SERVICE_OPERATION_NAMES,
  type ServiceNames,
  type ServiceOperationName,
} from "./operations.js";
export type { RetryOptions } from "./retry.js";
export * from "./schemas.js";
export { type CachedToken, memoryTokenCache, type TokenCache } from "./token.js";
