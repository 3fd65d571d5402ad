import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeFormValue } from "../../src/decode/form.js";
import { compileDecoding } from "../../src/decode/policy.js";
import {
  type CallbackRequest,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
} from "../../src/index.js";

const ADDRESS_FIELDS = ["Phone1", "Email", "Address1", "City", "CountryName"];
const ORDER_FIELDS = [
  ...ADDRESS_FIELDS.map((f) => `PrimaryShipping.${f}`),
  ...ADDRESS_FIELDS.map((f) => `SecondaryShipping.${f}`),
  "OrderTrackingUrl",
  "ReturnedProducts.*.Name",
];

type Json = Record<string, unknown>;

function order(): Json {
  return {
    OrderId: "E1234",
    PrimaryShipping: {
      Phone1: "%2B33+1+23+45+67+89",
      Email: "jane.doe%40example.com",
      Address1: "548+Market+St.",
      City: "San+Francisco",
      CountryName: "United+States",
      Zip: "94104",
    },
    SecondaryShipping: {
      Phone1: "+ 44 (0)808 258 0300",
      Email: "info@example.com",
      Address1: "45 Leather Lane",
      City: "London",
      CountryName: "United Kingdom",
    },
    OrderTrackingUrl: "http%3a%2f%2fwww.example.com%2ftrack%3fid%3d1",
    Products: [{ Name: "Left+alone" }],
    ReturnedProducts: [{ Name: "Blue+Shirt" }, { Name: "Mug" }, { Name: "100%" }],
    CustomerComments: "Please+ring+twice",
  };
}

