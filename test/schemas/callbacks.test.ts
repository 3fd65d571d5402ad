import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type DispatchedParcel,
  parcelProductSchema,
  type RemoveRestrictedProductsRequest,
  type ReturnedProduct,
  removeRestrictedProductsSchema,
  returnedProductSchema,
  type SendAdditionalRequiredDocumentsToMerchantRequest,
  type SendRMAInfoToMerchantRequest,
  sendAdditionalRequiredDocumentsSchema,
  sendRMAInfoToMerchantSchema,
  type UpdateParcelDispatchRequest,
  updateParcelDispatchSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;

function fixture(name: string): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

function issuePaths(result: { error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((issue) => issue.path.join("."));
}

describe("sendRMAInfoToMerchantSchema", () => {
  const rma = fixture("SendRMAInfoToMerchant");
  const returned = (rma.ReturnedProducts as Json[])[0] as Json;

  it("keeps the encoded TrackingURL and the returned products", () => {
    const parsed = sendRMAInfoToMerchantSchema.parse(rma);
    expect(parsed.TrackingURL).toBe(
      "https%3a%2f%2fwww.example.com%2freturns%2ftrack%3fn%3dJD014600006281234567",
    );
    expect(parsed.ReturnedProducts.map((product) => product.SKU)).toEqual([
      "TSHIRT-BLK-M",
      "HOODIE-GRY-L",
    ]);
    expect(parsed.ReturnShippingCost).toBe(8.5);
  });

  it("requires OrderId, RMANumber and ReturnedProducts", () => {
    expect(issuePaths(sendRMAInfoToMerchantSchema.safeParse({})).sort()).toEqual([
      "OrderId",
      "RMANumber",
      "ReturnedProducts",
    ]);
  });

  it("takes ReturnQuantity as a number: an integer per the spec, a decimal not refused, text refused", () => {
    const decimal = { ...rma, ReturnedProducts: [{ ...returned, ReturnQuantity: 1.5 }] };
    expect(sendRMAInfoToMerchantSchema.parse(decimal).ReturnedProducts[0]?.ReturnQuantity).toBe(
      1.5,
    );
    const text = { ...rma, ReturnedProducts: [{ ...returned, ReturnQuantity: "1" }] };
    expect(issuePaths(sendRMAInfoToMerchantSchema.safeParse(text))).toEqual([
      "ReturnedProducts.0.ReturnQuantity",
    ]);
  });

  it("accepts Sku as well as SKU on a returned product", () => {
    const { SKU, ...rest } = returned;
    expect(returnedProductSchema.parse({ ...rest, Sku: SKU }).Sku).toBe("TSHIRT-BLK-M");
    expect(returnedProductSchema.safeParse({ ...rest, Sku: 1 }).success).toBe(false);
  });

  it("rejects a ReturnShippingCost sent as text", () => {
    expect(
      issuePaths(sendRMAInfoToMerchantSchema.safeParse({ ...rma, ReturnShippingCost: "8.50" })),
    ).toEqual(["ReturnShippingCost"]);
  });

  it("exports matching types", () => {
    expectTypeOf<SendRMAInfoToMerchantRequest["RMANumber"]>().toEqualTypeOf<string>();
    expectTypeOf<SendRMAInfoToMerchantRequest["ReturnedProducts"]>().toEqualTypeOf<
      ReturnedProduct[]
    >();
    expect(Object.keys(returnedProductSchema.shape)).toContain("SKU");
  });
});

describe("updateParcelDispatchSchema", () => {
  const dispatch = fixture("UpdateParcelDispatch");
  const parcel = dispatch.DispatchedParcel as Json;

  it("keeps the percent-encoded tracking URL and both SKU spellings", () => {
    const parsed = updateParcelDispatchSchema.parse(dispatch);
    expect(parsed.DispatchedParcel.ParcelTracking?.ParcelTrackingUrl).toBe(
      "https%3a%2f%2fwww.example.com%2ftrack%3fparcel%3dPCL-88213%26lang%3den",
    );
    const products = parsed.DispatchedParcel.Products ?? [];
    expect(products.map((product) => product.Sku ?? product.SKU)).toEqual([
      "TSHIRT-BLK-M",
      "HOODIE-GRY-L",
    ]);
    expect(products[1]?.Sku).toBeUndefined();
    expect(parsed.UrlParameters).toBeNull();
  });

  it("requires OrderId and DispatchedParcel", () => {
    const { OrderId: _id, DispatchedParcel: _parcel, ...rest } = dispatch;
    expect(issuePaths(updateParcelDispatchSchema.safeParse(rest)).sort()).toEqual([
      "DispatchedParcel",
      "OrderId",
    ]);
    expect(
      issuePaths(updateParcelDispatchSchema.safeParse({ ...dispatch, DispatchedParcel: null })),
    ).toEqual(["DispatchedParcel"]);
  });

  it("accepts UrlParameters as a string or a list, and rejects a number", () => {
    for (const UrlParameters of ['[{"Key":"a","Value":"b"}]', [{ Key: "a", Value: "b" }]]) {
      expect(updateParcelDispatchSchema.safeParse({ ...dispatch, UrlParameters }).success).toBe(
        true,
      );
    }
    expect(
      issuePaths(updateParcelDispatchSchema.safeParse({ ...dispatch, UrlParameters: 5 })),
    ).toEqual(["UrlParameters"]);
  });

  it("accepts decimal and integer quantities but not text", () => {
    expect(parcelProductSchema.safeParse({ Sku: "A", Quantity: 1.5 }).success).toBe(true);
    const input = {
      ...dispatch,
      DispatchedParcel: { ...parcel, Products: [{ Sku: "A", Quantity: "2" }] },
    };
    expect(issuePaths(updateParcelDispatchSchema.safeParse(input))).toEqual([
      "DispatchedParcel.Products.0.Quantity",
    ]);
  });

  it("keeps unknown parcel fields", () => {
    const input = { ...dispatch, DispatchedParcel: { ...parcel, ParcelStatusId: 3, Weight: 1.25 } };
    const parsed = updateParcelDispatchSchema.parse(input);
    expect(parsed.DispatchedParcel.ParcelStatusId).toBe(3);
    expect(parsed.DispatchedParcel.Weight).toBe(1.25);
  });

  it("exports matching types", () => {
    expectTypeOf<
      UpdateParcelDispatchRequest["DispatchedParcel"]
    >().toEqualTypeOf<DispatchedParcel>();
    expectTypeOf<UpdateParcelDispatchRequest["OrderId"]>().toEqualTypeOf<string>();
    expect(Object.keys(updateParcelDispatchSchema.shape)).toContain("DispatchedParcel");
  });
});

describe("removeRestrictedProductsSchema", () => {
  const restricted = fixture("RemoveRestrictedProducts");

  it("parses the removed SKU codes", () => {
    const parsed = removeRestrictedProductsSchema.parse(restricted);
    expect(parsed.RemovedProductCodes).toEqual(["KNIFE-CHEF-20CM", "PERFUME-EDP-50ML"]);
    expect(parsed.UserId).toBeNull();
  });

  it("requires RemovedProductCodes as a list of strings", () => {
    const { RemovedProductCodes: _codes, ...rest } = restricted;
    expect(issuePaths(removeRestrictedProductsSchema.safeParse(rest))).toEqual([
      "RemovedProductCodes",
    ]);
    for (const RemovedProductCodes of ["KNIFE-CHEF-20CM", null]) {
      expect(
        removeRestrictedProductsSchema.safeParse({ ...restricted, RemovedProductCodes }).success,
      ).toBe(false);
    }
    expect(
      issuePaths(
        removeRestrictedProductsSchema.safeParse({ ...restricted, RemovedProductCodes: ["A", 2] }),
      ),
    ).toEqual(["RemovedProductCodes.1"]);
  });

  it("accepts an empty list", () => {
    const input = { ...restricted, RemovedProductCodes: [] };
    expect(removeRestrictedProductsSchema.safeParse(input).success).toBe(true);
    expectTypeOf<RemoveRestrictedProductsRequest["RemovedProductCodes"]>().toEqualTypeOf<
      string[]
    >();
  });
});

describe("sendAdditionalRequiredDocumentsSchema", () => {
  const documents = fixture("SendAdditionalRequiredDocumentsToMerchant");

  it("accepts any object and keeps every field", () => {
    const parsed = sendAdditionalRequiredDocumentsSchema.parse(documents);
    expect(parsed).toEqual(documents);
    expect(parsed.MerchantGUID).toBe("3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c");
    expect(sendAdditionalRequiredDocumentsSchema.parse({})).toEqual({});
  });

  it("rejects a body that is not an object", () => {
    for (const body of [null, [], "documents", 1, true]) {
      expect(sendAdditionalRequiredDocumentsSchema.safeParse(body).success).toBe(false);
    }
    expectTypeOf<SendAdditionalRequiredDocumentsToMerchantRequest>().toEqualTypeOf<
      Record<string, unknown>
    >();
  });
});
