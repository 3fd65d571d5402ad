// The service client inside Bun, Deno and workerd, calling the simulator on the host over real
// HTTP (loopback): the same machinery as the fetch adapter's runtime tests.
import { dirname } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceSimulator, type ServiceSimulator } from "../../src/testing/index.js";
import {
  BIN,
  bundle,
  type ChildServer,
  removeBundle,
  startServer,
} from "../adapters/support/runtime.js";
import type { ScenarioReport } from "./runtimes/scenario.js";

let simulator: ServiceSimulator;
const scripts: (string | undefined)[] = [];
const children: ChildServer[] = [];
let mf: Miniflare | undefined;

beforeAll(async () => {
  simulator = await createServiceSimulator();
});
afterAll(async () => {
  await Promise.all(children.map((child) => child.stop()));
  await mf?.dispose();
  for (const script of scripts) removeBundle(script);
  await simulator?.close();
});

async function bundled(file: string): Promise<string> {
  const script = await bundle(new URL(`./runtimes/${file}`, import.meta.url).pathname);
  scripts.push(script);
  return script;
}

/** Queues the scenario's failures, runs it in the runtime, and checks the report and the wire. */
async function runIn(send: (path: string, init: RequestInit) => Promise<Response>): Promise<void> {
  simulator.reset();
  simulator.fail("calculateBillingSummary", { status: 503 });
  simulator.fail("dispatchConsolidatedShipment", { status: 503 });
  simulator.fail("locationByIp", { hang: true });
  const response = await send("/run", {
    method: "POST",
    body: JSON.stringify({
      baseUrl: simulator.url,
      merchantGuid: simulator.merchantGuid,
      userName: simulator.credentials.userName,
      password: simulator.credentials.password,
    }),
  });
  const report = (await response.json()) as ScenarioReport & { error?: string };
  expect(report.error).toBeUndefined();
  expect(response.status).toBe(200);
  expect(report).toEqual({
    rates: Array(10).fill("GB"),
    billing: { calculated: true, idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    warnings: ["C102"],
    changes: ["upsert SKU-1", "upsert SKU-2", "delete SKU-3", "upsert SKU-4", "delete SKU-5"],
    dispatch503: {
      name: "ServiceServerError",
      kind: "server",
      code: "HTTP_503",
      status: 503,
      attempts: 1,
    },
    dispatchB001: {
      name: "ServiceNotFoundError",
      kind: "not-found",
      code: "B001",
      status: 200,
      attempts: 1,
    },
    notFoundClass: true,
    location: "US",
    invalid: {
      name: "ServiceValidationError",
      kind: "validation",
      code: "INVALID_REQUEST",
      attempts: 0,
    },
  });
  expect(simulator.tokensIssued).toBe(1);
  const keys = simulator
    .requestsOf("calculateBillingSummary")
    .map((r) => r.headers["idempotency-key"]);
  expect(keys).toEqual([report.billing.idempotencyKey, report.billing.idempotencyKey]);
  expect(simulator.count("dispatchConsolidatedShipment")).toBe(2);
  expect(simulator.count("locationByIp")).toBe(2);
}

describe("the service client in Bun", () => {
  it("runs the scenario against the simulator", async () => {
    const server = await startServer(`${BIN}/bun`, ["run", await bundled("bun-client.ts")]);
    children.push(server);
    await runIn(server.send);
  });
});

describe("the service client in Deno", () => {
  it("runs the scenario against the simulator", async () => {
    const server = await startServer(`${BIN}/deno`, [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      await bundled("deno-client.ts"),
    ]);
    children.push(server);
    await runIn(server.send);
  });
});

describe("the service client in workerd (Miniflare, no nodejs_compat)", () => {
  it("runs the scenario against the simulator, and loads the testing entry", async () => {
    const scriptPath = await bundled("worker-client.ts");
    mf = new Miniflare({
      modules: true,
      scriptPath,
      modulesRoot: dirname(scriptPath),
      compatibilityDate: "2025-09-01",
    });
    await mf.ready;
    const worker = mf;
    const send = async (path: string, init: RequestInit) =>
      (await worker.dispatchFetch(
        `http://worker.example${path}`,
        init as never,
      )) as unknown as Response;
    await runIn(send);
    const entry = await send("/testing-entry", {});
    expect(await entry.json()).toEqual({ guid: simulator.merchantGuid, simulator: "function" });
  });
});
