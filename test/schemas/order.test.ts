import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createPerformOrderPaymentHandler,
  createUpdateOrderShippingInfoHandler,
  createUpdateOrderStatusHandler,
} from "../../src/index.js";
import {
  type Address,
  addressSchema,
  type Order,
  type Product,
  type ProductLine,
  performOrderPaymentSchema,
  productSchema,
  sendOrderToMerchantSchema,
  type UpdateOrderStatusRequest,
  updateOrderShippingInfoSchema,
  updateOrderStatusSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;
type Path = readonly (string | number)[];
const REMOVE = Symbol("remove");

function fixture(name: string): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

/** A deep copy of `base` with the value at `path` replaced (or removed with REMOVE). */
function edit(base: Json, path: Path, value: unknown): Json {
  const copy = structuredClone(base);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === REMOVE) delete node[last];
  else node[last] = value;
  return copy;
}

function issuePaths(result: { error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((issue) => issue.path.join("."));
}

const order = fixture("SendOrderToMerchant");

describe("sendOrderToMerchantSchema", () => {
  it("keeps encoded and plain values exactly as sent", () => {
    const parsed = sendOrderToMerchantSchema.parse(order);
    expect(parsed.PrimaryShipping?.Address1).toBe("548+Market+St.");
    expect(parsed.PrimaryShipping?.Email).toBe("jane.doe%40example.com");
    expect(parsed.PrimaryShipping?.CountryName).toBe("United+States");
    expect(parsed.PrimaryShipping?.Phone1).toBe("%2b1+415+555+0100");
    expect(parsed.SecondaryShipping?.Phone1).toBe("+ 44 (0)808 258 0300");
    expect(parsed.SecondaryShipping?.Address1).toBe("45 Leather Lane");
    expect(parsed.SecondaryBilling?.Email).toBe("info@example.com");
    expect(parsed.InternationalDetails?.OrderTrackingUrl).toBe(
      "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
    );
    expect(parsed.Customer?.IsEndCustomerPrimary).toBe(true);
  });

  it("keeps many-decimal numbers as the same doubles", () => {
    const parsed = sendOrderToMerchantSchema.parse(order);
    expect(parsed.RoundingRate).toBe(order.RoundingRate);
    expect(Number.isInteger(parsed.RoundingRate)).toBe(false);
    expect(String(parsed.RoundingRate).length).toBeGreaterThan(15);
    expect(parsed.Products[0]?.RoundingRate).toBe(parsed.RoundingRate);
  });

  it("keeps unknown fields at the top level and nested", () => {
    const parsed = sendOrderToMerchantSchema.parse(order);
    expect(parsed.OriginalMerchantTotalProductsDiscountedPrice).toBe(83.51);
    expect(parsed.IsFirstOrderOfCustomer).toBe(true);
    expect(parsed.Products[0]?.InternationalPriceBeforeRounding).toBe(34.49612345678901);
    expect(parsed.InternationalDetails?.TotalPriceBeforeRounding).toBe(123.72619047619048);
    expect(parsed.CustomerDTBreakdown).toEqual({ Duties: 4.31, OtherFees: 0.82, SalesTaxes: 1.02 });
  });

  it.each([
    [["OrderId"], "OrderId"],
    [["Products"], "Products"],
    [["Products", 1, "Price"], "Products.1.Price"],
    [["Products", 1, "Quantity"], "Products.1.Quantity"],
  ] as const)("rejects a missing required %j with its path", (path, expected) => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, path, REMOVE));
    expect(result.success).toBe(false);
    expect(issuePaths(result)).toEqual([expected]);
  });

  it.each([
    [["OrderId"], 927127, "OrderId"],
    [["Products", 0, "Quantity"], "2", "Products.0.Quantity"],
    [["Products", 0, "Price"], "29.00", "Products.0.Price"],
    [["Products", 0, "VATRate"], "20", "Products.0.VATRate"],
    [["Discounts", 0, "Price"], "8.90", "Discounts.0.Price"],
    [["PaymentDetails", "CardNumber"], 4111111111111111, "PaymentDetails.CardNumber"],
    [["Products", 0, "IsBackOrdered"], "false", "Products.0.IsBackOrdered"],
    [["Products", 0, "Attributes", 0, "AttributeKey"], 7, "Products.0.Attributes.0.AttributeKey"],
    [["Products"], { 0: {} }, "Products"],
    [["Discounts", 0, "CalculationMode"], "1", "Discounts.0.CalculationMode"],
    [["Customer", "IsEndCustomerPrimary"], "true", "Customer.IsEndCustomerPrimary"],
    [["ClearCart"], 1, "ClearCart"],
    [["CookieConsent"], "1", "CookieConsent"],
    [["HubId"], "1", "HubId"],
    [["PrimaryShipping", "Zip"], 94104, "PrimaryShipping.Zip"],
    [["InternationalDetails", "TotalPrice"], "123.73", "InternationalDetails.TotalPrice"],
    [["InternationalDetails", "DutiesGuaranteed"], "True", "InternationalDetails.DutiesGuaranteed"],
    [["OrderPaymentMethods", 0, "IsGiftCard"], 0, "OrderPaymentMethods.0.IsGiftCard"],
    [["CustomerDTBreakdown"], "n/a", "CustomerDTBreakdown"],
  ] as const)("rejects a wrong type at %j without coercing", (path, value, expected) => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, path, value));
    expect(result.success).toBe(false);
    expect(issuePaths(result)).toEqual([expected]);
  });

  it("rejects NaN and Infinity decimals (finite numbers only)", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const result = sendOrderToMerchantSchema.safeParse(
        edit(order, ["Products", 0, "Price"], value),
      );
      expect(issuePaths(result)).toEqual(["Products.0.Price"]);
    }
  });

  it("accepts integers where decimals are expected", () => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, ["Products", 0, "Price"], 29));
    expect(result.success).toBe(true);
  });

  it("accepts decimals where integers are documented: a whole-number check would only lose orders", () => {
    let input = edit(order, ["Discounts", 0, "DiscountType"], 1.5);
    input = edit(input, ["OrderCreationSource"], 0.5);
    input = edit(input, ["CookieConsent"], 2.25);
    const parsed = sendOrderToMerchantSchema.parse(input);
    expect([
      parsed.Discounts?.[0]?.DiscountType,
      parsed.OrderCreationSource,
      parsed.CookieConsent,
    ]).toStrictEqual([1.5, 0.5, 2.25]);
  });

  it("reports every issue of a payload in one pass", () => {
    let input = edit(order, ["OrderId"], REMOVE);
    input = edit(input, ["Products", 0, "Quantity"], "2");
    input = edit(input, ["PrimaryBilling", "City"], 1);
    expect(issuePaths(sendOrderToMerchantSchema.safeParse(input)).sort()).toEqual([
      "OrderId",
      "PrimaryBilling.City",
      "Products.0.Quantity",
    ]);
  });

  it("accepts an empty product list (the list itself is what is required)", () => {
    expect(sendOrderToMerchantSchema.safeParse(edit(order, ["Products"], [])).success).toBe(true);
  });

  it("uses the documented field names in its types", () => {
    expectTypeOf<Order["OrderId"]>().toEqualTypeOf<string>();
    expectTypeOf<Order["Products"]>().toEqualTypeOf<Product[]>();
    expectTypeOf<Product["Price"]>().toEqualTypeOf<number>();
    expectTypeOf<Product["Sku"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<Address["StateOrProvince"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<UpdateOrderStatusRequest["StatusCode"]>().toEqualTypeOf<string>();
    expect(Object.keys(sendOrderToMerchantSchema.shape)).toContain("OrderId");
  });
});

