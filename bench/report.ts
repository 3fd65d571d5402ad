/**
 * Renders bench/RESULTS.md from the runs' figures. Pure: everything it shows comes in through
 * `ReportInput` (no clock, no OS calls, no benchmark modules loaded), so it is unit-tested in
 * test/bench/report.test.ts.
 */
import type { BundleResult } from "./bundle.js";
import type { ColdResult } from "./coldstart.js";
import type { HttpResult } from "./http.js";
import type { MemoryResult } from "./memory.js";
import type { CaseResult, PipelineResult } from "./pipeline.js";
import {
  fmtCell,
  fmtRatio,
  fmtTarget,
  fmtVerdict,
  markdownTable,
  overallVerdict,
  type Spread,
  type Target,
  verdict,
} from "./stats.js";

/** One of the (three) runs: a fresh pipeline process and fresh server processes. */
export interface RunRecord {
  readonly startedAt: string;
  readonly loadBefore: readonly number[];
  readonly loadAfter: readonly number[];
  /** Seconds per part of the run. */
  readonly durations: Readonly<Record<string, number>>;
  readonly pipeline: PipelineResult;
  readonly http: readonly HttpResult[];
}

/** The figures measured once per `npm run bench` (absent in `--quick`). */
export interface Extras {
  readonly cold: ColdResult;
  readonly bundle: BundleResult;
  readonly memory: MemoryResult;
  readonly durations: Readonly<Record<string, number>>;
}

export interface ReportInput {
  /** When the report was written (ISO). */
  readonly date: string;
  /** e.g. "AMD EPYC, 2 cores, Linux 6.18". */
  readonly machine: string;
  readonly node: string;
  /** The command as run, e.g. "npm run bench" or "npm run bench -- --quick". */
  readonly command: string;
  /** BENCH_* variables set for this run (empty: the defaults). */
  readonly knobs: Readonly<Record<string, string>>;
  readonly seconds: number;
  readonly http: {
    readonly connections: number;
    readonly pipelining: number;
    readonly duration: number;
    readonly warmup: number;
    readonly runs: number;
  };
  readonly esbuild?: {
    readonly platform: string;
    readonly format: string;
    readonly conditions: readonly string[];
    readonly target: string;
  };
  readonly runs: readonly RunRecord[];
  readonly extras?: Extras | undefined;
  /** bench/ANALYSIS.md, verbatim, if it exists. */
  readonly analysis?: string | undefined;
}

/** The issue's targets (issue 13, "Done when"): with 4 requests in flight. */
export const PIPELINE_TARGETS: Readonly<Record<string, Target>> = {
  "SendOrderToMerchant 30 products": { kind: "at most", value: 1.3 },
  "GetCheckoutCartInfo 30-product cart": { kind: "at most", value: 1.3 },
  UpdateOrderStatus: { kind: "at most", value: 1.2 },
};
export const TARGET_IN_FLIGHT = 4;
export const HTTP_TARGET: Target = { kind: "at least", value: 0.8 };
export const COLD_TARGET: Target = { kind: "at most", value: 1.5 };
export const BUNDLE_TARGET: Target = { kind: "at most", value: 1.3 };

export function pipelineTarget(name: string, inFlight: number): Target | undefined {
  return inFlight === TARGET_IN_FLIGHT ? PIPELINE_TARGETS[name] : undefined;
}

/** A row of the summary: one figure across the runs. */
export interface FigureRow {
  readonly label: string;
  readonly target: Target | undefined;
  /** Per run; undefined where a run lacks the figure. */
  readonly spreads: readonly (Spread | undefined)[];
  /** Per run, the CPU-time ratio's median, shown beside as a cross-check. */
  readonly cpu?: readonly (number | undefined)[];
}

/** Every pipeline case and every framework, in a stable order, across the runs. */
export function figureRows(runs: readonly RunRecord[]): FigureRow[] {
  const rows: FigureRow[] = [];
  const first = runs[0];
  if (!first) return rows;
  for (const c of first.pipeline.cases) {
    const same = (r: RunRecord) =>
      r.pipeline.cases.find((o) => o.name === c.name && o.inFlight === c.inFlight);
    rows.push({
      label: `pipeline ${c.name}, ${c.inFlight} in flight`,
      target: pipelineTarget(c.name, c.inFlight),
      spreads: runs.map((r) => same(r)?.ratio),
      cpu: runs.map((r) => same(r)?.cpuRatio.median),
    });
  }
  for (const h of first.http) {
    rows.push({
      label: `http ${h.framework} (req/s vs bare route)`,
      target: HTTP_TARGET,
      spreads: runs.map((r) => r.http.find((o) => o.framework === h.framework)?.ratio),
      cpu: runs.map((r) => r.http.find((o) => o.framework === h.framework)?.cpuRatio.median),
    });
  }
  return rows;
}

