/**
 * The compatibility surface of withIdempotency (review UPGRADE-2/3): what one version writes and
 * another reads during a rolling deploy, a rollback, or a record that outlives a process. Pinned
 * here against test/idempotency/compatibility.golden.json:
 *
 * - the store key of every callback's fixture under the default key (none: `null`), and of the
 *   variants whose derivation has changed before (a gift card's `CardFields` with a `Cvv` or a
 *   `Pin`, a lower-case `cardFields`/`paymentDetails`, an id long enough to be hashed, Unicode, a
 *   control character);
 * - the record text of representative results of every callback (what `complete` is given);
 * - how the Redis store frames a lease and a record, and the PostgreSQL store's table and row.
 *
 * A change here means a redelivery straddling the upgrade is no longer recognised (it runs the
 * function once more) or a record is read differently (answered 500, or otherwise) by the other
 * version: it must be listed in CHANGELOG.md under "Compatibility" with what to do (see the
 * README's "Upgrading and rolling deploys"). Then regenerate the golden file with
 * `UPDATE_COMPATIBILITY_GOLDEN=1 npx vitest run test/idempotency/compatibility.test.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import * as library from "../../src/index.js";
import {
  CALLBACK_NAMES,
  type CallbackHandler,
  createMemoryIdempotencyStore,
  type IdempotencyStore,
  withIdempotency,
} from "../../src/index.js";
import { post } from "../core/helpers.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";

const GOLDEN = new URL("./compatibility.golden.json", import.meta.url);
const UPDATE = process.env.UPDATE_COMPATIBILITY_GOLDEN === "1";
const golden: Record<string, unknown> = UPDATE ? {} : JSON.parse(readFileSync(GOLDEN, "utf8"));
const CHANGED =
  "withIdempotency's compatibility surface changed (default keys or the stored record format): " +
  "a redelivery straddling an upgrade, a rolling deploy or a rollback is affected. If this is " +
  'intended, add an entry under "Compatibility" in CHANGELOG.md saying what changed and what to ' +
  "do (README: Upgrading and rolling deploys), then regenerate the golden file with " +
  "UPDATE_COMPATIBILITY_GOLDEN=1 npx vitest run test/idempotency/compatibility.test.ts && npx biome check --write test/idempotency/compatibility.golden.json";

/** Compares one section with the golden file, or records it there when regenerating. */
function pinned(section: string, actual: unknown): void {
  if (UPDATE) {
    golden[section] = actual;
    return;
  }
  expect(actual, `${CHANGED}\n(section "${section}")`).toStrictEqual(golden[section]);
}

afterAll(() => {
  if (UPDATE) writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
});

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8"));
}

type Factory = (fn: (payload: never) => unknown, options: object) => CallbackHandler;
function factory(callback: string): Factory {
  return (library as unknown as Record<string, Factory>)[`create${callback}Handler`] as Factory;
}

/** A memory store that also says which key was claimed and what was completed. */
function recording(inner: IdempotencyStore = createMemoryIdempotencyStore()) {
  const claimed: string[] = [];
  const completed: string[] = [];
  const store: IdempotencyStore = {
    claim: (key, owner, leaseMs) => {
      claimed.push(key);
      return inner.claim(key, owner, leaseMs);
    },
    get: (key) => inner.get(key),
    complete: (key, owner, result, ttlMs) => {
      completed.push(result);
      return inner.complete(key, owner, result, ttlMs);
    },
    renew: (key, owner, leaseMs) => inner.renew(key, owner, leaseMs),
    release: (key, owner) => inner.release(key, owner),
  };
  return { store, claimed, completed };
}

/** One delivery of `payload` through the callback's handler and withIdempotency. */
async function deliver(
  callback: string,
  payload: unknown,
  result: unknown,
  store: IdempotencyStore,
  options: object = {},
  during: () => Promise<void> = async () => {},
): Promise<number> {
  const handler = factory(callback)(
    withIdempotency(
      async () => {
        await during();
        return structuredClone(result);
      },
      { store, ...options },
    ) as never,
    { auth: false, onError: () => {} },
  );
  const answer = await handler.handle(post(JSON.stringify(payload)));
  return answer.status;
}

/** The store key a delivery claims under the default key; null when it has none. */
async function keyOf(callback: string, payload: unknown): Promise<string | null> {
  const { store, claimed } = recording();
  await deliver(callback, payload, undefined, store);
  expect(claimed.length).toBeLessThanOrEqual(1);
  return claimed[0] ?? null;
}

