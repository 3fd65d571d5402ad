/**
 * `npm run bench`: builds the package, runs the five benchmarks and rewrites bench/RESULTS.md.
 *
 * 1. pipeline vs floor, in process (child process, mitata)
 * 2. HTTP overhead per framework (autocannon against a child-process server)
 * 3. cold start (fresh node processes)
 * 4. bundle size (esbuild + gzip)
 * 5. memory over 200,000 requests (child process, --expose-gc)
 *
 * Environment knobs (defaults are what RESULTS.md records): BENCH_ROUNDS, BENCH_HTTP_SECONDS,
 * BENCH_HTTP_RUNS, BENCH_COLD_RUNS, BENCH_MEMORY_REQUESTS.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { buildPackage } from "./build.js";
import { runBundle } from "./bundle.js";
import { runColdStart } from "./coldstart.js";
import { writeEntries } from "./entries.js";
import { runHttpBench } from "./http.js";
import type { MemoryResult } from "./memory.js";
import type { PipelineResult } from "./pipeline.js";
import { renderResults } from "./report.js";
import { makeSecrets, ROOT, type Secrets, secretsEnv, TMP } from "./shared.js";

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

const started = performance.now();
const durations: Record<string, number> = {};
async function timed<T>(name: string, run: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await run();
  } finally {
    durations[name] = (performance.now() - t0) / 1000;
  }
}
const loadBefore = loadavg();
log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(" ")}`);
if ((loadBefore[0] ?? 0) > cpus().length * 0.5) {
  log("warning: the machine is busy; figures will be noisy");
}

log("building the package (tsup, the project's configuration) into bench/.tmp/pkg …");
await timed("build", buildPackage);
writeEntries();
const secrets = await makeSecrets();

log("1/5 pipeline vs floor (in process) …");
const pipeline = await timed("pipeline", () => child<PipelineResult>("bench/pipeline.ts", secrets));
for (const pair of pipeline.pairs) log(`  ${pair.name}: ${pair.ratio.toFixed(2)}x floor`);

log("2/5 HTTP (autocannon) …");
const http = await timed("http", () => runHttpBench(secrets, log));

log("3/5 cold start …");
const cold = await timed("cold start", () => runColdStart(secrets));
log(`  ${cold.ratio.toFixed(2)}x`);

log("4/5 bundle …");
const bundle = await timed("bundle", runBundle);
log(`  ${bundle.ratio.toFixed(2)}x`);

log("5/5 memory …");
const memory = await timed("memory", () => child<MemoryResult>("bench/memory.ts", secrets));
log(`  heap ${memory.startHeap} → ${memory.endHeap} bytes`);

const seconds = (performance.now() - started) / 1000;
const resultsPath = join(ROOT, "bench", "RESULTS.md");
const previous = existsSync(resultsPath)
  ? previousFigures(readFileSync(resultsPath, "utf8"))
  : undefined;
const markdown = renderResults({
  pipeline,
  http,
  cold,
  bundle,
  memory,
  seconds,
  durations,
  loadBefore,
  loadAfter: loadavg(),
  previous,
});
writeFileSync(resultsPath, markdown);
// The raw figures, for a look beyond the table (bench/.tmp is not committed).
writeFileSync(
  join(TMP, "last-run.json"),
  JSON.stringify({ pipeline, http, cold, bundle, memory, seconds }, null, 2),
);
log(`bench/RESULTS.md written (${seconds.toFixed(0)} s)`);

/** The figures block and date of the results being replaced, shown to give the run-to-run spread. */
function previousFigures(markdown: string): { date: string; figures: string } | undefined {
  const date = /^- Date: (.+)$/m.exec(markdown)?.[1];
  const figures = /## Figures\n\n```\n([\s\S]*?)```/.exec(markdown)?.[1];
  return date && figures ? { date, figures: figures.trimEnd() } : undefined;
}
