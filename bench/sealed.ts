/**
 * The sealed check of one 30-product SendOrderToMerchant (`checkSealed` of src/generated/
 * checkers.ts) in two or more versions of the library, alternating: to tell a change to the
 * generated checker at the scale of a few hundred nanoseconds, which the pipeline's figures cannot.
 *
 *   DIRS=/path/to/old,/path/to/new node --import tsx bench/sealed.ts   (ROUNDS=30, CALLS=400)
 *
 * Each directory holds a version's src/ (e.g. `git archive <rev> src package.json | tar -x -C dir`,
 * with node_modules linked). Each call checks a body parsed just before it (outside the timing), as
 * the engine does; a round times CALLS calls of every version, in an order that alternates; the
 * figure is each version's median over rounds of the mean time per call, with p10–p90.
 */
import { pathToFileURL } from "node:url";
import { orderWithProducts } from "./shared.js";
import { median, spread } from "./stats.js";

interface Checkers {
  readonly PAYLOAD_CHECKERS: { readonly SendOrderToMerchant: unknown };
  checkSealed(checker: unknown, value: unknown, maxDepth: number): readonly object[] | undefined;
}

const dirs = (process.env.DIRS ?? "").split(",").filter((dir) => dir !== "");
if (dirs.length === 0) throw new Error("DIRS: the versions' directories, comma-separated");
const ROUNDS = Number(process.env.ROUNDS ?? 30);
const CALLS = Number(process.env.CALLS ?? 400);
const text = JSON.stringify(orderWithProducts(30));
const versions = await Promise.all(
  dirs.map(async (dir) => {
    const url = pathToFileURL(`${dir}/src/generated/checkers.ts`).href;
    return { dir, module: (await import(url)) as Checkers, times: [] as number[] };
  }),
);

function timeOne(module: Checkers): number {
  const checker = module.PAYLOAD_CHECKERS.SendOrderToMerchant;
  let total = 0;
  for (let i = 0; i < CALLS; i++) {
    const value = JSON.parse(text);
    const start = process.hrtime.bigint();
    const found = module.checkSealed(checker, value, 64);
    total += Number(process.hrtime.bigint() - start);
    if (found === undefined) throw new Error("the sealed check did not accept the order");
  }
  return total / CALLS / 1000;
}

for (let round = -5; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? versions : [...versions].reverse();
  for (const version of order) {
    const us = timeOne(version.module);
    // The first five rounds warm up and are discarded.
    if (round >= 0) version.times.push(us);
  }
}
console.log(`checkSealed, SendOrderToMerchant 30 products, ${ROUNDS} rounds of ${CALLS} calls`);
for (const { dir, times } of versions) {
  const { p10, p90 } = spread(times);
  console.log(
    `${dir}: ${median(times).toFixed(2)} µs (p10–p90 ${p10.toFixed(2)}–${p90.toFixed(2)})`,
  );
}
