// Every fixture through the whole pipeline: router → method → auth → body → parse → schema →
// payload auth → decoding → the merchant's function → the callback's own response.

import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  type BodyInput,
  CALLBACK_NAMES,
  type CallbackContext,
  type CallbackFailure,
  type CallbackName,
  type CallbackRouterOptions,
  type CheckoutCartInfo,
  createCallbackRouter,
  type DecodingReport,
  decodeFormValue,
  isOrderStatus,
} from "../../src/index.js";
import {
  chunked,
  encoder,
  json,
  parsed,
  StubAuthenticator,
  trackedStream,
} from "../core/helpers.js";
import { copyWithCardFields } from "../support/card-copy.js";

type Json = Record<string, unknown>;

function fixture(name: CallbackName): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

function fixtureText(name: CallbackName): string {
  return readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8");
}

interface Call {
  payload: Json;
  raw: Json;
  /** Deep copies taken inside the function, before the CVV is dropped. */
  payloadCopy: Json;
  rawCopy: Json;
  decoding: DecodingReport;
  auth: unknown;
  printed: string[];
}

const RESULTS: Record<CallbackName, unknown> = {
  GetCheckoutCartInfo: fixture("GetCheckoutCartInfo"),
  SendOrderToMerchant: {
    InternalOrderId: "100004217",
    OrderId: 4217,
    PaymentAmount: 123.73,
    PaymentCurrencyCode: "USD",
    StatusCode: "new",
  },
  UpdateOrderStatus: { InternalOrderId: "100004217", StatusCode: "cancelled" },
  PerformOrderPayment: { PaymentAmount: "104.03", PaymentCurrencyCode: "EUR" },
  SendRMAInfoToMerchant: { Message: "RMA-000317 recorded", Description: "2 items" },
  UpdateParcelDispatch: { Message: "Parcel PCL-88213 recorded", Description: "from DE-HUB-1" },
  RemoveRestrictedProducts: undefined,
  SendAdditionalRequiredDocumentsToMerchant: { InternalOrderId: "100004217" },
  ValidateGiftCard: {
    IsValid: true,
    Balance: "75.00",
    CurrencyCode: "USD",
    IsOperatorGiftCard: false,
  },
  RedeemGiftCard: { Balance: 50 },
  RefundGiftCard: undefined,
  ValidateVoucher: { IsValid: false, ErrorCode: 100, Message: "Voucher expired" },
  NotifyOrderRefund: { InternalOrderId: "100004217", Message: "Refund RF-20931 recorded" },
  UpdateOrderShippingInfo: undefined,
};

const RESPONSES: Record<CallbackName, unknown> = {
  GetCheckoutCartInfo: fixture("GetCheckoutCartInfo"),
  SendOrderToMerchant: {
    Success: true,
    InternalOrderId: "100004217",
    OrderId: "4217",
    PaymentAmount: "123.73",
    PaymentCurrencyCode: "USD",
    StatusCode: "new",
  },
  UpdateOrderStatus: { Success: true, InternalOrderId: "100004217", StatusCode: "cancelled" },
  PerformOrderPayment: { Success: true, PaymentAmount: "104.03", PaymentCurrencyCode: "EUR" },
  SendRMAInfoToMerchant: {
    Success: "True",
    Message: "RMA-000317 recorded",
    Description: "2 items",
  },
  UpdateParcelDispatch: {
    Success: true,
    Message: "Parcel PCL-88213 recorded",
    Description: "from DE-HUB-1",
  },
  RemoveRestrictedProducts: { IsSuccess: true },
  SendAdditionalRequiredDocumentsToMerchant: { Success: true, InternalOrderId: "100004217" },
  ValidateGiftCard: {
    Success: true,
    IsValid: true,
    Balance: "75.00",
    CurrencyCode: "USD",
    IsOperatorGiftCard: false,
  },
  RedeemGiftCard: { Success: true, Balance: "50" },
  RefundGiftCard: { Success: true },
  ValidateVoucher: { Success: true, IsValid: false, ErrorCode: "100", Message: "Voucher expired" },
  NotifyOrderRefund: {
    Success: true,
    InternalOrderId: "100004217",
    Message: "Refund RF-20931 recorded",
  },
  UpdateOrderShippingInfo: { Success: true },
};

