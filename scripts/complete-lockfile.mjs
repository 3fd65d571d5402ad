// Completes package-lock.json with the platform packages npm could not record.
//
// Why: `npm ci` checks that every optional dependency of the tree (biome's, esbuild's, workerd's
// binaries for every platform) has an entry in the lockfile. On a machine whose registry mirror
// serves only the packages of its own platform, `npm install` cannot record the others, and
// `npm ci` then refuses the lockfile. An entry that names the package's platform is enough: npm
// skips it on any other platform without fetching it.
//
// Run after `npm install` changes the lockfile: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const OS = [
  "darwin",
  "linux",
  "win32",
  "android",
  "freebsd",
  "openbsd",
  "netbsd",
  "sunos",
  "aix",
  "openharmony",
];
const CPU = [
  "x64",
  "arm64",
  "arm",
  "ia32",
  "ppc64",
  "s390x",
  "riscv64",
  "loong64",
  "mips64el",
  "wasm32",
];

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const packages = lock.packages;

/** Where Node would find `name` from the package at `from`: its own node_modules, then upwards. */
function resolve(from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut === -1 ? "" : dir.slice(0, cut);
  }
}

/** The platform a binary package is for, read from its name (`@biomejs/cli-linux-x64-musl`). */
function platformOf(name) {
  const tokens = name.split("/").pop().split("-");
  const os = tokens.find((token) => OS.includes(token));
  const cpu = tokens.find((token) => CPU.includes(token));
  const entry = { os: [os ?? "!linux"] };
  if (cpu) entry.cpu = [cpu];
  if (os === "linux" && tokens.includes("musl")) entry.libc = ["musl"];
  return entry;
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolve(location, name)) continue;
    const version = String(range).replace(/^[\^~=v]+/, "");
    // Beside a sibling that did resolve (platform packages live together), else at the root.
    const sibling = Object.keys(entry.optionalDependencies)
      .map((other) => resolve(location, other))
      .find(Boolean);
    const base = sibling
      ? sibling.slice(0, sibling.lastIndexOf("node_modules/") + "node_modules/".length)
      : "node_modules/";
    let key = `${base}${name}`;
    if (packages[key]) key = `${location}/node_modules/${name}`;
    packages[key] = {
      version,
      dev: entry.dev === true ? true : undefined,
      optional: true,
      ...platformOf(name),
    };
    added++;
  }
}

const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} platform entr${added === 1 ? "y" : "ies"} added`);
