// TypeScript 7 (the native compiler a new project now installs) on what the 5.9 tests check
// against the sources: every README snippet as copied (test/docs/snippets.test.ts) and the
// misspelt-field file of cases.ts (compile.test.ts), under the tsconfig.json TypeScript 7's own
// `tsc --init` writes plus what a merchant adds (`"types": ["node"]`; here also `paths` from the
// package's name to src/, as program.ts maps it). One tsc run for all files.
// Also: `tsc` on the PATH stays 5.9 (both devDependencies have a `tsc` bin).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { CALLBACKS, GIVEN, snippets } from "../docs/snippets.js";
import { CASES, FIRST_LINE, file, STRICT, SYNC } from "./cases.js";
import { type Tsc7Run, tsc7 } from "./tsc7.js";

const DIR = join(ROOT, ".tmp", `ts7-${process.pid}`);

let version: string;
let initConfig: string;
let run: Tsc7Run;

beforeAll(async () => {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, "package.json"), '{ "type": "module", "private": true }\n');
  const printed = await tsc7(["-v"], DIR);
  expect(printed.status, printed.stdout).toBe(0);
  version = printed.stdout;
  const init = await tsc7(["--init"], DIR);
  expect(init.status, init.stdout).toBe(0);
  initConfig = readFileSync(join(DIR, "tsconfig.json"), "utf8");
  const { config, error } = ts.parseConfigFileTextToJson("tsconfig.json", initConfig);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const repo = ts.parseConfigFileTextToJson(
    "tsconfig.json",
    readFileSync(join(ROOT, "tsconfig.json"), "utf8"),
  ).config;
  const paths: Record<string, string[]> = {};
  for (const [specifier, [source]] of Object.entries(
    repo.compilerOptions.paths as Record<string, string[]>,
  )) {
    paths[specifier] = [join(ROOT, source as string)];
    // Deno's npm: specifiers name the same package.
    paths[`npm:${specifier}`] = [join(ROOT, source as string)];
  }
  const files: Record<string, string> = {
    "given.d.ts": GIVEN,
    "src/callbacks.ts": CALLBACKS,
    "wrong.ts": file("wrong"),
    "right.ts": file("right"),
    "sync.ts": SYNC,
    "strict.ts": STRICT,
  };
  for (const snippet of snippets) files[`test/${snippet.name}`] = snippet.code;
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(DIR, name)), { recursive: true });
    writeFileSync(join(DIR, name), text);
  }
  config.compilerOptions = { ...config.compilerOptions, types: ["node"], paths, noEmit: true };
  config.files = Object.keys(files);
  writeFileSync(join(DIR, "tsconfig.json"), JSON.stringify(config, null, 2));
  run = await tsc7(["-p", ".", "--pretty", "false"], DIR);
}, 120_000);

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe("the compilers", () => {
  it("tsc on the PATH (npx tsc, npm run typecheck, program.ts) is TypeScript 5.9", () => {
    // npm links a bin of each direct dependency; with two `tsc`s a fresh install keeps
    // typescript's, but an `npm install` that adds typescript7 links its own over it.
    const linked = realpathSync(join(ROOT, "node_modules/.bin/tsc"));
    expect(linked, "node_modules/.bin/tsc: run `npm rebuild typescript` (or npm ci)").toBe(
      realpathSync(join(ROOT, "node_modules/typescript/bin/tsc")),
    );
    const printed = execFileSync("npx", ["tsc", "-v"], { cwd: ROOT, encoding: "utf8" });
    expect(printed).toMatch(/^Version 5\.9\.\d+\n$/);
  });

  it("TypeScript 7 is 7.0.2, its tsc --init config strict with exactOptionalPropertyTypes", () => {
    expect(version).toBe("Version 7.0.2\n");
    expect(initConfig).toMatch(/"strict": true/);
    expect(initConfig).toMatch(/"exactOptionalPropertyTypes": true/);
    expect(initConfig).toMatch(/"noUncheckedIndexedAccess": true/);
    expect(initConfig).toMatch(/"verbatimModuleSyntax": true/);
    expect(initConfig).toMatch(/"module": "nodenext"/);
  });
});

describe("README snippets under TypeScript 7", () => {
  it("are all in the run, which reports only errors of the files checked", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(15);
    const checked = [
      "wrong.ts",
      ...snippets.map((s) => `test/${s.name}`),
      "right.ts",
      "sync.ts",
      "strict.ts",
    ];
    // An error without a file (an unresolvable `types` entry: TS2688) is under "(program)".
    for (const name of run.errors.keys()) expect(checked).toContain(name);
    // The run did type-check: the misspelt file has its errors, and only they make tsc exit 1.
    expect(run.status, run.stdout).toBe(1);
    expect(run.errors.get("wrong.ts")?.length).toBe(CASES.length);
  });

  it.each(snippets.map((s) => [s.name, s] as const))("%s compiles as copied", (_n, snippet) => {
    const where = `README.md line ${snippet.line}`;
    expect(run.errors.get(`test/${snippet.name}`) ?? [], where).toStrictEqual([]);
  });
});

describe("misspelt fields under TypeScript 7's tsc --init", () => {
  it("the correct file compiles", () => {
    expect(run.errors.get("right.ts") ?? []).toStrictEqual([]);
  });

  it("each misspelt line is exactly one error, on its own line", () => {
    const lines = (run.errors.get("wrong.ts") ?? []).map((text) => Number(text.split(":")[0]));
    expect(lines).toStrictEqual(CASES.map((_c, i) => FIRST_LINE + i));
  });

  it.each(CASES.map((c, i) => [c.wrong, c, i] as const))("%s", (_label, c, i) => {
    const wrong = run.errors.get("wrong.ts") ?? [];
    const diagnostic = wrong.find((text) => text.startsWith(`${FIRST_LINE + i}:`)) ?? "";
    // The same message as 5.9's (naming the payload interfaces), at the misspelt field.
    expect(diagnostic).toContain(c.message);
    if ("at" in c) {
      const column = Number(/^\d+:(\d+) /.exec(diagnostic)?.[1]);
      expect(c.wrong.slice(column - 1)).toMatch(new RegExp(`^${c.at}\\b`));
    }
  });
});

describe("a product-country sync under TypeScript 7's tsc --init", () => {
  it("compiles: a delete's keys are strings", () => {
    expect(run.errors.get("sync.ts") ?? []).toStrictEqual([]);
  });
});

describe("what the run time takes, under TypeScript 7's tsc --init (review-types T2-T5)", () => {
  it("compiles: readonly lists, null and undefined for not set, kind narrowing", () => {
    expect(run.errors.get("strict.ts") ?? []).toStrictEqual([]);
  });
});
