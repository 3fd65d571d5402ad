/**
 * Real database servers for the tests: `redis-server` and PostgreSQL (`initdb` + `postgres`), each
 * on a temporary directory and a free port, stopped and deleted afterwards, even when a test
 * fails or the worker exits. Installed by .ci/run (Debian packages `redis-server`, `postgresql`).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Children still running: killed if the worker exits without stopping them. */
const running = new Set<ChildProcess>();
const directories = new Set<string>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** Whether `port` can be listened on at 127.0.0.1 now (`undefined` when it cannot). */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** The lowest port the kernel hands out to `listen(0)` and to outgoing connections. */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > 12_000 ? value : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A free TCP port on 127.0.0.1 for a database server, below the kernel's ephemeral range: between
 * our check and the server's bind (and while a test has stopped the server to start it again on
 * the same port), the parallel test files' servers on port 0 and their outgoing connections take
 * ports from that range only, so they cannot take this one.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(10_000, high - 12_000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await tryPort(low + Math.floor(Math.random() * (high - low)));
    if (port !== undefined) return port;
  }
  const port = await tryPort(0);
  if (port === undefined) throw new Error("no free port on 127.0.0.1");
  return port;
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
  });
}

async function waitFor(
  what: string,
  ready: () => Promise<boolean>,
  child: ChildProcess,
  output: () => string,
) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    }
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not start within 30 s:\n${output()}`);
}

function track(child: ChildProcess): () => string {
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return () => output;
}

/** Stops a child with `signal` (SIGKILL after 10 s), and waits for it to exit. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

function which(names: readonly string[]): string | undefined {
  return names.find((name) => existsSync(name));
}

export interface DatabaseServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (the port stays reserved for `start`). */
  stop(): Promise<void>;
  /** Starts it again on the same port (Redis empty, PostgreSQL with its data). */
  start(): Promise<void>;
  /** Stops it for good and deletes its directory. */
  close(): Promise<void>;
}

export type RedisServer = DatabaseServer;
export type PostgresServer = DatabaseServer;

/** A server process that can be stopped and started again, in a directory deleted at the end. */
async function managed(options: {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly directory: string;
  readonly spawn: () => ChildProcess;
  readonly ready: () => Promise<boolean>;
  readonly stopSignal: NodeJS.Signals;
}): Promise<DatabaseServer> {
  let child: ChildProcess | undefined;
  const spawned: ChildProcess[] = [];
  const server: DatabaseServer = {
    port: options.port,
    url: options.url,
    async start() {
      // Already running: a second process would lose the port and fool the readiness check.
      if (child && child.exitCode === null && child.signalCode === null) return;
      const started = options.spawn();
      spawned.push(started);
      child = started;
      const output = track(started);
      await waitFor(options.name, options.ready, started, output);
    },
    async stop() {
      if (child) await stopChild(child, options.stopSignal);
    },
    async close() {
      // Every process this server ever spawned, not only the last one.
      await Promise.all(spawned.map((each) => stopChild(each, options.stopSignal)));
      rmSync(options.directory, { recursive: true, force: true });
      directories.delete(options.directory);
    },
  };
  await server.start();
  return server;
}

/**
 * Starts `redis-server` on a free port, with the append-only file the README asks for
 * (`appendonly yes`, `appendfsync everysec`: a restart keeps every record and lease), or with no
 * persistence at all (`appendOnly: false`: a restart empties it).
 */
export async function startRedis(
  options: { appendOnly?: boolean; args?: readonly string[] } = {},
): Promise<RedisServer> {
  const binary = which([
    "/usr/bin/redis-server",
    "/usr/local/bin/redis-server",
    "/usr/sbin/redis-server",
  ]);
  if (!binary) {
    throw new Error(
      "redis-server is not installed: apt-get install -y redis-server (.ci/run does)",
    );
  }
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), "cbc-redis-"));
  directories.add(directory);
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    options.appendOnly === false ? "no" : "yes",
    "--appendfsync",
    "everysec",
    "--dir",
    directory,
    ...(options.args ?? []),
  ];
  return managed({
    name: "redis-server",
    port,
    url: `redis://127.0.0.1:${port}`,
    directory,
    spawn: () => spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] }),
    ready: () => connects(port),
    stopSignal: "SIGTERM",
  });
}

