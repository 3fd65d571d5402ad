/**
 * What goes on after a request ends, in a real workerd (Miniflare, no nodejs_compat): a Worker
 * drops a request's pending timers and I/O once it has answered, unless they are handed to
 * `ctx.waitUntil` (review serverless). The Worker keeps withIdempotency and a service client at
 * module scope, across requests, as the README's Workers example does. Node's side of the same
 * rules: test/idempotency/serverless.test.ts, test/service/token.test.ts.
 */
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CallbackContext, defaultIdempotencyKey } from "../../src/index.js";
import { createServiceSimulator, type ServiceSimulator } from "../../src/testing/index.js";
import { bundle, removeBundle } from "./support/runtime.js";

const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let scriptPath: string | undefined;
let mf: Miniflare | undefined;
/** What workerd printed. */
const runtimeOutput: string[] = [];
let simulator: ServiceSimulator;
beforeAll(async () => {
  simulator = await createServiceSimulator();
  scriptPath = await bundle(new URL("./runtimes/lifecycle-worker.ts", import.meta.url).pathname);
  mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    compatibilityDate: "2025-09-01",
    bindings: {
      SERVICE_URL: simulator.url,
      MERCHANT_GUID: simulator.merchantGuid,
      USER_NAME: simulator.credentials.userName,
      PASSWORD: simulator.credentials.password,
    },
    // workerd's console, kept for the tests rather than printed.
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      for (const stream of [stdout, stderr]) {
        stream.on("data", (chunk: Buffer) => runtimeOutput.push(chunk.toString("utf8")));
      }
    },
  });
  await mf.ready;
});
afterAll(async () => {
  await mf?.dispose();
  removeBundle(scriptPath);
  await simulator?.close();
});

async function send(path: string, init?: RequestInit): Promise<Response> {
  return (await (mf as Miniflare).dispatchFetch(
    `http://merchant.example${path}`,
    init as never,
  )) as unknown as Response;
}
const configure = (query: string) => send(`/config?${query}`);
const state = async (key = "") =>
  (await send(`/state?key=${encodeURIComponent(key)}`)).json() as Promise<{
    runs: number;
    record: { state: string } | undefined;
  }>;

/** An order of its own per test (the Worker's store is shared). */
function anOrder(id: string) {
  const text = orderText.replace(/GE927127001US/g, id);
  const payload = JSON.parse(text);
  return {
    post: (prefix = "") =>
      send(`${prefix}/crossborder/SendOrderToMerchant`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: text,
      }),
    key: async () =>
      `SendOrderToMerchant:${await defaultIdempotencyKey(payload, { callback: "SendOrderToMerchant", rawPayload: payload } as unknown as CallbackContext<never>)}`,
  };
}

describe("withIdempotency in workerd after the request ended", () => {
  it("a delivery whose request ended mid-function does not hold its key in the isolate: past leaseMs the next delivery runs", async () => {
    const order = anOrder("GE000000001US");
    await configure("sleepMs=1000");
    const runsBefore = (await state()).runs;
    // The request ends at 200 ms, the function (1 s) still running: it never resumes.
    expect((await order.post("/race")).status).toBe(504);
    await configure("sleepMs=0");
    await sleep(1_600); // past leaseMs (1.5 s)
    // Before: 503 DELIVERY_IN_PROGRESS at every redelivery, for the isolate's life.
    const repeat = await order.post();
    expect(repeat.status).toBe(200);
    expect((await state()).runs).toBe(runsBefore + 2);
    // The abandoned run settling later, in a request that has ended: workerd says it drops it.
    await expect
      .poll(() => runtimeOutput.join(""))
      .toContain("A promise was resolved or rejected from a different request context");
    runtimeOutput.length = 0;
  });

  it("a record write that failed is retried after the answer through ctx.waitUntil: another instance answers from it, no second run", async () => {
    const order = anOrder("GE000000002US");
    // The write and its retry within the request fail: the rest is after the answer.
    await configure("failComplete=2");
    expect((await order.post()).status).toBe(200);
    const runsAfter = (await state()).runs;
    await sleep(1_600); // past leaseMs: only the record keeps the other instance from running it
    // Before: the retry (100 ms after the answer) never ran, and the other instance ran it again.
    const repeat = await order.post("/other");
    expect(repeat.status).toBe(200);
    expect((await state()).runs).toBe(runsAfter);
    expect((await state(await order.key())).record).toMatchObject({ state: "completed" });
  });

  it("a record write refused once is written again before the answer, even without waitUntil", async () => {
    const order = anOrder("GE000000003US");
    await configure("failComplete=1");
    expect((await order.post("/nowait")).status).toBe(200);
    // Before: "running" (the write was a timer 100 ms after the answer, dropped by workerd).
    expect((await state(await order.key())).record).toMatchObject({ state: "completed" });
  });

  it("a claim whose reply came late is released through ctx.waitUntil: the service's retry runs, not held 503", async () => {
    const order = anOrder("GE000000004US");
    // Applied at once, answered after 500 ms: past storeTimeoutMs (300 ms), refused 500.
    await configure("claimDelayMs=500");
    expect((await order.post()).status).toBe(500);
    await sleep(500);
    // Before: no release was ever sent, the retry 503 until the lease (1.5 s) ran out.
    expect((await order.post()).status).toBe(200);
  });
});

describe("the service client in workerd after the request ended", () => {
  it("a call that gave up waiting for the shared token refresh does not break later calls", async () => {
    simulator.reset();
    // The token is answered after 1.5 s; the first call gives up at 300 ms, and its request ends.
    simulator.fail("getAuthenticationToken", { delayMs: 1_500 });
    const first = await (await send("/service?deadlineMs=300")).json();
    expect(first).toEqual({ ok: false, code: "DEADLINE_EXCEEDED" });
    // The refresh counts as lost after the token call's deadline (1 s) and a margin (1 s).
    await sleep(2_000);
    // Before: DEADLINE_EXCEEDED on every later call, no second token request.
    expect(await (await send("/service?deadlineMs=1000")).json()).toEqual({ ok: true });
    expect(await (await send("/service?deadlineMs=1000")).json()).toEqual({ ok: true });
    expect(simulator.count("getAuthenticationToken")).toBe(2);
  });
});