function setup(options: Partial<CallbackRouterOptions> = {}) {
  const calls = new Map<CallbackName, Call[]>();
  const failures: CallbackFailure[] = [];
  const handlers = Object.fromEntries(
    CALLBACK_NAMES.map((name) => [
      name,
      (payload: Json, context: CallbackContext<Json>) => {
        const raw = context.rawPayload;
        const list = calls.get(name) ?? [];
        list.push({
          payload,
          raw,
          payloadCopy: copyWithCardFields(payload),
          rawCopy: copyWithCardFields(raw),
          decoding: context.decoding,
          auth: context.auth,
          printed: [JSON.stringify(payload), inspect(payload, { depth: 10 }), JSON.stringify(raw)],
        });
        calls.set(name, list);
        return RESULTS[name];
      },
    ]),
  ) as CallbackRouterOptions["handlers"];
  const auth = new StubAuthenticator("allow");
  const router = createCallbackRouter({
    auth,
    basePath: "/crossborder",
    onError: (failure) => void failures.push(failure),
    handlers,
    ...options,
  });
  return { router, calls, failures, auth };
}

function get<T = unknown>(value: unknown, path: string): T {
  let current = value;
  if (path === "") return current as T;
  for (const segment of path.split(".")) current = (current as Json | undefined)?.[segment];
  return current as T;
}

/** The fixture with each decoded path replaced by its decoded value: the expected payload. */
function expectedPayload(original: Json, decoded: readonly string[]): Json {
  const copy = structuredClone(original);
  for (const path of decoded) {
    const segments = path.split(".");
    const last = segments.pop() as string;
    const parent = get<Json>(copy, segments.join("."));
    parent[last] = decodeFormValue(parent[last] as string);
  }
  return copy;
}

const JSON_CALLBACKS = CALLBACK_NAMES.filter((name) => name !== "GetCheckoutCartInfo");

async function send(name: CallbackName, body: BodyInput = fixtureText(name)) {
  const setupResult = setup();
  const response = await setupResult.router.handle({
    method: "POST",
    url: `https://shop.example.com/crossborder/${name}`,
    headers: { "content-type": "application/json", authorization: "Bearer service-token" },
    body,
  });
  const call = setupResult.calls.get(name)?.[0];
  return { ...setupResult, response, call };
}

describe("every fixture through the full pipeline", () => {
  it("there is one fixture per callback", () => {
    for (const name of CALLBACK_NAMES) expect(() => fixture(name)).not.toThrow();
  });

  for (const name of JSON_CALLBACKS) {
    describe(name, () => {
      it("is answered 200 with the callback's success body", async () => {
        const { response, failures, calls, auth } = await send(name);
        expect(failures).toStrictEqual([]);
        expect(response.status).toBe(200);
        expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(json(response)).toStrictEqual(RESPONSES[name]);
        // Only this callback's function ran, once; authentication ran for the request and payload.
        expect([...calls.keys()]).toStrictEqual([name]);
        expect(calls.get(name)).toHaveLength(1);
        expect(auth.requests).toHaveLength(1);
        expect(auth.payloads).toHaveLength(1);
      });

      it("rawPayload is the fixture as sent, unknown fields and nulls included", async () => {
        const { call } = await send(name);
        expect(call?.rawCopy).toStrictEqual(fixture(name));
        for (const key of Object.keys(fixture(name)))
          expect(Object.hasOwn(call?.raw ?? {}, key)).toBe(true);
      });

      it("the payload differs from the fixture exactly at the decoded paths", async () => {
        const { call } = await send(name);
        const decoded = call?.decoding.decoded ?? [];
        expect(call?.payloadCopy).toStrictEqual(expectedPayload(fixture(name), decoded));
        for (const path of decoded) {
          expect(get(call?.payloadCopy, path)).not.toBe(get(fixture(name), path));
        }
        expect(call?.decoding.malformed).toStrictEqual([]);
      });

      it.each<[string, () => BodyInput]>([
        ["a Buffer", () => Buffer.from(fixtureText(name))],
        ["a ReadableStream", () => trackedStream(chunked(fixtureText(name), 64)).stream],
        [
          "a Node Readable",
          () => Readable.from(chunked(fixtureText(name), 100).map((c) => Buffer.from(c))),
        ],
        ["an already-parsed object", () => parsed(fixture(name))],
        [
          "bytes with a BOM",
          () => new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode(fixtureText(name))]),
        ],
      ])("gives the same payload and answer when the body is %s", async (_label, body) => {
        const reference = await send(name);
        const other = await send(name, body());
        expect(other.failures).toStrictEqual([]);
        expect(other.response.status).toBe(200);
        expect(other.response.body).toBe(reference.response.body);
        expect(other.call?.payloadCopy).toStrictEqual(reference.call?.payloadCopy);
        expect(other.call?.decoding).toStrictEqual(reference.call?.decoding);
      });
    });
  }
});

