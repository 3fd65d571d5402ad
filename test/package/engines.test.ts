// The Node versions the package admits ("engines"), which the README states. The range was set when
// the CommonJS build require()d jose 6 (ESM-only) and so needed require(esm) on by default (Node
// 20.19.0 and 22.12.0). Since review testkit-1 the CommonJS build carries its own copy of jose and
// needs no require(esm) (test/package/install.test.ts requires every entry point with it turned off,
// as jest's CommonJS mode loads them); the range is kept as the versions the package is tested on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";

const RANGE = "^20.19.0 || >=22.12.0";
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
};
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe('"engines"', () => {
  it("admits the Node versions the package is tested on", () => {
    expect(pkg.engines.node).toBe(RANGE);
  });

  it("is the range the README states, where it names Node", () => {
    const statements = [...readme.matchAll(/Node (?:≥|>=) ?[\d.]+[^.\n]*/g)].map((m) => m[0]);
    expect(statements).toEqual([]);
    const named = readme.split("\n").filter((line) => line.includes(`Node \`${RANGE}\``));
    expect(named).toHaveLength(2);
    // Both say that require() works without require(esm) (the README's sentence may wrap).
    const unwrapped = readme.replace(/\s+/g, " ");
    expect(unwrapped).toContain("by `require()` (which needs no `require(esm)`");
    expect(unwrapped).toContain("of any entry point needs no `require(esm)`");
  });
});
