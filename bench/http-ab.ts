/**
 * Two versions of the library over HTTP: each git ref's package is built (from `git archive` of
 * the ref, in a temporary folder), then the HTTP benchmark of `npm run bench` (bench/http.ts) runs
 * against each build in turn, ROUNDS times, alternating which goes first; every run gives each
 * framework's ratio of the library's req/s to the bare route's.
 *
 *   BEFORE=<ref> AFTER=<ref> BENCH_FRAMEWORKS=node,express,koa node --import tsx bench/http-ab.ts
 *
 * ROUNDS (4 by default), and the HTTP benchmark's own settings (BENCH_HTTP_RUNS, …). Each
 * version is built by its own tree's build script; both are measured by this checkout's bench/
 * and node_modules. For the analysis in
 * bench/ANALYSIS.md; not part of `npm run bench`.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPackage } from "./build.js";
import { runHttpBench } from "./http.js";
import { makeSecrets, PKG_DIR, ROOT } from "./shared.js";

const refs = { before: process.env.BEFORE, after: process.env.AFTER };
if (refs.before === undefined || refs.after === undefined) {
  throw new Error("BEFORE and AFTER: the two git refs to compare");
}
const ROUNDS = Number(process.env.ROUNDS ?? 4);

/** Each version's built package (bench/.tmp/pkg as bench/build.ts writes it), kept aside. */
const builds = new Map<string, string>();
const work = mkdtempSync(join(tmpdir(), "http-ab-"));
for (const [which, ref] of Object.entries(refs)) {
  const tree = join(work, which);
  mkdirSync(tree);
  execFileSync("sh", ["-c", `git -C "${ROOT}" archive "${ref}" | tar -x -C "${tree}"`]);
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
  execFileSync(
    process.execPath,
    ["--import", "tsx", "-e", "await (await import('./bench/build.ts')).buildPackage()"],
    {
      cwd: tree,
      stdio: "inherit",
    },
  );
  const kept = join(work, `${which}-pkg`);
  cpSync(join(tree, "bench", ".tmp", "pkg"), kept, { recursive: true });
  builds.set(which, kept);
}

const secrets = await makeSecrets();
const ratios = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
  for (const which of order) {
    rmSync(PKG_DIR, { recursive: true, force: true });
    cpSync(builds.get(which) as string, PKG_DIR, { recursive: true });
    const results = await runHttpBench(secrets, () => undefined);
    for (const result of results) {
      const key = `${result.framework} ${which}`;
      ratios.set(key, [...(ratios.get(key) ?? []), result.ratio.median]);
    }
    console.log(
      `round ${round + 1}, ${which}: ${results.map((r) => `${r.framework} ${r.ratio.median.toFixed(3)}x`).join("  ")}`,
    );
  }
}
// The benchmark's own build again, so later runs do not measure the last version by mistake.
await buildPackage();
rmSync(work, { recursive: true, force: true });
for (const [key, values] of [...ratios].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`${key.padEnd(16)} ${values.map((v) => v.toFixed(3)).join(" ")}`);
}
