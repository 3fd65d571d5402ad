// Issue 13 (speed3): decoding in place records each decoded value as three entries of one flat
// log (frame, key, value as sent) rather than an object a value: 23 objects fewer per 30-product
// order. The raw view rebuilt from it is what it was, also when the merchant's function changed the
// payload before reading `rawPayload`, and the report is the same.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileDecoding } from "../../src/decode/policy.js";
import { PAYLOAD_DECODERS } from "../../src/generated/decoders.js";
import { createSendOrderToMerchantHandler } from "../../src/index.js";

const ORDER = new URL("../fixtures/SendOrderToMerchant.json", import.meta.url);
type Json = Record<string, unknown>;

function order(): Json {
  return JSON.parse(readFileSync(ORDER, "utf8")) as Json;
}

describe("the log of values decoded in place", () => {
  it("is flat: three entries a decoded value, no object a change (generated and plan alike)", () => {
    const generated = PAYLOAD_DECODERS.SendOrderToMerchant;
    if (generated === undefined) throw new Error("no generated decoder for the order");
    const fromGenerated = generated.decode(order());
    const fromPlan = compileDecoding(generated.fields).decodeInPlace(order());
    for (const result of [fromGenerated, fromPlan]) {
      if (result === undefined) throw new Error("the generated decoder declined");
      const log = (result as unknown as { changes: unknown[] }).changes;
      expect(result.report.decoded.length).toBeGreaterThan(10);
      expect(log).toHaveLength(3 * result.report.decoded.length);
      for (let c = 0; c < log.length; c += 3) {
        expect(typeof log[c + 1]).toBe("string");
        expect(typeof log[c + 2]).toBe("string");
        expect(Object.keys(log[c] as object).sort()).toStrictEqual(["key", "node", "parent"]);
      }
    }
  });

  it("gives the raw view as sent after the merchant changed the payload, and the same report", async () => {
    const sent = order();
    let raw: Json | undefined;
    let report: unknown;
    let reportBefore: unknown;
    const handler = createSendOrderToMerchantHandler(
      (payload, context) => {
        reportBefore = structuredClone(context.decoding);
        const p = payload as unknown as Json;
        const shipping = p.PrimaryShipping as Json;
        shipping.City = "Changed";
        shipping.Address1 = undefined;
        delete shipping.Email;
        shipping.Added = "new";
        p.PrimaryShipping = { ...shipping, Zip: "00000" };
        (p.PrimaryBilling as Json).Phone1 = "+1 000";
        raw = context.rawPayload as unknown as Json;
        report = structuredClone(context.decoding);
        return { InternalOrderId: "1", OrderId: "1" };
      },
      { auth: false, onError: () => undefined },
    );
    const response = await handler.handle({
      method: "POST",
      url: "/SendOrderToMerchant",
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify(sent)),
    });
    expect(response.status).toBe(200);
    if (raw === undefined) throw new Error("not called");
    expect(report).toStrictEqual(reportBefore);
    // The decoded values put back as sent, in the objects decoding saw (as they are now); the
    // replaced PrimaryShipping object of the payload is not the one decoding saw.
    const sentShipping = sent.PrimaryShipping as Json;
    const rawShipping = raw.PrimaryShipping as Json;
    expect(rawShipping.City).toBe(sentShipping.City);
    expect(rawShipping.Address1).toBe(sentShipping.Address1);
    expect(rawShipping.Email).toBe(sentShipping.Email);
    expect(rawShipping.Added).toBe("new");
    expect(rawShipping.Zip).toBe(sentShipping.Zip);
    expect((raw.PrimaryBilling as Json).Phone1).toBe((sent.PrimaryBilling as Json).Phone1);
    expect((raw.PrimaryBilling as Json).City).toBe((sent.PrimaryBilling as Json).City);
    expect(raw.Customer).toStrictEqual(sent.Customer);
  });
});