/**
 * A Redis Cluster of three masters (no replicas), each a `startRedis` server with
 * `cluster-enabled yes` and its bus on a free port of its own, joined by
 * `redis-cli --cluster create` (Debian's `redis-tools`, which `redis-server` depends on); ready
 * once every node says `cluster_state:ok`. `args` go to every node.
 */
export async function startRedisCluster(
  options: { args?: readonly string[] } = {},
): Promise<{ nodes: RedisServer[]; close(): Promise<void> }> {
  const cli = which(["/usr/bin/redis-cli", "/usr/local/bin/redis-cli"]);
  if (!cli) throw new Error("redis-cli is not installed: apt-get install -y redis-tools");
  const nodes: RedisServer[] = [];
  const close = () => Promise.all(nodes.map((node) => node.close())).then(() => undefined);
  try {
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startRedis({
          args: [
            "--cluster-enabled",
            "yes",
            "--cluster-port",
            String(await freePort()),
            "--cluster-node-timeout",
            "5000",
            ...(options.args ?? []),
          ],
        }),
      );
    }
    execFileSync(
      cli,
      [
        "--cluster",
        "create",
        ...nodes.map((node) => `127.0.0.1:${node.port}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ],
      { stdio: "pipe", timeout: 20_000 },
    );
    const deadline = Date.now() + 20_000;
    for (const node of nodes) {
      while (
        !execFileSync(cli, ["-p", String(node.port), "cluster", "info"], { timeout: 5_000 })
          .toString("utf8")
          .includes("cluster_state:ok")
      ) {
        if (Date.now() > deadline) throw new Error(`the Redis Cluster node ${node.port} is not ok`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { nodes, close };
}

/** The newest PostgreSQL's binaries: Debian keeps them off PATH. */
function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, "bin/initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const version = versions[0];
  if (version === undefined) {
    throw new Error("PostgreSQL is not installed: apt-get install -y postgresql (.ci/run does)");
  }
  return join(root, version, "bin");
}

/**
 * PostgreSQL refuses to run as root (CI runs as root): then initdb and postgres run as the
 * `postgres` user the Debian package creates, in a directory that user owns.
 */
function asServerUser(): { prefix: string[]; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return {
    prefix: ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--"],
    uid,
    gid,
  };
}

/** Initialises a cluster in a temporary directory and starts `postgres` on a free port. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const user = asServerUser();
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), "cbc-postgres-"));
  directories.add(directory);
  const data = join(directory, "data");
  if (user) {
    chownSync(directory, user.uid, user.gid);
    chmodSync(directory, 0o700);
  }
  const command = (program: string, args: string[]): [string, string[]] =>
    user
      ? [user.prefix[0] as string, [...user.prefix.slice(1), join(bin, program), ...args]]
      : [join(bin, program), args];
  const env = { ...process.env, LC_ALL: "C", LANG: "C" };
  const [initdb, initArgs] = command("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  execFileSync(initdb, initArgs, { env, stdio: "pipe" });
  const [postgres, args] = command("postgres", [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    directory,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=200",
  ]);
  return managed({
    name: "postgres",
    port,
    // Trust authentication, local only.
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    directory,
    spawn: () => spawn(postgres, args, { env, stdio: ["ignore", "pipe", "pipe"] }),
    ready: () => accepts(port, bin),
    // SIGINT: the fast shutdown (clients disconnected at once).
    stopSignal: "SIGINT",
  });
}

/** Whether postgres answers queries yet (`pg_isready`: the socket opens before it accepts them). */
async function accepts(port: number, bin: string): Promise<boolean> {
  if (!(await connects(port))) return false;
  try {
    execFileSync(
      join(bin, "pg_isready"),
      ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"],
      { stdio: "ignore" },
    );
    return true;
  } catch {
    return false;
  }
}