describe("product SKU spellings", () => {
  const product = (order.Products as Json[])[0] as Json;

  it("accepts Sku, SKU, or both", () => {
    const { Sku, ...rest } = product;
    expect(productSchema.safeParse({ ...rest, Sku }).success).toBe(true);
    expect(productSchema.safeParse({ ...rest, SKU: Sku }).data?.SKU).toBe("TSHIRT-BLK-M");
    expect(productSchema.safeParse({ ...rest, Sku, SKU: Sku }).success).toBe(true);
    expect(productSchema.safeParse({ ...rest, Sku: null, SKU: Sku }).success).toBe(true);
    expect(productSchema.safeParse({ ...rest, Sku: "", SKU: null }).success).toBe(true);
  });

  it("reports a product with neither spelling at Sku with zod's own message", () => {
    const { Sku: _sku, ...rest } = product;
    for (const input of [rest, { ...rest, Sku: null }, { ...rest, Sku: null, SKU: null }]) {
      const result = productSchema.safeParse(input);
      expect(result.success).toBe(false);
      expect(result.error?.issues).toEqual([
        expect.objectContaining({
          code: "invalid_type",
          expected: "string",
          path: ["Sku"],
          message: expect.stringMatching(
            /^Invalid input: expected string, received (undefined|null)$/,
          ),
        }),
      ]);
    }
  });

  it("reports a missing SKU beside other issues, and inside the order with the full path", () => {
    const { Sku: _sku, ...rest } = product;
    const alone = productSchema.safeParse({ ...rest, Quantity: "1" });
    expect(issuePaths(alone).sort()).toEqual(["Quantity", "Sku"]);
    const inOrder = sendOrderToMerchantSchema.safeParse(
      edit(order, ["Products", 1, "Sku"], REMOVE),
    );
    expect(issuePaths(inOrder)).toEqual(["Products.1.Sku"]);
  });

  it("reports a wrongly typed SKU once, at the field itself", () => {
    const { Sku: _sku, ...rest } = product;
    expect(issuePaths(productSchema.safeParse({ ...rest, SKU: 12345 }))).toEqual(["SKU"]);
    expect(issuePaths(productSchema.safeParse({ ...rest, Sku: 12345 }))).toEqual(["Sku"]);
  });
});