/** The summary table: target, each run's median (p10–p90) and verdict, and over all runs. */
export function summaryTable(runs: readonly RunRecord[]): string[] {
  const header = ["Figure", "Target", ...runs.map((_, i) => `Run ${i + 1}`), "All runs"];
  const rows = figureRows(runs).map((row) => {
    const medians = row.spreads.flatMap((s) => (s ? [s.median] : []));
    const overall =
      row.target === undefined
        ? "no target (reference)"
        : medians.length < row.spreads.length
          ? "**incomplete**"
          : overallVerdict(medians, row.target);
    return [
      row.label,
      row.target === undefined ? "—" : fmtTarget(row.target),
      ...row.spreads.map((s, i) => {
        if (!s) return "not measured";
        const cpu = row.cpu?.[i];
        return `${fmtCell(s, row.target)}${cpu === undefined ? "" : `; CPU ${fmtRatio(cpu)}`}`;
      }),
      overall,
    ];
  });
  return markdownTable(header, rows);
}

const us = (value: number) => `${value.toFixed(1)} µs`;
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
const loads = (l: readonly number[]) => l.map((v) => v.toFixed(2)).join(" / ");
const ratios = (list: readonly number[]) => list.map((r) => r.toFixed(2)).join(" ");
const range = (s: Spread) => `${fmtRatio(s.median)} (${s.p10.toFixed(2)}–${s.p90.toFixed(2)})`;

