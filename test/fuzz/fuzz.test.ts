// Issue #10: the fuzzer, in the suite. A seeded run of mutated requests through every callback,
// transport and merchant behaviour (see property.ts for what is mutated and what is checked).
// Quiet when green; on a failure it prints the seed and the path that replay it:
//   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run test/fuzz
// FUZZ_RUNS sets the number of cases; the long form is `npm run fuzz -- --runs 100000`.
import fc from "fast-check";
import { expect, it } from "vitest";
import { createFuzzHarness, fuzzProperty } from "./property.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 1200);
const SEED =
  process.env.FUZZ_SEED === undefined
    ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0
    : Number(process.env.FUZZ_SEED);
const PATH = process.env.FUZZ_PATH;

it(`${RUNS} mutated requests: exact statuses, no card data out, no prototype reached`, async () => {
  const harness = await createFuzzHarness();
  const details = await fc.check(fuzzProperty(harness), {
    numRuns: RUNS,
    seed: SEED,
    ...(PATH === undefined ? {} : { path: PATH }),
  });
  if (details.failed) {
    const replay = `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ""} npx vitest run test/fuzz`;
    expect.fail(`${fc.defaultReportMessage(details) ?? "failed"}\n${replay}`);
  }
  // A replay (FUZZ_PATH) runs the one case of its path, not RUNS of them.
  expect(harness.sent).toBeGreaterThanOrEqual(PATH === undefined ? RUNS * 2 : 2);
}, 180_000);