describe("address", () => {
  it("accepts StateOrProvince and the cart spelling StateOrProvice on order addresses", () => {
    const shipping = order.PrimaryShipping as Json;
    const { StateOrProvince, ...rest } = shipping;
    expect(addressSchema.parse({ ...rest, StateOrProvice: StateOrProvince }).StateOrProvice).toBe(
      "California",
    );
    expect(addressSchema.parse({ ...rest, StateOrProvince }).StateOrProvince).toBe("California");
    const inOrder = edit(order, ["PrimaryBilling", "StateOrProvice"], "California");
    expect(sendOrderToMerchantSchema.safeParse(inOrder).success).toBe(true);
  });

  it("rejects a number for any address text field", () => {
    expect(issuePaths(addressSchema.safeParse({ Phone1: 14155550100 }))).toEqual(["Phone1"]);
    expect(issuePaths(addressSchema.safeParse({ StateOrProvice: 1 }))).toEqual(["StateOrProvice"]);
  });
});

describe("UrlParameters", () => {
  it.each([
    ["a JSON string", '[{"Key":"a","Value":"b"}]'],
    [
      "a list",
      [
        { Key: "a", Value: "b" },
        { Key: "c", Value: null, Extra: 1 },
      ],
    ],
    ["an empty list", []],
    ["null", null],
  ])("accepts %s", (_label, value) => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, ["UrlParameters"], value));
    expect(result.error?.issues).toBeUndefined();
    expect(result.data?.UrlParameters).toEqual(value);
  });

  it("accepts it missing", () => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, ["UrlParameters"], REMOVE));
    expect(result.success).toBe(true);
    expect(result.data && "UrlParameters" in result.data).toBe(false);
  });

  it.each([
    ["a number", 1],
    ["an object", { Key: "a", Value: "b" }],
    ["a list with a non-object", ["a=b"]],
    ["a list with a numeric Value", [{ Key: "a", Value: 1 }]],
  ])("rejects %s", (_label, value) => {
    const result = sendOrderToMerchantSchema.safeParse(edit(order, ["UrlParameters"], value));
    expect(result.success).toBe(false);
    expect(issuePaths(result)[0]).toMatch(/^UrlParameters/);
  });
});

describe("updateOrderStatusSchema", () => {
  const status = fixture("UpdateOrderStatus");

  it("parses the cancellation with its status text verbatim", () => {
    const parsed = updateOrderStatusSchema.parse(status);
    expect(parsed.StatusCode).toBe("canceled");
    expect(parsed.MerchantOrderId).toBe("100004217");
    expect(parsed.OrderStatusReason).toEqual({
      OrderStatusReasonCode: "CustomerRequest",
      Name: "Customer request",
    });
  });

  it("does not require Products, but validates them when present", () => {
    expect(updateOrderStatusSchema.safeParse(edit(status, ["Products"], REMOVE)).success).toBe(
      true,
    );
    const bad = edit(status, ["Products"], [{ Sku: "A", Price: 1, Quantity: "1", VATRate: 0 }]);
    expect(issuePaths(updateOrderStatusSchema.safeParse(bad))).toEqual(["Products.0.Quantity"]);
  });

  it("requires OrderId and StatusCode as strings", () => {
    expect(issuePaths(updateOrderStatusSchema.safeParse(edit(status, ["StatusCode"], 3)))).toEqual([
      "StatusCode",
    ]);
    expect(issuePaths(updateOrderStatusSchema.safeParse({ StatusCode: "canceled" }))).toEqual([
      "OrderId",
    ]);
  });

  it("is not satisfied by an order without a status", () => {
    expect(updateOrderStatusSchema.safeParse(edit(order, ["StatusCode"], REMOVE)).success).toBe(
      false,
    );
    expect(performOrderPaymentSchema.safeParse(edit(order, ["PaymentDetails"], null)).success).toBe(
      false,
    );
  });
});

