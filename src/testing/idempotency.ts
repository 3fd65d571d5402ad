/**
 * The conformance suite of the idempotency store contract: every store this package ships passes
 * it, and so must yours (DynamoDB, MySQL…). Framework-free: a list of named async checks, each
 * throwing on failure, to hand to any runner.
 *
 * @example
 * // vitest or jest
 * for (const check of idempotencyStoreConformance(() => createMyStore())) it(check.name, check.run);
 * // node:test
 * for (const check of idempotencyStoreConformance(() => createMyStore())) test(check.name, check.run);
 */
import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { isRecord } from "../core/objects.js";
import type { IdempotencyRecord, IdempotencyStore } from "../idempotency/store.js";

export interface IdempotencyStoreCheck {
  readonly name: string;
  readonly run: () => Promise<void>;
}

export interface IdempotencyStoreConformanceOptions {
  /**
   * The unit of the timing checks, in milliseconds: leases and records of one unit, waits of two.
   * Raise it for a store far away. Default 250. A timing check whose steps returned too late for
   * their window to prove anything runs again at 2, 4 and 8 times the unit.
   */
  readonly unitMs?: number | undefined;
}

const CONFORMANCE_OPTION_NAMES = optionNames<IdempotencyStoreConformanceOptions>({ unitMs: true });

