// Each example is a project of its own, so each carries its own copy of the merchant code. The
// copies are written from one source, examples/express/merchant.ts, by this script:
//   npx tsx scripts/sync-examples.ts          write the copies (npm run sync-examples)
//   npx tsx scripts/sync-examples.ts --check  exit 1 and name the copies that differ (the test suite
//                                           runs this, so a stale copy fails `npm test`)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCE = "examples/express/merchant.ts";
export const COPIES = [
  "examples/koa/merchant.ts",
  "examples/hono/merchant.ts",
  "examples/bun/merchant.ts",
  "examples/deno/merchant.ts",
  "examples/cloudflare-worker/src/merchant.ts",
  "examples/next-app-router/merchant.ts",
];

/** The text of each copy: the source, under a line that says where it comes from. */
export function expectedCopy(): string {
  const source = readFileSync(join(root, SOURCE), "utf8");
  return `// The same file in every example (written from ${SOURCE} by scripts/sync-examples.ts).\n${source}`;
}

/** The copies whose text is not the source's. */
export function staleCopies(): string[] {
  const expected = expectedCopy();
  return COPIES.filter((copy) => {
    const path = join(root, copy);
    return !existsSync(path) || readFileSync(path, "utf8") !== expected;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes("--check")) {
    const stale = staleCopies();
    if (stale.length > 0) {
      console.error(`Out of date with ${SOURCE}: ${stale.join(", ")}\nRun: npm run sync-examples`);
      process.exit(1);
    }
  } else {
    const expected = expectedCopy();
    for (const copy of COPIES) writeFileSync(join(root, copy), expected);
    console.log(`wrote ${COPIES.map((copy) => relative(root, join(root, copy))).join(", ")}`);
  }
}
