/** Bundling for the non-Node runtimes, and child processes that print a "listening on" line. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import type { Send } from "./suite.js";

export const ROOT = new URL("../../../", import.meta.url).pathname;
export const BIN = join(ROOT, "node_modules/.bin");

/**
 * A tsconfig without the repository's `paths`. tsx, Bun and esbuild honour `paths`, which point
 * `crossborder-callbacks` at src/ for the type-checker; with this one they resolve the name as
 * Node does for a user, through the package's `exports`, to dist/.
 */
export const TSCONFIG_WITHOUT_PATHS = join(ROOT, "test/examples/support/tsconfig.no-paths.json");

/**
 * Bundles an entry into one ES module with no Node built-ins, as a Worker, Deno or Bun loads it.
 * `alias` maps bare imports (the package's own name) to files.
 */
export async function bundle(entry: string, alias?: Record<string, string>): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), "cbc-bundle-")), "server.mjs");
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    tsconfig: TSCONFIG_WITHOUT_PATHS,
    conditions: ["workerd", "worker", "browser", "import"],
    logLevel: "error",
    ...(alias ? { alias } : {}),
  });
  return outfile;
}

/** Deletes a bundle made by `bundle`. */
export function removeBundle(file: string | undefined): void {
  if (file) rmSync(dirname(file), { recursive: true, force: true });
}

export interface ChildServer {
  readonly baseUrl: string;
  readonly send: Send;
  readonly output: () => string;
  stop(): Promise<void>;
}

/**
 * Starts a server process and waits for its `listening on http://127.0.0.1:PORT` line (or
 * `http://[::1]:PORT`). Fails with
 * the process's output if it exits or stays silent for `timeoutMs`.
 */
export function startServer(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<ChildServer> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stopChild(child);
      reject(new Error(`${command} did not print "listening on" in time:\n${output}`));
    }, options.timeoutMs ?? 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening on (http:\/\/(?:127\.0\.0\.1|\[::1\]):\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        const baseUrl = match[1];
        resolve({
          baseUrl,
          send: (path, init) => fetch(`${baseUrl}${path}`, init),
          output: () => output,
          stop: () => stopChild(child),
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(timer);
}
