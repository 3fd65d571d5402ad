import { deepFreeze, isPlainObject } from "../core/objects.js";
import { CALLBACK_NAMES, type CallbackName } from "../core/types.js";
import {
  CAPTURED_BUILDERS,
  type CapturedPayloads,
  SAMPLE_BUILDERS,
  type SamplePayloads,
} from "./samples.js";

/**
 * A partial payload merged over a sample: objects merge key by key, arrays and other values
 * replace, `undefined` removes the key. Only an optional key takes `undefined` (under
 * `exactOptionalPropertyTypes`): the payload type returned says a required one is there (review
 * truth TRUTH-4). To build a malformed payload without one, cast the overrides (`as never`) or
 * pass a payload of your own to `sendCallback`, whose `payload` is `unknown`.
 */
export type PayloadOverrides<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? {
        [K in keyof T]?: {} extends Pick<T, K>
          ? PayloadOverrides<T[K]> | undefined
          : PayloadOverrides<Exclude<T[K], undefined>>;
      }
    : T;

/** Keys that could reach an object's prototype: never copied from overrides. */
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Merges `override` over `base` into a new object: plain objects recursively, anything else
 * replaces, `undefined` deletes. `__proto__`, `constructor` and `prototype` keys are skipped at
 * every level, so overrides parsed from untrusted JSON cannot pollute prototypes.
 */
export function mergeDeep(base: unknown, override: unknown): unknown {
  if (!isPlainObject(override)) return clone(override);
  const result: Record<string, unknown> = isPlainObject(base)
    ? (clone(base) as Record<string, unknown>)
    : {};
  for (const key of Object.keys(override)) {
    if (UNSAFE_KEYS.has(key)) continue;
    const value = override[key];
    if (value === undefined) {
      delete result[key];
    } else {
      result[key] = isPlainObject(value) ? mergeDeep(result[key], value) : clone(value);
    }
  }
  return result;
}

/** A deep copy of plain data (objects, arrays, primitives), dropping unsafe keys. */
function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (!UNSAFE_KEYS.has(key)) copy[key] = clone(value[key]);
  }
  return copy;
}

/** Whether `name` is one of the callbacks (exact spelling). */
export function isCallbackName(name: unknown): name is CallbackName {
  return typeof name === "string" && (CALLBACK_NAMES as readonly string[]).includes(name);
}

/**
 * A realistic payload of one callback, encoded exactly as the service sends it: for
 * GetCheckoutCartInfo the query parameters (`merchantCartToken`, `countryCode`, `currencyCode`),
 * for the others the JSON body. Fields the service form-URL-encodes are encoded
 * (`"Email": "jane.doe%40example.com"`); the operator's own Secondary* address is plain. The
 * order holds a `%` and a `+` in decoded values (`PrimaryShipping.Address2`, `PrimaryBilling.Email`)
 * so that a function decoding them again fails.
 *
 * Every call returns a fresh object. `overrides` deep-merge over the sample (objects key by key;
 * arrays replace; `undefined` removes a field); `__proto__`, `constructor` and `prototype` keys
 * are ignored.
 *
 * @example
 * const order = samplePayload("SendOrderToMerchant", {
 *   MerchantGUID: myGuid,
 *   PrimaryShipping: { City: encodeFormValue("São Paulo") },
 * });
 */
export function samplePayload<N extends CallbackName>(
  callbackName: N,
  overrides?: PayloadOverrides<SamplePayloads[N]>,
): SamplePayloads[N] {
  if (!isCallbackName(callbackName)) {
    throw new TypeError(
      `samplePayload: unknown callback "${String(callbackName)}" (one of ${CALLBACK_NAMES.join(", ")})`,
    );
  }
  const sample = SAMPLE_BUILDERS[callbackName]();
  if (overrides === undefined || overrides === null) return sample as SamplePayloads[N];
  if (!isPlainObject(overrides)) throw new TypeError("samplePayload: overrides must be an object");
  return mergeDeep(sample, overrides) as SamplePayloads[N];
}

/** The callbacks `capturedPayload` has a form of: those wire-facts §6 shows as captured. */
export type CapturedCallbackName = keyof typeof CAPTURED_BUILDERS;

/** The callbacks with a captured form, in the order `simulate all` sends them. */
export const CAPTURED_CALLBACKS: readonly CapturedCallbackName[] = /* @__PURE__ */ deepFreeze([
  "GetCheckoutCartInfo",
  "SendOrderToMerchant",
  "PerformOrderPayment",
  "UpdateOrderStatus",
]);

/** Whether `capturedPayload` has a form of this callback. */
export function hasCapturedPayload(name: CallbackName): name is CapturedCallbackName {
  return (CAPTURED_CALLBACKS as readonly string[]).includes(name);
}

/**
 * A payload as captured from the service rather than as documented (wire-facts §6): for
 * SendOrderToMerchant an order the service paid itself (`PaymentDetails: null`) with nulls, empty
 * strings, stray spaces (`" EUR"`), a CRLF in `Address2`, an all-null address and encoding that
 * does not follow `IsEndCustomerPrimary`, under its own order id (`GE927127002US`); for
 * PerformOrderPayment that order's payment collected by the service (`CardNumber: null`,
 * `CVVNumber: null`, `PaymentMethodCode: "OT"`); for UpdateOrderStatus a cancellation of that
 * order as the service writes it (`StatusCode: "CANCELLED"`, `MerchantOrderId: null`); for GetCheckoutCartInfo its GET form, the token
 * named `cartToken`, `countryCode: "GER"` and `IsStockValidation=1`, typed as that query's text
 * (`GetCheckoutCartInfoQuery`), not as the request your cart function receives. Your endpoint must accept
 * them as the service sends them. Sent as PHP writes JSON, with `\/` escapes:
 * `sendCallback(…, { payload, escapeSlashes: true })`.
 * `overrides` deep-merge as in `samplePayload`.
 */
export function capturedPayload<N extends CapturedCallbackName>(
  callbackName: N,
  overrides?: PayloadOverrides<CapturedPayloads[N]>,
): CapturedPayloads[N] {
  if (!isCallbackName(callbackName) || !hasCapturedPayload(callbackName)) {
    throw new TypeError(
      `capturedPayload: no captured form of "${String(callbackName)}" (one of ${CAPTURED_CALLBACKS.join(", ")})`,
    );
  }
  const captured = CAPTURED_BUILDERS[callbackName]();
  if (overrides === undefined || overrides === null) return captured as CapturedPayloads[N];
  if (!isPlainObject(overrides))
    throw new TypeError("capturedPayload: overrides must be an object");
  return mergeDeep(captured, overrides) as CapturedPayloads[N];
}
