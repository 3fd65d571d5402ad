/**
 * 2. HTTP overhead: autocannon against each framework's server (a child process), the library's
 * route against the bare floor route of the same server. Per framework: a warm-up of each route
 * (discarded), then rounds of one run of each route, alternating which goes first (bare, library,
 * library, bare, …), so drift and the two-core contention between load generator and server fall
 * on both alike. Each round gives a ratio, library req/s ÷ bare req/s; the figure is their median
 * with p10–p90.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import {
  BARE_PATH,
  FRAMEWORKS,
  type Framework,
  LIB_PATH,
  ORDER_RESPONSE,
  orderWithProducts,
  ROOT,
  type Secrets,
  secretsEnv,
} from "./shared.js";
import { median, type Spread, spread } from "./stats.js";

export interface HttpSettings {
  readonly connections: number;
  readonly pipelining: number;
  /** Seconds per measured run. */
  readonly duration: number;
  /** Seconds of warm-up per route, discarded. */
  readonly warmup: number;
  /** Measured rounds; each is one run of each route, alternating which goes first. */
  readonly runs: number;
}

/** Read when a benchmark starts (not at import), so `--quick` can set the environment first. */
export function httpSettings(): HttpSettings {
  return {
    connections: 10,
    pipelining: 1,
    duration: Number(process.env.BENCH_HTTP_SECONDS ?? 1),
    warmup: Number(process.env.BENCH_HTTP_WARMUP_SECONDS ?? 1),
    runs: Number(process.env.BENCH_HTTP_RUNS ?? 5),
  };
}

export interface RouteStats {
  /** Median over runs of requests / second (total answered ÷ duration). */
  readonly rps: number;
  /** Median over runs of the server process's CPU time per request, µs. */
  readonly cpuPerRequestUs: number;
  /** Median over runs of autocannon's p99 latency, ms. */
  readonly p99: number;
  readonly p50: number;
  readonly runs: readonly number[];
}

export interface HttpResult {
  readonly framework: Framework;
  readonly library: RouteStats;
  readonly bare: RouteStats;
  /** Per round, library req/s ÷ bare req/s (the two runs of the round are back to back). */
  readonly ratios: readonly number[];
  readonly ratio: Spread;
  /** Per round, bare CPU per request ÷ library CPU per request (the server process's CPU time). */
  readonly cpuRatios: readonly number[];
  readonly cpuRatio: Spread;
}

/**
 * The benchmark's server for one framework (bench/http-server.ts) in a child process, once it
 * listens; `nodeArgs` go before the script (`--cpu-prof` for bench/http-profile.ts). With
 * `stdoutFile`, the server's standard output goes to that file (V8's traces, which
 * bench/http-jit.ts reads) and its port line is read from there.
 */
export async function startServer(
  framework: Framework,
  secrets: Secrets,
  nodeArgs: readonly string[] = [],
  stdoutFile?: string,
) {
  const out = stdoutFile === undefined ? "pipe" : openSync(stdoutFile, "w");
  const child = spawn(
    process.execPath,
    [...nodeArgs, "--import", "tsx", "bench/http-server.ts", framework],
    {
      cwd: ROOT,
      env: { ...process.env, ...secretsEnv(secrets) },
      stdio: ["pipe", out, "inherit"],
    },
  );
  if (typeof out === "number") closeSync(out);
  const exited = new Promise<never>((_, reject) => {
    child.once("exit", (code) => reject(new Error(`${framework} server exited (${code})`)));
  });
  exited.catch(() => undefined);
  const { port, control } = await Promise.race([
    stdoutFile === undefined ? firstLine(child) : lineInFile(stdoutFile),
    exited,
  ]).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  return {
    port,
    /** The server process's CPU time so far, µs. */
    async cpuUs(): Promise<number> {
      const response = await fetch(`http://127.0.0.1:${control}/`);
      return ((await response.json()) as { cpuUs: number }).cpuUs;
    },
    /** The server process's garbage collection so far: pauses' total µs and their count. */
    async gc(): Promise<{ gcUs: number; gcCount: number }> {
      const response = await fetch(`http://127.0.0.1:${control}/`);
      return (await response.json()) as { gcUs: number; gcCount: number };
    },
    async stop() {
      const done = new Promise((resolve) => child.once("exit", resolve));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await done;
      clearTimeout(timer);
    },
  };
}

interface Listening {
  readonly port: number;
  readonly control: number;
}

/** The server's first line of output: its ports. */
function firstLine(child: ChildProcess): Promise<Listening> {
  const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> });
  return new Promise((resolve) => {
    lines.once("line", (line) => resolve(JSON.parse(line) as Listening));
  });
}

