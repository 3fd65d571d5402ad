/**
 * TypeScript 7, the native compiler a new project gets from `npm install typescript`, driven
 * through its CLI: it has no JavaScript API (its package exports only lib/version.cjs), so the
 * tests run `tsc` and read its `--pretty false` output. It is the devDependency alias
 * `typescript7` ("npm:typescript@7.0.2", exact), called by its path: both it and `typescript`
 * (5.9, which `npm run typecheck`, program.ts and tsup use) have a `tsc` bin.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../adapters/support/runtime.js";

export const TSC7 = join(ROOT, "node_modules/typescript7/bin/tsc");

/**
 * The key in `errors` of the errors tsc prints without a file: the program's own, such as TS2688
 * for a `types` entry it cannot resolve, or TS5xxx for an option given on the command line.
 */
export const PROGRAM = "(program)";

export interface Tsc7Run {
  readonly status: number;
  readonly stdout: string;
  /**
   * The errors by file (as tsc names it, relative to the project): `line:col TSxxxx message`, the
   * message's further lines (tsc indents them) joined by "\n", as program.ts's `describe` writes
   * a 5.9 diagnostic. Errors without a file are under `PROGRAM`: `TSxxxx message` (or the whole
   * line, for any other line that names an error).
   */
  readonly errors: Map<string, string[]>;
  /** With `--listFiles`: every file of the program, absolute. */
  readonly files: string[];
}

/** Runs TypeScript 7's tsc in `cwd`; resolves whatever its exit status. */
export function tsc7(args: readonly string[], cwd: string): Promise<Tsc7Run> {
  if (!existsSync(TSC7)) {
    throw new Error(`${TSC7} is missing: npm ci (devDependency typescript7@npm:typescript@7.0.2)`);
  }
  return new Promise((resolve, reject) => {
    execFile(TSC7, [...args], { cwd, encoding: "utf8" }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      if (status === -1 || stderr !== "") {
        reject(new Error(`tsc ${args.join(" ")}: ${error?.message ?? ""}\n${stdout}${stderr}`));
        return;
      }
      const errors = new Map<string, string[]>();
      const files: string[] = [];
      let last: string[] | undefined;
      let index = -1;
      for (const line of stdout.split("\n")) {
        const match = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
        if (match) {
          const [, file, row, col, code, message] = match as unknown as string[];
          last = errors.get(file as string) ?? [];
          errors.set(file as string, last);
          index = last.push(`${row}:${col} ${code} ${message}`) - 1;
        } else if (/\berror TS\d+: /.test(line)) {
          // `error TS2688: Cannot find type definition file for 'x'.`: kept, not skipped.
          const program = /^error (TS\d+): (.*)$/.exec(line);
          last = errors.get(PROGRAM) ?? [];
          errors.set(PROGRAM, last);
          index = last.push(program ? `${program[1]} ${program[2]}` : line) - 1;
        } else if (line.startsWith("  ") && last !== undefined) {
          last[index] += `\n${line}`;
        } else {
          last = undefined;
          if (line.startsWith("/")) files.push(line);
        }
      }
      resolve({ status, stdout, errors, files });
    });
  });
}
