import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkoutCartInfoSchema,
  sendAdditionalRequiredDocumentsSchema,
  sendOrderToMerchantSchema,
  updateParcelDispatchSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;

function fixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8").trim();
}

/** The fixture text with extra raw JSON members inserted first, so they stay real JSON keys. */
function withMembers(name: string, members: string): unknown {
  const text = fixtureText(name);
  expect(text.startsWith("{")).toBe(true);
  return JSON.parse(`{${members},${text.slice(1)}`);
}

function expectPristinePrototypes(): void {
  expect(({} as Json).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
  expect({}.constructor).toBe(Object);
}

function expectPlain(value: unknown): void {
  expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  expect((value as Json).polluted).toBeUndefined();
  // Merging the output must not carry anything into a prototype either.
  const merged = Object.assign({}, value);
  expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  expect((merged as Json).polluted).toBeUndefined();
}

afterEach(() => {
  // Undo any pollution so one failure cannot cascade into the other tests.
  delete (Object.prototype as Json).polluted;
});

describe("__proto__ keys", () => {
  it("a top-level __proto__ in an order parses without touching any prototype", () => {
    const body = withMembers("SendOrderToMerchant", '"__proto__":{"polluted":1}');
    // JSON.parse made it an own key: the case zod must not turn into a prototype.
    expect(Object.hasOwn(body as object, "__proto__")).toBe(true);
    const result = sendOrderToMerchantSchema.safeParse(body);
    expect(result.success).toBe(true);
    expectPlain(result.data);
    expect(result.data?.OrderId).toBe("GE927127001US");
    expectPristinePrototypes();
  });

  it("nested __proto__ keys in products, addresses and payment details are harmless", () => {
    const proto = '"__proto__":{"polluted":1,"OrderId":"forged"}';
    const text = fixtureText("SendOrderToMerchant")
      .replace('"Sku": "TSHIRT-BLK-M",', `"Sku": "TSHIRT-BLK-M",${proto},`)
      .replace('"FirstName": "Jane",', `"FirstName": "Jane",${proto},`)
      .replace('"CardNumber": "4111111111111111",', `"CardNumber": "4111111111111111",${proto},`);
    expect(text.split('"__proto__"')).toHaveLength(4);
    const parsed = sendOrderToMerchantSchema.parse(JSON.parse(text));
    for (const value of [
      parsed,
      parsed.Products[0],
      parsed.PrimaryShipping,
      parsed.PaymentDetails,
      parsed.Products[0]?.Brand,
    ]) {
      expectPlain(value);
    }
    expect((parsed.PrimaryShipping as Json).OrderId).toBeUndefined();
    expectPristinePrototypes();
  });

  it("the open document payload and the cart are just as safe", () => {
    const members = '"__proto__":{"polluted":1}';
    const documents = sendAdditionalRequiredDocumentsSchema.parse(
      withMembers("SendAdditionalRequiredDocumentsToMerchant", members),
    );
    expectPlain(documents);
    const cart = checkoutCartInfoSchema.parse(withMembers("GetCheckoutCartInfo", members));
    expectPlain(cart);
    expectPristinePrototypes();
  });
});

describe("constructor.prototype keys", () => {
  it("a top-level constructor.prototype stays plain data", () => {
    const body = withMembers("UpdateParcelDispatch", '"constructor":{"prototype":{"polluted":1}}');
    const parsed = updateParcelDispatchSchema.parse(body);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    // Kept as an ordinary own field, like any other unknown field.
    expect(Object.hasOwn(parsed, "constructor")).toBe(true);
    expect(parsed.constructor).toEqual({ prototype: { polluted: 1 } });
    expectPristinePrototypes();
  });

  it("a nested constructor.prototype stays plain data", () => {
    const text = fixtureText("SendOrderToMerchant").replace(
      '"Sku": "HOODIE-GRY-L",',
      '"Sku": "HOODIE-GRY-L","constructor":{"prototype":{"polluted":1,"toString":"x"}},',
    );
    expect(text).toContain('"constructor"');
    const parsed = sendOrderToMerchantSchema.parse(JSON.parse(text));
    const product = parsed.Products[1] as Json;
    expect(Object.getPrototypeOf(product)).toBe(Object.prototype);
    expect(product.constructor).toEqual({ prototype: { polluted: 1, toString: "x" } });
    expect(String({})).toBe("[object Object]");
    expectPristinePrototypes();
  });
});
