/**
 * `npm run bench`: builds the package, then runs the pipeline and HTTP benchmarks BENCH_RUNS (3)
 * times, each time in fresh processes (no JIT state shared between runs), then cold start, bundle
 * size and memory once, and rewrites bench/RESULTS.md with all runs side by side. bench/ANALYSIS.md
 * (hand-written) is copied into it verbatim.
 *
 * `npm run bench -- --quick`: one run, 15 rounds, short HTTP runs, no cold start/bundle/memory,
 * written to bench/.tmp/RESULTS.quick.md (RESULTS.md is left alone): to try the method, not to
 * publish figures. `npm run bench -- --render`: RESULTS.md written again from the last full run's
 * figures (bench/.tmp/last-run.json) with the current ANALYSIS.md, without measuring. Environment
 * knobs: see the end of RESULTS.md.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, type } from "node:os";
import { join } from "node:path";
import { buildPackage } from "./build.js";
import { ESBUILD_OPTIONS, runBundle } from "./bundle.js";
import { runColdStart } from "./coldstart.js";
import { writeEntries } from "./entries.js";
import { httpSettings, runHttpBench } from "./http.js";
import type { MemoryResult } from "./memory.js";
import type { PipelineResult } from "./pipeline.js";
import { type Extras, type ReportInput, type RunRecord, renderResults } from "./report.js";
import { makeSecrets, ROOT, type Secrets, secretsEnv, TMP } from "./shared.js";

const RESULTS_PATH = join(ROOT, "bench", "RESULTS.md");
const LAST_RUN = "last-run.json";

function readAnalysis(): string | undefined {
  const path = join(ROOT, "bench", "ANALYSIS.md");
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

// `npm run bench -- --render`: RESULTS.md again from the last full run's figures, with the
// current bench/ANALYSIS.md (after editing the analysis, no need to measure again).
if (process.argv.includes("--render")) {
  const input = JSON.parse(readFileSync(join(TMP, LAST_RUN), "utf8")) as ReportInput;
  writeFileSync(RESULTS_PATH, renderResults({ ...input, analysis: readAnalysis() }));
  process.stderr.write(`bench/RESULTS.md written again from bench/.tmp/${LAST_RUN}\n`);
  process.exit(0);
}

const quick = process.argv.includes("--quick");
if (quick) {
  // The method stays the same (≥ 15 rounds, ABBA, ≥ 50 ms batches); only its length shrinks.
  process.env.BENCH_ROUNDS ??= "15";
  process.env.BENCH_BATCH_MS ??= "50";
  process.env.BENCH_WARMUP_MS ??= "250";
  process.env.BENCH_HTTP_RUNS ??= "5";
  process.env.BENCH_HTTP_SECONDS ??= "1";
  process.env.BENCH_HTTP_WARMUP_SECONDS ??= "1";
}
const RUNS = Number(process.env.BENCH_RUNS ?? (quick ? 1 : 3));

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Runs a benchmark script in a fresh `node --expose-gc --import tsx` and parses its JSON line. */
function child<T>(script: string, secrets: Secrets): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script], {
      cwd: ROOT,
      env: { ...process.env, ...secretsEnv(secrets) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.once("error", reject);
    proc.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}`));
      const last = out.trim().split("\n").at(-1) ?? "";
      resolve(JSON.parse(last) as T);
    });
  });
}

async function timed<T>(
  durations: Record<string, number>,
  name: string,
  run: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    return await run();
  } finally {
    durations[name] = (performance.now() - t0) / 1000;
  }
}

const started = performance.now();
if ((loadavg()[0] ?? 0) > cpus().length * 0.5) {
  log("warning: the machine is busy; absolute figures will be noisy (the ratios less so)");
}

log("building the package (tsup, the library's configuration) into bench/.tmp/pkg …");
await buildPackage();
writeEntries();
const secrets = await makeSecrets();

const runs: RunRecord[] = [];
for (let i = 1; i <= RUNS; i++) {
  const durations: Record<string, number> = {};
  const loadBefore = loadavg();
  const startedAt = new Date().toISOString();
  log(`run ${i}/${RUNS} (load ${loadBefore.map((l) => l.toFixed(2)).join(" ")})`);
  log("  pipeline vs floor (in process) …");
  const pipeline = await timed(durations, "pipeline", () =>
    child<PipelineResult>("bench/pipeline.ts", secrets),
  );
  for (const c of pipeline.cases) {
    log(
      `    ${c.name}, ${c.inFlight} in flight: ${c.ratio.median.toFixed(2)}x (${c.ratio.p10.toFixed(2)}–${c.ratio.p90.toFixed(2)})`,
    );
  }
  log("  HTTP (autocannon) …");
  const http = await timed(durations, "http", () => runHttpBench(secrets, log));
  runs.push({ startedAt, loadBefore, loadAfter: loadavg(), durations, pipeline, http });
}

let extras: Extras | undefined;
if (!quick) {
  const durations: Record<string, number> = {};
  log("cold start …");
  const cold = await timed(durations, "cold start", () => runColdStart(secrets));
  log(`  ${cold.ratio.toFixed(2)}x`);
  log("bundle …");
  const bundle = await timed(durations, "bundle", runBundle);
  log(`  ${bundle.ratio.toFixed(2)}x`);
  log("memory …");
  const memory = await timed(durations, "memory", () =>
    child<MemoryResult>("bench/memory.ts", secrets),
  );
  log(`  heap ${memory.startHeap} → ${memory.endHeap} bytes`);
  extras = { cold, bundle, memory, durations };
}

const seconds = (performance.now() - started) / 1000;
const cpu = cpus();
const knobs = Object.fromEntries(
  Object.entries(process.env)
    .filter(([k, v]) => k.startsWith("BENCH_") && v !== undefined && !/PEM|TOKEN/.test(k))
    .sort(([a], [b]) => a.localeCompare(b)),
) as Record<string, string>;
const args = process.argv.slice(2);
const input: ReportInput = {
  date: new Date().toISOString(),
  machine: `${cpu[0]?.model ?? "unknown CPU"}, ${cpu.length} cores, ${type()} ${release()}`,
  node: process.version,
  command: `npm run bench${args.length > 0 ? ` -- ${args.join(" ")}` : ""}`,
  knobs,
  seconds,
  http: httpSettings(),
  esbuild: ESBUILD_OPTIONS,
  runs,
  extras,
};
mkdirSync(TMP, { recursive: true });
const resultsPath = quick ? join(TMP, "RESULTS.quick.md") : RESULTS_PATH;
writeFileSync(resultsPath, renderResults({ ...input, analysis: readAnalysis() }));
// The raw figures (bench/.tmp is not committed): `--render` writes RESULTS.md again from them.
writeFileSync(join(TMP, quick ? "last-quick.json" : LAST_RUN), JSON.stringify(input, null, 2));
log(`${resultsPath} written (${seconds.toFixed(0)} s)`);
