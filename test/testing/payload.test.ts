import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import {
  type GetCheckoutCartInfoRequest,
  getCheckoutCartInfoRequestSchema,
} from "../../src/callbacks/get-checkout-cart-info.js";
import {
  CALLBACK_NAMES,
  type CallbackName,
  encodeFormValue,
  extraField,
  giftCardRequestSchema,
  notifyOrderRefundSchema,
  performOrderPaymentSchema,
  removeRestrictedProductsSchema,
  type SendOrderToMerchantRequest,
  sendAdditionalRequiredDocumentsSchema,
  sendOrderToMerchantSchema,
  sendRMAInfoToMerchantSchema,
  updateOrderShippingInfoSchema,
  updateOrderStatusSchema,
  updateParcelDispatchSchema,
} from "../../src/index.js";
import {
  type CapturedPayloads,
  capturedPayload,
  type GetCheckoutCartInfoQuery,
  type PayloadOverrides,
  SAMPLE_CART_TOKEN,
  SAMPLE_MERCHANT_GUID,
  samplePayload,
} from "../../src/testing/index.js";
import { mergeDeep } from "../../src/testing/payload.js";

const SCHEMAS: Record<CallbackName, z.ZodType> = {
  GetCheckoutCartInfo: getCheckoutCartInfoRequestSchema,
  SendOrderToMerchant: sendOrderToMerchantSchema,
  UpdateOrderStatus: updateOrderStatusSchema,
  PerformOrderPayment: performOrderPaymentSchema,
  SendRMAInfoToMerchant: sendRMAInfoToMerchantSchema,
  UpdateParcelDispatch: updateParcelDispatchSchema,
  RemoveRestrictedProducts: removeRestrictedProductsSchema,
  SendAdditionalRequiredDocumentsToMerchant: sendAdditionalRequiredDocumentsSchema,
  ValidateGiftCard: giftCardRequestSchema,
  RedeemGiftCard: giftCardRequestSchema,
  RefundGiftCard: giftCardRequestSchema,
  ValidateVoucher: giftCardRequestSchema,
  NotifyOrderRefund: notifyOrderRefundSchema,
  UpdateOrderShippingInfo: updateOrderShippingInfoSchema,
};

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8"));
}

