/**
 * assertBuilt() guards every test that runs dist/ (the examples, the packed tarball): a dist/ built
 * before any file of src/ last changed is refused, whichever file that is.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { assertBuilt } from "./support/flow.js";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A repository with src/ files and a dist/, each file given its modification time (seconds). */
function project(files: Record<string, number>): string {
  root = mkdtempSync(join(tmpdir(), "cbc-assert-built-"));
  for (const [file, seconds] of Object.entries(files)) {
    const path = join(root, file);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "");
    utimesSync(path, seconds, seconds);
  }
  return root;
}

it("refuses a dist/ older than a src/ file other than the fetch adapter", () => {
  const dir = project({
    "src/adapters/fetch.ts": 1000,
    "src/core/engine.ts": 3000,
    "dist/fetch.js": 2000,
    "dist/index.js": 2000,
  });
  expect(() => assertBuilt(dir)).toThrow(/older than src\/core\/engine\.ts/);
});

it("accepts a dist/ built after every src/ file", () => {
  const dir = project({
    "src/adapters/fetch.ts": 1000,
    "src/core/engine.ts": 1500,
    "dist/fetch.js": 2000,
    "dist/index.js": 2000,
  });
  expect(() => assertBuilt(dir)).not.toThrow();
});

it("refuses a missing dist/", () => {
  const dir = project({ "src/index.ts": 1000 });
  expect(() => assertBuilt(dir)).toThrow(/dist\/ is missing/);
});
