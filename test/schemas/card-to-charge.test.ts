// hasCardToCharge: one rule for "the merchant charges this payment", shared by the testing kit's
// warning and the examples' payOnce (wire-facts §6: the service's own collection arrives as
// PaymentMethodCode "OT" with CardNumber null, and codes arrive with stray whitespace).
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  createPerformOrderPaymentHandler,
  hasCardToCharge,
  paymentDetailsOf,
} from "../../src/index.js";
import { post } from "../core/helpers.js";

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

  // Review c1 defect 2: the library protects `cardNumber`, `CARDNUMBER` as the card number (the
  // service binds names in any case); hasCardToCharge said "no card" for them.
  it("reads the card number and the method under their keys in any letter case", () => {
    for (const key of ["cardNumber", "CARDNUMBER", "cardnumber"]) {
      expect(hasCardToCharge({ [key]: "4111111111111111", PaymentMethodCode: "1" }), key).toBe(
        true,
      );
      expect(hasCardToCharge({ [key]: "4111111111111111", paymentMethodCode: "ot" }), key).toBe(
        false,
      );
      expect(hasCardToCharge({ [key]: "  ", PaymentMethodCode: "1" }), key).toBe(false);
    }
    // The exact key null (the service's own collection), a card under another case all the same.
    expect(hasCardToCharge({ CardNumber: null, cardNumber: "4111111111111111" })).toBe(true);
    expect(hasCardToCharge({ PAYMENTMETHODCODE: " OT ", CardNumber: "4111111111111111" })).toBe(
      false,
    );
  });

  it("inside a handler: a card under another case, protected as the card, is a card to charge", async () => {
    const visa = "4111111111111111";
    const body = JSON.parse(readFileSync("test/fixtures/PerformOrderPayment.json", "utf8"));
    const { CardNumber: _card, CVVNumber: _cvv, ...rest } = body.PaymentDetails;
    body.PaymentDetails = { ...rest, PaymentMethodCode: "1", cardNumber: visa, cvvNumber: "737" };
    let charge: boolean | undefined;
    let printed = "";
    const handler = createPerformOrderPaymentHandler(
      (payload) => {
        charge = hasCardToCharge(payload.PaymentDetails);
        printed = JSON.stringify(payload.PaymentDetails) + inspect(payload.PaymentDetails);
        return { PaymentAmount: "1", PaymentCurrencyCode: "USD" };
      },
      { auth: false, onError: () => {} },
    );
    expect((await handler.handle(post(JSON.stringify(body)))).status).toBe(200);
    expect(printed).not.toContain(visa);
    expect(charge).toBe(true);
  });
});

describe("paymentDetailsOf", () => {
  it("reads PaymentDetails, the exact key first, else the key in any letter case", () => {
    const card = { CardNumber: "4111111111111111" };
    const other = { CardNumber: null, PaymentMethodCode: "OT" };
    expect(paymentDetailsOf({ PaymentDetails: card })).toBe(card);
    expect(paymentDetailsOf({ paymentDetails: card })).toBe(card);
    expect(paymentDetailsOf({ PAYMENTDETAILS: card })).toBe(card);
    expect(paymentDetailsOf({ paymentDetails: card, PaymentDetails: other })).toBe(other);
    expect(paymentDetailsOf({ PaymentDetails: null, paymentDetails: card })).toBeNull();
    for (const value of [{}, { Payment_Details: card }, null, "PaymentDetails", [card]]) {
      expect(paymentDetailsOf(value)).toBeUndefined();
    }
    expect(hasCardToCharge(paymentDetailsOf({ paymentdetails: card }))).toBe(true);
  });
});
