/**
 * The examples' merchant code under the sequences the service can make for one order (review
 * sequence): a status update that overtakes its order (UpdateOrderStatus has no automatic retries,
 * spec 001 §4.3, so refusing it loses it), an order update after a cancellation, and a return or
 * parcel dispatch delivered again, with and without the example's idempotency store (six of the
 * seven examples run without one). Called as the service calls it: signed, through the example's
 * router and the fetch adapter. Merchants copy this code.
 */
import { type CallbackName, createMemoryIdempotencyStore } from "crossborder-callbacks";
import { toFetch } from "crossborder-callbacks/fetch";
import { createTestKeys, samplePayload, sendCallback } from "crossborder-callbacks/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createMerchantRouter, MemoryStore } from "../../examples/express/merchant.js";
import { ALL_CALLBACKS, rowProblems, simulate } from "../../src/cli/simulate.js";
import { assertBuilt } from "./support/flow.js";

const GUID = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";
const BASE = "http://merchant.test/crossborder";

beforeAll(() => {
  assertBuilt();
});

/**
 * What the example's router logs (it keeps the library's default `onError`: one line on
 * `console.error` per failure, `console.warn` per warning): kept here rather than printed, each
 * line asserted by the test that causes it, and none left over.
 */
const logged: string[] = [];
beforeEach(() => {
  const keep = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
  vi.spyOn(console, "error").mockImplementation(keep);
  vi.spyOn(console, "warn").mockImplementation(keep);
});
afterEach(() => {
  vi.restoreAllMocks();
  const left = logged.splice(0);
  expect(left).toEqual([]);
});

/** The example's router over a fresh store, and a `send` signed as the service signs. */
async function example(
  deduplicate: boolean,
  storeOptions?: ConstructorParameters<typeof MemoryStore>[0],
) {
  const keys = await createTestKeys();
  const store = new MemoryStore(storeOptions);
  const router = createMerchantRouter(
    { publicKey: keys.publicKey, environment: "test", merchantGuid: GUID },
    deduplicate ? { store, idempotency: { store: createMemoryIdempotencyStore() } } : { store },
  );
  const fetchHandler = toFetch(router);
  const send = (callback: CallbackName, payload: unknown) =>
    sendCallback(BASE, callback, {
      privateKey: keys.privateKey,
      merchantGuid: GUID,
      payload,
      fetch: (request) => fetchHandler(request),
    });
  /** `simulate` (the CLI's run) of these callbacks against the example. */
  const run = (callbacks: CallbackName[], payloads: Partial<Record<CallbackName, unknown>> = {}) =>
    simulate({
      url: BASE,
      callbacks,
      payloads,
      cartToken: "demo-cart",
      authToken: "demo-auth-token",
      sessionId: "demo-session",
      privateKey: keys.privateKey,
      merchantGuid: GUID,
      fetch: (request) => fetchHandler(request),
    });
  return { store, send, run };
}

type Order = Record<string, unknown> & { PrimaryShipping: Record<string, unknown> };
const order = (id: string) =>
  samplePayload("SendOrderToMerchant", { OrderId: id }) as unknown as Order;
const status = (id: string, code: string) =>
  samplePayload("UpdateOrderStatus", { OrderId: id, StatusCode: code });

