/**
 * 5. Memory: 200,000 SendOrderToMerchant requests (30 products) through one handler, in process.
 * Heap used after forced GC (`--expose-gc`) after a warm-up, then every 20,000 requests and at the
 * end. Requests run 8 at a time so the RSA verifications overlap in libuv's pool; the body arrives
 * as a fresh Buffer each time, as from a socket.
 * Run as a child process: `node --expose-gc --import tsx bench/memory.ts` prints one JSON line.
 */
import {
  authConfig,
  loadLib,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
  secretsFromEnv,
} from "./shared.js";

export const MEMORY_REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 200_000);
const CONCURRENCY = 8;
const WARMUP = 2_000;
const CHECKPOINT = 20_000;
/** Growth above this is reported as growth: a leak of ≥ 5 bytes per request would pass it. */
export const MEMORY_THRESHOLD_BYTES = 1024 * 1024;

export interface MemoryResult {
  readonly requests: number;
  readonly startHeap: number;
  readonly endHeap: number;
  readonly growth: number;
  readonly maxHeap: number;
  readonly checkpoints: readonly number[];
  readonly seconds: number;
  readonly threshold: number;
}

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc");
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<MemoryResult> {
  const lib = await loadLib();
  const { publicPem, token } = secretsFromEnv();
  const auth = await lib.createAuth(authConfig(publicPem));
  const handler = lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, { auth, ...quiet });
  const text = JSON.stringify(orderWithProducts());
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  let failures = 0;
  const one = async () => {
    const response = await handler.handle({
      method: "POST",
      url: "/crossborder/SendOrderToMerchant",
      headers,
      body: Buffer.from(text),
    });
    if (response.status !== 200) failures++;
  };
  const batch = async (count: number) => {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        next++;
        await one();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };

  await batch(WARMUP);
  const startHeap = heapAfterGc();
  const checkpoints: number[] = [];
  const started = performance.now();
  for (let done = 0; done < MEMORY_REQUESTS; done += CHECKPOINT) {
    await batch(Math.min(CHECKPOINT, MEMORY_REQUESTS - done));
    checkpoints.push(heapAfterGc());
  }
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0) throw new Error(`${failures} requests failed`);
  const endHeap = checkpoints.at(-1) as number;
  return {
    requests: MEMORY_REQUESTS,
    startHeap,
    endHeap,
    growth: endHeap - startHeap,
    maxHeap: Math.max(...checkpoints),
    checkpoints,
    seconds,
    threshold: MEMORY_THRESHOLD_BYTES,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await main();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
