/**
 * What the service simulator knows (orders, parcels, subscriptions, product-country changes…)
 * and how each operation answers, as pure functions of a request and that state. Written from
 * the document, independently of the client's operation table, so that the two check each other.
 */
import { parseAddress } from "../auth/ip.js";
import { deepFreeze, isRecord } from "../core/objects.js";

export type SimulatedOperation =
  | "getAuthenticationToken"
  | "calculateBillingSummary"
  | "dispatchConsolidatedShipment"
  | "getShippingDetailsExtended"
  | "voidParcel"
  | "updateParcelStatus"
  | "saveProductsList"
  | "recentProductCountries"
  | "locationByIp"
  | "vatCategoryCountries"
  | "getOrderRefunds"
  | "createOrderRefund";

export interface SimulatedOrder {
  readonly orderId: string;
  readonly merchantOrderId: string;
  readonly parcels: readonly string[];
  /** `ready`: AWB generated and processed with GetShippingDocuments; `dispatched` after dispatch. */
  status: "ready" | "not-ready" | "dispatched";
  readonly hubCode: string;
  readonly currencyCode: string;
  readonly products: readonly {
    CartItemId: string;
    Sku: string;
    Quantity: number;
    Price: number;
  }[];
}

export interface SimulatedParcel {
  readonly parcelCode: string;
  readonly orderId: string;
  readonly trackingNumber: string;
  /** `declared` parcels can be voided; `received-in-hub` ones cannot (C100). */
  status: "declared" | "received-in-hub" | "voided";
  /** The carrier's cancel fails when this parcel is voided: C102 with IsSuccess true. */
  readonly carrierCancelFails?: boolean | undefined;
  merchantStatusCodes: string[];
}

export interface SimulatedSubscription {
  readonly type: "physical" | "digital" | "hybrid";
}

export interface ProductCountryRecord {
  readonly CountryCode: string;
  readonly ProductCode: string;
  readonly IsForbidden?: boolean | undefined;
  readonly IsRestricted?: boolean | undefined;
  readonly VATRateType?: { Name: string; Rate: number; VATRateTypeCode: string } | null;
  readonly [field: string]: unknown;
}

/** Seeded orders: GE-1001 and GE-1002 can be dispatched together; GE-1003 cannot (B002). */
export const SIMULATED_ORDERS = /* @__PURE__ */ deepFreeze([
  "GE-1001",
  "GE-1002",
  "GE-1003",
] as const);
/** Seeded subscriptions of the billing summary. */
export const SIMULATED_SUBSCRIPTIONS = /* @__PURE__ */ deepFreeze({
  "SUB-PHYSICAL-1": { type: "physical" },
  "SUB-HYBRID-1": { type: "hybrid" },
  "SUB-DIGITAL-1": { type: "digital" },
} as const satisfies Record<string, SimulatedSubscription>);

/** Default VAT rate of each country the simulator knows. */
export const SIMULATED_COUNTRY_VAT: Readonly<Record<string, number>> = /* @__PURE__ */ deepFreeze({
  US: 0,
  CA: 0.05,
  GB: 0.2,
  DE: 0.19,
});

function vat(country: string, rate = SIMULATED_COUNTRY_VAT[country] ?? 0) {
  const standard = rate === SIMULATED_COUNTRY_VAT[country];
  return {
    Name: standard ? "Standard" : "Reduced",
    Rate: rate,
    VATRateTypeCode: standard ? `${country}-STD` : `${country}-RED`,
  };
}

/**
 * The simulator's state (`simulator.state`) as the declarations show it: an interface, not the
 * class, whose private fields (`#seed`) would make the CommonJS declarations' `SimulatorState` and
 * the ES module ones' two unrelated types, so that a simulator typed in a `.cts` file could not be
 * handed to a helper typed in an `.mts` file (review dual-2). The class below keeps them private.
 */
export interface SimulatorState {
  readonly orders: Map<string, SimulatedOrder>;
  readonly parcels: Map<string, SimulatedParcel>;
  readonly subscriptions: Map<string, SimulatedSubscription>;
  /** RecentProductCountryS's change log: the change with id n is `productCountryChanges[n - 1]`. */
  readonly productCountryChanges: ProductCountryRecord[];
  readonly savedProducts: Map<string, Record<string, unknown>>;
  readonly refunds: Map<string, Record<string, unknown>[]>;
  readonly idempotency: Map<string, { fingerprint: string; status: number; body: unknown }>;
  billingSummaries: number;
  /**
   * An order by the service's id or the merchant's: only where the document does not say which
   * (4.9's path `orderId`). Where it asks for the service's (4.2 `OrderIds`, 4.5's path, 4.10's
   * `OrderId`) the simulator uses `orders.get`, as the service would answer B001 to the other.
   */
  findOrder(id: string): SimulatedOrder | undefined;
  /** An order by the merchant's id (4.2 `MerchantOrderIds`, 4.4 `MerchantOrderId`). */
  findMerchantOrder(id: string): SimulatedOrder | undefined;
}

/** A fresh simulator state, seeded with the documented orders, parcels and subscriptions. */
export function createSimulatorState(): SimulatorState {
  return new SeededState();
}

