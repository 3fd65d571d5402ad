import { describe, expect, it } from "vitest";
import { type CallbackContext, withIdempotency } from "../../src/index.js";

/** A context as the engine builds it, for calling a wrapped function directly. */
function contextFor(payload: { OrderId: string }): CallbackContext<{ OrderId: string }> {
  return { callback: "SendOrderToMerchant", rawPayload: payload } as CallbackContext<{
    OrderId: string;
  }>;
}

describe("the memory store's window", () => {
  it("still knows the first of 100,000 distinct orders: a repeat of it does not run again", async () => {
    const runs = new Map<string, number>();
    const createOrder = withIdempotency(async (order: { OrderId: string }) => {
      runs.set(order.OrderId, (runs.get(order.OrderId) ?? 0) + 1);
      return { InternalOrderId: `M-${order.OrderId}` };
    });
    for (let i = 0; i < 100_000; i++) {
      const order = { OrderId: `GE${i}` };
      await createOrder(order, contextFor(order));
    }
    const first = { OrderId: "GE0" };
    expect(await createOrder(first, contextFor(first))).toEqual({ InternalOrderId: "M-GE0" });
    expect(runs.get("GE0")).toBe(1);
  }, 120_000);
});
