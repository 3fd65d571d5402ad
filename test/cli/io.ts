import { spawn } from "node:child_process";
import type { CliIo } from "../../src/cli/main.js";

/** A captured stdout/stderr pair, not a TTY, no colour variables unless given. */
export function captureIo(env: Record<string, string | undefined> = {}, isTTY = false) {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (text: string) => (out += text), isTTY },
    stderr: { write: (text: string) => (err += text), isTTY },
    env,
  };
  return {
    io,
    get stdout() {
      return out;
    },
    get stderr() {
      return err;
    },
  };
}

/** The streamed line of a callback, and the lines under it (its problems, its body). */
export function rowOf(stdout: string, callback: string): string {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`→ ${callback} `));
  if (start < 0) throw new Error(`no line for ${callback} in:\n${stdout}`);
  const block = [lines[start] ?? ""];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith("    ")) break;
    block.push(line);
  }
  return block.join("\n");
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end, without the colour variables of this environment. */
export function runCommand(
  command: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<Run> {
  const base = { ...process.env };
  for (const name of ["NO_COLOR", "FORCE_COLOR", "CI"]) delete base[name];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs a command whose reader goes away early, as `… | head -1` does: its `closed` stream is
 * closed after the first chunk arrives (`"first chunk"`), or before it writes anything (`"start"`,
 * for an EPIPE on its very first write). Returns what was read of the other stream whole, and of
 * the closed one before it closed.
 */
export function runWithClosedOutput(
  command: string,
  args: readonly string[],
  closed: "stdout" | "stderr",
  when: "start" | "first chunk",
  cwd: string,
): Promise<Run> {
  const base = { ...process.env };
  for (const name of ["NO_COLOR", "FORCE_COLOR", "CI"]) delete base[name];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: base, stdio: ["ignore", "pipe", "pipe"] });
    const read = { stdout: "", stderr: "" };
    for (const name of ["stdout", "stderr"] as const) {
      const stream = child[name];
      if (name === closed && when === "start") {
        stream.destroy();
        continue;
      }
      stream.on("data", (chunk: Buffer) => {
        read[name] += chunk;
        if (name === closed) stream.destroy();
      });
    }
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, ...read }));
  });
}
