/**
 * `crossborder-callbacks/postgres`: the idempotency store on PostgreSQL (11 or later), through the
 * merchant's own `pg` Pool (or Client, or anything with `query(text, values)` answering `rows` and
 * `rowCount`). Nothing here imports `pg`.
 *
 * One row per key: `owner` set while running, null once completed; `expires_at` is the lease's
 * end while running and the record's end once completed, always on the database's clock, and
 * checked by every statement, so a row past it counts as absent. Beside a completed row, a row
 * under `<key>\n<owner>` names who wrote it (see `RECORDED_BY`).
 */
import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import { monotonicNow } from "../core/timers.js";
import {
  type ForgettingIdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRecord,
  UnreadableRecordError,
} from "./store.js";

/** What the store needs of a `pg` Pool or Client. */
export interface PgLikeQueryable {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

export interface PostgresIdempotencyStoreOptions {
  /** The table. Default `crossborder_idempotency`. Quoted, so any name is safe. */
  readonly table?: string | undefined;
  /**
   * Its schema. Default: with `createTable`, the schema where the connection's `search_path`
   * finds the table at first use (or creates it), named in every statement from then on; with
   * `createTable: false`, none (each statement uses its connection's `search_path`).
   */
  readonly schema?: string | undefined;
  /**
   * Create the table (and its index) on first use with `CREATE TABLE IF NOT EXISTS`, when they
   * are not there yet, and again if the table is dropped later. Default true; set false when your
   * migrations create it from `postgresIdempotencySchema()` (a role that may not create it then
   * works either way, as long as the table is there).
   */
  readonly createTable?: boolean | undefined;
  /**
   * Expired rows are deleted in the background at most this often (on use): each run deletes
   * batches of 1,000 while a batch comes back full, up to 100 batches (100,000 rows), so 14.4
   * million rows a day at the default. Default 10 minutes; 0 turns it off (call
   * `deleteExpired()` yourself).
   */
  readonly cleanupIntervalMs?: number | undefined;
}

/** The Postgres store, with its table's upkeep. */
export interface PostgresIdempotencyStore extends ForgettingIdempotencyStore {
  /** Creates the table if needed (done on first use anyway); rejects if the database refuses. */
  ready(): Promise<void>;
  /** Deletes up to `limit` (default 1,000) expired rows, in one statement; answers how many. */
  deleteExpired(limit?: number): Promise<number>;
}

const DEFAULT_TABLE = "crossborder_idempotency";

/** An identifier, double-quoted: any name is safe, none is interpreted. */
function quoteIdentifier(name: unknown, what: string): string {
  if (typeof name !== "string" || name === "" || name.includes("\u0000")) {
    throw new TypeError(`${what} must be a non-empty string without NUL characters`);
  }
  if (new TextEncoder().encode(name).length > 63) {
    throw new RangeError(`${what} must be at most 63 bytes (PostgreSQL's identifier limit)`);
  }
  return `"${name.replace(/"/g, '""')}"`;
}

const POSTGRES_OPTION_NAMES = optionNames<PostgresIdempotencyStoreOptions>({
  table: true,
  schema: true,
  createTable: true,
  cleanupIntervalMs: true,
});

/** The table's and its index's names; `owner` names the function refusing a misspelt option. */
function names(
  options: PostgresIdempotencyStoreOptions,
  owner: string,
): { table: string; index: string; indexName: string; tableName: string } {
  if (!isRecord(options as unknown)) {
    throw new TypeError(
      `${owner}: options must be an object { table?, schema?, createTable?, cleanupIntervalMs? }`,
    );
  }
  assertKnownKeys(options as Record<string, unknown>, POSTGRES_OPTION_NAMES, "options", owner);
  const tableName = options.table ?? DEFAULT_TABLE;
  const table = quoteIdentifier(tableName, "table");
  const qualified =
    options.schema === undefined ? table : `${quoteIdentifier(options.schema, "schema")}.${table}`;
  // Index names live in the table's schema and are cut at 63 bytes by PostgreSQL itself. The
  // table's first 40 characters, fewer when they take too many bytes (a table name of up to 63
  // bytes, which PostgreSQL holds, must not be refused for the index's name).
  let prefix = tableName.slice(0, 40);
  while (new TextEncoder().encode(`${prefix}_expires_at_idx`).length > 63) {
    prefix = Array.from(prefix).slice(0, -1).join("");
  }
  const indexName = `${prefix}_expires_at_idx`;
  return { table: qualified, index: quoteIdentifier(indexName, "index"), indexName, tableName };
}

/** The SQL that creates the table and its index: for a migration, with `createTable: false`. */
export function postgresIdempotencySchema(options: PostgresIdempotencyStoreOptions = {}): string {
  const { table, index } = names(options, "postgresIdempotencySchema");
  return `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  owner text,
  result text,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);`;
}

const MS = "$MS::float8 * interval '1 millisecond'";

/**
 * A completed row keeps no owner (its `owner` is null, which every version reads as completed),
 * so the owner that wrote it is kept in a row of its own beside it, under
 * `<key>` + newline + `<owner>`, with the record's expiry, an empty result and no owner: a key
 * `withIdempotency` never stores (a key holding a control character is stored hashed), never read
 * by an earlier version, deleted by the cleanup when it expires. `complete` reads it to tell this
 * owner's own record, written by a try whose answer was lost, from another run's record of an
 * equal text (review infra-5).
 */
const RECORDED_BY = "E'\\n'";

/** The rows one statement of the background cleanup deletes at most (`deleteExpired()`'s default). */
const CLEANUP_BATCH = 1000;
/** The statements one run of the background cleanup sends at most: 100,000 rows. */
const CLEANUP_BATCHES = 100;

/**
 * Whether the table, and its index on it, are there, and the schema it is in (or, when missing,
 * the schema an unqualified CREATE TABLE would make it in: the first of the search_path that
 * exists). A role granted DML only on a table its migrations created may not run the DDL
 * (PostgreSQL 15 refuses CREATE in schema public to all but its owner; CREATE INDEX IF NOT EXISTS
 * needs the table's owner), and need not.
 */
const EXISTS = `SELECT t.oid IS NOT NULL AS has_table,
  EXISTS (SELECT 1 FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = t.oid AND i.relname = $2) AS has_index,
  COALESCE((SELECT n.nspname FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = t.oid),
    pg_catalog.current_schema()) AS schema
FROM (SELECT pg_catalog.to_regclass($1::text) AS oid) t`;

/** Errors of two `CREATE … IF NOT EXISTS` racing: the loser retries once and finds the table. */
const RACED_DDL = new Set(["42P07", "23505", "42710"]);

/**
 * A statement that lost a race to a concurrent one under a session default of REPEATABLE READ or
 * SERIALIZABLE (`40001`: "could not serialize access due to concurrent update", the loser of two
 * claims of one key; also a claim meeting the cleanup's delete), or a deadlock (`40P01`): it was
 * rolled back, nothing of it applied, and PostgreSQL's documentation says to send it again. Sent
 * again with a new snapshot, it sees the winner's row, and answers as under READ COMMITTED (the
 * claim answers the running lease). Before, it was a store outage: 500, or with `failOpen` the
 * function ran a second time on a healthy database (review chaos-1).
 */
const SERIALIZATION_FAILURES = new Set(["40001", "40P01"]);
/** Times a statement that met a serialization failure is sent again, a few milliseconds apart. */
const SERIALIZATION_RETRIES = 10;
/** `undefined_table`: the table was dropped (or the database restored without it). */
const UNDEFINED_TABLE = "42P01";
/** `invalid_schema_name`: no schema to create the table in. */
const INVALID_SCHEMA_NAME = "3F000";
/** `insufficient_privilege`: "permission denied for schema", "must be owner of table". */
const INSUFFICIENT_PRIVILEGE = "42501";

function codeOf(error: unknown): string {
  return String((error as { code?: unknown } | null | undefined)?.code);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error naming what to do, keeping the database's SQLSTATE as its `code`. */
function setupError(message: string, cause: unknown): Error {
  const error = new Error(message, { cause });
  Object.defineProperty(error, "code", { value: codeOf(cause), enumerable: true });
  return error;
}

/**
 * The last serialization failure of a statement sent `SERIALIZATION_RETRIES` times again: its
 * name, message (saying it was retried) and SQLSTATE `code`, the database's error as its cause.
 */
function retriesExhausted(cause: unknown): Error {
  const error = setupError(
    `${messageOf(cause)} (still failing after ${SERIALIZATION_RETRIES} retries)`,
    cause,
  );
  const name = (cause as { name?: unknown } | null | undefined)?.name;
  if (typeof name === "string" && name !== "") error.name = name;
  return error;
}

/** Sends a statement again while it fails with a serialization failure, up to the bound. */
async function retryingSerializationFailures<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!SERIALIZATION_FAILURES.has(codeOf(error))) throw error;
      // Given up: said so (review observe-4), or it reads as the single conflict that is retried.
      if (attempt > SERIALIZATION_RETRIES) throw retriesExhausted(error);
      // Apart by a random few milliseconds, so that statements that collided do not again.
      const wait = Math.random() * Math.min(2 ** attempt, 50);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Creates the PostgreSQL store over your pool. The table is created on first use unless
 * `createTable: false`; a claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE` that only takes
 * over an expired row, so two instances claiming one key at once never both succeed, or the
 * lease of the same owner (a claim sent again: pg does not resend a statement after a dropped
 * connection, but a pool or driver of your own might).
 */
export function createPostgresIdempotencyStore(
  pool: PgLikeQueryable,
  options: PostgresIdempotencyStoreOptions = {},
): PostgresIdempotencyStore {
  if (pool === null || typeof pool !== "object" || typeof pool.query !== "function") {
    throw new TypeError("createPostgresIdempotencyStore: pass a pg Pool (new Pool(…)) or Client");
  }
  const { table, indexName, tableName } = names(options, "createPostgresIdempotencyStore");
  const createTable = options.createTable ?? true;
  const cleanupIntervalMs = options.cleanupIntervalMs ?? 10 * 60_000;
  if (!Number.isSafeInteger(cleanupIntervalMs) || cleanupIntervalMs < 0) {
    throw new RangeError("cleanupIntervalMs must be a whole number of milliseconds, 0 or more");
  }
  /** The statements on the table named `at` (quoted, schema-qualified once known). */
  const statements = (at: string) => ({
    claim: `INSERT INTO ${at} AS r (key, owner, result, expires_at)
VALUES ($1, $2, NULL, clock_timestamp() + ${MS.replace("$MS", "$3")})
ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, result = NULL, expires_at = EXCLUDED.expires_at
WHERE r.expires_at <= clock_timestamp() OR r.owner = EXCLUDED.owner
RETURNING 1`,
    // No remaining time for an expires_at of 'infinity': PostgreSQL 15 refuses the subtraction
    // ("cannot subtract infinite timestamps"), which failed every read of the key.
    get: `SELECT owner, result,
  CASE WHEN isfinite(expires_at)
    THEN (EXTRACT(EPOCH FROM (expires_at - clock_timestamp())) * 1000)::float8 END AS remaining
FROM ${at} WHERE key = $1 AND expires_at > clock_timestamp()`,
    // The record, and beside it its writer's mark (see RECORDED_BY), in one statement; answers
    // `done` when written now, `mine` when this owner's record of this result is there already.
    complete: `WITH done AS (
  INSERT INTO ${at} AS r (key, owner, result, expires_at)
  VALUES ($1::text, NULL, $3::text, clock_timestamp() + ${MS.replace("$MS", "$4")})
  ON CONFLICT (key) DO UPDATE SET owner = NULL, result = EXCLUDED.result, expires_at = EXCLUDED.expires_at
  WHERE r.owner = $2::text OR r.expires_at <= clock_timestamp()
  RETURNING expires_at
), marked AS (
  INSERT INTO ${at} AS m (key, owner, result, expires_at)
  SELECT $1::text || ${RECORDED_BY} || $2::text, NULL, '', expires_at FROM done
  ON CONFLICT (key) DO UPDATE SET owner = NULL, result = '', expires_at = EXCLUDED.expires_at
)
SELECT EXISTS (SELECT 1 FROM done) AS done,
  EXISTS (SELECT 1 FROM ${at} WHERE key = $1::text AND owner IS NULL AND result = $3::text
    AND expires_at > clock_timestamp())
  AND EXISTS (SELECT 1 FROM ${at} WHERE key = $1::text || ${RECORDED_BY} || $2::text
    AND expires_at > clock_timestamp()) AS mine`,
    // `mine` again, in a statement of its own: under READ COMMITTED a statement reads one
    // snapshot, taken before it waited on the row, so `complete`'s own `mine` misses this owner's
    // earlier try that committed while it waited (review second-idem2-1).
    recorded: `SELECT EXISTS (SELECT 1 FROM ${at} WHERE key = $1::text AND owner IS NULL
    AND result = $3::text AND expires_at > clock_timestamp())
  AND EXISTS (SELECT 1 FROM ${at} WHERE key = $1::text || ${RECORDED_BY} || $2::text
    AND expires_at > clock_timestamp()) AS mine`,
    renew: `UPDATE ${at} SET expires_at = clock_timestamp() + ${MS.replace("$MS", "$3")}
WHERE key = $1 AND owner = $2 AND expires_at > clock_timestamp()`,
    release: `DELETE FROM ${at} WHERE key = $1 AND owner = $2`,
    forget: `DELETE FROM ${at} WHERE key = $1 AND owner IS NULL AND result = $2`,
    // Expiry checked again on the row deleted: a claim may take a row over (and commit) while
    // this statement waits for its lock, and the re-check then sees the new lease.
    deleteExpired: `DELETE FROM ${at} WHERE key IN (
  SELECT key FROM ${at} WHERE expires_at <= clock_timestamp() LIMIT $1)
AND expires_at <= clock_timestamp()`,
  });

  /**
   * The statements sent: on the table as named until, with `createTable` and no `schema`, its
   * schema is known (found, or created in, at first use); from then on on that schema's table,
   * whatever the search_path of the connection a statement runs on. An app sharing the pool may
   * move its connections to another schema (`SET search_path`, schema per tenant): a statement
   * there met 42P01, was taken for a dropped table, and a second, empty table was created in that
   * schema, where a running key was claimed again (review second-hostile-1).
   */
  let sql = statements(table);
  /** The table's schema, once known: `schema`, or the one found at first use. */
  let schemaOfTable = options.schema;

  async function create(): Promise<void> {
    const at =
      schemaOfTable === undefined
        ? table
        : `${quoteIdentifier(schemaOfTable, "schema")}.${quoteIdentifier(tableName, "table")}`;
    const found = (await retryingSerializationFailures(() => pool.query(EXISTS, [at, indexName])))
      .rows[0];
    const schema = schemaOfTable ?? found?.schema;
    if (typeof schema !== "string") {
      throw setupError(
        `no schema to create the idempotency table ${table} in: the connection's search_path names none that exists; pass the schema option`,
        Object.assign(new Error("no schema has been selected to create in"), {
          code: INVALID_SCHEMA_NAME,
        }),
      );
    }
    const settle = () => {
      if (schemaOfTable !== undefined) return;
      schemaOfTable = schema;
      sql = statements(
        `${quoteIdentifier(schema, "schema")}.${quoteIdentifier(tableName, "table")}`,
      );
    };
    if (found?.has_table === true && found.has_index === true) return settle();
    const ddl = postgresIdempotencySchema({ table: tableName, schema });
    try {
      try {
        await pool.query(ddl);
      } catch (error) {
        if (!RACED_DDL.has(codeOf(error))) throw error;
        await pool.query(ddl);
      }
    } catch (error) {
      if (codeOf(error) !== INSUFFICIENT_PRIVILEGE) throw error;
      // The table is there, its index is not, and this role may not create it: the store works
      // without it (the index only speeds up the cleanup).
      if (found?.has_table === true) return settle();
      throw setupError(
        `could not create the idempotency table ${table} (${messageOf(error)}): create it from postgresIdempotencySchema() in a migration run by a role that may, and pass createTable: false; or grant this role CREATE on the schema`,
        error,
      );
    }
    settle();
  }

  let created: Promise<void> | undefined;
  function ready(): Promise<void> {
    if (!createTable) return Promise.resolve();
    if (created === undefined) {
      const attempt = create();
      created = attempt;
      // A failure is not remembered: the next operation tries again.
      attempt.catch(() => {
        if (created === attempt) created = undefined;
      });
    }
    return created;
  }

  // A monotonic clock: a backward step of the wall clock must not hold the cleanup back by as much.
  let nextCleanup = monotonicNow() + cleanupIntervalMs;
  let cleaning = false;
  /**
   * At most once per `cleanupIntervalMs`, on use, and one run at a time: batches of
   * `CLEANUP_BATCH` rows while a batch comes back full, at most `CLEANUP_BATCHES` of them. One
   * batch a run (as before) deleted 144,000 rows a day at most, so the table of a merchant with
   * more deliveries than that grew by the difference every day (review soak-1).
   */
  function cleanupSoon(): void {
    if (cleanupIntervalMs === 0 || cleaning || monotonicNow() < nextCleanup) return;
    nextCleanup = monotonicNow() + cleanupIntervalMs;
    cleaning = true;
    cleanup()
      .catch(() => undefined)
      .finally(() => {
        cleaning = false;
      });
  }

  async function cleanup(): Promise<void> {
    for (let batch = 0; batch < CLEANUP_BATCHES; batch++) {
      // Each batch is its own statement and its own transaction; between two, the deliveries'
      // statements waiting for the pool go first.
      if (batch > 0) await new Promise((resolve) => setImmediate(resolve));
      if ((await deleteExpired(CLEANUP_BATCH)) < CLEANUP_BATCH) return;
    }
  }

  /**
   * Every statement of the store: sent again on a serialization failure (above); a table found
   * missing (dropped after first use, the database restored without it) is created again once,
   * with `createTable`, by one statement for all those that found it missing, and otherwise named
   * with what to do.
   */
  async function query(statement: keyof typeof sql, values: unknown[]) {
    for (let recreated = false; ; recreated = true) {
      const made = ready();
      await made;
      // Read once the table's schema is known (above), and sent again as it is.
      const text = sql[statement];
      try {
        return await retryingSerializationFailures(() => pool.query(text, values));
      } catch (error) {
        if (codeOf(error) !== UNDEFINED_TABLE) throw error;
        if (!createTable) {
          throw setupError(
            `the idempotency table ${table} does not exist (${messageOf(error)}) and createTable: false: create it from postgresIdempotencySchema() in your migrations, or leave createTable at true`,
            error,
          );
        }
        if (recreated) throw error;
        if (created === made) created = undefined;
      }
    }
  }

  /**
   * The row's record. A lease that never ends (expires_at 'infinity', which this store never
   * writes) is unreadable: read as live, it would hold every delivery to a 503 forever. A record
   * that never expires is a record.
   */
  function recordOf(
    key: string,
    row: Record<string, unknown> | undefined,
  ): IdempotencyRecord | undefined {
    if (row === undefined) return undefined;
    if (row.owner === null) return { state: "completed", result: String(row.result ?? "") };
    if (row.remaining === null) {
      throw new UnreadableRecordError(
        `unreadable idempotency record under ${key} in ${table}: a lease that never ends (expires_at infinity); delete the row to let the next delivery run`,
      );
    }
    return { state: "running", leaseRemainingMs: Math.max(0, Math.round(Number(row.remaining))) };
  }

  async function deleteExpired(limit = CLEANUP_BATCH): Promise<number> {
    const result = await query("deleteExpired", [limit]);
    return result.rowCount ?? 0;
  }

  return {
    ready,
    deleteExpired,
    async claim(key, owner, leaseMs): Promise<IdempotencyClaim> {
      cleanupSoon();
      // The row seen by the claim may expire before it is read: then claim again.
      for (let attempt = 0; ; attempt++) {
        const inserted = await query("claim", [key, owner, leaseMs]);
        if ((inserted.rowCount ?? 0) > 0) return { claimed: true };
        const record = recordOf(key, (await query("get", [key])).rows[0]);
        if (record !== undefined) return { claimed: false, record };
        if (attempt >= 3) throw new Error("the idempotency row kept changing under the claim");
      }
    },
    async get(key) {
      return recordOf(key, (await query("get", [key])).rows[0]);
    },
    async complete(key, owner, result, ttlMs) {
      const values = [key, owner, result, ttlMs];
      const row = (await query("complete", values)).rows[0];
      if (row?.done === true || row?.mine === true) return true;
      return (await query("recorded", values.slice(0, 3))).rows[0]?.mine === true;
    },
    async renew(key, owner, leaseMs) {
      return ((await query("renew", [key, owner, leaseMs])).rowCount ?? 0) > 0;
    },
    async release(key, owner) {
      return ((await query("release", [key, owner])).rowCount ?? 0) > 0;
    },
    async forget(key, result) {
      return ((await query("forget", [key, result])).rowCount ?? 0) > 0;
    },
  };
}

export type {
  ForgettingIdempotencyStore,
  IdempotencyClaim,
  IdempotencyRecord,
  IdempotencyStore,
} from "./store.js";
