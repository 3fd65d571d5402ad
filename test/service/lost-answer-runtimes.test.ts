// Review bunodeno-1: on Deno, the runtime's own fetch sent a POST again when the service closed a
// reused keep-alive connection without answering (denoland/deno#35610), so an operation the client
// never retries reached the service twice (two refunds from one call). The client, run inside Deno
// and Bun against the simulator in this (Node) process, must send each of them once and report it
// as on Node: NETWORK_ERROR, mayHaveBeenApplied: true.
import { execFile } from "node:child_process";
import { connect, createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceSimulator, type ServiceSimulator } from "../../src/testing/index.js";
import { BIN, bundle, removeBundle } from "../adapters/support/runtime.js";

const NEVER_RETRIED = [
  "dispatchConsolidatedShipment",
  "voidParcel",
  "updateParcelStatus",
  "createOrderRefund",
] as const;

let simulator: ServiceSimulator;
let script: string | undefined;
/** A TCP relay in front of the simulator, counting the connections the runtime opens. */
let relay: Server;
let relayUrl: string;
let connections = 0;
beforeAll(async () => {
  simulator = await createServiceSimulator();
  script = await bundle(new URL("./runtimes/lost-answer.ts", import.meta.url).pathname);
  const target = new URL(simulator.url);
  relay = createServer((downstream) => {
    connections += 1;
    const upstream = connect(Number(target.port), target.hostname);
    downstream.pipe(upstream);
    upstream.pipe(downstream);
    // The simulator's dropped connection is dropped on the runtime's side too.
    upstream.on("close", () => downstream.destroy());
    downstream.on("close", () => upstream.destroy());
    upstream.on("error", () => downstream.destroy());
    downstream.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const address = relay.address() as { port: number };
  relayUrl = `http://127.0.0.1:${address.port}${target.pathname.replace(/\/$/, "")}`;
});
afterAll(async () => {
  removeBundle(script);
  await new Promise((resolve) => relay?.close(resolve));
  await simulator?.close();
});

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { timeout: 20_000, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

async function sendsOnce(command: string, args: (script: string) => readonly string[]) {
  simulator.reset();
  // Applied, then the connection is closed without an answer (the answer lost on its way back).
  for (const operation of NEVER_RETRIED) simulator.fail(operation, { drop: true, apply: true });
  const refundsBefore = simulator.state.refunds.get("GE-1001")?.length ?? 0;
  connections = 0;
  const stdout = await run(command, [...args(script as string), relayUrl, simulator.merchantGuid]);
  const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
  const inDoubt = { code: "NETWORK_ERROR", mayHaveBeenApplied: true };
  expect(report).toEqual({
    dispatch: inDoubt,
    voided: inDoubt,
    status: inDoubt,
    refund: inDoubt,
    after: { resolved: true },
  });
  for (const operation of NEVER_RETRIED) {
    expect({ operation, received: simulator.count(operation) }).toEqual({ operation, received: 1 });
  }
  // One refund made by one call.
  expect(simulator.state.refunds.get("GE-1001")?.length).toBe(refundsBefore + 1);
  // The warm-up calls went out as they were made (one each: nothing failed them).
  expect(simulator.count("getOrderRefunds")).toBe(5);
  // Four connections closed by the service, and one kept alive for the five safe calls: those keep
  // the pooled connection (a connection per call, and its TLS handshake, would make 9).
  expect(connections).toBe(5);
}

describe("an operation that is never retried, its answer lost on a reused connection", () => {
  it("is sent once by the client in Deno (its own fetch would send it again)", async () => {
    await sendsOnce(`${BIN}/deno`, (file) => [
      "run",
      "--no-lock",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      file,
    ]);
  }, 30_000);

  it("is sent once by the client in Bun", async () => {
    await sendsOnce(`${BIN}/bun`, (file) => ["run", file]);
  }, 30_000);
});

// Review second-deno-1/2: the Deno HttpClient of those operations was made once per service client
// and never closed: a merchant's `Deno.test` that dispatched once failed the resource sanitizer,
// and each service client kept one for good. One per request now, closed once its answer is read,
// cancelled or failed, or its fetch rejects.
describe("a merchant's Deno.test with the resource sanitizer on", () => {
  it("passes when it calls the never-retried operations (answered, answer lost, timed out)", async () => {
    const tests = await bundle(new URL("./runtimes/sanitized.ts", import.meta.url).pathname);
    try {
      simulator.reset();
      simulator.fail("createOrderRefund", { drop: true, apply: true });
      simulator.fail("voidParcel", { hang: true });
      simulator.fail("updateParcelStatus", { stallBody: true });
      const stdout = await new Promise<string>((resolve) => {
        execFile(
          `${BIN}/deno`,
          [
            "test",
            "--no-lock",
            "--no-prompt",
            "--sanitize-resources",
            "--sanitize-ops",
            "-A",
            tests,
          ],
          {
            timeout: 20_000,
            env: {
              ...process.env,
              NO_COLOR: "1",
              CBC_SERVICE_URL: simulator.url,
              CBC_MERCHANT_GUID: simulator.merchantGuid,
            },
          },
          (error, out, err) => resolve(`${error ? `exit ${error.code}\n` : ""}${out}\n${err}`),
        );
      });
      expect(stdout).not.toMatch(/Leaks detected|FAILED|exit \d/);
      expect(stdout).toMatch(/ok \| 4 passed \| 0 failed/);
      expect(simulator.count("createOrderRefund")).toBe(1);
    } finally {
      removeBundle(tests);
    }
  }, 30_000);
});
