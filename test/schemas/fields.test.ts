import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extraField, splitCartToken, urlParameters } from "../../src/index.js";

describe("urlParameters", () => {
  const pairs = [
    { Key: "utm_source", Value: "newsletter" },
    { Key: "lang", Value: "de" },
  ];

  it("reads the JSON text (documented) and the list itself (seen) alike", () => {
    expect(urlParameters(JSON.stringify(pairs))).toStrictEqual(pairs);
    expect(urlParameters(pairs)).toStrictEqual(pairs);
    expect(urlParameters(pairs)).not.toBe(pairs);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["an empty text", ""],
    ["text that is not JSON", "utm_source=newsletter"],
    ["a JSON object", '{"Key":"a","Value":"b"}'],
    ["a number", 42],
    ["an object", { Key: "a", Value: "b" }],
  ])("gives [] for %s", (_label, value) => {
    expect(urlParameters(value)).toStrictEqual([]);
  });

  it("skips entries without a usable Key, writes other values as text", () => {
    const value = [
      { Key: "page", Value: 2 },
      { Key: "debug", Value: true },
      { Key: "empty", Value: null },
      { Key: "missing" },
      { Value: "no key" },
      { Key: null, Value: "null key" },
      { Key: { nested: 1 }, Value: "object key" },
      "text",
      null,
      [{ Key: "nested", Value: "list" }],
      { Key: "extra", Value: "kept", Other: "dropped" },
    ];
    expect(urlParameters(value)).toStrictEqual([
      { Key: "page", Value: "2" },
      { Key: "debug", Value: "true" },
      { Key: "empty", Value: "" },
      { Key: "missing", Value: "" },
      { Key: "extra", Value: "kept" },
    ]);
  });

  it("keeps a __proto__ key as plain data and pollutes nothing", () => {
    const text =
      '[{"Key":"__proto__","Value":"x"},{"__proto__":{"polluted":1},"Key":"a","Value":"b"}]';
    const result = urlParameters(text);
    expect(result).toStrictEqual([
      { Key: "__proto__", Value: "x" },
      { Key: "a", Value: "b" },
    ]);
    expect(Object.keys(result[1] ?? {})).toStrictEqual(["Key", "Value"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("does not read inherited Key or Value", () => {
    const inherited = Object.create({ Key: "inherited", Value: "x" }) as object;
    expect(urlParameters([inherited])).toStrictEqual([]);
  });

  it("ignores a text over 64 KiB instead of parsing it", () => {
    const huge = JSON.stringify(
      Array.from({ length: 5000 }, (_, i) => ({ Key: `k${i}`, Value: "v" })),
    );
    expect(huge.length).toBeGreaterThan(64 * 1024);
    expect(urlParameters(huge)).toStrictEqual([]);
  });

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.string(), fc.anything()), (value) => {
        const result = urlParameters(value);
        expect(Array.isArray(result)).toBe(true);
        for (const pair of result) {
          expect(typeof pair.Key).toBe("string");
          expect(typeof pair.Value).toBe("string");
        }
      }),
      { numRuns: 500 },
    );
    const hostile = [
      {
        get Key() {
          throw new Error("getter");
        },
      },
    ];
    expect(urlParameters(hostile)).toStrictEqual([]);
  });
});

describe("splitCartToken", () => {
  it.each([
    ["demo-cart-2", { cartToken: "demo-cart", languageId: "2" }],
    ["8f14e45f-12", { cartToken: "8f14e45f", languageId: "12" }],
    ["abc-1033", { cartToken: "abc", languageId: "1033" }],
    // Not a language id: a UUID's last group, five digits, letters, nothing before the dash.
    [
      "b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f",
      { cartToken: "b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f", languageId: undefined },
    ],
    [
      "b7c1e0d4-2f6a-4e3b-8c9d-000000000123",
      { cartToken: "b7c1e0d4-2f6a-4e3b-8c9d-000000000123", languageId: undefined },
    ],
    ["cart-12345", { cartToken: "cart-12345", languageId: undefined }],
    ["cart-en", { cartToken: "cart-en", languageId: undefined }],
    ["-2", { cartToken: "-2", languageId: undefined }],
    ["cart", { cartToken: "cart", languageId: undefined }],
    ["", { cartToken: "", languageId: undefined }],
  ])("%s", (token, parts) => {
    expect(splitCartToken(token)).toStrictEqual(parts);
  });

  it("never throws on a value that is not text", () => {
    expect(splitCartToken(undefined as unknown as string)).toStrictEqual({
      cartToken: "",
      languageId: undefined,
    });
  });
});

describe("extraField", () => {
  it("reads an own field, never an inherited one", () => {
    const order = JSON.parse('{"OrderId":"GE1","IsFirstOrderOfCustomer":true,"__proto__":{"x":1}}');
    expect(extraField(order as object, "IsFirstOrderOfCustomer")).toBe(true);
    expect(extraField(order as object, "__proto__")).toStrictEqual({ x: 1 });
    expect(extraField(order as object, "constructor")).toBeUndefined();
    expect(extraField(order as object, "toString")).toBeUndefined();
    expect(extraField(order as object, "Missing")).toBeUndefined();
  });

  it("gives undefined for null and undefined objects", () => {
    expect(extraField(null, "a")).toBeUndefined();
    expect(extraField(undefined, "a")).toBeUndefined();
  });
});
