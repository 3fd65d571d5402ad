import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  addressBookEntrySchema,
  addressSchema,
  cardFieldsSchema,
  cartDiscountSchema,
  cartProductSchema,
  checkoutCartInfoSchema,
  customerSchema,
  discountSchema,
  giftCardRequestSchema,
  internationalDetailsSchema,
  notifyOrderRefundSchema,
  orderPaymentMethodSchema,
  parcelProductSchema,
  parcelSchema,
  paymentDetailsSchema,
  performOrderPaymentSchema,
  productSchema,
  refundComponentSchema,
  refundDocumentSchema,
  refundProductSchema,
  refundReasonSchema,
  removeRestrictedProductsSchema,
  returnedProductSchema,
  sendAdditionalRequiredDocumentsSchema,
  sendOrderToMerchantSchema,
  sendRMAInfoToMerchantSchema,
  updateOrderShippingInfoSchema,
  updateOrderStatusSchema,
  updateParcelDispatchSchema,
  userDetailsSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;

function fixture(name: string): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

/** Walks a parsed fixture; throws when the path is missing so a broken fixture is loud. */
function at(value: unknown, ...path: readonly (string | number)[]): Json {
  let node = value;
  for (const key of path) {
    if (typeof node !== "object" || node === null) throw new Error(`no ${path.join(".")}`);
    node = (node as Record<string | number, unknown>)[key];
  }
  if (typeof node !== "object" || node === null) throw new Error(`no object at ${path.join(".")}`);
  return node as Json;
}

const order = fixture("SendOrderToMerchant");
const dispatch = fixture("UpdateParcelDispatch");
const rma = fixture("SendRMAInfoToMerchant");
const cart = fixture("GetCheckoutCartInfo");
const refund = fixture("NotifyOrderRefund");

describe("fixtures", () => {
  const cases: [string, z.ZodType][] = [
    ["SendOrderToMerchant", sendOrderToMerchantSchema],
    ["UpdateOrderStatus", updateOrderStatusSchema],
    ["PerformOrderPayment", performOrderPaymentSchema],
    ["SendRMAInfoToMerchant", sendRMAInfoToMerchantSchema],
    ["UpdateParcelDispatch", updateParcelDispatchSchema],
    ["RemoveRestrictedProducts", removeRestrictedProductsSchema],
    ["SendAdditionalRequiredDocumentsToMerchant", sendAdditionalRequiredDocumentsSchema],
    ["GetCheckoutCartInfo", checkoutCartInfoSchema],
    ["ValidateGiftCard", giftCardRequestSchema],
    ["RedeemGiftCard", giftCardRequestSchema],
    ["RefundGiftCard", giftCardRequestSchema],
    ["ValidateVoucher", giftCardRequestSchema],
    ["NotifyOrderRefund", notifyOrderRefundSchema],
    ["UpdateOrderShippingInfo", updateOrderShippingInfoSchema],
  ];

  it.each(cases)(
    "%s parses and comes out unchanged (no field dropped, nothing decoded)",
    (name, schema) => {
      const input = fixture(name);
      const result = schema.safeParse(input);
      expect(result.error?.issues).toBeUndefined();
      expect(result.success).toBe(true);
      expect(result.data).toEqual(input);
      // A fresh object: callers may mutate the output without touching the raw body.
      expect(result.data).not.toBe(input);
    },
  );
});

// Each object schema with a valid base object and the fields it requires.
const objectCases: [string, z.ZodObject, Json, string[]][] = [
  ["sendOrderToMerchant", sendOrderToMerchantSchema, order, ["OrderId", "Products"]],
  [
    "updateOrderStatus",
    updateOrderStatusSchema,
    fixture("UpdateOrderStatus"),
    ["OrderId", "StatusCode"],
  ],
  [
    "performOrderPayment",
    performOrderPaymentSchema,
    fixture("PerformOrderPayment"),
    ["OrderId", "PaymentDetails"],
  ],
  [
    "sendRMAInfoToMerchant",
    sendRMAInfoToMerchantSchema,
    rma,
    ["OrderId", "RMANumber", "ReturnedProducts"],
  ],
  ["updateParcelDispatch", updateParcelDispatchSchema, dispatch, ["DispatchedParcel", "OrderId"]],
  [
    "removeRestrictedProducts",
    removeRestrictedProductsSchema,
    fixture("RemoveRestrictedProducts"),
    ["RemovedProductCodes"],
  ],
  [
    "sendAdditionalRequiredDocuments",
    sendAdditionalRequiredDocumentsSchema,
    fixture("SendAdditionalRequiredDocumentsToMerchant"),
    [],
  ],
  ["checkoutCartInfo", checkoutCartInfoSchema, cart, ["productsList"]],
  ["address (primary)", addressSchema, at(order, "PrimaryShipping"), []],
  ["address (secondary)", addressSchema, at(order, "SecondaryShipping"), []],
  ["customer", customerSchema, at(order, "Customer"), []],
  // A line cannot be booked without its price and quantity (and a SKU: see order.test.ts).
  ["product", productSchema, at(order, "Products", 0), ["Price", "Quantity"]],
  ["discount", discountSchema, at(order, "Discounts", 0), []],
  ["internationalDetails", internationalDetailsSchema, at(order, "InternationalDetails"), []],
  [
    "paymentDetails",
    paymentDetailsSchema,
    at(order, "PaymentDetails"),
    // No card at all when the service collected the money (OT): nothing is required.
    [],
  ],
  ["orderPaymentMethod", orderPaymentMethodSchema, at(order, "OrderPaymentMethods", 0), []],
  ["parcel", parcelSchema, at(dispatch, "DispatchedParcel"), []],
  ["parcelProduct", parcelProductSchema, at(dispatch, "DispatchedParcel", "Products", 0), []],
  ["returnedProduct", returnedProductSchema, at(rma, "ReturnedProducts", 0), []],
  ["cartProduct", cartProductSchema, at(cart, "productsList", 0), []],
  ["cartDiscount", cartDiscountSchema, at(cart, "discountsList", 0), []],
  ["userDetails", userDetailsSchema, at(cart, "billingDetails"), []],
  ["addressBookEntry", addressBookEntrySchema, at(cart, "userDetails", "AddressDetails", 0), []],
  ["giftCardRequest", giftCardRequestSchema, fixture("ValidateGiftCard"), []],
  ["cardFields", cardFieldsSchema, at(fixture("ValidateGiftCard"), "CardFields"), []],
  ["notifyOrderRefund", notifyOrderRefundSchema, refund, ["OrderId"]],
  ["refundReason", refundReasonSchema, at(refund, "RefundReason"), []],
  ["refundProduct", refundProductSchema, at(refund, "RefundProducts", 0), []],
  ["refundComponent", refundComponentSchema, at(refund, "RefundComponents", 0), []],
  ["refundDocument", refundDocumentSchema, at(refund, "RefundDocument", 0), []],
  [
    "updateOrderShippingInfo",
    updateOrderShippingInfoSchema,
    fixture("UpdateOrderShippingInfo"),
    ["OrderId"],
  ],
];

