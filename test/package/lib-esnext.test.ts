// dist/'s declarations in a Node project set up as `tsc --init`'s "For nodejs" comment suggests,
// `"lib": ["esnext"]` and `"types": ["node"]`: no DOM types, so only the globals @types/node
// declares (fetch's Request, Response, Headers, AbortSignal, URL, ReadableStream…, but not
// CryptoKey under @types/node 20 and 22), with @types/node 20 (this repository's own and the
// examples'), and `skipLibCheck: false` as the README promises. Every subpath is imported as an ES
// module (.mts, typed by dist/*.d.ts) and as CommonJS (.cts, dist/*.d.cts). A DOM-only name in a
// declaration is an error there, and silently `any` under `skipLibCheck: true`: the parameters that
// take a key must still refuse a number (or {}, a Buffer, a JWK) and take Node's own CryptoKey and
// KeyObject (test/package/keys.ts).
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";
import { describe as describeDiagnostic } from "../types/program.js";
import { keyUses } from "./keys.js";

const DIR = join(ROOT, ".tmp", `lib-esnext-${process.pid}`);

/** The package's subpaths with declarations, from its exports map: `crossborder-callbacks/koa`… */
const SUBPATHS = Object.keys(
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<string, unknown>,
)
  .filter((key) => key !== "./package.json")
  .map((key) => `crossborder-callbacks${key.slice(1)}`);

/** `dist/testing.d.ts` for `crossborder-callbacks/testing`, `dist/index.d.ts` for the root. */
function declarationsOf(subpath: string, extension: ".d.ts" | ".d.cts"): string {
  const name = subpath.split("/")[1] ?? "index";
  return `dist/${name}${extension}`;
}

// Node's own Web Crypto key and KeyObject fit the key parameters; 42, {}, a Buffer, a JWK do not.
const KEYS = keyUses({
  testing: "",
  crypto: "crypto",
  webKey: "crypto.webcrypto.CryptoKey",
  declare: "export const",
});

const FILES = {
  "esm.mts": [
    ...SUBPATHS.map((subpath, i) => `import * as s${i} from "${subpath}";`),
    'import * as crypto from "node:crypto";',
    'import { sendCallback, signServiceToken } from "crossborder-callbacks/testing";',
    `export const all = [${SUBPATHS.map((_s, i) => `s${i}`).join(", ")}];`,
    ...KEYS,
  ],
  "cjs.cts": [
    ...SUBPATHS.map((subpath, i) => `import s${i} = require("${subpath}");`),
    'import crypto = require("node:crypto");',
    `const { sendCallback, signServiceToken } = s${SUBPATHS.indexOf("crossborder-callbacks/testing")};`,
    `export const all = [${SUBPATHS.map((_s, i) => `s${i}`).join(", ")}];`,
    ...KEYS,
  ],
};

let seen: string[];
let diagnostics: string[];

beforeAll(() => {
  assertBuilt();
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(join(DIR, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(DIR, "node_modules", "crossborder-callbacks"), "dir");
  writeFileSync(join(DIR, "package.json"), '{ "type": "module", "private": true }');
  const names = Object.entries(FILES).map(([name, lines]) => {
    writeFileSync(join(DIR, name), lines.join("\n"));
    return join(DIR, name);
  });
  const program = ts.createProgram(names, {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ESNext,
    lib: ["lib.esnext.d.ts"],
    types: ["node"],
    skipLibCheck: false,
    noEmit: true,
  });
  seen = program.getSourceFiles().map((source) => relative(ROOT, source.fileName));
  diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${relative(ROOT, d.file.fileName)}:` : "";
    return `${where}${describeDiagnostic(d)}`;
  });
}, 120_000);

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe("dist/ under lib esnext + @types/node 20, skipLibCheck false", () => {
  it("has no DOM library in the program: only what @types/node declares is global", () => {
    expect(seen.filter((name) => /lib\.dom/.test(name))).toStrictEqual([]);
    expect(seen).toContain("node_modules/@types/node/index.d.ts");
  });

  it.each(SUBPATHS)("checks %s's .d.ts and .d.cts", (subpath) => {
    expect(seen).toContain(declarationsOf(subpath, ".d.ts"));
    expect(seen).toContain(declarationsOf(subpath, ".d.cts"));
  });

  it("has no error, in the declarations or in the files using them (keys stay typed)", () => {
    expect(diagnostics).toStrictEqual([]);
  });
});
