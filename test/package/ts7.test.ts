// dist/ under TypeScript 7 (the native compiler a new project now installs), as a user's project
// reaches it: every subpath of the exports map, imported as an ES module (dist/*.d.ts) and as
// CommonJS (dist/*.d.cts), under the module settings TypeScript 7 still has (it removed node10,
// classic and esModuleInterop false), strict, exactOptionalPropertyTypes, skipLibCheck false. One
// project also has only `lib: ["esnext"]` with @types/node (no DOM: test/package/lib-esnext.test.ts
// under 5.9); the nodenext one also has the misspelt-field file of cases.ts
// (test/package/types.test.ts under 5.9).
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";
import { CASES, FIRST_LINE, file } from "../types/cases.js";
import { type Tsc7Run, tsc7 } from "../types/tsc7.js";
import { keyUses } from "./keys.js";

const DIR = join(ROOT, ".tmp", `dist-ts7-${process.pid}`);

/** `crossborder-callbacks`, `crossborder-callbacks/express`, …: the exports map's subpaths. */
const SUBPATHS = Object.keys(
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<string, unknown>,
)
  .filter((key) => key !== "./package.json")
  .map((key) => `crossborder-callbacks${key.slice(1)}`);
const TESTING = SUBPATHS.indexOf("crossborder-callbacks/testing");

/**
 * A file importing every subpath, with `import * as` or `import = require`, then using the key
 * parameters of /testing: a `webKey` value and Node's KeyObject fit them, a number, {}, a Buffer
 * and a JWK do not (test/package/keys.ts).
 */
function importing(style: "import" | "require", webKey: string): string {
  const lines =
    style === "import"
      ? [
          ...SUBPATHS.map((subpath, i) => `import * as s${i} from "${subpath}";`),
          'import * as crypto from "node:crypto";',
        ]
      : [
          ...SUBPATHS.map((subpath, i) => `import s${i} = require("${subpath}");`),
          'import crypto = require("node:crypto");',
        ];
  // A CommonJS file under verbatimModuleSyntax cannot `export const`.
  const declare = style === "import" ? "export const" : "const";
  return [
    ...lines,
    `${declare} all = [${SUBPATHS.map((_s, i) => `s${i}`).join(", ")}];`,
    ...keyUses({ testing: `s${TESTING}.`, crypto: "crypto", webKey, declare }),
    "",
  ].join("\n");
}

const DOM_KEY = "CryptoKey";
const NODE_KEY = "crypto.webcrypto.CryptoKey";

interface Project {
  readonly type: "module" | "commonjs";
  readonly options: Readonly<Record<string, unknown>>;
  /** Each file, and which declarations its imports must reach. */
  readonly files: Readonly<Record<string, { text: string; reaches: ".d.ts" | ".d.cts" }>>;
  /** The files that must have errors (checked below); any other error fails the project. */
  readonly erring?: readonly string[];
}

const PROJECTS: Readonly<Record<string, Project>> = {
  nodenext: {
    type: "module",
    options: { module: "nodenext", verbatimModuleSyntax: true },
    files: {
      "esm.mts": { text: importing("import", DOM_KEY), reaches: ".d.ts" },
      "cjs.cts": { text: importing("require", DOM_KEY), reaches: ".d.cts" },
      // A .ts file of a CommonJS package (`npm init -y`'s "type"), as a merchant's server.ts.
      "commonjs/server.ts": { text: importing("require", DOM_KEY), reaches: ".d.cts" },
      // cases.ts's merchant file, spelt wrong and right (its errors are checked below).
      "wrong.ts": { text: file("wrong"), reaches: ".d.ts" },
      "right.ts": { text: file("right"), reaches: ".d.ts" },
    },
    erring: ["wrong.ts"],
  },
  "bundler (module esnext)": {
    type: "module",
    options: { module: "esnext", moduleResolution: "bundler" },
    files: { "esm.ts": { text: importing("import", DOM_KEY), reaches: ".d.ts" } },
  },
  "bundler (module preserve)": {
    type: "module",
    options: { module: "preserve" },
    files: {
      "esm.ts": { text: importing("import", DOM_KEY), reaches: ".d.ts" },
      "cjs.ts": { text: importing("require", DOM_KEY), reaches: ".d.cts" },
    },
  },
  "module commonjs": {
    type: "commonjs",
    options: { module: "commonjs" },
    files: { "cjs.ts": { text: importing("import", DOM_KEY), reaches: ".d.cts" } },
  },
  "nodenext, lib esnext (no DOM)": {
    type: "module",
    options: { module: "nodenext", lib: ["esnext"] },
    files: {
      "esm.mts": { text: importing("import", NODE_KEY), reaches: ".d.ts" },
      "cjs.cts": { text: importing("require", NODE_KEY), reaches: ".d.cts" },
    },
  },
};