/** The server's ports, from the line it prints among other output in `file`. */
async function lineInFile(file: string): Promise<Listening> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const found = /^(\{"port":\d+,"control":\d+.*\})$/m.exec(readFileSync(file, "utf8"));
    if (found !== null) return JSON.parse(found[1] as string) as Listening;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no port line in ${file} within 60 s`);
}

/** What one autocannon run reports. */
export type LoadResult = Awaited<ReturnType<typeof autocannon>>;

/** The framework a one-off HTTP script is asked about (its first argument; default node:http). */
export function frameworkArgument(script: string): Framework {
  const framework = (process.argv[2] ?? "node") as Framework;
  if (!FRAMEWORKS.includes(framework)) {
    throw new Error(`usage: bench/${script} <${FRAMEWORKS.join("|")}>`);
  }
  return framework;
}

/**
 * The one-off scripts' loop (bench/http-gc.ts, bench/http-jit.ts): `rounds` rounds of one
 * `seconds`-long autocannon run of each route (the 30-product order, 10 connections), alternating
 * which goes first; `measure` wraps each run (`load`) with what it reads before and after.
 */
export async function alternateRoutes(
  port: number,
  secrets: Secrets,
  rounds: number,
  seconds: number,
  measure: (
    route: "bare" | "library",
    load: () => Promise<LoadResult>,
    round: number,
  ) => Promise<void>,
): Promise<void> {
  const body = Buffer.from(JSON.stringify(orderWithProducts(30)));
  const headers = { authorization: `Bearer ${secrets.token}`, "content-type": "application/json" };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (["bare", "library"] as const) : (["library", "bare"] as const);
    for (const route of order) {
      const path = route === "bare" ? BARE_PATH : LIB_PATH;
      const load = async () => {
        const result = await autocannon({
          url: `http://127.0.0.1:${port}${path}`,
          method: "POST",
          headers,
          body,
          connections: 10,
          duration: seconds,
        });
        if (result.non2xx + result.errors > 0) throw new Error(`${path}: failed requests`);
        return result;
      };
      await measure(route, load, round);
    }
  }
}

export async function runHttpBench(
  secrets: Secrets,
  log: (line: string) => void,
): Promise<HttpResult[]> {
  const body = Buffer.from(JSON.stringify(orderWithProducts()));
  const expected = JSON.stringify(ORDER_RESPONSE);
  const headers = {
    authorization: `Bearer ${secrets.token}`,
    "content-type": "application/json",
  };
  const HTTP_SETTINGS = httpSettings();
  const results: HttpResult[] = [];
  // BENCH_FRAMEWORKS=node,express: only those (for an A/B of one adapter; `npm run bench` runs all).
  const only = process.env.BENCH_FRAMEWORKS?.split(",").map((name) => name.trim());
  for (const name of only ?? []) {
    if (!(FRAMEWORKS as readonly string[]).includes(name)) {
      throw new Error(`BENCH_FRAMEWORKS: "${name}" is none of ${FRAMEWORKS.join(", ")}`);
    }
  }
  for (const framework of FRAMEWORKS) {
    if (only !== undefined && !only.includes(framework)) continue;
    const server = await startServer(framework, secrets);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      // Both routes must give the same answer before anything is measured.
      for (const path of [LIB_PATH, BARE_PATH]) {
        const response = await fetch(`${base}${path}`, { method: "POST", headers, body });
        const text = await response.text();
        if (response.status !== 200 || text !== expected) {
          throw new Error(`${framework} ${path}: ${response.status} ${text}`);
        }
      }
      const load = (path: string, duration: number) =>
        autocannon({
          url: `${base}${path}`,
          method: "POST",
          headers,
          body,
          connections: HTTP_SETTINGS.connections,
          pipelining: HTTP_SETTINGS.pipelining,
          duration,
          expectBody: expected,
        });
      await load(BARE_PATH, HTTP_SETTINGS.warmup);
      await load(LIB_PATH, HTTP_SETTINGS.warmup);
      const runs = { bare: [] as AutocannonRun[], library: [] as AutocannonRun[] };
      for (let i = 0; i < HTTP_SETTINGS.runs; i++) {
        const order = i % 2 === 0 ? (["bare", "library"] as const) : (["library", "bare"] as const);
        for (const route of order) {
          const cpu0 = await server.cpuUs();
          const result = await load(
            route === "bare" ? BARE_PATH : LIB_PATH,
            HTTP_SETTINGS.duration,
          );
          const cpuUs = (await server.cpuUs()) - cpu0;
          const failed = result.errors + result.timeouts + result.non2xx + result.mismatches;
          if (failed > 0) throw new Error(`${framework} ${route}: ${failed} failed requests`);
          runs[route].push({
            rps: result.requests.total / result.duration,
            p99: result.latency.p99,
            p50: result.latency.p50,
            cpuPerRequestUs: cpuUs / result.requests.total,
          });
        }
      }
      const stats = (list: AutocannonRun[]): RouteStats => ({
        rps: median(list.map((r) => r.rps)),
        cpuPerRequestUs: median(list.map((r) => r.cpuPerRequestUs)),
        p99: median(list.map((r) => r.p99)),
        p50: median(list.map((r) => r.p50)),
        runs: list.map((r) => Math.round(r.rps)),
      });
      const library = stats(runs.library);
      const bare = stats(runs.bare);
      const ratios = runs.library.map((l, i) => l.rps / (runs.bare[i] as AutocannonRun).rps);
      // Requests per CPU-second, library ÷ bare: the server's cost per request, which other
      // processes' load moves less than req/s (a cross-check of the req/s ratio, not the figure).
      const cpuRatios = runs.library.map(
        (l, i) => (runs.bare[i] as AutocannonRun).cpuPerRequestUs / l.cpuPerRequestUs,
      );
      const result = {
        framework,
        library,
        bare,
        ratios,
        ratio: spread(ratios),
        cpuRatios,
        cpuRatio: spread(cpuRatios),
      };
      log(
        `  ${framework}: library ${Math.round(library.rps)} req/s, bare ${Math.round(bare.rps)} req/s, ${result.ratio.median.toFixed(2)}x (${result.ratio.p10.toFixed(2)}–${result.ratio.p90.toFixed(2)})`,
      );
      results.push(result);
    } finally {
      await server.stop();
    }
  }
  return results;
}

interface AutocannonRun {
  readonly rps: number;
  readonly p99: number;
  readonly p50: number;
  /** The server process's CPU time ÷ requests answered in the run, µs. */
  readonly cpuPerRequestUs: number;
}
