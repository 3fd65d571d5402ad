/**
 * withIdempotency on real Redis and PostgreSQL servers that go down and come back: fail closed,
 * fail open, and a store failing after the function succeeded (no second run on the retry).
 */
import { readFileSync } from "node:fs";
import { Redis as IoRedis } from "ioredis";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultIdempotencyKey, storedKey } from "../../src/idempotency/keys.js";
import { createMemoryIdempotencyStore } from "../../src/idempotency/memory.js";
import {
  createPostgresIdempotencyStore,
  type PgLikeQueryable,
} from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore, type RedisLikeClient } from "../../src/idempotency/redis.js";
import {
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  createRedeemGiftCardHandler,
  type ForgettingIdempotencyStore,
  type IdempotencyStore,
  IdempotencyStoreError,
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

let sequence = 0;
/** A payment of an order of its own, so that tests sharing a store do not share keys. */
function payment(): string {
  return paymentFor(`GE-DB-${Date.now()}-${++sequence}`);
}

/** A charge per run, and a hook to run in the middle of it. */
function charges(during: () => Promise<void> = async () => {}) {
  let count = 0;
  const fn = async (order: PerformOrderPaymentRequest) => {
    count++;
    await during();
    return { InternalOrderId: `M-${order.OrderId}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
  };
  return { fn, count: () => count };
}

/** Waits until the client is connected again (it reconnects on its own after a restart). */
async function reachable(store: IdempotencyStore): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await Promise.race([
        store.get("reachable"),
        new Promise((_, reject) => setTimeout(() => reject(new Error("slow")), 200)),
      ]);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The three behaviours, for one database whose server the test can stop and start. */
function whenTheServerGoesDown(
  name: string,
  server: () => { stop(): Promise<void>; start(): Promise<void> },
  store: () => IdempotencyStore,
) {
  describe(`${name}: the server goes down`, () => {
    // Each test starts with the server up and the client connected to it.
    beforeEach(async () => {
      await server().start();
      await reachable(store());
    });

    it("fails closed: 500, the function not run, the store's error in onError", async () => {
      const { fn, count } = charges();
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(fn, { store: store(), storeTimeoutMs: 500 }),
        { auth: false, onError },
      );
      await server().stop();
      try {
        const answer = await handler.handle(post(payment()));
        expect(answer.status).toBe(500);
        expect(json(answer)).toMatchObject({ Success: false });
        expect(count()).toBe(0);
        expect(failures).toMatchObject([{ kind: "internal_error", status: 500 }]);
        expect(failures[0]?.error).toMatchObject({ name: "IdempotencyStoreError" });
      } finally {
        await server().start();
      }
    });

    it("fails open when asked: the function runs, answered 200, store_failure in onError", async () => {
      const { fn, count } = charges();
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(fn, { store: store(), storeTimeoutMs: 500, failOpen: true }),
        { auth: false, onError },
      );
      await server().stop();
      try {
        const answer = await handler.handle(post(payment()));
        expect(answer.status).toBe(200);
        expect(count()).toBe(1);
        expect(failures).toMatchObject([{ kind: "store_failure", status: 200 }]);
      } finally {
        await server().start();
      }
    });

    it("down between the charge and its record: answered with the result, the retry charges nothing, the record lands when the server is back", async () => {
      const { failures, onError } = collector();
      const { fn, count } = charges(() => server().stop());
      const shared = store();
      const pay = withIdempotency(fn, { store: shared, storeTimeoutMs: 500 });
      const handler = createPerformOrderPaymentHandler(pay, { auth: false, onError });
      const body = payment();
      const first = await handler.handle(post(body));
      try {
        expect(first.status).toBe(200);
        expect(json(first)).toMatchObject({ Success: true, PaymentAmount: "10" });
        expect(failures).toMatchObject([{ kind: "store_failure", status: 200 }]);
        // The service retries on this instance while the server is down: no second charge.
        expect((await handler.handle(post(body))).body).toBe(first.body);
      } finally {
        await server().start();
      }
      // Another instance, once the background completion landed, answers the stored result.
      const other = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { store: shared, storeTimeoutMs: 500 }),
        { auth: false, onError },
      );
      await expect
        .poll(async () => (await other.handle(post(body))).body, { timeout: 15_000, interval: 200 })
        .toBe(first.body);
      expect(count()).toBe(1);
    });
  });
}

/**
 * A record the store holds but that cannot be read back (written by something else, damaged):
 * every delivery is refused 500 without running the function, with failOpen or without, and
 * onError names the record to delete. `put` stores `value` under the key of `orderId`'s payment.
 */
async function anUnreadableRecordIsNamed<T>(
  store: IdempotencyStore,
  values: readonly T[],
  put: (orderId: string, value: T) => Promise<unknown>,
): Promise<void> {
  const { fn, count } = charges();
  const { failures, onError } = collector();
  // With failOpen too: the record is there, so the function ran; it must not run again. A value
  // misread as a live lease would hold each delivery waitMs before a 503: 1 s, not the default 10.
  const handlers = [false, true].map((failOpen) =>
    createPerformOrderPaymentHandler(withIdempotency(fn, { store, failOpen, waitMs: 1_000 }), {
      auth: false,
      onError,
    }),
  );
  for (const [value, handler] of values.flatMap((value) =>
    handlers.map((h) => [value, h] as const),
  )) {
    // No long run of digits: one that passes the Luhn check would be masked in the report.
    const OrderId = `GE-UNREADABLE-${++sequence}`;
    const body = paymentFor(OrderId);
    await put(OrderId, value);
    for (let i = 0; i < 2; i++) expect((await handler.handle(post(body))).status).toBe(500);
    expect(failures, JSON.stringify(value)).toHaveLength(2);
    for (const failure of failures.splice(0)) {
      expect(failure).toMatchObject({ kind: "internal_error", status: 500 });
      expect(failure.error).toMatchObject({ name: "IdempotencyStoreError" });
      // The class itself, with its operation (review docs-2: a plain Error named so, before).
      expect(failure.error).toBeInstanceOf(IdempotencyStoreError);
      expect((failure.error as IdempotencyStoreError).operation).toMatch(
        /^read back the unreadable idempotency record under /,
      );
      const message = String((failure.error as Error).message);
      // Redis names its own key, with the store's prefix: the key to delete.
      expect(message, JSON.stringify(value)).toMatch(
        new RegExp(`unreadable idempotency record under \\S*PerformOrderPayment:${OrderId}\\b`),
      );
      // Not the script's internals (arithmetic on a nil value).
      expect(message).not.toMatch(/nil value|compare/);
    }
  }
  expect(count()).toBe(0);
}

/**
 * The store contract's `complete`: true when the key has no live record. A late owner whose
 * takeover's lease ran out too records its result; a stranger completes a key whose record's
 * window passed. (Mutation round 2: dropping the expiry test survived every other check.)
 */
function completesWhereNoRecordIsLive(name: string, store: () => IdempotencyStore) {
  it(`${name}: complete over another owner's expired lease, or an expired record, is recorded`, async () => {
    const each = store();
    const key = `late-complete:${name}`;
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    expect(await each.claim(key, "first", 50)).toEqual({ claimed: true });
    await wait(150);
    expect(await each.claim(key, "second", 50)).toEqual({ claimed: true });
    await wait(150);
    // The late record lives 1 s: read back at once, on a loaded machine too, then let go.
    expect(await each.complete(key, "first", "jlate", 1_000)).toBe(true);
    expect(await each.get(key)).toEqual({ state: "completed", result: "jlate" });
    await wait(1_200);
    expect(await each.complete(key, "third", "jnext", 60_000)).toBe(true);
    expect(await each.get(key)).toEqual({ state: "completed", result: "jnext" });
  });
}

/** A result the engine refuses (answered 500) is not recorded: the retry runs the function again. */
function anUnusableResultIsNotRecorded(name: string, store: () => IdempotencyStore) {
  it(`${name}: a result answered 500 (Success: false returned) is not recorded; the retry runs the function and its answer is kept`, async () => {
    let count = 0;
    const { failures, onError } = collector();
    const pay = async (order: PerformOrderPaymentRequest) => {
      count++;
      // The first run refused by returning instead of throwing: a result the engine answers 500.
      if (count === 1)
        return { Success: false } as unknown as {
          PaymentAmount: number;
          PaymentCurrencyCode: string;
        };
      return {
        InternalOrderId: `M-${order.OrderId}`,
        PaymentAmount: 10,
        PaymentCurrencyCode: "EUR",
      };
    };
    const shared = store();
    const handler = createPerformOrderPaymentHandler(withIdempotency(pay, { store: shared }), {
      auth: false,
      onError,
    });
    const body = payment();
    expect((await handler.handle(post(body))).status).toBe(500);
    // Another instance sharing the store gets the retry: it runs the function, it is not refused.
    const other = createPerformOrderPaymentHandler(withIdempotency(pay, { store: shared }), {
      auth: false,
      onError,
    });
    const retry = await other.handle(post(body));
    expect(retry.status).toBe(200);
    expect(json(retry)).toMatchObject({ Success: true, PaymentAmount: "10" });
    expect((await handler.handle(post(body))).body).toBe(retry.body);
    expect(count).toBe(2);
    expect(failures.map((failure) => failure.status)).toEqual([500]);
  });

  it(`${name}: a result without the amount charged is answered 200 and recorded; another instance answers it without charging again`, async () => {
    let count = 0;
    const pay = async (order: PerformOrderPaymentRequest) => {
      count++;
      return {
        InternalOrderId: `M-${order.OrderId}`,
        PaymentAmount: undefined as unknown as number,
        PaymentCurrencyCode: "EUR",
      };
    };
    const shared = store();
    const options = { auth: false, onError: () => undefined } as const;
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(pay, { store: shared }),
      options,
    );
    const other = createPerformOrderPaymentHandler(
      withIdempotency(pay, { store: shared }),
      options,
    );
    const body = payment();
    const first = await handler.handle(post(body));
    expect(first.status).toBe(200);
    expect(json(first)).toStrictEqual({
      Success: true,
      InternalOrderId: expect.stringMatching(/^M-/),
      PaymentCurrencyCode: "EUR",
    });
    const retry = await other.handle(post(body));
    expect(retry.status).toBe(200);
    expect(retry.body).toBe(first.body);
    expect(count).toBe(1);
  });
}

