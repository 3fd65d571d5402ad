// `npm start`: the whole loop in a few seconds. Generates fresh test keys, starts the Express
// example with the public key, sends every callback to it with `simulate all`, prints the table,
// stops the server and exits with the simulator's code. Everything runs from the TypeScript
// sources with tsx, so a fresh clone needs no build.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createColors } from "../src/cli/colors.js";
import { writeTestKeys } from "../src/cli/keys.js";
import { runCli } from "../src/cli/main.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const EXAMPLE = join(ROOT, "examples", "express", "server.ts");
const TSCONFIG = join(ROOT, "scripts", "tsconfig.demo.json");
export const DEMO_MERCHANT_GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
/** The cart the example merchant keeps (examples/express/merchant.ts). */
const DEMO_CART_TOKEN = "demo-cart";
/** The shopper session the example merchant knows (examples/express/merchant.ts). */
const DEMO_AUTH_TOKEN = "demo-auth-token";
const DEMO_SESSION_ID = "demo-session";
const START_TIMEOUT_MS = 20_000;

/** Output of the server, kept to show when something goes wrong. */
export class ServerLog {
  text = "";
  append(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-20_000);
  }
}

/**
 * Resolves with the port once the server prints `listening on http://127.0.0.1:PORT`; rejects if
 * it exits first or stays silent for `timeoutMs`.
 */
export function waitForListening(
  child: ChildProcess,
  log: ServerLog,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(
      () => finish(new Error(`no "listening on" line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      log.append(chunk);
      seen += chunk.toString();
      const match = /listening on https?:\/\/[^\s:/]+:(\d+)/.exec(seen);
      if (match) finish(undefined, Number(match[1]));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(new Error(`the server exited before listening (${signal ?? `exit code ${code}`})`));
    function finish(error?: Error, port?: number) {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      // Keep draining the server's output into the log so it never blocks on a full pipe.
      child.stdout?.on("data", (more: Buffer) => log.append(more));
      if (error) reject(error);
      else resolve(port as number);
    }
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => log.append(chunk));
    child.once("exit", onExit);
  });
}

/** SIGTERM, then SIGKILL if the server is still there after two seconds. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
  await exited;
  clearTimeout(timer);
}

/** Runs the demo against `example` (default: examples/express/server.ts); resolves with the exit code. */
export async function main(example = EXAMPLE): Promise<number> {
  const started = performance.now();
  const colors = createColors({ isTTY: process.stdout.isTTY, env: process.env });
  if (!existsSync(example)) {
    process.stderr.write(`The Express example is missing: ${example}\n`);
    return 1;
  }

  const dir = await mkdtemp(join(tmpdir(), "crossborder-demo-"));
  let server: ChildProcess | undefined;
  const log = new ServerLog();
  const cleanUp = () => server?.kill("SIGKILL");
  process.once("exit", cleanUp);
  try {
    const keys = await writeTestKeys(dir);
    const publicKey = await readFile(keys.publicKeyPath, "utf8");
    process.stdout.write(`${colors.dim("1/3")} Fresh test keys in ${dir}\n`);

    // `node --import tsx` runs the TypeScript example in this one process (npx tsx would add a
    // wrapper process and a second or so). TSX_TSCONFIG_PATH maps the example's imports of
    // `crossborder-callbacks/…` to src/: no build needed, never a stale dist/.
    server = spawn(process.execPath, ["--import", "tsx", example], {
      cwd: ROOT,
      env: {
        ...process.env,
        TSX_TSCONFIG_PATH: TSCONFIG,
        PORT: "0",
        SERVICE_PUBLIC_KEY: publicKey,
        SERVICE_ENVIRONMENT: "test",
        MERCHANT_GUID: DEMO_MERCHANT_GUID,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let port: number;
    try {
      port = await waitForListening(server, log, START_TIMEOUT_MS);
    } catch (error) {
      process.stderr.write(
        `Could not start the Express example: ${(error as Error).message}\n${log.text}\n`,
      );
      return 1;
    }
    const base = `http://127.0.0.1:${port}/crossborder`;
    process.stdout.write(
      `${colors.dim("2/3")} Express example (examples/express/server.ts) listening on port ${port}\n`,
    );
    const args = [
      "simulate",
      "all",
      "--url",
      base,
      "--private-key",
      keys.privateKeyPath,
      "--guid",
      DEMO_MERCHANT_GUID,
      "--cart-token",
      DEMO_CART_TOKEN,
      "--auth-token",
      DEMO_AUTH_TOKEN,
      "--session-id",
      DEMO_SESSION_ID,
    ];
    process.stdout.write(`${colors.dim("3/3")} crossborder-callbacks ${args.join(" ")}\n\n`);
    const code = await runCli(args, process);
    await stop(server);
    if (code !== 0 && log.text.trim() !== "") {
      process.stderr.write(`\nServer output:\n${log.text}\n`);
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(colors.dim(`\nDemo finished in ${seconds} s (exit code ${code}).\n`));
    return code;
  } finally {
    if (server) await stop(server);
    process.off("exit", cleanUp);
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
