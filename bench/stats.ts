/**
 * The pure arithmetic of the benchmark report: medians and percentiles of per-round ratios, the
 * verdict of a ratio against a target, and markdown tables. No I/O, no clock: unit-tested in
 * test/bench/stats.test.ts.
 */

function sortedCopy(values: readonly number[]): number[] {
  if (values.length === 0) throw new RangeError("no values");
  for (const v of values) {
    if (!Number.isFinite(v)) throw new RangeError(`not a finite number: ${v}`);
  }
  return [...values].sort((a, b) => a - b);
}

/**
 * The p-th percentile (0 ≤ p ≤ 100) by linear interpolation between the closest ranks (the
 * method of R's type 7, numpy's default): rank p/100 × (n − 1) in the sorted values.
 */
export function percentile(values: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile out of range: ${p}`);
  const sorted = sortedCopy(values);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const low = sorted[lo] as number;
  return low + (rank - lo) * ((sorted[hi] as number) - low);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export interface Spread {
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly n: number;
}

/** Median and p10–p90 of a list of per-round figures. */
export function spread(values: readonly number[]): Spread {
  return {
    median: median(values),
    p10: percentile(values, 10),
    p90: percentile(values, 90),
    n: values.length,
  };
}

/** A ratio's target: at most `value` (cost against the floor) or at least `value` (throughput). */
export interface Target {
  readonly kind: "at most" | "at least";
  readonly value: number;
}

export interface Verdict {
  readonly met: boolean;
  /** How far past the target, in ratio units (0 when met). */
  readonly missBy: number;
  /** missBy relative to the target (0.1 = 10% past it; 0 when met). */
  readonly missPct: number;
}

export function verdict(ratio: number, target: Target): Verdict {
  const over = target.kind === "at most" ? ratio - target.value : target.value - ratio;
  // Ratios are shown with two decimals: 1.3049 reads "1.30x" and is judged as 1.30.
  const shown = Math.round(over * 100) / 100;
  if (shown <= 0) return { met: true, missBy: 0, missPct: 0 };
  return { met: false, missBy: shown, missPct: shown / target.value };
}

export const fmtRatio = (ratio: number): string => `${ratio.toFixed(2)}x`;

export function fmtTarget(target: Target): string {
  return `${target.kind === "at most" ? "≤" : "≥"} ${fmtRatio(target.value)}`;
}

/** "met" or "**missed by 0.22x** (17%)". */
export function fmtVerdict(v: Verdict): string {
  if (v.met) return "met";
  return `**missed by ${fmtRatio(v.missBy)}** (${Math.round(v.missPct * 100)}%)`;
}

/** One run's cell: "1.52x (1.41–1.66) missed by 0.22x (17%)"; with no target, no verdict. */
export function fmtCell(s: Spread, target: Target | undefined): string {
  const range = `${fmtRatio(s.median)} (${s.p10.toFixed(2)}–${s.p90.toFixed(2)})`;
  return target === undefined ? range : `${range} ${fmtVerdict(verdict(s.median, target))}`;
}

/** The verdict over all runs: met only if every run's median met it; else the worst miss. */
export function overallVerdict(medians: readonly number[], target: Target): string {
  const verdicts = medians.map((m) => verdict(m, target));
  const missed = verdicts.filter((v) => !v.met);
  if (missed.length === 0) return `met in ${medians.length}/${medians.length} runs`;
  const worst = missed.reduce((a, b) => (b.missBy > a.missBy ? b : a));
  return `**missed** in ${missed.length}/${medians.length} runs (worst by ${fmtRatio(worst.missBy)}, ${Math.round(worst.missPct * 100)}%)`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** A markdown table; pipes and newlines inside cells are escaped so the table stays whole. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string[] {
  for (const row of rows) {
    if (row.length !== header.length) {
      throw new RangeError(`row has ${row.length} cells, header ${header.length}`);
    }
  }
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)];
}