/**
 * A record an earlier version wrote for a redemption it answered 200 although its result said
 * `IsValid: false` (the whole result, as that version stored it): read now, it is a result the
 * engine answers 500. It is deleted and the delivery runs the function (nothing was debited),
 * `onError` saying so once; the new result is recorded and answers the repeats.
 */
function anOldRefusalRecordRunsAgain(name: string, store: () => ForgettingIdempotencyStore) {
  it(`${name}: a redemption recorded by an earlier version with IsValid: false is deleted and run again, not answered 500 for the record's ttl`, async () => {
    const shared = store();
    const payload = {
      ...JSON.parse(
        readFileSync(new URL("../fixtures/RedeemGiftCard.json", import.meta.url), "utf8"),
      ),
      OrderId: `GE-OLD-${Date.now()}-${++sequence}`,
    };
    const context = { callback: "RedeemGiftCard", rawPayload: payload } as never;
    const derived = await defaultIdempotencyKey(payload, context);
    expect(derived).toBeDefined();
    const key = await storedKey("RedeemGiftCard", derived as string);
    const old = `j${JSON.stringify({ IsValid: false, ErrorCode: "INSUFFICIENT", Balance: "0.00" })}`;
    expect(await shared.claim(key, "earlier-version", 60_000)).toEqual({ claimed: true });
    // forget deletes only a record completed with exactly that result: never a running lease.
    expect(await shared.forget(key, old)).toBe(false);
    expect(await shared.complete(key, "earlier-version", old, 86_400_000)).toBe(true);
    expect(await shared.forget(key, `${old} `)).toBe(false);
    expect(await shared.get(key)).toEqual({ state: "completed", result: old });
    let runs = 0;
    const redeem = async () => {
      runs++;
      return { Balance: "15.00", CurrencyCode: "USD" };
    };
    const { failures, onError } = collector();
    const handler = createRedeemGiftCardHandler(withIdempotency(redeem, { store: shared }), {
      auth: false,
      onError,
    });
    const body = JSON.stringify(payload);
    const first = await handler.handle(post(body));
    expect(first.status).toBe(200);
    expect(json(first)).toMatchObject({ Success: true, Balance: "15.00" });
    expect(runs).toBe(1);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ kind: "store_failure", severity: "warning" });
    expect(failures[0]?.reason).toMatch(/earlier version.*deleted.*runs the function/);
    // Recorded now: another instance answers the repeat without running it again, and quietly.
    const other = createRedeemGiftCardHandler(withIdempotency(redeem, { store: shared }), {
      auth: false,
      onError,
    });
    expect((await other.handle(post(body))).body).toBe(first.body);
    expect(runs).toBe(1);
    expect(failures).toHaveLength(1);
    expect(await shared.get(key)).toMatchObject({ state: "completed" });
  });

  // Review UPGRADE-1: a payment refused by returning `Success: false` with an `ErrorCode`, which an
  // earlier version answered 500 and recorded, was answered 200 `Success: true` (a declined
  // payment reported as paid) by today's code reading the record.
  it(`${name}: a payment recorded by an earlier version with its own Success: false is deleted and run again, never answered Success: true`, async () => {
    const shared = store();
    const payload = JSON.parse(payment());
    const context = { callback: "PerformOrderPayment", rawPayload: payload } as never;
    const derived = await defaultIdempotencyKey(payload, context);
    const key = await storedKey("PerformOrderPayment", derived as string);
    const old = `j${JSON.stringify({
      Success: false,
      ErrorCode: "CARD_DECLINED",
      InternalOrderId: "M-1",
      PaymentAmount: 10,
      PaymentCurrencyCode: "EUR",
    })}`;
    expect(await shared.claim(key, "earlier-version", 60_000)).toEqual({ claimed: true });
    expect(await shared.complete(key, "earlier-version", old, 86_400_000)).toBe(true);
    const { fn, count } = charges();
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(withIdempotency(fn, { store: shared }), {
      auth: false,
      onError,
    });
    const body = JSON.stringify(payload);
    const first = await handler.handle(post(body));
    expect(first.status).toBe(200);
    expect(json(first)).toMatchObject({ Success: true, InternalOrderId: `M-${payload.OrderId}` });
    expect(json(first)).not.toHaveProperty("ErrorCode");
    expect(count()).toBe(1);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.reason).toMatch(/earlier version.*deleted.*runs the function/);
    expect((await handler.handle(post(body))).body).toBe(first.body);
    expect(count()).toBe(1);
  });
}

/**
 * Second reader D1: a run past maxRunMs whose lease ran out, while another instance claimed the
 * key, ran the function and released the key (it threw). The store holds no row, so it takes the
 * late record; onError says the function may have run twice.
 */