describe("SendOrderToMerchant fixture", () => {
  it("decodes the shopper's encoded values", async () => {
    const { call } = await send("SendOrderToMerchant");
    const p = call?.payload;
    expect(get(p, "PrimaryShipping.Address1")).toBe("548 Market St.");
    expect(get(p, "PrimaryShipping.Address2")).toBe("Suite 200");
    expect(get(p, "PrimaryShipping.City")).toBe("San Francisco");
    expect(get(p, "PrimaryShipping.Email")).toBe("jane.doe@example.com");
    expect(get(p, "PrimaryShipping.Phone1")).toBe("+1 415 555 0100");
    expect(get(p, "PrimaryShipping.CountryName")).toBe("United States");
    expect(get(p, "PrimaryBilling.CustomerTaxId")).toBe("123/45-678");
    expect(get(p, "Customer.EmailAddress")).toBe("jane.doe@example.com");
    expect(get(p, "PaymentDetails.OwnerName")).toBe("Jane Doe");
    expect(get(p, "PaymentDetails.Address1")).toBe("548 Market St.");
  });

  it("decodes the tracking and waybill URLs", async () => {
    const { call } = await send("SendOrderToMerchant");
    expect(get(call?.payload, "InternationalDetails.OrderTrackingUrl")).toBe(
      "http://www.example.com/track?id=1",
    );
    expect(get(call?.payload, "InternationalDetails.OrderWaybillUrl")).toBe(
      "https://www.example.com/waybill/1Z999AA10123456784.pdf",
    );
  });

  it("leaves the operator's plain addresses untouched (no over-decoding of + 44)", async () => {
    const { call } = await send("SendOrderToMerchant");
    const p = call?.payload;
    expect(get(p, "SecondaryShipping.Phone1")).toBe("+ 44 (0)808 258 0300");
    expect(get(p, "SecondaryBilling.Phone1")).toBe("+ 44 (0)808 258 0300");
    expect(get(p, "SecondaryShipping.Email")).toBe("info@example.com");
    expect(get(p, "SecondaryShipping.Address1")).toBe("45 Leather Lane");
    expect(get(p, "SecondaryShipping.Zip")).toBe("EC1N 7TJ");
    expect(get(p, "SecondaryShipping.CountryName")).toBe("United Kingdom");
    expect(call?.decoding.unchanged).toEqual(
      expect.arrayContaining(["SecondaryShipping.Phone1", "SecondaryBilling.Email"]),
    );
    expect(call?.decoding.decoded).not.toContain("SecondaryShipping.Phone1");
  });

  it("decodes only the listed fields: free text elsewhere stays as sent", async () => {
    const { call } = await send("SendOrderToMerchant");
    const p = call?.payload;
    expect(get(p, "CustomerComments")).toBe("Please+leave+at+the+front+desk");
    expect(get(p, "Discounts.0.Description")).toBe("10%25+off+everything");
    expect(get(p, "Products.1.GiftMessage")).toBe("Happy+birthday%21");
    expect(get(p, "StatusCode")).toBe("N/A");
  });

  it("keeps unknown fields, numbers and nulls as sent", async () => {
    const { call } = await send("SendOrderToMerchant");
    const p = call?.payload;
    expect(get(p, "OriginalMerchantTotalProductsDiscountedPrice")).toBe(83.51);
    expect(get(p, "IsFirstOrderOfCustomer")).toBe(true);
    expect(get(p, "Products.0.InternationalPriceBeforeRounding")).toBe(34.49612345678901);
    expect(get(p, "InternationalDetails.TotalPriceBeforeRounding")).toBe(123.72619047619048);
    expect(get(p, "RoundingRate")).toBe(0.76978010686395393);
    expect(get(p, "MerchantOrderId")).toBeNull();
    expect(get(p, "UrlParameters")).toBe(
      '[{"Key":"utm_source","Value":"newsletter"},{"Key":"utm_campaign","Value":"spring"}]',
    );
  });

  it("the raw payload keeps the encoded values", async () => {
    const { call } = await send("SendOrderToMerchant");
    expect(get(call?.raw, "PrimaryShipping.Address1")).toBe("548+Market+St.");
    expect(get(call?.raw, "PrimaryShipping.Email")).toBe("jane.doe%40example.com");
    expect(get(call?.raw, "InternationalDetails.OrderTrackingUrl")).toBe(
      "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
    );
  });

  it("card data: real inside, masked when printed, CVV dropped afterwards", async () => {
    const { call } = await send("SendOrderToMerchant");
    expect(get(call?.payloadCopy, "PaymentDetails.CardNumber")).toBe("4111111111111111");
    expect(get(call?.payloadCopy, "PaymentDetails.CVVNumber")).toBe("737");
    for (const text of call?.printed ?? []) {
      expect(text).not.toContain("4111111111111111");
      expect(text).toContain("************1111");
      expect(text).not.toMatch(/\b737\b/);
    }
    for (const details of [
      get<Json>(call?.payload, "PaymentDetails"),
      get<Json>(call?.raw, "PaymentDetails"),
    ]) {
      expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
      expect(details.CardNumber).toBe("4111111111111111");
    }
  });
});

