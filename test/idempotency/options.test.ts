/**
 * withIdempotency's options and its stores' options, checked when they are created: a misspelt
 * key (`idempotencyStore`), a `store` that is not one, a `key` that is not a function is a
 * TypeError naming it, never a per-process memory store used without a word (duplicate orders
 * across instances) nor a 500 on every delivery.
 */
import { readFileSync } from "node:fs";
import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import {
  createPostgresIdempotencyStore,
  type PgLikeQueryable,
  postgresIdempotencySchema,
} from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore, type RedisLikeClient } from "../../src/idempotency/redis.js";
import {
  createMemoryIdempotencyStore,
  createSendOrderToMerchantHandler,
  type IdempotencyOptions,
  type IdempotencyStore,
  withIdempotency,
} from "../../src/index.js";
import { collector, post } from "../core/helpers.js";

const ok = async () => ({ InternalOrderId: "M-1" });
const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** A working value for every option withIdempotency has; the type keeps the list complete. */
const EVERY_OPTION = {
  key: (order: { OrderId?: string }) => order.OrderId,
  namespace: "shop-a",
  store: createMemoryIdempotencyStore(),
  ttlMs: 60_000,
  leaseMs: 30_000,
  waitMs: 0,
  storeTimeoutMs: 2_000,
  maxRunMs: 60_000,
  failOpen: false,
} satisfies Required<IdempotencyOptions<{ OrderId?: string }>>;

describe("withIdempotency: options checked at construction", () => {
  it("refuses an unknown option, naming it (a misnamed store is not a memory store in silence)", () => {
    const redisStore = createMemoryIdempotencyStore(); // stands for createRedisIdempotencyStore(…)
    // Compiles: built apart from the call, and the shared ttlMs defeats weak-type detection.
    const options = { idempotencyStore: redisStore, ttlMs: 60_000 };
    expect(() => withIdempotency(ok, options)).toThrow(TypeError);
    expect(() => withIdempotency(ok, options)).toThrow(
      /^withIdempotency: options has an unknown option "idempotencyStore" \(known: key, store, /,
    );
    // Open item 6: a misspelt one is named with the closest valid one.
    expect(() => withIdempotency(ok, { leaseMS: 5_000 } as never)).toThrow(
      /unknown option "leaseMS" \(known: [^)]*\); did you mean "leaseMs"\?$/,
    );
  });

  it("takes every option the README's table names, and undefined for each", () => {
    const section = readme.slice(readme.indexOf("## Redelivery"));
    const table = section.slice(
      section.indexOf("### Options"),
      section.indexOf("\n\n", section.indexOf("| option |")),
    );
    const documented = [...table.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1] as string);
    expect(documented.length).toBeGreaterThan(5);
    expect(Object.keys(EVERY_OPTION).sort()).toEqual([...documented].sort());
    expect(() => withIdempotency(ok, EVERY_OPTION)).not.toThrow();
    const unset = Object.fromEntries(documented.map((name) => [name, undefined]));
    expect(() => withIdempotency(ok, unset)).not.toThrow();
    expect(() => withIdempotency(ok, { store: null, key: null } as never)).not.toThrow();
    expect(() => withIdempotency(ok)).not.toThrow();
  });

  it("refuses options that are not an object", () => {
    for (const options of [null, "redis", 5]) {
      expect(() => withIdempotency(ok, options as never), String(options)).toThrow(
        new TypeError("withIdempotency: options must be an object"),
      );
    }
  });

  it("refuses a key that is not a function, naming key (not a 500 naming keyOf on every delivery)", () => {
    for (const key of ["OrderId", ["OrderId"], 5]) {
      expect(() => withIdempotency(ok, { key: key as never }), String(key)).toThrow(
        new TypeError(
          "withIdempotency: key must be a function (payload, context) => string | undefined",
        ),
      );
    }
  });

  it("refuses a store that is not one (the raw Redis client), naming what it lacks", async () => {
    // What createClient() has: get and set, not the five operations of a store.
    const client = { get: async () => null, set: async () => "OK" };
    expect(() => withIdempotency(ok, { store: client as never, failOpen: true })).toThrow(
      new TypeError(
        "withIdempotency: store must be an idempotency store (createRedisIdempotencyStore(client), createPostgresIdempotencyStore(pool), createMemoryIdempotencyStore(), or yours with claim, get, complete, renew and release): it has no claim",
      ),
    );
    const memory = createMemoryIdempotencyStore();
    const withoutRelease = { ...memory, release: undefined };
    expect(() => withIdempotency(ok, { store: withoutRelease as never })).toThrow(
      /it has no release$/,
    );
    for (const store of ["redis", 5, true]) {
      expect(() => withIdempotency(ok, { store: store as never }), String(store)).toThrow(
        /^withIdempotency: store must be an idempotency store/,
      );
    }
  });

  it("takes a store whose operations are a class's methods, and runs a redelivery once", async () => {
    const inner = createMemoryIdempotencyStore();
    class Store implements IdempotencyStore {
      claim(...args: Parameters<IdempotencyStore["claim"]>) {
        return inner.claim(...args);
      }
      get(key: string) {
        return inner.get(key);
      }
      complete(...args: Parameters<IdempotencyStore["complete"]>) {
        return inner.complete(...args);
      }
      renew(...args: Parameters<IdempotencyStore["renew"]>) {
        return inner.renew(...args);
      }
      release(key: string, owner: string) {
        return inner.release(key, owner);
      }
    }
    let runs = 0;
    const once = withIdempotency(
      async () => {
        runs++;
        return { InternalOrderId: "M-1" };
      },
      { store: new Store() },
    );
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(once, { auth: false, onError });
    expect((await handler.handle(post(orderText))).status).toBe(200);
    expect((await handler.handle(post(orderText))).status).toBe(200);
    expect(runs).toBe(1);
    expect(failures).toEqual([]);
  });
});