function aLateRunPastMaxRunMs(name: string, store: () => IdempotencyStore) {
  it(`${name}: a run past maxRunMs recorded after another instance ran the function and released the key: onError says it may have run twice`, async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let runs = 0;
    const pay = async (order: PerformOrderPaymentRequest) => {
      const run = ++runs;
      if (run === 2) throw new Error("the provider is down");
      await gate;
      return {
        InternalOrderId: `M-${order.OrderId}`,
        PaymentAmount: 10,
        PaymentCurrencyCode: "EUR",
      };
    };
    const shared = store();
    const options = { store: shared, leaseMs: 600, waitMs: 200, maxRunMs: 800 };
    const { failures, onError } = collector();
    const one = createPerformOrderPaymentHandler(withIdempotency(pay, options), {
      auth: false,
      onError,
    });
    const other = createPerformOrderPaymentHandler(withIdempotency(pay, options), {
      auth: false,
      onError: () => undefined,
    });
    const body = payment();
    const first = one.handle(post(body));
    await new Promise((resolve) => setTimeout(resolve, 850));
    // The other instance claims once the lease ran out (503 until then), runs, throws: 500.
    let second = await other.handle(post(body));
    for (let i = 0; i < 100 && second.status === 503; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      second = await other.handle(post(body));
    }
    expect(second.status).toBe(500);
    expect(runs).toBe(2);
    open();
    expect((await first).status).toBe(200);
    const late = failures.filter((failure) => failure.reason?.includes("was recorded after"));
    expect(late).toHaveLength(1);
    expect(late[0]?.reason).toMatch(/maxRunMs \(800 ms\).*may have run twice$/);
    // Recorded: the next delivery to the other instance is answered without a third run.
    expect((await other.handle(post(body))).body).toBe((await first).body);
    expect(runs).toBe(2);
  });
}

/**
 * Review infra-5: instance A's path to the store is cut during the function (its calls wait, then
 * go through: a partition), its lease runs out, instance B runs the same delivery and records a
 * result whose text equals A's (a function that looks the order up returns the same both times).
 * A's record, written in the background, is refused: onError must say the function may have run
 * twice. Before, an equal text in the store was taken for A's own earlier write having landed.
 */
function aSecondRunWithAnEqualResultIsReported(name: string, store: () => IdempotencyStore) {
  for (const same of [true, false]) {
    it(`${name}: a second run on another instance recording ${same ? "the same" : "a different"} result text: onError says the function may have run twice`, async () => {
      const real = store();
      let until = 0;
      const gate = async () => {
        const wait = until - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      };
      const cut: IdempotencyStore = {
        claim: (...a) => gate().then(() => real.claim(...a)),
        get: (...a) => gate().then(() => real.get(...a)),
        complete: (...a) => gate().then(() => real.complete(...a)),
        renew: (...a) => gate().then(() => real.renew(...a)),
        release: (...a) => gate().then(() => real.release(...a)),
      };
      let runs = 0;
      const pay = async (order: PerformOrderPaymentRequest) => {
        const run = ++runs;
        if (run === 1) {
          until = Date.now() + 1_400;
          await new Promise((resolve) => setTimeout(resolve, 1_200));
        }
        return {
          InternalOrderId: same ? `M-${order.OrderId}` : `M-${order.OrderId}-${run}`,
          PaymentAmount: 10,
          PaymentCurrencyCode: "EUR",
        };
      };
      const options = { leaseMs: 600, storeTimeoutMs: 150, waitMs: 100 };
      const { failures, onError } = collector();
      const a = createPerformOrderPaymentHandler(withIdempotency(pay, { store: cut, ...options }), {
        auth: false,
        onError,
      });
      const b = createPerformOrderPaymentHandler(
        withIdempotency(pay, { store: real, ...options }),
        { auth: false, onError: () => undefined },
      );
      const body = payment();
      const first = a.handle(post(body));
      await new Promise((resolve) => setTimeout(resolve, 800));
      // A's lease ran out in the store (no renewal reached it): B claims and runs.
      expect((await b.handle(post(body))).status).toBe(200);
      expect((await first).status).toBe(200);
      expect(runs).toBe(2);
      await expect
        .poll(() => failures.map((failure) => failure.reason ?? ""), { timeout: 5_000 })
        .toContainEqual(expect.stringMatching(/claimed by another delivery.*may have run twice/));
    });
  }
}

describe("memory store", () => {
  aSecondRunWithAnEqualResultIsReported("memory", () => createMemoryIdempotencyStore());
});

