/**
 * Where a SendOrderToMerchant call (30 products) allocates: V8's sampling heap profiler, counting
 * the objects the garbage collector has already freed too, over CALLS calls of the library's
 * handler built with `auth: false` and, beside it, of the floor's parse (TextDecoder, JSON.parse,
 * JSON.stringify of the answer).
 *
 *   node --import tsx bench/alloc.ts          (CALLS=5000, TOP=25)
 *
 * Prints the bytes allocated per call by each, and the functions that allocate most in the
 * library's calls (bytes per call; an inlined function counts under its caller). Sampled every
 * 1 KiB, so the figures are estimates within a few per cent. Uses the library's src/ directly
 * (no build). For the analysis in bench/ANALYSIS.md; not part of `npm run bench`.
 */
import { Session } from "node:inspector/promises";
import { createSendOrderToMerchantHandler } from "../src/index.js";
import { ORDER_RESPONSE, ORDER_RESULT, orderWithProducts, quiet } from "./shared.js";

const CALLS = Number(process.env.CALLS ?? 5000);
const TOP = Number(process.env.TOP ?? 25);

const bytes = Buffer.from(JSON.stringify(orderWithProducts(30)));
const handler = createSendOrderToMerchantHandler(() => ORDER_RESULT, { auth: false, ...quiet });
const request = {
  method: "POST",
  url: "/crossborder/SendOrderToMerchant",
  headers: { "content-type": "application/json" },
  body: bytes,
};
const decoder = new TextDecoder();
const floor = async (): Promise<string> => {
  JSON.parse(decoder.decode(bytes));
  return JSON.stringify(ORDER_RESPONSE);
};
const library = () => handler.handle(request);

interface SampleNode {
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly selfSize: number;
  readonly children: readonly SampleNode[];
}

const session = new Session();
session.connect();
await session.post("HeapProfiler.enable");

/** Bytes allocated by CALLS calls of `fn`, by function (self). */
async function allocations(fn: () => Promise<unknown>): Promise<Map<string, number>> {
  for (let i = 0; i < 2000; i++) await fn();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < CALLS; i++) await fn();
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as {
    profile: { head: SampleNode };
  };
  const byFunction = new Map<string, number>();
  const stack: SampleNode[] = [profile.head];
  while (stack.length > 0) {
    const node = stack.pop() as SampleNode;
    const { functionName, url } = node.callFrame;
    const name = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    stack.push(...node.children);
  }
  return byFunction;
}

const total = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
const floorBytes = await allocations(floor);
const libraryBytes = await allocations(library);
const kb = (value: number) => `${(value / CALLS / 1024).toFixed(2)} KiB`;
console.log(`SendOrderToMerchant, 30 products (${bytes.byteLength} B body), ${CALLS} calls each`);
console.log(`floor (decode, JSON.parse, JSON.stringify): ${kb(total(floorBytes))} per call`);
console.log(`library handler (auth: false):             ${kb(total(libraryBytes))} per call`);
for (const [name, size] of [...libraryBytes].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
  console.log(`  ${kb(size).padStart(10)}  ${name}`);
}
session.disconnect();
