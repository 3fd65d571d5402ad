/**
 * withIdempotency when a store connection drops after the server applied a command but before its
 * reply got back (a reset connection, an idle cut by a NAT or load balancer, a failover), and when
 * a reply is late. A TCP proxy between the client (default settings) and the real server forwards
 * the chosen command, then either cuts both sockets when the server's reply arrives (so the
 * command was applied and its reply is lost, every time) or holds the replies until the test lets
 * them through.
 */
import { createServer, type Server, Socket } from "node:net";
import { Redis as IoRedis } from "ioredis";
import pg from "pg";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import {
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentRequest,
  withIdempotency,
} from "../../src/index.js";
import { collector, post } from "../core/helpers.js";
import {
  freePort,
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";
import { paymentFor } from "./support/payment.js";

let sequence = 0;
const order = () => `GE-CUT-${Date.now()}-${++sequence}`;
const payment = (id: string) => paymentFor(id);

function charges() {
  let count = 0;
  const fn = async (order: PerformOrderPaymentRequest) => {
    count++;
    return { InternalOrderId: `M-${order.OrderId}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
  };
  return { fn, count: () => count };
}

/** A TCP proxy to `port` that can lose or hold the reply to the next command matching a test. */
interface Proxy {
  port: number;
  /** Forwards the next client chunk matching `match`, then cuts both sockets at the server's reply. */
  cutAfter(match: (sent: string) => boolean): void;
  /** Forwards the next client chunk matching `match`, then holds every reply until `release()`. */
  holdAfter(match: (sent: string) => boolean): () => void;
  /** Cuts both sockets of the connections holding their replies (the server's work goes on). */
  cutHeld(): void;
  /** The client chunks forwarded so far, as text. */
  sent: string[];
  close(): Promise<void>;
}

async function startProxy(port: number): Promise<Proxy> {
  let rule: { match: (sent: string) => boolean; mode: "cut" | "hold" } | undefined;
  const sockets = new Set<Socket>();
  const sent: string[] = [];
  let releaseHeld: (() => void)[] = [];
  let cutters: (() => void)[] = [];
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    let mode: "pass" | "cut" | "hold" = "pass";
    const held: Buffer[] = [];
    upstream.connect(port, "127.0.0.1");
    client.on("data", (chunk) => {
      if (mode === "cut") return;
      const text = chunk.toString("latin1");
      sent.push(text);
      if (rule?.match(text)) {
        mode = rule.mode;
        rule = undefined;
        if (mode === "hold") {
          releaseHeld.push(() => {
            mode = "pass";
            for (const part of held.splice(0)) client.write(part);
          });
          cutters.push(() => {
            client.destroy();
            upstream.destroy();
          });
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (mode === "cut") {
        // The server answered: the command was applied. Its reply never reaches the client.
        client.destroy();
        upstream.destroy();
      } else if (mode === "hold") held.push(chunk);
      else client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    sent,
    cutAfter(match) {
      rule = { match, mode: "cut" };
    },
    holdAfter(match) {
      rule = { match, mode: "hold" };
      return () => {
        for (const release of releaseHeld.splice(0)) release();
      };
    },
    cutHeld() {
      for (const cut of cutters.splice(0)) cut();
    },
    async close() {
      releaseHeld = [];
      cutters = [];
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Polls `check` every 20 ms until it answers true or `ms` passed; answers its last answer. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ranTwice = (failures: CallbackFailure[]) =>
  failures.filter((failure) => /run twice|ran twice/.test(failure.reason));
const appendOnly = (failures: CallbackFailure[]) =>
  failures.filter((failure) => /append-only file/.test(failure.reason));

describe("Redis: a reply lost or late", () => {
  let server: RedisServer;
  let proxy: Proxy;
  const closers: (() => unknown)[] = [];
  beforeAll(async () => {
    server = await startRedis({ appendOnly: false });
    proxy = await startProxy(server.port);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await proxy?.close();
    await server?.close();
  });

  function ioredis(): IoRedis {
    const client = new IoRedis(`redis://127.0.0.1:${proxy.port}`);
    client.on("error", () => undefined);
    closers.push(() => client.disconnect());
    return client;
  }
  async function nodeRedis() {
    const client = createClient({ url: `redis://127.0.0.1:${proxy.port}` });
    client.on("error", () => undefined);
    await client.connect();
    closers.push(() => client.destroy());
    return client;
  }
  const keyOf = (id: string) => `crossborder-callbacks:idempotency:PerformOrderPayment:${id}`;

  it("node-redis: a claim applied whose reply was lost is released: the service's retry right after runs the function (not 503 for leaseMs)", async () => {
    const client = await nodeRedis();
    const { fn, count } = charges();
    const { onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: createRedisIdempotencyStore(client), waitMs: 1_000 }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(payment(order())))).status).toBe(200);
    const id = order();
    proxy.cutAfter((sent) => sent.includes(id));
    expect((await handler.handle(post(payment(id)))).status).toBe(500);
    expect(count()).toBe(1);
    // The release is queued on the client ahead of the retry's claim.
    const retry = await handler.handle(post(payment(id)));
    expect(retry.status).toBe(200);
    expect(count()).toBe(2);
    expect(await client.get(keyOf(id))).toMatch(/^c:/);
  });

  it("ioredis: a claim applied whose reply was lost is sent again by the client and counts as claimed (same owner): answered 200, one run", async () => {
    const client = ioredis();
    const { fn, count } = charges();
    const { onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: createRedisIdempotencyStore(client), waitMs: 1_000 }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(payment(order())))).status).toBe(200);
    const id = order();
    proxy.cutAfter((sent) => sent.includes(id));
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
    expect(await client.get(keyOf(id))).toMatch(/^c:/);
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
  });

  it("ioredis: a record applied whose reply was lost and sent again by the client is not reported as a lost lease (no 'may have run twice')", async () => {
    const client = ioredis();
    const { fn, count } = charges();
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: createRedisIdempotencyStore(client) }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(payment(order())))).status).toBe(200);
    const id = order();
    proxy.cutAfter((sent) => sent.includes(id) && sent.includes("PaymentAmount"));
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
    expect(await client.get(keyOf(id))).toMatch(/^c:/);
    expect(ranTwice(failures)).toEqual([]);
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
  });

  it("a record written again by its owner counts as done; the owner is kept where a version without it reads the expiry, and that version's records are still answered", async () => {
    const client = await nodeRedis();
    const store = createRedisIdempotencyStore(client, { prefix: "again:" });
    const key = order();
    expect(await store.claim(key, "owner-1", 30_000)).toEqual({ claimed: true });
    expect(await store.complete(key, "owner-1", "j{}", 60_000)).toBe(true);
    expect(await store.complete(key, "owner-1", "j{}", 60_000)).toBe(true);
    // Another owner, or the same owner with another result, is not this write.
    expect(await store.complete(key, "owner-2", "j{}", 60_000)).toBe(false);
    expect(await store.complete(key, "owner-1", 'j{"a":1}', 60_000)).toBe(false);
    expect(await store.get(key)).toEqual({ state: "completed", result: "j{}" });
    const held = String(await client.get(`again:${key}`));
    const stamp = /^c:(\d+\.\d+):j\{\}$/.exec(held)?.[1];
    expect(stamp).toBeDefined();
    // How the earlier version reads the expiry (tonumber of what lies between "c:" and the next
    // ":"): the same whole milliseconds.
    const read = await client.eval("return tostring(math.floor(tonumber(ARGV[1])))", {
      keys: [],
      arguments: [String(stamp)],
    });
    expect(read).toBe(String(stamp).split(".")[0]);
    // A record of the earlier version (no owner): answered, and not anyone's write sent again.
    const old = order();
    await client.set(`again:${old}`, `c:${Date.now() + 60_000}:u`, { PX: 60_000 });
    expect(await store.get(old)).toEqual({ state: "completed", result: "u" });
    expect(await store.complete(old, "owner-1", "u", 60_000)).toBe(false);
    expect(await store.claim(old, "owner-1", 30_000)).toEqual({
      claimed: false,
      record: { state: "completed", result: "u" },
    });
  });

  it("node-redis: a setup check whose connection dropped is asked again at a later delivery: appendonly no is warned once, and not asked again", async () => {
    const client = await nodeRedis();
    const { fn } = charges();
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: createRedisIdempotencyStore(client), storeTimeoutMs: 1_000 }),
      { auth: false, onError },
    );
    proxy.cutAfter((sent) => /\binfo\b/i.test(sent));
    await handler.handle(post(payment(order())));
    // Asked again by a delivery after the wait that follows a failed check (storeTimeoutMs).
    const warned = await eventually(async () => {
      await handler.handle(post(payment(order())));
      return appendOnly(failures).length > 0;
    }, 4_000);
    expect(warned).toBe(true);
    const asked = proxy.sent.filter((sent) => /\binfo\b/i.test(sent)).length;
    for (let i = 0; i < 3; i++) {
      expect((await handler.handle(post(payment(order())))).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(proxy.sent.filter((sent) => /\binfo\b/i.test(sent)).length).toBe(asked);
    expect(appendOnly(failures)).toHaveLength(1);
  });

  it("ioredis: a setup check answered after storeTimeoutMs (a slow Redis at the first delivery) still warns of appendonly no, once", async () => {
    const client = ioredis();
    const { fn } = charges();
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store: createRedisIdempotencyStore(client), storeTimeoutMs: 1_000 }),
      { auth: false, onError },
    );
    await client.ping();
    const release = proxy.holdAfter((sent) => /\binfo\b/i.test(sent));
    // Every reply on the connection waits: the claim too is answered late, the delivery refused.
    expect((await handler.handle(post(payment(order())))).status).toBe(500);
    release();
    expect(await eventually(() => appendOnly(failures).length > 0, 2_000)).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect((await handler.handle(post(payment(order())))).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(appendOnly(failures)).toHaveLength(1);
  });
});

