// The payload shapes real captures contain (wire-facts §6), one hand-written fixture per finding in
// test/fixtures/real-shapes/, each sent through a real node:http server with real RS256 tokens:
// status, answer, and what the merchant's function received.

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import {
  type CallbackFailure,
  type CheckoutCartInfo,
  createAuth,
  createCallbackRouter,
  extraField,
  type MessageResult,
  type PerformOrderPaymentResult,
  type SendOrderToMerchantResult,
  splitCartToken,
  urlParameters,
} from "../../src/index.js";
import {
  checkResponse,
  createTestKeys,
  sendCallback,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";
import { listen, type Running } from "../adapters/support/servers.js";
import { copyWithCardFields } from "../support/card-copy.js";

type Json = Record<string, unknown>;
type AnsweredCallback =
  | "SendOrderToMerchant"
  | "PerformOrderPayment"
  | "SendRMAInfoToMerchant"
  | "RemoveRestrictedProducts";

const GUID = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";

function fixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/real-shapes/${name}.json`, import.meta.url), "utf8");
}

function fixture(name: string): Json {
  return JSON.parse(fixtureText(name)) as Json;
}

const CART = fixture(
  "get-checkout-cart-info-answer-merchant-shapes",
) as unknown as CheckoutCartInfo;

// A cart written with the other spellings wire-facts §2 lists (clientIp, discountList, CartHash,
// the cart side's StateOrProvice), the address book's own fields, urlParameters as pairs and
// paymentInstallments as text: accepted and sent as returned.
const OLDER_NAMES_CART: CheckoutCartInfo = {
  productsList: [
    {
      ProductCode: "MUG-WHT",
      CartItemId: "1",
      ListPrice: 12,
      SalePrice: 12,
      OrderedQuantity: 2,
      VATRateType: { VATRateTypeCode: "STD", Name: "Standard", Rate: 20 },
      Attributes: [{ AttributeKey: "color", AttributeValue: "white" }],
    },
  ],
  clientIp: "203.0.113.42",
  discountList: [{ DiscountValue: 5, CalculationMode: 1, DiscountType: 1, Name: "Welcome" }],
  CartHash: "b2a1",
  paymentInstallments: "{2,4,6,8}",
  urlParameters: [{ Key: "utm_source", Value: "newsletter" }],
  includeVAT: 2,
  billingDetails: { FirstName: "Anna", StateOrProvice: "Berlin", CountryCode: "DE" },
  shippingDetails: {
    Salutation: "Frau",
    FirstName: "Anna",
    MiddleName: "Maria",
    LastName: "Schmidt",
    Phone2: "+49 30 1234568",
    Fax: "+49 30 1234569",
    StateOrProvice: "Berlin",
  },
  userDetails: {
    UserId: "10442",
    UserIdNumber: "X1234567",
    UserIdNumberType: { UserIdNumberTypeCode: "PASSPORT", Name: "Passport" },
    AddressDetails: [
      {
        FirstName: "Anna",
        StateOrProvice: "Berlin",
        IsShipping: true,
        IsBilling: true,
        IsDefaultShipping: true,
        IsDefaultBilling: false,
        AddressBookId: "7",
        AddressBookName: "Home",
      },
    ],
  },
};

/** What each call of a merchant's function saw, copied before the library drops the CVV. */
interface Received {
  readonly payload: Json;
  readonly raw: Json;
  readonly decoded: readonly string[];
}

let keys: TestKeys;
let server: Running;
const received: Received[] = [];
const failures: CallbackFailure[] = [];

function record(payload: unknown, raw: unknown, decoded: readonly string[]): void {
  received.push({
    payload: copyWithCardFields(payload) as Json,
    raw: copyWithCardFields(raw) as Json,
    decoded,
  });
}

beforeAll(async () => {
  keys = await createTestKeys();
  const auth = await createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: GUID,
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    onError: (failure) => void failures.push(failure),
    handlers: {
      SendOrderToMerchant: (order, context) => {
        record(order, context.rawPayload, context.decoding.decoded);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
      PerformOrderPayment: (payment, context) => {
        record(payment, context.rawPayload, context.decoding.decoded);
        // The service collected the money itself (OT): nothing to charge, the order is paid.
        const paidToService = payment.PaymentDetails.PaymentMethodCode === "OT";
        return {
          InternalOrderId: `M-${payment.OrderId}`,
          PaymentAmount: paidToService ? "0" : "19.90",
          PaymentCurrencyCode: "EUR",
        };
      },
      UpdateOrderStatus: (update, context) => {
        record(update, context.rawPayload, context.decoding.decoded);
      },
      UpdateOrderShippingInfo: (update, context) => {
        record(update, context.rawPayload, context.decoding.decoded);
      },
      NotifyOrderRefund: (refund, context) => {
        record(refund, context.rawPayload, context.decoding.decoded);
        return { InternalOrderId: refund.MerchantOrderId };
      },
      UpdateParcelDispatch: (dispatch, context) => {
        record(dispatch, context.rawPayload, context.decoding.decoded);
        return { Message: "recorded" };
      },
      GetCheckoutCartInfo: (query, context) => {
        record(query, context.rawPayload, context.decoding.decoded);
        const token = query.merchantCartToken ?? "";
        const { cartToken } = splitCartToken(token);
        if (cartToken === "older-names") return OLDER_NAMES_CART;
        if (cartToken !== "demo-cart") return { productsList: [] };
        return { ...CART, countryCode: query.countryCode };
      },
    },
  });
  server = await listen(toNodeListener(router));
});

afterAll(async () => {
  await server?.close();
});

async function call(
  path: string,
  init: { method?: "GET" | "POST"; body?: string } = {},
): Promise<{ status: number; body: Json; received: Received | undefined }> {
  received.length = 0;
  failures.length = 0;
  const token = await signServiceToken(keys.privateKey);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await server.send(`/crossborder/${path}`, {
    method: init.method ?? "POST",
    headers,
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const body = (await response.json()) as Json;
  return { status: response.status, body, received: received[0] };
}

function post(callback: string, name: string) {
  return call(callback, { body: fixtureText(name) });
}

function query(name: string): string {
  const parameters = fixture(name) as Record<string, string>;
  return `GetCheckoutCartInfo?${new URLSearchParams(parameters)}`;
}

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of path.split(".")) current = (current as Json | undefined)?.[segment];
  return current;
}

describe("real payload shapes through a node:http server with RS256 tokens", () => {
  it("PerformOrderPayment without a card (paid to the service, OT) is answered success", async () => {
    const { status, body, received } = await post(
      "PerformOrderPayment",
      "perform-order-payment-no-card",
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({
      Success: true,
      InternalOrderId: "M-GE1184032US",
      PaymentAmount: "0",
      PaymentCurrencyCode: "EUR",
    });
    expect(at(received?.payload, "PaymentDetails.CardNumber")).toBeNull();
    expect(at(received?.payload, "PaymentDetails.CVVNumber")).toBeNull();
    expect(at(received?.payload, "PaymentDetails.PaymentMethodCode")).toBe("OT");
    expect(at(received?.payload, "PaymentDetails.ExpirationDate")).toBe("2999-12-31");
  });

  it("nulls almost everywhere, whole null addresses and empty strings are accepted as sent", async () => {
    const { status, body, received } = await post("SendOrderToMerchant", "send-order-nulls");
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ Success: true, InternalOrderId: "M-GE1184033US" });
    // Nothing to decode changed the values: the function sees the fixture as sent.
    expect(received?.raw).toStrictEqual(fixture("send-order-nulls"));
    const payload = received?.payload;
    for (const path of [
      "CurrencyCode",
      "Customer.EmailAddress",
      "HubId",
      "LoyaltyPointsEarned",
      "LoyaltyPointsSpent",
      "Products.0.Attributes",
      "Products.0.Brand",
      "Products.0.BackOrderDate",
      "UrlParameters",
      "OriginalOrder",
      "InternationalDetails.ParcelsTracking",
      "InternationalDetails.CurrencyCode",
      "PaymentDetails",
      "PrimaryBilling",
      "UserId",
      "MerchantOrderId",
      "SecondaryShipping.Address1",
      "SecondaryBilling.CountryCode",
    ]) {
      expect(at(payload, path), path).toBeNull();
    }
    expect(at(payload, "CartHash")).toBe("");
    expect(at(payload, "PrimaryShipping.Company")).toBe("");
    expect(at(payload, "PrimaryShipping.StateCode")).toBe("");
  });

  it("values are kept exactly as sent: stray spaces, loose dates, integers, \\/ escapes, CRLF", async () => {
    const { status, received } = await post("SendOrderToMerchant", "send-order-values-as-sent");
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    const payload = received?.payload;
    expect(at(payload, "StatusCode")).toBe("N/A");
    expect(at(payload, "InternationalDetails.TransactionCurrencyCode")).toBe(" EUR");
    expect(at(payload, "PrimaryShipping.FirstName")).toBe("Operator ");
    expect(at(payload, "PaymentDetails.ExpirationDate")).toBe("2020-2-29");
    expect(at(payload, "InternationalDetails.ExpirationDate")).toBe("2999-12-31");
    expect(at(payload, "PrimaryShipping.Address2")).toBe("Test Address2\r\nOrderId:GE1184034US");
    expect(at(payload, "PriceCoefficientRate")).toBe(1);
    expect(at(payload, "Products.0.VATRate")).toBe(0);
    expect(at(payload, "Products.0.Price")).toBe(718.53);
    expect(at(payload, "InternationalDetails.TransactionTotalPrice")).toBe(933);
    expect(at(payload, "RoundingRate")).toBe(0.7697801068639539);
    expect(received?.decoded).toStrictEqual(["Customer.EmailAddress"]);
  });

  it("NotifyOrderRefund: amounts stay the exact text sent, the refund details of the document are typed", async () => {
    const { status, body, received } = await post(
      "NotifyOrderRefund",
      "notify-order-refund-amounts-as-text",
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ Success: true, InternalOrderId: "100004290" });
    const payload = received?.payload;
    expect(at(payload, "TotalRefundAmount")).toBe("170.1000");
    expect(at(payload, "RefundProducts.0.RefundAmount")).toBe("170.1000");
    expect(at(payload, "Refunds.0.TotalRefundAmount")).toBe("170.1000");
    expect(at(payload, "Refunds.0.OriginalTotalRefundAmount")).toBe("143.0200");
    expect(at(payload, "Refunds.0.RefundProducts.0.RefundAmountPercent")).toBe("100.0000");
    expect(at(payload, "Refunds.0.RefundComponents.0.IsChargedToMerchant")).toBe("True");
    expect(at(payload, "RefundableAmount.ProductRefundableAmount.0.RefundableQuantity")).toBe(0);
    expect(at(payload, "Refunds.0.RefundDocument.0.CreditNoteUrl")).toBe(
      "https://docs.example.com/credit-notes/RF-30112.pdf",
    );
    expect(received?.decoded).toStrictEqual(["Refunds.0.RefundDocument.0.CreditNoteUrl"]);
  });

  it("UrlParameters as a JSON text: kept as sent, and the pairs through urlParameters()", async () => {
    const { status, received } = await post(
      "SendOrderToMerchant",
      "send-order-url-parameters-text",
    );
    expect(status).toBe(200);
    const sent = fixture("send-order-url-parameters-text").UrlParameters;
    expect(at(received?.payload, "UrlParameters")).toBe(sent);
    expect(urlParameters(sent as string)).toStrictEqual([
      { Key: "utm_source", Value: "newsletter" },
      { Key: "lang", Value: "de" },
      { Key: "__proto__", Value: "x" },
    ]);
  });

  it("UrlParameters as the list itself: kept as sent, the same pairs through urlParameters()", async () => {
    const { status, body, received } = await post(
      "UpdateParcelDispatch",
      "update-parcel-dispatch-url-parameters-list",
    );
    expect(status).toBe(200);
    expect(body).toStrictEqual({ Success: true, Message: "recorded" });
    const list = at(received?.payload, "UrlParameters");
    expect(list).toStrictEqual([
      { Key: "utm_source", Value: "newsletter" },
      { Key: "lang", Value: "de" },
    ]);
    expect(urlParameters(list as never)).toStrictEqual(list);
  });

  it("PerformOrderPayment of a mixed order carries Subs, a list of open objects", async () => {
    const { status, body, received } = await post(
      "PerformOrderPayment",
      "perform-order-payment-mixed-subs",
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toMatchObject({ Success: true, PaymentAmount: "19.90" });
    expect(at(received?.payload, "Subs")).toStrictEqual(
      fixture("perform-order-payment-mixed-subs").Subs,
    );
    // wire-facts §3/§6: test payloads carry masked card strings, kept as the strings sent; the
    // owner's encoded name and country are decoded like any payment contact field.
    expect(at(received?.payload, "PaymentDetails.CardNumber")).toBe("1234");
    expect(at(received?.payload, "PaymentDetails.CVVNumber")).toBe("**3");
    expect(at(received?.payload, "PaymentDetails.OwnerName")).toBe("Jane Doe");
    expect(at(received?.payload, "PaymentDetails.CountryName")).toBe("United States");
  });

  it("GetCheckoutCartInfo as POST with a JSON body carrying MerchantGUID", async () => {
    const { status, body, received } = await call("GetCheckoutCartInfo", {
      body: fixtureText("get-checkout-cart-info-post-json"),
    });
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ ...CART, countryCode: "AU" });
    expect(received?.payload).toMatchObject({
      MerchantGUID: GUID,
      merchantCartToken: "demo-cart",
      countryCode: "AU",
    });
  });

  it("GetCheckoutCartInfo as POST with the token as a JSON number: the token as text, not a 400", async () => {
    // The token is whatever the store gave the service; the same value in a query is text.
    const { status, received } = await call("GetCheckoutCartInfo", {
      body: JSON.stringify({ MerchantGUID: GUID, merchantCartToken: 12345, countryCode: "AU" }),
    });
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(received?.payload).toMatchObject({ merchantCartToken: "12345", countryCode: "AU" });
  });

  it("GetCheckoutCartInfo as GET with the token named cartToken and IsStockValidation=1", async () => {
    const { status, body, received } = await call(
      query("get-checkout-cart-info-get-stock-validation"),
      { method: "GET" },
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ ...CART, countryCode: "US" });
    expect(received?.payload).toMatchObject({
      merchantCartToken: "demo-cart",
      cartToken: "demo-cart",
      currencyCode: "USD",
      IsStockValidation: true,
    });
  });

  it("GetCheckoutCartInfo as GET with cartToken and isFixedPriceSupported=false", async () => {
    const { status, received } = await call(query("get-checkout-cart-info-get-fixed-price"), {
      method: "GET",
    });
    expect(status).toBe(200);
    expect(received?.payload).toMatchObject({
      merchantCartToken: "demo-cart",
      isFixedPriceSupported: false,
    });
  });

  it("GetCheckoutCartInfo with a three-letter countryCode", async () => {
    const { status, body, received } = await call(
      query("get-checkout-cart-info-get-country-code-3"),
      { method: "GET" },
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ countryCode: "GER" });
    expect(received?.payload).toMatchObject({ countryCode: "GER", currencyCode: "EUR" });
  });

  it("GetCheckoutCartInfo with the token as <cartToken>-<languageId>", async () => {
    const { status, body, received } = await call(
      query("get-checkout-cart-info-get-token-language"),
      { method: "GET" },
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ ...CART, countryCode: "FR" });
    expect(received?.payload).toMatchObject({ merchantCartToken: "demo-cart-2" });
    expect(splitCartToken("demo-cart-2")).toStrictEqual({
      cartToken: "demo-cart",
      languageId: "2",
    });
  });

  it("the cart shapes merchants answer with (other attributes, extra fields, ISO-3, integers) are sent as returned", async () => {
    const { status, body } = await call(query("get-checkout-cart-info-get-country-code-3"), {
      method: "GET",
    });
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual({ ...CART, countryCode: "GER" });
    // The testing kit counts these shapes as a cart, as README says (wire-facts §6).
    const text = JSON.stringify(body);
    expect(checkResponse("GetCheckoutCartInfo", status, "application/json", text)).toStrictEqual(
      [],
    );
  });

  it("a cart written with the other spellings (clientIp, discountList, CartHash, StateOrProvice) is sent as returned", async () => {
    const { status, body } = await call("GetCheckoutCartInfo?cartToken=older-names", {
      method: "GET",
    });
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    expect(body).toStrictEqual(OLDER_NAMES_CART);
    const text = JSON.stringify(body);
    expect(checkResponse("GetCheckoutCartInfo", status, "application/json", text)).toStrictEqual(
      [],
    );
  });

  // wire-facts §3: the body is JSON, not form-encoded; README: Content-Type is not required. A
  // JSON order under another content type is read as JSON, never refused.
  it("an order's JSON body is read as JSON whatever the Content-Type says", async () => {
    for (const type of [
      "application/x-www-form-urlencoded",
      "text/plain; charset=utf-8",
      "application/octet-stream",
    ]) {
      received.length = 0;
      failures.length = 0;
      const token = await signServiceToken(keys.privateKey);
      const response = await server.send("/crossborder/SendOrderToMerchant", {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": type,
        },
        body: fixtureText("send-order-mixed-encoding"),
      });
      expect(response.status, type).toBe(200);
      expect(failures, type).toStrictEqual([]);
      expect(at(received[0]?.payload, "SecondaryShipping.Zip"), type).toBe("ON M5B 1M4");
    }
  });

  it("encoded or plain is decided per value, whatever IsEndCustomerPrimary says", async () => {
    const { status, received } = await post("SendOrderToMerchant", "send-order-mixed-encoding");
    expect(status).toBe(200);
    const payload = received?.payload;
    expect(at(payload, "PrimaryShipping.City")).toBe("New York");
    expect(at(payload, "PrimaryShipping.StateOrProvince")).toBe("New York");
    expect(at(payload, "PrimaryShipping.CountryName")).toBe("United States");
    expect(at(payload, "PrimaryShipping.Phone1")).toBe("+1 212 555 0199");
    expect(at(payload, "PrimaryShipping.Email")).toBe("hub@example.com");
    expect(at(payload, "SecondaryShipping.Zip")).toBe("ON M5B 1M4");
    expect(at(payload, "SecondaryShipping.Address1")).toBe("20 Dundas St W");
    expect(at(payload, "SecondaryShipping.Phone1")).toBe("+1 416 555 0142");
    expect(at(payload, "PrimaryBilling.CountryName")).toBe("United States");
    expect(at(payload, "PrimaryBilling.Email")).toBe("sam.lee@example.com");
    expect(at(payload, "Customer.EmailAddress")).toBe("sam.lee@example.com");
    expect(received?.decoded).not.toContain("PrimaryShipping.StateOrProvince");
  });

  it("phones the operator's own samples already over-decoded stay as sent", async () => {
    const { status, received } = await post(
      "SendOrderToMerchant",
      "send-order-over-decoded-phones",
    );
    expect(status).toBe(200);
    const payload = received?.payload;
    expect(at(payload, "PrimaryShipping.Phone1")).toBe(" 972 73 204 1384");
    expect(at(payload, "SecondaryShipping.Phone1")).toBe("  44 (0)808 258 0300");
    expect(at(payload, "SecondaryShipping.Phone2")).toBe("+ 44 (0)808 258 0300");
    expect(at(payload, "PrimaryShipping.City")).toBe("Tel Aviv");
  });

  it("Salutation, StateCode, CityRegion and VATRegistrationNumber are decoded too; CountryCode3 kept", async () => {
    const { status, received } = await post(
      "SendOrderToMerchant",
      "send-order-more-encoded-fields",
    );
    expect(failures).toStrictEqual([]);
    expect(status).toBe(200);
    const payload = received?.payload;
    expect(at(payload, "PrimaryShipping.Salutation")).toBe("Mme.");
    expect(at(payload, "PrimaryShipping.StateCode")).toBe("Réunion");
    expect(at(payload, "PrimaryShipping.StateOrProvince")).toBe("La Réunion");
    expect(at(payload, "PrimaryShipping.CityRegion")).toBe("Le Tampon");
    expect(at(payload, "PrimaryShipping.CountryName")).toBe("Réunion");
    expect(at(payload, "PrimaryShipping.CountryCode3")).toBe("REU");
    expect(at(payload, "PrimaryBilling.Salutation")).toBe("Dr med.");
    expect(at(payload, "PrimaryBilling.StateCode")).toBe("NY");
    expect(at(payload, "PrimaryBilling.VATRegistrationNumber")).toBe("FR 12 345678901");
    expect(at(payload, "VATRegistrationNumber")).toBe("GB/123 456 789");
    expect(extraField(payload as object, "VATRegistrationNumber")).toBe("GB/123 456 789");
  });
});

// The same captured order shapes reach every callback that carries the order object: each fact
// above is checked on each of them, not on SendOrderToMerchant alone (wire-facts §3, §6).
describe("the order shapes of real captures on every order callback", () => {
  type OrderCallback =
    | "SendOrderToMerchant"
    | "UpdateOrderStatus"
    | "PerformOrderPayment"
    | "UpdateOrderShippingInfo";
  const ORDER_CALLBACKS: readonly OrderCallback[] = [
    "SendOrderToMerchant",
    "UpdateOrderStatus",
    "PerformOrderPayment",
    "UpdateOrderShippingInfo",
  ];
  // What a callback requires beyond the captured order, added in front of the text as sent (so
  // its escapes and long decimals reach the parser unchanged): UpdateOrderStatus its status, and
  // PerformOrderPayment the payment of the capture without a card.
  const NO_CARD = JSON.stringify(fixture("perform-order-payment-no-card").PaymentDetails);

  function bodyFor(callback: OrderCallback, name: string): string {
    let text = fixtureText(name);
    const sent = JSON.parse(text) as Json;
    if (callback === "PerformOrderPayment" && sent.PaymentDetails === null) {
      text = text.replace('"PaymentDetails": null', `"PaymentDetails": ${NO_CARD}`);
    } else if (callback === "PerformOrderPayment" && sent.PaymentDetails === undefined) {
      text = text.replace("{", `{"PaymentDetails": ${NO_CARD},`);
    }
    if (callback === "UpdateOrderStatus" && sent.StatusCode === undefined) {
      text = text.replace("{", '{"StatusCode": "CANCELLED",');
    }
    return text;
  }

  async function postTo(callback: OrderCallback, name: string, edit = (text: string) => text) {
    const body = edit(bodyFor(callback, name));
    const result = await call(callback, { body });
    expect(failures, `${callback} ${name}`).toStrictEqual([]);
    expect(result.status, `${callback} ${name}`).toBe(200);
    expect(result.body.Success, `${callback} ${name}`).toBe(true);
    return result.received;
  }

  function expectAt(payload: unknown, expected: Record<string, unknown>, label: string): void {
    for (const [path, value] of Object.entries(expected)) {
      expect(at(payload, path), `${label}: ${path}`).toStrictEqual(value);
    }
  }

  it.each(ORDER_CALLBACKS)(
    "%s: nulls almost everywhere, null addresses, empty strings",
    async (callback) => {
      const received = await postTo(callback, "send-order-nulls");
      const nulls = [
        "CurrencyCode",
        "Customer.EmailAddress",
        "HubId",
        "LoyaltyPointsEarned",
        "LoyaltyPointsSpent",
        "Products.0.Attributes",
        "Products.0.Brand",
        "Products.0.BackOrderDate",
        "UrlParameters",
        "OriginalOrder",
        "InternationalDetails.ParcelsTracking",
        "PrimaryBilling",
        "UserId",
        "MerchantOrderId",
        "SecondaryShipping.Address1",
        "SecondaryShipping.CountryCode3",
        "SecondaryBilling.CountryCode",
      ];
      expectAt(received?.payload, Object.fromEntries(nulls.map((path) => [path, null])), callback);
      expectAt(
        received?.payload,
        {
          CartHash: "",
          "PrimaryShipping.Company": "",
          "PrimaryShipping.StateCode": "",
          "PrimaryShipping.Address1": "Hauptstrasse 5",
          "PrimaryShipping.CountryCode3": "DEU",
          StatusCode: "N/A",
          PaymentDetails: callback === "PerformOrderPayment" ? JSON.parse(NO_CARD) : null,
        },
        callback,
      );
    },
  );

  it.each(ORDER_CALLBACKS)(
    "%s: stray spaces, loose dates, integers, long tails, \\/ escapes, CRLF kept",
    async (callback) => {
      // The formatter writes the fixture's numbers short: the captured "718.5300" is put back here.
      const received = await postTo(callback, "send-order-values-as-sent", (text) => {
        const edited = text.replace('"Price": 718.53,', '"Price": 718.5300,');
        expect(edited).toContain("718.5300");
        return edited;
      });
      expectAt(
        received?.payload,
        {
          StatusCode: "N/A",
          "InternationalDetails.TransactionCurrencyCode": " EUR",
          "PrimaryShipping.FirstName": "Operator ",
          "PaymentDetails.ExpirationDate": "2020-2-29",
          "InternationalDetails.ExpirationDate": "2999-12-31",
          "PrimaryShipping.Address2": "Test Address2\r\nOrderId:GE1184034US",
          PriceCoefficientRate: 1,
          "Products.0.VATRate": 0,
          "Products.0.Price": 718.53,
          "InternationalDetails.TransactionTotalPrice": 933,
          RoundingRate: 0.7697801068639539,
          // The operator's plain address is not decoded: its phone keeps its "+".
          "PrimaryShipping.Phone1": "+ 44 (0)808 258 0300",
          "PrimaryShipping.Email": "info@example.com",
          "PaymentDetails.CardNumber": "1234",
        },
        callback,
      );
      expect(received?.decoded, callback).toStrictEqual(["Customer.EmailAddress"]);
    },
  );

  // wire-facts §3: order products carry PriceBeforeRoundingRate, HandlingCode, ListPrice,
  // InternationalListPrice, DiscountedPriceForCustoms, CustomerVATRate; orders carry fields such as
  // OriginalMerchantTotalProductsDiscountedPrice, and unknown ones: all kept, on each order callback.
  it.each(ORDER_CALLBACKS)(
    "%s: the undocumented product and order fields are kept as sent",
    async (callback) => {
      const text = readFileSync(
        new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
        "utf8",
      );
      const sent = JSON.parse(text) as Json;
      const result = await call(callback, { body: text });
      expect(failures, callback).toStrictEqual([]);
      expect(result.status, callback).toBe(200);
      const payload = result.received?.payload;
      expect(at(payload, "Products"), callback).toStrictEqual(sent.Products);
      for (const field of [
        "PriceBeforeRoundingRate",
        "HandlingCode",
        "ListPrice",
        "InternationalListPrice",
        "DiscountedPriceForCustoms",
        "CustomerVATRate",
      ]) {
        expect(at(sent, `Products.0.${field}`), `the fixture carries ${field}`).toBeDefined();
        expect(at(payload, `Products.0.${field}`), `${callback}: ${field}`).toStrictEqual(
          at(sent, `Products.0.${field}`),
        );
      }
      expect(at(payload, "OriginalMerchantTotalProductsDiscountedPrice"), callback).toBe(83.51);
      expect(at(payload, "IsFirstOrderOfCustomer"), callback).toBe(true);
      expect(result.received?.raw, callback).toStrictEqual(sent);
    },
  );

  // wire-facts §5/§6: the operator's cartridge compares MerchantGUID case-insensitively; a GUID
  // written in capitals, or under another key case, is the merchant's own.
  it.each(ORDER_CALLBACKS)(
    "%s: MerchantGUID in capitals and under another key case",
    async (callback) => {
      for (const [from, to] of [
        [`"MerchantGUID": "${GUID}"`, `"MerchantGUID": "${GUID.toUpperCase()}"`],
        [`"MerchantGUID": "${GUID}"`, `"merchantGuid": "${GUID.toUpperCase()}"`],
      ] as const) {
        const received = await postTo(callback, "send-order-mixed-encoding", (text) => {
          expect(text).toContain(from);
          return text.replace(from, to);
        });
        expect(received?.payload, callback).toBeDefined();
      }
      // Another merchant's GUID is still refused.
      const other = await call(callback, {
        body: bodyFor(callback, "send-order-mixed-encoding").replace(
          GUID,
          GUID.replace("3f0e", "4f0e"),
        ),
      });
      expect(other.status, callback).toBe(401);
    },
  );

  it.each(ORDER_CALLBACKS)("%s: encoded or plain decided per value", async (callback) => {
    const received = await postTo(callback, "send-order-mixed-encoding");
    expectAt(
      received?.payload,
      {
        "PrimaryShipping.City": "New York",
        "PrimaryShipping.StateOrProvince": "New York",
        "PrimaryShipping.CountryName": "United States",
        "PrimaryShipping.Phone1": "+1 212 555 0199",
        "PrimaryShipping.Email": "hub@example.com",
        "SecondaryShipping.Zip": "ON M5B 1M4",
        "SecondaryShipping.Address1": "20 Dundas St W",
        "SecondaryShipping.Phone1": "+1 416 555 0142",
        "PrimaryBilling.CountryName": "United States",
        "PrimaryBilling.Email": "sam.lee@example.com",
        "Customer.EmailAddress": "sam.lee@example.com",
      },
      callback,
    );
    expect(received?.raw, callback).toMatchObject({
      PrimaryShipping: { City: "New+York" },
      SecondaryShipping: { Zip: "ON+M5B+1M4", Phone1: "%2b1+416+555+0142" },
    });
  });

  it.each(ORDER_CALLBACKS)("%s: phones already over-decoded stay as sent", async (callback) => {
    const received = await postTo(callback, "send-order-over-decoded-phones");
    expectAt(
      received?.payload,
      {
        "PrimaryShipping.Phone1": " 972 73 204 1384",
        "SecondaryShipping.Phone1": "  44 (0)808 258 0300",
        "SecondaryShipping.Phone2": "+ 44 (0)808 258 0300",
        "SecondaryShipping.Address1": "45 Leather Lane",
        "PrimaryShipping.City": "Tel Aviv",
      },
      callback,
    );
  });

  // wire-facts §4: HttpUtility.UrlEncode's form (lower-case hex, "+" for a space, "%2b" for a
  // literal plus), decoded exactly once, per value, and text that only looks encoded kept.
  it.each(ORDER_CALLBACKS)(
    "%s: %%xx in lower case, %%2b, decoded once; 100%% and %%zz kept",
    async (callback) => {
      const order = {
        OrderId: "GE1184041US",
        MerchantGUID: GUID,
        StatusCode: "CANCELLED",
        Products: [{ Sku: "MUG-WHT", Price: 12, Quantity: 1, VATRate: 20, CartItemId: "1" }],
        Customer: { EmailAddress: "jane.doe%40example.com", IsEndCustomerPrimary: true },
        PrimaryShipping: {
          Address1: "100% Cotton Lane",
          Address2: "Suite+%2540",
          City: "%zz",
          Company: "A+%2b+B",
          Phone1: "%2b44+20+7946+0958",
          Phone2: "+442079460958",
          Email: "jane.doe%40example.com",
          CountryName: "United+States",
        },
        InternationalDetails: {
          OrderTrackingUrl: "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
        },
        PaymentDetails: JSON.parse(NO_CARD),
      };
      const result = await call(callback, { body: JSON.stringify(order) });
      expect(result.status, callback).toBe(200);
      const payload = result.received?.payload;
      expectAt(
        payload,
        {
          "Customer.EmailAddress": "jane.doe@example.com",
          "PrimaryShipping.Address1": "100% Cotton Lane",
          "PrimaryShipping.Address2": "Suite %40",
          "PrimaryShipping.City": "%zz",
          "PrimaryShipping.Company": "A + B",
          "PrimaryShipping.Phone1": "+44 20 7946 0958",
          "PrimaryShipping.Phone2": "+442079460958",
          "PrimaryShipping.Email": "jane.doe@example.com",
          "PrimaryShipping.CountryName": "United States",
          "InternationalDetails.OrderTrackingUrl": "http://www.example.com/track?id=1",
        },
        callback,
      );
      // A malformed value is kept as sent, never a 400; the raw payload is the body as sent.
      expect(failures, callback).toStrictEqual([]);
      expect(result.received?.raw, callback).toStrictEqual(order);
    },
  );

  // Review spec D3: ParcelsTracking entries are 000 §2.3's ParcelTracking, whose URL 001 §4.6 says
  // arrives percent-encoded; UpdateParcelDispatch decoded it, the order callbacks did not.
  it.each(ORDER_CALLBACKS)(
    "%s: InternationalDetails.ParcelsTracking[].ParcelTrackingUrl decoded like OrderTrackingUrl; a plain one kept",
    async (callback) => {
      const encoded = "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1";
      const order = {
        OrderId: "GE1184042US",
        MerchantGUID: GUID,
        StatusCode: "CANCELLED",
        Products: [{ Sku: "MUG-WHT", Price: 12, Quantity: 1, VATRate: 20, CartItemId: "1" }],
        InternationalDetails: {
          OrderTrackingUrl: encoded,
          ParcelsTracking: [
            { ParcelCode: "P1", ParcelTrackingNumber: "1Z999", ParcelTrackingUrl: encoded },
            {
              ParcelCode: "P2",
              ParcelTrackingNumber: "1Z998",
              ParcelTrackingUrl: "https://www.example.com/track?id=2&x=a+b",
            },
            { ParcelCode: "P3", ParcelTrackingNumber: null, ParcelTrackingUrl: null },
          ],
        },
        PaymentDetails: JSON.parse(NO_CARD),
      };
      const result = await call(callback, { body: JSON.stringify(order) });
      expect(result.status, callback).toBe(200);
      expectAt(
        result.received?.payload,
        {
          "InternationalDetails.OrderTrackingUrl": "http://www.example.com/track?id=1",
          "InternationalDetails.ParcelsTracking.0.ParcelTrackingUrl":
            "http://www.example.com/track?id=1",
          "InternationalDetails.ParcelsTracking.0.ParcelCode": "P1",
          "InternationalDetails.ParcelsTracking.1.ParcelTrackingUrl":
            "https://www.example.com/track?id=2&x=a+b",
          "InternationalDetails.ParcelsTracking.2.ParcelTrackingUrl": null,
        },
        callback,
      );
      expect(failures, callback).toStrictEqual([]);
      expect(result.received?.raw, callback).toStrictEqual(order);
    },
  );

  it.each(ORDER_CALLBACKS)(
    "%s: Salutation, StateCode, CityRegion, VATRegistrationNumber decoded; CountryCode3 kept",
    async (callback) => {
      const received = await postTo(callback, "send-order-more-encoded-fields");
      expectAt(
        received?.payload,
        {
          "PrimaryShipping.Salutation": "Mme.",
          "PrimaryShipping.StateCode": "Réunion",
          "PrimaryShipping.StateOrProvince": "La Réunion",
          "PrimaryShipping.CityRegion": "Le Tampon",
          "PrimaryShipping.CountryName": "Réunion",
          "PrimaryShipping.CountryCode3": "REU",
          "PrimaryBilling.Salutation": "Dr med.",
          "PrimaryBilling.VATRegistrationNumber": "FR 12 345678901",
          "PrimaryBilling.CountryCode3": "FRA",
          VATRegistrationNumber: "GB/123 456 789",
        },
        callback,
      );
    },
  );
});

describe("answers merchants send to the order callbacks (wire-facts §6), returned by their functions", () => {
  // What integrations written without this library answer, returned as is by a function.
  const answers = fixture("order-callback-answers-merchants-send") as {
    results: Record<AnsweredCallback, unknown>;
    refusals: { status: number; body: Json }[];
  };
  let answering: Running;

  beforeAll(async () => {
    const router = createCallbackRouter({
      auth: await createAuth({
        jwt: { environment: "test", keys: { test: keys.publicKey } },
        merchantGuid: GUID,
      }),
      onError: (failure) => void failures.push(failure),
      handlers: {
        SendOrderToMerchant: () => answers.results.SendOrderToMerchant as SendOrderToMerchantResult,
        PerformOrderPayment: () => answers.results.PerformOrderPayment as PerformOrderPaymentResult,
        SendRMAInfoToMerchant: () => answers.results.SendRMAInfoToMerchant as MessageResult,
        RemoveRestrictedProducts: () => answers.results.RemoveRestrictedProducts as undefined,
      },
    });
    answering = await listen(toNodeListener(router));
  });

  afterAll(async () => {
    await answering?.close();
  });

  async function answer(callback: AnsweredCallback) {
    failures.length = 0;
    const sent = await sendCallback(answering.baseUrl, callback, {
      privateKey: keys.privateKey,
      merchantGuid: GUID,
    });
    return { status: sent.status, body: sent.body, problems: sent.problems };
  }

  it("Success as text and every ResponseInfo key present with nulls: the known fields, no warning", async () => {
    expect(await answer("SendOrderToMerchant")).toStrictEqual({
      status: 200,
      body: { Success: true, InternalOrderId: "100004217", OrderId: "4217" },
      problems: [],
    });
    expect(failures).toStrictEqual([]);
  });

  it("ErrorCode as the number 100 is written as text, like the other ResponseInfo fields", async () => {
    expect(await answer("PerformOrderPayment")).toStrictEqual({
      status: 200,
      body: {
        Success: true,
        InternalOrderId: "100004218",
        PaymentAmount: "104",
        PaymentCurrencyCode: "EUR",
        StatusCode: "paid",
        ErrorCode: "100",
      },
      problems: [],
    });
    expect(failures).toStrictEqual([]);
  });

  it("a boolean Success for SendRMAInfoToMerchant, Success for RemoveRestrictedProducts: each callback's own verdict", async () => {
    expect(await answer("SendRMAInfoToMerchant")).toStrictEqual({
      status: 200,
      body: { Success: "True" },
      problems: [],
    });
    expect(await answer("RemoveRestrictedProducts")).toStrictEqual({
      status: 200,
      body: { IsSuccess: true },
      problems: [],
    });
    expect(failures).toStrictEqual([]);
  });

  it("refusals with ErrorCode 100, as HTTP 200, 400 or 500, read as well-formed refusals by checkResponse", () => {
    for (const refusal of answers.refusals) {
      const text = JSON.stringify(refusal.body);
      const expectStatus = refusal.status;
      expect(
        checkResponse("SendOrderToMerchant", refusal.status, "application/json", text, {
          expectStatus,
          expect: "refusal",
        }),
      ).toStrictEqual([]);
      // Unless a test expects it, a refusal is a problem (as a 200: the refusal; as a 4xx: the
      // status): the endpoint turned the order down.
      const flagged = checkResponse(
        "SendOrderToMerchant",
        refusal.status,
        "application/json",
        text,
      );
      expect(flagged).toHaveLength(1);
    }
  });
});
