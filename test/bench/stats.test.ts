import { describe, expect, it } from "vitest";
import {
  fmtCell,
  fmtVerdict,
  markdownTable,
  median,
  overallVerdict,
  percentile,
  spread,
  verdict,
} from "../../bench/stats.js";

describe("bench statistics", () => {
  it("takes the median of odd and even counts, in any order", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it("interpolates percentiles between the closest ranks", () => {
    const values = [10, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    // rank 0.1 × 9 = 0.9: 1 + 0.9 × (2 − 1)
    expect(percentile(values, 10)).toBeCloseTo(1.9, 10);
    // rank 0.9 × 9 = 8.1: 9 + 0.1 × (10 − 9)
    expect(percentile(values, 90)).toBeCloseTo(9.1, 10);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 100)).toBe(10);
    expect(percentile([5, 5, 5], 37)).toBe(5);
  });

  it("leaves its input unsorted", () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it("refuses what has no percentile", () => {
    expect(() => median([])).toThrow(RangeError);
    expect(() => percentile([1, 2], 101)).toThrow(RangeError);
    expect(() => median([1, Number.NaN])).toThrow(RangeError);
  });

  it("gives median and p10–p90 of per-round ratios", () => {
    const ratios = [1.2, 1.4, 1.3, 1.1, 2.9, 1.25, 1.35, 1.3, 1.2, 1.3, 0.4];
    const s = spread(ratios);
    expect(s.n).toBe(11);
    expect(s.median).toBe(1.3);
    // sorted: 0.4 1.1 1.2 1.2 1.25 1.3 1.3 1.3 1.35 1.4 2.9; p10 at rank 1, p90 at rank 9
    expect(s.p10).toBeCloseTo(1.1, 10);
    expect(s.p90).toBeCloseTo(1.4, 10);
  });
});

describe("verdict against a target", () => {
  const atMost = { kind: "at most", value: 1.3 } as const;
  const atLeast = { kind: "at least", value: 0.8 } as const;

  it("meets an at-most target at or under it, judged as shown (two decimals)", () => {
    expect(verdict(1.2, atMost)).toEqual({ met: true, missBy: 0, missPct: 0 });
    expect(verdict(1.3, atMost).met).toBe(true);
    expect(verdict(1.304, atMost).met).toBe(true);
    expect(verdict(1.306, atMost).met).toBe(false);
  });

  it("says by how much an at-most target is missed", () => {
    const v = verdict(1.56, atMost);
    expect(v.met).toBe(false);
    expect(v.missBy).toBeCloseTo(0.26, 10);
    expect(v.missPct).toBeCloseTo(0.2, 10);
    expect(fmtVerdict(v)).toBe("**missed by 0.26x** (20%)");
  });

  it("judges an at-least target the other way", () => {
    expect(verdict(0.85, atLeast).met).toBe(true);
    const v = verdict(0.6, atLeast);
    expect(v.met).toBe(false);
    expect(v.missBy).toBeCloseTo(0.2, 10);
    expect(v.missPct).toBeCloseTo(0.25, 10);
  });

  it("formats a run's cell with its range, with and without a target", () => {
    const s = { median: 1.52, p10: 1.41, p90: 1.66, n: 20 };
    expect(fmtCell(s, atMost)).toBe("1.52x (1.41–1.66) **missed by 0.22x** (17%)");
    expect(fmtCell({ ...s, median: 1.25 }, atMost)).toBe("1.25x (1.41–1.66) met");
    expect(fmtCell(s, undefined)).toBe("1.52x (1.41–1.66)");
  });

  it("over all runs: met only if every run met it, else the worst miss", () => {
    expect(overallVerdict([1.1, 1.29, 1.3], atMost)).toBe("met in 3/3 runs");
    expect(overallVerdict([1.1, 1.5, 1.4], atMost)).toBe(
      "**missed** in 2/3 runs (worst by 0.20x, 15%)",
    );
    expect(overallVerdict([0.7, 0.9, 0.75], atLeast)).toBe(
      "**missed** in 2/3 runs (worst by 0.10x, 13%)",
    );
  });
});

describe("markdown table", () => {
  it("writes header, separator and rows", () => {
    expect(
      markdownTable(
        ["a", "b"],
        [
          ["1", "2"],
          ["3", "4"],
        ],
      ),
    ).toEqual(["| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |"]);
  });

  it("escapes pipes and newlines so a cell cannot break the table", () => {
    expect(markdownTable(["x"], [["a|b\nc"]])[2]).toBe("| a\\|b c |");
  });

  it("refuses a row of the wrong width", () => {
    expect(() => markdownTable(["a", "b"], [["1"]])).toThrow(RangeError);
  });
});
