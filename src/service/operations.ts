/**
 * Every operation the client calls, as data: one row each. The `call` pipeline reads nothing
 * else, so what differs between operations is all here, on one screen.
 */
import type { z } from "zod";
import type { FieldStep } from "../core/exact-numbers.js";
import { deepFreeze } from "../core/objects.js";
import type { ServiceFailureKind } from "./codes.js";
import {
  authenticationTokenRequestSchema,
  authenticationTokenResponseSchema,
  billingSummaryRequestSchema,
  billingSummaryResponseSchema,
  createOrderRefundRequestSchema,
  createOrderRefundResponseSchema,
  dispatchConsolidatedShipmentRequestSchema,
  dispatchConsolidatedShipmentResponseSchema,
  getOrderRefundsRequestSchema,
  locationByIpRequestSchema,
  locationSchema,
  orderRefundDetailsSchema,
  productCountryListSchema,
  recentProductCountriesRequestSchema,
  recentProductCountriesResponseSchema,
  saveProductsListRequestSchema,
  shippingDetailsExtendedRequestSchema,
  shippingDetailsExtendedResponseSchema,
  updateParcelStatusRequestSchema,
  updateParcelStatusResponseSchema,
  vatCategoryCountriesRequestSchema,
  vatCategoryCountriesResponseSchema,
  voidParcelRequestSchema,
  voidParcelResponseSchema,
} from "./schemas.js";

/**
 * When a failed attempt may be sent again: `safe` (reads, and writes that leave the same state),
 * `idempotency-key` (safe because the same `Idempotency-Key` goes with every attempt), `never`
 * (the document says not to, or a second attempt could apply the operation twice).
 */
export type RetryPolicy = "safe" | "idempotency-key" | "never";

/**
 * How a refusal inside an answer is read: `dispatch` (IsSuccess false + a B-code, B700 when none
 * is given), `void` (IsSuccess + the Errors list, C102 a warning), `token` (any 4xx is a refused
 * token), `standard` (Success/IsSuccess false, Part 7.1 bodies, refund error bodies).
 */
export type FailureReading = "dispatch" | "void" | "token" | "standard";

export interface OperationDefinition {
  /** The operation's name in the document. */
  readonly wireName: string;
  readonly summary: string;
  readonly method: "GET" | "POST";
  /** Relative to `baseUrl` (or `authUrl`); `{name}` is a path parameter. */
  readonly path: string;
  readonly base: "service" | "auth";
  readonly request: z.ZodType;
  readonly response: z.ZodType;
  /** Request fields that go into the path and the query; `body` says what is sent as JSON. */
  readonly params: {
    readonly path?: readonly string[];
    readonly query?: readonly string[];
    /** `rest`: the other fields; a field name: that field's value; `none`: no body. */
    readonly body: "rest" | "none" | (string & {});
  };
  /**
   * Names the document does not show, by request field (or, for `voidParcel`, by the field read
   * from an `Errors` entry): the default wire name. Every one is overridable (`names`).
   */
  readonly names: Readonly<Record<string, string>>;
  /** Whether a token (5.2) is sent by default; overridable per operation (`jwt`). */
  readonly jwt: boolean;
  /** `Bearer` when the document shows the scheme; otherwise the client's `tokenScheme`. */
  readonly tokenScheme?: "Bearer";
  /** Where the merchant GUID goes by default; `none` for the token operation. */
  readonly merchantGuid: "header" | "query" | "none";
  /**
   * Set where the request body carries the GUID (the billing summary, 2.1): sending a token then
   * does not add it to the URL, as 5.2 asks of the other operations that send one.
   */
  readonly merchantGuidInBody?: true;
  readonly retry: RetryPolicy;
  readonly failures: FailureReading;
  /**
   * For an operation that is never retried: the refusals (by code or by kind) that may mean an
   * earlier identical request was applied (the document's "already dispatched", "already voided").
   * A call refused so after a call of the same request ended in doubt says it may have been
   * applied (`in-doubt.ts`).
   */
  readonly alreadyDone?: {
    readonly codes?: readonly string[];
    readonly kinds?: readonly ServiceFailureKind[];
  };
  /**
   * For the same memory: the request's lists (top-level fields) the service reads as sets, so a
   * repeat that gives the same elements in another order (rebuilt from database rows, a `Set`) is
   * the same request: the orders or parcels to dispatch, the lines of a refund.
   */
  readonly anyOrder?: readonly string[];
  /**
   * Set where an answer must say `Success` or `IsSuccess` true to count as done (the answer's
   * shape is not shown, so nothing else confirms it): what the caller is told otherwise, and of
   * any 2xx it cannot read (the operation may have been applied all the same).
   */
  readonly unconfirmed?: string;
  /**
   * Number fields of the answer that may be integers beyond 2^53 (an IPv6 range's bounds): one
   * `JSON.parse` has rounded is given its exact digits, as text, from the answer's text.
   */
  readonly exactNumbers?: readonly (readonly FieldStep[])[];
}

