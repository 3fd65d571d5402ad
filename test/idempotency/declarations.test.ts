/**
 * The store subpaths' published declarations name no database client, so that a merchant with
 * `ioredis` alone (no `redis`, no `pg`, none of their types) typechecks with `skipLibCheck: false`.
 * (The clients' own types are checked against the stores' parameters by the typecheck of the
 * tests, which pass every client version to the stores without a cast.)
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertBuilt } from "../examples/support/flow.js";

const DIST = new URL("../../dist/", import.meta.url).pathname;

/** Every package a declaration file imports, following its relative imports. */
function packagesImportedBy(entry: string): string[] {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const pending = [join(DIST, entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
      if (specifier === undefined) continue;
      if (!specifier.startsWith(".")) {
        packages.add(specifier);
        continue;
      }
      const declaration = join(dirname(file), specifier).replace(/\.(c?)js$/, ".d.$1ts");
      expect(existsSync(declaration), `${file} imports ${specifier}`).toBe(true);
      pending.push(declaration);
    }
  }
  return [...packages];
}

describe("declarations of the store subpaths", () => {
  for (const entry of ["redis.d.ts", "redis.d.cts", "postgres.d.ts", "postgres.d.cts"]) {
    it(`dist/${entry} and what it imports name no client package`, () => {
      assertBuilt();
      expect(packagesImportedBy(entry)).toEqual([]);
    });
  }
});
