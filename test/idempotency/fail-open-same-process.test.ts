/**
 * `failOpen` with the store down, one process (review ssls2-1): the run without a record holds
 * its key in its process until it settles, as a recorded run does, so a repeat of the same
 * delivery there waits on it (and gets its result) instead of running the function a second time
 * while the first still goes on; also when the store is back by then. Duplicates are possible
 * only between instances, as the README says. On a memory store made to fail, on real Redis and
 * on real PostgreSQL servers that are stopped.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createMemoryIdempotencyStore } from "../../src/idempotency/memory.js";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import {
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  type IdempotencyStore,
  type PerformOrderPaymentRequest,
  type PerformOrderPaymentResult,
  withIdempotency,
} from "../../src/index.js";
import { collector, json, post } from "../core/helpers.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";
import { paymentFor } from "./support/payment.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let sequence = 0;
function payment(): string {
  return paymentFor(`GE-FO-${++sequence}`);
}

/** Charges per run, how many ran at once at most. */
function charging(runMs: number) {
  const state = { charges: 0, running: 0, most: 0 };
  const fn = async (order: PerformOrderPaymentRequest) => {
    const charge = ++state.charges;
    state.running++;
    state.most = Math.max(state.most, state.running);
    await sleep(runMs);
    state.running--;
    return {
      InternalOrderId: `M-${order.OrderId}-${charge}`,
      PaymentAmount: 10,
      PaymentCurrencyCode: "EUR",
    };
  };
  return { state, fn };
}

interface Backend {
  store(): IdempotencyStore;
  down(): Promise<void>;
  up(): Promise<void>;
}

function aRepeatInTheSameProcessWaits(name: string, backend: () => Backend) {
  /** Payments through `fn`, failOpen, a lease of 300 ms, waiting up to 5 s on a run. */
  const failOpenPayments = (
    fn: (order: PerformOrderPaymentRequest) => Promise<PerformOrderPaymentResult>,
    onError: (failure: CallbackFailure) => void,
  ) =>
    createPerformOrderPaymentHandler(
      withIdempotency(fn, {
        store: backend().store(),
        failOpen: true,
        leaseMs: 300,
        waitMs: 5_000,
        storeTimeoutMs: 500,
      }),
      { auth: false, onError },
    );

  describe(`${name}: failOpen, the store down`, () => {
    it("a repeat past leaseMs while the unrecorded run goes on waits on it: one charge, both answered its result", async () => {
      const { state, fn } = charging(900);
      const reports = collector();
      const handler = failOpenPayments(fn, reports.onError);
      const body = payment();
      await backend().down();
      try {
        const first = handler.handle(post(body));
        await sleep(500);
        const second = handler.handle(post(body));
        const [a, b] = await Promise.all([first, second]);
        expect([a.status, b.status]).toEqual([200, 200]);
        // Before: charges 2, both running at once (the handle went stale a lease after it was made).
        expect(state.charges).toBe(1);
        expect(state.most).toBe(1);
        expect(b.body).toBe(a.body);
        expect(reports.failures).toHaveLength(1);
        expect(reports.failures[0]?.reason).toMatch(/the store failed to claim .*failOpen/);
      } finally {
        await backend().up();
      }
    });

    it("the store back while the unrecorded run goes on: the repeat in this process waits on it, not claims and runs again", async () => {
      // The run goes on until the repeat has been handled (a server may take a while to start).
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => {
        finish = resolve;
      });
      let charges = 0;
      const fn = async (order: PerformOrderPaymentRequest) => {
        const charge = ++charges;
        await gate;
        return {
          InternalOrderId: `M-${order.OrderId}-${charge}`,
          PaymentAmount: 10,
          PaymentCurrencyCode: "EUR",
        };
      };
      const reports = collector();
      const handler = failOpenPayments(fn, reports.onError);
      const body = payment();
      const startedAt = performance.now();
      await backend().down();
      let first: ReturnType<typeof handler.handle>;
      try {
        first = handler.handle(post(body));
        await vi.waitFor(() => expect(charges).toBe(1), { timeout: 5_000 });
      } finally {
        await backend().up();
      }
      expect(reports.failures[0]?.reason).toMatch(/the store failed to claim .*failOpen/);
      // Past a lease since the unrecorded run started, the store back.
      await sleep(Math.max(0, startedAt + 500 - performance.now()));
      const second = handler.handle(post(body));
      await sleep(300);
      finish();
      const [a, b] = await Promise.all([first, second]);
      expect([a.status, b.status]).toEqual([200, 200]);
      // Before: charges 2, and onError said nothing of a second run.
      expect(charges).toBe(1);
      expect(json(b)).toMatchObject({ InternalOrderId: expect.stringMatching(/-1$/) });
    });
  });
}