describe("stores: options checked at creation", () => {
  const redis = { evalSha: async () => null, eval: async () => null } as unknown as RedisLikeClient;
  const pool: PgLikeQueryable = { query: async () => ({ rows: [], rowCount: 0 }) };

  it("refuse an unknown option, naming it", () => {
    expect(() => createMemoryIdempotencyStore({ maxEntry: 10 } as never)).toThrow(
      new TypeError(
        'createMemoryIdempotencyStore: options has an unknown option "maxEntry" (known: maxEntries, now)',
      ),
    );
    // A misnamed prefix would share the default prefix with another application's keys.
    expect(() => createRedisIdempotencyStore(redis, { keyPrefix: "shop-a:" } as never)).toThrow(
      new TypeError(
        'createRedisIdempotencyStore: options has an unknown option "keyPrefix" (known: prefix); did you mean "prefix"?',
      ),
    );
    expect(() => createPostgresIdempotencyStore(pool, { tableName: "idem" } as never)).toThrow(
      /^createPostgresIdempotencyStore: options has an unknown option "tableName" \(known: table, schema, createTable, cleanupIntervalMs\)$/,
    );
    expect(() => postgresIdempotencySchema({ tableName: "idem" } as never)).toThrow(
      /^postgresIdempotencySchema: options has an unknown option "tableName"/,
    );
  });

  it.each([
    ["a bare string (the prefix or table alone)", "shop-a:"],
    ["a bare number (maxEntries alone)", 10_000],
    ["null", null],
    ["an array", ["shop-a:"]],
  ])("refuse options given as %s, before naming any key", (_label, options) => {
    // Not 'unknown option "0"' for a string, nor an unbounded memory store for a number.
    const refused = "options must be an object";
    expect(() => createMemoryIdempotencyStore(options as never)).toThrow(
      new TypeError(`createMemoryIdempotencyStore: ${refused} { maxEntries?, now? }`),
    );
    expect(() => createRedisIdempotencyStore(redis, options as never)).toThrow(
      new TypeError(`createRedisIdempotencyStore: ${refused} { prefix? }`),
    );
    expect(() => createPostgresIdempotencyStore(pool, options as never)).toThrow(
      new TypeError(
        `createPostgresIdempotencyStore: ${refused} { table?, schema?, createTable?, cleanupIntervalMs? }`,
      ),
    );
    expect(() => postgresIdempotencySchema(options as never)).toThrow(
      new TypeError(
        `postgresIdempotencySchema: ${refused} { table?, schema?, createTable?, cleanupIntervalMs? }`,
      ),
    );
  });

  it("take every documented option, and no options", () => {
    expect(() => createMemoryIdempotencyStore({ maxEntries: 10, now: Date.now })).not.toThrow();
    expect(() => createMemoryIdempotencyStore()).not.toThrow();
    expect(() => createRedisIdempotencyStore(redis, { prefix: "shop-a:" })).not.toThrow();
    expect(() => createRedisIdempotencyStore(redis)).not.toThrow();
    const postgres = { table: "idem", schema: "app", createTable: false, cleanupIntervalMs: 0 };
    expect(() => createPostgresIdempotencyStore(pool, postgres)).not.toThrow();
    expect(postgresIdempotencySchema(postgres)).toContain('"app"."idem"');
    expect(() => createPostgresIdempotencyStore(pool)).not.toThrow();
  });
});

describe("a node-redis client not connected (review dx-5)", () => {
  it("is accepted at creation, and the store failure report says to connect it", async () => {
    const client = createClient({ url: "redis://127.0.0.1:1" });
    // Connecting after creating the store is valid: nothing is refused here.
    const store = createRedisIdempotencyStore(client);
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(() => ({ InternalOrderId: "M-1" }), { store }),
      { auth: false, onError },
    );
    expect((await handler.handle(post(orderText))).status).toBe(500);
    expect(failures).toHaveLength(1);
    // The default onError prints the error's message with a 500's reason.
    expect(String((failures[0]?.error as Error | undefined)?.message)).toMatch(
      /the store failed to claim \(.*the client is not connected: call `await client\.connect\(\)` at start-up/,
    );
  });
});
