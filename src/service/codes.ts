/**
 * The error codes of Part 7, with the document's texts and the failure kind each one is surfaced
 * as. One table per family; the error classes, the simulator and the README read these.
 */
import { deepFreeze } from "../core/objects.js";

/** The kinds of failure a call can end in; each has its own error class. */
export type ServiceFailureKind =
  | "network"
  | "timeout"
  | "authentication"
  | "permission"
  | "not-found"
  | "conflict"
  | "validation"
  | "rate-limit"
  | "server";

interface CodeInfo {
  readonly text: string;
  readonly kind: ServiceFailureKind;
}

/** Part 7.1: the subscription operation's codes, with their HTTP status. */
export const SUBSCRIPTION_ERROR_CODES = /* @__PURE__ */ deepFreeze({
  INVALID_ORDER_ID: { status: 400, kind: "validation", text: "malformed order id" },
  INVALID_SUBSCRIPTION_ID: { status: 400, kind: "validation", text: "malformed subscription id" },
  INVALID_PRODUCT_CODE: { status: 400, kind: "validation", text: "unknown product code" },
  UNAUTHORIZED: { status: 401, kind: "authentication", text: "invalid or missing credentials" },
  INSUFFICIENT_PERMISSIONS: { status: 403, kind: "permission", text: "user lacks permission" },
  ORDER_NOT_FOUND: { status: 404, kind: "not-found", text: "order id does not exist" },
  SUBSCRIPTION_NOT_FOUND: {
    status: 404,
    kind: "not-found",
    text: "subscription id does not exist",
  },
  SUBSCRIPTION_DETAILS_NOT_FOUND: {
    status: 404,
    kind: "not-found",
    text: "no subscription details for the subscriptionId",
  },
  PRODUCT_NOT_FOUND: { status: 404, kind: "not-found", text: "no product for the code" },
  EXTERNAL_REFERENCE_NOT_FOUND: {
    status: 404,
    kind: "not-found",
    text: "invalid externalReferenceId",
  },
  IDEMPOTENCY_KEY_CONFLICT: {
    status: 409,
    kind: "conflict",
    text: "Idempotency-Key already used for another operation",
  },
  NO_SHIPPING_OPTION_AVAILABLE: {
    status: 422,
    kind: "validation",
    text: "no option for the subscription destination",
  },
  PRODUCT_RESTRICTED: {
    status: 422,
    kind: "validation",
    text: "products cannot be shipped to the destination",
  },
  INVALID_ADDRESS: {
    status: 422,
    kind: "validation",
    text: "address failed validation on address update",
  },
  COUNTRY_CHANGE_NOT_ALLOWED: {
    status: 422,
    kind: "validation",
    text: "shipping country cannot be changed",
  },
  VALIDATION_FAILED: { status: 422, kind: "validation", text: "missing or invalid field" },
  INTERNAL_ERROR: { status: 500, kind: "server", text: "unexpected error" },
} as const satisfies Record<string, CodeInfo & { readonly status: number }>);

/** Part 7.2: DispatchConsolidatedShipment's codes (UpdateParcelStatus answers B001 too). */
export const DISPATCH_ERROR_CODES = /* @__PURE__ */ deepFreeze({
  B001: { kind: "not-found", text: "Order ID not found" },
  B002: { kind: "conflict", text: "Order cannot be dispatched" },
  B003: { kind: "conflict", text: "Order must be dispatched as part of a consolidated shipment" },
  B004: {
    kind: "conflict",
    text: "Order must NOT be dispatched as part of a consolidated shipment",
  },
  B100: { kind: "conflict", text: "There are no orders valid for dispatch" },
  B200: { kind: "validation", text: "Could not determine the destination hub" },
  B300: { kind: "validation", text: "Outer boxes cannot exceed parcels" },
  B400: { kind: "server", text: "Could not create the manifest" },
  B401: { kind: "not-found", text: "Parcel code(s) not found" },
  B402: { kind: "not-found", text: "Tracking number(s) not found" },
  B403: { kind: "permission", text: "Parcel-level dispatch is not enabled for this merchant" },
  B404: {
    kind: "validation",
    text: "At least one of ParcelCodes, TrackingNumbers, OrderIds, MerchantOrderIds must be provided",
  },
  B500: { kind: "server", text: "Could not create AWB" },
  B600: { kind: "server", text: "Configuration error, cannot determine source hub" },
  B700: { kind: "server", text: "Unknown failure" },
  B800: { kind: "validation", text: "Hub Code is required" },
} as const satisfies Record<string, CodeInfo>);