class SeededState implements SimulatorState {
  readonly orders = new Map<string, SimulatedOrder>();
  readonly parcels = new Map<string, SimulatedParcel>();
  readonly subscriptions = new Map<string, SimulatedSubscription>();
  /** RecentProductCountryS's change log: the change with id n is `productCountryChanges[n - 1]`. */
  readonly productCountryChanges: ProductCountryRecord[] = [];
  readonly savedProducts = new Map<string, Record<string, unknown>>();
  readonly refunds = new Map<string, Record<string, unknown>[]>();
  readonly idempotency = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  billingSummaries = 0;

  constructor() {
    this.#seed();
  }

  #seed(): void {
    const orders: SimulatedOrder[] = [
      order("GE-1001", "M-1001", ["P-1001-1", "P-1001-2"], "ready"),
      order("GE-1002", "M-1002", ["P-1002-1"], "ready"),
      order("GE-1003", "M-1003", ["P-1003-1"], "not-ready"),
    ];
    for (const item of orders) this.orders.set(item.orderId, item);
    this.#parcel("P-1001-1", "GE-1001", "declared");
    this.#parcel("P-1001-2", "GE-1001", "declared", true);
    this.#parcel("P-1002-1", "GE-1002", "declared");
    this.#parcel("P-1003-1", "GE-1003", "received-in-hub");
    for (const [id, subscription] of Object.entries(SIMULATED_SUBSCRIPTIONS)) {
      // A copy: the seeded data is this simulator's to change, the exported table is frozen.
      this.subscriptions.set(id, { ...subscription });
    }
    this.productCountryChanges.push(
      {
        CountryCode: "DE",
        ProductCode: "SKU-1",
        IsRestricted: true,
        RestrictionMessage: "Import licence needed",
        VATRateType: vat("DE"),
      },
      {
        CountryCode: "GB",
        ProductCode: "SKU-2",
        IsRestricted: false,
        IsForbidden: false,
        VATRateType: vat("GB", 0.05),
      },
      // Back at the default: not restricted, not forbidden, the country's default rate.
      {
        CountryCode: "DE",
        ProductCode: "SKU-3",
        IsRestricted: false,
        IsForbidden: false,
        VATRateType: vat("DE"),
      },
      {
        CountryCode: "US",
        ProductCode: "SKU-4",
        IsForbidden: true,
        ForbiddanceMessage: "Not shipped",
      },
      // Back at the default without a rate at all.
      {
        CountryCode: "GB",
        ProductCode: "SKU-5",
        IsRestricted: false,
        IsForbidden: false,
        VATRateType: null,
      },
    );
    this.refunds.set("GE-1001", [
      {
        RefundID: "R-1",
        FullRefund: false,
        TotalRefundAmount: "19.9000",
        CurrencyCode: "EUR",
        RefundReason: { OrderRefundReasonCode: "DAMAGED", Name: "Damaged" },
        RefundProducts: [
          { CartItemId: "1", RefundQuantity: "1", RefundAmount: "19.9000", Sku: "SKU-1" },
        ],
        RefundDocument: [
          {
            CreditNoteUrl: "https://documents.example/credit-note/R-1.pdf",
            DocumentTypeCode: "CREDIT_NOTE",
            DocumentExtension: "PDF",
          },
        ],
      },
    ]);
  }

  #parcel(
    parcelCode: string,
    orderId: string,
    status: SimulatedParcel["status"],
    carrierCancelFails = false,
  ): void {
    const trackingNumber = `TRK-${parcelCode}`;
    this.parcels.set(parcelCode, {
      parcelCode,
      orderId,
      trackingNumber,
      status,
      carrierCancelFails,
      merchantStatusCodes: [],
    });
  }

  /**
   * An order by the service's id or the merchant's: only where the document does not say which
   * (4.9's path `orderId`). Where it asks for the service's (4.2 `OrderIds`, 4.5's path, 4.10's
   * `OrderId`) the simulator uses `orders.get`, as the service would answer B001 to the other.
   */
  findOrder(id: string): SimulatedOrder | undefined {
    return this.orders.get(id) ?? this.findMerchantOrder(id);
  }

  /** An order by the merchant's id (4.2 `MerchantOrderIds`, 4.4 `MerchantOrderId`). */
  findMerchantOrder(id: string): SimulatedOrder | undefined {
    return [...this.orders.values()].find((item) => item.merchantOrderId === id);
  }
}

function order(
  orderId: string,
  merchantOrderId: string,
  parcels: string[],
  status: SimulatedOrder["status"],
): SimulatedOrder {
  return {
    orderId,
    merchantOrderId,
    parcels,
    status,
    hubCode: "HUB-1",
    currencyCode: "EUR",
    products: [
      { CartItemId: "1", Sku: "SKU-1", Quantity: 2, Price: 19.9 },
      { CartItemId: "2", Sku: "SKU-2", Quantity: 1, Price: 49.5 },
    ],
  };
}

// ---------------------------------------------------------------- the answers

