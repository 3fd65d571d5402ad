/**
 * Proof across processes (issue #12, item 7): three processes of the Express example (its app,
 * router and store selection; support/instance.ts swaps in a merchant whose side effect is a row
 * in a shared table) share one store, Redis then PostgreSQL; 1,000 orders are each delivered to
 * all three at once, for two callbacks. Then an instance is killed (SIGKILL) in the middle of the
 * function, and the redelivery after its lease runs it, once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestKeys,
  type SendCallbackResult,
  samplePayload,
  sendCallback,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";
import { ROOT, TSCONFIG_WITHOUT_PATHS } from "../adapters/support/runtime.js";
import { assertBuilt, MERCHANT_GUID } from "../examples/support/flow.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
  stopChild,
} from "../support/databases.js";

/** 400 in `npm test`; `npm run soak` sends 1,000 (MULTI_PROCESS_ORDERS). */
const ORDERS = Number(process.env.MULTI_PROCESS_ORDERS ?? 400);
const INSTANCES = 3;
const CALLBACKS = ["SendOrderToMerchant", "PerformOrderPayment"] as const;
/** Orders in flight at once: each is six requests (two callbacks, three instances). */
const CONCURRENT_ORDERS = 25;
const LEASE_MS = 1_500;

interface Instance {
  readonly baseUrl: string;
  readonly process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

const started = new Set<ChildProcess>();

function startInstance(env: Record<string, string>): Promise<Instance> {
  // `node --import tsx`, not the tsx CLI: one process, so that SIGKILL kills the server itself.
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/idempotency/support/instance.ts"],
    {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", TSX_TSCONFIG_PATH: TSCONFIG_WITHOUT_PATHS, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  started.add(child);
  child.once("exit", () => started.delete(child));
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening on" within 30 s:\n${output}`)),
      30_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({
          baseUrl: `${match[1]}/crossborder`,
          process: child,
          output: () => output,
          stop: () => stop(child),
        });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`instance exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  return stopChild(child, signal);
}

let redis: RedisServer;
let postgres: PostgresServer;
let effects: pg.Pool;
let keys: TestKeys;

beforeAll(async () => {
  assertBuilt();
  [redis, postgres, keys] = await Promise.all([startRedis(), startPostgres(), createTestKeys()]);
  effects = new pg.Pool({ connectionString: postgres.url, max: 5 });
  effects.on("error", () => undefined);
  await effects.query(`CREATE TABLE starts (callback text, order_id text, pid int);
    CREATE TABLE effects (callback text, order_id text, pid int, run text)`);
});

afterAll(async () => {
  await Promise.all([...started].map((child) => stop(child, "SIGKILL")));
  await effects?.end();
  await Promise.all([redis?.close(), postgres?.close()]);
});

function payloadOf(callback: (typeof CALLBACKS)[number], orderId: string): unknown {
  return { ...(samplePayload(callback) as unknown as Record<string, unknown>), OrderId: orderId };
}

/** Runs `work` over `items`, `limit` at a time. */
async function pooled<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

for (const store of ["redis", "postgres"] as const) {
  describe(`${INSTANCES} instances of the Express example sharing the ${store} store`, () => {
    const instances: Instance[] = [];
    const storeEnv = (): Record<string, string> =>
      store === "redis"
        ? { IDEMPOTENCY_STORE: "redis", REDIS_URL: redis.url }
        : { IDEMPOTENCY_STORE: "postgres", DATABASE_URL: postgres.url };
    const env = () => ({
      ...storeEnv(),
      SERVICE_PUBLIC_KEY: keys.publicKey,
      MERCHANT_GUID,
      EFFECTS_URL: postgres.url,
      IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
    });

    beforeAll(async () => {
      instances.push(
        ...(await Promise.all(Array.from({ length: INSTANCES }, () => startInstance(env())))),
      );
    });
    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
    });

    it(`applies ${ORDERS} orders × ${CALLBACKS.length} callbacks, each delivered to all ${INSTANCES} instances at once, exactly once`, async () => {
      const prefix = `${store.toUpperCase()}-${Date.now()}-`;
      const orderIds = Array.from({ length: ORDERS }, (_, i) => `${prefix}${i}`);
      const answers = new Map<string, SendCallbackResult[]>();
      let unanswered = 0;
      /** Why deliveries went unanswered, counted by message. */
      const unansweredWhy = new Map<string, number>();
      const began = performance.now();
      await pooled(orderIds, CONCURRENT_ORDERS, async (orderId) => {
        const token = await signServiceToken(keys.privateKey);
        await Promise.all(
          CALLBACKS.flatMap((callback) =>
            instances.map(async (instance) => {
              try {
                const result = await sendCallback(instance.baseUrl, callback, {
                  token,
                  payload: payloadOf(callback, orderId),
                  merchantGuid: MERCHANT_GUID,
                  // What is asserted is that every delivery is answered, not how fast: 150 in
                  // flight on a loaded 2-core machine (load 10+) left 9 of 6,000 without an answer
                  // within 30 s. A delivery the servers dropped or never answer still fails here.
                  timeoutMs: 300_000,
                });
                const key = `${callback}:${orderId}`;
                answers.set(key, [...(answers.get(key) ?? []), result]);
              } catch (error) {
                unanswered++;
                const why = error instanceof Error ? error.message : String(error);
                unansweredWhy.set(why, (unansweredWhy.get(why) ?? 0) + 1);
              }
            }),
          ),
        );
      });
      const seconds = (performance.now() - began) / 1000;

      const { rows } = await effects.query<{ callback: string; order_id: string; n: string }>(
        "SELECT callback, order_id, count(*) AS n FROM effects WHERE order_id LIKE $1 GROUP BY 1, 2",
        [`${prefix}%`],
      );
      const applied = new Map(
        rows.map((row) => [`${row.callback}:${row.order_id}`, Number(row.n)]),
      );
      let duplicates = 0;
      let lost = 0;
      let failures = 0;
      let inconsistent = 0;
      for (const callback of CALLBACKS) {
        for (const orderId of orderIds) {
          const key = `${callback}:${orderId}`;
          const count = applied.get(key) ?? 0;
          if (count === 0) lost++;
          if (count > 1) duplicates += count - 1;
          const results = answers.get(key) ?? [];
          failures += results.filter(
            (result) => result.status !== 200 || result.success !== true,
          ).length;
          if (new Set(results.map((result) => result.text)).size > 1) inconsistent++;
        }
      }
      const deliveries = ORDERS * CALLBACKS.length * INSTANCES;
      console.log(
        `[multi-process ${store}] ${INSTANCES} instances, ${ORDERS} orders × ${CALLBACKS.length} callbacks, ${deliveries} deliveries in ${seconds.toFixed(1)} s (${Math.round(deliveries / seconds)}/s): ` +
          `side effects ${[...applied.values()].reduce((a, b) => a + b, 0)} for ${ORDERS * CALLBACKS.length} order-callbacks, ` +
          `${duplicates} duplicates, ${lost} lost, ${failures} failures answered, ${unanswered} unanswered, ${inconsistent} orders answered differently`,
      );
      expect(
        { duplicates, lost, failures, unanswered, inconsistent },
        `unanswered: ${JSON.stringify([...unansweredWhy])}`,
      ).toEqual({
        duplicates: 0,
        lost: 0,
        failures: 0,
        unanswered: 0,
        inconsistent: 0,
      });
    }, 600_000);

    it("runs an order once more, and only once, after the instance running it is killed (SIGKILL) mid-function and its lease expires", async () => {
      const stalled = await startInstance({ ...env(), STALL: "1" });
      const orderId = `${store.toUpperCase()}-KILLED-${Date.now()}`;
      const token = await signServiceToken(keys.privateKey);
      const send = (instance: Instance) =>
        sendCallback(instance.baseUrl, "PerformOrderPayment", {
          token,
          payload: payloadOf("PerformOrderPayment", orderId),
          merchantGuid: MERCHANT_GUID,
          timeoutMs: 30_000,
        });
      const first = send(stalled).catch((error: Error) => error);
      const startsOf = async () =>
        (await effects.query("SELECT pid FROM starts WHERE order_id = $1", [orderId])).rows.map(
          (row) => row.pid as number,
        );
      // The stalled instance has claimed the order and is inside the function.
      await expect.poll(startsOf, { timeout: 10_000, interval: 20 }).toEqual([stalled.process.pid]);
      await stop(stalled.process, "SIGKILL");
      const killedAt = performance.now();
      expect(await first).toBeInstanceOf(Error); // its caller got no answer: the service redelivers

      const [a, b] = instances;
      const redelivered = await send(a as Instance);
      const waitedMs = performance.now() - killedAt;
      const again = await send(b as Instance);
      const starts = await startsOf();
      const { rows } = await effects.query("SELECT pid FROM effects WHERE order_id = $1", [
        orderId,
      ]);
      console.log(
        `[sigkill ${store}] killed pid ${stalled.process.pid} mid-function; the redelivery waited ${Math.round(waitedMs)} ms (lease ${LEASE_MS} ms) and ran it on pid ${rows[0]?.pid}; ` +
          `function started ${starts.length} times, side effect applied ${rows.length} time(s); a later repeat answered ${again.status} without running`,
      );
      expect(redelivered).toMatchObject({ status: 200, success: true });
      expect(again.text).toBe(redelivered.text);
      expect(starts).toHaveLength(2);
      expect(rows).toEqual([{ pid: (a as Instance).process.pid }]);
      // It waited for the dead lease to expire (renewed every 500 ms until the kill) rather than
      // running at once, and did not give up (503) either.
      expect(waitedMs).toBeGreaterThan(LEASE_MS / 3);
      expect(waitedMs).toBeLessThan(LEASE_MS + 3_000);
    }, 60_000);
  });
}
