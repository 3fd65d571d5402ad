/**
 * `crossborder-callbacks/testing`: everything a merchant needs to test their callbacks in their
 * own test suite (vitest, jest, node:test) — stand-in service keys, service tokens, realistic
 * payloads encoded as the service encodes them, a sender that calls an endpoint as the service
 * does, and a checker of the answers' shape.
 *
 * @example
 * const keys = await createTestKeys();
 * // …start your app with createAuth({ jwt: { environment: "test", keys: { test: keys.publicKey } } })
 * const result = await sendCallback(`${baseUrl}/crossborder`, "SendOrderToMerchant", {
 *   privateKey: keys.privateKey,
 * });
 * expect(result.problems).toEqual([]);
 */

export {
  type CheckResponseOptions,
  checkResponse,
  DEFAULT_SLOW_MS,
  inspectResponse,
  type ResponseInspection,
} from "./check.js";
export {
  type IdempotencyStoreCheck,
  type IdempotencyStoreConformanceOptions,
  idempotencyStoreConformance,
} from "./idempotency.js";
export { createTestKeys, type TestKeys } from "./keys.js";
export {
  CAPTURED_CALLBACKS,
  type CapturedCallbackName,
  capturedPayload,
  type PayloadOverrides,
  samplePayload,
} from "./payload.js";
export {
  CAPTURED_ORDER_ID,
  type CapturedPayloads,
  type GetCheckoutCartInfoQuery,
  SAMPLE_CART_TOKEN,
  SAMPLE_MERCHANT_GUID,
  SAMPLE_MERCHANT_ORDER_ID,
  SAMPLE_ORDER_ID,
  type SamplePayloads,
} from "./samples.js";
export {
  callbackUrl,
  SendCallbackError,
  type SendCallbackOptions,
  type SendCallbackResult,
  sendCallback,
} from "./send.js";
export {
  createServiceSimulator,
  type RecordedServiceRequest,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
  SIMULATED_COUNTRY_VAT,
  SIMULATED_ORDERS,
  SIMULATED_SUBSCRIPTIONS,
  SIMULATOR_MERCHANT_GUID,
  SIMULATOR_PASSWORD,
  SIMULATOR_USER_NAME,
  type SimulatedFailure,
  type SimulatedOperation,
} from "./service-simulator.js";
export {
  bodyDigest,
  type CryptoKeyLike,
  type JoseKeyLike,
  type KeyObjectLike,
  type SignServiceTokenOptions,
  signServiceToken,
} from "./token.js";
