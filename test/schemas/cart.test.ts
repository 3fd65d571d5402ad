import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type AddressBookEntry,
  addressBookEntrySchema,
  type CartDiscount,
  type CartProduct,
  type CheckoutCartInfo,
  cartDiscountSchema,
  cartProductSchema,
  checkoutCartInfoSchema,
  type UserDetails,
  userDetailsSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;

function fixture(name: string): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

function issuePaths(result: { error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((issue) => issue.path.join("."));
}

const cart = fixture("GetCheckoutCartInfo");
const product = (cart.productsList as Json[])[0] as Json;

describe("checkoutCartInfoSchema", () => {
  it("parses the fixture with camelCase top level and PascalCase nested names", () => {
    const parsed = checkoutCartInfoSchema.parse(cart);
    expect(parsed.productsList).toHaveLength(3);
    expect(parsed.productsList[0]?.ProductCode).toBe("TSHIRT-BLK-M");
    expect(parsed.discountsList?.[0]?.CalculationMode).toBe(1);
    expect(parsed.userDetails?.AddressDetails?.[1]?.AddressBookName).toBe("Office");
    expect(parsed.billingDetails?.StateOrProvice).toBe("California");
    expect(parsed.paymentInstallments).toBe("{2,4,6}");
  });

  it("requires productsList as a list", () => {
    const { productsList: _list, ...rest } = cart;
    expect(issuePaths(checkoutCartInfoSchema.safeParse(rest))).toEqual(["productsList"]);
    expect(issuePaths(checkoutCartInfoSchema.safeParse({ productsList: product }))).toEqual([
      "productsList",
    ]);
    expect(checkoutCartInfoSchema.safeParse({ productsList: [] }).success).toBe(true);
  });

  it("does not accept a PascalCase ProductsList in place of productsList", () => {
    const { productsList, ...rest } = cart;
    expect(checkoutCartInfoSchema.safeParse({ ...rest, ProductsList: productsList }).success).toBe(
      false,
    );
  });

  it.each([
    ["clientIP", "clientIp", "203.0.113.42"],
    ["discountsList", "discountList", [{ DiscountValue: 5, CalculationMode: 1 }]],
    ["merchantCartHash", "CartHash", "abc123"],
  ])("accepts %s and %s", (first, second, value) => {
    const base: Json = { productsList: [] };
    for (const key of [first, second]) {
      const result = checkoutCartInfoSchema.safeParse({ ...base, [key]: value });
      expect(result.error?.issues).toBeUndefined();
      expect((result.data as Json)[key]).toEqual(value);
    }
    // A wrongly typed value is caught under either spelling.
    for (const key of [first, second]) {
      expect(issuePaths(checkoutCartInfoSchema.safeParse({ ...base, [key]: 42 }))).toEqual([key]);
    }
  });

  it("accepts StateOrProvice and StateOrProvince on user details and address book entries", () => {
    for (const key of ["StateOrProvice", "StateOrProvince"]) {
      expect(userDetailsSchema.parse({ [key]: "Ontario" })[key]).toBe("Ontario");
      expect(addressBookEntrySchema.parse({ [key]: "Ontario", IsBilling: true })[key]).toBe(
        "Ontario",
      );
    }
  });

  it("accepts includeVAT as a flag or an integer mode", () => {
    for (const includeVAT of [true, 0, 2, null]) {
      expect(checkoutCartInfoSchema.safeParse({ productsList: [], includeVAT }).success).toBe(true);
    }
    expect(checkoutCartInfoSchema.safeParse({ productsList: [], includeVAT: "1" }).success).toBe(
      false,
    );
  });

  it("enforces the documented maximum lengths the merchant must respect", () => {
    const ok = {
      productsList: [],
      freeShippingCouponCode: "F".repeat(50),
      webStoreCode: "W".repeat(100),
      discountsList: [{ CouponCode: "C".repeat(100) }],
    };
    expect(checkoutCartInfoSchema.safeParse(ok).success).toBe(true);
    const tooLong = {
      productsList: [],
      freeShippingCouponCode: "F".repeat(51),
      webStoreCode: "W".repeat(101),
      discountsList: [{ CouponCode: "C".repeat(101) }],
    };
    expect(issuePaths(checkoutCartInfoSchema.safeParse(tooLong)).sort()).toEqual([
      "discountsList.0.CouponCode",
      "freeShippingCouponCode",
      "webStoreCode",
    ]);
  });

  it.each([
    [["productsList", 0, "OrderedQuantity"], "2"],
    [["productsList", 0, "SalePrice"], "29.00"],
    [["productsList", 0, "IsFixedPrice"], "false"],
    [["productsList", 0, "VATRateType", "Rate"], "20"],
    [["productsList", 0, "Attributes", 0, "AttributeValue"], 7],
    [["discountsList", 0, "DiscountType"], 1.5],
    [["userDetails", "AddressDetails", 0, "IsDefaultBilling"], "true"],
    [["hubId"], "1"],
    [["doNotChargeVAT"], 0],
    [["urlParameters"], "utm_source=newsletter"],
  ] as const)("rejects a wrong type at %j", (path, value) => {
    const input = structuredClone(cart);
    let node = input as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    node[path[path.length - 1] as string | number] = value;
    expect(issuePaths(checkoutCartInfoSchema.safeParse(input))).toEqual([path.join(".")]);
  });

  it("keeps unknown fields on every level, such as the operator-branded product flag", () => {
    const input = {
      ...cart,
      loyalty: { MaxPointsToSpend: 500, PointValueInMerchantCurrency: 0.01 },
      productsList: [{ ...product, IsBlockedForOperator: false }],
      userDetails: { UserId: "1", AddressDetails: [{ Nickname: "home" }] },
    };
    const parsed = checkoutCartInfoSchema.parse(input);
    expect(parsed.loyalty).toEqual({ MaxPointsToSpend: 500, PointValueInMerchantCurrency: 0.01 });
    expect(parsed.productsList[0]?.IsBlockedForOperator).toBe(false);
    expect(parsed.userDetails?.AddressDetails?.[0]?.Nickname).toBe("home");
  });
});

describe("cart types (what the merchant writes)", () => {
  it("types the merchant-written object by the schema input", () => {
    const written: CheckoutCartInfo = {
      productsList: [{ ProductCode: "A", OrderedQuantity: 1, SalePrice: 9.99 }],
      clientIp: "198.51.100.7",
      discountList: [{ DiscountValue: 1, CalculationMode: 1 }],
      userDetails: { UserId: "u1", AddressDetails: [{ IsDefaultShipping: true }] },
    };
    expect(checkoutCartInfoSchema.parse(written)).toEqual(written);
    expectTypeOf<CheckoutCartInfo["productsList"]>().toEqualTypeOf<CartProduct[]>();
    expectTypeOf<CartProduct["SalePrice"]>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<CartDiscount["CalculationMode"]>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<UserDetails["AddressDetails"]>().toEqualTypeOf<
      AddressBookEntry[] | null | undefined
    >();
    // @ts-expect-error productsList is required
    const missing: CheckoutCartInfo = { currencyCode: "USD" };
    expect(checkoutCartInfoSchema.safeParse(missing).success).toBe(false);
  });

  it("the cart types list the documented fields only: a misspelt field is a compile error", () => {
    // No index signature anywhere down the cart (tsc checks this file).
    expectTypeOf<string extends keyof CheckoutCartInfo ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof CartProduct ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof CartDiscount ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof UserDetails ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof AddressBookEntry ? true : false>().toEqualTypeOf<false>();
    const typo: CheckoutCartInfo = {
      productsList: [],
      // @ts-expect-error currencyCod is not a CheckoutCartInfo field (currencyCode is)
      currencyCod: "USD",
    };
    const productTypo: CartProduct = {
      // @ts-expect-error ProductCod is not a CartProduct field
      ProductCod: "SKU-1",
    };
    const discountTypo: CartDiscount = {
      // @ts-expect-error DiscountValu is not a CartDiscount field
      DiscountValu: 5,
    };
    const userTypo: UserDetails = {
      // @ts-expect-error AddresDetails is not a UserDetails field
      AddresDetails: [],
    };
    const addressTypo: AddressBookEntry = {
      // @ts-expect-error IsDefaultShiping is not an AddressBookEntry field
      IsDefaultShiping: true,
    };
    const nested: CheckoutCartInfo = {
      // @ts-expect-error a misspelt field inside a product of the cart
      productsList: [{ ProductCode: "SKU-1", SalePrise: 10 }],
    };
    // Unknown fields still pass at run time: the types are stricter than the schema on purpose.
    for (const value of [typo, nested]) {
      expect(checkoutCartInfoSchema.safeParse(value).success).toBe(true);
    }
    expect(cartProductSchema.safeParse(productTypo).success).toBe(true);
    expect(cartDiscountSchema.safeParse(discountTypo).success).toBe(true);
    expect(userDetailsSchema.safeParse(userTypo).success).toBe(true);
    expect(addressBookEntrySchema.safeParse(addressTypo).success).toBe(true);
  });

  it("validates nested objects on their own", () => {
    expect(cartProductSchema.parse(product)).toEqual(product);
    expect(cartDiscountSchema.safeParse({ DiscountValue: "5" }).success).toBe(false);
  });
});
