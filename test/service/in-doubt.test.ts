// PIT-8: an operation that is never retried whose call ended in doubt (`mayHaveBeenApplied`),
// then called again by the merchant's own retry loop (p-retry and the like), which the service
// refuses because the first call was applied (B002 "cannot be dispatched": already dispatched).
// The loop rejects with that last refusal: it must not read as "nothing happened". Real HTTP
// against the service simulator, real fetch.
import { describe, expect, it } from "vitest";
import { createServiceError } from "../../src/service/errors.js";
import {
  IN_DOUBT_TTL_MS,
  InDoubtLedger,
  MAX_IN_DOUBT,
  requestIdentity,
} from "../../src/service/in-doubt.js";
import {
  ServiceConflictError,
  type ServiceError,
  ServiceNotFoundError,
  ServiceTimeoutError,
  ServiceValidationError,
} from "../../src/service/index.js";
import { OPERATIONS, type OperationName } from "../../src/service/operations.js";
import { clientFor, rejectionOf, renderings, startSimulator } from "./helpers.js";

/**
 * What p-retry does (`pRetry(run, { retries })`): runs again on any rejection, waits a little,
 * and rejects with the last error once the retries are spent.
 */
async function pRetry<T>(run: () => Promise<T>, retries: number): Promise<T> {
  let last: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    try {
      return await run();
    } catch (error) {
      last = error;
      if (attempt < retries) await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  throw last;
}

const EARLIER =
  /an earlier call of \w+ with the same request ended in doubt at \d{4}-\d\d-\d\dT[\d:.]+Z \((\w+)\): this refusal may mean it was applied/;

describe("a refusal that may mean 'already done' after a call in doubt says it may have been applied", () => {
  it("p-retry around a dispatch that timed out after it was applied: the last error (B002) says so", async () => {
    const simulator = await startSimulator();
    // Applied, half the answer sent, then nothing: the client's attempt times out.
    simulator.fail("dispatchConsolidatedShipment", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    const dispatch = () => client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] });
    const error = (await rejectionOf(pRetry(dispatch, 2))) as ServiceError;
    expect(simulator.state.orders.get("GE-1001")?.status).toBe("dispatched");
    expect(error).toBeInstanceOf(ServiceConflictError);
    expect(error).toMatchObject({ code: "B002", mayHaveBeenApplied: true });
    expect(error.earlierInDoubt).toBeInstanceOf(ServiceTimeoutError);
    expect(error.earlierInDoubt).toMatchObject({ code: "TIMEOUT", mayHaveBeenApplied: true });
    expect(error.cause).toBe(error.earlierInDoubt);
    expect(error.message).toMatch(EARLIER);
    expect(EARLIER.exec(error.message)?.[1]).toBe("TIMEOUT");
    expect(error.toJSON()).toMatchObject({
      code: "B002",
      mayHaveBeenApplied: true,
      earlierInDoubt: { code: "TIMEOUT", mayHaveBeenApplied: true },
    });
    // Nothing new in clear: the GUID and password stay out of every rendering.
    for (const text of renderings(error)) {
      expect(text).not.toContain(simulator.merchantGuid);
      expect(text).not.toContain(simulator.credentials.password);
    }
  });

  it("void: a connection dropped after the void, then C104 (already voided)", async () => {
    const simulator = await startSimulator();
    simulator.fail("voidParcel", { drop: true, apply: true });
    const client = clientFor(simulator);
    const first = await rejectionOf(
      client.voidParcel({ OrderId: "GE-1001", ParcelCode: "P-1001-1" }),
    );
    expect(first).toMatchObject({ code: "NETWORK_ERROR", mayHaveBeenApplied: true });
    // The same request, its keys in another order.
    const again = (await rejectionOf(
      client.voidParcel({ ParcelCode: "P-1001-1", OrderId: "GE-1001" }),
    )) as ServiceError;
    expect(again).toBeInstanceOf(ServiceNotFoundError);
    expect(again).toMatchObject({ code: "C104", mayHaveBeenApplied: true });
    expect(again.earlierInDoubt).toBe(first);
    expect(EARLIER.exec(again.message)?.[1]).toBe("NETWORK_ERROR");
  });

  it("refund: a timeout after it was created, then its repeat refused for its quantity", async () => {
    const simulator = await startSimulator();
    simulator.fail("createOrderRefund", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    const refund = () =>
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
      });
    const error = (await rejectionOf(pRetry(refund, 1))) as ServiceError;
    expect(error).toBeInstanceOf(ServiceValidationError);
    expect(error).toMatchObject({ code: "INVALID_REFUND", mayHaveBeenApplied: true });
    expect(error.earlierInDoubt?.code).toBe("TIMEOUT");
  });

  it("parcel status: a 502 after it was forwarded, then the change refused (no code)", async () => {
    const simulator = await startSimulator();
    simulator.fail(
      "updateParcelStatus",
      { status: 502 },
      { status: 200, body: { Success: false, Error: "The status change is not allowed" } },
    );
    const client = clientFor(simulator);
    const update = () =>
      client.updateParcelStatus({
        orderId: "GE-1001",
        parcelCode: "P-1001-1",
        merchantParcelStatusCode: "Delivered",
      });
    const error = (await rejectionOf(pRetry(update, 1))) as ServiceError;
    expect(error).toBeInstanceOf(ServiceConflictError);
    expect(error).toMatchObject({ code: "REFUSED", mayHaveBeenApplied: true });
    expect(error.description).toBe("The status change is not allowed");
    expect(EARLIER.exec(error.message)?.[1]).toBe("HTTP_502");
  });

  it("a job-queue retry with the same orders in another order is the same request (dispatch)", async () => {
    const simulator = await startSimulator();
    simulator.fail("dispatchConsolidatedShipment", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    const first = await rejectionOf(
      client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001", "GE-1002"] }),
    );
    expect(first).toMatchObject({ code: "TIMEOUT", mayHaveBeenApplied: true });
    // Rebuilt from database rows (no ORDER BY, a Set): the same orders, another order.
    const again = (await rejectionOf(
      client.dispatchConsolidatedShipment({ OrderIds: ["GE-1002", "GE-1001"] }),
    )) as ServiceError;
    expect(again).toMatchObject({ code: "B002", mayHaveBeenApplied: true });
    expect(again.earlierInDoubt?.code).toBe("TIMEOUT");
  });

  it("a job-queue retry with the same refund lines in another order is the same request", async () => {
    const simulator = await startSimulator();
    simulator.fail("createOrderRefund", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    // Valid (1 left of line 1, 1 of line 2): the refund is made, its answer stalls.
    const first = await rejectionOf(
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [
          { CartItemId: "1", RefundQuantity: 1 },
          { CartItemId: "2", RefundQuantity: 1 },
        ],
      }),
    );
    expect(first).toMatchObject({ code: "TIMEOUT", status: 200, mayHaveBeenApplied: true });
    const again = (await rejectionOf(
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [
          { RefundQuantity: 1, CartItemId: "2" },
          { CartItemId: "1", RefundQuantity: 1 },
        ],
      }),
    )) as ServiceError;
    expect(again).toMatchObject({ code: "INVALID_REFUND", mayHaveBeenApplied: true });
    expect(again.earlierInDoubt?.code).toBe("TIMEOUT");
  });

  it("a request with other arguments is not matched", async () => {
    const simulator = await startSimulator();
    simulator.fail("dispatchConsolidatedShipment", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    const first = await rejectionOf(client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] }));
    expect(first).toMatchObject({ code: "TIMEOUT", mayHaveBeenApplied: true });
    // GE-1003 cannot be dispatched: its refusal says nothing of GE-1001.
    const other = (await rejectionOf(
      client.dispatchConsolidatedShipment({ OrderIds: ["GE-1003"] }),
    )) as ServiceError;
    expect(other).toMatchObject({ code: "B002", mayHaveBeenApplied: false });
    expect(other.earlierInDoubt).toBeUndefined();
    expect(other.cause).toBeUndefined();
    expect(other.message).not.toMatch(/earlier call/);
    // Nor another operation, nor another client.
    const elsewhere = (await rejectionOf(
      clientFor(simulator).dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] }),
    )) as ServiceError;
    expect(elsewhere).toMatchObject({ code: "B002", mayHaveBeenApplied: false });
  });

  it("a refusal that does not mean 'already done' is not changed", async () => {
    const simulator = await startSimulator();
    simulator.fail("dispatchConsolidatedShipment", { drop: true }, { code: "B200" });
    const client = clientFor(simulator);
    const dispatch = () => client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] });
    expect(await rejectionOf(dispatch())).toMatchObject({ code: "NETWORK_ERROR" });
    const hub = (await rejectionOf(dispatch())) as ServiceError;
    expect(hub).toMatchObject({ code: "B200", mayHaveBeenApplied: false });
    expect(hub.earlierInDoubt).toBeUndefined();
  });

  it("a call whose status line already refused (a 4xx, its body then stalled) is not in doubt, nor is its repeat", async () => {
    const simulator = await startSimulator();
    simulator.fail("createOrderRefund", { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    // Never valid: 5 of a line of 1. The first answer's 400 status line comes, its body does not.
    const refund = () =>
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "2", RefundQuantity: 5 }],
      });
    const before = simulator.state.refunds.get("GE-1001")?.length ?? 0;
    const first = (await rejectionOf(refund())) as ServiceError;
    expect(first).toMatchObject({ code: "TIMEOUT", status: 400, mayHaveBeenApplied: false });
    const again = (await rejectionOf(refund())) as ServiceError;
    expect(again).toMatchObject({ code: "INVALID_REFUND", status: 400, mayHaveBeenApplied: false });
    expect(again.description).toContain("1 left of 1");
    expect(again.earlierInDoubt).toBeUndefined();
    expect(again.message).not.toMatch(/earlier call|may have been applied/);
    // Nothing was refunded.
    expect(simulator.state.refunds.get("GE-1001") ?? []).toHaveLength(before);
  });

  it("refund: in doubt, then its repeat refused by a 400 whose body is cut off: may have been applied", async () => {
    // The first refund is applied and its 200 cut off; the repeat would exceed what is left, and its
    // 400 status line comes without its body. That code is unknown: it may be the refusal that
    // means "already done", so the repeat says so, and is not itself remembered.
    const simulator = await startSimulator();
    simulator.fail("createOrderRefund", { cutOff: true }, { cutOff: true });
    const client = clientFor(simulator);
    const refund = () =>
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "2", RefundQuantity: 1 }],
      });
    const before = simulator.state.refunds.get("GE-1001")?.length ?? 0;
    const first = (await rejectionOf(refund())) as ServiceError;
    expect(first).toMatchObject({
      code: "INCOMPLETE_RESPONSE",
      status: 200,
      mayHaveBeenApplied: true,
    });
    const again = (await rejectionOf(refund())) as ServiceError;
    expect(simulator.state.refunds.get("GE-1001")).toHaveLength(before + 1);
    expect(again).toMatchObject({
      code: "INCOMPLETE_RESPONSE",
      status: 400,
      mayHaveBeenApplied: true,
    });
    expect(again.earlierInDoubt).toBe(first);
    expect(EARLIER.exec(again.message)?.[1]).toBe("INCOMPLETE_RESPONSE");
    // The cut-off 400 was not recorded: a third, whole refusal still names the first call.
    const third = (await rejectionOf(refund())) as ServiceError;
    expect(third).toMatchObject({ code: "INVALID_REFUND", mayHaveBeenApplied: true });
    expect(third.earlierInDoubt).toBe(first);
  });

  it("refund: in doubt, then its repeat's 400 stalled: may have been applied; another request's is not", async () => {
    const simulator = await startSimulator();
    simulator.fail(
      "createOrderRefund",
      { drop: true, apply: true },
      { stallBody: true },
      { stallBody: true },
    );
    const client = clientFor(simulator, { timeoutMs: 300 });
    const before = simulator.state.refunds.get("GE-1001")?.length ?? 0;
    const refund = (quantity: number) =>
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "2", RefundQuantity: quantity }],
      });
    const first = (await rejectionOf(refund(1))) as ServiceError;
    expect(first).toMatchObject({ code: "NETWORK_ERROR", mayHaveBeenApplied: true });
    // Another request (never valid) refused the same way: nothing remembered matches it.
    const other = (await rejectionOf(refund(5))) as ServiceError;
    expect(other).toMatchObject({ code: "TIMEOUT", status: 400, mayHaveBeenApplied: false });
    expect(other.earlierInDoubt).toBeUndefined();
    const again = (await rejectionOf(refund(1))) as ServiceError;
    expect(again).toMatchObject({ code: "TIMEOUT", status: 400, mayHaveBeenApplied: true });
    expect(again.earlierInDoubt).toBe(first);
    expect(simulator.state.refunds.get("GE-1001")).toHaveLength(before + 1);
  });

  it("a success forgets the call in doubt", async () => {
    const simulator = await startSimulator();
    // Dropped before it was applied: in doubt all the same (the client cannot tell).
    simulator.fail("dispatchConsolidatedShipment", { drop: true });
    const client = clientFor(simulator);
    const dispatch = () => client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] });
    expect(await rejectionOf(dispatch())).toMatchObject({ mayHaveBeenApplied: true });
    await expect(dispatch()).resolves.toMatchObject({ IsSuccess: true });
    // Now B002 is this client's own dispatch, which it knows succeeded: a plain refusal.
    const after = (await rejectionOf(dispatch())) as ServiceError;
    expect(after).toMatchObject({ code: "B002", mayHaveBeenApplied: false });
    expect(after.earlierInDoubt).toBeUndefined();
  });

  it("two calls at once: both in doubt, both repeats refused as maybe done", async () => {
    const simulator = await startSimulator();
    simulator.fail("dispatchConsolidatedShipment", { stallBody: true }, { stallBody: true });
    const client = clientFor(simulator, { timeoutMs: 300 });
    const dispatch = () => client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] });
    const firsts = await Promise.all([rejectionOf(dispatch()), rejectionOf(dispatch())]);
    for (const first of firsts) expect(first).toMatchObject({ code: "TIMEOUT" });
    const repeats = (await Promise.all([
      rejectionOf(dispatch()),
      rejectionOf(dispatch()),
    ])) as ServiceError[];
    for (const repeat of repeats) {
      expect(repeat).toMatchObject({ code: "B002", mayHaveBeenApplied: true });
      expect(firsts).toContain(repeat.earlierInDoubt);
    }
    expect(simulator.state.orders.get("GE-1001")?.status).toBe("dispatched");
  });
});

