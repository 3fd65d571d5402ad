// Decoding in place (issue 13: copies cost more than the leaf work): the plan decodes the
// request's own object, and rebuilds the payload as sent only when asked, from the values it
// recorded. Checked against the copy-on-write `apply`, which stays the reference.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeFormValue } from "../../src/decode/form.js";
import { compileDecoding } from "../../src/decode/policy.js";

type Json = Record<string, unknown>;

const FIELDS = [
  "PrimaryShipping.Address1",
  "PrimaryShipping.Email",
  "PrimaryShipping.City",
  "PaymentDetails.OwnerName",
  "OrderTrackingUrl",
  "ReturnedProducts.*.Name",
  "ReturnedProducts.0.Note",
];

function order(): Json {
  return {
    OrderId: "E1234",
    PrimaryShipping: { Address1: "548+Market+St.", Email: "jane%40example.com", City: "London" },
    PaymentDetails: { CardNumber: "4111111111111111", OwnerName: "Jane+Doe" },
    OrderTrackingUrl: "http%3a%2f%2fexample.com",
    Products: [{ Name: "Left+alone" }],
    ReturnedProducts: [{ Name: "Blue+Shirt", Note: "a+b" }, { Name: "Mug" }],
  };
}

describe("decodeInPlace", () => {
  const plan = compileDecoding(FIELDS);

  it("decodes the object itself, reports as apply does, and rebuilds the raw view on demand", () => {
    const input = order();
    const reference = plan.apply(order());
    const shipping = input.PrimaryShipping;
    const result = plan.decodeInPlace(input);
    expect(result.payload).toBe(input);
    expect(input.PrimaryShipping).toBe(shipping);
    expect(input).toStrictEqual(reference.payload);
    expect(result.report).toStrictEqual(reference.report);
    const raw = result.raw() as Json;
    expect(raw).toStrictEqual(order());
    // Untouched branches are shared with the payload, the decoded ones are copies.
    expect(raw.Products).toBe(input.Products);
    expect(raw.PrimaryShipping).not.toBe(input.PrimaryShipping);
    expect((raw.ReturnedProducts as Json[])[1]).toBe((input.ReturnedProducts as Json[])[1]);
  });

  it("gives the payload itself as the raw view when nothing was decoded", () => {
    const input = { PrimaryShipping: { City: "London" }, Products: [] };
    const result = plan.decodeInPlace(input);
    expect(result.payload).toBe(input);
    expect(result.raw()).toBe(input);
    expect(result.report.decoded).toStrictEqual([]);
  });

  it("keeps the values as sent whatever the merchant does to the payload afterwards", () => {
    const input = order();
    const result = plan.decodeInPlace(input);
    const payload = result.payload as Json;
    const shipping = payload.PrimaryShipping as Json;
    shipping.Address1 = "changed";
    delete shipping.Email;
    payload.PaymentDetails = { OwnerName: "someone else" };
    (payload.ReturnedProducts as Json[]).length = 0;
    payload.OrderTrackingUrl = null;
    const raw = result.raw() as Json;
    expect(raw.PrimaryShipping).toStrictEqual(order().PrimaryShipping);
    expect(raw.PaymentDetails).toStrictEqual(order().PaymentDetails);
    expect(raw.OrderTrackingUrl).toBe(order().OrderTrackingUrl);
    expect((raw.ReturnedProducts as Json[])[0]).toStrictEqual({ Name: "Blue+Shirt", Note: "a+b" });
    // Read before the merchant's changes, the raw view does not follow them either.
    const again = compileDecoding(FIELDS).decodeInPlace(order());
    const early = again.raw() as Json;
    (again.payload as Json as { PrimaryShipping: Json }).PrimaryShipping.Address1 = "changed";
    expect((early.PrimaryShipping as Json).Address1).toBe("548+Market+St.");
  });

  it("tells of every copy it makes, keeping the copy's prototype", () => {
    const input = order();
    const proto = Object.create(Object.prototype) as object;
    Object.setPrototypeOf(input.PaymentDetails as object, proto);
    const result = plan.decodeInPlace(input);
    const copies: [object, object][] = [];
    const raw = result.raw((original, copy) => copies.push([original, copy])) as Json;
    expect(copies.map(([original]) => original)).toContain(input.PaymentDetails);
    expect(Object.getPrototypeOf(raw.PaymentDetails)).toBe(proto);
    expect((raw.PaymentDetails as Json).OwnerName).toBe("Jane+Doe");
  });

  it("copies a frozen container instead of writing into it", () => {
    const freeze = (value: unknown): unknown => {
      if (value !== null && typeof value === "object") {
        for (const item of Object.values(value)) freeze(item);
        Object.freeze(value);
      }
      return value;
    };
    const input = freeze(order()) as Json;
    const result = plan.decodeInPlace(input);
    expect(input).toStrictEqual(order());
    expect(result.payload).toStrictEqual(plan.apply(order()).payload);
    expect(result.raw()).toStrictEqual(order());
  });

  const anyValue = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.string({ unit: fc.constantFrom("%", "+", " ", "@", "2", "b", "e", "a", "0", "f", "z") }),
    fc.string({ unit: "grapheme" }).map(encodeFormValue),
    fc.constantFrom(null, 1, true),
  );

  it("agrees with apply on any input, frozen or not, and rebuilds it exactly", () => {
    const policies = fc.constantFrom("off" as const, "always" as const, "auto" as const);
    fc.assert(
      fc.property(
        policies,
        anyValue,
        fc.array(fc.option(fc.record({ Value: anyValue, Other: anyValue }), { nil: null })),
        fc.boolean(),
        (policy, value, list, frozen) => {
          const p = compileDecoding(["A.Value", "List.*.Value", "List.0.Other"], {
            default: policy,
          });
          const make = () => structuredClone({ A: { Value: value }, List: list });
          const input = make();
          if (frozen) Object.freeze(input.A);
          const reference = p.apply(make());
          const result = p.decodeInPlace(input);
          expect(result.payload).toStrictEqual(reference.payload);
          expect(result.report).toStrictEqual(reference.report);
          expect(result.raw()).toStrictEqual(make());
          if (!frozen) expect(result.payload).toBe(input);
        },
      ),
      { numRuns: 500 },
    );
  });
});
