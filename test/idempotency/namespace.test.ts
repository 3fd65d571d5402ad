// Review tenancy-1: several shops (or test and production) on one store. The default keys hold no
// shop: the `namespace` option of withIdempotency puts one in front of every key, default and custom.
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import {
  createMemoryIdempotencyStore,
  createPerformOrderPaymentHandler,
  createUpdateOrderStatusHandler,
  type IdempotencyStore,
  withIdempotency,
} from "../../src/index.js";
import { json, post } from "../core/helpers.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";
import { paymentFor } from "./support/payment.js";

let sequence = 0;
function orderId(): string {
  return `GE-NS-${Date.now()}-${++sequence}`;
}

/** Two shops, each with its namespace, on one store: the same order id in both runs in both. */
function twoShops(name: string, store: () => IdempotencyStore) {
  it(`${name}: two shops with different namespaces never share a record`, async () => {
    const ran: string[] = [];
    const shop = (shopName: string, amount: number) => ({
      pay: createPerformOrderPaymentHandler(
        withIdempotency(
          async (order) => {
            ran.push(`${shopName} pay ${order.OrderId}`);
            return {
              InternalOrderId: `${shopName}-1`,
              PaymentAmount: amount,
              PaymentCurrencyCode: "EUR",
            };
          },
          { store: store(), namespace: shopName },
        ),
        { auth: false },
      ),
      status: createUpdateOrderStatusHandler(
        withIdempotency(
          async (update) => {
            ran.push(`${shopName} status ${update.OrderId} ${update.StatusCode}`);
            return { InternalOrderId: `${shopName}-1` };
          },
          { store: store(), namespace: shopName, key: (update) => update.OrderId },
        ),
        { auth: false },
      ),
    });
    const a = shop("shopA", 100);
    const b = shop("shopB", 7);
    const id = orderId();
    const payment = paymentFor(id);
    const paidA = await a.pay.handle(post(payment));
    const paidB = await b.pay.handle(post(payment));
    expect(paidA.status).toBe(200);
    expect(paidB.status).toBe(200);
    expect(json(paidB)).toMatchObject({ InternalOrderId: "shopB-1", PaymentAmount: "7" });
    // A repeat within each shop is still answered from that shop's own record.
    expect((await b.pay.handle(post(payment))).body).toBe(paidB.body);
    expect((await a.pay.handle(post(payment))).body).toBe(paidA.body);
    const cancel = JSON.stringify({ OrderId: id, StatusCode: "canceled" });
    expect((await a.status.handle(post(cancel))).status).toBe(200);
    expect((await b.status.handle(post(cancel))).status).toBe(200);
    expect(ran).toEqual([
      `shopA pay ${id}`,
      `shopB pay ${id}`,
      `shopA status ${id} canceled`,
      `shopB status ${id} canceled`,
    ]);
  });
}

describe("namespace", () => {
  twoShops(
    "memory",
    (() => {
      const shared = createMemoryIdempotencyStore();
      return () => shared;
    })(),
  );

  it("is put in front of the stored key; without it the key is what it always was", async () => {
    const keys: string[] = [];
    const memory = createMemoryIdempotencyStore();
    const store: IdempotencyStore = {
      claim: (key, ...rest) => {
        keys.push(key);
        return memory.claim(key, ...rest);
      },
      get: (key) => memory.get(key),
      complete: (...args) => memory.complete(...args),
      renew: (...args) => memory.renew(...args),
      release: (...args) => memory.release(...args),
    };
    const pay = async () => ({
      InternalOrderId: "M-1",
      PaymentAmount: 1,
      PaymentCurrencyCode: "EUR",
    });
    const id = orderId();
    const payment = paymentFor(id);
    for (const options of [
      { store },
      { store, namespace: "shop-a" },
      { store, namespace: "shop-b", key: () => "mine" },
      { store, namespace: "shop-c", key: () => "x".repeat(300) },
    ]) {
      const handler = createPerformOrderPaymentHandler(withIdempotency(pay, options), {
        auth: false,
      });
      expect((await handler.handle(post(payment))).status).toBe(200);
    }
    expect(keys.slice(0, 3)).toEqual([
      `PerformOrderPayment:${id}`,
      `shop-a:PerformOrderPayment:${id}`,
      "shop-b:PerformOrderPayment:mine",
    ]);
    expect(keys[3]).toMatch(/^shop-c:PerformOrderPayment:#[\w-]{43}$/);
  });

  it("refuses a namespace that is not a non-empty text of printable characters", () => {
    const fn = async () => ({ InternalOrderId: "M-1" });
    for (const namespace of ["", "   ", 42, {}, "a\nb", "\ud800", "x".repeat(129)]) {
      expect(() => withIdempotency(fn, { namespace: namespace as string })).toThrow(TypeError);
    }
    expect(() => withIdempotency(fn, { namespace: undefined })).not.toThrow();
    expect(() => withIdempotency(fn, { namespace: "shop-a:production" })).not.toThrow();
  });
});

describe("namespace on Redis (redis-server)", () => {
  let server: RedisServer;
  let client: ReturnType<typeof createClient>;
  beforeAll(async () => {
    server = await startRedis();
    client = createClient({ url: server.url });
    client.on("error", () => undefined);
    await client.connect();
  });
  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await server?.close();
  });
  twoShops("redis", () => createRedisIdempotencyStore(client));
});

describe("namespace on PostgreSQL (initdb + postgres)", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 5 });
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });
  twoShops("pg", () => createPostgresIdempotencyStore(pool));
});