describe("a request's identity", () => {
  const id = (name: OperationName, data: unknown) => requestIdentity(name, OPERATIONS[name], data);

  it("reads the lists the service reads as sets in any order, and nothing else", () => {
    const dispatch = {
      OrderIds: ["GE-1", "GE-2"],
      MerchantOrderIds: ["M-1", "M-2"],
      ParcelCodes: ["P-1", "P-2"],
      TrackingNumbers: ["T-1", "T-2"],
    };
    const reversed = {
      TrackingNumbers: ["T-2", "T-1"],
      ParcelCodes: ["P-2", "P-1"],
      MerchantOrderIds: ["M-2", "M-1"],
      OrderIds: ["GE-2", "GE-1"],
    };
    expect(id("dispatchConsolidatedShipment", reversed)).toBe(
      id("dispatchConsolidatedShipment", dispatch),
    );
    // Not another set: one more, one fewer, or a repeated element.
    for (const other of [
      { ...dispatch, OrderIds: ["GE-1"] },
      { ...dispatch, OrderIds: ["GE-1", "GE-1", "GE-2"] },
      { ...dispatch, OrderIds: ["GE-1", "GE-2", "GE-3"] },
      // The same element in another list is another request.
      { ...dispatch, OrderIds: ["GE-1"], MerchantOrderIds: ["M-1", "M-2", "GE-2"] },
    ]) {
      expect(id("dispatchConsolidatedShipment", other)).not.toBe(
        id("dispatchConsolidatedShipment", dispatch),
      );
    }
    const lines = [
      { CartItemId: "1", RefundQuantity: 2 },
      { CartItemId: "2", RefundQuantity: 1 },
    ];
    const refund = { OrderId: "GE-1", RefundProducts: lines };
    expect(id("createOrderRefund", { OrderId: "GE-1", RefundProducts: [...lines].reverse() })).toBe(
      id("createOrderRefund", refund),
    );
    // The quantities belong to their lines: swapped, it is another refund.
    expect(
      id("createOrderRefund", {
        OrderId: "GE-1",
        RefundProducts: [
          { CartItemId: "1", RefundQuantity: 1 },
          { CartItemId: "2", RefundQuantity: 2 },
        ],
      }),
    ).not.toBe(id("createOrderRefund", refund));
    // A list in a loose field of the merchant's own keeps its order (its meaning is not known).
    expect(id("createOrderRefund", { ...refund, Extra: ["a", "b"] })).not.toBe(
      id("createOrderRefund", { ...refund, Extra: ["b", "a"] }),
    );
  });
});

