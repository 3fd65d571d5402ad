/**
 * The PostgreSQL store under what a merchant's database may be set up with, on a real server:
 * a default isolation of SERIALIZABLE or REPEATABLE READ (review chaos-1), a role granted DML
 * only on a table its migrations created (chaos-2), and the table dropped after first use
 * (chaos-3).
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresIdempotencyStore,
  type PostgresIdempotencyStore,
  postgresIdempotencySchema,
} from "../../src/idempotency/postgres.js";
import {
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentRequest,
  withIdempotency,
} from "../../src/index.js";
import { collector, json, post } from "../core/helpers.js";
import { type PostgresServer, startPostgres } from "../support/databases.js";
import { paymentFor } from "./support/payment.js";

function payment(orderId: string): string {
  return paymentFor(orderId);
}

let server: PostgresServer;
let admin: pg.Pool;
const pools: pg.Pool[] = [];
/** A pool on `database` as `user`, ended after the test. */
function poolOf(database: string, user = "postgres", max = 10): pg.Pool {
  const url = new URL(server.url);
  url.pathname = `/${database}`;
  url.username = user;
  const pool = new pg.Pool({ connectionString: url.toString(), max });
  pool.on("error", () => undefined);
  pools.push(pool);
  return pool;
}

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on("error", () => undefined);
  for (const [database, level] of [
    ["serializable_db", "serializable"],
    ["repeatable_db", "repeatable read"],
  ] as const) {
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.query(`ALTER DATABASE ${database} SET default_transaction_isolation = '${level}'`);
  }
});
/** Each test's pools ended after it: the server takes 200 connections. */
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));
});
afterAll(async () => {
  await admin?.end();
  await server?.close();
});

const LEVELS = [
  ["serializable", "serializable_db"],
  ["repeatable read", "repeatable_db"],
] as const;

