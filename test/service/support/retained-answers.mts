// Run by retention.test.ts as `node --expose-gc --import tsx`: how much of the answers it read the
// service client still holds once its calls returned. 200 calls answered 256 KB each (a dispatch
// with its documents, a page of product countries), the same bytes read by readStream alone
// without a deadline, and 6,000 calls answered a few hundred bytes (a location, a token); the
// growth of arrayBuffers (where the answers' bytes live) and of the heap after a full GC. Prints
// one JSON line: { big, readStream, small }, each { arrayBuffersMB, heapMB }.
import { readStream } from "../../../src/core/body.js";
import { createServiceClient } from "../../../src/service/index.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

const ANSWER = JSON.stringify({ Country: { Code: "US" }, Pad: "A".repeat(256 * 1024) });

async function settled(): Promise<{ arrayBuffers: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc?.();
  }
  const { arrayBuffers, heapUsed } = process.memoryUsage();
  return { arrayBuffers, heap: heapUsed };
}

async function growth(calls: number, round: () => Promise<unknown>) {
  // Warm-up: what the first calls allocate once (JIT, the client's caches) is not counted.
  for (let i = 0; i < 5; i++) await round();
  const before = await settled();
  for (let i = 0; i < calls; i++) await round();
  const after = await settled();
  const mb = (bytes: number) => Math.round((bytes / 1e6) * 10) / 10;
  return {
    arrayBuffersMB: mb(after.arrayBuffers - before.arrayBuffers),
    heapMB: mb(after.heap - before.heap),
  };
}

function clientAnswering(text: string) {
  let answered = 0;
  const client = createServiceClient({
    baseUrl: "http://service.test",
    merchantGuid: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    retries: false,
    fetch: async () => {
      answered++;
      return new Response(text, { headers: { "content-type": "application/json" } });
    },
  });
  return {
    call: async () => {
      await client.locationByIp({ ip: "8.8.8.8" });
    },
    answered: () => answered,
  };
}

const big = clientAnswering(ANSWER);
const bigGrowth = await growth(200, big.call);
if (big.answered() !== 205) throw new Error(`${big.answered()} answers`);

const bytes = new TextEncoder().encode(ANSWER);
const readGrowth = await growth(200, async () => {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes.slice());
      controller.close();
    },
  });
  const read = await readStream(stream, 1024 * 1024);
  if (read.kind !== "bytes") throw new Error(read.kind);
});

const small = clientAnswering(
  JSON.stringify({ Country: { Code: "US", Name: "United States" }, City: { Name: "Ashburn" } }),
);
const smallGrowth = await growth(6000, small.call);

console.log(JSON.stringify({ big: bigGrowth, readStream: readGrowth, small: smallGrowth }));