const LONG = `GE${"9".repeat(300)}US`;
const variants: Record<string, [string, Record<string, unknown>]> = {
  "RedeemGiftCard, CardFields with Cvv": [
    "RedeemGiftCard",
    { ...fixture("RedeemGiftCard"), CardFields: { CardId: "GC-7342-1109-5561", Cvv: "123" } },
  ],
  "RedeemGiftCard, CardFields with Pin": [
    "RedeemGiftCard",
    { ...fixture("RedeemGiftCard"), CardFields: { CardId: "GC-7342-1109-5561", Pin: "4321" } },
  ],
  "RedeemGiftCard, lower-case cardFields": [
    "RedeemGiftCard",
    (() => {
      const { CardFields, ...rest } = fixture("RedeemGiftCard");
      return { ...rest, cardFields: CardFields };
    })(),
  ],
  "RefundGiftCard, CardFields with Cvv": [
    "RefundGiftCard",
    { ...fixture("RefundGiftCard"), CardFields: { CardId: "GC-7342-1109-5561", Cvv: "123" } },
  ],
  "RefundGiftCard, CardFields with Pin": [
    "RefundGiftCard",
    { ...fixture("RefundGiftCard"), CardFields: { CardId: "GC-7342-1109-5561", Pin: "4321" } },
  ],
  "SendOrderToMerchant, lower-case paymentDetails": [
    "SendOrderToMerchant",
    (() => {
      const { PaymentDetails, ...rest } = fixture("SendOrderToMerchant");
      return {
        ...rest,
        paymentDetails: PaymentDetails ?? fixture("PerformOrderPayment").PaymentDetails,
      };
    })(),
  ],
  "PerformOrderPayment, long OrderId (hashed)": [
    "PerformOrderPayment",
    { ...fixture("PerformOrderPayment"), OrderId: LONG },
  ],
  "RedeemGiftCard, long OrderId (hashed)": [
    "RedeemGiftCard",
    { ...fixture("RedeemGiftCard"), OrderId: LONG },
  ],
  "UpdateOrderStatus, Unicode OrderId": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), OrderId: "GE-Ünïcödé-注文-🎁" },
  ],
  "SendOrderToMerchant, Unicode OrderId": [
    "SendOrderToMerchant",
    { ...fixture("SendOrderToMerchant"), OrderId: "GE-Ünïcödé-注文-🎁" },
  ],
  "PerformOrderPayment, OrderId with a control character (hashed)": [
    "PerformOrderPayment",
    { ...fixture("PerformOrderPayment"), OrderId: "GE927\u0001127001US" },
  ],
};

describe("compatibility: default keys", () => {
  it("of every callback's fixture", async () => {
    const keys: Record<string, string | null> = {};
    for (const callback of CALLBACK_NAMES)
      keys[callback] = await keyOf(callback, fixture(callback));
    pinned("keys of the fixtures", keys);
  });

  it("of the variants whose derivation changed before (card fields, case, hashing, Unicode)", async () => {
    const keys: Record<string, string | null> = {};
    for (const [name, [callback, payload]] of Object.entries(variants)) {
      keys[name] = await keyOf(callback, payload);
    }
    pinned("keys of the variants", keys);
  });
});

/** Representative results: [callback, a name, the result, the delivery's payload]. */
const results: [string, string, unknown][] = [
  ["SendOrderToMerchant", "order", { InternalOrderId: "M-1", OrderId: "GE927127001US" }],
  [
    "SendOrderToMerchant",
    "order with an unknown field and a wrong-typed one",
    { InternalOrderId: "M-1", InternalOrderID: "typo", PaymentAmount: { amount: 1 } },
  ],
  ["SendOrderToMerchant", "order without InternalOrderId", {}],
  [
    "PerformOrderPayment",
    "payment",
    { InternalOrderId: "M-1", PaymentAmount: 104.5, PaymentCurrencyCode: "EUR" },
  ],
  [
    "PerformOrderPayment",
    "payment with Success: true and an ErrorCode",
    { Success: true, PaymentAmount: 104, PaymentCurrencyCode: "EUR", ErrorCode: 100 },
  ],
  [
    "PerformOrderPayment",
    "payment quoting the card and its CVV",
    { InternalOrderId: "M-1", Message: "charged 4111 1111 1111 1111, cvv 737", cvv: "737" },
  ],
  ["UpdateOrderStatus", "status, nothing returned", undefined],
  ["UpdateOrderStatus", "status with a message", { Message: "ok" }],
  ["NotifyOrderRefund", "refund notice", { InternalOrderId: "M-1" }],
  ["SendRMAInfoToMerchant", "RMA", { Message: "received" }],
  ["UpdateParcelDispatch", "parcel", undefined],
  ["SendAdditionalRequiredDocumentsToMerchant", "documents", { Message: "stored" }],
  ["RedeemGiftCard", "redemption", { Balance: 15, CurrencyCode: "USD" }],
  ["RefundGiftCard", "refund", { Balance: "25.00", CurrencyCode: "USD", Message: "credited" }],
];

