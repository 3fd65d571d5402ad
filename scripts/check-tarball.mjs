// The packed file list, checked: every file `npm pack` would publish is reached from an entry
// point (the exports map, typesVersions, bin) through the imports of the built files, every entry
// point is in it, and nothing else is (no CLI declarations, no CommonJS CLI, no sources, no maps).
// Usage: node scripts/check-tarball.mjs  (after npm run build); exits 1 and names the files.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** The files `npm pack` would put in the tarball. */
export function packedFiles() {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out)[0].files.map((file) => file.path);
}

/** Every file an entry of package.json names. */
function entryPoints() {
  const entries = new Set([pkg.main, pkg.module, pkg.types]);
  const walk = (value) => {
    if (typeof value === "string") entries.add(value);
    else if (value && typeof value === "object") for (const v of Object.values(value)) walk(v);
  };
  walk(pkg.exports);
  walk(pkg.typesVersions);
  walk(pkg.bin);
  return [...entries].filter(Boolean).map((file) => normalize(file));
}

const IMPORT = /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["'](\.\.?\/[^"']+)["']/g;

/** The relative files a built file imports (a `.js` named in a `.d.ts` is its `.d.ts`). */
function importsOf(file, packed) {
  const text = readFileSync(join(root, file), "utf8");
  const found = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = normalize(join(dirname(file), match[1]));
    const candidates = file.endsWith(".d.ts")
      ? [target.replace(/\.js$/, ".d.ts"), target]
      : file.endsWith(".d.cts")
        ? [target.replace(/\.cjs$/, ".d.cts"), target]
        : [target];
    const hit = candidates.find((candidate) => packed.has(candidate));
    found.push(hit ?? target);
  }
  return found;
}

export function checkTarball() {
  const files = packedFiles();
  const packed = new Set(files);
  const problems = [];
  // CHANGELOG.md is read by people (what changed, the compatibility of stored records), not code.
  // dist/jose.LICENSE.md is the notice jose's MIT licence asks to go with the copy of jose the
  // CommonJS build carries (review second-kit-1).
  const reached = new Set([
    "package.json",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "dist/jose.LICENSE.md",
  ]);
  for (const required of ["package.json", "README.md", "LICENSE", "dist/jose.LICENSE.md"]) {
    if (!packed.has(required)) problems.push(`${required} is not packed`);
  }
  const queue = entryPoints();
  for (const entry of queue) {
    if (!packed.has(entry)) problems.push(`entry point ${entry} is not packed`);
  }
  while (queue.length > 0) {
    const file = queue.pop();
    if (reached.has(file) || !packed.has(file)) continue;
    reached.add(file);
    for (const target of importsOf(file, packed)) {
      if (!packed.has(target)) problems.push(`${file} imports ${target}, which is not packed`);
      else queue.push(target);
    }
  }
  for (const file of files) {
    if (!reached.has(file)) problems.push(`${file} is packed but nothing uses it`);
  }
  return { files, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, problems } = checkTarball();
  if (problems.length > 0) {
    console.error(`The tarball is not clean:\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log(`tarball: ${files.length} files, each an entry point or imported by one`);
}
