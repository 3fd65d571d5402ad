/**
 * 3. Cold start: a fresh `node` process per run (plain node, no loader), timed by the parent from
 * spawn to exit; the child also reports `performance.now()` when ready (ms since its own start).
 * Library and baseline runs alternate, after two discarded warm-up runs of each (disk cache).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ENTRY_FILES } from "./entries.js";
import { median, PKG_DIR, type Secrets, secretsEnv } from "./shared.js";

export const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 20);

export interface ColdStats {
  /** Median wall time, spawn to exit, measured by the parent (ms). */
  readonly wallMs: number;
  /** Median of the child's performance.now() once everything is built (ms since process start). */
  readonly readyMs: number;
  readonly wall: readonly number[];
}

export interface ColdResult {
  readonly library: ColdStats;
  readonly baseline: ColdStats;
  readonly ratio: number;
  readonly readyRatio: number;
  readonly handlers: number;
}

function once(
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<{ wall: number; ready: number; handlers: number }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, [join(PKG_DIR, file)], {
      cwd: PKG_DIR,
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      const wall = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0) return reject(new Error(`${file} exited with ${code}`));
      const { ready, handlers } = JSON.parse(out) as { ready: number; handlers: number };
      resolve({ wall, ready, handlers });
    });
  });
}

export async function runColdStart(secrets: Secrets): Promise<ColdResult> {
  const env = { ...process.env, ...secretsEnv(secrets) };
  // No loader hooks, inspector or other options from the parent: a plain `node file.mjs`.
  delete env.NODE_OPTIONS;
  const runs = {
    library: [] as { wall: number; ready: number }[],
    baseline: [] as { wall: number; ready: number }[],
  };
  let handlers = 0;
  for (let i = 0; i < 2; i++) {
    await once(ENTRY_FILES.coldLibrary, env);
    await once(ENTRY_FILES.coldBaseline, env);
  }
  for (let i = 0; i < COLD_RUNS; i++) {
    const order =
      i % 2 === 0 ? (["library", "baseline"] as const) : (["baseline", "library"] as const);
    for (const which of order) {
      const run = await once(
        which === "library" ? ENTRY_FILES.coldLibrary : ENTRY_FILES.coldBaseline,
        env,
      );
      if (which === "library") handlers = run.handlers;
      runs[which].push(run);
    }
  }
  const stats = (list: { wall: number; ready: number }[]): ColdStats => ({
    wallMs: median(list.map((r) => r.wall)),
    readyMs: median(list.map((r) => r.ready)),
    wall: list.map((r) => Math.round(r.wall * 10) / 10),
  });
  const library = stats(runs.library);
  const baseline = stats(runs.baseline);
  return {
    library,
    baseline,
    ratio: library.wallMs / baseline.wallMs,
    readyRatio: library.readyMs / baseline.readyMs,
    handlers,
  };
}