describe("PostgreSQL: a reply lost", () => {
  let server: PostgresServer;
  let proxy: Proxy;
  let admin: pg.Pool;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    proxy = await startProxy(server.port);
    admin = new pg.Pool({ connectionString: server.url });
    admin.on("error", () => undefined);
    pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
    });
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end().catch(() => undefined);
    await admin?.end();
    await proxy?.close();
    await server?.close();
  });

  it("a claim applied whose reply was lost is released (pg does not send it again): the service's retry runs the function", async () => {
    const store = createPostgresIdempotencyStore(pool);
    const { fn, count } = charges();
    const { onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, waitMs: 1_000 }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(payment(order())))).status).toBe(200);
    const id = order();
    proxy.cutAfter((sent) => sent.includes(id));
    expect((await handler.handle(post(payment(id)))).status).toBe(500);
    expect(count()).toBe(1);
    const rows = async () =>
      (await admin.query("SELECT 1 FROM crossborder_idempotency WHERE key LIKE $1", [`%${id}`]))
        .rowCount;
    // Released in the background, through another connection of the pool.
    expect(await eventually(async () => (await rows()) === 0)).toBe(true);
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
  });

  it("a claim still waiting on a row lock when the client saw the cut lands after the first release answered false: released all the same, the retry runs the function (not 503 for leaseMs)", async () => {
    const real = createPostgresIdempotencyStore(pool);
    const answers: boolean[] = [];
    const store = {
      ...real,
      release: async (key: string, owner: string) => {
        const deleted = await real.release(key, owner);
        answers.push(deleted);
        return deleted;
      },
    };
    const { fn, count } = charges();
    const { onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      withIdempotency(fn, { store, waitMs: 1_000, storeTimeoutMs: 1_000 }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(payment(order())))).status).toBe(200);
    const id = order();
    const key = `PerformOrderPayment:${id}`;
    // The expired lease of a delivery that died, its row locked by another session (an admin
    // transaction; a claim or cleanup of the same key) until the test lets it go.
    await admin.query(
      "INSERT INTO crossborder_idempotency (key, owner, result, expires_at) VALUES ($1, 'dead', NULL, clock_timestamp() - interval '1 second')",
      [key],
    );
    const locker = await admin.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM crossborder_idempotency WHERE key = $1 FOR UPDATE", [key]);
      proxy.holdAfter((sent) => sent.includes(id));
      const first = handler.handle(post(payment(id)));
      const waiting = async () =>
        (
          await admin.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO %crossborder_idempotency%'",
          )
        ).rowCount === 1;
      // The claim is on the server, waiting for the row: the client's connection is cut now.
      expect(await eventually(waiting)).toBe(true);
      proxy.cutHeld();
      expect((await first).status).toBe(500);
      // The release found the row still the dead delivery's: nothing deleted, the claim still
      // waiting to land.
      expect(await eventually(() => answers.includes(false))).toBe(true);
      expect(await waiting()).toBe(true);
      await locker.query("COMMIT");
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      locker.release();
    }
    const rows = async () =>
      (await admin.query("SELECT 1 FROM crossborder_idempotency WHERE key = $1", [key])).rowCount;
    // The claim landed after the cut, for nobody: released by the release sent again.
    expect(await eventually(async () => (await rows()) === 0, 8_000)).toBe(true);
    // The DELETE is committed (another connection sees no row) a moment before its reply reaches
    // the store's connection: the release answers true then.
    expect(await eventually(() => answers.includes(true))).toBe(true);
    expect((await handler.handle(post(payment(id)))).status).toBe(200);
    expect(count()).toBe(2);
  });

  it("a store refusing connections: the releases of failed claims are one loop backing off, not one loop each", async () => {
    const down = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
    });
    down.on("error", () => undefined);
    try {
      const real = createPostgresIdempotencyStore(down, { createTable: false });
      let releases = 0;
      const store = {
        ...real,
        release: (key: string, owner: string) => {
          releases++;
          return real.release(key, owner);
        },
      };
      const { fn, count } = charges();
      const { onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(fn, { store, storeTimeoutMs: 50 }),
        { auth: false, onError },
      );
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () => handler.handle(post(payment(order())))),
      );
      expect(statuses.map((answer) => answer.status)).toEqual(Array(20).fill(500));
      expect(count()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // One release in flight at a time for the store, the next round after 50, 100, 200, 400 ms
      // while it fails: at most 5 in this second, whatever the number of failed claims (20
      // loops retrying from 25 ms made about 120).
      expect(releases).toBeGreaterThanOrEqual(1);
      expect(releases).toBeLessThanOrEqual(6);
    } finally {
      await down.end();
    }
  });

  it("a claim sent again by its own owner counts as claimed; another owner's is refused", async () => {
    const store = createPostgresIdempotencyStore(admin);
    const key = `again-${order()}`;
    expect(await store.claim(key, "owner-1", 30_000)).toEqual({ claimed: true });
    expect(await store.claim(key, "owner-1", 30_000)).toEqual({ claimed: true });
    expect((await store.claim(key, "owner-2", 30_000)).claimed).toBe(false);
    expect(await store.complete(key, "owner-1", "u", 60_000)).toBe(true);
    // A completed record is never claimed again, by its old owner neither.
    expect(await store.claim(key, "owner-1", 30_000)).toEqual({
      claimed: false,
      record: { state: "completed", result: "u" },
    });
  });
});
