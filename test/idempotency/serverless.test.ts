/**
 * withIdempotency where a request's work can stop at the answer (review serverless): a Worker
 * drops a request's timers and I/O once it ends unless handed to `waitUntil`, and a Lambda
 * freezes as soon as the handler settles. The same runs in a real workerd are in
 * test/adapters/workerd-lifecycle.test.ts.
 */
import { readFile } from "node:fs";
import { describe, expect, it, vi } from "vitest";
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
import { fixture } from "../adapters/support/keys.js";
import { collector, json, post } from "../core/helpers.js";
import { recordsFailingAtFirst } from "./support/failing-records.js";

const orderText = fixture("SendOrderToMerchant");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function orderKey(): Promise<string> {
  const payload = JSON.parse(orderText);
  const context = { callback: "SendOrderToMerchant", rawPayload: payload };
  return `SendOrderToMerchant:${await defaultIdempotencyKey(payload, context as unknown as CallbackContext<never>)}`;
}

describe("a handle does not outlive its lease (review serverless-1)", () => {
  it("a repeat in the same process runs the function once the first run's renewal timer was dropped (a Worker's request that ended): a lease after its last tick", async () => {
    let runs = 0;
    const fn = (order: SendOrderToMerchantRequest) => {
      runs++;
      // The first run's continuation never runs (a Worker's request that ended mid-function).
      if (runs === 1) return new Promise<never>(() => undefined);
      return { InternalOrderId: `M-${runs}`, OrderId: order.OrderId };
    };
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { leaseMs: 600, waitMs: 100 }),
      { auth: false, onError: () => undefined },
    );
    // The runtime drops the first run's timers with its request: its renewal interval never fires.
    const dropped = vi
      .spyOn(globalThis, "setInterval")
      .mockImplementationOnce((() => ({ unref() {} })) as unknown as typeof setInterval);
    try {
      void handler.handle(post(orderText));
      await sleep(30);
      expect(dropped).toHaveBeenCalledTimes(1);
    } finally {
      dropped.mockRestore();
    }
    // While the lease may still hold: waits on the first run, 503.
    expect((await handler.handle(post(orderText))).status).toBe(503);
    // A lease after the run's last tick (here: its claim), the handle stands for nothing, and the
    // store's lease ran out too. Before (review serverless-1): 503 DELIVERY_IN_PROGRESS forever.
    await sleep(700);
    const repeat = await handler.handle(post(orderText));
    expect(repeat.status).toBe(200);
    expect(json(repeat)).toMatchObject({ InternalOrderId: "M-2" });
    expect(runs).toBe(2);
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

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // A merchant's synchronous code holding the event loop.
  }
};

