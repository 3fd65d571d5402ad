/**
 * `crossborder-callbacks/redis`: the idempotency store on Redis (5 or later), through the
 * merchant's own client: the official `redis` package (v4, v5, v6) or `ioredis` (v5, v6). Nothing
 * here imports either package; the client is used through the few methods below.
 *
 * A key holds one string: `r:<owner>` while running (the key's own expiry is the lease) or
 * `c:<expiry ms>[.<owner's bytes as digits>]:<result>` once completed (expiring by the key's
 * expiry and, checked on every read against the server's clock, by the time written in it; the
 * owner, written since 2026-11, lets the owner's own write sent twice count as done). Anything else under a key (another
 * string, another type, a lease without expiry) is an unreadable record. Every operation is one Lua script, so
 * a claim (`SET NX PX`) and its checks happen atomically on the server.
 */
import { assertKnownKeys, optionNames } from "../auth/validate.js";
import { isBytes } from "../core/bytes.js";
import { isRecord } from "../core/objects.js";
import {
  type ForgettingIdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyRecord,
  UnreadableRecordError,
} from "./store.js";

/** The official `redis` client (v4 and later): `createClient()` or `createCluster()`. */
export interface NodeRedisLikeClient {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** An `ioredis` client: `new Redis()` or `new Redis.Cluster()`. */
export interface IoRedisLikeClient {
  evalsha(sha: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

export type RedisLikeClient = NodeRedisLikeClient | IoRedisLikeClient;

/** The Redis store, with the check of its server's setup. */
export interface RedisIdempotencyStore extends ForgettingIdempotencyStore {
  /**
   * Reads the server's `maxmemory-policy` (`INFO memory`) and whether it keeps an append-only file
   * (`INFO persistence`), on every master of a Cluster client (each problem naming its node), once per store (once answered: a failed check is not remembered): the problems to fix as a sentence when the policy lets
   * Redis evict this store's keys (anything but `noeviction`) or when a restart would empty the
   * leases of running functions (`appendonly no`), undefined when neither. A section the server
   * refuses is not checked; rejects when it refuses both (some managed Redis refuse `INFO`).
   * `withIdempotency` calls it at its first delivery, and at a later one while it has not answered
   * (failed, or slow), and reports the problem to `onError` as a `store_failure` warning, once;
   * its failure changes no delivery.
   */
  checkSetup(): Promise<string | undefined>;
}

export interface RedisIdempotencyStoreOptions {
  /** Put in front of every key. Default `crossborder-callbacks:idempotency:`. */
  readonly prefix?: string | undefined;
}

const REDIS_OPTION_NAMES = optionNames<RedisIdempotencyStoreOptions>({ prefix: true });

/** How the scripts' error reply for an unreadable value begins (after `ERR `). */
const UNREADABLE_REPLY = "unreadable idempotency record under";

/** The server's clock in milliseconds. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * A record, or nothing when the key is absent or its written expiry has passed; UNREADABLE for a
 * value that is neither a lease nor a record (written by something else, damaged), which the
 * scripts answer with an error naming the key (an error reply, as Redis 5 and 6 scripts cannot
 * raise one with a message of their own). Unreadable too: a value of another type (a hash, a
 * list: GET would abort the script with WRONGTYPE, a store outage to withIdempotency, which
 * with failOpen runs the function), and a lease without expiry (never written by this store,
 * it would hold every delivery to a 503 forever), except to its own `owner`, who may renew it
 * (giving it an expiry again), complete it or release it.
 */
const READ = `local UNREADABLE = {}
local function unreadable(key)
  return redis.error_reply('ERR ${UNREADABLE_REPLY} ' .. key .. ': delete the key to let the next delivery run')
end
local function read(key, now, owner)
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then return nil end
  if kind ~= 'string' then return UNREADABLE end
  local v = redis.call('GET', key)
  if string.sub(v, 1, 2) == 'r:' then
    if owner and v == 'r:' .. owner then return v end
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then return UNREADABLE end
    return v, ttl
  end
  local sep = string.find(v, ':', 3, true)
  local expiry = string.sub(v, 1, 2) == 'c:' and sep and tonumber(string.sub(v, 3, sep - 1))
  if not expiry then return UNREADABLE end
  if expiry <= now then
    redis.call('DEL', key)
    return nil
  end
  return v
end`;

/** A live record as the reply: {'r', lease ms left (`ttl`, read's second value)} or {'c', result}. */
const REPLY = `local function reply(v, ttl)
  if string.sub(v, 1, 2) == 'r:' then return {'r', tostring(ttl)} end
  local sep = string.find(v, ':', 3, true)
  return {'c', string.sub(v, sep + 1)}
end`;

/** Whether the key holds `owner`'s lease: a string (GET fails on another type) that is it. */
const OWNED = `local function owned(key, owner)
  return redis.call('TYPE', key).ok == 'string' and redis.call('GET', key) == 'r:' .. owner
end`;

const SCRIPTS = {
  // KEYS[1] key; ARGV owner, lease ms. The owner's own lease counts as claimed (its lease
  // started again): a client that sends the claim again after a reconnect (ioredis does, when
  // the first copy's reply was lost) gets the key it holds, not a wait on itself.
  claim: `${NOW}
${READ}
${REPLY}
if redis.call('SET', KEYS[1], 'r:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return {'ok'} end
local v, ttl = read(KEYS[1], now, ARGV[1])
if v == UNREADABLE then return unreadable(KEYS[1]) end
if not v or v == 'r:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'r:' .. ARGV[1], 'PX', ARGV[2])
  return {'ok'}
end
return reply(v, ttl)`,
  // KEYS[1] key.
  get: `${NOW}
${READ}
${REPLY}
local v, ttl = read(KEYS[1], now)
if v == UNREADABLE then return unreadable(KEYS[1]) end
if not v then return {'none'} end
return reply(v, ttl)`,
  // KEYS[1] key; ARGV owner, result, ttl ms. The owner goes in the record as the fraction of its
  // expiry (each byte as three digits), which a version that does not know it reads as the
  // expiry all the same (Lua's tonumber; less than 0.26 ms later: the first byte is at most
  // 255). The same owner's same record already there answers 1: a write sent again by a client
  // after a reconnect (ioredis does, when the first copy's reply was lost) is not another run's
  // record.
  complete: `${NOW}
${READ}
local mark = string.gsub(ARGV[1], '.', function(c) return string.format('%03d', string.byte(c)) end)
if mark ~= '' then mark = '.' .. mark end
local v = read(KEYS[1], now, ARGV[1])
if v == UNREADABLE then return unreadable(KEYS[1]) end
if v and v ~= 'r:' .. ARGV[1] then
  if mark == '' or string.sub(v, 1, 2) ~= 'c:' then return 0 end
  local sep = string.find(v, ':', 3, true)
  local stamp = string.sub(v, 3, sep - 1)
  local dot = string.find(stamp, '.', 1, true)
  if dot and string.sub(stamp, dot) == mark and string.sub(v, sep + 1) == ARGV[2] then return 1 end
  return 0
end
redis.call('SET', KEYS[1], 'c:' .. string.format('%.0f', now + tonumber(ARGV[3])) .. mark .. ':' .. ARGV[2], 'PX', ARGV[3])
return 1`,
  // KEYS[1] key; ARGV owner, lease ms. Not the owner's (a value of another type neither): 0.
  renew: `${OWNED}
if not owned(KEYS[1], ARGV[1]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  // KEYS[1] key; ARGV owner.
  release: `${OWNED}
if not owned(KEYS[1], ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  // KEYS[1] key; ARGV result. Only a record completed with exactly that result.
  forget: `if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return 0 end
local v = redis.call('GET', KEYS[1])
if string.sub(v, 1, 2) ~= 'c:' then return 0 end
local sep = string.find(v, ':', 3, true)
if not sep or string.sub(v, sep + 1) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
} as const;

type ScriptName = keyof typeof SCRIPTS;

async function sha1Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text)),
  );
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function isNodeRedis(client: RedisLikeClient): client is NodeRedisLikeClient {
  return typeof (client as NodeRedisLikeClient).evalSha === "function";
}

function isIoRedis(client: RedisLikeClient): client is IoRedisLikeClient {
  return typeof (client as IoRedisLikeClient).evalsha === "function";
}

/** The client's error, its message followed by what to do (its name kept, the original as cause). */
function hinted(error: unknown, text: string): Error {
  const error2 = new Error(text, { cause: error });
  const name = (error as Error | undefined)?.name;
  if (typeof name === "string") error2.name = name;
  return error2;
}

function notConnected(error: unknown, message: string): Error {
  return hinted(
    error,
    `${message}; the client is not connected: call \`await client.connect()\` at start-up`,
  );
}

/**
 * A redirection (`MOVED`, `ASK`) reaches the store only from a client of one node of a Cluster:
 * a Cluster client follows it itself (review infra-2).
 */
function notClusterClient(error: unknown, message: string): Error {
  return hinted(
    error,
    `${message}: this Redis is a Cluster, and the client given to createRedisIdempotencyStore is a client of one node: pass a Cluster client (createCluster() of \`redis\`, new Cluster() of \`ioredis\`); see the README's "Picking a store"`,
  );
}

/** What an ACL user of the store needs, for a refusal naming no command (review infra-3). */
function aclRefused(error: unknown, message: string, prefix: string): Error {
  return hinted(
    error,
    `${message}: the client's ACL user may not run a command, or touch a key, that the store needs: it sends EVALSHA and EVAL, its scripts run TIME, TYPE, GET, SET, PTTL, DEL and PEXPIRE on keys under its prefix, and its setup check INFO (optional): ACL SETUSER <user> ~${prefix}* +evalsha +eval +time +type +get +set +pttl +del +pexpire +info; see the README's "Picking a store"`,
  );
}

function replyText(value: unknown): string {
  if (typeof value === "string") return value;
  // Buffers (a client set to return them) and RESP3 blob strings.
  if (isBytes(value)) return new TextDecoder().decode(value);
  return String(value);
}

function recordOf(reply: unknown): IdempotencyRecord | undefined {
  if (!Array.isArray(reply)) throw new Error("unexpected reply from the idempotency script");
  const [state, value] = reply.map(replyText);
  if (state === "r") return { state: "running", leaseRemainingMs: Math.max(0, Number(value)) };
  if (state === "c") return { state: "completed", result: value ?? "" };
  return undefined;
}

/**
 * The problem with a server's eviction policy, from its `INFO memory` text; `node` names the
 * Cluster master it is read on.
 */
function evictionProblem(info: string, node?: string): string | undefined {
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === "noeviction") return undefined;
  const subject =
    node === undefined
      ? "Redis's maxmemory-policy"
      : `the maxmemory-policy of the Redis Cluster master ${node}`;
  return `${subject} is ${policy}: under memory pressure Redis evicts idempotency records and leases (every one has an expiry), and the next delivery of an evicted key runs the function again (a second charge); set maxmemory-policy noeviction (see the README's "Picking a store")`;
}

/**
 * The problem with a server's persistence, from its `INFO persistence` text: without the
 * append-only file (`aof_enabled:0`) a restart of Redis empties every lease of a function still
 * running (and every record). RDB snapshots do not keep them: a 30 s lease is written after the
 * last snapshot nearly always. Undefined when the text says nothing of it (not checkable).
 */
function persistenceProblem(info: string, node?: string): string | undefined {
  if (/^aof_enabled:0\s*$/m.exec(info) === null) return undefined;
  const subject = node === undefined ? "Redis" : `the Redis Cluster master ${node}`;
  return (
    subject +
    ' keeps no append-only file (appendonly no; RDB snapshots do not keep a lease): a restart of Redis empties the lease of every function still running, and a redelivery then runs it a second time (a second charge), besides forgetting the records; set appendonly yes (see the README\'s "Picking a store")'
  );
}

/** A master of a Cluster client: its address, and a client of it (or a promise of one). */
interface ClusterMaster {
  readonly node: string;
  readonly server: unknown;
}

/**
 * The masters of a Cluster client, undefined for a client of one server: `ioredis`'s `Cluster`
 * (`nodes("master")`, each a client of its own) and node-redis's `createCluster()` (`masters`, or
 * `getMasters()` before v5, each read through `nodeClient(master)`, or its `client` in v4).
 * Rejects while the client knows no master yet (not connected, its slots not loaded), so that
 * the check is asked again later.
 */
async function clusterMasters(client: RedisLikeClient): Promise<ClusterMaster[] | undefined> {
  const io = client as {
    isCluster?: unknown;
    nodes?: (role: string) => { options?: { host?: string; port?: number } }[];
  };
  if (io.isCluster === true && typeof io.nodes === "function") {
    return known(
      io.nodes("master").map((server) => ({
        node: `${server.options?.host ?? "?"}:${server.options?.port ?? "?"}`,
        server,
      })),
    );
  }
  type Master = { address?: string; host?: string; port?: number; client?: unknown };
  const node = client as {
    masters?: Master[];
    getMasters?: () => Master[];
    nodeClient?: (master: Master) => unknown;
  };
  const masters = Array.isArray(node.masters)
    ? node.masters
    : typeof node.getMasters === "function" && typeof node.nodeClient === "function"
      ? node.getMasters()
      : undefined;
  if (masters === undefined) return undefined;
  return known(
    masters.map((master) => ({
      node: master.address ?? `${master.host ?? "?"}:${master.port ?? "?"}`,
      server: typeof node.nodeClient === "function" ? node.nodeClient(master) : master.client,
    })),
  );
}

/** How long the setup check waits for one Cluster master's `INFO`. */
const MASTER_READ_MS = 3_000;

/** `promise`, or a rejection with `message` once `ms` have passed (the timer never holds the process). */
function withinMs<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    (timer as { unref?: () => void }).unref?.();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function known(masters: ClusterMaster[]): ClusterMaster[] {
  if (masters.length === 0) {
    throw new Error("the Redis Cluster client knows no master yet (not connected?)");
  }
  return masters;
}

function validKey(key: string): void {
  if (typeof key !== "string" || key === "")
    throw new TypeError("an idempotency key must be a non-empty string");
}

/**
 * Creates the Redis store over a connected client you own (connect it before the first delivery;
 * close it at shutdown). Scripts run with `EVALSHA`, falling back to `EVAL` once per script when
 * the server does not know them (after a restart or `SCRIPT FLUSH`).
 */
export function createRedisIdempotencyStore(
  client: RedisLikeClient,
  options: RedisIdempotencyStoreOptions = {},
): RedisIdempotencyStore {
  if (
    client === null ||
    typeof client !== "object" ||
    (!isNodeRedis(client) && !isIoRedis(client))
  ) {
    throw new TypeError(
      "createRedisIdempotencyStore: pass a client of the `redis` package (createClient()) or of `ioredis` (new Redis())",
    );
  }
  // A misnamed prefix, or one given alone as a string, would share the default one with another
  // application's keys.
  if (!isRecord(options as unknown)) {
    throw new TypeError("createRedisIdempotencyStore: options must be an object { prefix? }");
  }
  assertKnownKeys(
    options as Record<string, unknown>,
    REDIS_OPTION_NAMES,
    "options",
    "createRedisIdempotencyStore",
  );
  const prefix = options.prefix ?? "crossborder-callbacks:idempotency:";
  if (typeof prefix !== "string") throw new TypeError("prefix must be a string");
  const shas = new Map<ScriptName, Promise<string>>();

  async function send(
    script: string | undefined,
    sha: string,
    keys: string[],
    args: string[],
  ): Promise<unknown> {
    if (isNodeRedis(client)) {
      const call = { keys, arguments: args };
      return script === undefined ? client.evalSha(sha, call) : client.eval(script, call);
    }
    const io = client as IoRedisLikeClient;
    return script === undefined
      ? io.evalsha(sha, keys.length, ...keys, ...args)
      : io.eval(script, keys.length, ...keys, ...args);
  }

  async function run(name: ScriptName, key: string, args: string[]): Promise<unknown> {
    validKey(key);
    let sha = shas.get(name);
    if (sha === undefined) {
      sha = sha1Hex(SCRIPTS[name]);
      shas.set(name, sha);
    }
    const keys = [`${prefix}${key}`];
    try {
      try {
        return await send(undefined, await sha, keys, args);
      } catch (error) {
        if (!String((error as Error)?.message ?? error).includes("NOSCRIPT")) throw error;
        // EVAL also loads the script, so the next EVALSHA finds it.
        return await send(SCRIPTS[name], await sha, keys, args);
      }
    } catch (error) {
      // The scripts' own refusal of a value they cannot read: a record, not the store failing.
      const message = String((error as Error)?.message ?? error);
      if (message.includes(UNREADABLE_REPLY)) throw new UnreadableRecordError(message);
      // node-redis refuses every command of a client never connected ("The client is closed"):
      // said so, with the fix, in the failure report (review dx-5). Not refused at creation:
      // connecting after creating the store is valid.
      if (isNodeRedis(client) && (client as { isOpen?: unknown }).isOpen === false) {
        throw notConnected(error, message);
      }
      if (/^(MOVED|ASK) \d+ /.test(message)) throw notClusterClient(error, message);
      if (/^NOPERM |can't run this command/.test(message)) {
        throw aclRefused(error, message, prefix);
      }
      throw error;
    }
  }

  let setup: Promise<string | undefined> | undefined;
  /**
   * `INFO memory` and `INFO persistence` of one server, which managed Redis allow where they
   * refuse `CONFIG GET`: its problems, `node` naming it on a Cluster.
   */
  async function readServer(server: unknown, node?: string): Promise<string[]> {
    const info = (server as { info?: (section: string) => Promise<unknown> } | null)?.info;
    if (typeof info !== "function") return [];
    // Each section on its own: a server that refuses one (an ACL) is still checked on the other.
    const [memory, persistence] = await Promise.allSettled([
      Promise.resolve().then(() => info.call(server, "memory")),
      Promise.resolve().then(() => info.call(server, "persistence")),
    ]);
    if (memory.status === "rejected" && persistence.status === "rejected") throw memory.reason;
    return [
      memory.status === "fulfilled" ? evictionProblem(replyText(memory.value), node) : undefined,
      persistence.status === "fulfilled"
        ? persistenceProblem(replyText(persistence.value), node)
        : undefined,
    ].filter((problem) => problem !== undefined);
  }

  async function readSetup(): Promise<string | undefined> {
    const masters = await clusterMasters(client);
    // A plain client: its one server. A Cluster client sends INFO to one node of its choosing,
    // so every master is read, each problem naming its node (review infra-1).
    if (masters === undefined) {
      const problems = await readServer(client);
      return problems.length === 0 ? undefined : problems.join("; and ");
    }
    // A master down (node-redis waits for it without end) must not hold the others' answer: each
    // is read within MASTER_READ_MS (review second-idem2-2). What the others say is reported; with
    // nothing to report, an unread master makes the check fail, so it is asked again later.
    const reads = await Promise.allSettled(
      masters.map(({ node, server }) =>
        withinMs(
          Promise.resolve(server).then((each) => readServer(each, node)),
          MASTER_READ_MS,
          `the Redis Cluster master ${node} did not answer INFO within ${MASTER_READ_MS} ms`,
        ),
      ),
    );
    const problems = reads.flatMap((read) => (read.status === "fulfilled" ? read.value : []));
    if (problems.length > 0) return problems.join("; and ");
    const unread = reads.find((read) => read.status === "rejected");
    if (unread !== undefined) throw unread.reason;
    return undefined;
  }

  return {
    checkSetup() {
      if (setup === undefined) {
        const reading = readSetup();
        setup = reading;
        // A failure is not remembered (the connection dropped, INFO refused): asked again later.
        reading.catch(() => {
          if (setup === reading) setup = undefined;
        });
      }
      return setup;
    },
    async claim(key, owner, leaseMs): Promise<IdempotencyClaim> {
      const reply = await run("claim", key, [owner, String(leaseMs)]);
      if (Array.isArray(reply) && replyText(reply[0]) === "ok") return { claimed: true };
      const record = recordOf(reply);
      if (record === undefined) throw new Error("unexpected reply from the claim script");
      return { claimed: false, record };
    },
    async get(key) {
      return recordOf(await run("get", key, []));
    },
    async complete(key, owner, result, ttlMs) {
      return Number(await run("complete", key, [owner, result, String(ttlMs)])) === 1;
    },
    async renew(key, owner, leaseMs) {
      return Number(await run("renew", key, [owner, String(leaseMs)])) === 1;
    },
    async release(key, owner) {
      return Number(await run("release", key, [owner])) === 1;
    },
    async forget(key, result) {
      return Number(await run("forget", key, [result])) === 1;
    },
  };
}

export type {
  ForgettingIdempotencyStore,
  IdempotencyClaim,
  IdempotencyRecord,
  IdempotencyStore,
} from "./store.js";