describe("the other fixtures", () => {
  it("UpdateOrderStatus: status compared case-insensitively, unknown objects kept", async () => {
    const { call } = await send("UpdateOrderStatus");
    const p = call?.payload;
    expect(get(p, "StatusCode")).toBe("canceled");
    expect(isOrderStatus(get(p, "StatusCode"), "CANCELLED")).toBe(true);
    expect(get(p, "OrderStatusReason")).toStrictEqual({
      OrderStatusReasonCode: "CustomerRequest",
      Name: "Customer request",
    });
    expect(get(p, "PaymentDetails")).toBeNull();
    expect(call?.decoding).toStrictEqual({ decoded: [], unchanged: [], malformed: [] });
  });

  it("PerformOrderPayment: the payment address decoded, the card real inside and masked outside", async () => {
    const { call } = await send("PerformOrderPayment");
    const p = call?.payloadCopy;
    expect(get(p, "PaymentDetails.Address1")).toBe("548 Market St.");
    expect(get(p, "PaymentDetails.City")).toBe("San Francisco");
    expect(get(p, "PaymentDetails.Email")).toBe("jane.doe@example.com");
    expect(get(p, "PaymentDetails.Phone1")).toBe("+1 415 555 0100");
    expect(get(p, "PaymentDetails.CountryName")).toBe("United States");
    expect(get(p, "PaymentDetails.StateOrProvince")).toBe("California");
    expect(get(p, "PaymentDetails.CardNumber")).toBe("4111111111111111");
    expect(get(p, "PaymentDetails.CVVNumber")).toBe("737");
    expect(call?.printed.join("\n")).not.toContain("4111111111111111");
    expect(Object.hasOwn(get<Json>(call?.payload, "PaymentDetails"), "CVVNumber")).toBe(false);
  });

  it("SendRMAInfoToMerchant: the tracking URL decoded, products as sent", async () => {
    const { call } = await send("SendRMAInfoToMerchant");
    expect(get(call?.payload, "TrackingURL")).toBe(
      "https://www.example.com/returns/track?n=JD014600006281234567",
    );
    expect(get(call?.payload, "ReturnedProducts.0.ReturnQuantity")).toBe(1);
    expect(get(call?.payload, "ReturnedProducts.1.MerchantReturnReasonCode")).toBeNull();
    expect(call?.decoding.decoded).toStrictEqual(["TrackingURL"]);
  });

  it("UpdateParcelDispatch: the parcel tracking URL decoded, both SKU spellings kept", async () => {
    const { call } = await send("UpdateParcelDispatch");
    expect(get(call?.payload, "DispatchedParcel.ParcelTracking.ParcelTrackingUrl")).toBe(
      "https://www.example.com/track?parcel=PCL-88213&lang=en",
    );
    expect(get(call?.payload, "DispatchedParcel.Products.0.Sku")).toBe("TSHIRT-BLK-M");
    expect(get(call?.payload, "DispatchedParcel.Products.1.SKU")).toBe("HOODIE-GRY-L");
    expect(get(call?.payload, "DispatchedParcel.ParcelTracking.ParcelTrackingNumber")).toBe(
      "1Z999AA10123456784",
    );
  });

  it("RemoveRestrictedProducts: the removed codes as sent", async () => {
    const { call, response } = await send("RemoveRestrictedProducts");
    expect(get(call?.payload, "RemovedProductCodes")).toStrictEqual([
      "KNIFE-CHEF-20CM",
      "PERFUME-EDP-50ML",
    ]);
    expect(get(call?.payload, "UserId")).toBeNull();
    expect(response.body).toBe('{"IsSuccess":true}');
  });

  it("SendAdditionalRequiredDocumentsToMerchant: an open object, kept whole; URLs decoded only when configured", async () => {
    const { call } = await send("SendAdditionalRequiredDocumentsToMerchant");
    expect(call?.payloadCopy).toStrictEqual(fixture("SendAdditionalRequiredDocumentsToMerchant"));
    // The payload is not shown (001 §6): nothing in it is decoded unless the merchant says so.
    const encoded = fixtureText("SendAdditionalRequiredDocumentsToMerchant").replace(
      /"https:\/\/docs\.example\.com\/orders\/GE927127001US\/([a-z.]+)"/g,
      '"https%3a%2f%2fdocs.example.com%2forders%2fGE927127001US%2f$1"',
    );
    const unconfigured = setup();
    await unconfigured.router.handle({
      method: "POST",
      url: "/crossborder/SendAdditionalRequiredDocumentsToMerchant",
      headers: {},
      body: encoded,
    });
    const raw = unconfigured.calls.get("SendAdditionalRequiredDocumentsToMerchant")?.[0];
    expect(get(raw?.payload, "Documents.0.DocumentUrl")).toBe(
      "https%3a%2f%2fdocs.example.com%2forders%2fGE927127001US%2finvoice.pdf",
    );

    const configured = setup({ decoding: { fields: { "Documents.*.DocumentUrl": "auto" } } });
    const response = await configured.router.handle({
      method: "POST",
      url: "/crossborder/SendAdditionalRequiredDocumentsToMerchant",
      headers: {},
      body: encoded,
    });
    expect(response.status).toBe(200);
    const decoded = configured.calls.get("SendAdditionalRequiredDocumentsToMerchant")?.[0];
    expect(get(decoded?.payload, "Documents.0.DocumentUrl")).toBe(
      "https://docs.example.com/orders/GE927127001US/invoice.pdf",
    );
    expect(get(decoded?.payload, "Documents.1.DocumentUrl")).toBe(
      "https://docs.example.com/orders/GE927127001US/label.zpl",
    );
    expect(decoded?.decoding.decoded).toStrictEqual([
      "Documents.0.DocumentUrl",
      "Documents.1.DocumentUrl",
    ]);
  });
});

