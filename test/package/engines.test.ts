// The Node versions the package admits are those where its CommonJS build loads: jose 6 is
// ESM-only, so `require()` of the package needs require(esm) on by default, which it is from
// Node 20.19.0 on the 20 line and from 22.12.0 on (21.x and 22.0–22.11 need a flag and throw
// ERR_REQUIRE_ESM). npm warns on the others only if "engines" says so, and the README says the same.
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
  it("admits only the Node versions with require(esm) unflagged", () => {
    expect(pkg.engines.node).toBe(RANGE);
  });

  it("is the range the README states, where it names Node", () => {
    const statements = [...readme.matchAll(/Node (?:≥|>=) ?[\d.]+[^.\n]*/g)].map((m) => m[0]);
    expect(statements).toEqual([]);
    const named = readme.split("\n").filter((line) => line.includes(`Node \`${RANGE}\``));
    expect(named).toHaveLength(2);
    expect(named.join("\n")).toContain("require(esm)");
  });
});
