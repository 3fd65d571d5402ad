// `npm start` (scripts/demo.ts) end to end: keys, the Express example, `simulate all`, clean stop.
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { DEMO_MERCHANT_GUID, main, ServerLog, stop, waitForListening } from "../../scripts/demo.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

it("npm start runs the Express example through simulate all, exits 0 and stops the server", async () => {
  const env = { ...process.env };
  for (const name of ["NO_COLOR", "FORCE_COLOR", "CI"]) delete env[name];
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(stderr).toBe("");
  expect(code).toBe(0);
  expect(stdout).toContain(`--guid ${DEMO_MERCHANT_GUID}`);
  expect(stdout).toMatch(/^→ GetCheckoutCartInfo +… ← 200 {2}\d+ products? +\d+ ms {2}ok$/m);
  for (const callback of [
    "ValidateGiftCard",
    "ValidateVoucher",
    "SendOrderToMerchant",
    "PerformOrderPayment",
    "RedeemGiftCard",
    "SendAdditionalRequiredDocumentsToMerchant",
    "UpdateOrderStatus",
    "UpdateOrderShippingInfo",
    "UpdateParcelDispatch",
    "NotifyOrderRefund",
    "RefundGiftCard",
    "RemoveRestrictedProducts",
  ]) {
    expect(stdout).toMatch(new RegExp(`^→ ${callback} +… ← 200 {2}true +\\d+ ms {2}ok$`, "m"));
  }
  expect(stdout).toMatch(/^→ SendRMAInfoToMerchant +… ← 200 {2}"True" +\d+ ms {2}ok$/m);
  expect(stdout).toContain("14 of 14 passed.");
  // The example answers as the spec asks, so the checks find nothing to warn about either.
  expect(stdout).not.toContain("warning:");
  expect(stdout).toMatch(/Demo finished in \d+\.\d s \(exit code 0\)/);
  const port = Number(/listening on port (\d+)/.exec(stdout)?.[1]);
  expect(port).toBeGreaterThan(0);
  expect(await refused(port)).toBe(true);
}, 60_000);

describe("demo helpers", () => {
  function node(source: string) {
    return spawn(process.execPath, ["-e", source], { stdio: ["ignore", "pipe", "pipe"] });
  }

  it("waitForListening resolves with the port of the listening line, even split across chunks", async () => {
    const child = node(
      'process.stdout.write("starting\\nlisten"); setTimeout(() => { process.stdout.write("ing on http://127.0.0.1:4321\\n"); setInterval(() => {}, 1000); }, 50);',
    );
    const log = new ServerLog();
    await expect(waitForListening(child, log, 5000)).resolves.toBe(4321);
    await stop(child);
    expect(child.signalCode ?? child.exitCode).not.toBeNull();
    expect(log.text).toContain("starting");
  });

  it("waitForListening rejects when the server exits first or stays silent", async () => {
    const log = new ServerLog();
    const crash = node('console.error("SERVICE_PUBLIC_KEY is not set"); process.exit(3);');
    await expect(waitForListening(crash, log, 5000)).rejects.toThrow(
      /exited before listening \(exit code 3\)/,
    );
    expect(log.text).toContain("SERVICE_PUBLIC_KEY is not set");
    const silent = node("setInterval(() => {}, 1000);");
    await expect(waitForListening(silent, new ServerLog(), 100)).rejects.toThrow(
      /no "listening on" line within 100 ms/,
    );
    await stop(silent);
    expect(silent.signalCode).toBe("SIGTERM");
  });

  it("main reports a missing example with exit 1", async () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      expect(await main("/nonexistent/server.ts")).toBe(1);
      expect(write.mock.calls.flat().join("")).toContain(
        "The Express example is missing: /nonexistent/server.ts",
      );
    } finally {
      write.mockRestore();
    }
  });
});