export const OPERATIONS = /* @__PURE__ */ deepFreeze({
  getAuthenticationToken: {
    wireName: "GetAuthenticationToken",
    summary: "Issues the token (5.2); called by the client's token provider, not by you",
    method: "POST",
    path: "/Authentication/GetAuthenticationToken",
    base: "auth",
    request: authenticationTokenRequestSchema,
    response: authenticationTokenResponseSchema,
    params: { body: "rest" },
    names: {},
    jwt: false,
    merchantGuid: "none",
    retry: "safe",
    failures: "token",
  },
  calculateBillingSummary: {
    wireName: "CalculateBillingSummary",
    summary: "Billing summary of a recurring subscription order: shipping option, duties and taxes",
    method: "POST",
    path: "/subscriptions/billing-summary/calculate",
    base: "service",
    request: billingSummaryRequestSchema,
    response: billingSummaryResponseSchema,
    params: { body: "rest" },
    names: {},
    jwt: true,
    tokenScheme: "Bearer",
    merchantGuid: "header",
    merchantGuidInBody: true,
    retry: "idempotency-key",
    failures: "standard",
  },
  dispatchConsolidatedShipment: {
    wireName: "DispatchConsolidatedShipment",
    summary:
      "Dispatches several orders as one consolidated shipment; returns manifest and documents",
    method: "POST",
    path: "/Order/DispatchConsolidatedShipment",
    base: "service",
    request: dispatchConsolidatedShipmentRequestSchema,
    response: dispatchConsolidatedShipmentResponseSchema,
    params: { body: "rest" },
    names: {},
    jwt: false,
    merchantGuid: "header",
    retry: "never",
    failures: "dispatch",
    // 7.2: B002's causes include "already dispatched"; B100, no order valid for dispatch, is what
    // a request whose every order was dispatched gets.
    alreadyDone: { codes: ["B002", "B100"] },
    // 4.2: the orders "to manifest" (service or merchant ids); 7.2: the parcel codes and tracking
    // numbers listed (B401, B402). A consolidated shipment of the same orders in any order.
    anyOrder: ["OrderIds", "MerchantOrderIds", "ParcelCodes", "TrackingNumbers"],
  },
  getShippingDetailsExtended: {
    wireName: "GetShippingDetailsExtended",
    summary: "Flat shipping-rate thresholds of every shipping service, per destination country",
    method: "POST",
    path: "/ShippingDetails/GetShippingDetailsExtended",
    base: "service",
    request: shippingDetailsExtendedRequestSchema,
    response: shippingDetailsExtendedResponseSchema,
    params: { body: "rest" },
    names: { serviceLevel: "serviceLevel" },
    jwt: true,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  voidParcel: {
    wireName: "VoidParcel",
    summary: "Takes out a declared parcel; C102 (carrier cancel failed) comes back as a warning",
    method: "POST",
    path: "/Parcel/VoidParcel",
    base: "service",
    request: voidParcelRequestSchema,
    response: voidParcelResponseSchema,
    params: { body: "rest" },
    names: { errorCode: "ErrorCode", errorText: "ErrorText" },
    jwt: false,
    merchantGuid: "header",
    retry: "never",
    failures: "void",
    // 3 and 7.3: a voided parcel is answered C104 ("not found or already voided").
    alreadyDone: { codes: ["C104"] },
  },
  updateParcelStatus: {
    wireName: "UpdateParcelStatus",
    summary: "Notifies a parcel status change (handled asynchronously by the service)",
    method: "POST",
    path: "/orders/{orderId}/parcels/{parcelCode}/statuses",
    base: "service",
    request: updateParcelStatusRequestSchema,
    response: updateParcelStatusResponseSchema,
    params: { path: ["orderId", "parcelCode"], body: "rest" },
    names: {},
    jwt: false,
    merchantGuid: "header",
    retry: "never",
    failures: "standard",
    // 3: a change not allowed is refused (no code shown); the status may already be the one sent.
    alreadyDone: { kinds: ["conflict"] },
  },
  saveProductsList: {
    wireName: "SaveProductsList",
    summary: "Saves product data; returns the matching ProductCountry records",
    method: "POST",
    path: "/Browsing/SaveProductsList",
    base: "service",
    request: saveProductsListRequestSchema,
    response: productCountryListSchema,
    params: {
      query: [
        "clientIP",
        "countryCode",
        "cultureCode",
        "includeVAT",
        "inputDataCultureCode",
        "originalCurrencyCode",
        "priceCoefficientRate",
        "roundingRuleId",
      ],
      body: "products",
    },
    names: {
      clientIP: "clientIP",
      countryCode: "countryCode",
      cultureCode: "cultureCode",
      includeVAT: "includeVAT",
      inputDataCultureCode: "inputDataCultureCode",
      originalCurrencyCode: "originalCurrencyCode",
      priceCoefficientRate: "priceCoefficientRate",
      roundingRuleId: "roundingRuleId",
    },
    jwt: false,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  recentProductCountries: {
    wireName: "RecentProductCountryS",
    summary: "Product-country exceptions changed since a request id; paged by the client",
    method: "POST",
    path: "/Browsing/RecentProductCountryS",
    base: "service",
    request: recentProductCountriesRequestSchema,
    response: recentProductCountriesResponseSchema,
    params: { query: ["requestId"], body: "none" },
    names: { requestId: "requestId" },
    jwt: false,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  locationByIp: {
    wireName: "LocationByIP",
    summary: "The shopper's location from an IP address (the merchant default when unresolved)",
    method: "POST",
    path: "/Browsing/LocationByIP",
    base: "service",
    request: locationByIpRequestSchema,
    response: locationSchema,
    params: { query: ["ip"], body: "none" },
    names: { ip: "IP" },
    // IPv6 bounds are 128-bit integers: exact, as text, past 2^53 (review ENC-3).
    exactNumbers: [
      ["IPRange", "From"],
      ["IPRange", "To"],
    ],
    jwt: false,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  vatCategoryCountries: {
    wireName: "VATCategoryCountryS",
    summary: "VAT categories of a country (all of them, or the listed codes)",
    method: "POST",
    path: "/Browsing/VATCategoryCountryS",
    base: "service",
    request: vatCategoryCountriesRequestSchema,
    response: vatCategoryCountriesResponseSchema,
    params: { query: ["countryCode", "vatCategoryCodes"], body: "none" },
    names: { countryCode: "countryCode", vatCategoryCodes: "vatCategoryCodes" },
    jwt: false,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  getOrderRefunds: {
    wireName: "GetOrderRefunds",
    summary: "Refunds of an order, credit notes and the refundable amount per product",
    method: "GET",
    path: "/v1/orders/{orderId}/refunds",
    base: "service",
    request: getOrderRefundsRequestSchema,
    response: orderRefundDetailsSchema,
    params: { path: ["orderId"], body: "none" },
    names: {},
    jwt: false,
    merchantGuid: "header",
    retry: "safe",
    failures: "standard",
  },
  createOrderRefund: {
    wireName: "CreateOrderRefund",
    summary: "Creates a refund of order lines (path and answer not shown in the document)",
    method: "POST",
    path: "/Order/CreateOrderRefund",
    base: "service",
    request: createOrderRefundRequestSchema,
    response: createOrderRefundResponseSchema,
    params: { body: "rest" },
    names: { RefundProducts: "RefundProducts" },
    jwt: false,
    merchantGuid: "query",
    retry: "never",
    failures: "standard",
    // No code is documented (4.10): a refund already created makes its repeat exceed what is left
    // to refund, refused as the service sees fit (a 400, a 409, a refusal in a 2xx).
    alreadyDone: { kinds: ["conflict", "validation"] },
    // 4.10: "a list of {CartItemId, RefundQuantity}": each line names its item.
    anyOrder: ["RefundProducts"],
    unconfirmed:
      "the refund is not confirmed; it may have been created all the same: check getOrderRefunds before creating it again",
  },
} as const satisfies Record<string, OperationDefinition>);

/** Every operation name, the token operation included. */
export type OperationName = keyof typeof OPERATIONS;
/** The operations a merchant calls (one client method each). */
export type ServiceOperationName = Exclude<OperationName, "getAuthenticationToken">;

export const SERVICE_OPERATION_NAMES: readonly ServiceOperationName[] = /* @__PURE__ */ deepFreeze(
  Object.keys(OPERATIONS).filter(
    (name) => name !== "getAuthenticationToken",
  ) as ServiceOperationName[],
);

/** Overrides of the names the document does not show, per operation. */
export type ServiceNames = {
  readonly [Name in ServiceOperationName]?: Partial<
    Record<keyof (typeof OPERATIONS)[Name]["names"], string | undefined>
  >;
};

/** The merchant GUID's header and query parameter names (5.1; the query name as in 4.10). */
export const MERCHANT_GUID_HEADER = "MerchantGUID";
export const MERCHANT_GUID_QUERY = "merchantGUID";