describe.each(LEVELS)("a database whose default isolation is %s", (level, database) => {
  it("the sessions run at that level (the premise of the tests below)", async () => {
    const rows = (await poolOf(database, "postgres", 1).query("SHOW transaction_isolation")).rows;
    expect(rows[0]?.transaction_isolation).toBe(level);
  });

  it("claims of one key sent at once from separate pools: one claimed, the others answered the running lease, none refused", async () => {
    const stores = Array.from({ length: 6 }, () =>
      createPostgresIdempotencyStore(poolOf(database), { table: "claims" }),
    );
    await Promise.all(stores.map((store) => store.ready()));
    for (let round = 0; round < 30; round++) {
      const claims = await Promise.all(
        stores.map((store, i) => store.claim(`key-${round}`, `owner-${i}`, 60_000)),
      );
      expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
      for (const claim of claims.filter((each) => !each.claimed)) {
        expect(claim).toMatchObject({ claimed: false, record: { state: "running" } });
      }
    }
  });

  it("a claim taking over an expired row while the cleanup deletes it, and the cleanup meeting the claim: neither fails", async () => {
    const cleaner = createPostgresIdempotencyStore(poolOf(database), {
      table: "takeovers",
      cleanupIntervalMs: 0,
    });
    const claimer = createPostgresIdempotencyStore(poolOf(database), {
      table: "takeovers",
      cleanupIntervalMs: 0,
    });
    await cleaner.ready();
    const writer = poolOf(database, "postgres", 1);
    for (let round = 0; round < 5; round++) {
      await writer.query(
        `INSERT INTO takeovers (key, owner, result, expires_at)
         SELECT 'k' || i, 'old', NULL, clock_timestamp() - interval '1 second' FROM generate_series(1, 200) i
         ON CONFLICT (key) DO UPDATE SET owner = 'old', expires_at = EXCLUDED.expires_at`,
      );
      const [deleted, claims] = await Promise.all([
        Promise.all([cleaner.deleteExpired(100), cleaner.deleteExpired(100)]),
        Promise.all(
          Array.from({ length: 200 }, (_, i) => claimer.claim(`k${i + 1}`, `new-${round}`, 60_000)),
        ),
      ]);
      expect(deleted.every((count) => count >= 0)).toBe(true);
      expect(claims.every((claim) => claim.claimed)).toBe(true);
    }
  });

  it.each([false, true])(
    "three instances each receiving every delivery at once (failOpen %s): each order runs once, no 500",
    async (failOpen) => {
      const runs = new Map<string, number>();
      const failures: CallbackFailure[] = [];
      const table = `deliveries_${String(failOpen)}`;
      const handlers = [0, 1, 2].map(() =>
        createPerformOrderPaymentHandler(
          withIdempotency(
            async (order: PerformOrderPaymentRequest) => {
              runs.set(order.OrderId, (runs.get(order.OrderId) ?? 0) + 1);
              await new Promise((resolve) => setTimeout(resolve, 5));
              return { PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
            },
            {
              store: createPostgresIdempotencyStore(poolOf(database, "postgres", 15), { table }),
              failOpen,
            },
          ),
          { auth: false, onError: (failure) => void failures.push(failure) },
        ),
      );
      const warm = await Promise.all(
        handlers.map((handler, i) => handler.handle(post(payment(`warm-${i}`)))),
      );
      expect(warm.map((answer) => answer.status)).toEqual([200, 200, 200]);
      const orders = Array.from({ length: 40 }, (_, i) => `GE-ISO-${i}`);
      const answers = await Promise.all(
        orders.flatMap((orderId) =>
          handlers.map((handler) => handler.handle(post(payment(orderId)))),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(failures.map((failure) => `${failure.kind}: ${failure.reason}`)).toEqual([]);
      expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
      for (const answer of answers.filter((each) => each.status === 503)) {
        expect(json(answer)).toMatchObject({ ErrorCode: "DELIVERY_IN_PROGRESS" });
      }
      expect(orders.map((orderId) => runs.get(orderId))).toEqual(orders.map(() => 1));
    },
    30_000,
  );
});

/** A handler over `store` counting its runs. */
function counted(store: PostgresIdempotencyStore) {
  let runs = 0;
  const { failures, onError } = collector();
  const handler = createPerformOrderPaymentHandler(
    withIdempotency(
      async () => {
        runs++;
        return { PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
      },
      { store },
    ),
    { auth: false, onError },
  );
  return { handler, failures, runs: () => runs };
}

describe("a role granted DML only on a table its migrations created (createTable left at true)", () => {
  beforeAll(async () => {
    await admin.query("CREATE ROLE app LOGIN");
    await admin.query("CREATE ROLE creator LOGIN");
    // PostgreSQL 15 and later already do this; earlier versions let every role create in public.
    await admin.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    await admin.query("GRANT CREATE ON SCHEMA public TO creator");
  });

  it("deliveries run: the store does not try to create a table that is there", async () => {
    await admin.query(postgresIdempotencySchema({ table: "migrated" }));
    await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON "migrated" TO app');
    const { handler, failures, runs } = counted(
      createPostgresIdempotencyStore(poolOf("postgres", "app"), { table: "migrated" }),
    );
    const first = await handler.handle(post(payment("GE-DML-1")));
    expect(failures.map((failure) => String(failure.error))).toEqual([]);
    expect(first.status).toBe(200);
    expect((await handler.handle(post(payment("GE-DML-1")))).status).toBe(200);
    expect(runs()).toBe(1);
  });

  it("a role that may create in the schema but does not own the table (CREATE INDEX refused to it): deliveries run", async () => {
    await admin.query(postgresIdempotencySchema({ table: "owned_elsewhere" }));
    await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON "owned_elsewhere" TO creator');
    const { handler, runs } = counted(
      createPostgresIdempotencyStore(poolOf("postgres", "creator"), { table: "owned_elsewhere" }),
    );
    expect((await handler.handle(post(payment("GE-DML-2")))).status).toBe(200);
    expect(runs()).toBe(1);
  });

  it("a table migrated without its index, which the role may not create: deliveries run all the same", async () => {
    await admin.query(
      'CREATE TABLE "no_index" (key text PRIMARY KEY, owner text, result text, expires_at timestamptz NOT NULL)',
    );
    await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON "no_index" TO app');
    const store = createPostgresIdempotencyStore(poolOf("postgres", "app"), { table: "no_index" });
    await store.ready();
    const { handler, runs } = counted(store);
    expect((await handler.handle(post(payment("GE-DML-3")))).status).toBe(200);
    expect(runs()).toBe(1);
  });

  it("no table and no right to create it: refused, naming the table and createTable", async () => {
    const store = createPostgresIdempotencyStore(poolOf("postgres", "app"), {
      table: "never_made",
    });
    await expect(store.ready()).rejects.toThrow(
      /could not create the idempotency table "never_made" .*permission denied.*postgresIdempotencySchema\(\).*createTable: false/,
    );
    await expect(store.claim("k", "o", 60_000)).rejects.toMatchObject({ code: "42501" });
  });
});

describe("the table dropped after first use", () => {
  it("createTable (the default): created again at the next use; deliveries arriving at once all run", async () => {
    const { handler, failures, runs } = counted(
      createPostgresIdempotencyStore(poolOf("postgres"), { table: "dropped" }),
    );
    expect((await handler.handle(post(payment("GE-DROP-1")))).status).toBe(200);
    await admin.query('DROP TABLE "dropped"');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => handler.handle(post(payment(`GE-DROP-${i + 2}`)))),
    );
    expect(failures.map((failure) => String(failure.error))).toEqual([]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(runs()).toBe(9);
    expect((await handler.handle(post(payment("GE-DROP-2")))).status).toBe(200);
    expect(runs()).toBe(9);
  });

  it("createTable: false: refused, naming the table and the option", async () => {
    await admin.query(postgresIdempotencySchema({ table: "dropped_migrated" }));
    const store = createPostgresIdempotencyStore(poolOf("postgres"), {
      table: "dropped_migrated",
      createTable: false,
    });
    expect(await store.claim("k", "o", 60_000)).toEqual({ claimed: true });
    await admin.query('DROP TABLE "dropped_migrated"');
    await expect(store.claim("k2", "o", 60_000)).rejects.toThrow(
      /the idempotency table "dropped_migrated" does not exist .*createTable: false.*postgresIdempotencySchema\(\)/,
    );
    await expect(store.get("k2")).rejects.toMatchObject({ code: "42P01" });
  });
});

/**
 * The store created without `schema`, over a pool the app shares and whose connections it moves
 * to a tenant's schema (`SET search_path`, released without a RESET): the table is the one found
 * (or created) at first use, whatever the connection a later statement runs on (review
 * second-hostile-1: a claim on such a connection met 42P01, was taken for a dropped table, and a
 * second, empty table was created in the tenant's schema, claiming a running key again).
 */
describe("pooled connections whose search_path the app changes (no schema option)", () => {
  /** The pool's `max` connections, each moved to `schema` and released as they are. */
  async function moveAll(pool: pg.Pool, max: number, schema: string): Promise<void> {
    const clients = await Promise.all(Array.from({ length: max }, () => pool.connect()));
    for (const client of clients) await client.query(`SET search_path TO ${schema}`);
    for (const client of clients) client.release();
  }

  it("a claimed key is answered from the table found at first use, and no table is created in the tenant's schema", async () => {
    await admin.query("CREATE SCHEMA tenant_a");
    const pool = poolOf("postgres", "postgres", 3);
    const store = createPostgresIdempotencyStore(pool, { table: "search_path" });
    expect(await store.claim("order-1", "delivery-1", 60_000)).toEqual({ claimed: true });
    await moveAll(pool, 3, "tenant_a");
    expect(await store.claim("order-1", "delivery-2", 60_000)).toMatchObject({
      claimed: false,
      record: { state: "running" },
    });
    expect(await store.complete("order-1", "delivery-1", "done", 60_000)).toBe(true);
    expect(await store.get("order-1")).toEqual({ state: "completed", result: "done" });
    const stray = await admin.query("SELECT to_regclass('tenant_a.search_path') AS oid");
    expect(stray.rows[0]?.oid).toBeNull();
    const rows = await admin.query('SELECT key, owner FROM public."search_path"');
    // The record, and the row naming who wrote it (review infra-5).
    expect(rows.rows).toEqual([
      { key: "order-1", owner: null },
      { key: "order-1\ndelivery-1", owner: null },
    ]);
  });

  it("the table dropped later is created again in the schema it was found in, not in the connection's", async () => {
    await admin.query("CREATE SCHEMA tenant_b");
    const pool = poolOf("postgres", "postgres", 3);
    const store = createPostgresIdempotencyStore(pool, { table: "search_path_dropped" });
    expect(await store.claim("order-1", "delivery-1", 60_000)).toEqual({ claimed: true });
    await moveAll(pool, 3, "tenant_b");
    await admin.query('DROP TABLE public."search_path_dropped"');
    expect(await store.claim("order-2", "delivery-1", 60_000)).toEqual({ claimed: true });
    expect(await store.claim("order-2", "delivery-2", 60_000)).toMatchObject({ claimed: false });
    const where = await admin.query(
      "SELECT to_regclass('public.search_path_dropped') IS NOT NULL AS public, to_regclass('tenant_b.search_path_dropped') IS NOT NULL AS tenant",
    );
    expect(where.rows[0]).toEqual({ public: true, tenant: false });
  });

  it("a first use on a connection whose search_path finds the table in a later schema uses that table", async () => {
    await admin.query("CREATE SCHEMA tenant_c; CREATE SCHEMA shared");
    await admin.query(postgresIdempotencySchema({ schema: "shared", table: "found_later" }));
    const pool = poolOf("postgres", "postgres", 2);
    await moveAll(pool, 2, "tenant_c, shared");
    const store = createPostgresIdempotencyStore(pool, { table: "found_later" });
    expect(await store.claim("order-1", "delivery-1", 60_000)).toEqual({ claimed: true });
    await moveAll(pool, 2, "public");
    expect(await store.claim("order-1", "delivery-2", 60_000)).toMatchObject({ claimed: false });
    const where = await admin.query(
      "SELECT to_regclass('public.found_later') IS NOT NULL AS public, to_regclass('tenant_c.found_later') IS NOT NULL AS tenant, (SELECT count(*)::int FROM shared.found_later) AS rows",
    );
    expect(where.rows[0]).toEqual({ public: false, tenant: false, rows: 1 });
  });
});

describe("a complete sent again while the first still waits on the row (review second-idem2-1)", () => {
  it("read committed (the default): both tries of one owner answer true, the record is that owner's", async () => {
    const pool = poolOf("postgres", "postgres", 4);
    const store = createPostgresIdempotencyStore(pool, { table: "retried_completes" });
    await store.ready();
    for (const [round, waitMs] of [
      [1, 150],
      [2, 400],
    ] as const) {
      const key = `retried-${round}`;
      expect((await store.claim(key, "owner-a", 30_000)).claimed).toBe(true);
      // Anything holding the row a moment (a renewal in flight, a cleanup batch, a slow disk).
      const locker = await pool.connect();
      try {
        await locker.query("BEGIN");
        await locker.query("SELECT 1 FROM retried_completes WHERE key = $1 FOR UPDATE", [key]);
        const first = store.complete(key, "owner-a", "text", 60_000);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        // The first try's answer was not awaited (timed out): the same owner writes again.
        const again = store.complete(key, "owner-a", "text", 60_000);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        await locker.query("COMMIT");
        expect(await Promise.all([first, again])).toEqual([true, true]);
      } finally {
        locker.release();
      }
      expect(await store.get(key)).toMatchObject({ state: "completed", result: "text" });
      // Another owner's equal text is still not this owner's.
      expect((await store.claim(`${key}-other`, "owner-b", 30_000)).claimed).toBe(true);
      expect(await store.complete(`${key}-other`, "owner-b", "text", 60_000)).toBe(true);
      expect(await store.complete(`${key}-other`, "owner-a", "text", 60_000)).toBe(false);
    }
  });
});
