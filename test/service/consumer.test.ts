// The published types as a strict merchant project sees them: tsc, with exactOptionalPropertyTypes,
// on consumer/exact-optional.ts, which imports crossborder-callbacks/service and /testing by name
// (resolved through package.json "exports" to dist/, built by `npm test` before vitest runs).
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { expect, it } from "vitest";
import { runCommand } from "../cli/io.js";

const root = new URL("../../", import.meta.url).pathname;

it("a merchant with exactOptionalPropertyTypes can call every method and tell results and errors apart", async () => {
  const built = `${root}dist/service.d.ts`;
  const sources = [
    ...readdirSync(`${root}src/service`).map((file) => `${root}src/service/${file}`),
    `${root}src/testing/service-simulator.ts`,
  ];
  const newest = Math.max(...sources.map((file) => statSync(file).mtimeMs));
  if (!existsSync(built) || statSync(built).mtimeMs < newest) {
    throw new Error("dist/service.d.ts is missing or older than its sources: run `npm run build`");
  }
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const project = `${root}test/service/consumer/tsconfig.json`;
  const run = await runCommand(process.execPath, [tsc, "-p", project], {}, root);
  expect(run.stdout + run.stderr).toBe("");
  expect(run.code).toBe(0);
}, 60_000);