describe("a live run keeps its handle until it settles, its lease kept or not (review second-sls-1)", () => {
  const slow = (ms: number) => {
    const state = { runs: 0, concurrent: 0, most: 0 };
    const fn = async (order: SendOrderToMerchantRequest) => {
      state.runs++;
      state.concurrent++;
      state.most = Math.max(state.most, state.concurrent);
      await sleep(ms);
      state.concurrent--;
      return { InternalOrderId: `M-${state.runs}`, OrderId: order.OrderId };
    };
    return { state, fn };
  };

  it("a repeat straight after a synchronous block longer than leaseMs waits on the run (memory store): one run", async () => {
    const { state, fn } = slow(400);
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { store: createMemoryIdempotencyStore(), leaseMs: 150, waitMs: 100 }),
      { auth: false, onError: () => undefined },
    );
    const first = handler.handle(post(orderText));
    await sleep(40);
    // Before the timers phase lets the run's renewal tick: the handle looks a lease old.
    busy(200);
    const second = handler.handle(post(orderText));
    const [a, b] = await Promise.all([first, second]);
    expect(state.runs).toBe(1);
    expect(state.most).toBe(1);
    expect(a.status).toBe(200);
    // 503 once waitMs passed, or the first run's answer (a loaded machine): never a second run.
    if (b.status !== 503) expect(json(b)).toMatchObject({ InternalOrderId: "M-1" });
    expect(json(await handler.handle(post(orderText)))).toMatchObject({ InternalOrderId: "M-1" });
  });

  it("a repeat handled just after such a block in an I/O callback (before the timers phase) waits on the run: one run", async () => {
    const { state, fn } = slow(400);
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { store: createMemoryIdempotencyStore(), leaseMs: 150, waitMs: 100 }),
      { auth: false, onError: () => undefined },
    );
    const first = handler.handle(post(orderText));
    await sleep(40);
    // Node dates a timer set now from the loop's time cached before the block: one macrotask hop
    // may run before the run's overdue renewal tick.
    const second = await new Promise<ReturnType<typeof handler.handle>>((resolve) => {
      readFile(new URL(import.meta.url), () => {
        busy(200);
        setImmediate(() => resolve(handler.handle(post(orderText))));
      });
    });
    const [a, b] = await Promise.all([first, second]);
    expect(state.runs).toBe(1);
    expect(state.most).toBe(1);
    expect(a.status).toBe(200);
    if (b.status !== 503) expect(json(b)).toMatchObject({ InternalOrderId: "M-1" });
  });

  it("a repeat well after such a block (the run's renewals stopped, its lease run out) waits on the run: one run", async () => {
    const { state, fn } = slow(900);
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { store: createMemoryIdempotencyStore(), leaseMs: 150, waitMs: 100 }),
      { auth: false, onError },
    );
    const first = handler.handle(post(orderText));
    await sleep(40);
    busy(200);
    await sleep(400);
    const second = handler.handle(post(orderText));
    const [a, b] = await Promise.all([first, second]);
    expect(state.runs).toBe(1);
    expect(state.most).toBe(1);
    expect(a.status).toBe(200);
    // 503 once waitMs passed, or the first run's answer (a loaded machine): never a second run.
    if (b.status !== 503) expect(json(b)).toMatchObject({ InternalOrderId: "M-1" });
    expect(failures.map((failure) => failure.reason)).toContainEqual(
      expect.stringContaining("was not renewed for a whole leaseMs (150 ms)"),
    );
  });

  it("renewals refused (the store lost the lease) while the function goes on: a repeat waits on it, one run", async () => {
    const inner = createMemoryIdempotencyStore();
    const store: IdempotencyStore = { ...inner, renew: async () => false };
    const { state, fn } = slow(700);
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(fn, { store, leaseMs: 150, waitMs: 100 }),
      { auth: false, onError: () => undefined },
    );
    const first = handler.handle(post(orderText));
    await sleep(450);
    const second = await handler.handle(post(orderText));
    expect((await first).status).toBe(200);
    expect(state.runs).toBe(1);
    // 503 once waitMs passed, or the first run's answer (a loaded machine): never a second run.
    if (second.status !== 503) expect(json(second)).toMatchObject({ InternalOrderId: "M-1" });
  });

  for (const mode of ["advanceTimersByTime", "advanceTimersByTimeAsync"] as const) {
    it(`fake timers, ${mode} past leaseMs while the function runs: one run`, async () => {
      vi.useFakeTimers({
        toFake: [
          "setTimeout",
          "setInterval",
          "clearTimeout",
          "clearInterval",
          "Date",
          "performance",
        ],
      });
      try {
        let runs = 0;
        const fn = async (order: SendOrderToMerchantRequest) => {
          runs++;
          await new Promise((resolve) => setTimeout(resolve, 10_000));
          return { InternalOrderId: `M-${runs}`, OrderId: order.OrderId };
        };
        const handler = createSendOrderToMerchantHandler(
          withIdempotency(fn, { leaseMs: 1000, waitMs: 100 }),
          { auth: false, onError: () => undefined },
        );
        const first = handler.handle(post(orderText));
        await vi.advanceTimersByTimeAsync(50);
        if (mode === "advanceTimersByTime") vi.advanceTimersByTime(3000);
        else await vi.advanceTimersByTimeAsync(3000);
        const second = handler.handle(post(orderText));
        // Timers advanced until both are answered (a key's digest is real I/O, not a timer).
        let answered = false;
        const both = Promise.all([first, second]).finally(() => {
          answered = true;
        });
        for (let step = 0; step < 100 && !answered; step++) {
          await vi.advanceTimersByTimeAsync(500);
          await new Promise((resolve) => setImmediate(resolve));
        }
        const [a, b] = await both;
        expect(runs).toBe(1);
        expect(a.status).toBe(200);
        // 503 once waitMs passed, or the first run's answer: never a second run.
        if (b.status !== 503) expect(json(b)).toMatchObject({ InternalOrderId: "M-1" });
      } finally {
        vi.useRealTimers();
      }
    });
  }
});