describe("product lines on the callbacks that update an order", () => {
  // The SKU, Price and Quantity rule is SendOrderToMerchant's: a line it books. An update, a
  // payment or a cancellation (no automatic retry) identifies the order by OrderId and must not
  // be refused for a line the service sends without a price, a quantity or a SKU.
  const lines: readonly (readonly [string, Json[]])[] = [
    ["without Price", [{ Sku: "TSHIRT-BLK-M", CartItemId: "1", Quantity: 2 }]],
    ["with Price and Quantity null", [{ Sku: "TSHIRT-BLK-M", Price: null, Quantity: null }]],
    ["identified by CartItemId only", [{ CartItemId: "1", Quantity: 1, Price: 29 }]],
  ];
  const bases = {
    UpdateOrderStatus: fixture("UpdateOrderStatus"),
    UpdateOrderShippingInfo: fixture("UpdateOrderShippingInfo"),
    PerformOrderPayment: fixture("PerformOrderPayment"),
  };
  const schemas = {
    UpdateOrderStatus: updateOrderStatusSchema,
    UpdateOrderShippingInfo: updateOrderShippingInfoSchema,
    PerformOrderPayment: performOrderPaymentSchema,
  };
  /** A handler of `name` whose function keeps the product lines it receives. */
  function recording(name: keyof typeof bases, seen: unknown[]) {
    const options = { auth: false } as const;
    if (name === "UpdateOrderStatus") {
      return createUpdateOrderStatusHandler((payload) => void seen.push(payload.Products), options);
    }
    if (name === "UpdateOrderShippingInfo") {
      return createUpdateOrderShippingInfoHandler(
        (payload) => void seen.push(payload.Products),
        options,
      );
    }
    return createPerformOrderPaymentHandler((payload) => {
      seen.push(payload.Products);
      return { PaymentAmount: "1", PaymentCurrencyCode: "EUR" };
    }, options);
  }

  for (const name of Object.keys(bases) as (keyof typeof bases)[]) {
    for (const [label, products] of lines) {
      it(`${name} accepts a line ${label}, and keeps it as sent`, async () => {
        const input = edit(bases[name], ["Products"], products);
        const result = schemas[name].safeParse(input);
        expect(issuePaths(result)).toEqual([]);
        expect(result.data?.Products).toEqual(products);

        const seen: unknown[] = [];
        const response = await recording(name, seen).handle({
          method: "POST",
          url: "/callback",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(input),
        });
        expect(response.status, response.body).toBe(200);
        expect(JSON.parse(response.body).Success).toBe(true);
        expect(seen).toEqual([products]);
      });
    }
  }

  it("keeps unknown fields of a line and still refuses a value of the wrong kind", () => {
    const status = bases.UpdateOrderStatus;
    const line = { Sku: "A", Quantity: 1, HandlingCode: "H", CustomFlag: true };
    const parsed = updateOrderStatusSchema.parse(edit(status, ["Products"], [line]));
    expect(parsed.Products?.[0]).toEqual(line);
    const bad = edit(status, ["Products"], [{ Sku: 1, Price: "29" }]);
    expect(issuePaths(updateOrderStatusSchema.safeParse(bad))).toEqual([
      "Products.0.Sku",
      "Products.0.Price",
    ]);
  });

  it("SendOrderToMerchant still requires a SKU, Price and Quantity on every line", () => {
    const line = { CartItemId: "1" };
    expect(
      issuePaths(sendOrderToMerchantSchema.safeParse(edit(order, ["Products"], [line]))),
    ).toEqual(["Products.0.Price", "Products.0.Quantity", "Products.0.Sku"]);
  });

  it("types an update's lines as ProductLine, the new order's as Product", () => {
    expectTypeOf<
      NonNullable<UpdateOrderStatusRequest["Products"]>[number]
    >().toEqualTypeOf<ProductLine>();
    expectTypeOf<Order["Products"][number]>().toEqualTypeOf<Product>();
    expectTypeOf<ProductLine["Price"]>().toEqualTypeOf<number | null | undefined>();
  });
});
