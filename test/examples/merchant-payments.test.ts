/**
 * The examples' merchant code charges an order's card once: SendOrderToMerchant with the card in
 * the order (spec 001 §4.2), the same order delivered again, and PerformOrderPayment after it all
 * answer what was paid, and the card is charged the first time only; an order the service paid
 * itself (payment method "OT", no card) is charged never. Merchants copy this code.
 */
import { describe, expect, it } from "vitest";
import {
  createMerchantRouter,
  MemoryStore,
  merchantHandlers,
} from "../../examples/express/merchant.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { createTestKeys, samplePayload, sendCallback } from "../../src/testing/index.js";

function handlersOf(store: MemoryStore) {
  const handlers = merchantHandlers(store);
  return {
    order: (payload: unknown) => handlers.SendOrderToMerchant(payload as never),
    payment: (payload: unknown) => handlers.PerformOrderPayment(payload as never),
  };
}

describe("examples' merchant: an order's payment", () => {
  it("a card in the order is charged once, whatever repeats it (a redelivery, PerformOrderPayment)", async () => {
    const store = new MemoryStore();
    const { order, payment } = handlersOf(store);
    const sent = samplePayload("SendOrderToMerchant", { OrderId: "GE-PAY-1" });
    const first = await order(sent);
    const again = await order(sent);
    const paid = await payment(samplePayload("PerformOrderPayment", { OrderId: "GE-PAY-1" }));
    for (const answer of [first, again, paid]) {
      expect(answer).toMatchObject({ PaymentAmount: 123.73, PaymentCurrencyCode: "USD" });
    }
    expect(store.charges).toStrictEqual([
      { orderId: "GE-PAY-1", charge: { amount: 123.73, currencyCode: "USD" } },
    ]);
  });

  it("an order the service paid itself (OT, no card) is not charged, and its amount is reported", async () => {
    const store = new MemoryStore();
    const { order, payment } = handlersOf(store);
    const sample = samplePayload("SendOrderToMerchant") as unknown as Record<string, unknown>;
    const collected = {
      ...(sample.PaymentDetails as Record<string, unknown>),
      CardNumber: null,
      CVVNumber: null,
      PaymentMethodCode: "OT",
    };
    const answer = await order({ ...sample, OrderId: "GE-PAY-2", PaymentDetails: collected });
    expect(answer).toMatchObject({ PaymentAmount: 123.73, PaymentCurrencyCode: "USD" });
    await payment({
      ...(samplePayload("PerformOrderPayment") as unknown as Record<string, unknown>),
      OrderId: "GE-PAY-2",
      PaymentDetails: collected,
    });
    expect(store.charges).toStrictEqual([]);
  });

  it("no charge without a card number, or for OT however it is spelt (wire-facts §6: stray whitespace)", async () => {
    for (const [code, card] of [
      ["OT ", null],
      ["ot", null],
      [" OT", "4111111111111111"],
      ["CC", null],
      ["CC", "  "],
    ] as const) {
      const store = new MemoryStore();
      const { order, payment } = handlersOf(store);
      const sample = samplePayload("SendOrderToMerchant") as unknown as Record<string, unknown>;
      const details = {
        ...(sample.PaymentDetails as Record<string, unknown>),
        CardNumber: card,
        CVVNumber: null,
        PaymentMethodCode: code,
      };
      await order({ ...sample, OrderId: "GE-PAY-5", PaymentDetails: details });
      await payment({
        ...(samplePayload("PerformOrderPayment") as unknown as Record<string, unknown>),
        OrderId: "GE-PAY-5",
        PaymentDetails: details,
      });
      expect(store.charges, `${JSON.stringify(code)} card ${String(card)}`).toStrictEqual([]);
    }
  });

  it("PerformOrderPayment charges its own totals over the order's, when they differ", async () => {
    const store = new MemoryStore();
    const { order, payment } = handlersOf(store);
    await order(
      samplePayload("SendOrderToMerchant", { OrderId: "GE-PAY-4", PaymentDetails: null }),
    );
    const answer = await payment(
      samplePayload("PerformOrderPayment", {
        OrderId: "GE-PAY-4",
        InternationalDetails: { TransactionTotalPrice: 99.5, TransactionCurrencyCode: "GBP" },
      }),
    );
    expect(answer).toMatchObject({ PaymentAmount: 99.5, PaymentCurrencyCode: "GBP" });
    expect(store.charges).toStrictEqual([
      { orderId: "GE-PAY-4", charge: { amount: 99.5, currencyCode: "GBP" } },
    ]);
  });

  it("an order without a card is paid by PerformOrderPayment, once", async () => {
    const store = new MemoryStore();
    const { order, payment } = handlersOf(store);
    const answer = await order(
      samplePayload("SendOrderToMerchant", { OrderId: "GE-PAY-3", PaymentDetails: null }),
    );
    expect(answer).not.toHaveProperty("PaymentAmount");
    const delivery = samplePayload("PerformOrderPayment", { OrderId: "GE-PAY-3" });
    await payment(delivery);
    await payment(delivery);
    expect(store.charges.map((entry) => entry.orderId)).toStrictEqual(["GE-PAY-3"]);
  });

  // Review r4 R4-10: the library protects PaymentDetails under its key in any letter case, and
  // the testing kit asks for the amount charged then; the examples charge then too.
  it("a card under paymentDetails in another letter case is charged, and the testing kit agrees", async () => {
    const store = new MemoryStore();
    const { order, payment } = handlersOf(store);
    const { PaymentDetails: details, ...rest } = samplePayload("SendOrderToMerchant", {
      OrderId: "GE-PAY-6",
    }) as unknown as Record<string, unknown>;
    const answer = await order({ ...rest, paymentDetails: details });
    expect(answer).toMatchObject({ PaymentAmount: 123.73, PaymentCurrencyCode: "USD" });
    const { PaymentDetails: paid, ...payRest } = samplePayload("PerformOrderPayment", {
      OrderId: "GE-PAY-7",
      InternationalDetails: { TransactionTotalPrice: 10, TransactionCurrencyCode: "EUR" },
    }) as unknown as Record<string, unknown>;
    await order(
      samplePayload("SendOrderToMerchant", { OrderId: "GE-PAY-7", PaymentDetails: null }),
    );
    await payment({ ...payRest, PAYMENTDETAILS: paid });
    expect(store.charges.map((entry) => entry.orderId)).toStrictEqual(["GE-PAY-6", "GE-PAY-7"]);

    // Through the router, as the service calls it: the kit has nothing to warn about.
    const guid = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";
    const keys = await createTestKeys();
    const routed = new MemoryStore();
    const router = createMerchantRouter(
      { publicKey: keys.publicKey, environment: "test", merchantGuid: guid },
      { store: routed },
    );
    const fetchRouter = toFetch(router);
    const result = await sendCallback("http://merchant.test/crossborder", "SendOrderToMerchant", {
      privateKey: keys.privateKey,
      merchantGuid: guid,
      payload: { ...rest, OrderId: "GE-PAY-8", paymentDetails: details },
      fetch: (request) => fetchRouter(request),
    });
    expect(result.status).toBe(200);
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(routed.charges.map((entry) => entry.orderId)).toStrictEqual(["GE-PAY-8"]);
  });
});
