/**
 * withIdempotency where a request's work can stop at the answer (review serverless): a Worker
 * drops a request's timers and I/O once it ends unless handed to `waitUntil`, and a Lambda
 * freezes as soon as the handler settles. The same runs in a real workerd are in
 * test/adapters/workerd-lifecycle.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import {
  type CallbackContext,
  createMemoryIdempotencyStore,
  createSendOrderToMerchantHandler,
  defaultIdempotencyKey,
  type IdempotencyStore,
  type SendOrderToMerchantRequest,
  withIdempotency,
} from "../../src/index.js";
import { collector, json, post } from "../core/helpers.js";

const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function orderKey(): Promise<string> {
  const payload = JSON.parse(orderText);
  const context = { callback: "SendOrderToMerchant", rawPayload: payload };
  return `SendOrderToMerchant:${await defaultIdempotencyKey(payload, context as unknown as CallbackContext<never>)}`;
}

describe("a handle does not outlive its lease (review serverless-1)", () => {
  it("a repeat in the same process runs the function once the first run stopped renewing its lease (none granted for a whole leaseMs), although that run never settles", async () => {
    const inner = createMemoryIdempotencyStore();
    // Renewals never reach the store: the first run's lease runs out there after leaseMs.
    const store: IdempotencyStore = {
      ...inner,
      renew: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")),
    };
    let runs = 0;
    const fn = (order: SendOrderToMerchantRequest) => {
      runs++;
      // The first run's continuation never runs (a Worker's request that ended mid-function).
      if (runs === 1) return new Promise<never>(() => undefined);
      return { InternalOrderId: `M-${runs}`, OrderId: order.OrderId };
    };
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { store, leaseMs: 150, waitMs: 100 }),
      { auth: false, onError },
    );
    void handler.handle(post(orderText));
    await sleep(30);
    // While the lease may still hold: waits on the first run, 503.
    expect((await handler.handle(post(orderText))).status).toBe(503);
    // The renewals stop once none was granted for a whole lease (at 150 ms): a lease after
    // that, the handle stands for nothing. Before: 503 DELIVERY_IN_PROGRESS forever.
    await sleep(300);
    const repeat = await handler.handle(post(orderText));
    expect(repeat.status).toBe(200);
    expect(json(repeat)).toMatchObject({ InternalOrderId: "M-2" });
    expect(runs).toBe(2);
    expect(failures.map((failure) => failure.reason)).toContainEqual(
      expect.stringContaining("was not renewed for a whole leaseMs (150 ms)"),
    );
  });

  it("keeps waiting on a run whose lease is renewed: a repeat past several leases is answered 503, never run again", async () => {
    let runs = 0;
    const fn = async (order: SendOrderToMerchantRequest) => {
      runs++;
      await sleep(500);
      return { InternalOrderId: `M-${runs}`, OrderId: order.OrderId };
    };
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { leaseMs: 90, waitMs: 50 }),
      { auth: false, onError: () => undefined },
    );
    const first = handler.handle(post(orderText));
    await sleep(300);
    expect((await handler.handle(post(orderText))).status).toBe(503);
    expect(runs).toBe(1);
    expect((await first).status).toBe(200);
    expect(json(await handler.handle(post(orderText)))).toMatchObject({ InternalOrderId: "M-1" });
    expect(runs).toBe(1);
  });
});

describe("a record that failed once (review serverless-2)", () => {
  it("is written again within the delivery: the store holds the record when the answer is given (a Lambda freezes then)", async () => {
    const inner = createMemoryIdempotencyStore();
    let failures = 1;
    const store: IdempotencyStore = {
      ...inner,
      complete: async (key, owner, result, ttl) => {
        if (failures-- > 0) throw new Error("read ECONNRESET");
        return inner.complete(key, owner, result, ttl);
      },
    };
    const reports = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async () => ({ InternalOrderId: "M-1" }), { store }),
      { auth: false, onError: reports.onError },
    );
    const answer = await handler.handle(post(orderText));
    expect(answer.status).toBe(200);
    // Nothing left for the background: the record is there at the answer.
    expect(await inner.get(await orderKey())).toMatchObject({ state: "completed" });
    expect(failures).toBe(-1);
    expect(reports.failures).toEqual([]);
  });
});

describe("toFetch gives the runtime's waitUntil to the context (review serverless-2)", () => {
  async function seen(
    options: Parameters<typeof toFetch>[1],
    ...rest: unknown[]
  ): Promise<unknown> {
    let found: unknown = "not called";
    const handler = createSendOrderToMerchantHandler(
      (order, context) => {
        found = context.waitUntil;
        return { InternalOrderId: "M-1", OrderId: order.OrderId };
      },
      { auth: false, onError: () => undefined },
    );
    const fetchHandler = toFetch(handler, options);
    const response = await fetchHandler(
      new Request("http://merchant.example/callback", { method: "POST", body: orderText }),
      ...rest,
    );
    expect(response.status).toBe(200);
    return found;
  }

  it("finds it among the runtime's arguments, bound to its object; skips a getter that throws; none elsewhere", async () => {
    const handed: unknown[] = [];
    const ctx = {
      waitUntil(this: unknown, promise: Promise<unknown>) {
        expect(this).toBe(ctx);
        handed.push(promise);
      },
    };
    const waitUntil = (await seen({}, {}, ctx)) as (promise: Promise<unknown>) => void;
    const work = Promise.resolve();
    waitUntil(work);
    expect(handed).toEqual([work]);
    const throwing = {
      get waitUntil(): never {
        throw new Error("This context has no ExecutionContext");
      },
    };
    expect(await seen({}, throwing)).toBeUndefined();
    expect(await seen({})).toBeUndefined();
    // null: none, even where the arguments have one.
    expect(await seen({ waitUntil: null }, ctx)).toBeUndefined();
  });

  it("takes it as an option, and refuses one that is not a function", async () => {
    const given = (_promise: Promise<unknown>) => undefined;
    expect(await seen({ waitUntil: given })).toBe(given);
    expect(() =>
      toFetch(
        createSendOrderToMerchantHandler(() => ({}) as never, { auth: false }),
        { waitUntil: "yes" as never },
      ),
    ).toThrow(TypeError);
  });

  it("a record retried after the answer is handed to it, and settles once written", async () => {
    const inner = createMemoryIdempotencyStore();
    let failures = 2;
    const store: IdempotencyStore = {
      ...inner,
      complete: async (key, owner, result, ttl) => {
        if (failures-- > 0) throw new Error("read ECONNRESET");
        return inner.complete(key, owner, result, ttl);
      },
    };
    const handed: Promise<unknown>[] = [];
    const handler = toFetch(
      createSendOrderToMerchantHandler(
        withIdempotency(async () => ({ InternalOrderId: "M-1" }), { store }),
        { auth: false, onError: () => undefined },
      ),
      { waitUntil: (promise) => handed.push(promise) },
    );
    const answer = await handler(
      new Request("http://merchant.example/callback", { method: "POST", body: orderText }),
    );
    expect(answer.status).toBe(200);
    expect(handed).toHaveLength(1);
    await handed[0];
    expect(await inner.get(await orderKey())).toMatchObject({ state: "completed" });
  });
});
