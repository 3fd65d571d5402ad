/**
 * The compatibility surface of withIdempotency (review UPGRADE-2/3): what one version writes and
 * another reads during a rolling deploy, a rollback, or a record that outlives a process. Pinned
 * here against test/idempotency/compatibility.golden.json:
 *
 * - the store key of every callback's payload under the default key (none: `null`), of the
 *   variants whose derivation has changed before (a gift card's `CardFields` with a `Cvv` or a
 *   `Pin`, a lower-case `cardFields`/`paymentDetails`, an id long enough to be hashed, Unicode, a
 *   control character), and of the payloads as the service really sends them (wire-facts §3/§6:
 *   the captured forms with `\/` escapes, `StatusCode` `CANCELLED` in any case, a padded
 *   `OrderId` or `RMANumber`);
 * - the record text of representative results of every callback (what `complete` is given);
 * - how the Redis store frames a lease and a record, and the PostgreSQL store's table and row;
 * - that records in every framing a version has written (Redis `c:<expiry>:<record>` without an
 *   owner mark, `c:<expiry>.<owner>:<record>`, a lease `r:<owner>`; a PostgreSQL row) are still
 *   read by this version as the same answer, without running the function.
 *
 * The payloads are frozen copies in ./compatibility-payloads/ (the fixtures of 50cb752 and the
 * captured forms of `capturedPayload`), used by no other test: editing test/fixtures/ or the
 * testing kit's samples does not move a key here, only a change of the derivation does.
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

/** A frozen payload of this test (./compatibility-payloads/), not the shared test/fixtures/. */
function fixture(name: string): Record<string, unknown> {
  return JSON.parse(
    readFileSync(new URL(`./compatibility-payloads/${name}.json`, import.meta.url), "utf8"),
  );
}

/** A frozen captured body, as the service sends it (PHP's `\/` escapes): the text itself. */
function captured(name: string): string {
  return readFileSync(
    new URL(`./compatibility-payloads/captured-${name}.txt`, import.meta.url),
    "utf8",
  ).trim();
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
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const answer = await handler.handle(post(body));
  return answer.status;
}

/** One delivery's answer (status and body) and how many times the function ran. */
async function answered(
  callback: string,
  payload: unknown,
  result: unknown,
  store: IdempotencyStore,
  options: object = {},
): Promise<{ status: number; body: string; runs: number }> {
  let runs = 0;
  const handler = factory(callback)(
    withIdempotency(
      async () => {
        runs += 1;
        return structuredClone(result);
      },
      { store, ...options },
    ) as never,
    { auth: false, onError: () => {} },
  );
  const answer = await handler.handle(post(JSON.stringify(payload)));
  return { status: answer.status, body: answer.body, runs };
}

/**
 * Records as versions of this library have stored them (second-idem-2, read side): a key, the
 * record text written for `result` (the golden "record texts"), and the result whose first
 * answer a redelivery must get from that record.
 */
const stored: { name: string; callback: string; text: string; result: unknown }[] = [
  { name: "nothing returned", callback: "UpdateOrderStatus", text: "u", result: undefined },
  {
    name: "an order",
    callback: "SendOrderToMerchant",
    text: 'j{"InternalOrderId":"M-1","OrderId":"GE927127001US"}',
    result: { InternalOrderId: "M-1", OrderId: "GE927127001US" },
  },
  {
    name: "a payment",
    callback: "PerformOrderPayment",
    text: 'j{"InternalOrderId":"M-1","PaymentAmount":"104.5","PaymentCurrencyCode":"EUR"}',
    result: { InternalOrderId: "M-1", PaymentAmount: 104.5, PaymentCurrencyCode: "EUR" },
  },
  {
    name: "a redemption",
    callback: "RedeemGiftCard",
    text: 'j{"Balance":"15","CurrencyCode":"USD"}',
    result: { Balance: 15, CurrencyCode: "USD" },
  },
];

/** The owner mark `complete` writes since 531421e: each byte of the owner as three digits. */
function ownerMark(owner: string): string {
  return [...Buffer.from(owner, "latin1")].map((byte) => String(byte).padStart(3, "0")).join("");
}

