/** The store contract's conformance suite, on every store the package ships, on real servers. */
import { Redis as IoRedis5 } from "ioredis";
import { Redis as IoRedis6 } from "ioredis6";
import pg from "pg";
import { createClient as createClient5 } from "redis";
import { createClient as createClient4 } from "redis4";
import { createClient as createClient6 } from "redis6";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresIdempotencyStore,
  postgresIdempotencySchema,
} from "../../src/idempotency/postgres.js";
import { createRedisIdempotencyStore, type RedisLikeClient } from "../../src/idempotency/redis.js";
import { createMemoryIdempotencyStore, type IdempotencyStore } from "../../src/index.js";
import { idempotencyStoreConformance } from "../../src/testing/index.js";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "../support/databases.js";

function declare(makeStore: () => IdempotencyStore | Promise<IdempotencyStore>): void {
  // A wider time unit than the default: the suite shares two cores with every other test file.
  const checks = idempotencyStoreConformance(makeStore, { unitMs: 400 });
  it("has the checks it documents", () => {
    expect(checks.length).toBeGreaterThanOrEqual(15);
    expect(new Set(checks.map((check) => check.name)).size).toBe(checks.length);
  });
  for (const check of checks) it.concurrent(check.name, check.run);
}

describe("conformance: memory store", () => {
  declare(() => createMemoryIdempotencyStore());
});

describe("conformance: the suite fails a store that breaks the contract", () => {
  it("flags a store whose claims all succeed (no atomicity)", async () => {
    const broken: IdempotencyStore = {
      ...createMemoryIdempotencyStore(),
      claim: () => ({ claimed: true }),
    };
    const checks = idempotencyStoreConformance(() => broken);
    const failures: string[] = [];
    for (const check of checks) {
      await check.run().catch((error: Error) => failures.push(`${check.name}: ${error.message}`));
    }
    expect(failures.join("\n")).toContain("20 concurrent claims were granted");
    expect(failures.length).toBeGreaterThan(5);
  });

  it("flags a store that never expires records", async () => {
    const memory = createMemoryIdempotencyStore();
    const forever: IdempotencyStore = {
      ...memory,
      complete: (key, owner, result) => memory.complete(key, owner, result, 3_600_000),
    };
    const check = idempotencyStoreConformance(() => forever).find((each) =>
      each.name.startsWith("a completed record expires"),
    );
    await expect(check?.run()).rejects.toThrow("get still answers an expired record");
  });
});

describe("conformance: Redis store (redis-server)", () => {
  let server: RedisServer;
  const clients: { quit(): Promise<unknown> }[] = [];
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
    await server?.close();
  });

  /** Connected, and closed after the file. Typed as each package types its client: no casts. */
  async function connected<T extends { connect(): Promise<unknown>; quit(): Promise<unknown> }>(
    client: T,
  ): Promise<T> {
    await client.connect();
    clients.push(client);
    return client;
  }
  function ioredis<T extends { quit(): Promise<unknown> }>(client: T): T {
    clients.push(client);
    return client;
  }
  const variants: [string, () => Promise<RedisLikeClient>][] = [
    ["redis v4", () => connected(createClient4({ url: server.url }))],
    ["redis v5", () => connected(createClient5({ url: server.url }))],
    ["redis v6", () => connected(createClient6({ url: server.url }))],
    ["ioredis v5", async () => ioredis(new IoRedis5(server.url))],
    ["ioredis v6", async () => ioredis(new IoRedis6(server.url))],
  ];
  for (const [name, connect] of variants) {
    describe(name, () => {
      let store: IdempotencyStore | undefined;
      declare(async () => {
        store ??= createRedisIdempotencyStore(await connect(), { prefix: `test:${name}:` });
        return store;
      });
    });
  }
});

describe("conformance: PostgreSQL store (initdb + postgres)", () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 30 });
    // An idle connection's error (the server stopping) is the pool's to report, not a crash.
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });

  describe("default table, created on first use", () => {
    declare(() => createPostgresIdempotencyStore(pool));
  });

  describe('a schema and a table whose names need quoting ("odd schema"."we""ird; table")', () => {
    let schema: Promise<unknown> | undefined;
    declare(async () => {
      schema ??= pool.query('CREATE SCHEMA "odd schema"');
      await schema;
      return createPostgresIdempotencyStore(pool, { schema: "odd schema", table: 'we"ird; table' });
    });
  });

  describe("a table made by a migration (createTable: false)", () => {
    const options = { table: "migrated_idempotency", createTable: false } as const;
    let migration: Promise<unknown> | undefined;
    declare(async () => {
      migration ??= pool.query(postgresIdempotencySchema(options));
      await migration;
      return createPostgresIdempotencyStore(pool, options);
    });
  });
});
