/**
 * The long form of the suite's fuzzer (test/fuzz/property.ts holds the property):
 *
 *   npm run fuzz -- --runs 100000            # a fresh seed, printed first
 *   npm run fuzz -- --seed 42 --path 17:3    # replays a failure
 *
 * Prints the seed, progress every 10,000 cases, then the cases and requests run, the rate, and
 * how many cases ended in each outcome. Exits 1 on the first failure, with its replay command.
 */
import fc from "fast-check";
import { createFuzzHarness, type FuzzCase, fuzzCaseArb } from "../test/fuzz/property.js";

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const index = args.indexOf(`--${name}`);
  if (index >= 0) return args[index + 1];
  return args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function integer(name: string, fallback: number): number {
  const text = option(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    console.error(`--${name} must be an integer, got ${text}`);
    process.exit(2);
  }
  return value;
}

const runs = integer("runs", 10_000);
const seed = integer("seed", (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);
const path = option("path");

console.log(`fuzz: ${runs} cases, seed ${seed}${path === undefined ? "" : `, path ${path}`}`);
const harness = await createFuzzHarness();
const started = performance.now();
let done = 0;
const property = fc.asyncProperty(fuzzCaseArb, async (c: FuzzCase) => {
  await harness.check(c);
  done++;
  if (done % 10_000 === 0) {
    const seconds = (performance.now() - started) / 1000;
    console.log(`  ${done} cases, ${Math.round(harness.sent / seconds)} requests/s`);
  }
});
const details = await fc.check(property, {
  numRuns: runs,
  seed,
  ...(path === undefined ? {} : { path }),
});
const seconds = (performance.now() - started) / 1000;

if (details.failed) {
  console.error(fc.defaultReportMessage(details));
  const error = details.errorInstance;
  console.error(`\n${error instanceof Error ? error.message : String(error)}`);
  console.error(
    `\nreplay: npm run fuzz -- --seed ${details.seed} --path ${details.counterexamplePath ?? ""}`,
  );
  process.exit(1);
}

console.log(
  `fuzz: ${details.numRuns} cases, ${harness.sent} requests (each case and a pristine request after it), 0 failures`,
);
console.log(
  `      ${seconds.toFixed(1)} s: ${Math.round(harness.sent / seconds)} requests/s, ${Math.round(details.numRuns / seconds)} cases/s`,
);
const width = Math.max(...[...harness.outcomes.keys()].map((key) => key.length));
for (const [outcome, count] of [...harness.outcomes].sort()) {
  console.log(`      ${outcome.padEnd(width)}  ${count}`);
}