function acceptsMissing(field: z.ZodType): boolean {
  return field.safeParse(undefined).success;
}

describe.each(objectCases)("%s", (_name, schema, base, required) => {
  const keys = Object.keys(schema.shape);

  it("parses its base object", () => {
    expect(schema.safeParse(base).success).toBe(true);
  });

  it("requires exactly the documented fields", () => {
    const actual = keys.filter((key) => !acceptsMissing(schema.shape[key] as z.ZodType));
    expect(actual.sort()).toEqual([...required].sort());
  });

  it("accepts null on every optional field at once", () => {
    const input: Json = structuredClone(base);
    for (const key of keys) {
      if (acceptsMissing(schema.shape[key] as z.ZodType)) input[key] = null;
    }
    // A product still needs one SKU spelling; null on the other proves both are nullable.
    if (schema === productSchema) input.SKU = "SKU-ONLY";
    const result = schema.safeParse(input);
    expect(result.error?.issues).toBeUndefined();
    expect(result.data).toEqual(input);
  });

  it("accepts every optional field missing", () => {
    const input: Json = {};
    for (const key of required) input[key] = base[key];
    if (schema === productSchema) input.Sku = "SKU-ONLY";
    expect(schema.safeParse(input).error?.issues).toBeUndefined();
  });

  it.each(required.length > 0 ? required : ["(none)"])(
    "reports the path when %s is missing or null",
    (key) => {
      if (key === "(none)") {
        expect(required).toEqual([]);
        return;
      }
      for (const value of [undefined, null]) {
        const input: Json = structuredClone(base);
        if (value === undefined) delete input[key];
        else input[key] = value;
        const result = schema.safeParse(input);
        expect(result.success).toBe(false);
        expect(result.error?.issues.map((issue) => issue.path)).toContainEqual([key]);
      }
    },
  );

  it("keeps unknown fields", () => {
    const input = { ...structuredClone(base), UnknownField: { nested: [1, "two", null] } };
    const result = schema.safeParse(input);
    expect(result.data).toEqual(input);
    expect((result.data as Json).UnknownField).toEqual({ nested: [1, "two", null] });
  });

  it("rejects a non-object", () => {
    for (const value of [null, "text", 42, [base]]) {
      expect(schema.safeParse(value).success).toBe(false);
    }
  });
});

describe("public surface", () => {
  it("exports every schema and helper the engine imports", async () => {
    const schemas = await import("../../src/schemas/index.js");
    const names = [
      "addressSchema",
      "productSchema",
      "discountSchema",
      "internationalDetailsSchema",
      "paymentDetailsSchema",
      "orderPaymentMethodSchema",
      "parcelSchema",
      "sendOrderToMerchantSchema",
      "updateOrderStatusSchema",
      "performOrderPaymentSchema",
      "sendRMAInfoToMerchantSchema",
      "updateParcelDispatchSchema",
      "removeRestrictedProductsSchema",
      "sendAdditionalRequiredDocumentsSchema",
      "checkoutCartInfoSchema",
      "cartProductSchema",
      "cartDiscountSchema",
      "userDetailsSchema",
      "addressBookEntrySchema",
      "giftCardRequestSchema",
      "cardFieldsSchema",
      "notifyOrderRefundSchema",
      "refundProductSchema",
      "refundComponentSchema",
      "refundDocumentSchema",
      "refundReasonSchema",
      "refundGiftCardEntrySchema",
      "refundGiftCardSchema",
      "updateOrderShippingInfoSchema",
    ] as const;
    for (const name of names) {
      const schema: unknown = schemas[name];
      expect(typeof (schema as z.ZodType | undefined)?.safeParse, name).toBe("function");
      // Every object schema keeps unknown fields (looseObject), none strips or rejects them.
      expect((schema as z.ZodObject)._zod.def.catchall?._zod.def.type, name).toBe("unknown");
    }
    expect(typeof schemas.parseSuccessValue).toBe("function");
    expect(typeof schemas.isOrderStatus).toBe("function");
  });
});