for (const deduplicate of [false, true]) {
  const mode = deduplicate ? "with an idempotency store" : "without an idempotency store";

  describe(`a status update before its order (review sequence-1), ${mode}`, () => {
    it("a cancellation that arrives before the order is answered success, kept, and the order is recorded cancelled and not charged", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-EARLY-CANCEL-1";
      const cancel = await send("UpdateOrderStatus", status(id, "canceled"));
      // A refusal would be final: the service does not send UpdateOrderStatus again.
      expect(cancel.status).toBe(200);
      expect(cancel.body).toMatchObject({ Success: true });
      expect(cancel.problems).toEqual([]);
      const created = await send("SendOrderToMerchant", order(id));
      expect(created.status).toBe(200);
      // Nothing charged, said as such (review second-seq-6).
      expect(created.body).toMatchObject({
        Success: true,
        InternalOrderId: "M-1001",
        PaymentAmount: "0",
      });
      expect(store.orders.get(id)?.status).toBe("canceled");
      expect(store.orders.get(id)?.paid).toBeUndefined();
      expect(store.charges).toEqual([]);
      // A payment of the cancelled order is refused, and charges nothing.
      const payment = await send(
        "PerformOrderPayment",
        samplePayload("PerformOrderPayment", { OrderId: id }),
      );
      expect(payment.body).toMatchObject({ Success: false, ErrorCode: "ORDER_CANCELLED" });
      expect(logged).toEqual([
        expect.stringMatching(
          /^\[crossborder-callbacks\] PerformOrderPayment order \S+ 200 handler_failure: ORDER_CANCELLED: The order was cancelled$/,
        ),
      ]);
      logged.length = 0;
      expect(store.charges).toEqual([]);
      // The pending status was applied, not kept for ever.
      expect(store.pendingStatuses.has(id)).toBe(false);
    });

    it("simulate UpdateOrderStatus for an order the merchant does not know passes (README: Callbacks out of order)", async () => {
      const { store, run } = await example(deduplicate);
      const rows = await run(["UpdateOrderStatus"], {
        UpdateOrderStatus: status("GE-UNKNOWN-1", "canceled"),
      });
      expect(rows.map(rowProblems)).toEqual([[]]);
      expect(store.pendingStatuses.get("GE-UNKNOWN-1")).toBe("canceled");
    });

    it("another status that arrives before the order is applied to it; the order is charged as usual", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-EARLY-STATUS-1";
      expect((await send("UpdateOrderStatus", status(id, "N/A"))).body).toMatchObject({
        Success: true,
      });
      const created = await send("SendOrderToMerchant", { ...order(id), StatusCode: "pending" });
      expect(created.body).toMatchObject({ PaymentAmount: "123.73", PaymentCurrencyCode: "USD" });
      expect(store.orders.get(id)?.status).toBe("N/A");
      expect(store.charges).toHaveLength(1);
    });

    it("the order, its cancellation and their repeats at the same moment: one order, charged at most once, cancelled", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-RACE-1";
      const answers = await Promise.all([
        send("SendOrderToMerchant", order(id)),
        send("UpdateOrderStatus", status(id, "canceled")),
        send("SendOrderToMerchant", order(id)),
        send("UpdateOrderStatus", status(id, "canceled")),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      expect(answers.map((answer) => answer.problems)).toEqual([[], [], [], []]);
      const ids = new Set(
        answers.map((answer) => (answer.body as { InternalOrderId?: string }).InternalOrderId),
      );
      ids.delete(undefined);
      expect(ids.size).toBe(1);
      expect(store.orders.get(id)?.status).toBe("canceled");
      expect(store.charges.length).toBeLessThanOrEqual(1);
    });
  });

  describe(`an order update after a status update (review sequence-2), ${mode}`, () => {
    it("an order update after a cancellation keeps the order cancelled", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-UPDATE-AFTER-CANCEL-1";
      const sent = order(id);
      await send("SendOrderToMerchant", sent);
      expect((await send("UpdateOrderStatus", status(id, "canceled"))).status).toBe(200);
      expect(store.orders.get(id)?.status).toBe("canceled");
      // The service re-sends the order with changed content (as the simulator's update does).
      const update = { ...sent, PrimaryShipping: { ...sent.PrimaryShipping, Address2: "Suite+9" } };
      const updated = await send("SendOrderToMerchant", update);
      expect(updated.body).toMatchObject({ Success: true, InternalOrderId: "M-1001" });
      expect(store.orders.get(id)?.status).toBe("canceled");
      // The identical order delivered again (deduplicated or not) keeps it cancelled too.
      await send("SendOrderToMerchant", sent);
      expect(store.orders.get(id)?.status).toBe("canceled");
      expect(store.charges).toHaveLength(1);
    });

    it("a new order takes its StatusCode", async () => {
      const { store, send } = await example(deduplicate);
      await send("SendOrderToMerchant", { ...order("GE-NEW-1"), StatusCode: "pending" });
      expect(store.orders.get("GE-NEW-1")?.status).toBe("pending");
    });
  });

  describe(`a cancellation is final, from any source (review second-seq-3), ${mode}`, () => {
    it("an order update that states the order canceled (its UpdateOrderStatus lost) cancels it: not charged", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-UPDATE-SAYS-CANCELED-1";
      const sent = { ...order(id), PaymentDetails: null };
      await send("SendOrderToMerchant", { ...sent, StatusCode: "N/A" });
      const update = await send("SendOrderToMerchant", { ...sent, StatusCode: "canceled" });
      expect(update.body).toMatchObject({ Success: true, InternalOrderId: "M-1001" });
      expect(store.orders.get(id)?.status).toBe("canceled");
      const payment = await send(
        "PerformOrderPayment",
        samplePayload("PerformOrderPayment", { OrderId: id }),
      );
      expect(payment.body).toMatchObject({ Success: false, ErrorCode: "ORDER_CANCELLED" });
      expect(logged).toEqual([
        expect.stringMatching(
          /^\[crossborder-callbacks\] PerformOrderPayment order \S+ 200 handler_failure: ORDER_CANCELLED: The order was cancelled$/,
        ),
      ]);
      logged.length = 0;
      expect(store.charges).toEqual([]);
    });

    it("a cancellation then another status, both before the order: the order is cancelled, not charged", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-CANCEL-THEN-NA-1";
      await send("UpdateOrderStatus", status(id, "canceled"));
      await send("UpdateOrderStatus", status(id, "N/A"));
      await send("SendOrderToMerchant", { ...order(id), StatusCode: "N/A" });
      expect(store.orders.get(id)?.status).toBe("canceled");
      expect(store.charges).toEqual([]);
    });

    it("another status after the cancellation of a known order leaves it cancelled; other statuses follow the last one", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-CANCEL-THEN-STATUS-1";
      await send("SendOrderToMerchant", { ...order(id), PaymentDetails: null, StatusCode: "N/A" });
      await send("UpdateOrderStatus", status(id, "pending"));
      expect(store.orders.get(id)?.status).toBe("pending");
      await send("UpdateOrderStatus", status(id, "CANCELLED"));
      await send("UpdateOrderStatus", status(id, "N/A"));
      expect(store.orders.get(id)?.status).toBe("CANCELLED");
      const payment = await send(
        "PerformOrderPayment",
        samplePayload("PerformOrderPayment", { OrderId: id }),
      );
      expect(payment.body).toMatchObject({ Success: false, ErrorCode: "ORDER_CANCELLED" });
      expect(logged).toEqual([
        expect.stringMatching(
          /^\[crossborder-callbacks\] PerformOrderPayment order \S+ 200 handler_failure: ORDER_CANCELLED: The order was cancelled$/,
        ),
      ]);
      logged.length = 0;
      expect(store.charges).toEqual([]);
    });
  });

  describe(`a status delivered again after its order arrived (review second-seq-4), ${mode}`, () => {
    it("a cancellation retried by hand after its order arrived is answered as the first time", async () => {
      const { send } = await example(deduplicate);
      const id = "GE-CANCEL-RETRIED-1";
      const first = await send("UpdateOrderStatus", status(id, "canceled"));
      await send("SendOrderToMerchant", order(id));
      const again = await send("UpdateOrderStatus", status(id, "canceled"));
      expect(again.body).toStrictEqual(first.body);
      expect(again.problems).toEqual([]);
    });
  });

  describe(`the answer to an order cancelled before it arrived (review second-seq-6), ${mode}`, () => {
    it("carrying a card, it says nothing was charged (PaymentAmount 0 in the order's currency), without the library's warnings", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-CANCELLED-WITH-CARD-1";
      await send("UpdateOrderStatus", status(id, "canceled"));
      const created = await send("SendOrderToMerchant", order(id));
      expect(created.body).toMatchObject({
        Success: true,
        InternalOrderId: "M-1001",
        StatusCode: "canceled",
        PaymentAmount: "0",
        PaymentCurrencyCode: "USD",
      });
      expect(created.problems).toEqual([]);
      expect(created.warnings).toEqual([]);
      expect(store.charges).toEqual([]);
    });

    it("without a card, the answer carries no payment fields", async () => {
      const { send } = await example(deduplicate);
      const id = "GE-CANCELLED-NO-CARD-1";
      await send("UpdateOrderStatus", status(id, "canceled"));
      const created = await send("SendOrderToMerchant", { ...order(id), PaymentDetails: null });
      expect(created.body).toMatchObject({ Success: true, StatusCode: "canceled" });
      expect(created.body).not.toHaveProperty("PaymentAmount");
      expect(created.warnings).toEqual([]);
    });
  });

  describe(`statuses kept for orders that never arrive (review second-seq-7), ${mode}`, () => {
    it("are bounded: past the limit the oldest is dropped", async () => {
      const { store, send } = await example(deduplicate, { maxPendingStatuses: 3 });
      for (let i = 1; i <= 5; i++) await send("UpdateOrderStatus", status(`NEVER-${i}`, "N/A"));
      expect([...store.pendingStatuses.keys()]).toEqual(["NEVER-3", "NEVER-4", "NEVER-5"]);
    });

    it("are bounded by default", () => {
      expect(new MemoryStore().maxPendingStatuses).toBe(1000);
    });
  });

  describe(`a return and a parcel dispatch delivered again (review sequence-3), ${mode}`, () => {
    it("simulate all passes, its status, return and parcel dispatch redelivered, each recorded once", async () => {
      const { store, run } = await example(deduplicate);
      const rows = await run([...ALL_CALLBACKS]);
      expect(rows.map((row) => [row.callback, rowProblems(row)])).toEqual(
        ALL_CALLBACKS.map((callback) => [callback, []]),
      );
      for (const row of rows) expect("result" in row && row.result.warnings).toEqual([]);
      const sample = store.orders.get("GE927127001US");
      expect(sample?.returns).toHaveLength(1);
      expect(sample?.parcels).toHaveLength(1);
      expect(sample?.status).toBe("canceled");
    });

    it("a redelivered RMA and parcel dispatch are recorded once and answered as the first time", async () => {
      const { store, send } = await example(deduplicate);
      const id = "GE-RMA-1";
      await send("SendOrderToMerchant", order(id));
      const rma = samplePayload("SendRMAInfoToMerchant", { OrderId: id });
      const parcel = samplePayload("UpdateParcelDispatch", { OrderId: id });
      const answers: unknown[] = [];
      for (let i = 0; i < 2; i++) {
        answers.push((await send("SendRMAInfoToMerchant", rma)).body);
        answers.push((await send("UpdateParcelDispatch", parcel)).body);
      }
      expect(answers[2]).toEqual(answers[0]);
      expect(answers[3]).toEqual(answers[1]);
      expect(store.orders.get(id)?.returns).toEqual([rma.RMANumber]);
      expect(store.orders.get(id)?.parcels).toEqual([parcel.DispatchedParcel.Code]);
      // Another return and another parcel of the order are recorded.
      await send("SendRMAInfoToMerchant", { ...rma, RMANumber: "RMA-000318" });
      const other = { ...parcel.DispatchedParcel, Code: "PCL-88214" };
      await send("UpdateParcelDispatch", { ...parcel, DispatchedParcel: other });
      expect(store.orders.get(id)?.returns).toEqual([rma.RMANumber, "RMA-000318"]);
      expect(store.orders.get(id)?.parcels).toEqual([parcel.DispatchedParcel.Code, "PCL-88214"]);
    });
  });
}