// wire-facts §6: "nulls almost everywhere". Every field of every fixture, set to null one at a
// time, is answered 200, except the few README's "Required fields" names (a callback cannot be
// acted on without them): those are a 400 naming the field.
describe("null in any field but the documented required ones (wire-facts §6)", () => {
  const REQUIRED: Record<string, readonly string[]> = {
    SendOrderToMerchant: [
      "OrderId",
      "Products",
      "Products.*.Sku",
      "Products.*.Price",
      "Products.*.Quantity",
    ],
    UpdateOrderStatus: ["OrderId", "StatusCode"],
    PerformOrderPayment: ["OrderId", "PaymentDetails"],
    SendRMAInfoToMerchant: ["OrderId", "RMANumber", "ReturnedProducts"],
    UpdateParcelDispatch: ["OrderId", "DispatchedParcel"],
    RemoveRestrictedProducts: ["RemovedProductCodes"],
    NotifyOrderRefund: ["OrderId"],
    UpdateOrderShippingInfo: ["OrderId"],
  };

  /** Every path of an object field (not an array element) in the value. */
  function fieldPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
    if (value === null || typeof value !== "object") return [];
    return Object.entries(value).flatMap(([key, child]) => {
      const path = [...prefix, Array.isArray(value) ? Number(key) : key];
      return [...(Array.isArray(value) ? [] : [path]), ...fieldPaths(child, path)];
    });
  }

  it.each(JSON_CALLBACKS)("%s", async (name) => {
    const required = REQUIRED[name] ?? [];
    const refused: string[] = [];
    for (const path of fieldPaths(fixture(name))) {
      const body = structuredClone(fixture(name));
      let parent = body as Record<string | number, unknown>;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      parent[path[path.length - 1] as string | number] = null;
      const { response, failures } = await send(name, JSON.stringify(body));
      const general = path.map((key) => (typeof key === "number" ? "*" : key)).join(".");
      if (response.status === 200) {
        expect(required, general).not.toContain(general);
        continue;
      }
      expect(response.status, general).toBe(400);
      expect(
        failures.map((failure) => failure.kind),
        general,
      ).toStrictEqual(["invalid_payload"]);
      refused.push(general);
    }
    expect([...new Set(refused)].sort()).toStrictEqual([...required].sort());
  });
});