describe("samplePayload", () => {
  it.each(CALLBACK_NAMES)("%s: passes the callback's schema", (name) => {
    const result = SCHEMAS[name].safeParse(samplePayload(name));
    expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
  });

  it.each(CALLBACK_NAMES.filter((name) => name !== "GetCheckoutCartInfo"))(
    "%s: equals the hand-made fixture",
    (name) => {
      const expected = fixture(name);
      if (name === "SendOrderToMerchant") {
        // The fixture writes `%21`; .NET's UrlEncode (and encodeFormValue) keeps `!` as it is.
        (expected.Products as Record<string, unknown>[])[1] = {
          ...(expected.Products as Record<string, unknown>[])[1],
          GiftMessage: "Happy+birthday!",
        };
        // Review PIT-7: the sample holds a `%` and a `+` that a second decode breaks; the
        // fixture (read by the schema and pipeline tests) keeps its plain values.
        expected.PrimaryShipping = {
          ...(expected.PrimaryShipping as Record<string, unknown>),
          Address2: "Unit+5%2c+100%25+Cotton+Mill",
        };
        expected.PrimaryBilling = {
          ...(expected.PrimaryBilling as Record<string, unknown>),
          Email: "jane.doe%2bshop%40example.com",
        };
      }
      expect(samplePayload(name)).toStrictEqual(expected);
    },
  );

  it("sends Brand and Categories in both spellings: {Code, Name} and the spec's {code, name} (review fidelity-2)", () => {
    // 001 §2.3 writes {code, name}; {Code, Name} is seen as well. Code reading one spelling only
    // must see an empty value in a test, not only in production.
    const [tshirt, hoodie] = samplePayload("SendOrderToMerchant").Products ?? [];
    expect(tshirt?.Brand).toStrictEqual({ Code: "ACME", Name: "Acme Apparel" });
    expect(hoodie?.Brand).toStrictEqual({ code: "ACME", name: "Acme Apparel" });
    expect(hoodie?.Categories).toStrictEqual([{ code: "HOODIES", name: "Hoodies" }]);
  });

  it("encodes the shopper's values as the service does and leaves the operator's plain", () => {
    const order = samplePayload("SendOrderToMerchant");
    expect(order.PrimaryShipping).toMatchObject({
      Address1: "548+Market+St.",
      Email: "jane.doe%40example.com",
      Phone1: "%2b1+415+555+0100",
      CountryName: "United+States",
    });
    expect(order.PrimaryBilling?.CustomerTaxId).toBe("123%2f45-678");
    expect(order.InternationalDetails?.OrderTrackingUrl).toBe(
      "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
    );
    expect(order.SecondaryShipping).toMatchObject({
      Address1: "45 Leather Lane",
      Email: "info@example.com",
      Phone1: "+ 44 (0)808 258 0300",
    });
    expect(
      samplePayload("UpdateParcelDispatch").DispatchedParcel.ParcelTracking?.ParcelTrackingUrl,
    ).toBe(encodeFormValue("https://www.example.com/track?parcel=PCL-88213&lang=en"));
    // Review spec note: SendAdditionalRequiredDocumentsToMerchant's payload is not shown (001 §6),
    // so no field of it is on the decoded lists; a sample sending DocumentUrl encoded taught that
    // the library decodes it. Its URLs are sent plain, as the function receives them.
    const documents = samplePayload("SendAdditionalRequiredDocumentsToMerchant").Documents as {
      DocumentUrl: string;
    }[];
    expect(documents.map((document) => document.DocumentUrl)).toEqual([
      "https://docs.example.com/orders/GE927127001US/invoice.pdf",
      "https://docs.example.com/orders/GE927127001US/label.zpl",
    ]);
    expect(samplePayload("GetCheckoutCartInfo")).toEqual({
      merchantCartToken: "b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f",
      countryCode: "US",
      currencyCode: "USD",
    });
  });

  it("returns a fresh object on every call", () => {
    const first = samplePayload("SendOrderToMerchant");
    first.OrderId = "changed";
    (first.Products ?? []).length = 0;
    const second = samplePayload("SendOrderToMerchant");
    expect(second.OrderId).toBe("GE927127001US");
    expect(second.Products).toHaveLength(3);
    expect(second.MerchantGUID).toBe(SAMPLE_MERCHANT_GUID);
  });

  it("deep-merges overrides: objects by key, arrays replace, undefined removes, null sets", () => {
    // A field the types do not name is an override too (cast: the types catch typos).
    const order = samplePayload("SendOrderToMerchant", {
      OrderId: "GE1",
      PrimaryShipping: { City: encodeFormValue("São Paulo"), Company: "Acme" },
      Products: [{ Sku: "ONLY", Price: 1, Quantity: 1, VATRate: 0 }],
      Customer: undefined,
      InternationalDetails: null,
      Extra: { nested: true },
    } as PayloadOverrides<SendOrderToMerchantRequest>);
    expect(order.OrderId).toBe("GE1");
    expect(order.PrimaryShipping).toMatchObject({
      City: "S%c3%a3o+Paulo",
      Company: "Acme",
      Address1: "548+Market+St.",
      Email: "jane.doe%40example.com",
    });
    expect(order.Products).toEqual([{ Sku: "ONLY", Price: 1, Quantity: 1, VATRate: 0 }]);
    expect(Object.hasOwn(order, "Customer")).toBe(false);
    expect(order.InternationalDetails).toBeNull();
    expect(extraField(order, "Extra")).toEqual({ nested: true });
    expect(order.SecondaryShipping?.Phone1).toBe("+ 44 (0)808 258 0300");
  });

  it("ignores __proto__, constructor and prototype keys at every level", () => {
    const hostile = JSON.parse(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},' +
        '"PrimaryShipping":{"__proto__":{"polluted":3},"City":"X","prototype":{}},' +
        '"Products":[{"__proto__":{"polluted":4},"Sku":"A","Price":1,"Quantity":1,"VATRate":0}]}',
    );
    const order = samplePayload("SendOrderToMerchant", hostile) as unknown as Record<
      string,
      unknown
    >;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(order)).toBe(Object.prototype);
    expect(order.polluted).toBeUndefined();
    expect(Object.hasOwn(order, "__proto__")).toBe(false);
    expect(Object.hasOwn(order, "constructor")).toBe(false);
    const shipping = order.PrimaryShipping as Record<string, unknown>;
    expect(shipping.City).toBe("X");
    expect(shipping.polluted).toBeUndefined();
    expect(Object.hasOwn(shipping, "prototype")).toBe(false);
    const product = (order.Products as Record<string, unknown>[])[0] as Record<string, unknown>;
    expect(product.polluted).toBeUndefined();
    expect(Object.keys(product)).toEqual(["Sku", "Price", "Quantity", "VATRate"]);
    expect(mergeDeep({ a: 1 }, JSON.parse('{"__proto__":{"b":2}}'))).toEqual({ a: 1 });
  });

  it("refuses an unknown callback and overrides that are not an object", () => {
    expect(() => samplePayload("SendOrder" as CallbackName)).toThrow(
      /unknown callback "SendOrder"/,
    );
    expect(() => samplePayload("UpdateOrderStatus", [] as never)).toThrow(
      /overrides must be an object/,
    );
  });
});

