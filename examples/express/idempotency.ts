/**
 * Where duplicate deliveries are recorded, chosen by environment variables:
 * - IDEMPOTENCY_STORE unset: no deduplication (each delivery runs).
 * - IDEMPOTENCY_STORE=memory: this process only; nothing to install.
 * - IDEMPOTENCY_STORE=redis and REDIS_URL (`npm install redis`): shared by every instance.
 * - IDEMPOTENCY_STORE=postgres and DATABASE_URL (`npm install pg`): shared by every instance;
 *   the table `crossborder_idempotency` is created on first use.
 */
import {
  createMemoryIdempotencyStore,
  type IdempotencyOptions,
  type IdempotencyStore,
} from "crossborder-callbacks";

export interface IdempotencySetup {
  /** Undefined when IDEMPOTENCY_STORE is unset. */
  readonly options: IdempotencyOptions<unknown> | undefined;
  /** Closes the database connection, at shutdown. */
  close(): Promise<void>;
}

export async function idempotencyFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): Promise<IdempotencySetup> {
  const kind = env.IDEMPOTENCY_STORE;
  if (kind === undefined || kind === "")
    return { options: undefined, close: async () => undefined };
  const leaseMs = env.IDEMPOTENCY_LEASE_MS ? Number(env.IDEMPOTENCY_LEASE_MS) : undefined;
  const setup = (store: IdempotencyStore, close: () => Promise<unknown>): IdempotencySetup => ({
    options: { store, leaseMs },
    close: async () => {
      await close();
    },
  });
  switch (kind) {
    case "memory":
      return setup(createMemoryIdempotencyStore(), async () => undefined);
    case "redis": {
      if (!env.REDIS_URL) throw new Error("IDEMPOTENCY_STORE=redis needs REDIS_URL");
      const { createClient } = await import("redis");
      const { createRedisIdempotencyStore } = await import("crossborder-callbacks/redis");
      const client = createClient({ url: env.REDIS_URL });
      // Connection errors reach the store's callers (and onError); do not crash on them here.
      client.on("error", (error: Error) => console.error(`redis: ${error.message}`));
      await client.connect();
      return setup(createRedisIdempotencyStore(client), () => client.close());
    }
    case "postgres": {
      if (!env.DATABASE_URL) throw new Error("IDEMPOTENCY_STORE=postgres needs DATABASE_URL");
      const { default: pg } = await import("pg");
      const { createPostgresIdempotencyStore } = await import("crossborder-callbacks/postgres");
      const pool = new pg.Pool({ connectionString: env.DATABASE_URL });
      pool.on("error", (error: Error) => console.error(`postgres: ${error.message}`));
      const store = createPostgresIdempotencyStore(pool);
      await store.ready();
      return setup(store, () => pool.end());
    }
    default:
      throw new Error('IDEMPOTENCY_STORE must be "memory", "redis" or "postgres"');
  }
}