class ConformanceError extends Error {
  override readonly name = "ConformanceError";
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ConformanceError(message);
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** Why a step was too late to prove anything: `elapsed` past its `window`; else undefined. */
function lateBy(elapsed: number, window: number, what: string): string | undefined {
  return elapsed >= window
    ? `${what} ${Math.round(elapsed)} ms after it began (window ${window} ms)`
    : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function owner(): string {
  return crypto.randomUUID();
}

/**
 * A timing check whose steps took longer than the window that makes them conclusive (a loaded
 * machine's lost time slices, not the store): run again at twice the unit.
 */
class Inconclusive {
  constructor(readonly why: string) {}
}

/** Runs `body`; a ConformanceError it throws is `Inconclusive` when `late()` says so. */
async function unlessLate(
  body: () => Promise<void>,
  late: () => string | undefined,
): Promise<Inconclusive | undefined> {
  try {
    await body();
    return undefined;
  } catch (error) {
    if (!(error instanceof ConformanceError)) throw error;
    const why = late();
    if (why === undefined) throw error;
    return new Inconclusive(`${error.message}, but ${why}`);
  }
}

/**
 * The checks, each on a store from `makeStore` (a fresh one, or a shared one: every check uses
 * keys of its own).
 */
export function idempotencyStoreConformance(
  makeStore: () => IdempotencyStore | Promise<IdempotencyStore>,
  options: IdempotencyStoreConformanceOptions = {},
): IdempotencyStoreCheck[] {
  // A misspelt option (`unit`) would run the timing checks at the default unit, in silence.
  if (isRecord(options)) {
    assertKnownKeys(options, CONFORMANCE_OPTION_NAMES, "options", "idempotencyStoreConformance");
  }
  const unit = options.unitMs ?? 250;
  const long = 60_000;
  const run = crypto.randomUUID().slice(0, 8);
  let counter = 0;
  const keyOf = (name: string) => `conformance:${run}:${++counter}:${name}`;

  function define(
    name: string,
    body: (store: IdempotencyStore, key: string) => Promise<void>,
  ): IdempotencyStoreCheck {
    return { name, run: async () => body(await makeStore(), keyOf(name.replace(/\W+/g, "-"))) };
  }

  /**
   * A check that must finish some steps within a unit of others: run at `unit`, and again at 2, 4
   * and 8 times it while the machine was too slow for the window to prove anything (a store that
   * breaks the contract fails within the window, at any unit).
   */
  function defineTimed(
    name: string,
    body: (store: IdempotencyStore, key: string, unit: number) => Promise<Inconclusive | undefined>,
  ): IdempotencyStoreCheck {
    return define(name, async (store, key) => {
      const tried: string[] = [];
      for (let attempt = 0, each = unit; attempt < 4; attempt++, each *= 2) {
        const outcome = await body(store, `${key}:${attempt}`, each);
        if (outcome === undefined) return;
        tried.push(`at ${each} ms: ${outcome.why}`);
      }
      throw new ConformanceError(
        `inconclusive, the machine was too slow at every unit (raise unitMs): ${tried.join("; ")}`,
      );
    });
  }

  async function expectRunning(store: IdempotencyStore, key: string, context: string) {
    const claim = await store.claim(key, owner(), long);
    check(!claim.claimed, `${context}: a second claim was granted`);
    check(
      claim.record.state === "running",
      `${context}: expected running, got ${show(claim.record)}`,
    );
    return claim.record;
  }

  async function expectCompleted(
    store: IdempotencyStore,
    key: string,
    result: string,
    context: string,
  ) {
    const record: IdempotencyRecord | undefined = await store.get(key);
    check(
      record?.state === "completed" && record.result === result,
      `${context}: get answered ${show(record)}`,
    );
    const claim = await store.claim(key, owner(), long);
    check(
      !claim.claimed && claim.record.state === "completed" && claim.record.result === result,
      `${context}: a claim of a completed key answered ${show(claim)}`,
    );
  }

  return [
    define("a fresh key is claimed, and get then answers it running", async (store, key) => {
      check((await store.get(key)) === undefined, "get of an unknown key is not undefined");
      const claim = await store.claim(key, owner(), long);
      check(claim.claimed, `the first claim was refused: ${show(claim)}`);
      const record = await store.get(key);
      check(record?.state === "running", `get answered ${show(record)}`);
      check(
        record.leaseRemainingMs > 0 && record.leaseRemainingMs <= long,
        `leaseRemainingMs ${record.leaseRemainingMs} is not within (0, ${long}]`,
      );
    }),

    define(
      "a claimed key is refused to another owner, with the running record",
      async (store, key) => {
        check((await store.claim(key, owner(), long)).claimed, "the first claim was refused");
        const record = await expectRunning(store, key, "second claim");
        check(
          record.state === "running" && record.leaseRemainingMs > long / 2,
          `leaseRemainingMs ${show(record)} does not reflect a ${long} ms lease`,
        );
      },
    ),

    define("twenty claims of one key at once: exactly one is granted", async (store, key) => {
      const claims = await Promise.all(
        Array.from({ length: 20 }, () => store.claim(key, owner(), long)),
      );
      const granted = claims.filter((claim) => claim.claimed).length;
      check(granted === 1, `${granted} of 20 concurrent claims were granted`);
    }),

    define("the owner completes; repeats then get the result, unchanged", async (store, key) => {
      const me = owner();
      check((await store.claim(key, me, long)).claimed, "the claim was refused");
      const result = `j${JSON.stringify({ InternalOrderId: "M-1", note: 'naïve ✓ "quoted" : | \\ \n' })}`;
      check(
        (await store.complete(key, me, result, long)) === true,
        "complete by the owner answered false",
      );
      await expectCompleted(store, key, result, "after complete");
    }),

    define(
      "results of any size and content are kept exactly (empty, 100 kB, separators)",
      async (store, key) => {
        for (const [index, result] of ["", "u", "c:1:r:x", "x".repeat(100_000)].entries()) {
          const me = owner();
          const each = `${key}:${index}`;
          check((await store.claim(each, me, long)).claimed, `claim ${index} was refused`);
          check(await store.complete(each, me, result, long), `complete ${index} answered false`);
          await expectCompleted(store, each, result, `result ${index} (${result.length} chars)`);
        }
      },
    ),

    define("another owner cannot complete, renew or release a claimed key", async (store, key) => {
      check((await store.claim(key, owner(), long)).claimed, "the claim was refused");
      const stranger = owner();
      check(
        (await store.complete(key, stranger, "jnope", long)) === false,
        "a stranger completed it",
      );
      check((await store.renew(key, stranger, long)) === false, "a stranger renewed it");
      check((await store.release(key, stranger)) === false, "a stranger released it");
      await expectRunning(store, key, "after a stranger's attempts");
    }),

    define("a completed key is not completed again, renewed or released", async (store, key) => {
      const me = owner();
      check((await store.claim(key, me, long)).claimed, "the claim was refused");
      check(await store.complete(key, me, "jfirst", long), "complete answered false");
      check((await store.complete(key, me, "jsecond", long)) === false, "completed twice");
      check(
        (await store.complete(key, owner(), "jthird", long)) === false,
        "a stranger overwrote it",
      );
      check((await store.renew(key, me, long)) === false, "a completed key was renewed");
      check((await store.release(key, me)) === false, "a completed key was released");
      await expectCompleted(store, key, "jfirst", "after the attempts");
    }),

    define(
      "the owner's complete sent again answers true; another owner's of an equal text false",
      async (store, key) => {
        const me = owner();
        check((await store.claim(key, me, long)).claimed, "the claim was refused");
        check(await store.complete(key, me, "jsame", long), "complete answered false");
        check(
          (await store.complete(key, me, "jsame", long)) === true,
          "the owner's own complete, sent again (its first answer lost), answered false: withIdempotency would report that the function may have run twice",
        );
        check(
          (await store.complete(key, owner(), "jsame", long)) === false,
          "another owner's complete of an equal text over a live record answered true: withIdempotency would not report a second run",
        );
        await expectCompleted(store, key, "jsame", "after the attempts");
      },
    ),

    define("release by the owner frees the key for the next claim", async (store, key) => {
      const me = owner();
      check((await store.claim(key, me, long)).claimed, "the claim was refused");
      check((await store.release(key, me)) === true, "release by the owner answered false");
      check((await store.get(key)) === undefined, "get still answers a released key");
      check((await store.claim(key, owner(), long)).claimed, "a released key could not be claimed");
    }),

    define(
      "an unknown key: complete writes it, renew and release answer false",
      async (store, key) => {
        check(
          (await store.renew(key, owner(), long)) === false,
          "renew of an unknown key answered true",
        );
        check(
          (await store.release(key, owner())) === false,
          "release of an unknown key answered true",
        );
        check(
          await store.complete(key, owner(), "jlate", long),
          "complete of an unknown key answered false",
        );
        await expectCompleted(store, key, "jlate", "after completing an unknown key");
      },
    ),

    define(
      "a lease that is not renewed expires: the key can be claimed again (a crash)",
      async (store, key) => {
        const crashed = owner();
        check((await store.claim(key, crashed, unit)).claimed, "the claim was refused");
        await sleep(unit * 2);
        check((await store.get(key)) === undefined, "get still answers an expired lease");
        const next = owner();
        check(
          (await store.claim(key, next, long)).claimed,
          "an expired lease could not be claimed",
        );
        check(
          (await store.complete(key, crashed, "jstale", long)) === false,
          "the crashed owner completed over the new one",
        );
        check(
          (await store.renew(key, crashed, long)) === false,
          "the crashed owner renewed over the new one",
        );
        check(
          (await store.release(key, crashed)) === false,
          "the crashed owner released the new one's key",
        );
        check(await store.complete(key, next, "jnew", long), "the new owner could not complete");
        await expectCompleted(store, key, "jnew", "after the takeover");
      },
    ),

    define(
      "twenty claims of an expired lease, and of an expired record, at once: exactly one takes each over",
      async (store, key) => {
        const lease = `${key}:lease`;
        const record = `${key}:record`;
        check((await store.claim(lease, owner(), unit)).claimed, "the lease's claim was refused");
        const me = owner();
        check((await store.claim(record, me, long)).claimed, "the record's claim was refused");
        check(await store.complete(record, me, "jold", unit), "complete answered false");
        await sleep(unit * 2);
        for (const each of [lease, record]) {
          const claims = await Promise.all(
            Array.from({ length: 20 }, () => store.claim(each, owner(), long)),
          );
          const granted = claims.filter((claim) => claim.claimed).length;
          check(granted === 1, `${granted} of 20 concurrent takeovers of ${each} were granted`);
        }
      },
    ),

    define(
      "the late owner completing while others claim its expired lease: exactly one side wins",
      async (store, key) => {
        const late = owner();
        check((await store.claim(key, late, unit)).claimed, "the claim was refused");
        await sleep(unit * 2);
        const [completed, ...claims] = await Promise.all([
          store.complete(key, late, "jlate", long),
          ...Array.from({ length: 10 }, () => store.claim(key, owner(), long)),
        ]);
        const granted = claims.filter((claim) => claim.claimed).length;
        const record = await store.get(key);
        if (completed) {
          check(granted === 0, `the late owner completed, yet ${granted} claims were granted`);
          check(
            record?.state === "completed" && record.result === "jlate",
            `completed, but get answered ${show(record)}`,
          );
        } else {
          check(granted === 1, `the late owner was refused, and ${granted} claims were granted`);
          check(record?.state === "running", `taken over, but get answered ${show(record)}`);
        }
      },
    ),

    defineTimed("renew extends the lease from now", async (store, key, unit) => {
      const me = owner();
      const claiming = performance.now();
      check((await store.claim(key, me, unit * 2)).claimed, "the claim was refused");
      await sleep(unit);
      const renewing = performance.now();
      const renewed = await unlessLate(
        async () =>
          check(await store.renew(key, me, unit * 4), "renew by the owner answered false"),
        // The lease of two units may have run out before the renewal reached the store.
        () => lateBy(performance.now() - claiming, unit * 2, "the renewal returned"),
      );
      if (renewed) return renewed;
      await sleep(unit * 2);
      // 3 units after the claim: past the first lease, within the renewed one (when read within
      // four units of the renewal).
      return unlessLate(
        async () => void (await expectRunning(store, key, "after renew")),
        () => lateBy(performance.now() - renewing, unit * 4, "the read returned"),
      );
    }),

    define("a lease that ran out is not renewed", async (store, key) => {
      const me = owner();
      check((await store.claim(key, me, unit)).claimed, "the claim was refused");
      await sleep(unit * 2);
      check((await store.renew(key, me, long)) === false, "an expired lease was renewed");
    }),

    define(
      "the owner completes after its lease ran out when nobody claimed it since",
      async (store, key) => {
        const me = owner();
        check((await store.claim(key, me, unit)).claimed, "the claim was refused");
        await sleep(unit * 2);
        check(
          await store.complete(key, me, "jslow", long),
          "complete after the lease answered false",
        );
        await expectCompleted(store, key, "jslow", "after a late complete");
      },
    ),

    defineTimed(
      "a completed record expires after its time, checked on read",
      async (store, key, unit) => {
        const me = owner();
        check((await store.claim(key, me, long)).claimed, "the claim was refused");
        const completing = performance.now();
        check(await store.complete(key, me, "jshort", unit), "complete answered false");
        // Read before expiry when the reads return within the record's unit of the complete.
        const early = await unlessLate(
          () => expectCompleted(store, key, "jshort", "before expiry"),
          () => lateBy(performance.now() - completing, unit, "the reads returned"),
        );
        if (early) return early;
        await sleep(unit * 2);
        check((await store.get(key)) === undefined, "get still answers an expired record");
        check(
          (await store.claim(key, owner(), long)).claimed,
          "an expired record could not be claimed",
        );
        return undefined;
      },
    ),

    define(
      "keys are exact: no prefix, case or separator of one reaches another",
      async (store, key) => {
        const keys = [
          key,
          `${key}:`,
          `${key}:x`,
          key.toUpperCase(),
          `${key} `,
          `${key}*`,
          `${key}%`,
          `${key}'"`,
        ];
        for (const each of keys) {
          check(
            (await store.claim(each, owner(), long)).claimed,
            `${show(each)} was not independent`,
          );
        }
      },
    ),

    define("long and unusual keys (250 characters, quotes, unicode) work", async (store, key) => {
      const long250 = `${key}:`.padEnd(250, "k");
      const unusual = `${key}:'; DROP TABLE x; --\\"ü✓ 🙂`;
      for (const each of [long250, unusual]) {
        const me = owner();
        check((await store.claim(each, me, long)).claimed, `claim of ${show(each)} was refused`);
        check(
          await store.complete(each, me, "jok", long),
          `complete of ${show(each)} answered false`,
        );
        await expectCompleted(store, each, "jok", `key ${show(each)}`);
      }
    }),
  ];
}