export function renderResults(f: ReportInput): string {
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  const n = f.runs.length;
  const knobs = Object.entries(f.knobs);

  push(
    "# Benchmark results",
    "",
    "Written by `npm run bench` (bench/run.ts); do not edit by hand: rerun it. The hand-written",
    "analysis lives in bench/ANALYSIS.md and is copied into the section “Analysis” below.",
    "",
    `- Date: ${f.date}`,
    `- Command: \`${f.command}\`${knobs.length > 0 ? ` with ${knobs.map(([k, v]) => `${k}=${v}`).join(", ")}` : " (default settings)"}`,
    `- Machine: ${f.machine}`,
    `- Node.js ${f.node}`,
    `- Whole command: ${f.seconds.toFixed(0)} s; ${n} run${n === 1 ? "" : "s"} of the pipeline and HTTP benchmarks, each in fresh processes (no JIT state shared between runs)`,
    "",
  );
  push(
    ...markdownTable(
      ["", ...f.runs.map((_, i) => `Run ${i + 1}`)],
      [
        ["Started", ...f.runs.map((r) => r.startedAt)],
        ["Load average 1/5/15 min, before", ...f.runs.map((r) => loads(r.loadBefore))],
        ["Load average 1/5/15 min, after", ...f.runs.map((r) => loads(r.loadAfter))],
        [
          "Took",
          ...f.runs.map((r) =>
            Object.entries(r.durations)
              .map(([k, s]) => `${k} ${s.toFixed(0)} s`)
              .join(", "),
          ),
        ],
      ],
    ),
    "",
  );

  push(
    "## Figures against the issue's targets",
    "",
    "Each cell: the median of the per-round ratios, (p10–p90 of them), and the verdict of that median against the target. Pipeline: library time per call ÷ floor time per call (lower is better); HTTP: library req/s ÷ bare route req/s (higher is better). After each, “CPU”: the same rounds measured in CPU time instead (pipeline: the process's CPU time per call, library ÷ floor; HTTP: the server process's CPU time per request, bare ÷ library, so higher is better there too), a cross-check that load from other processes moves far less: where it and the figure agree, the figure is not an artefact of the machine's load. The verdict is the figure's (wall time, req/s). “All runs”: met only if every run's median meets the target; otherwise the worst miss.",
    "",
    ...summaryTable(f.runs),
    "",
  );

  // 1. Pipeline
  const p0 = f.runs[0]?.pipeline;
  push(
    "## 1. Pipeline vs floor (in process)",
    "",
    "Library: the handler a merchant mounts (`createSendOrderToMerchantHandler` etc. with `auth` from `createAuth` in the documented RS256 JWT mode, PEM key), called with `handler.handle(request)`: authentication, body bytes read within the limit, JSON.parse, validation, decoding, card-data protection, the merchant function, the answer's serialisation. Floor, the hand-written receiver: `jwtVerify(token, key, { algorithms: [\"RS256\"] })` with the key imported beforehand, `JSON.parse(new TextDecoder().decode(body))`, `JSON.stringify` of the same answer; for GetCheckoutCartInfo, verify + `JSON.stringify` of the cart the merchant function returns prebuilt (the library also validates it). Bodies are handed over as bytes, as the adapters hand them to the engine. Each library answer is checked equal to the floor's before measuring.",
    "",
    p0
      ? `Method: one process per run (\`node --import tsx bench/pipeline.ts\`). A batch calls one function, with N calls in flight (each of N workers starts its next call when its last one ends), until ${p0.batchMs} ms have passed, and counts wall time ÷ calls. After a discarded warm-up (${p0.warmupMs} ms per function and concurrency) and a discarded first round, ${p0.rounds} rounds; in each, every case is measured as four batches in the order library, floor, floor, library (ABBA), and the round's ratio is library ÷ floor (time per call over both batches of each). The figure is the median of the ${p0.rounds} per-round ratios, with p10–p90 (linear interpolation). No forced GC: a server in steady state has a grown young generation.`
      : "",
    "",
  );
  const caseRows: string[][] = [];
  for (const c of p0?.cases ?? []) {
    for (const [i, run] of f.runs.entries()) {
      const m = run.pipeline.cases.find(
        (o: CaseResult) => o.name === c.name && o.inFlight === c.inFlight,
      );
      if (!m) continue;
      caseRows.push([
        i === 0 ? `${c.name} (${c.detail})` : "",
        String(c.inFlight),
        String(i + 1),
        us(m.libraryUs),
        us(m.floorUs),
        `${m.calls.library} / ${m.calls.floor}`,
        range(m.ratio),
        `${us(m.libraryCpuUs)} / ${us(m.floorCpuUs)}: ${range(m.cpuRatio)}`,
        ratios(m.ratios),
      ]);
    }
  }
  push(
    ...markdownTable(
      [
        "Case",
        "In flight",
        "Run",
        "Library per call",
        "Floor per call",
        "Calls per batch (library / floor)",
        "Ratio (p10–p90)",
        "CPU time per call, library / floor: ratio (p10–p90)",
        "Per-round ratios",
      ],
      caseRows,
    ),
    "",
    "“Per call” is wall time ÷ calls (median over rounds): with 4 in flight it is the time the process needs per request at that concurrency, not one request's latency. The CPU-time column is the process's CPU time (`process.cpuUsage()`: every thread, so the RSA verifications in libuv's pool and the GC's helper threads count) ÷ calls over the same batches: time other processes take from the machine inflates it far less than wall time (it still pays their cache and core-sharing effects), so where it and the wall-time ratio agree the figure is not an artefact of the machine's load; the figure itself is the wall-time ratio.",
    "",
  );

  // 2. HTTP
  const h = f.http;
  push(
    "## 2. HTTP overhead (autocannon)",
    "",
    `Each framework runs in its own child process (\`node --import tsx bench/http-server.ts <framework>\`) serving two routes on one port: the library's router for SendOrderToMerchant through the framework's adapter (\`toExpress\`, \`toKoa\`, \`toFetch\` under Hono with @hono/node-server, \`toNodeListener\`), and a bare route in the same framework doing the floor's work (read the body, verify the token with the pre-imported key, JSON.parse, JSON.stringify the same ResponseInfo with the same two headers). autocannon runs in the parent process against 127.0.0.1: POST of the 30-product order, ${h.connections} connections, pipelining ${h.pipelining}, every response body checked (\`expectBody\`). Per framework and run: a fresh server, ${h.warmup} s warm-up of each route (discarded), then ${h.runs} rounds of one ${h.duration} s run of each route, alternating which goes first (bare, library, library, bare, …). req/s = responses ÷ duration; each round's ratio is library req/s ÷ bare req/s; the figure is the median of the round ratios, with p10–p90. Server and load generator share the machine's cores, equally for both routes.`,
    "",
  );
  const httpRows: string[][] = [];
  for (const first of f.runs[0]?.http ?? []) {
    for (const [i, run] of f.runs.entries()) {
      const m = run.http.find((o) => o.framework === first.framework);
      if (!m) continue;
      httpRows.push([
        i === 0 ? first.framework : "",
        String(i + 1),
        String(Math.round(m.library.rps)),
        String(Math.round(m.bare.rps)),
        range(m.ratio),
        `${us(m.library.cpuPerRequestUs)} / ${us(m.bare.cpuPerRequestUs)}: ${range(m.cpuRatio)}`,
        `${m.library.p99} / ${m.bare.p99} ms`,
        `${m.library.p50} / ${m.bare.p50} ms`,
        ratios(m.ratios),
      ]);
    }
  }
  push(
    ...markdownTable(
      [
        "Framework",
        "Run",
        "Library req/s",
        "Bare req/s",
        "Ratio (p10–p90)",
        "Server CPU per request, library / bare: ratio bare ÷ library (p10–p90)",
        "p99 library / bare",
        "p50 library / bare",
        "Per-round ratios",
      ],
      httpRows,
    ),
    "",
  );

  if (f.extras) renderExtras(f, f.extras, push);

  push(
    "## Analysis",
    "",
    f.analysis === undefined
      ? "_No bench/ANALYSIS.md. Write the analysis of the figures there (why a figure misses, from `node --import tsx bench/profile.ts`): it is copied here verbatim each time this file is generated._"
      : "_Copied verbatim from bench/ANALYSIS.md (hand-written; regenerating RESULTS.md keeps it)._",
    "",
  );
  if (f.analysis !== undefined) push(f.analysis.trimEnd(), "");

  push(
    "## Commands",
    "",
    "```sh",
    "npm run bench                  # = node --import tsx bench/run.ts: everything below, writes bench/RESULTS.md",
    "npm run bench -- --quick       # 1 run, 15 rounds of 50 ms batches, 5 HTTP rounds, no cold start/bundle/memory;",
    "                               # writes bench/.tmp/RESULTS.quick.md (RESULTS.md untouched)",
    "npm run bench -- --render      # RESULTS.md again from the last full run's figures and the current ANALYSIS.md",
    "node --import tsx bench/profile.ts   # per-stage costs of one SendOrderToMerchant (30 products)",
    "# npm run bench runs:",
    "#   tsup (the library's configuration in tsup.config.ts, into bench/.tmp/pkg/dist, no .d.ts)",
    "#   then BENCH_RUNS (3) times: node --import tsx bench/pipeline.ts       1. pipeline vs floor",
    "#                              node --import tsx bench/http-server.ts <express|koa|hono|node>, autocannon in-process",
    "#   then once: node bench/.tmp/pkg/cold-{library,baseline}.mjs           3. cold start",
    "#              esbuild bench/.tmp/pkg/worker-{library,baseline}.mjs      4. bundle",
    "#              node --expose-gc --import tsx bench/memory.ts             5. memory",
    "```",
    "",
    "Knobs (environment): BENCH_RUNS (3), BENCH_ROUNDS (20), BENCH_BATCH_MS (60), BENCH_WARMUP_MS (400), BENCH_HTTP_RUNS (5), BENCH_HTTP_SECONDS (1), BENCH_HTTP_WARMUP_SECONDS (1), BENCH_COLD_RUNS (20), BENCH_MEMORY_REQUESTS (200000). The package is built into bench/.tmp/pkg/dist (not dist/, so a benchmark never deletes dist/ under a running test), next to a package.json with the package's name and exports map, so every entry imports `crossborder-callbacks` by name.",
    "",
  );
  return lines.join("\n");
}

