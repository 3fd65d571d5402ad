/**
 * The package as a user gets it: the tarball `npm pack` makes of the built dist/, installed into
 * projects in the system's temporary directory, outside this repository (so nothing resolves from
 * the repository's own node_modules), and commands run there as a user types them.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { ROOT } from "../adapters/support/runtime.js";

/** The packed tarball of the current build (made once per build, shared by the test files). */
export function packedTarball(): string {
  const built = statSync(join(ROOT, "dist/index.js")).mtimeMs;
  const dir = join(tmpdir(), "crossborder-callbacks-packed", String(Math.round(built)));
  const tarball = join(dir, "crossborder-callbacks.tgz");
  if (existsSync(tarball)) return tarball;
  mkdirSync(dir, { recursive: true });
  const scratch = mkdtempSync(join(dir, "pack-"));
  const name = execFileSync(
    "npm",
    ["pack", "--silent", "--ignore-scripts", "--pack-destination", scratch],
    { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  )
    .trim()
    .split("\n")
    .at(-1) as string;
  renameSync(join(scratch, name), tarball);
  rmSync(scratch, { recursive: true, force: true });
  return tarball;
}

/** A new empty directory outside the repository; removed by `remove`. */
export function scratchDir(prefix: string): { readonly dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `cbc-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Copies a folder of this repository (an example) to `target`, without what an install makes. */
export function copyFolder(from: string, target: string): void {
  cpSync(join(ROOT, from), target, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|\.next|keys)$/.test(source),
  });
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of a user's shell: this one without vitest's and npm's own variables (an
 * `npm_config_*` of the test run must not steer the user's npm). Nothing of this repository is on
 * the PATH: a copied example finds only what its own install put in its node_modules/.bin, and
 * what a user has installed. `runtimes` are the ones an example's README says to have installed
 * (`bun`, `deno`): each is put on the PATH alone (this repository's binary, linked into a
 * directory of its own), nothing else of node_modules/.bin with it.
 */
export function userEnv(
  extra: Record<string, string> = {},
  runtimes: readonly ("bun" | "deno")[] = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|TEST$|NODE_ENV$|NODE_OPTIONS$|TSX_)/i.test(name)) continue;
    env[name] = value;
  }
  const repositoryBins = join(ROOT, "node_modules/.bin");
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && resolve(dir) !== resolve(repositoryBins));
  env.PATH = [...runtimes.map(runtimeOnly), ...path].join(delimiter);
  env.NO_COLOR = "1";
  env.NEXT_TELEMETRY_DISABLED = "1";
  return { ...env, ...extra };
}

/** A directory holding only this repository's `name` binary (made once per test process). */
function runtimeOnly(name: "bun" | "deno"): string {
  const dir = join(tmpdir(), `cbc-runtime-${process.pid}`, name);
  if (!existsSync(join(dir, name))) {
    mkdirSync(dir, { recursive: true });
    symlinkSync(realpathSync(join(ROOT, "node_modules/.bin", name)), join(dir, name));
  }
  return dir;
}

/** Runs a shell command line (as typed in a README) in `cwd` to its end. */
export function shell(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv = userEnv(),
  timeoutMs = 300_000,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", line], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Fails with the command's output unless it exited 0. */
export async function mustRun(
  line: string,
  cwd: string,
  env?: NodeJS.ProcessEnv,
  timeoutMs?: number,
): Promise<Run> {
  const run = await shell(line, cwd, env, timeoutMs);
  if (run.code !== 0) {
    throw new Error(`\`${line}\` exited ${run.code} in ${cwd}:\n${run.stdout}\n${run.stderr}`);
  }
  return run;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(),
      );
    });
  });
}

/** A long-running command (a server), stopped with its whole process group. */
export interface Background {
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

export function background(line: string, cwd: string, env: NodeJS.ProcessEnv): Background {
  const child = spawn("bash", ["-c", line], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  let done = false;
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const closed = new Promise<void>((resolve) =>
    child.on("close", () => {
      done = true;
      resolve();
    }),
  );
  const kill = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  return {
    output: () => output,
    exited: () => done,
    async stop() {
      if (done) return;
      kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), 5000);
      await closed;
      clearTimeout(timer);
    },
  };
}

/** Waits until something answers HTTP at `url` (any status), or fails with the server's output. */
export async function waitForHttp(
  url: string,
  server: Background,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exited()) throw new Error(`the server exited:\n${server.output()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(5000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`nothing answered at ${url} within ${timeoutMs} ms:\n${server.output()}`);
}

/** The commands of a README between `<!-- name:begin -->` and `<!-- name:end -->`, one per line. */
export function commandsBetween(readme: string, name: string): string[] {
  const match = new RegExp(
    `<!-- ${name}:begin -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`,
  ).exec(readme);
  if (!match) throw new Error(`no ${name} block between its markers`);
  return (match[1] ?? "")
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}
