// Issue 13 (speed3): the sealed check looks at an object's keys outside its shape without loading
// the values of the shape's own fields a second time. A generic load of a double field boxes it
// (1.4 KiB per 30-product order when every value was read); each shape's `…_extras` function skips
// its fields by name. A product behind a proxy counts the loads: with the extras looked at, each
// field is read exactly as often as by the plain check, and only the unknown key once more.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkSealed, PAYLOAD_CHECKERS } from "../../src/generated/checkers.js";

const ORDER = new URL("../fixtures/SendOrderToMerchant.json", import.meta.url);

function orderWithCountedProduct(extra: Record<string, unknown>): {
  order: Record<string, unknown>;
  reads: Map<PropertyKey, number>;
} {
  const order = JSON.parse(readFileSync(ORDER, "utf8")) as Record<string, unknown>;
  const products = order.Products as Record<string, unknown>[];
  const reads = new Map<PropertyKey, number>();
  const target = { ...products[0], ...extra };
  products[0] = new Proxy(target, {
    get(object, key, receiver) {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return Reflect.get(object, key, receiver);
    },
  });
  return { order, reads };
}

describe("the sealed check's look at unknown keys", () => {
  const checker = PAYLOAD_CHECKERS.SendOrderToMerchant;

  it("reads no field of the shape again, and an unknown key's value once", () => {
    const plain = orderWithCountedProduct({ InternationalPriceBeforeRounding: 34.49612345678901 });
    expect(checker.check(plain.order)).toBe(0);
    const sealed = orderWithCountedProduct({ InternationalPriceBeforeRounding: 34.49612345678901 });
    expect(checkSealed(checker, sealed.order, 64)).toHaveLength(1);

    const fields = [...plain.reads.keys()].filter(
      (key) => key !== "InternationalPriceBeforeRounding",
    );
    expect(fields).toContain("Price");
    expect(fields).toContain("RoundingRate");
    for (const key of fields) {
      expect({ key, reads: sealed.reads.get(key) }).toStrictEqual({
        key,
        reads: plain.reads.get(key),
      });
    }
    expect(plain.reads.get("InternationalPriceBeforeRounding")).toBeUndefined();
    expect(sealed.reads.get("InternationalPriceBeforeRounding")).toBe(1);
  });

  it("still declines an unknown key holding a card field, and answers for a plain unknown object", () => {
    const card = orderWithCountedProduct({ Extra: { CardNumber: "4111111111111111" } });
    expect(checkSealed(checker, card.order, 64)).toBeUndefined();
    const cvv = orderWithCountedProduct({ cvvNumber: "123" });
    expect(checkSealed(checker, cvv.order, 64)).toBeUndefined();
    const plainObject = orderWithCountedProduct({ Extra: { Note: "gift" } });
    expect(checkSealed(checker, plainObject.order, 64)).toHaveLength(1);
  });
});