export interface SimulatedAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface SimulatedRequest {
  readonly body: unknown;
  /** Query parameters by lower-cased name (ASP.NET binds names case-insensitively). */
  readonly query: ReadonlyMap<string, readonly string[]>;
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

export interface AnswerContext {
  readonly state: SimulatorState;
  readonly merchantGuid: string;
  readonly clearanceThreshold: number;
  readonly pageSize: number;
  /** The simulator's clock (the wall clock moved by `advanceClock`), in ms since the epoch. */
  readonly now: () => number;
}

const round = (value: number) => Math.round(value * 100) / 100;
const ok = (body: unknown): SimulatedAnswer => ({ status: 200, body });
const first = (request: SimulatedRequest, name: string) =>
  request.query.get(name.toLowerCase())?.[0];

/** Part 7.1's body. */
export function subscriptionError(
  code: string,
  status: number,
  description: string,
): SimulatedAnswer {
  return { status, body: { error: description, code, description } };
}

/** DispatchConsolidatedShipment's refusal: IsSuccess false, the B-code in ErrorText. */
export function dispatchRefusal(code: string, text: string): SimulatedAnswer {
  return ok({ IsSuccess: false, ErrorText: `${code}: ${text}` });
}

/** VoidParcel's refusal: IsSuccess false with one Errors entry. */
export function voidRefusal(code: string, text: string): SimulatedAnswer {
  return ok({ IsSuccess: false, Errors: [{ ErrorCode: code, ErrorText: text }] });
}

/** 4.9's error body `{ error: { code, message, description } }`, the refund operations' shape. */
function refundError(
  status: number,
  code: string,
  message: string,
  description = message,
): SimulatedAnswer {
  return { status, body: { error: { code, message, description } } };
}

/**
 * The JSON members each operation reads, as document 000 names them. The service is an ASP.NET
 * Core one (its 415 and validation answers are), and ASP.NET Core binds JSON member names in any
 * letter case by default (`JsonSerializerDefaults.Web`; wire-facts §2: "appears to bind names
 * case-insensitively"): `{"UserName"}` is read as `userName`, `{"orderId"}` as `OrderId`.
 */
const MEMBERS: Partial<Record<SimulatedOperation, readonly string[]>> = {
  getAuthenticationToken: ["userName", "password"],
  calculateBillingSummary: [
    "subscriptionId",
    "merchantGuid",
    "currencyCode",
    "products",
    "shippingAmount",
    "code",
    "quantity",
    "price",
  ],
  dispatchConsolidatedShipment: [
    "OrderIds",
    "MerchantOrderIds",
    "ParcelCodes",
    "TrackingNumbers",
    "HubCode",
    "OuterBoxesAmount",
  ],
  getShippingDetailsExtended: [
    "amount",
    "currencyCode",
    "cultureCode",
    "destinationCountry",
    "productCodes",
    "serviceLevel",
  ],
  voidParcel: ["OrderId", "ParcelCode", "MerchantOrderId"],
  updateParcelStatus: ["merchantParcelStatusCode"],
  createOrderRefund: ["OrderId", "RefundProducts", "CartItemId", "RefundQuantity"],
};

/**
 * The body as the operation's model binds it: every member (at any depth) named as a documented
 * one in another letter case is read under the documented name; when two spellings of one name
 * are sent, the later wins, as System.Text.Json's does. Other members are kept as they are.
 */
export function bindMembers(operation: SimulatedOperation, body: unknown): unknown {
  const members = MEMBERS[operation];
  if (members === undefined) return body;
  const byLowerCase = new Map(members.map((name) => [name.toLowerCase(), name]));
  const bind = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(bind);
    if (!isRecord(value)) return value;
    const bound: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const name = byLowerCase.get(key.toLowerCase()) ?? key;
      // A plain data property, whatever the name (`__proto__` included).
      Object.defineProperty(bound, name, {
        value: bind(member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return bound;
  };
  return bind(body);
}

function list(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

/** 4.1 and Part 8: the Idempotency-Key is a uuid, 8-4-4-4-12 hex digits in any case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function billingSummary(
  ctx: AnswerContext,
  request: SimulatedRequest,
  idempotencyKey: string | undefined,
): SimulatedAnswer {
  const body = request.body;
  if (!isRecord(body))
    return subscriptionError("VALIDATION_FAILED", 422, "The body must be an object");
  if (idempotencyKey === undefined || !UUID.test(idempotencyKey)) {
    return subscriptionError("VALIDATION_FAILED", 422, "Idempotency-Key (uuid) is required");
  }
  const fingerprint = canonical(body);
  const stored = ctx.state.idempotency.get(idempotencyKey);
  if (stored !== undefined) {
    if (stored.fingerprint !== fingerprint) {
      return subscriptionError(
        "IDEMPOTENCY_KEY_CONFLICT",
        409,
        "Idempotency-Key already used for another operation",
      );
    }
    return { status: stored.status, body: stored.body };
  }
  const answer = priceSubscription(ctx, body);
  if (answer.status === 200) ctx.state.idempotency.set(idempotencyKey, { fingerprint, ...answer });
  return answer;
}

function priceSubscription(ctx: AnswerContext, body: Record<string, unknown>): SimulatedAnswer {
  const { subscriptionId, merchantGuid, currencyCode, products } = body;
  if (
    typeof subscriptionId !== "string" ||
    subscriptionId.length > 100 ||
    /\s/.test(subscriptionId)
  ) {
    return subscriptionError("INVALID_SUBSCRIPTION_ID", 400, "subscriptionId is malformed");
  }
  if (
    typeof merchantGuid !== "string" ||
    merchantGuid.toLowerCase() !== ctx.merchantGuid.toLowerCase()
  ) {
    return subscriptionError(
      "INSUFFICIENT_PERMISSIONS",
      403,
      "The user cannot act for this merchant",
    );
  }
  if (
    typeof currencyCode !== "string" ||
    !/^[A-Z]{3}$/.test(currencyCode) ||
    !Array.isArray(products) ||
    products.length === 0
  ) {
    return subscriptionError("VALIDATION_FAILED", 422, "currencyCode and products are required");
  }
  // 2.1: each product has code, quantity and price; shippingAmount is at least 0.
  const priced = (item: unknown) =>
    isRecord(item) && Number.isFinite(item.quantity) && Number.isFinite(item.price);
  const shippingAmount = body.shippingAmount;
  if (
    !products.every(priced) ||
    (shippingAmount !== undefined && !(typeof shippingAmount === "number" && shippingAmount >= 0))
  ) {
    return subscriptionError(
      "VALIDATION_FAILED",
      422,
      "every product needs a quantity and a price; shippingAmount is at least 0",
    );
  }
  const subscription = ctx.state.subscriptions.get(subscriptionId);
  if (subscription === undefined) {
    return subscriptionError(
      "SUBSCRIPTION_NOT_FOUND",
      404,
      "No subscription with this subscriptionId",
    );
  }
  const items = products.filter(isRecord);
  if (items.some((item) => typeof item.code !== "string" || item.code === "")) {
    return subscriptionError("INVALID_PRODUCT_CODE", 400, "A product code is missing");
  }
  const restricted = items.filter((item) => String(item.code).startsWith("RESTRICTED"));
  if (restricted.length > 0) {
    const skus = restricted.map(
      (item) => `${String(item.code)}: cannot be shipped to the destination`,
    );
    return subscriptionError("PRODUCT_RESTRICTED", 422, skus.join("; "));
  }
  const physical = subscription.type !== "digital";
  const shipping = physical
    ? typeof body.shippingAmount === "number"
      ? body.shippingAmount
      : 9.95
    : 0;
  const productsTotal = items.reduce(
    (sum, item) => sum + Number(item.price) * Number(item.quantity),
    0,
  );
  const externalReference = `BS-${++ctx.state.billingSummaries}`;
  const fxRates = [
    {
      fxRate: 1,
      fxMarginRate: 0,
      fxRateServiceProviderId: 1,
      currencyFrom: currencyCode,
      currencyTo: currencyCode,
    },
  ];
  if (productsTotal + shipping > ctx.clearanceThreshold) {
    // 4.1 rule 3: HTTP 200, a delivery that could not be calculated.
    const description = `The delivery total is above the formal clearance threshold (${ctx.clearanceThreshold} ${currencyCode})`;
    return ok({
      externalReference,
      dtResults: [
        {
          deliveryId: "0",
          status: { isSuccessful: false, error: { code: 1, description } },
          lineItems: [],
          additionalFees: [],
          totals: { taxes: 0, duties: 0, additionalFees: 0 },
        },
      ],
      fxRates,
    });
  }
  const lineItems = items.map((item, index) => {
    const amount = Number(item.price) * Number(item.quantity);
    return {
      index: String(index),
      code: String(item.code),
      hsCode: "610910",
      dutyLines: [{ name: "Import duty", price: round(amount * 0.05), rate: 0.05 }],
      taxLines: [{ name: "VAT", price: round(amount * 0.2), rate: 0.2 }],
    };
  });
  const duties = round(productsTotal * 0.05);
  const shippingTax = round(shipping * 0.2);
  const taxes = round(productsTotal * 0.2 + shippingTax);
  return ok({
    externalReference,
    ...(physical
      ? {
          selectedShippingOption: {
            optionId: "STD-1",
            name: "Standard",
            price: shipping,
            currencyCode,
          },
        }
      : {}),
    dtResults: [
      {
        deliveryId: "0",
        shippingServiceCode: physical ? "STD" : undefined,
        status: { isSuccessful: true },
        lineItems,
        shipping: { taxLines: [{ name: "VAT", price: shippingTax, rate: 0.2 }] },
        additionalFees: [{ name: "Clearance fee", price: 2.5 }],
        totals: { taxes, duties, additionalFees: 2.5 },
      },
    ],
    fxRates,
  });
}

export function dispatch(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  const body = isRecord(request.body) ? request.body : {};
  // 4.2: OrderIds are the service's order ids, MerchantOrderIds the merchant's.
  const orderIds = list(body.OrderIds);
  const merchantOrderIds = list(body.MerchantOrderIds);
  const ids = [...orderIds, ...merchantOrderIds];
  const parcelCodes = list(body.ParcelCodes);
  const trackingNumbers = list(body.TrackingNumbers);
  if (ids.length + parcelCodes.length + trackingNumbers.length === 0) {
    return dispatchRefusal(
      "B404",
      "At least one of ParcelCodes, TrackingNumbers, OrderIds, MerchantOrderIds must be provided",
    );
  }
  const state = ctx.state;
  const unknown = parcelCodes.filter((code) => !state.parcels.has(code));
  if (unknown.length > 0)
    return dispatchRefusal("B401", `Parcel code(s) not found: ${unknown.join(", ")}`);
  const parcels = [...state.parcels.values()];
  const untracked = trackingNumbers.filter(
    (number) => !parcels.some((p) => p.trackingNumber === number),
  );
  if (untracked.length > 0)
    return dispatchRefusal("B402", `Tracking number(s) not found: ${untracked.join(", ")}`);
  const orders: SimulatedOrder[] = [];
  const named = [
    ...orderIds.map((id) => state.orders.get(id)),
    ...merchantOrderIds.map((id) => state.findMerchantOrder(id)),
  ];
  for (const found of named) {
    if (found === undefined) return dispatchRefusal("B001", "Order ID not found");
    // One order named by both of its ids is dispatched (and its parcels counted) once.
    if (!orders.includes(found)) orders.push(found);
  }
  for (const code of [...parcelCodes, ...trackingNumbers]) {
    const parcel = parcels.find((p) => p.parcelCode === code || p.trackingNumber === code);
    const owner = parcel === undefined ? undefined : state.orders.get(parcel.orderId);
    if (owner !== undefined && !orders.includes(owner)) orders.push(owner);
  }
  if (orders.some((item) => item.status !== "ready"))
    return dispatchRefusal("B002", "Order cannot be dispatched");
  const hubs = new Set(orders.map((item) => item.hubCode));
  if (hubs.size !== 1 || (typeof body.HubCode === "string" && !hubs.has(body.HubCode))) {
    return dispatchRefusal("B200", "Could not determine the destination hub");
  }
  const parcelCount = orders.reduce((sum, item) => sum + item.parcels.length, 0);
  if (typeof body.OuterBoxesAmount === "number" && body.OuterBoxesAmount > parcelCount) {
    return dispatchRefusal(
      "B300",
      `Outer boxes cannot exceed parcels (${parcelCount} parcels, ${body.OuterBoxesAmount} outer boxes)`,
    );
  }
  for (const item of orders) item.status = "dispatched";
  const pdf = "JVBERi0xLjQKJSBzaW11bGF0ZWQK"; // "%PDF-1.4\n% simulated\n"
  // The simulator's time, so that `advanceClock` moves it as it moves the tokens (review testkit-5).
  const now = new Date(ctx.now()).toISOString();
  const documents = orders.map((item) => ({
    CreationDateTime: now,
    DocumentData: pdf,
    DocumentExtension: "PDF",
    DocumentTypeCode: "COMMERCIAL_INVOICE",
    DocumentTypeName: "Commercial invoice",
    ParcelCode: item.parcels[0],
    URL: `https://documents.example/${item.orderId}/invoice.pdf`,
  }));
  const tracked = orders
    .flatMap((item) => item.parcels)
    .map((code) => ({
      ParcelCode: code,
      ParcelTrackingNumber: `TRK-${code}`,
      ParcelTrackingUrl: `https://track.example/TRK-${code}`,
    }));
  return ok({
    IsSuccess: true,
    ErrorText: null,
    Documents: documents,
    ShipperManifests: [
      {
        CreationDateTime: now,
        DocumentData: pdf,
        DocumentExtension: "PDF",
        DocumentTypeCode: "MANIFEST",
        DocumentTypeName: "Consolidated manifest",
        URL: "https://documents.example/manifest.pdf",
      },
    ],
    ParcelsTracking: tracked,
    TrackingDetails: {
      ShipperName: "Simulated Carrier",
      TrackingNumber: "AWB-1",
      TrackingURL: "https://track.example/AWB-1",
    },
    DeliveryAdviceInformation: orders.map((item) => ({
      CommercialInvoiceNumber: `INV-${item.orderId}`,
      CurrencyCode: item.currencyCode,
      ParcelCode: item.parcels[0],
      TotalValue: "89.30",
    })),
  });
}

const RATES: Record<string, { level: number; name: string; cost: number; days: string }[]> = {
  US: [
    { level: 1, name: "Standard", cost: 9.95, days: "5-8" },
    { level: 2, name: "Express", cost: 24.5, days: "2-3" },
  ],
  CA: [{ level: 1, name: "Standard", cost: 11.0, days: "6-9" }],
  GB: [
    { level: 1, name: "Standard", cost: 4.95, days: "2-4" },
    { level: 2, name: "Express", cost: 12.0, days: "1-2" },
  ],
  DE: [{ level: 1, name: "Standard", cost: 6.5, days: "3-5" }],
};
const ALPHA3: Record<string, string> = { USA: "US", CAN: "CA", GBR: "GB", DEU: "DE" };

export function shippingDetails(request: SimulatedRequest): SimulatedAnswer {
  const body = isRecord(request.body) ? request.body : {};
  if (typeof body.amount !== "number" || typeof body.currencyCode !== "string") {
    return { status: 400, body: { Message: "amount and currencyCode are required" } };
  }
  // 000 §4.3's rules for the request.
  const refused = (message: string): SimulatedAnswer => ({
    status: 400,
    body: { Message: message },
  });
  if (!Number.isFinite(body.amount) || Number(body.amount.toFixed(2)) !== body.amount) {
    return refused("amount has up to two digits after the decimal point");
  }
  if (!/^[A-Za-z]{3}$/.test(body.currencyCode)) {
    return refused("currencyCode must be 3 letters");
  }
  if (
    body.destinationCountry !== undefined &&
    body.destinationCountry !== null &&
    !(
      typeof body.destinationCountry === "string" &&
      /^(?:[A-Za-z]{2,3})?$/.test(body.destinationCountry)
    )
  ) {
    return refused("destinationCountry must be 2 or 3 letters (ISO alpha-2 or alpha-3)");
  }
  if (
    body.serviceLevel !== undefined &&
    body.serviceLevel !== null &&
    !(
      typeof body.serviceLevel === "number" &&
      Number.isInteger(body.serviceLevel) &&
      body.serviceLevel >= 1 &&
      body.serviceLevel <= 19
    )
  ) {
    return refused("serviceLevel must be an integer from 1 to 19");
  }
  const wanted =
    typeof body.destinationCountry === "string" ? body.destinationCountry.toUpperCase() : "";
  const country = ALPHA3[wanted] ?? wanted;
  const level = typeof body.serviceLevel === "number" ? body.serviceLevel : undefined;
  const currency = body.currencyCode;
  const answer = Object.entries(RATES)
    .filter(([code]) => country === "" || code === country)
    .map(([code, rates]) => {
      const matching = rates.filter((rate) => level === undefined || rate.level === level);
      return {
        destinationCountry: code,
        status: matching.length > 0 ? "active" : "noShippingMethodsAvailable",
        shippingRates: matching.map((rate) => ({
          shippingMethodLocalizedName: rate.name,
          shippingMethodName: rate.name,
          rangeMinValue: 0,
          rangeMaxValue: 150,
          shippingCost: rate.cost,
          shippingCostCurrency: currency,
          estimatedDeliveryDays: rate.days,
          specialOfferExpiryDate: null,
        })),
      };
    });
  return ok(answer);
}

export function voidParcel(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  const body = isRecord(request.body) ? request.body : {};
  const parcel =
    typeof body.ParcelCode === "string" ? ctx.state.parcels.get(body.ParcelCode) : undefined;
  const orderId = typeof body.OrderId === "string" ? body.OrderId : undefined;
  const merchantOrderId =
    typeof body.MerchantOrderId === "string" ? body.MerchantOrderId : undefined;
  const owner = parcel === undefined ? undefined : ctx.state.orders.get(parcel.orderId);
  const belongs =
    owner !== undefined && (orderId === owner.orderId || merchantOrderId === owner.merchantOrderId);
  if (parcel === undefined || !belongs || parcel.status === "voided") {
    return voidRefusal("C104", "The parcel code was not found, or the parcel was already voided");
  }
  if (parcel.status !== "declared") {
    return voidRefusal("C100", "The parcel cannot be voided due to the status of the parcel");
  }
  parcel.status = "voided";
  if (parcel.carrierCancelFails) {
    return ok({
      IsSuccess: true,
      Errors: [
        {
          ErrorCode: "C102",
          ErrorText:
            "The parcel was voided, but the shipper's API to cancel the shipment failed. Error code: SHP-503 Error text: carrier unavailable",
        },
      ],
    });
  }
  return ok({ IsSuccess: true, Errors: [] });
}

export function parcelStatus(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  const body = isRecord(request.body) ? request.body : {};
  // 4.5: the path's orderId is the service order identifier; a merchant id is not found (B001).
  const orderId = request.params.orderId ?? "";
  if (!ctx.state.orders.has(orderId))
    return ok({ Success: false, Error: "B001: Order ID not found" });
  if (typeof body.merchantParcelStatusCode !== "string" || body.merchantParcelStatusCode === "") {
    return { status: 400, body: { Message: "merchantParcelStatusCode is required" } };
  }
  // Handled asynchronously by the service: a parcel not created yet is accepted and left to the operator.
  ctx.state.parcels
    .get(request.params.parcelCode ?? "")
    ?.merchantStatusCodes.push(body.merchantParcelStatusCode);
  return ok({ Success: true });
}

export function saveProducts(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  if (!Array.isArray(request.body) || !request.body.every(isRecord)) {
    return { status: 400, body: { Message: "The body must be a list of products" } };
  }
  const country = first(request, "countryCode")?.toUpperCase();
  const countries =
    country !== undefined && country in SIMULATED_COUNTRY_VAT
      ? [country]
      : Object.keys(SIMULATED_COUNTRY_VAT);
  const records = request.body.flatMap((product) => {
    const sku = String(product.Sku ?? product.SKU ?? product.ProductCode ?? "");
    ctx.state.savedProducts.set(sku, product);
    return countries.map((code) => {
      const restricted = sku.startsWith("RESTRICTED") && code === "US";
      return {
        CountryCode: code,
        ProductCode: sku,
        IsForbidden: false,
        IsRestricted: restricted,
        IsVerified: true,
        ForbiddanceMessage: "",
        RestrictionMessage: restricted
          ? "This product cannot be imported into the United States"
          : "",
        TTL: 86400,
        UploadedViaCatalog: false,
        VATRateType: vat(code),
      };
    });
  });
  return ok({ ProductCountry: records });
}

export function recentProductCountries(
  ctx: AnswerContext,
  request: SimulatedRequest,
): SimulatedAnswer {
  const text = first(request, "requestId");
  if (text === undefined || !/^\d+$/.test(text)) {
    return { status: 400, body: { Message: "requestId is required (0 for the first call)" } };
  }
  const from = Number(text);
  const changes = ctx.state.productCountryChanges.slice(from, from + ctx.pageSize);
  return ok({ ProductCountry: changes, RequestID: from + changes.length });
}

/**
 * Known locations by IPv4 /24, the range an IPv4 answer gives: every address of a block is
 * answered alike, as a geolocation database does, so a merchant caching by range (4.7a) gets the
 * same country for every address it serves from the cache. A Map: no name `Object.prototype` has
 * (`constructor`, `__proto__`) is found in it.
 */
const LOCATIONS = new Map<
  string,
  { country: string; name: string; city: string; currency: string }
>([
  ["203.0.113", { country: "US", name: "United States", city: "New York", currency: "USD" }],
  ["198.51.100", { country: "DE", name: "Germany", city: "Berlin", currency: "EUR" }],
]);

/**
 * The range 4.7a's caching applies to, holding `ip`: its /24 for IPv4 (an IPv4-mapped IPv6
 * address counts as its IPv4), its /64 for IPv6. In ::/64, which holds the IPv4-mapped addresses
 * as IPv6 integers (and ::1), the range is the address alone, so it holds no address answered
 * otherwise. `From` and `To` are integers (2.3a).
 */
function ipRange(ip: string): { From: bigint; To: bigint; Type: "IPV4" | "IPV6" } | null {
  // Read as the allow-list reads addresses: only ::ffff:a.b.c.d is IPv4, and no loose IPv4 text.
  const address = parseAddress(ip);
  if (address === undefined) return null;
  const value = address.toByteArray().reduce((n, byte) => n * 256n + BigInt(byte), 0n);
  const hostBits = address.kind() === "ipv4" ? 8n : 64n;
  const from = (value >> hostBits) << hostBits;
  if (address.kind() === "ipv6" && from === 0n) return { From: value, To: value, Type: "IPV6" };
  return {
    From: from,
    To: from + (1n << hostBits) - 1n,
    Type: address.kind() === "ipv4" ? "IPV4" : "IPV6",
  };
}

/**
 * JSON text with every bigint written as the exact integer it is: an IPv6 bound is beyond what
 * a JavaScript number holds (a reader's `JSON.parse` rounds it; the wire carries it exactly).
 */
function jsonWithIntegers(value: unknown): string {
  const marked = JSON.stringify(value, (_, item: unknown) =>
    typeof item === "bigint" ? `\u0000bigint:${item}` : item,
  );
  return marked.replace(/"\\u0000bigint:(\d+)"/g, "$1");
}

export function locationByIp(request: SimulatedRequest): SimulatedAnswer {
  const ip = first(request, "IP");
  if (ip === undefined || ip === "") return { status: 400, body: { Message: "IP is required" } };
  const range = ipRange(ip);
  const block =
    range?.Type === "IPV4" ? parseAddress(ip)?.toString().split(".").slice(0, 3).join(".") : "";
  // Unresolvable addresses (private networks among them) get the merchant's default location.
  const found = LOCATIONS.get(block ?? "") ?? {
    country: "GB",
    name: "United Kingdom",
    city: "London",
    currency: "GBP",
  };
  return ok(
    jsonWithIntegers({
      City: { Code: found.city.toUpperCase().replace(/\s/g, "-"), Name: found.city },
      Country: {
        Code: found.country,
        DefaultCurrencyCode: found.currency,
        DefaultVATRateType: vat(found.country),
        IsOperatedByOperator: true,
        IsStateMandatory: found.country === "US",
        Name: found.name,
        SiteURL: null,
        SupportsFixedPrices: true,
        UseCountryVAT: false,
      },
      IPRange: range,
      Region: { Code: "", CountryCode: found.country, Name: "" },
    }),
  );
}

const VAT_CATEGORIES: Record<string, [string, number][]> = {
  DE: [
    ["STANDARD", 0.19],
    ["BOOKS", 0.07],
    ["FOOD", 0.07],
  ],
  GB: [
    ["STANDARD", 0.2],
    ["CHILDREN-CLOTHES", 0],
    ["ENERGY", 0.05],
  ],
  US: [["STANDARD", 0]],
  CA: [["STANDARD", 0.05]],
};

export function vatCategories(request: SimulatedRequest): SimulatedAnswer {
  const country = first(request, "countryCode")?.toUpperCase();
  if (country === undefined) return { status: 400, body: { Message: "countryCode is required" } };
  const wanted = (request.query.get("vatcategorycodes") ?? []).flatMap((value) => value.split(","));
  const records = (VAT_CATEGORIES[country] ?? [])
    .filter(([code]) => wanted.length === 0 || wanted.includes(code))
    .map(([code, rate]) => ({
      CountryCode: country,
      VATCategoryCode: code,
      VATRateType: vat(country, rate),
    }));
  return ok({ VATCategoryCountry: records });
}

export function orderRefunds(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  const found = ctx.state.findOrder(request.params.orderId ?? "");
  if (found === undefined) return refundError(404, "ORDER_NOT_FOUND", "Order not found");
  const refunded = refundedQuantities(ctx, found.orderId);
  const lines = found.products.map((product) => {
    const left = Math.max(0, product.Quantity - (refunded.get(product.CartItemId) ?? 0));
    return {
      CartItemId: product.CartItemId,
      Sku: product.Sku,
      ProductCode: product.Sku,
      RefundableTotalAmount: round(product.Price * left),
      RefundableQuantity: left,
    };
  });
  return ok({
    OrderId: found.orderId,
    MerchantOrderId: found.merchantOrderId,
    MerchantInternalOrderId: `INT-${found.merchantOrderId}`,
    WebStoreCode: "default",
    WebStoreInstanceCode: "default",
    Refunds: ctx.state.refunds.get(found.orderId) ?? [],
    RefundableAmount: {
      CurrencyCode: found.currencyCode,
      TotalCreditAmount: round(lines.reduce((sum, entry) => sum + entry.RefundableTotalAmount, 0)),
      RefundableShippingAmount: 9.95,
      RefundableDutiesAmount: 4.47,
      ProductRefundableAmount: lines,
    },
  });
}

/** Units of each line of an order already refunded, from its refunds (seeded ones included). */
function refundedQuantities(ctx: AnswerContext, orderId: string): Map<string, number> {
  const refunded = new Map<string, number>();
  for (const refund of ctx.state.refunds.get(orderId) ?? []) {
    const products = Array.isArray(refund.RefundProducts) ? refund.RefundProducts : [];
    for (const product of products.filter(isRecord)) {
      const id = String(product.CartItemId);
      const quantity = Number(product.RefundQuantity);
      if (Number.isFinite(quantity)) refunded.set(id, (refunded.get(id) ?? 0) + quantity);
    }
  }
  return refunded;
}

export function createRefund(ctx: AnswerContext, request: SimulatedRequest): SimulatedAnswer {
  const body = isRecord(request.body) ? request.body : {};
  // 4.10's OrderId, beside the MerchantOrderId it is told from everywhere else: the service's id.
  const found = typeof body.OrderId === "string" ? ctx.state.orders.get(body.OrderId) : undefined;
  if (found === undefined) return refundError(404, "ORDER_NOT_FOUND", "Order not found");
  const lines = Array.isArray(body.RefundProducts) ? body.RefundProducts.filter(isRecord) : [];
  const unknown = lines.find(
    (line) => !found.products.some((p) => p.CartItemId === line.CartItemId),
  );
  if (lines.length === 0 || unknown !== undefined) {
    return refundError(400, "INVALID_REFUND", "RefundProducts must list cart items of the order");
  }
  // What each line asks for (a line listed twice counts twice), against what remains of it.
  const asked = new Map<string, number>();
  for (const line of lines) {
    const quantity = Number(line.RefundQuantity);
    if (typeof line.RefundQuantity === "boolean" || !(quantity > 0) || !Number.isFinite(quantity)) {
      return refundError(400, "INVALID_REFUND", "RefundQuantity must be a positive number");
    }
    const id = String(line.CartItemId);
    asked.set(id, (asked.get(id) ?? 0) + quantity);
  }
  const refunded = refundedQuantities(ctx, found.orderId);
  for (const product of found.products) {
    const quantity = asked.get(product.CartItemId);
    if (quantity === undefined) continue;
    const left = Math.max(0, product.Quantity - (refunded.get(product.CartItemId) ?? 0));
    if (quantity > left) {
      return refundError(
        400,
        "INVALID_REFUND",
        `RefundQuantity exceeds the refundable quantity of CartItemId ${product.CartItemId}`,
        `${quantity} asked, ${left} left of ${product.Quantity}`,
      );
    }
  }
  const refunds = ctx.state.refunds.get(found.orderId) ?? [];
  const refundId = `R-${found.orderId}-${refunds.length + 1}`;
  const refundProducts = lines.map((line) => {
    const product = found.products.find((p) => p.CartItemId === line.CartItemId);
    const amount = (product?.Price ?? 0) * Number(line.RefundQuantity);
    return {
      CartItemId: line.CartItemId,
      RefundQuantity: String(line.RefundQuantity),
      RefundAmount: amount.toFixed(4),
      Sku: product?.Sku,
    };
  });
  const total = refundProducts.reduce((sum, product) => sum + Number(product.RefundAmount), 0);
  refunds.push({
    RefundID: refundId,
    TotalRefundAmount: total.toFixed(4),
    CurrencyCode: found.currencyCode,
    RefundProducts: refundProducts,
  });
  ctx.state.refunds.set(found.orderId, refunds);
  return ok({ Success: true, RefundID: refundId });
}

/** A JSON text with keys sorted: the same body written in another key order is the same body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