const runs = new Map<string, Tsc7Run>();

beforeAll(async () => {
  assertBuilt();
  rmSync(DIR, { recursive: true, force: true });
  await Promise.all(
    Object.entries(PROJECTS).map(async ([name, project], i) => {
      const dir = join(DIR, String(i));
      mkdirSync(join(dir, "node_modules"), { recursive: true });
      symlinkSync(ROOT, join(dir, "node_modules", "crossborder-callbacks"), "dir");
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ type: project.type, private: true }),
      );
      mkdirSync(join(dir, "commonjs"));
      writeFileSync(join(dir, "commonjs/package.json"), '{ "type": "commonjs" }');
      for (const [file, { text }] of Object.entries(project.files)) {
        writeFileSync(join(dir, file), text);
      }
      const compilerOptions = {
        target: "esnext",
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        types: ["node"],
        noEmit: true,
        ...project.options,
      };
      const files = Object.keys(project.files);
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files }));
      runs.set(name, await tsc7(["-p", ".", "--pretty", "false", "--listFiles"], dir));
    }),
  );
}, 120_000);

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe.each(Object.entries(PROJECTS))("TypeScript 7, %s", (name, project) => {
  it("checks every subpath's declarations, each import reaching the build it should", () => {
    const seen = (runs.get(name) as Tsc7Run).files.map((path) => relative(ROOT, path));
    for (const reaches of new Set(Object.values(project.files).map((f) => f.reaches))) {
      for (const subpath of SUBPATHS) {
        expect(seen).toContain(`dist/${subpath.split("/")[1] ?? "index"}${reaches}`);
      }
    }
    const other = Object.values(project.files).every((f) => f.reaches === ".d.ts")
      ? ".d.cts"
      : Object.values(project.files).every((f) => f.reaches === ".d.cts")
        ? ".d.ts"
        : undefined;
    if (other) {
      expect(seen.filter((path) => path.startsWith("dist/") && path.endsWith(other))).toStrictEqual(
        [],
      );
    }
    expect(seen.some((path) => /lib\.dom\./.test(path))).toBe(!("lib" in project.options));
  });

  it("has no error, in dist/, the importing files or the program (the keys stay typed)", () => {
    const { errors, status, stdout } = runs.get(name) as Tsc7Run;
    const expected = project.erring ?? [];
    const unexpected = [...errors].filter(([path]) => !expected.includes(path));
    expect(Object.fromEntries(unexpected)).toStrictEqual({});
    expect([...errors.keys()]).toStrictEqual(expected);
    // tsc's exit status agrees: 0, or 1 (errors, nothing emitted) where errors are expected.
    expect(status, stdout).toBe(expected.length === 0 ? 0 : 1);
  });
});

describe("TypeScript 7, the misspelt fields against dist/ (nodenext)", () => {
  it("the correct file compiles, each misspelt line is one error with 5.9's message", () => {
    const run = runs.get("nodenext") as Tsc7Run;
    expect([...run.errors.keys()]).toStrictEqual(["wrong.ts"]);
    const wrong = run.errors.get("wrong.ts") ?? [];
    expect(wrong.map((text) => Number(text.split(":")[0]))).toStrictEqual(
      CASES.map((_c, i) => FIRST_LINE + i),
    );
    for (const [i, c] of CASES.entries()) expect(wrong[i]).toContain(c.message);
  });
});