describe("the ledger's bounds", () => {
  const inDoubt = (code: string) =>
    createServiceError("timeout", {
      operation: "dispatchConsolidatedShipment",
      code,
      message: code,
      mayHaveBeenApplied: true,
    });

  it(`keeps at most ${MAX_IN_DOUBT} calls, forgetting the oldest first`, () => {
    let now = 0;
    const ledger = new InDoubtLedger(() => now);
    for (let i = 0; i <= MAX_IN_DOUBT; i++) {
      now += 1;
      ledger.record(`request-${i}`, inDoubt(`T${i}`));
    }
    expect(ledger.size).toBe(MAX_IN_DOUBT);
    expect(ledger.find("request-0")).toBeUndefined();
    expect(ledger.find("request-1")?.error.code).toBe("T1");
    expect(ledger.find(`request-${MAX_IN_DOUBT}`)?.error.code).toBe(`T${MAX_IN_DOUBT}`);
    // A newer call in doubt for a request already kept replaces it and becomes the newest.
    ledger.record("request-1", inDoubt("again"));
    ledger.record("request-new", inDoubt("new"));
    expect(ledger.find("request-1")?.error.code).toBe("again");
    expect(ledger.find("request-2")).toBeUndefined();
  });

  it(`forgets a call in doubt ${IN_DOUBT_TTL_MS / 60_000} minutes after it ended`, () => {
    let now = 1_000;
    const ledger = new InDoubtLedger(() => now);
    ledger.record("old", inDoubt("OLD"));
    now += IN_DOUBT_TTL_MS / 2;
    ledger.record("young", inDoubt("YOUNG"));
    now += IN_DOUBT_TTL_MS / 2 - 1;
    expect(ledger.find("old")?.error.code).toBe("OLD");
    now += 1;
    expect(ledger.find("old")).toBeUndefined();
    expect(ledger.find("young")?.error.code).toBe("YOUNG");
    expect(ledger.size).toBe(1);
    now += IN_DOUBT_TTL_MS;
    expect(ledger.find("young")).toBeUndefined();
    expect(ledger.size).toBe(0);
  });

  it("an expired call is gone from `size` without a find or a record (the success path reads only `size`)", () => {
    let now = 0;
    let reads = 0;
    const ledger = new InDoubtLedger(() => {
      reads++;
      return now;
    });
    expect(ledger.size).toBe(0);
    // Empty: the clock is not even read.
    expect(reads).toBe(0);
    ledger.record("a", inDoubt("A"));
    now += IN_DOUBT_TTL_MS - 1;
    expect(ledger.size).toBe(1);
    now += 11 * 60_000;
    // Past its age: dropped (with its error) on the next look at `size`.
    expect(ledger.size).toBe(0);
    expect(ledger.find("a")).toBeUndefined();
  });

  it("forget drops one request only", () => {
    const ledger = new InDoubtLedger(() => 0);
    ledger.record("a", inDoubt("A"));
    ledger.record("b", inDoubt("B"));
    ledger.forget("a");
    expect(ledger.find("a")).toBeUndefined();
    expect(ledger.find("b")?.error.code).toBe("B");
  });
});
