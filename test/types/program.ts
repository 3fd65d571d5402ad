/**
 * Type-checks files as a merchant's project would: under the tsconfig.json that `tsc --init`
 * writes (strict, exactOptionalPropertyTypes, module nodenext, …), with the package's name mapped
 * to its sources. Returns the diagnostics of the given files only (the package's own sources are
 * checked by `npm run typecheck`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { ROOT } from "../adapters/support/runtime.js";

/** The subpaths of the package, and where their sources are: the repository's own tsconfig paths. */
function packageSources(): Readonly<Record<string, string>> {
  const path = join(ROOT, "tsconfig.json");
  const { config, error } = ts.readConfigFile(path, (file) => readFileSync(file, "utf8"));
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const paths = (config.compilerOptions?.paths ?? {}) as Record<string, string[]>;
  const sources: Record<string, string> = {};
  for (const [specifier, [source]] of Object.entries(paths)) {
    if (source !== undefined) sources[specifier] = source;
  }
  return sources;
}

export interface Project {
  readonly dir: string;
  /** The compiler options `tsc --init` wrote, as parsed (before the additions below). */
  readonly initOptions: ts.CompilerOptions;
  /** Diagnostics of each given file, formatted `file:line:col TSxxxx message`. */
  diagnostics(files: Readonly<Record<string, string>>): Map<string, ts.Diagnostic[]>;
  remove(): void;
}

/**
 * A scratch project inside the repository (so that express, koa, hono and vitest resolve from
 * its node_modules) with the tsconfig.json of `tsc --init`, plus only what a merchant adds to it:
 * `"types": ["node"]` (the line `tsc --init` itself suggests for Node.js) and `paths` pointing the
 * package's name at src/ (a merchant gets dist/ from npm instead).
 */
export function createProject(name: string): Project {
  const dir = join(ROOT, ".tmp", `${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), '{ "type": "module", "private": true }\n');
  const init = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["--init"], {
    cwd: dir,
    encoding: "utf8",
  });
  if (init.status !== 0) throw new Error(`tsc --init failed: ${init.stdout}${init.stderr}`);
  const configPath = join(dir, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configPath, (path) => readFileSync(path, "utf8"));
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const initOptions = ts.parseJsonConfigFileContent(config, ts.sys, dir).options;
  const paths: Record<string, string[]> = {};
  for (const [specifier, source] of Object.entries(packageSources())) {
    paths[specifier] = [join(ROOT, source)];
    // Deno's npm: specifiers name the same package.
    paths[`npm:${specifier}`] = [join(ROOT, source)];
  }
  const compilerOptions = { ...config.compilerOptions, types: ["node"], paths, noEmit: true };
  const parsed = ts.parseJsonConfigFileContent({ ...config, compilerOptions }, ts.sys, dir);

  return {
    dir,
    initOptions,
    diagnostics(files) {
      const names: string[] = [];
      for (const [file, text] of Object.entries(files)) {
        const path = join(dir, file);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text);
        names.push(path);
      }
      const program = ts.createProgram(names, parsed.options);
      const result = new Map<string, ts.Diagnostic[]>();
      for (const [i, file] of Object.keys(files).entries()) {
        const source = program.getSourceFile(names[i] as string);
        if (source === undefined) throw new Error(`${file} is not in the program`);
        result.set(file, [
          ...program.getSyntacticDiagnostics(source),
          ...program.getSemanticDiagnostics(source),
        ]);
      }
      return result;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `line:col TSxxxx message` of a diagnostic, lines counted from 1. */
export function describe(diagnostic: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  if (diagnostic.file === undefined || diagnostic.start === undefined) {
    return `TS${diagnostic.code} ${message}`;
  }
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${line + 1}:${character + 1} TS${diagnostic.code} ${message}`;
}