describe("a record that failed once (review serverless-2)", () => {
  it("is written again within the delivery: the store holds the record when the answer is given (a Lambda freezes then)", async () => {
    const { store, inner, writes } = recordsFailingAtFirst(1);
    const reports = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async () => ({ InternalOrderId: "M-1" }), { store }),
      { auth: false, onError: reports.onError },
    );
    const answer = await handler.handle(post(orderText));
    expect(answer.status).toBe(200);
    // Nothing left for the background: the record is there at the answer.
    expect(await inner.get(await orderKey())).toMatchObject({ state: "completed" });
    expect(writes()).toBe(2);
    expect(reports.failures).toEqual([]);
  });
});

describe("a record that lands on its retry after the answer (review ssls2-3)", () => {
  it("is told to onError once, after the line saying it could not be recorded", async () => {
    const inner = createMemoryIdempotencyStore();
    let writes = 0;
    const store: IdempotencyStore = {
      ...inner,
      complete: async (key, owner, result, ttl) => {
        const write = ++writes;
        if (write === 1) throw new Error("read ECONNRESET");
        // Applied at once, answered past what is left of storeTimeoutMs (300 ms).
        const done = await inner.complete(key, owner, result, ttl);
        if (write === 2) await sleep(400);
        return done;
      },
    };
    const reports = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async () => ({ InternalOrderId: "M-1" }), {
        store,
        storeTimeoutMs: 300,
        leaseMs: 3_000,
      }),
      { auth: false, onError: reports.onError },
    );
    expect((await handler.handle(post(orderText))).status).toBe(200);
    expect(reports.failures.map((f) => f.reason)).toEqual([
      expect.stringMatching(/could not record the result of .*retried in the background/),
    ]);
    await vi.waitFor(() => expect(reports.failures).toHaveLength(2), { timeout: 2_000 });
    // Before: nothing after "could not record", although the retry had landed.
    expect(reports.failures[1]?.reason).toMatch(
      /the result of SendOrderToMerchant:\S+ was recorded after all/,
    );
    await sleep(500);
    expect(reports.failures).toHaveLength(2);
    expect(writes).toBe(2);
    expect(await inner.get(await orderKey())).toMatchObject({ state: "completed" });
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
    const { store, inner } = recordsFailingAtFirst(2);
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

describe("late claims with waitUntil (review ssls2-2; workerd: test/adapters/workerd-releases.test.ts)", () => {
  it("two late claims in two requests are each released within the work handed to their own request's waitUntil", async () => {
    const { default: worker } = await import("../adapters/runtimes/release-worker.js");
    const handed = new Map<string, Promise<unknown>[]>();
    const ctxOf = (id: string) => ({
      waitUntil: (promise: Promise<unknown>) => {
        handed.set(id, [...(handed.get(id) ?? []), promise]);
      },
    });
    const send = (path: string, id = "", init?: RequestInit) =>
      worker.fetch(new Request(`http://merchant.example${path}`, init), {}, ctxOf(id));
    const post = (id: string) =>
      send("/crossborder/SendOrderToMerchant", id, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: orderText.replace(/GE927127001US/g, id),
      });
    await send("/config?claims=500,400&releaseMs=400");
    const a = post("GE000000A01US");
    await sleep(300);
    const b = post("GE000000B01US");
    expect([(await a).status, (await b).status]).toEqual([500, 500]);
    // Each request's own work ends once its claim is released: nothing else is waited for.
    for (const id of ["GE000000A01US", "GE000000B01US"]) {
      expect(handed.get(id)).toHaveLength(1);
      await handed.get(id)?.[0];
    }
    const { log } = (await (await send("/state")).json()) as { log: string[] };
    expect(log.filter((line) => / release answered \S+ true$/.test(line))).toHaveLength(2);
    expect((await post("GE000000B01US")).status).toBe(200);
    expect((await post("GE000000A01US")).status).toBe(200);
  });
});
