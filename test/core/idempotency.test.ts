import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createSendOrderToMerchantHandler,
  memoryIdempotencyStore,
  type SendOrderToMerchantRequest,
  withIdempotency,
} from "../../src/index.js";
import { collector, json, post } from "./helpers.js";

const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);

function merchant() {
  let created = 0;
  const fn = async (order: SendOrderToMerchantRequest) => {
    created++;
    // Long enough for a concurrent duplicate to arrive while this one runs.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { InternalOrderId: `M-${created}`, OrderId: order.OrderId };
  };
  return { fn, created: () => created };
}

describe("withIdempotency", () => {
  it("applies the same order delivered twice once, and answers both with the first result", async () => {
    const { fn, created } = merchant();
    const handler = createSendOrderToMerchantHandler(withIdempotency(fn), { auth: false });
    const first = await handler.handle(post(orderText));
    const second = await handler.handle(post(orderText));
    expect(created()).toBe(1);
    expect(json(first)).toEqual(json(second));
    expect(json(second)).toMatchObject({ Success: true, InternalOrderId: "M-1" });
  });

  it("applies two concurrent deliveries of the same order once", async () => {
    const { fn, created } = merchant();
    const handler = createSendOrderToMerchantHandler(withIdempotency(fn), { auth: false });
    const [a, b] = await Promise.all([
      handler.handle(post(orderText)),
      handler.handle(post(orderText)),
    ]);
    expect(created()).toBe(1);
    expect(json(a)).toEqual(json(b));
  });

  it("applies an update of the same order (other content)", async () => {
    const { fn, created } = merchant();
    const handler = createSendOrderToMerchantHandler(withIdempotency(fn), { auth: false });
    const update = JSON.parse(orderText);
    update.StatusCode = "Processing";
    await handler.handle(post(orderText));
    await handler.handle(post(JSON.stringify(update)));
    expect(created()).toBe(2);
  });

  it("does not remember a failure: the retry runs again", async () => {
    let calls = 0;
    const { onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async () => {
        calls++;
        if (calls === 1) throw new Error("database down");
        return { InternalOrderId: "M-1" };
      }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(orderText))).status).toBe(500);
    expect((await handler.handle(post(orderText))).status).toBe(200);
    expect(calls).toBe(2);
  });

  it("uses a custom key and store", async () => {
    const { fn, created } = merchant();
    const store = memoryIdempotencyStore<Awaited<ReturnType<typeof fn>>>(1);
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { key: (order) => order.OrderId, store }),
      { auth: false },
    );
    const update = JSON.parse(orderText);
    update.StatusCode = "Processing";
    await handler.handle(post(orderText));
    await handler.handle(post(JSON.stringify(update)));
    expect(created()).toBe(1);
    expect(await store.get(JSON.parse(orderText).OrderId)).toEqual({
      result: { InternalOrderId: "M-1", OrderId: JSON.parse(orderText).OrderId },
    });
  });

  it("forgets results after their time and beyond the store's size", async () => {
    const store = memoryIdempotencyStore<string>(2);
    store.set("a", "1", 60_000);
    store.set("b", "2", 60_000);
    store.set("c", "3", 60_000);
    expect(store.get("a")).toBeUndefined();
    expect(store.get("c")).toEqual({ result: "3" });
    store.set("d", "4", -1);
    expect(store.get("d")).toBeUndefined();
  });
});