describe("compileDecoding / apply with the auto policy", () => {
  const plan = compileDecoding(ORDER_FIELDS);

  it("decodes the encoded side and keeps the operator's plain side", () => {
    const input = order();
    const { payload, report } = plan.apply(input);
    expect(payload.PrimaryShipping).toEqual({
      Phone1: "+33 1 23 45 67 89",
      Email: "jane.doe@example.com",
      Address1: "548 Market St.",
      City: "San Francisco",
      CountryName: "United States",
      Zip: "94104",
    });
    expect(payload.SecondaryShipping).toBe(input.SecondaryShipping);
    expect(payload.OrderTrackingUrl).toBe("http://www.example.com/track?id=1");
    expect(payload.ReturnedProducts).toEqual([
      { Name: "Blue Shirt" },
      { Name: "Mug" },
      { Name: "100%" },
    ]);
    expect(report.decoded).toEqual([
      ...ADDRESS_FIELDS.map((f) => `PrimaryShipping.${f}`),
      "OrderTrackingUrl",
      "ReturnedProducts.0.Name",
    ]);
    expect(report.unchanged).toEqual([
      ...ADDRESS_FIELDS.map((f) => `SecondaryShipping.${f}`),
      "ReturnedProducts.1.Name",
    ]);
    expect(report.malformed).toEqual(["ReturnedProducts.2.Name"]);
  });

  it("never mutates the input, and keeps the identity of untouched subtrees", () => {
    const input = order();
    const before = structuredClone(input);
    const { payload } = plan.apply(input);
    expect(input).toEqual(before);
    expect(payload).not.toBe(input);
    expect(payload.Products).toBe(input.Products);
    expect(payload.SecondaryShipping).toBe(input.SecondaryShipping);
    const returned = payload.ReturnedProducts as Json[];
    const original = input.ReturnedProducts as Json[];
    expect(returned).not.toBe(original);
    expect(returned[0]).not.toBe(original[0]);
    expect(returned[1]).toBe(original[1]);
    expect(returned[2]).toBe(original[2]);
  });

  it("returns the input itself when nothing changes", () => {
    const input = { PrimaryShipping: { Phone1: "+44 20 7946 0958", City: "London" } };
    const { payload, report } = plan.apply(input);
    expect(payload).toBe(input);
    expect(report).toEqual({
      decoded: [],
      unchanged: ["PrimaryShipping.Phone1", "PrimaryShipping.City"],
      malformed: [],
    });
  });

  it.each([
    "+44 20 7946 0958",
    "+ 44 (0)808 258 0300",
    "info@example.com",
    "45 Leather Lane",
    "100% Cotton Lane",
    "London",
  ])("leaves plain %j unchanged", (value) => {
    const { payload, report } = plan.apply({ PrimaryShipping: { Address1: value } });
    expect((payload.PrimaryShipping as Json).Address1).toBe(value);
    expect(report.unchanged).toEqual(["PrimaryShipping.Address1"]);
  });

  it.each([
    ["%2B33+1", "+33 1"],
    ["%252B", "%2B"],
    ["jane.doe%40example.com", "jane.doe@example.com"],
  ])("decodes %j once, to %j", (value, expected) => {
    const { payload, report } = plan.apply({ PrimaryShipping: { Address1: value } });
    expect((payload.PrimaryShipping as Json).Address1).toBe(expected);
    expect(report.decoded).toEqual(["PrimaryShipping.Address1"]);
  });

  it.each(["%", "%zz", "100%", "%E0%A4%A", "%ED%A0%80"])(
    "keeps malformed %j raw and reports it",
    (value) => {
      const input = { PrimaryShipping: { City: value } };
      const { payload, report } = plan.apply(input);
      expect(payload).toBe(input);
      expect(report).toEqual({ decoded: [], unchanged: [], malformed: ["PrimaryShipping.City"] });
    },
  );

  it("skips missing objects and fields, nulls and non-strings silently", () => {
    const input = {
      PrimaryShipping: null,
      SecondaryShipping: { Phone1: 4420, Email: null, City: { nested: "a+b" }, Address1: ["x+y"] },
      OrderTrackingUrl: true,
      ReturnedProducts: { Name: "not+an+array" },
    };
    const { payload, report } = plan.apply(input);
    expect(payload).toBe(input);
    expect(report).toEqual({ decoded: [], unchanged: [], malformed: [] });
  });

  it.each([null, undefined, 42, "a+b", ["a+b"], true])(
    "returns a non-object payload %j as it is",
    (value) => {
      const { payload, report } = plan.apply(value);
      expect(payload).toBe(value);
      expect(report).toEqual({ decoded: [], unchanged: [], malformed: [] });
    },
  );

  it("does not read inherited properties", () => {
    const parent = { PrimaryShipping: { City: "San+Francisco" } };
    const input = Object.create(parent) as Json;
    const { payload, report } = plan.apply(input);
    expect(payload).toBe(input);
    expect(report.decoded).toEqual([]);
  });
});

