// parseBounded (src/core/bounded-parse.ts): zod's verdict, zod's own issues for the failing parts,
// at a cost bounded by what is described (review AMP-4, AMP-5). The generated checkers' differential
// test (test/generated/differential.test.ts) compares it with zod on fuzzed payloads too.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeIssueList, parseBounded } from "../../src/core/bounded-parse.js";
import { PAYLOAD_CHECKERS } from "../../src/generated/checkers.js";
import { productSchema } from "../../src/schemas/product.js";
import { samplePayload } from "../../src/testing/index.js";

function described(schema: z.ZodType, value: unknown, limit = 10): string {
  const result = parseBounded(schema, value, limit);
  if (result.success) return "accepted";
  return describeIssueList(result.issues, limit, result.complete);
}

function zodSays(schema: z.ZodType, value: unknown, limit = 10): string {
  const result = schema.safeParse(value);
  return result.success ? "accepted" : describeIssueList(result.error.issues, limit);
}

describe("parseBounded", () => {
  it("gives zod's output for a value zod accepts (a preprocess, an unknown key kept)", () => {
    const schema = z.looseObject({
      Flag: z.preprocess((value) => (value === "true" ? true : value), z.boolean()),
      List: z.array(z.number()).nullish(),
    });
    expect(parseBounded(schema, { Flag: "true", List: [1], Other: 2 })).toStrictEqual({
      success: true,
      data: { Flag: true, List: [1], Other: 2 },
    });
  });

  it("describes a refused value as zod does when nothing is left out", () => {
    const schema = z.looseObject({
      Id: z.string(),
      Count: z.number().int(),
      Kind: z.union([z.string(), z.number()]),
      Inner: z.object({ Name: z.string().max(3) }).strict(),
      Tail: z.array(z.string()).min(2),
    });
    for (const value of [
      {},
      { Id: 1, Count: 1.5, Kind: true, Inner: { Name: "long", x: 1 }, Tail: ["a"] },
      { Id: "a", Count: 1, Kind: "k", Inner: [], Tail: "no" },
      "not an object",
      null,
    ]) {
      expect(described(schema, value)).toBe(zodSays(schema, value));
    }
  });

  it("a required key whose schema takes undefined is still refused when absent", () => {
    const schema = z.looseObject({ Data: z.unknown() });
    expect(described(schema, {})).toBe(zodSays(schema, {}));
    expect(parseBounded(schema, { Data: undefined }).success).toBe(true);
  });

  it("an object's own check speaks beside its fields' issues (a product without anything)", () => {
    expect(described(productSchema, {})).toBe(zodSays(productSchema, {}));
    expect(described(productSchema, { Price: 1, Quantity: 1 })).toBe(
      "Sku: Invalid input: expected string, received undefined",
    );
  });

  it("stops after the limit: the first failing items, then that there are more", () => {
    const schema = z.looseObject({ Items: z.array(productSchema) });
    const value = { Items: Array.from({ length: 100_000 }, () => ({})) };
    const text = described(schema, value, 4);
    expect(text).toBe(
      [
        "Items.0.Price: Invalid input: expected number, received undefined",
        "Items.0.Quantity: Invalid input: expected number, received undefined",
        "Items.0.Sku: Invalid input: expected string, received undefined",
        "Items.1.Price: Invalid input: expected number, received undefined",
        "… and more",
      ].join("; "),
    );
  });

  it("a union whose list option fails inside the list is described by that option's items", () => {
    const schema = z.looseObject({
      Params: z.union([z.string(), z.array(z.looseObject({ Key: z.string() }))]),
    });
    const result = parseBounded(schema, { Params: Array.from({ length: 50_000 }, () => ({})) }, 2);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.complete).toBe(false);
    expect(result.issues.map((issue) => issue.path.join("."))).toStrictEqual([
      "Params.0.Key",
      "Params.1.Key",
      "Params.2.Key",
    ]);
    // Failing at the top of every option: zod's own invalid_union.
    expect(described(schema, { Params: 5 })).toBe(zodSays(schema, { Params: 5 }));
  });

  it("an object without the plain prototype is walked as zod reads it", () => {
    const schema = z.looseObject({ A: z.string(), B: z.array(z.number()) });
    const value = Object.assign(Object.create(null), { A: 1, B: [1, "x"] });
    expect(described(schema, value)).toBe(zodSays(schema, value));
  });

  // Review second-zod-1: an object's or array's own checks run on zod's output (defaults filled,
  // preprocess and transform results, unknown keys stripped), not on the raw value. Read on the raw
  // value, a false failure inside a union made the walk keep another option's parts and refuse.
  describe("never refuses what zod accepts (own checks read zod's output)", () => {
    function agrees(schema: z.ZodType, value: unknown) {
      const zodResult = schema.safeParse(value);
      const bounded = parseBounded(schema, value, 10);
      expect({ success: bounded.success }).toStrictEqual({ success: zodResult.success });
      if (zodResult.success && bounded.success) expect(bounded.data).toStrictEqual(zodResult.data);
    }
    const numbers = z.object({ list: z.array(z.number()) });

    it("an option's refine reads a defaulted field", () => {
      const defaulted = z
        .object({ list: z.array(z.string()), n: z.string().default("x") })
        .refine((o) => o.n === "x");
      agrees(z.union([numbers, defaulted]), { list: ["a"] });
    });

    it("an option's refine reads a preprocessed field", () => {
      const preprocessed = z
        .object({
          list: z.array(z.string()),
          flag: z.preprocess((v) => v === "true", z.boolean()),
        })
        .refine((o) => typeof o.flag === "boolean");
      agrees(z.union([numbers, preprocessed]), { list: ["a"], flag: "true" });
    });

    it("an option's refine counts the keys of a strip object (unknown keys gone)", () => {
      const strip = z
        .object({ list: z.array(z.string()) })
        .refine((o) => Object.keys(o).length === 1);
      agrees(z.union([numbers, strip]), { list: ["a"], extra: 1 });
    });

    it("an option's array refine reads transformed items", () => {
      const transformed = z.object({
        list: z
          .array(z.string().transform((s) => s.length))
          .refine((a) => a.every((n) => typeof n === "number")),
      });
      agrees(z.union([numbers, transformed]), { list: ["a"] });
    });

    it("a shape key named __proto__ is skipped, as zod skips it", () => {
      const schema = z.object({ ["__proto__"]: z.string(), a: z.string() });
      agrees(schema, { a: "x" });
      agrees(schema, { a: 1 });
    });

    it("a loose object whose fields change nothing still has its checks read on the value", () => {
      const schema = z.union([
        numbers,
        z
          .looseObject({ list: z.array(z.string()), n: z.string().nullish() })
          .refine((o) => o.n === "x"),
      ]);
      agrees(schema, { list: ["a"], n: "x" });
      agrees(schema, { list: ["a"], n: "y" });
      agrees(schema, { list: [1, "a"], n: "y" });
    });

    it("a discriminated union agrees (control)", () => {
      const schema = z.discriminatedUnion("t", [
        z.object({ t: z.literal("a"), list: z.array(z.number()) }),
        z.object({ t: z.literal("b"), n: z.number() }),
      ]);
      agrees(schema, { t: "b", n: 1, list: ["x"] });
      agrees(schema, { t: "a", list: [1] });
    });
  });

  // Review second-zod-2: an object's (or array's) own checks left out, because a failure inside one
  // of its arrays was found, must not leave a description that looks complete.
  describe("own checks left out make the description incomplete", () => {
    it("a product without a SKU and with a bad Categories entry", () => {
      const order = samplePayload("SendOrderToMerchant");
      const schema = PAYLOAD_CHECKERS.SendOrderToMerchant.schema as unknown as z.ZodType;
      const value = { ...order, Products: [{ Price: 1, Quantity: 1, Categories: [5] }] };
      const zodResult = schema.safeParse(value);
      expect(
        zodResult.success ? [] : zodResult.error.issues.map((i) => i.path.join(".")),
      ).toStrictEqual(["Products.0.Categories.0", "Products.0.Sku"]);
      expect(described(schema, value)).toBe(
        "Products.0.Categories.0: Invalid input: expected object, received number; … and more",
      );
    });

    it("an array's length check beside failing items", () => {
      const schema = z.looseObject({ List: z.array(z.string()).min(3) });
      expect(described(schema, { List: [1] })).toBe(
        "List.0: Invalid input: expected string, received number; … and more",
      );
      // Nothing left out: complete, as before.
      expect(described(schema, { List: ["a"] })).toBe(zodSays(schema, { List: ["a"] }));
      expect(described(z.looseObject({ List: z.array(z.string()) }), { List: [1] })).toBe(
        "List.0: Invalid input: expected string, received number",
      );
    });
  });
});