function renderExtras(f: ReportInput, e: Extras, push: (...more: string[]) => void): void {
  const cold = verdict(e.cold.ratio, COLD_TARGET);
  const bundle = verdict(e.bundle.ratio, BUNDLE_TARGET);
  const grew = e.memory.growth >= e.memory.threshold;
  push(
    "## Measured once",
    "",
    `Cold start, bundle size and memory are measured once per \`npm run bench\`, after the runs (bundle size does not vary; cold start is a ratio of alternated process launches, which the machine's load still moves; memory takes long). They took ${Object.entries(
      e.durations,
    )
      .map(([k, s]) => `${k} ${s.toFixed(0)} s`)
      .join(", ")}.`,
    "",
    ...markdownTable(
      ["Figure", "Result", "Target", "Verdict"],
      [
        ["cold start (wall)", fmtRatio(e.cold.ratio), fmtTarget(COLD_TARGET), fmtVerdict(cold)],
        ["bundle (gzip)", fmtRatio(e.bundle.ratio), fmtTarget(BUNDLE_TARGET), fmtVerdict(bundle)],
        [
          "memory growth",
          MB(e.memory.growth),
          `< ${MB(e.memory.threshold)}`,
          grew ? "**missed**" : "met",
        ],
      ],
    ),
    "",
    "### 3. Cold start",
    "",
    `A fresh \`node\` process per run (plain node, no loader), ${e.cold.library.wall.length} runs of each, alternating, after 2 discarded warm-up runs of each. Wall time is measured by the parent, from spawn to exit; the child also prints \`performance.now()\` once ready. Library: imports \`crossborder-callbacks\` and \`crossborder-callbacks/fetch\` (through the package's exports map to the build), runs \`createAuth\` with a PEM public key and builds all ${e.cold.handlers} handlers, each wrapped by \`toFetch\`. Baseline: imports jose (\`importSPKI\`, \`jwtVerify\`) and zod, and imports the same PEM key.`,
    "",
    ...markdownTable(
      ["", "Median wall (spawn → exit)", "Median ready (performance.now())", "Runs (wall, ms)"],
      [
        [
          "library",
          `${e.cold.library.wallMs.toFixed(1)} ms`,
          `${e.cold.library.readyMs.toFixed(1)} ms`,
          e.cold.library.wall.join(", "),
        ],
        [
          "baseline",
          `${e.cold.baseline.wallMs.toFixed(1)} ms`,
          `${e.cold.baseline.readyMs.toFixed(1)} ms`,
          e.cold.baseline.wall.join(", "),
        ],
        ["ratio", fmtRatio(e.cold.ratio), fmtRatio(e.cold.readyRatio), ""],
      ],
    ),
    "",
    "### 4. Bundle size",
    "",
    `${f.esbuild ? `esbuild ${f.esbuild.platform}, format ${f.esbuild.format}, bundle + minify, conditions ${f.esbuild.conditions.join(", ")} (what wrangler uses for Workers), target ${f.esbuild.target}` : "esbuild"}; gzip with node:zlib \`gzipSync\` at its default level. Library entry: a Worker \`fetch\` that builds, on first request, \`createAuth\` (JWT, PEM key from env), all handler factories mounted with \`createCallbackRouter\` and served with \`toFetch\`. Baseline entry: jose's \`importSPKI\` and \`jwtVerify\` and zod's \`z\`, verifying the token and validating a small schema.`,
    "",
    ...markdownTable(
      ["Entry", "Minified", "Gzipped", "Largest parts (minified bytes)"],
      [
        [
          "library",
          kB(e.bundle.library.bytes),
          kB(e.bundle.library.gzipBytes),
          e.bundle.library.top.map((t) => `${t.input} ${kB(t.bytes)}`).join(", "),
        ],
        [
          "baseline",
          kB(e.bundle.baseline.bytes),
          kB(e.bundle.baseline.gzipBytes),
          e.bundle.baseline.top.map((t) => `${t.input} ${kB(t.bytes)}`).join(", "),
        ],
        [
          "ratio",
          fmtRatio(e.bundle.library.bytes / e.bundle.baseline.bytes),
          fmtRatio(e.bundle.ratio),
          "",
        ],
      ],
    ),
    "",
    "### 5. Memory",
    "",
    `${e.memory.requests} SendOrderToMerchant requests (30 products, a fresh Buffer body each, 8 in flight) through one handler in one process (\`node --expose-gc --import tsx bench/memory.ts\`), after 2,000 warm-up requests. Heap used after three forced \`gc()\` calls. Judged as growth if the end exceeds the start by ${MB(e.memory.threshold)} or more.`,
    "",
    `- Start: ${MB(e.memory.startHeap)} (${e.memory.startHeap} bytes); end: ${MB(e.memory.endHeap)} (${e.memory.endHeap} bytes)`,
    `- Growth: ${MB(e.memory.growth)} (${(e.memory.growth / e.memory.requests).toFixed(2)} bytes per request); highest checkpoint ${MB(e.memory.maxHeap)}`,
    `- Every ${e.memory.requests / e.memory.checkpoints.length} requests: ${e.memory.checkpoints.map((b) => MB(b)).join(", ")}`,
    `- ${e.memory.requests} requests took ${e.memory.seconds.toFixed(1)} s`,
    "",
  );
}
