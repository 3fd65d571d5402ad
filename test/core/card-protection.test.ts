// Card protection by prototype (issue 13): a PaymentDetails object takes one shared prototype
// holding the masked views, instead of four properties defined on each object. Every guarantee
// of the per-object methods holds: masked JSON / String / util.inspect, nothing seen when the
// object is spread or iterated, a payload key named like a method cannot unmask it, a frozen
// body is tolerated.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { createPerformOrderPaymentHandler } from "../../src/index.js";
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
    expect(spread.CardNumber).toBe(VISA);
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
});