describe("compatibility: record texts", () => {
  it("of representative results of every callback with a default key", async () => {
    const texts: Record<string, string | null> = {};
    for (const [callback, name, result] of results) {
      const { store, completed } = recording();
      expect(await deliver(callback, fixture(callback), result, store)).toBe(200);
      expect(completed.length).toBeLessThanOrEqual(1);
      texts[`${callback}: ${name}`] = completed[0] ?? null;
    }
    pinned("record texts", texts);
  });

  it("of a cart, under a key of your own", async () => {
    const { store, completed } = recording();
    const cart = { productsList: [], note: "cvv 737 card 4111 1111 1111 1111" };
    const status = await deliver(
      "GetCheckoutCartInfo",
      fixture("GetCheckoutCartInfo"),
      cart,
      store,
      { key: () => "cart-1" },
    );
    pinned("cart record", { status, text: completed[0] ?? null });
  });
});

/** The record under a completed Redis value's framing, its expiry and owner checked then named. */
function framed(value: string | null, ttlMs: number): string | null {
  if (value === null) return null;
  const match = /^c:(\d+)(\.\d+)?:/.exec(value);
  if (match === null) return value;
  const expiry = Number(match[1]);
  expect(Math.abs(expiry - (Date.now() + ttlMs))).toBeLessThan(60_000);
  return `c:<expiry ms>${match[2] === undefined ? "" : ".<owner digits>"}:${value.slice(match[0].length)}`;
}

describe("compatibility: Redis framing", () => {
  let server: RedisServer;
  let client: ReturnType<typeof createClient>;
  beforeAll(async () => {
    server = await startRedis();
    client = createClient({ url: server.url });
    client.on("error", () => undefined);
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.quit();
    await server?.stop();
  });

  it("a lease and a completed record under the default prefix", async () => {
    const store = createRedisIdempotencyStore(client);
    const payload = fixture("PerformOrderPayment");
    const key = await keyOf("PerformOrderPayment", payload);
    const redisKey = `crossborder-callbacks:idempotency:${key}`;
    let lease: string | null = null;
    const status = await deliver(
      "PerformOrderPayment",
      payload,
      { InternalOrderId: "M-1", PaymentAmount: 10, PaymentCurrencyCode: "EUR" },
      store,
      { ttlMs: 3_600_000 },
      async () => {
        lease = await client.get(redisKey);
      },
    );
    const record = await client.get(redisKey);
    pinned("redis", {
      status,
      key: redisKey,
      lease: lease === null ? null : (lease as string).replace(/^r:[0-9a-f-]{36}$/, "r:<owner>"),
      record: framed(record, 3_600_000),
    });
    const nothing = fixture("UpdateOrderStatus");
    await deliver("UpdateOrderStatus", nothing, undefined, store, { ttlMs: 3_600_000 });
    const nothingKey = `crossborder-callbacks:idempotency:${await keyOf("UpdateOrderStatus", nothing)}`;
    pinned("redis, nothing returned", framed(await client.get(nothingKey), 3_600_000));
  });
});

describe("compatibility: PostgreSQL table and row", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
    pool.on("error", () => undefined);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  it("the default table's columns and a completed row", async () => {
    const store = createPostgresIdempotencyStore(pool);
    const payload = fixture("PerformOrderPayment");
    const key = await keyOf("PerformOrderPayment", payload);
    let lease: Record<string, unknown> | undefined;
    const status = await deliver(
      "PerformOrderPayment",
      payload,
      { InternalOrderId: "M-1", PaymentAmount: 10, PaymentCurrencyCode: "EUR" },
      store,
      { ttlMs: 3_600_000 },
      async () => {
        const rows = await pool.query(
          "SELECT owner, result FROM crossborder_idempotency WHERE key = $1",
          [key],
        );
        lease = rows.rows[0];
      },
    );
    const columns = await pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_name = 'crossborder_idempotency' ORDER BY ordinal_position`,
    );
    const indexes = await pool.query(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'crossborder_idempotency' ORDER BY indexname",
    );
    const row = await pool.query(
      `SELECT key, owner, result, extract(epoch FROM expires_at - now()) AS remaining
       FROM crossborder_idempotency WHERE key = $1`,
      [key],
    );
    const found = row.rows[0] as { remaining: string } & Record<string, unknown>;
    expect(Math.abs(Number(found.remaining) - 3_600)).toBeLessThan(60);
    pinned("postgres", {
      status,
      columns: columns.rows,
      indexes: indexes.rows.map((index) => index.indexname),
      lease:
        lease === undefined ? null : { ...lease, owner: lease.owner === null ? null : "<owner>" },
      row: { key: found.key, owner: found.owner, result: found.result },
    });
  });
});
