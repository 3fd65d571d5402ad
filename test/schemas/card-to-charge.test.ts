// hasCardToCharge: one rule for "the merchant charges this payment", shared by the testing kit's
// warning and the examples' payOnce (wire-facts §6: the service's own collection arrives as
// PaymentMethodCode "OT" with CardNumber null, and codes arrive with stray whitespace).
import { describe, expect, it } from "vitest";
import { hasCardToCharge } from "../../src/index.js";

describe("hasCardToCharge", () => {
  it("is true for a card number under any method but OT", () => {
    expect(hasCardToCharge({ CardNumber: "4111111111111111", PaymentMethodCode: "CC" })).toBe(true);
    expect(hasCardToCharge({ CardNumber: "1234" })).toBe(true); // a masked test card still says "charged"
  });

  it("is false for the service's own collection, however spelt, and without a card number", () => {
    for (const method of ["OT", " OT", "ot", "Ot "]) {
      expect(hasCardToCharge({ CardNumber: "4111111111111111", PaymentMethodCode: method })).toBe(
        false,
      );
    }
    for (const card of [null, undefined, "", "   "]) {
      expect(hasCardToCharge({ CardNumber: card, PaymentMethodCode: "CC" })).toBe(false);
    }
    for (const details of [null, undefined, "text", 42, []]) {
      expect(hasCardToCharge(details)).toBe(false);
    }
  });
});