describe("an encoded value whose text starts with a space", () => {
  // wire-facts §6: the service keeps stray whitespace; .NET writes a leading space as a leading +.
  const sent = {
    Address1: "+548+Market+St.",
    Email: "+jane%2btag%40example.com",
    City: "+New+York",
    Phone1: "+442079460958",
  };
  const expected = {
    Address1: " 548 Market St.",
    Email: " jane+tag@example.com",
    City: " New York",
    Phone1: "+442079460958",
  };

  it("is decoded by the auto policy, while a phone's plus is kept", () => {
    const { payload, report } = compileDecoding(ORDER_FIELDS).apply({ PrimaryShipping: sent });
    expect(payload.PrimaryShipping).toEqual(expected);
    expect(report.decoded).toEqual([
      "PrimaryShipping.Email",
      "PrimaryShipping.Address1",
      "PrimaryShipping.City",
    ]);
    expect(report.unchanged).toEqual(["PrimaryShipping.Phone1"]);
  });

  it("reaches the merchant's function decoded, by the generated decoder and by the plan", async () => {
    const body = {
      OrderId: "E1",
      Products: [{ Sku: "A", Price: 1, Quantity: 1 }],
      PrimaryShipping: sent,
    };
    for (const decoding of [undefined, {}]) {
      const seen: unknown[] = [];
      const handler = createSendOrderToMerchantHandler(
        (order) => {
          seen.push({ ...order.PrimaryShipping });
          return { InternalOrderId: "M-1" };
        },
        decoding === undefined ? { auth: false } : { auth: false, decoding },
      );
      const response = await handler.handle({
        method: "POST",
        url: "/callback",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status, response.body).toBe(200);
      expect(seen).toEqual([expected]);
    }
  });
});

describe("security.md 25 and 26 through a handler", () => {
  type Seen = { payload: Json; raw: Json; decoding: unknown };

  async function deliver(primary: Json, secondary: Json): Promise<Seen[]> {
    const body = {
      OrderId: "E1",
      Products: [{ Sku: "A", Price: 1, Quantity: 1 }],
      PrimaryShipping: primary,
      SecondaryShipping: secondary,
    };
    const seen: Seen[] = [];
    // The generated decoder, the plan (a decoding option), and a body a framework parsed.
    for (const [decoding, input] of [
      [undefined, JSON.stringify(body)],
      [{}, JSON.stringify(body)],
      [undefined, structuredClone(body)],
    ] as const) {
      const failures: unknown[] = [];
      const handler = createSendOrderToMerchantHandler(
        (order, context) => {
          seen.push({
            payload: structuredClone({
              ...order.PrimaryShipping,
              ...prefixed(order.SecondaryShipping),
            }),
            raw: structuredClone({
              ...((context.rawPayload as unknown as Json).PrimaryShipping as Json),
              ...prefixed((context.rawPayload as unknown as Json).SecondaryShipping),
            }),
            decoding: structuredClone(context.decoding),
          });
          return { InternalOrderId: "M-1" };
        },
        {
          auth: false,
          onError: (failure) => void failures.push(failure),
          ...(decoding === undefined ? {} : { decoding }),
        },
      );
      const response = await handler.handle({
        method: "POST",
        url: "/callback",
        headers: { "content-type": "application/json" },
        body: input as never,
      });
      expect(response.status, response.body).toBe(200);
      expect(failures).toStrictEqual([]);
    }
    // The order is not lost: the merchant's function ran once per delivery.
    expect(seen).toHaveLength(3);
    return seen;
  }

  function prefixed(value: unknown): Json {
    const out: Json = {};
    for (const [k, v] of Object.entries((value ?? {}) as Json)) out[`Secondary.${k}`] = v;
    return out;
  }

  it.each(["%", "%zz", "%E0%A4%A", "%ED%A0%80", "100%"])(
    "25. %j in an encoded field: no exception, the order delivered, the raw value kept and reported",
    async (value) => {
      for (const seen of await deliver({ City: value, Address1: "548+Market+St." }, {})) {
        expect(seen.payload).toStrictEqual({ City: value, Address1: "548 Market St." });
        expect(seen.raw).toStrictEqual({ City: value, Address1: "548+Market+St." });
        expect(seen.decoding).toMatchObject({
          decoded: ["PrimaryShipping.Address1"],
          malformed: ["PrimaryShipping.City"],
        });
      }
    },
  );

  it("26. %2B33… → +33…, %252B → %2B (decoded once), a plain +44 20 … stays as sent", async () => {
    const primary = { Phone1: "%2B33+1+23+45+67+89", Address1: "%252B" };
    const secondary = { Phone1: "+44 20 7946 0958", Phone2: "+442079460958" };
    for (const seen of await deliver(primary, secondary)) {
      expect(seen.payload).toStrictEqual({
        Phone1: "+33 1 23 45 67 89",
        Address1: "%2B",
        "Secondary.Phone1": "+44 20 7946 0958",
        "Secondary.Phone2": "+442079460958",
      });
      expect(seen.raw).toStrictEqual({
        ...primary,
        "Secondary.Phone1": "+44 20 7946 0958",
        "Secondary.Phone2": "+442079460958",
      });
    }
  });
});

describe("StateOrProvice, the cart-side spelling the schemas accept on every address", () => {
  const request = (body: unknown): CallbackRequest => ({
    method: "POST",
    url: "/callback",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

  it("is decoded like StateOrProvince on an order address", async () => {
    const seen: unknown[] = [];
    const handler = createSendOrderToMerchantHandler(
      (order, context) => {
        seen.push({ ...order.PrimaryBilling }, context.decoding.decoded);
        return { InternalOrderId: "M-1" };
      },
      { auth: false },
    );
    const response = await handler.handle(
      request({
        OrderId: "E1",
        Products: [{ Sku: "A", Price: 1, Quantity: 1 }],
        PrimaryBilling: { StateOrProvice: "New+York", StateOrProvince: "New+York" },
      }),
    );
    expect(response.status, response.body).toBe(200);
    expect(seen).toEqual([
      { StateOrProvice: "New York", StateOrProvince: "New York" },
      ["PrimaryBilling.StateOrProvince", "PrimaryBilling.StateOrProvice"],
    ]);
  });

  it("is decoded on PaymentDetails, and a plain one is kept", async () => {
    const seen: unknown[] = [];
    const handler = createPerformOrderPaymentHandler(
      (payment) => {
        seen.push(payment.PaymentDetails.StateOrProvice);
        return { PaymentAmount: "1", PaymentCurrencyCode: "EUR" };
      },
      { auth: false },
    );
    for (const [sent, expected] of [
      ["Nouvelle+Aquitaine", "Nouvelle Aquitaine"],
      ["%c3%8ele-de-France", "Île-de-France"],
      ["New York", "New York"],
    ]) {
      const response = await handler.handle(
        request({ OrderId: "E1", PaymentDetails: { CardNumber: null, StateOrProvice: sent } }),
      );
      expect(response.status, response.body).toBe(200);
      expect(seen.pop()).toBe(expected);
    }
  });
});

describe("policies", () => {
  it("always decodes even a plain phone (that is what always means); auto keeps it", () => {
    const input = { PrimaryShipping: { Phone1: "+44 20 7946 0958" } };
    const always = compileDecoding(["PrimaryShipping.Phone1"], { default: "always" });
    const auto = compileDecoding(["PrimaryShipping.Phone1"], { default: "auto" });
    expect(always.apply(input).payload).toEqual({
      PrimaryShipping: { Phone1: " 44 20 7946 0958" },
    });
    expect(always.apply(input).report.decoded).toEqual(["PrimaryShipping.Phone1"]);
    expect(auto.apply(input).payload).toBe(input);
  });

  it("always reports malformed values and values with nothing to decode", () => {
    const plan = compileDecoding(["A", "B", "C"], { default: "always" });
    const { payload, report } = plan.apply({ A: "100% Cotton Lane", B: "London", C: "a b+c" });
    expect(payload).toEqual({ A: "100% Cotton Lane", B: "London", C: "a b c" });
    expect(report).toEqual({ decoded: ["C"], unchanged: ["B"], malformed: ["A"] });
  });

  it("off never touches a value, and reports it unchanged", () => {
    const plan = compileDecoding(ORDER_FIELDS, { default: "off" });
    const input = order();
    const { payload, report } = plan.apply(input);
    expect(payload).toBe(input);
    expect(report.decoded).toEqual([]);
    expect(report.malformed).toEqual([]);
    expect(report.unchanged).toContain("PrimaryShipping.Email");
    expect(report.unchanged).toContain("ReturnedProducts.2.Name");
  });

  it("applies a bare field name to that field in every object", () => {
    const plan = compileDecoding(ORDER_FIELDS, { fields: { Phone1: "off" } });
    const { payload, report } = plan.apply(order());
    expect((payload.PrimaryShipping as Json).Phone1).toBe("%2B33+1+23+45+67+89");
    expect((payload.PrimaryShipping as Json).Email).toBe("jane.doe@example.com");
    expect(report.unchanged).toContain("PrimaryShipping.Phone1");
    expect(report.unchanged).toContain("SecondaryShipping.Phone1");
  });

  it("lets a full path win over a bare name, and a bare name over the default", () => {
    const plan = compileDecoding(ORDER_FIELDS, {
      default: "off",
      fields: { Phone1: "always", "SecondaryShipping.Phone1": "auto" },
    });
    const policies = Object.fromEntries(plan.entries.map((e) => [e.path, e.policy]));
    expect(policies["PrimaryShipping.Phone1"]).toBe("always");
    expect(policies["SecondaryShipping.Phone1"]).toBe("auto");
    expect(policies["PrimaryShipping.Email"]).toBe("off");
    const { payload } = plan.apply(order());
    expect((payload.PrimaryShipping as Json).Phone1).toBe("+33 1 23 45 67 89");
    expect((payload.SecondaryShipping as Json).Phone1).toBe("+ 44 (0)808 258 0300");
    expect((payload.PrimaryShipping as Json).Email).toBe("jane.doe%40example.com");
  });

  it("applies a bare name under a * segment", () => {
    const plan = compileDecoding(ORDER_FIELDS, { fields: { Name: "off" } });
    const input = order();
    expect(plan.apply(input).payload.ReturnedProducts).toBe(input.ReturnedProducts);
  });

  it("adds a full path that is not in the callback's list (always / auto only)", () => {
    const plan = compileDecoding(ORDER_FIELDS, {
      fields: { CustomerComments: "always", "Gift.Message": "auto", "Gift.From": "off" },
    });
    expect(plan.entries.map((e) => e.path)).toEqual([
      ...ORDER_FIELDS,
      "CustomerComments",
      "Gift.Message",
    ]);
    const input = {
      CustomerComments: "Please+ring+twice",
      Gift: { Message: "Hi%21", From: "A+B" },
    };
    const { payload, report } = plan.apply(input);
    expect(payload).toEqual({
      CustomerComments: "Please ring twice",
      Gift: { Message: "Hi!", From: "A+B" },
    });
    expect(report.decoded).toEqual(["CustomerComments", "Gift.Message"]);
  });

  it("visits every array element with *, also at the root and at the leaf", () => {
    const plan = compileDecoding(["*.Tags.*"]);
    const input = [{ Tags: ["a+b", "plain", 3, null] }, null, { Tags: "x+y" }, { Tags: ["c%2fd"] }];
    const { payload, report } = plan.apply(input);
    expect(payload).toEqual([
      { Tags: ["a b", "plain", 3, null] },
      null,
      { Tags: "x+y" },
      { Tags: ["c/d"] },
    ]);
    expect(payload[2]).toBe(input[2]);
    expect(report).toEqual({
      decoded: ["0.Tags.0", "3.Tags.0"],
      unchanged: ["0.Tags.1"],
      malformed: [],
    });
  });

  it("keeps both a * path's and a sibling index path's changes to one element", () => {
    const plan = compileDecoding(["Items.*.Name", "Items.0.Note"]);
    const input = {
      Items: [
        { Name: "A+B", Note: "C+D" },
        { Name: "E+F", Note: "G+H" },
      ],
    };
    const { payload } = plan.apply(input);
    expect(payload).toEqual({
      Items: [
        { Name: "A B", Note: "C D" },
        { Name: "E F", Note: "G+H" },
      ],
    });
    expect(input.Items[0]).toEqual({ Name: "A+B", Note: "C+D" });
  });
});

describe("configuration errors", () => {
  it.each([
    "__proto__",
    "PrimaryShipping.__proto__.Phone1",
    "constructor.prototype.Phone1",
    "A.prototype",
    "",
    "A..B",
    ".A",
    "A.",
  ])("rejects the path %j, in the list and in fields", (path) => {
    expect(() => compileDecoding([path])).toThrow(TypeError);
    const fields = JSON.parse(`{${JSON.stringify(path)}:"auto"}`) as Record<string, "auto">;
    expect(() => compileDecoding([], { fields })).toThrow(TypeError);
  });

  it("rejects an unknown policy", () => {
    expect(() => compileDecoding([], { default: "sometimes" as "auto" })).toThrow(TypeError);
    expect(() => compileDecoding(["A"], { fields: { A: "yes" as "auto" } })).toThrow(TypeError);
  });

  it("rejects two paths naming the same value", () => {
    expect(() => compileDecoding(["Items.*.Name", "Items.0.Name"])).toThrow(TypeError);
    expect(() =>
      compileDecoding(["Items.*.Name"], { fields: { "Items.1.Name": "always" } }),
    ).toThrow(TypeError);
    expect(() => compileDecoding(["Items.*.Name", "Items.*.Name"])).not.toThrow();
    expect(() => compileDecoding(["Items.*.Name", "Items.first.Name"])).not.toThrow();
  });
});

describe("prototype safety", () => {
  it("copies an own __proto__ key as data and changes no prototype", () => {
    const input = JSON.parse(
      '{"PrimaryShipping":{"__proto__":{"polluted":"yes"},"City":"San+Francisco"},"__proto__":{"x":1}}',
    ) as Json;
    const before = structuredClone(input);
    const plan = compileDecoding(["PrimaryShipping.City"]);
    const { payload } = plan.apply(input);
    const shipping = payload.PrimaryShipping as Json;
    expect(shipping.City).toBe("San Francisco");
    expect(Object.getPrototypeOf(shipping)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    expect(Object.hasOwn(shipping, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(shipping, "__proto__")?.value).toEqual({
      polluted: "yes",
    });
    expect(Object.hasOwn(payload, "__proto__")).toBe(true);
    expect(shipping.polluted).toBeUndefined();
    expect(({} as Json).polluted).toBeUndefined();
    expect(({} as Json).x).toBeUndefined();
    expect(input).toEqual(before);
  });
});

describe("properties", () => {
  const plan = compileDecoding(["A.Value", "List.*.Value"]);

  it("auto gives back any string not starting with a space from its encoding", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" })), (s) => {
        fc.pre(!s.startsWith(" "));
        const input = { A: { Value: encodeFormValue(s) }, List: [{ Value: encodeFormValue(s) }] };
        const { payload } = plan.apply(input);
        expect(payload).toEqual({ A: { Value: s }, List: [{ Value: s }] });
      }),
    );
  });

  it("decodes once: an encoding of an encoding comes back as the first encoding", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        fc.pre(!s.startsWith(" "));
        const once = encodeFormValue(s);
        const { payload } = plan.apply({ A: { Value: encodeFormValue(once) } });
        expect(payload.A.Value).toBe(once);
      }),
    );
  });

  const anyValue = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.string({
      unit: fc.oneof(
        fc.constantFrom("%", "+", " ", "@", "2", "b", "e", "d", "a", "0", "8", "f", "z"),
        fc.string({ unit: "binary", maxLength: 1 }),
      ),
    }),
    fc.string({ unit: "grapheme" }).map(encodeFormValue),
    fc.constantFrom(null, 1, true),
  );

  it("never throws, never mutates, and reports each present string exactly once", () => {
    const policies = fc.constantFrom("off" as const, "always" as const, "auto" as const);
    fc.assert(
      fc.property(
        policies,
        anyValue,
        fc.array(fc.option(fc.record({ Value: anyValue }), { nil: null })),
        (policy, value, list) => {
          const p = compileDecoding(["A.Value", "List.*.Value"], { default: policy });
          const input = { A: { Value: value }, List: list };
          const before = structuredClone(input);
          const { payload, report } = p.apply(input);
          expect(input).toEqual(before);
          const strings = [
            ...(typeof value === "string" ? ["A.Value"] : []),
            ...list.flatMap((item, i) =>
              typeof item?.Value === "string" ? [`List.${i}.Value`] : [],
            ),
          ];
          const reported = [...report.decoded, ...report.unchanged, ...report.malformed];
          expect(reported.sort()).toEqual(strings.sort());
          if (report.decoded.length === 0) expect(payload).toBe(input);
          else expect(payload).not.toBe(input);
        },
      ),
      { numRuns: 500 },
    );
  });
});
