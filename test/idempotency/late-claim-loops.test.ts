/**
 * The loops releasing late claims where a `waitUntil` is given (review second-ssls2b): on a runtime
 * that drops a request's leftover work (workerd), a per-claim loop whose end was dropped must not
 * count against the 10,000 bound forever; on Node (timers outlive the request) the shared per-store
 * loop releases them, one at a time, its progress for each claim handed to that request's waitUntil.
 */
import { afterEach, expect, it, vi } from "vitest";
import { releaseBound } from "../../src/idempotency/with-idempotency.js";
import {
  createMemoryIdempotencyStore,
  createSendOrderToMerchantHandler,
  type IdempotencyStore,
  withIdempotency,
} from "../../src/index.js";
import { fixture } from "../adapters/support/keys.js";
import { post } from "../core/helpers.js";

const orderText = fixture("SendOrderToMerchant");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const delivery = (id: string, waitUntil?: (promise: Promise<unknown>) => void) =>
  ({
    ...post(orderText.replace(/GE927127001US/g, id)),
    ...(waitUntil === undefined ? {} : { waitUntil }),
  }) as never;

/** The package's bound (10,000 claims per store), lowered here to reach it in a tenth of the time. */
const BOUND = 1_000;
const packageBound = releaseBound.mostPending;

afterEach(() => {
  releaseBound.mostPending = packageBound;
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

it("workerd: per-claim loops up to the bound whose end the runtime dropped do not keep the next late claim from being released (review second-ssls2b-1)", async () => {
  expect(packageBound).toBe(10_000);
  releaseBound.mostPending = BOUND;
  // The runtime this path is for: workerd (Node keeps the shared loop).
  vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
  const inner = createMemoryIdempotencyStore();
  const released: string[] = [];
  const down = true;
  const store: IdempotencyStore = {
    ...inner,
    // Store down: every claim refused at once, each may have landed, so each is released.
    claim: async (key, owner, leaseMs) => {
      if (down) throw new Error("connect ECONNREFUSED");
      return inner.claim(key, owner, leaseMs);
    },
    release: async (key, owner) => {
      released.push(key);
      if (down) return false;
      return inner.release(key, owner);
    },
  };
  const handler = createSendOrderToMerchantHandler(
    withIdempotency(async () => ({ InternalOrderId: "M-1" }), {
      store,
      leaseMs: 300,
      storeTimeoutMs: 50,
    }),
    { auth: false, onError: () => undefined },
  );
  // The runtime drops each request's leftover work once answered: its timers never fire, so
  // each loop's wait (and the bound of what was handed to waitUntil) never ends. Those are the
  // timers of storeTimeoutMs and longer; the request's own zero-delay hops still run.
  const original = globalThis.setTimeout;
  const dropped = vi
    .spyOn(globalThis, "setTimeout")
    .mockImplementation(((callback: () => void, ms?: number) =>
      (ms ?? 0) >= 40 ? { unref() {} } : original(callback, ms)) as unknown as typeof setTimeout);
  for (let batch = 0; batch < BOUND / 500; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        handler.handle(
          delivery(`GE9${String(batch * 500 + i).padStart(8, "0")}US`, () => undefined),
        ),
      ),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([500]));
  }
  dropped.mockRestore();
  expect(released).toHaveLength(BOUND);
  // Every one of those loops is over (its lease ran out long ago).
  await sleep(1_000);
  released.length = 0;
  const answer = await handler.handle(delivery("GE800000001US", () => undefined));
  expect(answer.status).toBe(500);
  await sleep(20);
  // Before: the dropped loops (as many as the bound) still counted, and this late claim was never released.
  expect(released).toHaveLength(1);
  expect(released[0]).toContain("GE800000001US");
}, 60_000);

for (const withWaitUntil of [false, true]) {
  it(`Node, store down, 20 refused deliveries at once, waitUntil ${withWaitUntil}: the shared loop, one release in flight (review second-ssls2b-2)`, async () => {
    const inner = createMemoryIdempotencyStore();
    let inFlight = 0;
    let most = 0;
    let sent = 0;
    const store: IdempotencyStore = {
      ...inner,
      claim: async () => {
        throw new Error("connect ECONNREFUSED");
      },
      release: async () => {
        sent++;
        inFlight++;
        most = Math.max(most, inFlight);
        await sleep(300);
        inFlight--;
        throw new Error("connect ECONNREFUSED");
      },
    };
    const handed: Promise<unknown>[] = [];
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(async () => ({ InternalOrderId: "M-1" }), {
        store,
        leaseMs: 2_000,
        storeTimeoutMs: 200,
      }),
      { auth: false, onError: () => undefined },
    );
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        handler.handle(
          delivery(
            `GE7${String(i).padStart(8, "0")}US`,
            withWaitUntil ? (promise) => void handed.push(promise) : undefined,
          ),
        ),
      ),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([500]));
    await sleep(2_500);
    // Before, with a waitUntil: 72 releases, 20 at once (one loop per claim).
    expect(most).toBe(1);
    expect(sent).toBeLessThanOrEqual(5);
    // Each request was still handed its claim's release, settled once the lease ran out.
    expect(handed).toHaveLength(withWaitUntil ? 20 : 0);
    await Promise.all(handed);
  });
}