describe("Redis (redis-server)", () => {
  let server: RedisServer;
  let nodeRedis: ReturnType<typeof createClient>;
  let ioredis: IoRedis;
  beforeAll(async () => {
    server = await startRedis();
    nodeRedis = createClient({ url: server.url });
    // Reconnection errors while the server is down are reported by the store, not thrown here.
    nodeRedis.on("error", () => undefined);
    await nodeRedis.connect();
    ioredis = new IoRedis(server.url, { maxRetriesPerRequest: 1 });
    ioredis.on("error", () => undefined);
  });
  afterAll(async () => {
    await nodeRedis?.close().catch(() => undefined);
    ioredis?.disconnect();
    await server?.close();
  });

  whenTheServerGoesDown(
    "redis client",
    () => server,
    () => createRedisIdempotencyStore(nodeRedis),
  );
  whenTheServerGoesDown(
    "ioredis client",
    () => server,
    () => createRedisIdempotencyStore(ioredis),
  );

  anUnusableResultIsNotRecorded("redis client", () => createRedisIdempotencyStore(nodeRedis));
  anOldRefusalRecordRunsAgain("redis client", () => createRedisIdempotencyStore(nodeRedis));
  anOldRefusalRecordRunsAgain("ioredis client", () => createRedisIdempotencyStore(ioredis));
  completesWhereNoRecordIsLive("redis client", () => createRedisIdempotencyStore(nodeRedis));
  aLateRunPastMaxRunMs("redis client", () => createRedisIdempotencyStore(nodeRedis));
  aSecondRunWithAnEqualResultIsReported("redis client", () =>
    createRedisIdempotencyStore(nodeRedis),
  );
  aSecondRunWithAnEqualResultIsReported("ioredis client", () =>
    createRedisIdempotencyStore(ioredis),
  );

  it("loads its scripts again after SCRIPT FLUSH (EVALSHA answered NOSCRIPT)", async () => {
    const store = createRedisIdempotencyStore(nodeRedis);
    expect((await store.claim("flush-1", "a", 60_000)).claimed).toBe(true);
    await nodeRedis.sendCommand(["SCRIPT", "FLUSH"]);
    expect(await store.complete("flush-1", "a", "jdone", 60_000)).toBe(true);
    await ioredis.call("SCRIPT", "FLUSH");
    const io = createRedisIdempotencyStore(ioredis);
    expect(await io.get("flush-1")).toEqual({ state: "completed", result: "jdone" });
  });

  it("keeps keys under its prefix, expiring with the record", async () => {
    const store = createRedisIdempotencyStore(nodeRedis, {
      prefix: "shop-a:",
    });
    expect((await store.claim("k", "a", 60_000)).claimed).toBe(true);
    expect(await store.complete("k", "a", "jx", 90_000)).toBe(true);
    const ttl = Number(await nodeRedis.sendCommand(["PTTL", "shop-a:k"]));
    expect(ttl).toBeGreaterThan(80_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
  });

  it("reads back a record kept 'forever' (ttlMs Number.MAX_SAFE_INTEGER): its expiry is written without an exponent, the owner's digits after it", async () => {
    const store = createRedisIdempotencyStore(nodeRedis);
    const owner = "2f8c0e4a-0000-4000-8000-000000000001";
    expect((await store.claim("forever-1", owner, 60_000)).claimed).toBe(true);
    expect(await store.complete("forever-1", owner, "jkept", Number.MAX_SAFE_INTEGER)).toBe(true);
    const raw = String(
      await nodeRedis.sendCommand(["GET", "crossborder-callbacks:idempotency:forever-1"]),
    );
    expect(raw).toMatch(/^c:\d+\.\d+:jkept$/);
    expect(await store.get("forever-1")).toEqual({ state: "completed", result: "jkept" });
    // The same owner's write sent again (a client's resend) still counts as done.
    expect(await store.complete("forever-1", owner, "jkept", Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it("keeps no card data of a result quoting the card and the CVV in what Redis holds", async () => {
    const prefix = "card-data:";
    const body = payment();
    const { OrderId } = JSON.parse(body) as { OrderId: string };
    const charge = async (order: PerformOrderPaymentRequest) =>
      ({
        PaymentAmount: "10.00",
        PaymentCurrencyCode: "EUR",
        Message: `charged ${order.PaymentDetails?.CardNumber} with cvv ${order.PaymentDetails?.CVVNumber}`,
        Cvv: order.PaymentDetails?.CVVNumber,
      }) as PerformOrderPaymentResult;
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(charge, { store: createRedisIdempotencyStore(nodeRedis, { prefix }) }),
      { auth: false, onError: collector().onError },
    );
    expect((await handler.handle(post(body))).status).toBe(200);
    const held = String(await nodeRedis.get(`${prefix}PerformOrderPayment:${OrderId}`));
    // The record's header carries its expiry in milliseconds and its owner as digits, which may
    // hold "737": the CVV is looked for in the result the record keeps, not in the header.
    expect(held).toMatch(/^c:\d+\.\d+:j\{/);
    const kept = held.slice(held.indexOf(":j{") + 2);
    expect(JSON.parse(kept)).toEqual({
      PaymentAmount: "10.00",
      PaymentCurrencyCode: "EUR",
      Message: "charged ************1111 with cvv ***",
    });
    expect(kept).not.toMatch(/4111111111111111|737|Cvv/);
  });

  it("warns once per store, as a store_failure warning, when maxmemory-policy lets Redis evict its records; a client refused INFO changes nothing", async () => {
    const { failures, onError } = collector();
    const store = createRedisIdempotencyStore(nodeRedis);
    // The default of ElastiCache, Azure Cache for Redis and Memorystore: keys with an expiry go.
    await nodeRedis.configSet("maxmemory-policy", "volatile-lru");
    try {
      const handlers = [0, 1].map(() =>
        createPerformOrderPaymentHandler(withIdempotency(charges().fn, { store }), {
          auth: false,
          onError,
        }),
      );
      for (const handler of [...handlers, ...handlers]) {
        expect((await handler.handle(post(payment()))).status).toBe(200);
      }
      await expect.poll(() => failures.length).toBe(1);
      expect(failures[0]).toMatchObject({
        kind: "store_failure",
        status: 200,
        severity: "warning",
        callback: "PerformOrderPayment",
      });
      expect(failures[0]?.reason).toMatch(/maxmemory-policy is volatile-lru.*noeviction/);
      await expect(createRedisIdempotencyStore(ioredis).checkSetup()).resolves.toMatch(
        /volatile-lru/,
      );
    } finally {
      await nodeRedis.configSet("maxmemory-policy", "noeviction");
    }
    expect(await createRedisIdempotencyStore(nodeRedis).checkSetup()).toBeUndefined();
    expect(failures).toHaveLength(1);

    // A managed Redis that refuses INFO to this user: deliveries go on, nothing is reported.
    await nodeRedis.sendCommand([
      "ACL",
      "SETUSER",
      "no-info",
      "on",
      ">secret",
      "~*",
      "&*",
      "+@all",
      "-info",
    ]);
    const limited = createClient({ url: server.url, username: "no-info", password: "secret" });
    limited.on("error", () => undefined);
    await limited.connect();
    try {
      const refused = createRedisIdempotencyStore(limited);
      await expect(refused.checkSetup()).rejects.toThrow(/NOPERM|no permissions/i);
      const quiet = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { store: createRedisIdempotencyStore(limited) }),
        { auth: false, onError: quiet.onError },
      );
      expect((await handler.handle(post(payment()))).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(quiet.failures).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it("warns, as a store_failure warning, when Redis keeps no append-only file (a restart empties every live lease); quiet with appendonly yes", async () => {
    // The test server runs with appendonly yes: turned off here, as Redis's default is.
    await nodeRedis.configSet("appendonly", "no");
    try {
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { store: createRedisIdempotencyStore(nodeRedis) }),
        { auth: false, onError },
      );
      expect((await handler.handle(post(payment()))).status).toBe(200);
      await expect.poll(() => failures.length).toBe(1);
      expect(failures[0]).toMatchObject({
        kind: "store_failure",
        status: 200,
        severity: "warning",
      });
      expect(failures[0]?.reason).toMatch(/append-only file.*appendonly yes/);
      expect(failures[0]?.reason).toMatch(/runs it a second time/);
      await expect(createRedisIdempotencyStore(ioredis).checkSetup()).resolves.toMatch(
        /appendonly yes/,
      );
      // RDB snapshots alone keep no lease: what was written since the last one is lost.
      await nodeRedis.configSet("save", "60 1");
      await expect(createRedisIdempotencyStore(nodeRedis).checkSetup()).resolves.toMatch(
        /appendonly yes/,
      );
    } finally {
      await nodeRedis.configSet("save", "");
      await nodeRedis.configSet("appendonly", "yes");
    }
    await expect
      .poll(async () => String(await nodeRedis.info("persistence")))
      .toMatch(/aof_enabled:1/);
    expect(await createRedisIdempotencyStore(nodeRedis).checkSetup()).toBeUndefined();
  });

  it("checks the eviction policy of a server whose ACL refuses INFO persistence, and the append-only file of one refusing INFO memory", async () => {
    await nodeRedis.configSet("maxmemory-policy", "allkeys-lru");
    await nodeRedis.configSet("appendonly", "no");
    const users: [string, string, RegExp, RegExp][] = [
      ["info-memory", "+info|memory", /maxmemory-policy is allkeys-lru/, /append-only/],
      ["info-persistence", "+info|persistence", /append-only/, /maxmemory-policy/],
    ];
    try {
      for (const [user, allowed, found, unseen] of users) {
        await nodeRedis.sendCommand([
          "ACL",
          "SETUSER",
          user,
          "on",
          ">secret",
          "~*",
          "&*",
          "+@all",
          "-info",
          allowed,
        ]);
        const limited = createClient({ url: server.url, username: user, password: "secret" });
        limited.on("error", () => undefined);
        await limited.connect();
        try {
          const problem = await createRedisIdempotencyStore(limited).checkSetup();
          expect(problem, user).toMatch(found);
          expect(problem, user).not.toMatch(unseen);
        } finally {
          await limited.close();
        }
      }
    } finally {
      await nodeRedis.configSet("maxmemory-policy", "noeviction");
      await nodeRedis.configSet("appendonly", "yes");
    }
  });

  it("review infra-3: an ACL user missing a command the scripts run is refused with the ACL line the store needs; a user with exactly that line is served", async () => {
    const prefix = "crossborder-callbacks:idempotency:";
    const line = (
      /ACL SETUSER <user> (\S+(?: \+[a-z]+)+)/.exec(
        await (async () => {
          // The natural line for a scripting client: TIME (category @fast only) is missing.
          await nodeRedis.sendCommand(
            ["ACL", "SETUSER", "acl-natural", "on", ">secret", `~${prefix}*`].concat([
              "+@read",
              "+@write",
              "+@scripting",
              "+@connection",
            ]),
          );
          const natural = createClient({
            url: server.url,
            username: "acl-natural",
            password: "secret",
          });
          natural.on("error", () => undefined);
          await natural.connect();
          try {
            const error = await Promise.resolve(
              createRedisIdempotencyStore(natural).claim("acl-1", "o", 60_000),
            ).then(
              () => new Error("claimed"),
              (refused: Error) => refused,
            );
            expect(error.message).toMatch(
              /can't run this command.*: the client's ACL user may not run a command, or touch a key, that the store needs: .*TIME.*ACL SETUSER <user> ~crossborder-callbacks:idempotency:\* \+evalsha \+eval \+time/,
            );
            return error.message;
          } finally {
            await natural.close();
          }
        })(),
      )?.[1] ?? ""
    ).split(" ");
    // The documented line, and nothing else: every operation and the setup check work.
    await nodeRedis.sendCommand(["ACL", "SETUSER", "acl-exact", "on", ">secret", ...line]);
    const exact = createClient({ url: server.url, username: "acl-exact", password: "secret" });
    exact.on("error", () => undefined);
    await exact.connect();
    try {
      const store = createRedisIdempotencyStore(exact);
      expect(await store.claim("acl-2", "o", 60_000)).toEqual({ claimed: true });
      expect(await store.renew("acl-2", "o", 60_000)).toBe(true);
      expect(await store.complete("acl-2", "o", "jr", 60_000)).toBe(true);
      expect(await store.get("acl-2")).toEqual({ state: "completed", result: "jr" });
      expect(await store.forget("acl-2", "jr")).toBe(true);
      expect(await store.claim("acl-3", "o", 60_000)).toEqual({ claimed: true });
      expect(await store.release("acl-3", "o")).toBe(true);
      expect(await store.checkSetup()).toBeUndefined();
    } finally {
      await exact.close();
    }
  });

  /**
   * One function behind two instances sharing `store`: its first run restarts `restart` (a 0.3 s
   * outage, far shorter than leaseMs) and has the service redeliver to the other instance meanwhile.
   */
  async function restartDuringTheRun(
    restart: RedisServer,
    store: IdempotencyStore,
    onError: (failure: CallbackFailure) => void,
  ) {
    let runs = 0;
    let redelivered: { status: number; body: string } | undefined;
    const body = payment();
    const fn = async (_order: PerformOrderPaymentRequest) => {
      if (++runs === 1) {
        await restart.stop();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await restart.start();
        await reachable(store);
        redelivered = await other.handle(post(body));
      }
      return { InternalOrderId: `M-${runs}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
    };
    const other = createPerformOrderPaymentHandler(withIdempotency(fn, { store, waitMs: 500 }), {
      auth: false,
      onError: () => undefined,
    });
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, leaseMs: 30_000 }),
      { auth: false, onError },
    );
    const first = await handler.handle(post(body));
    return { first, redelivered, runs, repeat: () => other.handle(post(body)) };
  }

  it("a restart without an append-only file empties the running delivery's lease: the redelivery runs again, and onError says the store lost the lease, not to raise leaseMs", async () => {
    const bare = await startRedis({ appendOnly: false });
    const client = createClient({ url: bare.url });
    client.on("error", () => undefined);
    await client.connect();
    try {
      const { failures, onError } = collector();
      const store = createRedisIdempotencyStore(client);
      const { first, redelivered, runs } = await restartDuringTheRun(bare, store, onError);
      expect(first.status).toBe(200);
      // The documented limit: the lease is gone, so the redelivery ran the function a second time.
      expect(redelivered?.status).toBe(200);
      expect(runs).toBe(2);
      await expect.poll(() => failures.filter((f) => /run twice/.test(f.reason)).length).toBe(1);
      const lost = failures.find((failure) => /run twice/.test(failure.reason));
      expect(lost?.reason).toMatch(/lost the lease.*restarted.*evicted.*failed over/);
      expect(lost?.reason).not.toMatch(/raise leaseMs/);
    } finally {
      await client.close().catch(() => undefined);
      await bare.close();
    }
  });

  it("a restart with the append-only file keeps the running delivery's lease: the redelivery waits and is answered 503, one run", async () => {
    const { failures, onError } = collector();
    const store = createRedisIdempotencyStore(nodeRedis);
    const { first, redelivered, runs, repeat } = await restartDuringTheRun(server, store, onError);
    expect(first.status).toBe(200);
    expect(redelivered?.status).toBe(503);
    expect(redelivered?.body).toMatch(/DELIVERY_IN_PROGRESS/);
    expect(runs).toBe(1);
    expect(failures.filter((failure) => /twice|lost/.test(failure.reason))).toEqual([]);
    expect((await repeat()).body).toBe(first.body);
  });

  /**
   * Instance A reaches Redis through `link` after its claim; instance B directly. A's function
   * runs `runMs`; `during` runs 10 ms into it. Returns A's reports and the runs.
   */
  async function overALink(
    link: (store: IdempotencyStore) => IdempotencyStore,
    runMs: number,
    during: (body: string) => Promise<void>,
  ) {
    const direct = createRedisIdempotencyStore(nodeRedis);
    const { failures, onError } = collector();
    let runs = 0;
    const body = payment();
    const fn = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, runMs));
      return { InternalOrderId: `M-${runs}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
    };
    const a = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: link(direct), leaseMs: 300, storeTimeoutMs: 2_000 }),
      { auth: false, onError },
    );
    const first = a.handle(post(body));
    await new Promise((resolve) => setTimeout(resolve, 10));
    await during(body);
    expect((await first).status).toBe(200);
    return { failures, runs: () => runs };
  }

  it("a record sent before leaseMs ran out but landing after it (a slow link): onError says to keep the store reachable or raise leaseMs, not that the store lost the lease", async () => {
    // Every call after A's claim takes 800 ms to reach Redis: the first renewal lands after the
    // lease ran out, the record write (sent about 50 ms after the claim) 800 ms later, after B
    // claimed. B claims once A's lease is seen gone from Redis (not after a fixed time, which a
    // slow claim on a loaded machine would outlast): 300 ms after A's claim, 500 ms before A's
    // record lands.
    const slow = (store: IdempotencyStore): IdempotencyStore => {
      const late =
        <T extends unknown[], R>(call: (...args: T) => R) =>
        async (...args: T): Promise<Awaited<R>> => {
          await new Promise((resolve) => setTimeout(resolve, 800));
          return await call(...args);
        };
      return {
        ...store,
        renew: late(store.renew),
        complete: late(store.complete),
        release: late(store.release),
      };
    };
    let second: { status: number } | undefined;
    const { failures, runs } = await overALink(slow, 50, async (body) => {
      const { OrderId } = JSON.parse(body) as { OrderId: string };
      const key = `crossborder-callbacks:idempotency:PerformOrderPayment:${OrderId}`;
      await expect.poll(() => nodeRedis.exists(key), { timeout: 5_000, interval: 5 }).toBe(1);
      await expect.poll(() => nodeRedis.exists(key), { timeout: 5_000, interval: 5 }).toBe(0);
      const b = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { store: createRedisIdempotencyStore(nodeRedis) }),
        { auth: false, onError: () => undefined },
      );
      second = await b.handle(post(body));
    });
    expect(second?.status).toBe(200);
    expect(runs()).toBe(1);
    await expect.poll(() => failures.filter((f) => /run twice/.test(f.reason)).length).toBe(1);
    const taken = failures.find((failure) => /run twice/.test(failure.reason));
    expect(taken?.reason).toMatch(/lease expired.*keep the store reachable.*raise leaseMs/);
    expect(taken?.reason).not.toMatch(/store lost the lease/);
  });

  it("a lease lost after a renewal failed: onError says to keep the store reachable or raise leaseMs, not that the store lost the lease", async () => {
    // A's renewals fail (the store unreachable from A); the lease is gone from Redis before
    // leaseMs passed, B runs, and A's record is refused at once.
    const unreachable = (store: IdempotencyStore): IdempotencyStore => ({
      ...store,
      renew: async () => {
        throw new Error("connect ETIMEDOUT");
      },
    });
    const { failures, runs } = await overALink(unreachable, 250, async (body) => {
      await new Promise((resolve) => setTimeout(resolve, 120));
      const [key] = await nodeRedis.keys(`*${JSON.parse(body).OrderId}*`);
      expect(key).toBeDefined();
      await nodeRedis.del(key as string);
      const b = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { store: createRedisIdempotencyStore(nodeRedis) }),
        { auth: false, onError: () => undefined },
      );
      expect((await b.handle(post(body))).status).toBe(200);
    });
    expect(runs()).toBe(1);
    expect(failures.map((failure) => failure.reason)).toEqual([
      expect.stringContaining("could not renew the lease"),
      expect.stringMatching(/run twice.*keep the store reachable.*raise leaseMs/),
    ]);
    expect(failures[1]?.reason).not.toMatch(/store lost the lease/);
  });

  it("releases a claim that lands after its delivery was refused: the service's retry once Redis is back runs at once", async () => {
    const { fn, count } = charges();
    const { failures, onError } = collector();
    const store = createRedisIdempotencyStore(nodeRedis);
    const handler = createPerformOrderPaymentHandler(
      // 1.5 s: the claim sent while Redis is down times out; the retry's store calls must not
      // (at 500 ms, one did under a load of 9, reported as a store_failure).
      withIdempotency(fn, { store, storeTimeoutMs: 1_500, waitMs: 1_000, leaseMs: 6_000 }),
      { auth: false, onError },
    );
    const body = payment();
    await server.stop();
    try {
      // node-redis queues the claim while disconnected, and sends it once it reconnects.
      expect((await handler.handle(post(body))).status).toBe(500);
    } finally {
      await server.start();
    }
    await reachable(store);
    const { OrderId } = JSON.parse(body) as { OrderId: string };
    const key = `crossborder-callbacks:idempotency:PerformOrderPayment:${OrderId}`;
    await expect.poll(() => nodeRedis.get(key)).toBeNull();
    const retry = await handler.handle(post(body));
    expect(retry.status).toBe(200);
    expect(count()).toBe(1);
    const reasons = failures.map((failure) => failure.reason).join("\n");
    expect(
      failures.map((failure) => failure.kind),
      reasons,
    ).toEqual(["internal_error"]);
  });

  it("sends one renewal and one record at a time while Redis is down, not one per tick queued for the reconnect", async () => {
    const { fn, count } = charges(() => server.stop());
    const store = createRedisIdempotencyStore(nodeRedis);
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, storeTimeoutMs: 200, leaseMs: 600 }),
      { auth: false, onError: collector().onError },
    );
    const body = payment();
    try {
      expect((await handler.handle(post(body))).status).toBe(200);
      // Down for ten leases: a renewal every 200 ms, a record retry every 100-200 ms.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
    } finally {
      await server.start();
    }
    // A new, empty server: what reaches it was queued in the client during the outage.
    const other = createPerformOrderPaymentHandler(
      withIdempotency(charges().fn, { store: createRedisIdempotencyStore(ioredis) }),
      { auth: false, onError: collector().onError },
    );
    await expect
      .poll(async () => (await other.handle(post(body))).status, { timeout: 15_000 })
      .toBe(200);
    expect(count()).toBe(1);
    // Each call queued in the client during the outage reached the new server as an EVALSHA
    // answered NOSCRIPT (one or two more come from the reconnected client loading its scripts).
    const errors = String(await nodeRedis.sendCommand(["INFO", "errorstats"]));
    expect(Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(errors)?.[1] ?? 0)).toBeLessThanOrEqual(6);
  }, 30_000);

  it("refuses every delivery of a record it cannot read back, naming the key in onError", async () => {
    const prefix = "unreadable:";
    await anUnreadableRecordIsNamed(
      createRedisIdempotencyStore(nodeRedis, { prefix }),
      ["garbage", "c:notanumber:jx", "c:", "c:99999999999999:{not json", "c:99999999999999:x"],
      (orderId, value) => nodeRedis.set(`${prefix}PerformOrderPayment:${orderId}`, String(value)),
    );
  });

  /**
   * Another program's value of another Redis type under a record's key, or a lease (`r:…`) it
   * wrote without an expiry (or whose expiry a PERSIST removed): unreadable, as a string the
   * store cannot parse. Before, a hash or a list made the scripts' GET fail with WRONGTYPE, a
   * store outage to withIdempotency, so with failOpen the function ran on every delivery; the
   * lease without expiry was read as live with 0 ms left, every delivery answered 503 forever.
   */
  const otherValues = [
    ["a hash", ["HSET", "·", "a", "b"]],
    ["a list", ["RPUSH", "·", "x"]],
    ["a set", ["SADD", "·", "x"]],
    ["a sorted set", ["ZADD", "·", "1", "x"]],
    ["a stream", ["XADD", "·", "*", "a", "b"]],
    ["a lease without expiry", ["SET", "·", "r:another-program"]],
  ] as const;
  /** Runs `command` with `key` in the place of its "·", through either client. */
  const clients = [
    [
      "redis client",
      () => nodeRedis as RedisLikeClient,
      (command: readonly string[]) => nodeRedis.sendCommand([...command]),
    ],
    [
      "ioredis client",
      () => ioredis as RedisLikeClient,
      ([name, ...args]: readonly string[]) => ioredis.call(name as string, ...args),
    ],
  ] as const;
  const withKey = (command: readonly string[], key: string) =>
    command.map((part) => (part === "·" ? key : part));

  for (const [name, client, send] of clients) {
    it(`${name}: refuses every delivery of a value of another type, or of a lease without expiry, naming the key in onError`, async () => {
      const prefix = `other-type:${name}:`;
      await anUnreadableRecordIsNamed(
        createRedisIdempotencyStore(client(), { prefix }),
        otherValues.map(([, command]) => command),
        (orderId, command) => send(withKey(command, `${prefix}PerformOrderPayment:${orderId}`)),
      );
    }, 30_000);

    it(`${name}: every script meets a value of another type as a string it cannot parse: claim, get and complete refuse it by name, renew and release answer false; the value is left`, async () => {
      const store = createRedisIdempotencyStore(client(), { prefix: `other-type-ops:${name}:` });
      for (const [label, command] of otherValues.slice(0, 5)) {
        const key = `k-${label.replace(/ /g, "-")}`;
        const full = `other-type-ops:${name}:${key}`;
        await send(withKey(command, full));
        const type = String(await send(["TYPE", full]));
        const unreadable = new RegExp(`^ERR unreadable idempotency record under ${full}: `);
        const operations: (() => unknown)[] = [
          () => store.claim(key, "o", 60_000),
          () => store.get(key),
          () => store.complete(key, "o", "jx", 60_000),
        ];
        for (const operation of operations) {
          const error = await (async () => operation())().then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
          expect(error, label).toMatchObject({ name: "UnreadableRecordError" });
          expect(String((error as Error).message), label).toMatch(unreadable);
        }
        expect(await store.renew(key, "o", 60_000), label).toBe(false);
        expect(await store.release(key, "o"), label).toBe(false);
        expect(String(await send(["TYPE", full])), label).toBe(type);
      }
      // A key that is not there at all (TYPE none) is as before: claimed, read, completed.
      expect(await store.get("absent")).toBeUndefined();
      expect(await store.claim("absent", "o", 60_000)).toEqual({ claimed: true });
      expect(await store.complete("absent", "o", "jdone", 60_000)).toBe(true);
      expect(await store.get("absent")).toEqual({ state: "completed", result: "jdone" });
    });

    it(`${name}: a lease without expiry is unreadable to others; its own owner still renews (giving it back an expiry), completes or releases it`, async () => {
      const prefix = `persisted:${name}:`;
      const store = createRedisIdempotencyStore(client(), { prefix });
      for (const key of ["renewed", "completed", "released"]) {
        expect(await store.claim(key, "owner", 60_000)).toEqual({ claimed: true });
        // A PERSIST (by hand, or a tool's) takes the lease's expiry away.
        expect(Number(await send(["PERSIST", `${prefix}${key}`]))).toBe(1);
        await expect(store.claim(key, "other", 60_000)).rejects.toThrow(
          `unreadable idempotency record under ${prefix}${key}: `,
        );
        await expect(store.get(key)).rejects.toMatchObject({ name: "UnreadableRecordError" });
      }
      expect(await store.renew("renewed", "owner", 60_000)).toBe(true);
      expect(Number(await send(["PTTL", `${prefix}renewed`]))).toBeGreaterThan(50_000);
      expect(await store.get("renewed")).toMatchObject({ state: "running" });
      expect(await store.complete("completed", "owner", "jdone", 60_000)).toBe(true);
      expect(await store.get("completed")).toEqual({ state: "completed", result: "jdone" });
      expect(await store.release("released", "owner")).toBe(true);
      expect(await store.claim("released", "next", 60_000)).toEqual({ claimed: true });
    });
  }

  it("refuses something that is not a Redis client", () => {
    expect(() => createRedisIdempotencyStore({} as never)).toThrow(TypeError);
  });
});