describe("the fixed list of encoded fields, per callback (wire-facts §4, §6)", () => {
  it.each(["ValidateGiftCard", "RedeemGiftCard", "RefundGiftCard", "ValidateVoucher"] as const)(
    "%s: the shopper's CustomerEmail decoded, nothing else",
    async (name) => {
      const { call, response } = await send(name);
      expect(response.status).toBe(200);
      expect(call?.decoding.decoded).toStrictEqual(["CustomerEmail"]);
      expect(get(call?.payloadCopy, "CustomerEmail")).toBe("jane.doe@example.com");
      expect(get(call?.rawCopy, "CustomerEmail")).toBe("jane.doe%40example.com");
    },
  );

  it("UpdateOrderShippingInfo: the address and the tracking URL decoded, as on the order", async () => {
    const { call, response } = await send("UpdateOrderShippingInfo");
    expect(response.status).toBe(200);
    expect(call?.decoding.decoded).toStrictEqual([
      "PrimaryShipping.Address1",
      "PrimaryShipping.Address2",
      "PrimaryShipping.City",
      "PrimaryShipping.Email",
      "PrimaryShipping.Phone1",
      "PrimaryShipping.CountryName",
      "InternationalDetails.OrderTrackingUrl",
    ]);
  });
});

describe("GetCheckoutCartInfo fixture (the cart a merchant returns)", () => {
  const cart = fixture("GetCheckoutCartInfo") as unknown as CheckoutCartInfo;

  it("GET with the documented parameters answers the cart, byte for byte as JSON", async () => {
    const { router, calls, failures } = setup();
    const response = await router.handle({
      method: "GET",
      url: "/crossborder/GetCheckoutCartInfo?merchantCartToken=b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f&countryCode=US&currencyCode=USD",
      headers: {},
    });
    expect(failures).toStrictEqual([]);
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual(cart);
    expect(response.body).toBe(JSON.stringify(cart));
    expect(calls.get("GetCheckoutCartInfo")?.[0]?.payloadCopy).toStrictEqual({
      merchantCartToken: "b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f",
      countryCode: "US",
      currencyCode: "USD",
    });
  });

  it("POST with a form body answers the same cart", async () => {
    const { router, calls } = setup();
    const response = await router.handle({
      method: "POST",
      url: "/crossborder/getcheckoutcartinfo/",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "merchantCartToken=tok&countryCode=AU",
    });
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual(cart);
    expect(calls.get("GetCheckoutCartInfo")?.[0]?.payloadCopy).toStrictEqual({
      merchantCartToken: "tok",
      countryCode: "AU",
    });
  });

  it("the fixture passes the library's own cart check, and a broken copy does not", async () => {
    const broken = { ...cart } as Json;
    delete broken.productsList;
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (f) => void failures.push(f),
      handlers: { GetCheckoutCartInfo: () => broken as unknown as CheckoutCartInfo },
    });
    const response = await router.handle({
      method: "GET",
      url: "/GetCheckoutCartInfo",
      headers: {},
    });
    expect(response.status).toBe(500);
    expect(failures[0]?.reason).toContain("productsList");
  });
});

describe("the pipeline refuses what it must, with the fixtures", () => {
  it("a failing authenticator stops every fixture before its body is read", async () => {
    const { router, calls } = setup({ auth: new StubAuthenticator("deny") });
    for (const name of JSON_CALLBACKS) {
      const { stream, state } = trackedStream(chunked(fixtureText(name), 32));
      const response = await router.handle({
        method: "POST",
        url: `/crossborder/${name}`,
        headers: {},
        body: stream,
      });
      expect(response.status).toBe(401);
      expect(state.pulls).toBe(0);
      // Let go of, not left hanging: the service's upload does not hold the 401 back.
      expect(state.cancelled).toBe(true);
    }
    expect(calls.size).toBe(0);
  });

  it("every fixture over the size limit is refused with 413", async () => {
    const { router, calls } = setup({ maxBodyBytes: 200 });
    for (const name of JSON_CALLBACKS) {
      const body = fixtureText(name);
      const response = await router.handle({
        method: "POST",
        url: `/crossborder/${name}`,
        headers: {},
        body,
      });
      expect(response.status).toBe(encoder.encode(body).length > 200 ? 413 : 200);
    }
    expect(calls.has("SendOrderToMerchant")).toBe(false);
  });
});