describe("the testing kit's payload types tell the truth (review truth TRUTH-3, TRUTH-4)", () => {
  it("capturedPayload('GetCheckoutCartInfo') is typed as the query it holds: text only, not the function's request", () => {
    const query = capturedPayload("GetCheckoutCartInfo");
    expectTypeOf(query).toEqualTypeOf<GetCheckoutCartInfoQuery>();
    expectTypeOf<
      CapturedPayloads["GetCheckoutCartInfo"]
    >().toEqualTypeOf<GetCheckoutCartInfoQuery>();
    expectTypeOf(query.IsStockValidation).toEqualTypeOf<string | undefined>();
    // Every value is text, as the service writes the URL, and the type says so.
    for (const value of Object.values(query)) expect(typeof value).toBe("string");
    expect(query).toStrictEqual({
      cartToken: SAMPLE_CART_TOKEN,
      countryCode: "GER",
      currencyCode: "USD",
      IsStockValidation: "1",
    });
    // It is not what the cart function receives (the handler reads it into that).
    // @ts-expect-error IsStockValidation is "1", not the boolean of GetCheckoutCartInfoRequest
    const request: GetCheckoutCartInfoRequest = query;
    expect(getCheckoutCartInfoRequestSchema.safeParse(request).success).toBe(false);
    // The other captured forms keep their request types.
    expectTypeOf(
      capturedPayload("SendOrderToMerchant"),
    ).toEqualTypeOf<SendOrderToMerchantRequest>();
    // A parameter removed with undefined, one changed with text.
    expect(
      capturedPayload("GetCheckoutCartInfo", { IsStockValidation: undefined, countryCode: "DE" }),
    ).toStrictEqual({ cartToken: SAMPLE_CART_TOKEN, countryCode: "DE", currencyCode: "USD" });
  });

  it("an override cannot delete a required field with undefined; an optional one still can", () => {
    // @ts-expect-error OrderId is required: the return type says it is there
    samplePayload("SendOrderToMerchant", { OrderId: undefined });
    // Nested too: a required key of a nested object does not take undefined.
    const nested: PayloadOverrides<{ o: { a: string; b?: number } }> = { o: { b: undefined } };
    // @ts-expect-error o.a is required
    nested.o = { a: undefined };
    const order = samplePayload("SendOrderToMerchant", { MerchantGUID: undefined });
    expect("MerchantGUID" in order).toBe(false);
    expectTypeOf<PayloadOverrides<{ a: string; b?: string | undefined }>>().toEqualTypeOf<{
      a?: string;
      b?: string | undefined;
    }>();
    // The untyped way to build a malformed payload: an override typed as such (`as never`), or
    // mergeDeep and a payload of your own, sent as `sendCallback`'s `payload` (typed unknown).
    const malformed = samplePayload("SendOrderToMerchant", { OrderId: undefined } as never);
    expect("OrderId" in malformed).toBe(false);
  });
});
