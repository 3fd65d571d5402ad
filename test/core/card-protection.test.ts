// Card protection by prototype (issue 13): a PaymentDetails object takes one shared prototype
// holding the masked views, instead of four properties defined on each object. Every guarantee
// of the per-object methods holds: masked JSON / String / util.inspect, nothing seen when the
// object is spread or iterated, a payload key named like a method cannot unmask it, a frozen
// body is tolerated.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { dropCvv } from "../../src/core/card.js";
import {
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
} from "../../src/index.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";
import { parsed, post } from "./helpers.js";
import { paymentDetails } from "./leaks.js";

const VISA = "4111111111111111";
const OK = { PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" };

function order(details: Record<string, unknown>): Record<string, unknown> {
  return { OrderId: "GE1", MerchantGUID: "guid-1", Products: [], PaymentDetails: details };
}

async function deliver(
  body: unknown,
): Promise<{ details: Record<string, unknown>; status: number }> {
  let details: Record<string, unknown> | undefined;
  const response = await createPerformOrderPaymentHandler(
    (payload) => {
      details = payload.PaymentDetails as unknown as Record<string, unknown>;
      return OK;
    },
    { auth: false, onError: () => undefined },
  ).handle(post(typeof body === "string" ? body : parsed(body)));
  return { details: details as Record<string, unknown>, status: response.status };
}

function expectMasked(details: Record<string, unknown>): void {
  for (const view of [JSON.stringify(details), String(details), inspect(details)]) {
    expect(view).not.toContain(VISA);
    expect(view).toContain("1111");
  }
}

describe("PaymentDetails protected by prototype", () => {
  it("its masked views come from one shared prototype above Object.prototype", async () => {
    const a = await deliver(JSON.stringify(order(paymentDetails(VISA, "737"))));
    const b = await deliver(JSON.stringify(order(paymentDetails(VISA, "737"))));
    expect(a.status).toBe(200);
    const proto = Object.getPrototypeOf(a.details);
    expect(proto).not.toBe(Object.prototype);
    expect(Object.getPrototypeOf(b.details)).toBe(proto);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    // No method is the object's own: nothing is defined per object.
    expect(Reflect.ownKeys(a.details).filter((key) => typeof key === "symbol")).toStrictEqual([]);
    expect(Object.getOwnPropertyNames(a.details)).not.toContain("toJSON");
    expectMasked(a.details);
  });

  it("spreading, iterating or cloning sees only the data (the copy is plain, as before)", async () => {
    const { details } = await deliver(JSON.stringify(order(paymentDetails(VISA, "737"))));
    const iterated: string[] = [];
    for (const key in details) iterated.push(key);
    expect(iterated).toStrictEqual(Object.keys(details));
    expect(iterated).not.toContain("toJSON");
    const spread = { ...details };
    expect(Object.getPrototypeOf(spread)).toBe(Object.prototype);
    // The card fields are not enumerable (review PIT-1): a spread leaves them out, the object
    // itself still reads them.
    expect(spread.CardNumber).toBeUndefined();
    expect(spread.CVVNumber).toBeUndefined();
    expect(spread.OwnerName).toBe("Jane Doe");
    expect(details.CardNumber).toBe(VISA);
    const cloned = structuredClone(details);
    expect(Object.getPrototypeOf(cloned)).toBe(Object.prototype);
    expect(cloned).toStrictEqual(spread);
    expect(details).toStrictEqual(spread);
  });

  it("a payload key named toJSON or toString cannot unmask it", async () => {
    const body = `{"OrderId":"GE1","MerchantGUID":"g","Products":[],"PaymentDetails":{"CardNumber":"${VISA}","CVVNumber":"737","toJSON":"x","toString":{"a":1}}}`;
    const { details, status } = await deliver(body);
    expect(status).toBe(200);
    expect(details.CardNumber).toBe(VISA);
    expectMasked(details);
    expect(String(details)).toBe("[PaymentDetails ************1111]");
  });

  // Found by mutation testing: with both keys, either check alone sent the object the safe way;
  // each key by itself must keep the prototype from being used (an own `toJSON` string shadows the
  // prototype's method and JSON.stringify prints every field).
  for (const key of ["toJSON", "toString"]) {
    it(`a payload key named ${key} alone cannot unmask it`, async () => {
      const body = `{"OrderId":"GE1","MerchantGUID":"g","Products":[],"PaymentDetails":{"CardNumber":"${VISA}","CVVNumber":"737","${key}":"x"}}`;
      const { details, status } = await deliver(body);
      expect(status).toBe(200);
      expect(details.CardNumber).toBe(VISA);
      expectMasked(details);
      expect(String(details)).toBe("[PaymentDetails ************1111]");
    });
  }

  // Found by mutation testing: the raw view's copy of a PaymentDetails takes its original's
  // prototype, so nothing tested its own protection; an original protected by own methods (a
  // payload key toJSON) has none to pass on, and only that protection masks the copy.
  it("the raw payload's copy of a PaymentDetails protected by own methods prints masked too", async () => {
    const body = `{"OrderId":"GE1","MerchantGUID":"g","Products":[],"PaymentDetails":{"CardNumber":"${VISA}","CVVNumber":"737","OwnerName":"Jane+Doe","toJSON":"x"}}`;
    let raw: Record<string, unknown> | undefined;
    let views: string[] = [];
    const response = await createPerformOrderPaymentHandler(
      (payload, context) => {
        raw = context.rawPayload.PaymentDetails as unknown as Record<string, unknown>;
        expect(payload.PaymentDetails?.OwnerName).toBe("Jane Doe");
        expect(raw.OwnerName).toBe("Jane+Doe");
        expect(raw.CardNumber).toBe(VISA);
        views = [JSON.stringify(context.rawPayload), String(raw), inspect(context.rawPayload)];
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body));
    expect(response.status).toBe(200);
    expect(views).toHaveLength(3);
    for (const view of views) expect(view).not.toContain(VISA);
    expectMasked(raw as Record<string, unknown>);
    expect(Object.hasOwn(raw as object, "CVVNumber")).toBe(false);
  });

  // Review A, D1: Deno prints whatever its hook returns through String(), so a hook returning the
  // masked object printed `[object Object]`. It returns the text Deno's own `inspect` makes of
  // the masked copy (Deno passes it, with its options); the real Deno is in test/adapters/deno.test.ts.
  it("Deno's inspect hook returns the masked text, with or without Deno's inspect", async () => {
    const hooks: unknown[] = [];
    const response = await createPerformOrderPaymentHandler(
      (payload) => {
        const details = payload.PaymentDetails as unknown as Record<string | symbol, unknown>;
        const hook = details[Symbol.for("Deno.customInspect")] as (...args: unknown[]) => unknown;
        // Deno's `inspect` counts from zero: the hook passes on the depth left where it sits.
        const depthSeen = (_value: unknown, options: { depth?: unknown }) =>
          `depth ${options.depth}`;
        hooks.push(
          hook.call(details, inspect, { depth: 4 }),
          hook.call(details),
          hook.call(details, depthSeen, { depth: 4, currentDepth: 3 }),
          hook.call(details, depthSeen, { depth: 4, currentDepth: "3" }),
        );
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(JSON.stringify(order(paymentDetails(VISA, "737")))));
    expect(response.status).toBe(200);
    const [full, short, relative, unknown] = hooks;
    expect([relative, unknown]).toEqual(["depth 1", "depth 4"]);
    expect(typeof full).toBe("string");
    expect(full).toContain("CardNumber: '************1111'");
    expect(full).toContain("CVVNumber: '***'");
    expect(short).toBe("[PaymentDetails ************1111]");
    for (const view of hooks) {
      expect(view).not.toContain(VISA);
      expect(view).not.toContain("737");
    }
  });

  it("a frozen body is tolerated (its decoded copy is protected)", async () => {
    const freeze = (value: unknown): unknown => {
      if (value !== null && typeof value === "object") {
        for (const item of Object.values(value)) freeze(item);
        Object.freeze(value);
      }
      return value;
    };
    const { details, status } = await deliver(freeze(order(paymentDetails(VISA, "737"))));
    expect(status).toBe(200);
    expect(details.CardNumber).toBe(VISA);
    expect(details.OwnerName).toBe("Jane Doe");
    expectMasked(details);
  });

  // Found by review: a frozen or sealed body whose PaymentDetails has nothing to decode was handed
  // over as it is (the generated checker accepted it, decoding copied nothing), unprotected, its
  // CVV kept. It now goes the copying way, as before issue 13.
  const plainDetails = (): Record<string, unknown> => ({
    ...paymentDetails(VISA, "737"),
    OwnerName: "Jane Doe",
    CountryName: "United States",
    Email: "jane.doe@example.com",
  });
  const deepFreeze = (value: unknown): unknown => {
    if (value !== null && typeof value === "object") {
      for (const item of Object.values(value)) deepFreeze(item);
      Object.freeze(value);
    }
    return value;
  };
  for (const [name, lock] of [
    ["a deep-frozen body", (body: Record<string, unknown>) => deepFreeze(body)],
    [
      "a body whose PaymentDetails is sealed",
      (body: Record<string, unknown>) => {
        Object.seal(body.PaymentDetails);
        return body;
      },
    ],
    [
      "a body whose PaymentDetails is not extensible",
      (body: Record<string, unknown>) => {
        Object.preventExtensions(body.PaymentDetails);
        return body;
      },
    ],
    // Found by mutation testing: an extensible object whose CVVNumber cannot be deleted.
    [
      "a body whose PaymentDetails' CVVNumber is not configurable",
      (body: Record<string, unknown>) => {
        Object.defineProperty(body.PaymentDetails, "CVVNumber", { configurable: false });
        return body;
      },
    ],
  ] as const) {
    it(`${name} with nothing to decode: the merchant's copy is masked and loses its CVV`, async () => {
      const { details, status } = await deliver(lock(order(plainDetails())));
      expect(status).toBe(200);
      expect(details.CardNumber).toBe(VISA);
      expectMasked(details);
      expect(JSON.stringify(details)).not.toContain('"737"');
      expect(inspect(details)).not.toContain("737");
      expect(details.CVVNumber).toBeUndefined();
    });
  }

  // Issue 13: decoding copies what refuses a write (a read-only field, a frozen container): the
  // payment object's copy, which is what the merchant gets, must be protected all the same.
  it("a PaymentDetails whose field to decode is read-only: the decoded copy is masked and loses its CVV", async () => {
    const details = paymentDetails(VISA, "737");
    Object.defineProperty(details, "OwnerName", {
      value: "Jane+Doe",
      enumerable: true,
      writable: false,
      configurable: true,
    });
    const body = order(details);
    const { details: seen, status } = await deliver(body);
    expect(status).toBe(200);
    expect(seen).not.toBe(details);
    expect(seen.OwnerName).toBe("Jane Doe");
    expect(seen.CardNumber).toBe(VISA);
    expectMasked(seen);
    expect(seen.CVVNumber).toBeUndefined();
    expect(details.CVVNumber).toBeUndefined();
  });

  it("a frozen body whose PaymentDetails is not: the merchant's payment object is masked and loses its CVV", async () => {
    const details = paymentDetails(VISA, "737");
    const body = Object.freeze({ ...order(details), VATRegistrationNumber: "FR+123" });
    let payload: Record<string, unknown> | undefined;
    const response = await createPerformOrderPaymentHandler(
      (value) => {
        payload = value as unknown as Record<string, unknown>;
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(parsed(body)));
    expect(response.status).toBe(200);
    expect(payload).not.toBe(body);
    expect(payload?.VATRegistrationNumber).toBe("FR 123");
    const seen = payload?.PaymentDetails as Record<string, unknown>;
    expect(seen.OwnerName).toBe("Jane Doe");
    expectMasked(seen);
    expect(seen.CVVNumber).toBeUndefined();
  });

  // Found by review of the sealed check: it relies on bodies made as JSON.parse makes them, which a
  // framework's own parsed body need not be. Such a body takes the sealing walk, as before.
  it("a framework's body whose PaymentDetails key holds undefined is refused, as the walk refuses it", async () => {
    // SendOrderToMerchant: its schema takes an order without PaymentDetails.
    const body = { ...SAMPLE_BUILDERS.SendOrderToMerchant(), PaymentDetails: undefined };
    let called = false;
    const response = await createSendOrderToMerchantHandler(
      () => {
        called = true;
        return { InternalOrderId: "M1" };
      },
      { auth: false, onError: () => undefined },
    ).handle(post(parsed(body)));
    expect(response.status).toBe(400);
    expect(called).toBe(false);
  });

  it("a framework's body with a hidden field and an own __proto__ key: the key never reaches the merchant", async () => {
    const body = order(paymentDetails(VISA, "737"));
    Object.defineProperty(body, "MerchantGUID", {
      value: "guid-1",
      enumerable: false,
      writable: true,
      configurable: true,
    });
    Object.defineProperty(body, "__proto__", {
      value: { polluted: true },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    let own = true;
    let merged: Record<string, unknown> = {};
    const response = await createPerformOrderPaymentHandler(
      (payload) => {
        own = Object.hasOwn(payload, "__proto__");
        merged = Object.assign({}, payload) as unknown as Record<string, unknown>;
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(parsed(body)));
    expect(response.status).toBe(200);
    expect(own).toBe(false);
    expect(merged.polluted).toBeUndefined();
  });

  // Found by review A (defect 7): a framework's body refused before the merchant's function kept
  // its CVV (the card-data and depth refusals) and printed unmasked (every 400).
  for (const [refusal, extra] of [
    ["the schema (a field of the wrong type)", { MerchantOrderId: 5 }],
    ["a second PaymentDetails that is an array", { OrderPaymentMethods: [{ PaymentDetails: [] }] }],
    [
      "a second PaymentDetails that is a string",
      { OrderPaymentMethods: [{ PaymentDetails: "x" }] },
    ],
    [
      "a PaymentDetails whose card number is a JSON number",
      { Other: { PaymentDetails: { CardNumber: 4111111111111111, CVVNumber: "123" } } },
    ],
    ["a body nested too deep", { Deep: JSON.parse(`${"[".repeat(70)}${"]".repeat(70)}`) }],
  ] as const) {
    it(`a framework's body refused by ${refusal}: every payment object masked, its CVV gone`, async () => {
      const details = paymentDetails(VISA, "737");
      const damaged = { CardNumber: VISA, CVVNumber: "737" };
      const body = { ...order(details), "\uFFFD(PaymentDetails": damaged, ...extra };
      const { status } = await deliver(body);
      expect(status).toBe(400);
      for (const card of [details, damaged]) {
        expect(Object.hasOwn(card, "CVVNumber")).toBe(false);
        expectMasked(card);
      }
      expect(JSON.stringify(body)).not.toMatch(/737|123|4111111111111111/);
    });
  }

  it("work a synchronous function leaves queued finds the CVV gone: it is removed when the function returns", async () => {
    let queued: unknown = "not run";
    let during: unknown;
    const response = await createPerformOrderPaymentHandler(
      (payload) => {
        const details = payload.PaymentDetails as unknown as Record<string, unknown>;
        during = details.CVVNumber;
        queueMicrotask(() => {
          queued = details.CVVNumber;
        });
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(JSON.stringify(order(paymentDetails(VISA, "737")))));
    expect(response.status).toBe(200);
    expect(during).toBe("737");
    expect(queued).toBeUndefined();
  });

  // Found by review (issue 13, third round): the CVV's quotes are masked before the field is
  // deleted; a quote that cannot be masked must not keep the field.
  it("a quote of the CVV that cannot be masked (a frozen nested value) does not keep the CVV field", async () => {
    const details = { ...paymentDetails(VISA, "737"), Extra: Object.freeze({ Note: "cvv 737" }) };
    const body = { ...SAMPLE_BUILDERS.SendOrderToMerchant(), PaymentDetails: details };
    const response = await createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M1" }), {
      auth: false,
      onError: () => undefined,
    }).handle(post(parsed(body)));
    expect(response.status).toBe(200);
    // The framework's own body, after the request.
    expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
  });

  it("a merchant that hangs a frozen quote of the CVV on the payment object: the CVV is still removed", async () => {
    let kept: Record<string, unknown> | undefined;
    const body = {
      ...SAMPLE_BUILDERS.SendOrderToMerchant(),
      PaymentDetails: paymentDetails(VISA, "737"),
    };
    const response = await createSendOrderToMerchantHandler(
      (payload) => {
        kept = payload.PaymentDetails as unknown as Record<string, unknown>;
        kept.Meta = Object.freeze({ seen: `cvv ${String(kept.CVVNumber)}` });
        Object.defineProperty(kept, "Note", {
          value: "cvv 737",
          enumerable: true,
          writable: false,
        });
        return { InternalOrderId: "M1" };
      },
      { auth: false, onError: () => undefined },
    ).handle(post(JSON.stringify(body)));
    expect(response.status).toBe(200);
    expect(Object.hasOwn(kept ?? {}, "CVVNumber")).toBe(false);
  });

  // Found by review: the card secrets are collected from a copy of the payment object's fields,
  // which a spread makes of its own enumerable ones only; the card fields are read as the eager
  // collection read them (any own or inherited field).
  for (const [shape, make] of [
    [
      "a hidden (non-enumerable) CVVNumber and CardNumber",
      () => {
        const details: Record<string, unknown> = { OwnerName: "Jane", PaymentMethodCode: "1" };
        Object.defineProperty(details, "CardNumber", {
          value: "4111111111111112",
          writable: true,
          configurable: true,
        });
        Object.defineProperty(details, "CVVNumber", {
          value: "737",
          writable: true,
          configurable: true,
        });
        return details;
      },
    ],
    [
      "card fields inherited from the object's prototype",
      () => {
        const details = Object.create({
          CardNumber: "4111111111111112",
          CVVNumber: "737",
        }) as Record<string, unknown>;
        details.OwnerName = "Jane";
        return details;
      },
    ],
  ] as const) {
    it(`a merchant's error quoting the card of a framework's body with ${shape} is reported masked`, async () => {
      const reported: string[] = [];
      const body = { ...SAMPLE_BUILDERS.SendOrderToMerchant(), PaymentDetails: make() };
      const response = await createSendOrderToMerchantHandler(
        (payload) => {
          const details = payload.PaymentDetails as unknown as Record<string, unknown>;
          throw new Error(
            `declined card ${String(details.CardNumber)} cvv ${String(details.CVVNumber)}`,
          );
        },
        {
          auth: false,
          onError: (failure) => {
            reported.push(String((failure.error as Error | undefined)?.message));
          },
        },
      ).handle(post(parsed(body)));
      expect(response.status).toBe(500);
      expect(reported).toHaveLength(1);
      expect(reported[0]).not.toContain("4111111111111112");
      expect(reported[0]).not.toContain("737");
    });
  }

  it("the shared prototype cannot be changed: masking holds for the next delivery", async () => {
    const first = await deliver(JSON.stringify(order(paymentDetails(VISA, "737"))));
    const proto = Object.getPrototypeOf(first.details) as Record<string, unknown>;
    expect(Reflect.set(proto, "toJSON", () => ({ leaked: true }))).toBe(false);
    expect(Reflect.set(proto, "toString", () => "leaked")).toBe(false);
    expect(Reflect.defineProperty(proto, "extra", { value: 1 })).toBe(false);
    expect(Reflect.deleteProperty(proto, "toJSON")).toBe(false);
    const second = await deliver(JSON.stringify(order(paymentDetails(VISA, "737"))));
    expectMasked(second.details);
    expect(JSON.stringify(second.details)).not.toContain("leaked");
  });
});

describe("a CVV-named key that cannot be deleted keeps no other (review-left D3)", () => {
  it("a framework's body whose Cvv2 is not configurable loses its CVVNumber and its other CVV keys all the same", async () => {
    const details: Record<string, unknown> = { CardNumber: VISA, PaymentMethodCode: "VI" };
    Object.defineProperty(details, "Cvv2", {
      value: "737",
      enumerable: true,
      writable: true,
      configurable: false,
    });
    details.cvvNumber = "737";
    details.CVVNumber = "737";
    const body = order(details);
    const { details: seen, status } = await deliver(body);
    expect(status).toBe(200);
    expect(seen.CardNumber).toBe(VISA);
    // What could be deleted was: CVVNumber first, then each other key on its own.
    expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
    expect(Object.hasOwn(details, "cvvNumber")).toBe(false);
    // Own names: the card number is kept, hidden from enumeration (review PIT-1).
    expect(Object.getOwnPropertyNames(details)).toStrictEqual([
      "CardNumber",
      "PaymentMethodCode",
      "Cvv2",
    ]);
  });

  // The scrub's own delete of a bare copy threw on such a key too, and every field after it kept
  // its quote of the CVV (second-left S4). A key that cannot be deleted but can be written is
  // overwritten with *** instead.
  it.each([
    ["before the quote", ["Cvv2", "Note"]],
    ["after the quote", ["Note", "Cvv2"]],
  ])(
    "a non-configurable Cvv2 %s: every quote is masked, and its value overwritten",
    async (_label, order2) => {
      const details: Record<string, unknown> = { CardNumber: VISA, PaymentMethodCode: "VI" };
      for (const key of order2) {
        if (key === "Note") details.Note = "cvv 737 given";
        else
          Object.defineProperty(details, "Cvv2", {
            value: "737",
            enumerable: true,
            writable: true,
            configurable: false,
          });
      }
      details.Memo = "the cvv was 737";
      details.CVVNumber = "737";
      const { status } = await deliver(order(details));
      expect(status).toBe(200);
      // Own names: the card number is kept, hidden from enumeration (review PIT-1).
      const raw = Object.fromEntries(
        Object.getOwnPropertyNames(details).map((key) => [
          key,
          Object.getOwnPropertyDescriptor(details, key)?.value,
        ]),
      );
      expect(raw).toStrictEqual({
        CardNumber: VISA,
        PaymentMethodCode: "VI",
        ...(order2[0] === "Cvv2"
          ? { Cvv2: "***", Note: "cvv *** given" }
          : { Note: "cvv *** given", Cvv2: "***" }),
        Memo: "the cvv was ***",
      });
    },
  );

  it("dropCvv on a sealed object: the CVV fields are overwritten with ***, the quotes masked", () => {
    const details: Record<string, unknown> = {
      CardNumber: VISA,
      CVVNumber: "737",
      Note: "cvv 737",
    };
    Object.seal(details);
    dropCvv(details);
    expect({ ...details }).toStrictEqual({ CardNumber: VISA, CVVNumber: "***", Note: "cvv ***" });
  });
});

// Review misbehave-3: a PaymentDetails the merchant's function froze (`Object.freeze`, an
// immutability helper's deep freeze of the order and of `context.rawPayload`) kept its CVV after
// the answer, with no report: a frozen data property can be neither deleted nor written. The CVV
// field is an accessor over a slot of its own once protected, which a freeze keeps: writing `***`
// through it still replaces the CVV, in the payload and in the raw payload's copy.
describe("a PaymentDetails frozen by the merchant's function (review misbehave-3)", () => {
  const deepFreeze = (value: unknown): unknown => {
    if (value !== null && typeof value === "object") {
      for (const item of Object.values(value)) deepFreeze(item);
      Object.freeze(value);
    }
    return value;
  };
  const body = () =>
    JSON.stringify({
      ...SAMPLE_BUILDERS.PerformOrderPayment(),
      ...order(paymentDetails(VISA, "737")),
    });

  it("Object.freeze(payload.PaymentDetails): the CVV does not outlive the function", async () => {
    let kept: Record<string, unknown> | undefined;
    let during: unknown;
    const response = await createPerformOrderPaymentHandler(
      (payload) => {
        kept = Object.freeze(payload.PaymentDetails) as unknown as Record<string, unknown>;
        during = kept.CVVNumber;
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(response.status).toBe(200);
    expect(during).toBe("737");
    expect(Object.isFrozen(kept)).toBe(true);
    expect(kept?.CVVNumber).toBe("***");
    expect(inspect(kept, { showHidden: true, getters: true })).not.toContain("737");
  });

  it("a deep freeze of the order and of context.rawPayload: neither keeps the CVV", async () => {
    let order: Record<string, Record<string, unknown>> | undefined;
    let raw: Record<string, Record<string, unknown>> | undefined;
    const response = await createPerformOrderPaymentHandler(
      (payload, context) => {
        order = deepFreeze(payload) as never;
        raw = deepFreeze(context.rawPayload) as never;
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(response.status).toBe(200);
    expect(order?.PaymentDetails?.CVVNumber).toBe("***");
    expect(raw?.PaymentDetails?.CVVNumber).toBe("***");
  });

  it("a freeze after a write: the value written is what is wiped", async () => {
    let kept: Record<string, unknown> | undefined;
    await createPerformOrderPaymentHandler(
      (payload) => {
        kept = payload.PaymentDetails as unknown as Record<string, unknown>;
        kept.CVVNumber = "4321";
        expect(kept.CVVNumber).toBe("4321");
        Object.freeze(kept);
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(kept?.CVVNumber).toBe("***");
  });

  it("the raw payload's CVV is a copy: a write to the payload's is not seen there", async () => {
    let seen: unknown[] = [];
    await createPerformOrderPaymentHandler(
      (payload, context) => {
        const raw = context.rawPayload.PaymentDetails as unknown as Record<string, unknown>;
        const details = payload.PaymentDetails as unknown as Record<string, unknown>;
        details.CVVNumber = "4321";
        seen = [details.CVVNumber, raw.CVVNumber];
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(seen).toEqual(["4321", "737"]);
  });

  it("the CVV field still reads, writes, hides and deletes as a value does", async () => {
    let seen: unknown[] = [];
    let kept: Record<string, unknown> | undefined;
    await createPerformOrderPaymentHandler(
      (payload) => {
        kept = payload.PaymentDetails as unknown as Record<string, unknown>;
        seen = [
          kept.CVVNumber,
          Object.hasOwn(kept, "CVVNumber"),
          Object.keys(kept).includes("CVVNumber"),
          "CVVNumber" in { ...kept },
          JSON.stringify(kept).includes("737"),
        ];
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(seen).toEqual(["737", true, false, false, false]);
    expect(Object.hasOwn(kept ?? {}, "CVVNumber")).toBe(false);
  });
});
