/**
 * The examples' merchant code for the callbacks after the first eight, called as the service calls
 * it (signed, through the example's router and the fetch adapter): a gift card's debit, a refund
 * and documents apply once when the example deduplicates; RemoveRestrictedProducts finds the
 * merchant's cart by `CartId` (spec 001 §4.7); NotifyOrderRefund records the refunds of either
 * form it arrives in. Merchants copy this code.
 */
import { type CallbackName, createMemoryIdempotencyStore } from "crossborder-callbacks";
import { toFetch } from "crossborder-callbacks/fetch";
import { createTestKeys, samplePayload, sendCallback } from "crossborder-callbacks/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { createMerchantRouter, MemoryStore } from "../../examples/express/merchant.js";
import { assertBuilt } from "./support/flow.js";

const GUID = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";
const BASE = "http://merchant.test/crossborder";

beforeAll(() => {
  assertBuilt();
});

/** The example's router over a fresh store, and a `send` signed as the service signs. */
async function example(deduplicate: boolean) {
  const keys = await createTestKeys();
  const store = new MemoryStore();
  const router = createMerchantRouter(
    { publicKey: keys.publicKey, environment: "test", merchantGuid: GUID },
    deduplicate ? { store, idempotency: { store: createMemoryIdempotencyStore() } } : { store },
  );
  const fetchHandler = toFetch(router);
  const send = (callback: CallbackName, payload: unknown, options: { cartToken?: string } = {}) =>
    sendCallback(BASE, callback, {
      privateKey: keys.privateKey,
      merchantGuid: GUID,
      authToken: "demo-auth-token",
      sessionId: "demo-session",
      payload,
      ...options,
      fetch: (request) => fetchHandler(request),
    });
  return { store, send };
}

describe("examples' merchant with idempotency on (IDEMPOTENCY_STORE)", () => {
  it("a redelivered RedeemGiftCard debits the gift card once", async () => {
    const { store, send } = await example(true);
    const redeem = samplePayload("RedeemGiftCard"); // 25.00 of the card's 100.00
    const first = await send("RedeemGiftCard", redeem);
    const again = await send("RedeemGiftCard", redeem); // the same delivery, redelivered
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(7_500);
    // The repeat gets the first delivery's answer.
    expect(again.body).toEqual(first.body);
  });

  it("a redelivered RefundGiftCard credits once; a redelivered NotifyOrderRefund is recorded once", async () => {
    const { store, send } = await example(true);
    const refund = samplePayload("RefundGiftCard"); // 10.00 back on the card
    await send("RefundGiftCard", refund);
    await send("RefundGiftCard", refund);
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(11_000);

    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant"));
    // The top-level form with no RefundID: only the deduplication tells a repeat.
    const notify = { ...samplePayload("NotifyOrderRefund"), RefundID: null };
    await send("NotifyOrderRefund", notify);
    await send("NotifyOrderRefund", notify);
    expect(store.orders.get("GE927127001US")?.refunds).toHaveLength(1);
  });
});

describe("examples' merchant without an idempotency store (review PIT-4: simulate redelivers gift cards)", () => {
  it("a redelivered RedeemGiftCard and RefundGiftCard apply once and answer the first Balance", async () => {
    const { store, send } = await example(false);
    const redeem = samplePayload("RedeemGiftCard"); // 25.00 of the card's 100.00
    const first = await send("RedeemGiftCard", redeem);
    const again = await send("RedeemGiftCard", redeem);
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(7_500);
    expect(again.body).toEqual(first.body);
    const refund = samplePayload("RefundGiftCard"); // 10.00 back on the card
    const credited = await send("RefundGiftCard", refund);
    expect(await send("RefundGiftCard", refund)).toMatchObject({ body: credited.body });
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(8_500);
    // Another redemption (another amount) is applied.
    await send("RedeemGiftCard", { ...redeem, Amount: "5.00" });
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(8_000);
  });

  // Review second-pit-1: every redemption or refund ever applied was remembered, so a card taken
  // off an order and applied again (redeem, refund, redeem of one amount) was not debited again.
  it("a redemption after a refund of the same amount on the same order is applied again", async () => {
    const { store, send } = await example(false);
    const redeem = samplePayload("RedeemGiftCard"); // 25.00 of the card's 100.00
    const refund = { ...samplePayload("RefundGiftCard"), Amount: "25.00" };
    await send("RedeemGiftCard", redeem);
    await send("RefundGiftCard", refund);
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(10_000);
    const third = await send("RedeemGiftCard", redeem);
    expect(store.cards.get("GC-7342-1109-5561")?.balanceCents).toBe(7_500);
    expect(third.body).toMatchObject({ Success: true, Balance: "75.00" });
  });
});

