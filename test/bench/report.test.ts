import { describe, expect, it } from "vitest";
import type { HttpResult } from "../../bench/http.js";
import type { CaseResult } from "../../bench/pipeline.js";
import { type RunRecord, renderResults, summaryTable } from "../../bench/report.js";
import { spread } from "../../bench/stats.js";

function pipelineCase(name: string, inFlight: number, ratios: number[]): CaseResult {
  return {
    name,
    detail: "body",
    inFlight,
    calls: { library: 100, floor: 200 },
    libraryUs: 250,
    floorUs: 125,
    ratios,
    ratio: spread(ratios),
    libraryCpuUs: 240,
    floorCpuUs: 120,
    cpuRatios: ratios.map((r) => r - 0.05),
    cpuRatio: spread(ratios.map((r) => r - 0.05)),
  };
}

function httpResult(framework: HttpResult["framework"], ratios: number[]): HttpResult {
  const stats = { rps: 1000, cpuPerRequestUs: 300, p99: 9, p50: 4, runs: [1000] };
  const cpuRatios = ratios.map((r) => r + 0.1);
  return {
    framework,
    library: stats,
    bare: stats,
    ratios,
    ratio: spread(ratios),
    cpuRatios,
    cpuRatio: spread(cpuRatios),
  };
}

function run(sendOrder: number[], status: number[], node: number[]): RunRecord {
  return {
    startedAt: "2026-11-25T20:00:00.000Z",
    loadBefore: [1, 0.5, 0.25],
    loadAfter: [2, 1, 0.5],
    durations: { pipeline: 50, http: 60 },
    pipeline: {
      rounds: sendOrder.length,
      batchMs: 60,
      warmupMs: 400,
      seconds: 50,
      cases: [
        pipelineCase("SendOrderToMerchant 30 products", 4, sendOrder),
        pipelineCase("SendOrderToMerchant 30 products", 1, sendOrder),
        pipelineCase("UpdateOrderStatus", 4, status),
      ],
    },
    http: [httpResult("node", node)],
  };
}

const runs = [
  run([1.2, 1.25, 1.3], [1.1, 1.15, 1.2], [0.8, 0.85, 0.9]),
  run([1.3, 1.4, 1.5], [1.1, 1.1, 1.1], [0.7, 0.75, 0.8]),
  run([1.2, 1.2, 1.2], [1.3, 1.3, 1.3], [0.9, 0.9, 0.9]),
];

describe("the summary of figures against targets", () => {
  const table = summaryTable(runs);

  it("has a column per run and one over all runs", () => {
    expect(table[0]).toBe("| Figure | Target | Run 1 | Run 2 | Run 3 | All runs |");
    expect(table).toHaveLength(2 + 4);
  });

  it("judges SendOrderToMerchant with 4 in flight against ≤ 1.3x in every run", () => {
    expect(table[2]).toBe(
      "| pipeline SendOrderToMerchant 30 products, 4 in flight | ≤ 1.30x | 1.25x (1.21–1.29) met; CPU 1.20x | 1.40x (1.32–1.48) **missed by 0.10x** (8%); CPU 1.35x | 1.20x (1.20–1.20) met; CPU 1.15x | **missed** in 1/3 runs (worst by 0.10x, 8%) |",
    );
  });

  it("shows the alone figure without a target", () => {
    expect(table[3]).toContain("1 in flight | — | 1.25x (1.21–1.29); CPU 1.20x |");
    expect(table[3]).toContain("no target (reference)");
  });

  it("holds UpdateOrderStatus to 1.2x and HTTP to 0.8x", () => {
    expect(table[4]).toContain("| ≤ 1.20x |");
    expect(table[4]).toContain("1.30x (1.30–1.30) **missed by 0.10x** (8%); CPU 1.25x");
    expect(table[5]).toBe(
      "| http node (req/s vs bare route) | ≥ 0.80x | 0.85x (0.81–0.89) met; CPU 0.95x | 0.75x (0.71–0.79) **missed by 0.05x** (6%); CPU 0.85x | 0.90x (0.90–0.90) met; CPU 1.00x | **missed** in 1/3 runs (worst by 0.05x, 6%) |",
    );
  });

  it("says when a run lacks a figure", () => {
    const partial = [runs[0] as RunRecord, { ...(runs[1] as RunRecord), http: [] }];
    const rows = summaryTable(partial);
    expect(rows.at(-1)).toContain("| not measured | **incomplete** |");
  });
});

describe("RESULTS.md", () => {
  const input = {
    date: "2026-11-25T20:10:00.000Z",
    machine: "Test CPU, 2 cores, Linux 6",
    node: "v20.20.2",
    command: "npm run bench",
    knobs: { BENCH_ROUNDS: "15" },
    seconds: 420,
    http: { connections: 10, pipelining: 1, duration: 1, warmup: 1, runs: 5 },
    runs,
  };

  it("records the date, load, node version and command of every run", () => {
    const md = renderResults(input);
    expect(md).toContain("- Date: 2026-11-25T20:10:00.000Z");
    expect(md).toContain("- Node.js v20.20.2");
    expect(md).toContain("- Command: `npm run bench` with BENCH_ROUNDS=15");
    expect(md).toContain("| Load average 1/5/15 min, before | 1.00 / 0.50 / 0.25 |");
    expect(md).toContain("| Took | pipeline 50 s, http 60 s |");
  });

  it("copies bench/ANALYSIS.md verbatim, and says where to write it when absent", () => {
    const analysis = "### Why SendOrderToMerchant misses\n\nzod | 61 µs of 80 µs.\n";
    const md = renderResults({ ...input, analysis });
    expect(md).toContain(`## Analysis\n\n_Copied verbatim from bench/ANALYSIS.md`);
    expect(md).toContain(analysis.trimEnd());
    expect(renderResults(input)).toContain("_No bench/ANALYSIS.md.");
  });

  it("leaves out the once-measured section when there are no extras (--quick)", () => {
    expect(renderResults(input)).not.toContain("## Measured once");
  });
});
