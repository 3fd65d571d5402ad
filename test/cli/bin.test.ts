// The built bin, run as a user runs it: `node dist/cli.js …` in a child process.
import {
  access,
  constants,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKeys, type TestKeys } from "../../src/testing/index.js";
import {
  MERCHANT_GUID,
  startMerchant,
  startRawMerchant,
  WRONG_ANSWERS,
} from "../testing/helpers.js";
import { type Run, runCommand, runWithClosedOutput } from "./io.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = join(root, "dist", "cli.js");

function run(
  command: string,
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<Run> {
  return runCommand(command, args, env, root);
}

async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** Builds with `npm run build` unless dist/cli.js is newer than the CLI and testing sources. */
async function ensureBuilt(): Promise<void> {
  const built = await stat(bin).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  const sources = Math.max(
    await newestSource(join(root, "src/cli")),
    await newestSource(join(root, "src/testing")),
  );
  if (built > sources) return;
  const build = await run("npm", ["run", "build"]);
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
}

let dir: string;
let keys: TestKeys;
let keyFile: string;
let good: Awaited<ReturnType<typeof startMerchant>>;
let bad: Awaited<ReturnType<typeof startRawMerchant>>;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), "cbc-bin-"));
  keys = await createTestKeys();
  keyFile = join(dir, "private.pem");
  await writeFile(keyFile, keys.privateKey);
  good = await startMerchant(keys.publicKey);
  bad = await startRawMerchant(WRONG_ANSWERS);
}, 120_000);

afterAll(async () => {
  await good?.close();
  await bad?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The options of a simulation the good merchant accepts: its URL, the key, its GUID. */
function signedAt(url: string): string[] {
  return ["--url", url, "--private-key", keyFile, "--guid", MERCHANT_GUID];
}

describe("node dist/cli.js", () => {
  it("is an executable ESM file with a node shebang", async () => {
    expect((await readFile(bin, "utf8")).split("\n")[0]).toBe("#!/usr/bin/env node");
    if (process.platform !== "win32") await access(bin, constants.X_OK);
  });

  it("simulate all: a correct merchant passes with exit 0, plain text into a pipe", async () => {
    const result = await run(process.execPath, [bin, "simulate", "all", ...signedAt(good.base)]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("14 of 14 passed.");
    expect(result.stdout).toMatch(/^→ SendOrderToMerchant +… ← 200 {2}true +\d+ ms {2}ok$/m);
    expect(result.stdout).not.toContain("\u001b[");
  });

  it("simulate all: a wrong merchant fails with exit 1 and every problem listed", async () => {
    const result = await run(process.execPath, [
      bin,
      "simulate",
      "all",
      "--url",
      bad.base,
      // Under the cart's 400 ms, and far above any other answer's time on a loaded machine.
      "--slow-ms",
      "300",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No --private-key");
    for (const problem of [
      '"Success" is the text "yes"',
      'missing "Success"',
      'a refusal: "Success" is the text "False"',
      'missing "IsSuccess"',
      "HTTP 500: a server error",
      "an HTML page instead of JSON",
      "slow: answered in",
    ]) {
      expect(result.stdout).toContain(problem);
    }
    expect(result.stdout).toContain("13 of 14 failed.");
  });

  it("honours FORCE_COLOR and NO_COLOR", async () => {
    const args = [bin, "simulate", "UpdateOrderStatus", ...signedAt(good.base)];
    expect((await run(process.execPath, args, { FORCE_COLOR: "1" })).stdout).toContain(
      "\u001b[32mok\u001b[39m",
    );
    const plain = await run(process.execPath, args, { FORCE_COLOR: "1", NO_COLOR: "1" });
    expect(plain.stdout).not.toContain("\u001b[");
    expect(plain.code).toBe(0);
  });

  it("keys --out writes the pair and a usage error exits 2", async () => {
    const out = join(dir, "keys");
    const result = await run(process.execPath, [bin, "keys", "--out", out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(join(out, "service-test-private.pem"));
    expect((await stat(join(out, "service-test-private.pem"))).mode & 0o777).toBe(0o600);
    const usage = await run(process.execPath, [bin, "simulate", "all"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--url is required");
  });

  // `simulate all … | head -1`: the reader closes the pipe after the first line, and each later
  // line is an EPIPE. The CLI drops what it can no longer write, without a stack trace, and exits
  // with the status of the run (0 all passed, 1 a failure, 2 a usage error).
  it("simulate into a reader that closes after the first line (| head -1): no stack trace, exit 0", async () => {
    const passing = await runWithClosedOutput(
      process.execPath,
      [bin, "simulate", "all", ...signedAt(good.base)],
      "stdout",
      "first chunk",
      root,
    );
    expect(passing.stdout).toMatch(/^Simulating 14 callbacks against /);
    expect(passing.stderr).toBe("");
    expect(passing.code).toBe(0);
  });

  // The same with the pipe closed before the first write, so that every write is an EPIPE
  // whatever the machine's speed.
  it("simulate into a reader already gone: a failing run still exits 1, no stack trace", async () => {
    const failing = await runWithClosedOutput(
      process.execPath,
      [bin, "simulate", "all", "--url", bad.base, "--slow-ms", "300"],
      "stdout",
      "start",
      root,
    );
    expect(failing.stdout).toBe("");
    expect(failing.stderr).toContain("No --private-key");
    expect(failing.stderr).not.toMatch(/EPIPE|Error|\n +at /);
    expect(failing.code).toBe(1);
  });

  it("a closed stderr: the usage error is lost, its exit code 2 is not", async () => {
    const usage = await runWithClosedOutput(
      process.execPath,
      [bin, "simulate", "all"],
      "stderr",
      "start",
      root,
    );
    expect(usage.stdout).toBe("");
    expect(usage.code).toBe(2);
  });
});
