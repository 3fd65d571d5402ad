// A store whose database is down on a dual-stack host (`localhost` as ::1 and 127.0.0.1, as in
// Docker's and macOS's /etc/hosts) fails with Node's AggregateError, whose message is empty: the
// cause is in its `code` and its inner errors. onError and the default console line must name it
// (review ops-2), not print "(AggregateError: )".
import net from "node:net";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { createPostgresIdempotencyStore } from "../../src/idempotency/postgres.js";
import {
  type CallbackFailure,
  createUpdateOrderStatusHandler,
  IdempotencyStoreError,
  withIdempotency,
} from "../../src/index.js";

// "localhost" as Docker's /etc/hosts resolves it: ::1 and 127.0.0.1 (port 1: nothing listens).
const lookup = (_host: string, options: { all?: boolean }, done: (...args: unknown[]) => void) =>
  options.all
    ? done(null, [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ])
    : done(null, "127.0.0.1", 4);
class DualStackSocket extends net.Socket {
  override connect(...args: unknown[]): this {
    const [port, host] = args as [number, string];
    return super.connect({ port, host, lookup } as net.TcpNetConnectOpts);
  }
}
const body = '{"OrderId":"GE-1","StatusCode":"x","MerchantGUID":"g"}';
const downPool = () => {
  const pool = new pg.Pool({
    host: "localhost",
    port: 1,
    stream: () => new DualStackSocket(),
  } as pg.PoolConfig);
  pool.on("error", () => {});
  return pool;
};

/** What Node's connect gives on a dual-stack host: an AggregateError with no message. */
function dualStackRefusal(): AggregateError {
  const refused = (address: string) =>
    Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), { code: "ECONNREFUSED" });
  return Object.assign(new AggregateError([refused("::1"), refused("127.0.0.1")], ""), {
    code: "ECONNREFUSED",
  });
}

describe("an error with an empty message is named by its code and inner errors", () => {
  it("a real pg.Pool that cannot connect: onError's IdempotencyStoreError names ECONNREFUSED", async () => {
    const pool = downPool();
    const store = createPostgresIdempotencyStore(pool, { createTable: false });
    const failures: CallbackFailure[] = [];
    const handler = createUpdateOrderStatusHandler(
      withIdempotency(() => {}, { store }),
      {
        auth: false,
        onError: (failure) => void failures.push(failure),
      },
    );
    const response = await handler.handle({ method: "POST", url: "/x", headers: {}, body });
    await pool.end().catch(() => {});
    expect(response.status).toBe(500);
    const error = failures[0]?.error as (Error & { code?: string }) | undefined;
    expect(error?.message).toMatch(/store failed to claim \(AggregateError: ECONNREFUSED/);
    expect(error?.message).toMatch(/connect ECONNREFUSED ::1:1/);
    expect(error?.code).toBe("ECONNREFUSED");
  });

  it("the error itself: IdempotencyStoreError keeps the cause's string code", () => {
    const error = new IdempotencyStoreError("claim", dualStackRefusal());
    expect(error.message).toContain(
      "(AggregateError: ECONNREFUSED (connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432))",
    );
    expect((error as Error & { code?: unknown }).code).toBe("ECONNREFUSED");
  });

  it("the default console line of the merchant's own query failing so names it", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const pool = downPool();
    const handler = createUpdateOrderStatusHandler(
      async () => {
        await pool.query("select 1");
      },
      { auth: false },
    );
    await handler.handle({ method: "POST", url: "/x", headers: {}, body });
    await pool.end().catch(() => {});
    const line = String(spy.mock.calls[0]?.[0]);
    spy.mockRestore();
    expect(line).toMatch(/the handler threw \(AggregateError: ECONNREFUSED \(connect ECONNREFUSED/);
  });

  it("onError's copy of a thrown error without a message: its code and inner messages, masked", async () => {
    const failures: CallbackFailure[] = [];
    const inner = new Error("declined 4111 1111 1111 1111");
    const thrown = Object.assign(new AggregateError([inner], ""), { code: "E_PROVIDER" });
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw thrown;
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    await handler.handle({ method: "POST", url: "/x", headers: {}, body });
    const error = failures[0]?.error as Error;
    expect(error.name).toBe("AggregateError");
    expect(error.message).toMatch(/^E_PROVIDER \(declined /);
    expect(error.message).not.toContain("4111 1111 1111 1111");
  });
});

// Review observe-4: a statement that met a serialization failure on every one of its retries
// reached onError as a single conflict ("could not serialize access …"), the failure the README
// says is handled: nothing told a storm from a bug in the retry.
describe("PostgreSQL serialization failures past the retries (observe-4)", () => {
  it.each(["40001", "40P01"])(
    "SQLSTATE %s: the error says it was retried, and keeps the code",
    async (code) => {
      let sent = 0;
      const pool = {
        query: async () => {
          sent++;
          throw Object.assign(new Error("could not serialize access due to concurrent update"), {
            code,
          });
        },
      };
      const failures: CallbackFailure[] = [];
      const handler = createUpdateOrderStatusHandler(
        withIdempotency(() => undefined, {
          store: createPostgresIdempotencyStore(pool as never, { createTable: false }),
          storeTimeoutMs: 5000,
        }),
        { auth: false, onError: (failure) => void failures.push(failure) },
      );
      const response = await handler.handle({ method: "POST", url: "/", headers: {}, body });
      expect(response.status).toBe(500);
      expect(sent).toBeGreaterThanOrEqual(11); // the claim and its 10 retries
      const error = failures[0]?.error as IdempotencyStoreError;
      expect(error).toBeInstanceOf(IdempotencyStoreError);
      expect(error.operation).toBe("claim");
      expect(error.code).toBe(code);
      expect(error.message).toContain(
        "could not serialize access due to concurrent update (still failing after 10 retries)",
      );
    },
  );
});