describe("examples' merchant, the newer callbacks", () => {
  it("RemoveRestrictedProducts per 001 §4.7 (CartId = the merchant's cart, CartToken = the SendCart token): the product leaves the cart", async () => {
    const { store, send } = await example(false);
    const result = await send("RemoveRestrictedProducts", {
      MerchantGUID: GUID,
      CartToken: "0b5e1c7a-service-sendcart-token",
      CartId: "demo-cart",
      RemovedProductCodes: ["MUG-WHT"],
    });
    expect(result.body).toEqual({ IsSuccess: true });
    const codes = store.carts.get("demo-cart")?.productsList.map((p) => p.ProductCode);
    expect(codes).toEqual(["TSHIRT-BLK-M"]);
  });

  it("RemoveRestrictedProducts as the testing kit sends it with cartToken (simulate --cart-token)", async () => {
    const { store, send } = await example(false);
    const sample = samplePayload("RemoveRestrictedProducts");
    const result = await send(
      "RemoveRestrictedProducts",
      { ...sample, RemovedProductCodes: ["MUG-WHT"] },
      { cartToken: "demo-cart" },
    );
    expect(result.body).toEqual({ IsSuccess: true });
    const codes = store.carts.get("demo-cart")?.productsList.map((p) => p.ProductCode);
    expect(codes).toEqual(["TSHIRT-BLK-M"]);
  });

  it("NotifyOrderRefund as the refund details (a Refunds list, 000 §2.4): each refund recorded with its id, amount and currency", async () => {
    const { store, send } = await example(false);
    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant", { OrderId: "GE-R1" }));
    const result = await send("NotifyOrderRefund", {
      OrderId: "GE-R1",
      MerchantGUID: GUID,
      Refunds: [
        { RefundID: "RF-1", TotalRefundAmount: "170.1000", CurrencyCode: "EUR" },
        { RefundID: "RF-2", TotalRefundAmount: "12.5000", CurrencyCode: "EUR" },
      ],
      RefundableAmount: { CurrencyCode: "EUR", TotalCreditAmount: 0 },
    });
    expect(result.status).toBe(200);
    expect(store.orders.get("GE-R1")?.refunds).toEqual([
      { refundId: "RF-1", amount: "170.1000", currency: "EUR" },
      { refundId: "RF-2", amount: "12.5000", currency: "EUR" },
    ]);
    // The details again, with a new refund: the ones recorded are not recorded twice.
    await send("NotifyOrderRefund", {
      OrderId: "GE-R1",
      MerchantGUID: GUID,
      Refunds: [
        { RefundID: "RF-1", TotalRefundAmount: "170.1000", CurrencyCode: "EUR" },
        { RefundID: "RF-2", TotalRefundAmount: "12.5000", CurrencyCode: "EUR" },
        { RefundID: "RF-3", TotalRefundAmount: "1.0000", CurrencyCode: "EUR" },
      ],
    });
    expect(store.orders.get("GE-R1")?.refunds.map((r) => r.refundId)).toEqual([
      "RF-1",
      "RF-2",
      "RF-3",
    ]);
  });

  it("NotifyOrderRefund's details are the order's whole refund state: a refund without RefundID is not counted again, an empty list records none", async () => {
    const { store, send } = await example(false);
    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant", { OrderId: "GE-R2" }));
    const first = { RefundID: null, TotalRefundAmount: "170.1000", CurrencyCode: "EUR" };
    await send("NotifyOrderRefund", { OrderId: "GE-R2", MerchantGUID: GUID, Refunds: [first] });
    const second = { RefundID: "RF-2", TotalRefundAmount: "1.0000", CurrencyCode: "EUR" };
    await send("NotifyOrderRefund", {
      OrderId: "GE-R2",
      MerchantGUID: GUID,
      Refunds: [first, second],
    });
    expect(store.orders.get("GE-R2")?.refunds).toEqual([
      { refundId: "refund-1", amount: "170.1000", currency: "EUR" },
      { refundId: "RF-2", amount: "1.0000", currency: "EUR" },
    ]);
    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant", { OrderId: "GE-R3" }));
    const empty = await send("NotifyOrderRefund", {
      OrderId: "GE-R3",
      MerchantGUID: GUID,
      Refunds: [],
      RefundableAmount: { CurrencyCode: "EUR", TotalCreditAmount: 0 },
    });
    expect(empty.status).toBe(200);
    expect(store.orders.get("GE-R3")?.refunds).toEqual([]);
  });

  it("NotifyOrderRefund: an older refund-details notice arriving late erases no newer refund; blank RefundIDs at the top level are distinct refunds", async () => {
    const { store, send } = await example(false);
    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant", { OrderId: "GE-R4" }));
    const one = { RefundID: "RF-1", TotalRefundAmount: "10.0000", CurrencyCode: "EUR" };
    const two = { RefundID: "RF-2", TotalRefundAmount: "5.0000", CurrencyCode: "EUR" };
    await send("NotifyOrderRefund", { OrderId: "GE-R4", MerchantGUID: GUID, Refunds: [one, two] });
    await send("NotifyOrderRefund", { OrderId: "GE-R4", MerchantGUID: GUID, Refunds: [one] });
    expect(store.orders.get("GE-R4")?.refunds.map((r) => r.refundId)).toEqual(["RF-1", "RF-2"]);

    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant", { OrderId: "GE-R5" }));
    for (const amount of ["1.0000", "2.0000"]) {
      const top = { OrderId: "GE-R5", MerchantGUID: GUID, RefundID: "", CurrencyCode: "EUR" };
      await send("NotifyOrderRefund", { ...top, TotalRefundAmount: amount });
    }
    expect(store.orders.get("GE-R5")?.refunds.map((r) => r.amount)).toEqual(["1.0000", "2.0000"]);
  });

  it("NotifyOrderRefund with the refund's own fields at the top level: recorded as sent", async () => {
    const { store, send } = await example(false);
    await send("SendOrderToMerchant", samplePayload("SendOrderToMerchant"));
    const result = await send("NotifyOrderRefund", samplePayload("NotifyOrderRefund"));
    expect(result.status).toBe(200);
    expect(store.orders.get("GE927127001US")?.refunds).toEqual([
      { refundId: "RF-20931", amount: "170.1000", currency: "USD" },
    ]);
  });
});