describe("PostgreSQL (initdb + postgres)", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 20, connectionTimeoutMillis: 1_000 });
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });

  whenTheServerGoesDown(
    "pg pool",
    () => server,
    () => createPostgresIdempotencyStore(pool),
  );

  anUnusableResultIsNotRecorded("pg pool", () => createPostgresIdempotencyStore(pool));
  anOldRefusalRecordRunsAgain("pg pool", () => createPostgresIdempotencyStore(pool));
  completesWhereNoRecordIsLive("pg pool", () => createPostgresIdempotencyStore(pool));
  aLateRunPastMaxRunMs("pg pool", () => createPostgresIdempotencyStore(pool));
  aSecondRunWithAnEqualResultIsReported("pg pool", () => createPostgresIdempotencyStore(pool));

  it("refuses every delivery of a row it cannot read back, naming the key in onError", async () => {
    const store = createPostgresIdempotencyStore(pool);
    await store.ready();
    await anUnreadableRecordIsNamed(store, [null, "jnot json", "x", ""], (orderId, value) =>
      pool.query(
        "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ($1, NULL, $2, now() + interval '1 day')",
        [`PerformOrderPayment:${orderId}`, value],
      ),
    );
  });

  /**
   * A row whose expires_at is 'infinity' (timestamptz holds it; another program wrote it, or a
   * hand's UPDATE): before, every read failed with "cannot subtract infinite timestamps", a store
   * outage to withIdempotency, so with failOpen the function ran on every delivery. A lease that
   * never ends is unreadable, as Redis's lease without expiry; a record that never expires is a
   * record, answered.
   */
  it("refuses every delivery of a row whose lease never ends (expires_at infinity), naming the key in onError", async () => {
    const store = createPostgresIdempotencyStore(pool);
    await store.ready();
    await anUnreadableRecordIsNamed(store, ["infinity"], (orderId, value) =>
      pool.query(
        "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ($1, 'another-program', NULL, $2)",
        [`PerformOrderPayment:${orderId}`, value],
      ),
    );
    await pool.query(
      "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ('endless', 'another-program', NULL, 'infinity')",
    );
    await expect(store.claim("endless", "o", 60_000)).rejects.toThrow(
      /^unreadable idempotency record under endless in "crossborder_idempotency": /,
    );
    await expect(store.get("endless")).rejects.toMatchObject({ name: "UnreadableRecordError" });
  });

  it("answers a record that never expires (expires_at infinity) with its result, the function not run; the owner of a lease that never ends still renews or completes it", async () => {
    const store = createPostgresIdempotencyStore(pool);
    await store.ready();
    const { fn, count } = charges();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, failOpen: true }),
      {
        auth: false,
      },
    );
    const body = payment();
    const { OrderId } = JSON.parse(body) as { OrderId: string };
    const result = { InternalOrderId: "M-kept", PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
    await pool.query(
      "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ($1, NULL, $2, 'infinity')",
      [`PerformOrderPayment:${OrderId}`, `j${JSON.stringify(result)}`],
    );
    const answer = await handler.handle(post(body));
    expect(answer.status).toBe(200);
    expect(json(answer)).toMatchObject({ Success: true, InternalOrderId: "M-kept" });
    expect(count()).toBe(0);
    for (const key of ["endless-renewed", "endless-completed"]) {
      await pool.query(
        "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ($1, 'owner', NULL, 'infinity')",
        [key],
      );
    }
    expect(await store.renew("endless-renewed", "owner", 60_000)).toBe(true);
    expect(await store.get("endless-renewed")).toMatchObject({ state: "running" });
    expect(await store.complete("endless-completed", "owner", "jdone", 60_000)).toBe(true);
    expect(await store.get("endless-completed")).toEqual({ state: "completed", result: "jdone" });
  });

  /**
   * Stops (SIGSTOP) the backend of the connection a pool of two hands out next, as a connection
   * that died silently: a query sent on it never settles, and the next goes through the other.
   */
  async function stopNextConnection(two: pg.Pool): Promise<() => void> {
    const client = await two.connect();
    const pid = Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
    // Released last, so handed out first (pg-pool takes its idle clients last in, first out).
    client.release();
    process.kill(pid, "SIGSTOP");
    return () => process.kill(pid, "SIGCONT");
  }

  it("renews through another connection while one renewal never settles: a repeat four leases later is answered 503, never run again", async () => {
    const two = new pg.Pool({ connectionString: server.url, max: 2 });
    two.on("error", () => undefined);
    const store = createPostgresIdempotencyStore(two);
    await store.ready();
    await Promise.all([two.query("SELECT 1"), two.query("SELECT 1")]);
    let resume = () => {};
    // The function runs 3 s: the repeat, sent at 2 s, gives up at 2.3 s while it still runs,
    // with room to spare on a loaded machine (at 2.4 s it had 0.1 s, less than a slow poll).
    const { fn, count } = charges(async () => {
      resume = await stopNextConnection(two);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    });
    const options = { store, leaseMs: 600, storeTimeoutMs: 200, waitMs: 300 };
    const body = payment();
    try {
      const first = createPerformOrderPaymentHandler(withIdempotency(fn, options), {
        auth: false,
        onError: collector().onError,
      }).handle(post(body));
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const other = createPerformOrderPaymentHandler(
        withIdempotency(charges().fn, { ...options, store: createPostgresIdempotencyStore(pool) }),
        { auth: false, onError: collector().onError },
      );
      const repeat = await other.handle(post(body));
      expect(repeat.status).toBe(503);
      expect(json(repeat)).toMatchObject({ ErrorCode: "DELIVERY_IN_PROGRESS" });
      expect((await first).status).toBe(200);
      expect(count()).toBe(1);
    } finally {
      resume();
      await two.end();
    }
  }, 15_000);

  it("records through another connection while one record write never settles", async () => {
    const two = new pg.Pool({ connectionString: server.url, max: 2 });
    two.on("error", () => undefined);
    const store = createPostgresIdempotencyStore(two);
    await store.ready();
    await Promise.all([two.query("SELECT 1"), two.query("SELECT 1")]);
    let resume = () => {};
    // Stopped as the function returns: the record write is the next query.
    const { fn, count } = charges(async () => {
      resume = await stopNextConnection(two);
    });
    const { failures, onError } = collector();
    const body = payment();
    try {
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(fn, { store, leaseMs: 900, storeTimeoutMs: 200 }),
        { auth: false, onError },
      );
      const first = await handler.handle(post(body));
      expect(first.status).toBe(200);
      const { OrderId } = JSON.parse(body) as { OrderId: string };
      const reader = createPostgresIdempotencyStore(pool);
      await expect
        .poll(() => reader.get(`PerformOrderPayment:${OrderId}`), { timeout: 5_000 })
        .toMatchObject({ state: "completed" });
      expect(count()).toBe(1);
      expect(failures.map((failure) => failure.reason)).toEqual([
        expect.stringContaining("could not record the result"),
        // Then said to be recorded after all (review ssls2-3).
        expect.stringContaining("was recorded after all"),
      ]);
    } finally {
      resume();
      await two.end();
    }
  }, 15_000);

  it("creates its table once when ten instances start at the same moment", async () => {
    const stores = Array.from({ length: 10 }, () =>
      createPostgresIdempotencyStore(pool, { table: "raced_idempotency" }),
    );
    await Promise.all(stores.map((store) => store.ready()));
    const claims = await Promise.all(
      stores.map((store, i) => store.claim("k", `owner-${i}`, 60_000)),
    );
    expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
  });

  it("tries to create its table again after a failed attempt (the database back): not failing for good", async () => {
    let calls = 0;
    const flaky = {
      query: (text: string, values?: unknown[]) =>
        calls++ === 0
          ? Promise.reject(
              Object.assign(new Error("the database is starting up"), { code: "57P03" }),
            )
          : pool.query(text, values),
    };
    const store = createPostgresIdempotencyStore(flaky, { table: "retried_idempotency" });
    await expect(store.claim("k", "o", 60_000)).rejects.toThrow(/starting up/);
    expect(await store.claim("k", "o", 60_000)).toEqual({ claimed: true });
    expect(await store.complete("k", "o", "jr", 60_000)).toBe(true);
    expect(await store.get("k")).toEqual({ state: "completed", result: "jr" });
  });

  it("deletes expired rows, and only those", async () => {
    const store = createPostgresIdempotencyStore(pool, { table: "expiring_idempotency" });
    for (const [key, ttl] of [
      ["old-1", 1],
      ["old-2", 1],
      ["live", 60_000],
    ] as const) {
      await store.claim(key, "o", 60_000);
      await store.complete(key, "o", "jr", ttl);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Each record and, beside it, the row naming who wrote it (review infra-5).
    expect(await store.deleteExpired()).toBe(4);
    const { rows } = await pool.query("SELECT key FROM expiring_idempotency ORDER BY key");
    expect(rows).toEqual([{ key: "live" }, { key: "live\no" }]);
  });

  /**
   * The pool, counting the cleanup's DELETE statements: how many were sent, how many run at once
   * at most, and how many run now.
   */
  function countingDeletes(): {
    queryable: PgLikeQueryable;
    deletes: { sent: number; running: number; mostAtOnce: number };
  } {
    const deletes = { sent: 0, running: 0, mostAtOnce: 0 };
    return {
      deletes,
      queryable: {
        async query(text, values) {
          if (!text.startsWith("DELETE FROM") || !text.includes("LIMIT")) {
            return pool.query(text, values);
          }
          deletes.sent++;
          deletes.running++;
          deletes.mostAtOnce = Math.max(deletes.mostAtOnce, deletes.running);
          try {
            return await pool.query(text, values);
          } finally {
            deletes.running--;
          }
        },
      },
    };
  }

  async function expiredRows(table: string, count: number): Promise<void> {
    await pool.query(
      `INSERT INTO ${table} (key, owner, result, expires_at)
SELECT 'old-' || g, NULL, 'jr', clock_timestamp() - interval '1 second' FROM generate_series(1, $1::int) g`,
      [count],
    );
  }

  async function countExpired(table: string): Promise<number> {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE expires_at <= clock_timestamp()`,
    );
    return Number(rows[0]?.n);
  }

  // Review soak-1: one run deleted 1,000 rows at most, once per cleanupIntervalMs (10 minutes):
  // 144,000 rows a day, so above that many deliveries the table grew by the difference, for good.
  it("its background cleanup goes on while a batch comes back full, one run at a time: 2,500 expired rows gone in one run (1,000 were before)", async () => {
    const table = "cleanup_batches_idempotency";
    const { queryable, deletes } = countingDeletes();
    const store = createPostgresIdempotencyStore(queryable, { table, cleanupIntervalMs: 1 });
    await store.ready();
    await expiredRows(table, 2_500);
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Claims during the run (its interval passed for each) start no second run beside it.
    for (let i = 0; i < 20 && (deletes.sent === 0 || deletes.running > 0); i++) {
      expect((await store.claim(`new-${i}`, "o", 60_000)).claimed).toBe(true);
    }
    await expect.poll(() => countExpired(table), { timeout: 10_000, interval: 50 }).toBe(0);
    await expect.poll(() => deletes.running, { timeout: 5_000, interval: 10 }).toBe(0);
    expect(deletes.mostAtOnce).toBe(1);
    // The live rows stay.
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    expect(Number(rows[0]?.n)).toBe(await liveCount(table));
  });

  async function liveCount(table: string): Promise<number> {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE expires_at > clock_timestamp()`,
    );
    return Number(rows[0]?.n);
  }

  it("a cleanup run stops after 100 batches of 1,000 (100,000 rows), so that it holds the database only so long; the next run deletes the rest", async () => {
    const table = "cleanup_bound_idempotency";
    const { queryable, deletes } = countingDeletes();
    const store = createPostgresIdempotencyStore(queryable, { table, cleanupIntervalMs: 200 });
    await store.ready();
    await expiredRows(table, 100_500);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await store.claim("first", "o", 60_000);
    await expect.poll(() => deletes.sent, { timeout: 60_000, interval: 50 }).toBe(100);
    await expect.poll(() => deletes.running, { timeout: 5_000, interval: 10 }).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(deletes.sent).toBe(100);
    expect(await countExpired(table)).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await store.claim("second", "o", 60_000);
    await expect.poll(() => countExpired(table), { timeout: 10_000, interval: 50 }).toBe(0);
    expect(deletes.sent).toBe(101);
  }, 90_000);

  it("never deletes a row that a claim took over while the cleanup waited for it", async () => {
    const options = { table: "cleanup_race_idempotency" } as const;
    const store = createPostgresIdempotencyStore(pool, options);
    expect((await store.claim("k", "crashed", 1)).claimed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A second instance takes the expired lease over, in a transaction held open meanwhile.
    const client = await pool.connect();
    let cleanup: Promise<number> | undefined;
    try {
      await client.query("BEGIN");
      const claimer = createPostgresIdempotencyStore(client, { ...options, createTable: false });
      expect((await claimer.claim("k", "next", 60_000)).claimed).toBe(true);
      // The cleanup's snapshot still sees the row expired; its DELETE waits for the row's lock.
      cleanup = store.deleteExpired();
      await expect
        .poll(
          async () =>
            (
              await pool.query(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM%cleanup_race%'",
              )
            ).rows[0]?.n,
          { timeout: 5_000, interval: 20 },
        )
        .toBe(1);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await cleanup).toBe(0);
    expect(await store.get("k")).toMatchObject({ state: "running" });
    expect((await store.claim("k", "third", 60_000)).claimed).toBe(false);
  });

  it("refuses table names PostgreSQL cannot hold, and something that is not a pool", async () => {
    expect(() => createPostgresIdempotencyStore(pool, { table: "" })).toThrow(TypeError);
    expect(() => createPostgresIdempotencyStore(pool, { table: "x".repeat(64) })).toThrow(
      RangeError,
    );
    // 63 bytes, not characters: 40 "é" are 80 bytes, which PostgreSQL would cut.
    expect(() => createPostgresIdempotencyStore(pool, { table: "é".repeat(40) })).toThrow(
      RangeError,
    );
    // 62 bytes: held by PostgreSQL, so served (found by this test: its index's name, the first 40
    // characters and a suffix, took 77 bytes and the store refused the table at construction).
    const wide = createPostgresIdempotencyStore(pool, { table: "é".repeat(31) });
    expect(await wide.claim("k", "o", 60_000)).toEqual({ claimed: true });
    expect(() => createPostgresIdempotencyStore(pool, { schema: "a\u0000b" })).toThrow(TypeError);
    expect(() => createPostgresIdempotencyStore({} as never)).toThrow(TypeError);
  });
});