describe("memory store made to fail", () => {
  const inner = createMemoryIdempotencyStore();
  let down = false;
  const failing = <T>(call: () => T): T => {
    if (down) throw new Error("connect ECONNREFUSED");
    return call();
  };
  const store: IdempotencyStore = {
    claim: (...a) => failing(() => inner.claim(...a)),
    get: (...a) => failing(() => inner.get(...a)),
    complete: (...a) => failing(() => inner.complete(...a)),
    renew: (...a) => failing(() => inner.renew(...a)),
    release: (...a) => failing(() => inner.release(...a)),
  };
  aRepeatInTheSameProcessWaits("memory", () => ({
    store: () => store,
    down: async () => {
      down = true;
    },
    up: async () => {
      down = false;
    },
  }));

  it("the store's read failing while a repeat polls (storeFailed read): the unrecorded run holds the key too", async () => {
    const { state, fn } = charging(900);
    const other = createMemoryIdempotencyStore();
    // Another instance's lease on the key: this process polls, and the read fails.
    let reads = 0;
    const polled: IdempotencyStore = {
      ...other,
      get: async () => {
        reads++;
        throw new Error("read ECONNRESET");
      },
    };
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: polled, failOpen: true, leaseMs: 300, waitMs: 5_000 }),
      { auth: false, onError: () => undefined },
    );
    const body = payment();
    // The key is held elsewhere: the claim is refused, the poll's read fails, failOpen runs it.
    const key = `PerformOrderPayment:${JSON.parse(body).OrderId}`;
    expect(await other.claim(key, "elsewhere", 60_000)).toEqual({ claimed: true });
    const first = handler.handle(post(body));
    await sleep(500);
    const second = handler.handle(post(body));
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(reads).toBeGreaterThan(0);
    expect(state.charges).toBe(1);
  });

  it("an unrecorded run whose timers the runtime dropped (a Worker's request that ended) holds the key no longer than a lease", async () => {
    let runs = 0;
    const fn = (_order: PerformOrderPaymentRequest) => {
      runs++;
      if (runs === 1) return new Promise<never>(() => undefined);
      return { InternalOrderId: `M-${runs}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
    };
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, failOpen: true, leaseMs: 300, waitMs: 100 }),
      { auth: false, onError: () => undefined },
    );
    const body = payment();
    down = true;
    try {
      const dropped = vi
        .spyOn(globalThis, "setInterval")
        .mockImplementationOnce((() => ({ unref() {} })) as unknown as typeof setInterval);
      try {
        void handler.handle(post(body));
        await sleep(30);
        expect(dropped).toHaveBeenCalledTimes(1);
      } finally {
        dropped.mockRestore();
      }
      expect((await handler.handle(post(body))).status).toBe(503);
      await sleep(400);
      const repeat = await handler.handle(post(body));
      expect(repeat.status).toBe(200);
      expect(runs).toBe(2);
    } finally {
      down = false;
    }
  });

  it("an unrecorded run past maxRunMs lets go of its key, told to onError", async () => {
    let runs = 0;
    const fn = async (_order: PerformOrderPaymentRequest) => {
      runs++;
      if (runs === 1) await new Promise<never>(() => undefined);
      return { InternalOrderId: `M-${runs}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
    };
    const reports = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, failOpen: true, leaseMs: 300, waitMs: 100, maxRunMs: 400 }),
      { auth: false, onError: reports.onError },
    );
    const body = payment();
    down = true;
    try {
      void handler.handle(post(body));
      await sleep(30);
      expect((await handler.handle(post(body))).status).toBe(503);
      await sleep(600);
      expect((await handler.handle(post(body))).status).toBe(200);
      expect(runs).toBe(2);
      expect(reports.failures.map((f) => f.reason)).toContainEqual(
        expect.stringMatching(/ran past maxRunMs \(400 ms\) .*without a record/),
      );
    } finally {
      down = false;
    }
  });
});

describe("Redis (redis-server)", () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis({ appendOnly: false });
    // No offline queue: a claim fails at once while the server is down.
    client = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on("error", () => undefined);
    await new Promise((resolve) => client.once("ready", resolve));
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.close();
  });
  aRepeatInTheSameProcessWaits("ioredis", () => ({
    store: () => createRedisIdempotencyStore(client),
    down: () => server.stop(),
    up: async () => {
      await server.start();
      await vi.waitFor(() => expect(client.status).toBe("ready"), { timeout: 10_000 });
    },
  }));
});

describe("PostgreSQL (initdb + postgres)", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 10, connectionTimeoutMillis: 1_000 });
    pool.on("error", () => undefined);
    await createPostgresIdempotencyStore(pool).ready();
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });
  aRepeatInTheSameProcessWaits("pg pool", () => ({
    store: () => createPostgresIdempotencyStore(pool),
    down: () => server.stop(),
    up: async () => {
      await server.start();
      await vi.waitFor(
        async () => expect((await pool.query("SELECT 1 AS one")).rows).toHaveLength(1),
        {
          timeout: 10_000,
        },
      );
    },
  }));
});