/** Asserts a redelivery of `entry`'s payload is answered from the seeded record, as first. */
async function readsAsFirstAnswer(
  entry: (typeof stored)[number],
  store: IdempotencyStore,
  framing: string,
): Promise<void> {
  const first = await answered(
    entry.callback,
    fixture(entry.callback),
    entry.result,
    createMemoryIdempotencyStore(),
  );
  const again = await answered(entry.callback, fixture(entry.callback), "not run", store);
  expect(
    { status: again.status, body: again.body, runs: again.runs },
    `${CHANGED}\n(a stored record no longer read: ${framing}, ${entry.name})`,
  ).toStrictEqual({ status: first.status, body: first.body, runs: 0 });
  expect(first.status).toBe(200);
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

/** The payloads as the service sends them (second-idem-2): what a real redelivery carries. */
const wire: Record<string, [string, string | Record<string, unknown>]> = {
  "SendOrderToMerchant, captured (PaymentDetails null, \\/ escapes)": [
    "SendOrderToMerchant",
    captured("SendOrderToMerchant"),
  ],
  "PerformOrderPayment, captured (collected by the service)": [
    "PerformOrderPayment",
    captured("PerformOrderPayment"),
  ],
  "UpdateOrderStatus, captured (CANCELLED, MerchantOrderId null)": [
    "UpdateOrderStatus",
    captured("UpdateOrderStatus"),
  ],
  "UpdateOrderStatus, StatusCode CANCELLED": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), StatusCode: "CANCELLED" },
  ],
  "UpdateOrderStatus, StatusCode Cancelled": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), StatusCode: "Cancelled" },
  ],
  "UpdateOrderStatus, StatusCode CANCELED": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), StatusCode: "CANCELED" },
  ],
  "UpdateOrderStatus, StatusCode cancelled": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), StatusCode: "cancelled" },
  ],
  "UpdateOrderStatus, StatusCode padded": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), StatusCode: " CANCELLED " },
  ],
  "UpdateOrderStatus, MerchantOrderId null": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), MerchantOrderId: null },
  ],
  "PerformOrderPayment, padded OrderId": [
    "PerformOrderPayment",
    { ...fixture("PerformOrderPayment"), OrderId: " GE927127001US " },
  ],
  "UpdateOrderStatus, padded OrderId": [
    "UpdateOrderStatus",
    { ...fixture("UpdateOrderStatus"), OrderId: " GE927127001US ", StatusCode: "CANCELLED" },
  ],
  "SendRMAInfoToMerchant, padded RMANumber": [
    "SendRMAInfoToMerchant",
    { ...fixture("SendRMAInfoToMerchant"), RMANumber: " RMA-000317 " },
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

  it("of the payloads as the service sends them (captured forms, status case, padding)", async () => {
    const keys: Record<string, string | null> = {};
    for (const [name, [callback, payload]] of Object.entries(wire)) {
      keys[name] = await keyOf(callback, payload);
    }
    // A redelivery is the same body again: the same key.
    expect(await keyOf("SendOrderToMerchant", captured("SendOrderToMerchant"))).toBe(
      keys["SendOrderToMerchant, captured (PaymentDetails null, \\/ escapes)"],
    );
    pinned("keys of the wire forms", keys);
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

  it("reads the records every version wrote: c:<expiry>:<record>, c:<expiry>.<owner>:<record>", async () => {
    const store = createRedisIdempotencyStore(client);
    const owner = "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
    const framings: [string, (text: string) => string][] = [
      [
        "c:<expiry>:<record> (no owner mark, before 531421e)",
        (text) => `c:${Date.now() + 3_600_000}:${text}`,
      ],
      [
        "c:<expiry>.<owner>:<record>",
        (text) => `c:${Date.now() + 3_600_000}.${ownerMark(owner)}:${text}`,
      ],
    ];
    for (const [framing, value] of framings) {
      for (const entry of stored) {
        const key = await keyOf(entry.callback, fixture(entry.callback));
        const redisKey = `crossborder-callbacks:idempotency:${key}`;
        await client.set(redisKey, value(entry.text), { PX: 3_600_000 });
        await readsAsFirstAnswer(entry, store, framing);
        await client.del(redisKey);
      }
    }
  });

  it("reads another instance's lease r:<owner> as running: the repeat waits, then 503", async () => {
    const store = createRedisIdempotencyStore(client);
    const key = await keyOf("PerformOrderPayment", fixture("PerformOrderPayment"));
    const redisKey = `crossborder-callbacks:idempotency:${key}`;
    await client.set(redisKey, "r:5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b", { PX: 60_000 });
    const again = await answered(
      "PerformOrderPayment",
      fixture("PerformOrderPayment"),
      { InternalOrderId: "M-2" },
      store,
      { waitMs: 200 },
    );
    expect({ status: again.status, runs: again.runs }, CHANGED).toStrictEqual({
      status: 503,
      runs: 0,
    });
    expect(JSON.parse(again.body)).toMatchObject({ ErrorCode: "DELIVERY_IN_PROGRESS" });
    await client.del(redisKey);
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
    // Since review infra-5: the owner that wrote the record, in a row of its own beside it (a key
    // no version reads as a delivery's), expiring with it.
    const marks = await pool.query(
      `SELECT key, owner, result, expires_at = (SELECT expires_at FROM crossborder_idempotency
         WHERE key = $1) AS with_the_record
       FROM crossborder_idempotency WHERE key LIKE $1 || E'\n%'`,
      [key],
    );
    pinned("postgres", {
      status,
      columns: columns.rows,
      indexes: indexes.rows.map((index) => index.indexname),
      lease:
        lease === undefined ? null : { ...lease, owner: lease.owner === null ? null : "<owner>" },
      row: { key: found.key, owner: found.owner, result: found.result },
      "recorded by": marks.rows.map((mark) => ({
        ...mark,
        key: String(mark.key).replace(/\n[0-9a-f-]{36}$/, "\n<owner>"),
      })),
    });
  });

  it("reads the rows every version wrote: a completed row, and another instance's lease", async () => {
    const store = createPostgresIdempotencyStore(pool);
    for (const entry of stored) {
      const key = await keyOf(entry.callback, fixture(entry.callback));
      await pool.query("DELETE FROM crossborder_idempotency WHERE key = $1", [key]);
      await pool.query(
        `INSERT INTO crossborder_idempotency (key, owner, result, expires_at)
         VALUES ($1, NULL, $2, now() + interval '1 hour')`,
        [key, entry.text],
      );
      await readsAsFirstAnswer(entry, store, "PostgreSQL row (owner null, result)");
      await pool.query("DELETE FROM crossborder_idempotency WHERE key = $1", [key]);
    }
    const key = await keyOf("PerformOrderPayment", fixture("PerformOrderPayment"));
    await pool.query(
      `INSERT INTO crossborder_idempotency (key, owner, result, expires_at)
       VALUES ($1, '5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b', NULL, now() + interval '1 minute')`,
      [key],
    );
    const again = await answered(
      "PerformOrderPayment",
      fixture("PerformOrderPayment"),
      { InternalOrderId: "M-2" },
      store,
      { waitMs: 200 },
    );
    expect({ status: again.status, runs: again.runs }, CHANGED).toStrictEqual({
      status: 503,
      runs: 0,
    });
    await pool.query("DELETE FROM crossborder_idempotency WHERE key = $1", [key]);
  });
});
