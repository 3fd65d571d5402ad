/**
 * withIdempotency when the wall clock of the instance running it steps (an NTP correction, a VM
 * catching up): every duration and deadline it keeps (the lease it renews, maxRunMs, a renewal
 * that holds back the next, waitMs, the background releases and record writes) is measured on a
 * monotonic clock, so a step changes none of them. A step is simulated by replacing `Date.now`
 * (the real value plus an offset); timers, and the Redis and PostgreSQL servers' clocks, are left
 * alone, as a real step on the app host would leave them. Each test has a control without a step.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import {
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  type IdempotencyOptions,
  type IdempotencyStore,
  type PerformOrderPaymentRequest,
  withIdempotency,
} from "../../src/index.js";
import { json, post } from "../core/helpers.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";
import { useSteppedWallClock } from "../support/wall-clock.js";
import { paymentFor } from "./support/payment.js";

const { step, realNow } = useSteppedWallClock();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let sequence = 0;
const payment = () => paymentFor(`GE-STEP-${realNow()}-${++sequence}`);

/** A payment taking `runMs`, counting its runs (the card charges). */
function charges(runMs: number) {
  let count = 0;
  const fn = async (order: PerformOrderPaymentRequest) => {
    count++;
    await sleep(runMs);
    return { InternalOrderId: `M-${order.OrderId}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
  };
  return { fn, count: () => count };
}

/** The reports that a lease was lost, a run abandoned, or the function run twice (not the warnings). */
const trouble = (reasons: string[]) =>
  reasons.filter((reason) =>
    /lost|expired|run twice|ran twice|ran past maxRunMs|could not renew|gave up/.test(reason),
  );

type Charge = ReturnType<typeof charges>["fn"];
type Options = Omit<IdempotencyOptions<PerformOrderPaymentRequest>, "store">;

/** One instance of the app: its own withIdempotency over the shared store. */
function instance(
  store: IdempotencyStore,
  fn: Charge,
  options: Options,
  failures: CallbackFailure[],
) {
  return createPerformOrderPaymentHandler(withIdempotency(fn, { store, ...options }), {
    auth: false,
    onError: (failure) => void failures.push(failure),
  });
}

/**
 * Instance A runs a 900 ms payment under a 300 ms lease; 100 ms in, A's wall clock steps by
 * `stepMs`; at 650 ms (the lease would have run out by 450 ms unrenewed) the service's retry
 * reaches instance B. A must keep renewing: B is answered 503, the card charged once.
 */
async function retryDuringRun(store: IdempotencyStore, stepMs: number) {
  const { fn, count } = charges(900);
  const failures: CallbackFailure[] = [];
  const options = { leaseMs: 300, waitMs: 100 };
  const a = instance(store, fn, options, failures);
  const b = instance(store, fn, options, failures);
  const text = payment();
  const first = a.handle(post(text));
  await sleep(100);
  step(stepMs);
  await sleep(550);
  const second = await b.handle(post(text));
  return {
    first: (await first).status,
    second: second.status,
    runs: count(),
    failures: failures.map((f) => f.reason),
  };
}

/** The same instance receives the retry of a run 100 ms old when its clock stepped +60 s: maxRunMs 10 s. */
async function maxRunRetry(store: IdempotencyStore, stepMs: number) {
  const { fn, count } = charges(900);
  const failures: CallbackFailure[] = [];
  const a = instance(store, fn, { leaseMs: 300, waitMs: 100, maxRunMs: 10_000 }, failures);
  const text = payment();
  const first = a.handle(post(text));
  await sleep(100);
  step(stepMs);
  await sleep(550);
  const second = await a.handle(post(text));
  await first;
  return { second: second.status, runs: count(), failures: failures.map((f) => f.reason) };
}

function leaseTests(store: () => IdempotencyStore) {
  it("a synchronous block longer than leaseMs while the run goes on (its lease runs out): a retry reaching the same instance waits on the run, one charge (second-sls-1)", async () => {
    const { fn, count } = charges(900);
    const failures: CallbackFailure[] = [];
    const a = instance(store(), fn, { leaseMs: 150, waitMs: 100 }, failures);
    const text = payment();
    const first = a.handle(post(text));
    await sleep(40);
    const end = performance.now() + 200;
    while (performance.now() < end) {
      // The merchant's own synchronous code holds the event loop for 1.3 leases.
    }
    await sleep(400);
    const second = await a.handle(post(text));
    expect((await first).status).toBe(200);
    expect(count()).toBe(1);
    if (second.status !== 503)
      expect(json(second)).toMatchObject({ InternalOrderId: `M-${JSON.parse(text).OrderId}` });
  });

  it("control: no clock step, the retry reaching instance B during the run is answered 503, one charge", async () => {
    const r = await retryDuringRun(store(), 0);
    expect(r).toMatchObject({ first: 200, second: 503, runs: 1 });
    expect(trouble(r.failures)).toEqual([]);
  });

  it("a wall clock stepped +60 s on the instance running the payment: renewals go on, B answered 503, one charge (clock-1)", async () => {
    const r = await retryDuringRun(store(), 60_000);
    expect(r).toMatchObject({ first: 200, second: 503, runs: 1 });
    expect(trouble(r.failures)).toEqual([]);
  });

  it("a wall clock stepped −60 s: renewals go on, one charge", async () => {
    const r = await retryDuringRun(store(), -60_000);
    expect(r).toMatchObject({ first: 200, second: 503, runs: 1 });
  });

  it("maxRunMs 10 s: a +60 s step 100 ms into the run does not count as running past it (clock-1)", async () => {
    const control = await maxRunRetry(store(), 0);
    expect(control).toMatchObject({ second: 503, runs: 1 });
    const r = await maxRunRetry(store(), 60_000);
    expect(r).toMatchObject({ second: 503, runs: 1 });
    expect(trouble(r.failures)).toEqual([]);
  });
}

describe("Redis", () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis({ appendOnly: false });
    client = new Redis(server.url);
    client.on("error", () => undefined);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.close();
  });
  const redis = () => createRedisIdempotencyStore(client);

  leaseTests(redis);

  it("a lease the store loses is told as lost by the store, not as expired, whatever the step (lostBefore, clock-1)", async () => {
    for (const stepMs of [0, 60_000]) {
      const failures: CallbackFailure[] = [];
      const { fn } = charges(600);
      const store = redis();
      let claimed!: () => void;
      const landed = new Promise<void>((resolve) => {
        claimed = resolve;
      });
      const watched: IdempotencyStore = {
        claim: async (...args) => {
          const claim = await store.claim(...args);
          claimed();
          return claim;
        },
        get: (...args) => store.get(...args),
        complete: (...args) => store.complete(...args),
        release: (...args) => store.release(...args),
        renew: (...args) => store.renew(...args),
      };
      const a = instance(watched, fn, { leaseMs: 450, waitMs: 100 }, failures);
      const answer = a.handle(post(payment()));
      await landed;
      step(stepMs);
      await client.flushall(); // a Redis restarted without an append-only file, say
      await answer;
      step(0);
      expect(failures.map((f) => f.reason).join("\n")).toContain("the store lost the lease on");
    }
  });

  /** The first renewal never settles (a pooled connection that died silently); the rest reach Redis. */
  function firstRenewHangs(store: IdempotencyStore): IdempotencyStore {
    let renews = 0;
    return {
      claim: (...args) => store.claim(...args),
      get: (...args) => store.get(...args),
      complete: (...args) => store.complete(...args),
      release: (...args) => store.release(...args),
      renew: (...args) => (++renews === 1 ? new Promise<boolean>(() => {}) : store.renew(...args)),
    };
  }

  /** A's first renewal (at 150 ms) hangs; 30 ms later the clock steps; B gets the retry at 900 ms. */
  async function hungRenewal(stepMs: number) {
    const { fn, count } = charges(1_200);
    const failures: CallbackFailure[] = [];
    const options = { leaseMs: 450, waitMs: 100, storeTimeoutMs: 60 };
    const a = instance(firstRenewHangs(redis()), fn, options, failures);
    const b = instance(redis(), fn, options, failures);
    const text = payment();
    const first = a.handle(post(text));
    await sleep(180);
    step(stepMs);
    await sleep(720);
    const second = await b.handle(post(text));
    return { first: (await first).status, second: second.status, runs: count() };
  }

  it("control: a renewal that never settles, no step: the next renewal goes out after storeTimeoutMs, one charge", async () => {
    expect(await hungRenewal(0)).toEqual({ first: 200, second: 503, runs: 1 });
  });

  it("a renewal that never settles and a wall clock stepped −60 s: the next renewal still goes out, one charge (clock-2)", async () => {
    expect(await hungRenewal(-60_000)).toEqual({ first: 200, second: 503, runs: 1 });
  });

  /** A runs 1.5 s; B (waitMs 400) starts waiting at 100 ms, and 50 ms later its clock steps. */
  async function waiting(stepMs: number) {
    const { fn, count } = charges(1_500);
    const failures: CallbackFailure[] = [];
    const options = { leaseMs: 450, waitMs: 400 };
    const a = instance(redis(), fn, options, failures);
    const b = instance(redis(), fn, options, failures);
    const text = payment();
    const first = a.handle(post(text));
    await sleep(100);
    const started = performance.now();
    const second = b.handle(post(text));
    await sleep(50);
    step(stepMs);
    const status = (await second).status;
    const waited = performance.now() - started;
    await first;
    return { status, waited, runs: count() };
  }

  it("control: waitMs 400 ms, no step: B answers 503 after about 400 ms", async () => {
    const r = await waiting(0);
    expect(r.status).toBe(503);
    expect(r.waited).toBeGreaterThanOrEqual(380);
    expect(r.waited).toBeLessThan(900);
  });

  it("waitMs 400 ms and a wall clock stepped −60 s while B waits: B still answers 503 after about 400 ms (clock-3)", async () => {
    const r = await waiting(-60_000);
    expect(r.status).toBe(503);
    expect(r.waited).toBeLessThan(900);
  });

  it("waitMs 400 ms and a wall clock stepped +60 s while B waits: B still waits about 400 ms (clock-3)", async () => {
    const r = await waiting(60_000);
    expect(r.status).toBe(503);
    expect(r.waited).toBeGreaterThanOrEqual(380);
  });

  /**
   * The first claim lands 150 ms after it is sent, past storeTimeoutMs (50 ms): the delivery is
   * refused (500) and the claim released in the background once it lands; 100 ms in, the clock
   * steps. The service's retry, at 300 ms, must find the key free (leaseMs is 5 s).
   */
  async function lateClaim(stepMs: number) {
    const store = redis();
    let claims = 0;
    const slow: IdempotencyStore = {
      claim: async (...args) => {
        if (++claims === 1) await sleep(150);
        return store.claim(...args);
      },
      get: (...args) => store.get(...args),
      complete: (...args) => store.complete(...args),
      release: (...args) => store.release(...args),
      renew: (...args) => store.renew(...args),
    };
    const { fn, count } = charges(10);
    const failures: CallbackFailure[] = [];
    const a = instance(slow, fn, { leaseMs: 5_000, waitMs: 100, storeTimeoutMs: 50 }, failures);
    const text = payment();
    const first = (await a.handle(post(text))).status;
    await sleep(50);
    step(stepMs);
    await sleep(200);
    const second = (await a.handle(post(text))).status;
    return { first, second, runs: count() };
  }

  it("control: a claim that lands after its delivery gave up is released, no step: the retry runs", async () => {
    expect(await lateClaim(0)).toEqual({ first: 500, second: 200, runs: 1 });
  });

  it("a claim that lands late with the wall clock stepped +60 s meanwhile is still released: the retry runs (clock-3, releaseLater)", async () => {
    expect(await lateClaim(60_000)).toEqual({ first: 500, second: 200, runs: 1 });
  });

  /**
   * The record's first two writes fail (ttlMs 10 s); the clock steps +60 s before the second: the
   * third must still be sent (completeLater's giveUpAt), and B, at 800 ms, answered the record.
   */
  async function recordRetried(stepMs: number) {
    const store = redis();
    let completes = 0;
    const failing: IdempotencyStore = {
      claim: (...args) => store.claim(...args),
      get: (...args) => store.get(...args),
      complete: (...args) =>
        ++completes <= 2 ? Promise.reject(new Error("connection reset")) : store.complete(...args),
      release: (...args) => store.release(...args),
      renew: (...args) => store.renew(...args),
    };
    const { fn, count } = charges(10);
    const failures: CallbackFailure[] = [];
    const options = { leaseMs: 300, waitMs: 100, ttlMs: 10_000 };
    const a = instance(failing, fn, options, failures);
    const b = instance(store, fn, options, failures);
    const text = payment();
    const first = (await a.handle(post(text))).status;
    step(stepMs);
    await sleep(800);
    const second = (await b.handle(post(text))).status;
    return {
      first,
      second,
      runs: count(),
      gaveUp: failures.some((f) => f.reason.includes("gave up")),
    };
  }

  it("control: a record whose first writes fail is written by a later try, no step: one charge", async () => {
    expect(await recordRetried(0)).toEqual({ first: 200, second: 200, runs: 1, gaveUp: false });
  });

  it("a record retried with the wall clock stepped +60 s past ttlMs is still written: one charge (clock-3, completeLater)", async () => {
    expect(await recordRetried(60_000)).toEqual({
      first: 200,
      second: 200,
      runs: 1,
      gaveUp: false,
    });
  });
});

describe("PostgreSQL", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url });
    pool.on("error", () => undefined);
    await createPostgresIdempotencyStore(pool).get("warm-up");
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });

  leaseTests(() => createPostgresIdempotencyStore(pool));
});

describe("the PostgreSQL store's background cleanup across a wall-clock step (second-clock-2)", () => {
  /**
   * A pool that answers every statement and counts the batch DELETEs of expired rows (no
   * database). Six claims 60 ms apart with cleanupIntervalMs 50 ms, the wall clock stepped by
   * `stepMs` just after the store is created: the expired rows are deleted about every claim.
   */
  async function deletesOverClaims(stepMs: number) {
    let deletes = 0;
    const pool = {
      query: async (text: string) => {
        if (/DELETE FROM .* WHERE key IN/s.test(text)) {
          deletes++;
          return { rowCount: 0, rows: [] };
        }
        return { rowCount: 1, rows: [] };
      },
    };
    const store = createPostgresIdempotencyStore(pool as never, {
      createTable: false,
      cleanupIntervalMs: 50,
    });
    step(stepMs);
    for (let i = 0; i < 6; i++) {
      await store.claim(`cleanup-${i}`, `owner-${i}`, 1_000);
      await sleep(60);
    }
    return deletes;
  }

  it("control: no step, the expired rows are deleted about every cleanupIntervalMs of use", async () => {
    expect(await deletesOverClaims(0)).toBeGreaterThanOrEqual(4);
  });

  it("a wall clock stepped −1 h: the cleanup still runs every cleanupIntervalMs, not an hour later", async () => {
    expect(await deletesOverClaims(-3_600_000)).toBeGreaterThanOrEqual(4);
  });
});
