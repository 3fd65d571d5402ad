/**
 * Claims answered after their deliveries gave up, in two requests of one isolate at once, in a
 * real workerd (review ssls2-2): the second claim lands while the first's release is being sent.
 * Each must be released within work handed to its own request's `ctx.waitUntil` (workerd drops
 * a timer made in another request's context once that request ended), so that the service's
 * retries run rather than being answered 503 until the lease runs out. Node's side:
 * test/idempotency/serverless.test.ts ("two late claims").
 */
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundle, removeBundle } from "./support/runtime.js";

const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let scriptPath: string | undefined;
let mf: Miniflare | undefined;
beforeAll(async () => {
  scriptPath = await bundle(new URL("./runtimes/release-worker.ts", import.meta.url).pathname);
  mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    compatibilityDate: "2025-09-01",
  });
  await mf.ready;
});
afterAll(async () => {
  await mf?.dispose();
  removeBundle(scriptPath);
});

async function send(path: string, init?: RequestInit): Promise<Response> {
  return (await (mf as Miniflare).dispatchFetch(
    `http://merchant.example${path}`,
    init as never,
  )) as unknown as Response;
}
const post = (id: string) =>
  send("/crossborder/SendOrderToMerchant", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: orderText.replace(/GE927127001US/g, id),
  });

it("two late claims in two requests: the one landing while the other's release is sent is released too, both retries run", async () => {
  // A's claim answered after 500 ms, B's after 400 ms (both past storeTimeoutMs, 300 ms: 500);
  // each release answered after 400 ms, so B's claim lands while A's release is being sent.
  await send("/config?claims=500,400&releaseMs=400");
  const a = post("GE000000A01US");
  await sleep(300);
  const b = post("GE000000B01US");
  expect([(await a).status, (await b).status]).toEqual([500, 500]);
  await sleep(1_200);
  const state = async () =>
    (await send("/state")).json() as Promise<{ runs: number; log: string[] }>;
  const log = (await state()).log;
  // Before: B's release was never sent, its retry answered 503 until the lease (3 s) ran out.
  expect(
    log.filter((line) => / release answered \S+ true$/.test(line)),
    JSON.stringify(log),
  ).toHaveLength(2);
  expect((await post("GE000000B01US")).status).toBe(200);
  expect((await post("GE000000A01US")).status).toBe(200);
  expect((await state()).runs).toBe(2);
});