/** Part 7.3: VoidParcel's codes. C102 is a warning on a successful void, never thrown. */
export const VOID_PARCEL_CODES = /* @__PURE__ */ deepFreeze({
  C100: { kind: "conflict", text: "parcel cannot be voided because of its status" },
  C101: { kind: "conflict", text: "parcel cannot be voided because of its status" },
  C102: { kind: "server", text: "parcel voided but the carrier cancel failed" },
  C103: { kind: "server", text: "internal unknown failure" },
  C104: { kind: "not-found", text: "parcel code not found or already voided" },
} as const satisfies Record<string, CodeInfo>);

export type SubscriptionErrorCode = keyof typeof SUBSCRIPTION_ERROR_CODES;
export type DispatchErrorCode = keyof typeof DISPATCH_ERROR_CODES;
export type VoidParcelCode = keyof typeof VOID_PARCEL_CODES;

/**
 * Codes the client itself gives a failure that carries no documented code: no answer
 * (`NETWORK_ERROR`, `TIMEOUT`, `DEADLINE_EXCEEDED`), an answer cut off after its status line
 * (`INCOMPLETE_RESPONSE`, with the status; a timeout or a too-large body keep their codes and the
 * status), a request refused before sending
 * (`INVALID_REQUEST`), an answer that is not what the document describes (`INVALID_RESPONSE`),
 * a token the auth operation would not issue (`TOKEN_REFUSED`), a token needed but no credentials
 * given (`NO_CREDENTIALS`), a refusal inside an HTTP 200
 * without a code (`REFUSED`), and any other status (`HTTP_503`).
 */
export type ClientErrorCode =
  | "NETWORK_ERROR"
  | "INCOMPLETE_RESPONSE"
  | "TIMEOUT"
  | "DEADLINE_EXCEEDED"
  | "INVALID_REQUEST"
  | "INVALID_RESPONSE"
  | "TOKEN_REFUSED"
  | "NO_CREDENTIALS"
  | "REFUSED"
  | `HTTP_${number}`;

/**
 * Every code an error can carry. The refund operation (4.9) sends codes the document does not
 * list; they come through as text (`string & {}` keeps the literals in editor completion).
 */
export type ServiceErrorCode =
  | SubscriptionErrorCode
  | DispatchErrorCode
  | VoidParcelCode
  | ClientErrorCode
  | (string & {});

/** A membership test for one of the code tables. */
function codeIn<Table extends object>(table: Table) {
  return (code: unknown): code is keyof Table & string =>
    typeof code === "string" && Object.hasOwn(table, code);
}

export const isSubscriptionErrorCode = codeIn(SUBSCRIPTION_ERROR_CODES);
export const isDispatchErrorCode = codeIn(DISPATCH_ERROR_CODES);
export const isVoidParcelCode = codeIn(VOID_PARCEL_CODES);

/** What the document says about a code of Part 7: its text and kind; undefined for other codes. */
export function documentedCode(code: unknown): CodeInfo | undefined {
  if (isSubscriptionErrorCode(code)) return SUBSCRIPTION_ERROR_CODES[code];
  if (isDispatchErrorCode(code)) return DISPATCH_ERROR_CODES[code];
  if (isVoidParcelCode(code)) return VOID_PARCEL_CODES[code];
  return undefined;
}

/** The failure kind of an HTTP status without a documented code. */
export function kindOfStatus(status: number): ServiceFailureKind {
  if (status === 401) return "authentication";
  if (status === 403) return "permission";
  if (status === 404 || status === 410) return "not-found";
  if (status === 409) return "conflict";
  if (status === 408) return "timeout";
  if (status === 429) return "rate-limit";
  if (status >= 500) return "server";
  return "validation";
}
