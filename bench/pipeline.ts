/**
 * 1. The library's handler against the floor, in process, with 4 requests in flight and alone.
 *
 * Method, for a noisy shared machine: each measurement is a batch of calls lasting at least
 * BENCH_BATCH_MS (well above timer and scheduler noise), run by `inFlight` workers that each start
 * the next call when theirs ends; its figure is wall time ÷ calls. A round is four batches,
 * library, floor, floor, library (ABBA), so a drift in machine load within the round falls on both
 * alike; the round's ratio is the library's time per call over the floor's. Every case is measured
 * once per round, so all cases see the same stretch of machine time. A warm-up (then one whole
 * round) is discarded. The figure is the median of the per-round ratios, with p10–p90. The
 * process's CPU time per call is recorded beside the wall time, as a cross-check.
 *
 * Run as a child process: `node --import tsx bench/pipeline.ts` prints one JSON line.
 */
import { importSPKI, jwtVerify } from "jose";
import {
  authConfig,
  CART_QUERY,
  cartWithProducts,
  FLOOR_VERIFY_OPTIONS,
  floorPost,
  loadLib,
  ORDER_RESPONSE,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
  secretsFromEnv,
  updateOrderStatusBody,
} from "./shared.js";
import { median, type Spread, spread } from "./stats.js";

export const PIPELINE_SETTINGS = {
  /** Measured rounds (after one discarded round). */
  rounds: Number(process.env.BENCH_ROUNDS ?? 20),
  /** Target length of one batch, ms. */
  batchMs: Number(process.env.BENCH_BATCH_MS ?? 60),
  /** Warm-up per function before calibration, ms. */
  warmupMs: Number(process.env.BENCH_WARMUP_MS ?? 400),
  inFlight: [4, 1] as const,
};

export interface CaseResult {
  /** The case and concurrency, e.g. "SendOrderToMerchant 30 products". */
  readonly name: string;
  readonly detail: string;
  readonly inFlight: number;
  /** Median calls per batch (each batch runs for batchMs). */
  readonly calls: { readonly library: number; readonly floor: number };
  /** Median over rounds of µs per call (wall time of the batch ÷ calls). */
  readonly libraryUs: number;
  readonly floorUs: number;
  /** library ÷ floor per round, in round order. */
  readonly ratios: readonly number[];
  readonly ratio: Spread;
  /**
   * The same from the process's CPU time (process.cpuUsage: every thread, so the RSA work in
   * libuv's pool and the GC's helpers count), which time taken by other processes inflates far
   * less than wall time: a cross-check of the wall-time figure on a shared machine, not the figure.
   */
  readonly libraryCpuUs: number;
  readonly floorCpuUs: number;
  readonly cpuRatios: readonly number[];
  readonly cpuRatio: Spread;
}

export interface PipelineResult {
  readonly rounds: number;
  readonly batchMs: number;
  readonly warmupMs: number;
  readonly cases: readonly CaseResult[];
  /** Seconds the measurement took (after the build). */
  readonly seconds: number;
}

type Call = () => Promise<unknown>;

interface Case {
  readonly name: string;
  readonly detail: string;
  readonly library: Call;
  readonly floor: Call;
  /** The body the library must answer, checked before anything is measured. */
  readonly expected: string;
}

interface Batch {
  /** Wall time of the batch ÷ calls completed, µs. */
  readonly us: number;
  /** CPU time of the whole process (every thread: JS, libuv's pool, GC) ÷ calls, µs. */
  readonly cpuUs: number;
  readonly calls: number;
}

/**
 * Calls `fn`, `inFlight` at a time, until `ms` have passed (each worker starts its next call only
 * while time remains, and the batch ends when the last call in flight has ended): every batch is
 * at least `ms` long, however fast or slow the machine is at that moment.
 */
export async function batch(fn: Call, inFlight: number, ms: number): Promise<Batch> {
  let calls = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + ms;
  const worker = async () => {
    while (performance.now() < until) {
      await fn();
      calls++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wall = (performance.now() - t0) * 1e3;
  const cpu = process.cpuUsage(cpu0);
  return { us: wall / calls, cpuUs: (cpu.user + cpu.system) / calls, calls };
}

async function main(): Promise<PipelineResult> {
  const started = performance.now();
  const { rounds, batchMs, warmupMs } = PIPELINE_SETTINGS;
  const lib = await loadLib();
  const { publicPem, token } = secretsFromEnv();
  // The floor's key is imported once, beforehand, as any correct receiver would.
  const key = await importSPKI(publicPem, "RS256");
  // The library is configured as a merchant configures it: createAuth with the PEM key.
  const auth = await lib.createAuth(authConfig(publicPem));
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const orderResponseJson = JSON.stringify(ORDER_RESPONSE);

  const cart = cartWithProducts(30);
  const cartJson = JSON.stringify(cart);
  const sendOrder = lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, { auth, ...quiet });
  const updateStatus = lib.createUpdateOrderStatusHandler(() => ORDER_RESULT, { auth, ...quiet });
  const getCart = lib.createGetCheckoutCartInfoHandler(() => cart, { auth, ...quiet });

  const floorOf = (bytes: Uint8Array) => floorPost(token, key, bytes);
  const post = (url: string, body: Buffer) => ({ method: "POST", url, headers, body });

  const order30 = Buffer.from(JSON.stringify(orderWithProducts(30)));
  const order200 = Buffer.from(JSON.stringify(orderWithProducts(200)));
  const status = Buffer.from(JSON.stringify(updateOrderStatusBody()));
  const order30Request = post("/crossborder/SendOrderToMerchant", order30);
  const order200Request = post("/crossborder/SendOrderToMerchant", order200);
  const statusRequest = post("/crossborder/UpdateOrderStatus", status);
  const cartRequest = {
    method: "GET",
    url: `/crossborder/GetCheckoutCartInfo?${CART_QUERY}`,
    headers,
  };

  // The bodies are handed over as bytes (a Buffer), as every adapter hands them to the engine.
  const cases: Case[] = [
    {
      name: "SendOrderToMerchant 30 products",
      detail: `${order30.byteLength} B body`,
      library: () => sendOrder.handle(order30Request),
      floor: floorOf(order30),
      expected: orderResponseJson,
    },
    {
      name: "SendOrderToMerchant 200 products",
      detail: `${order200.byteLength} B body`,
      library: () => sendOrder.handle(order200Request),
      floor: floorOf(order200),
      expected: orderResponseJson,
    },
    {
      name: "GetCheckoutCartInfo 30-product cart",
      detail: `GET, ${cartJson.length} B cart answer`,
      library: () => getCart.handle(cartRequest),
      floor: async () => {
        await jwtVerify(token, key, FLOOR_VERIFY_OPTIONS);
        return JSON.stringify(cart);
      },
      expected: cartJson,
    },
    {
      name: "UpdateOrderStatus",
      detail: `${status.byteLength} B body`,
      library: () => updateStatus.handle(statusRequest),
      floor: floorOf(status),
      expected: orderResponseJson,
    },
  ];

  // Each library answer must be the floor's, or the figures compare different work.
  for (const c of cases) {
    const response = (await c.library()) as { status: number; body: string };
    if (response.status !== 200 || response.body !== c.expected) {
      throw new Error(`${c.name}: unexpected answer ${response.status} ${response.body}`);
    }
    const floor = await c.floor();
    if (c.name.startsWith("GetCheckoutCartInfo") ? floor !== cartJson : floor !== c.expected) {
      throw new Error(`${c.name}: the floor answers differently`);
    }
  }

  const pairs = cases.flatMap((c) =>
    PIPELINE_SETTINGS.inFlight.map((inFlight) => ({ ...c, inFlight })),
  );
  // Warm-up, discarded: past the JIT's tiering and with V8's young generation grown.
  for (const p of pairs) {
    await batch(p.library, p.inFlight, warmupMs);
    await batch(p.floor, p.inFlight, warmupMs);
  }

  const samples = pairs.map(() => ({
    library: [] as number[],
    floor: [] as number[],
    libraryCpu: [] as number[],
    floorCpu: [] as number[],
    libraryCalls: [] as number[],
    floorCalls: [] as number[],
  }));
  // Round 0 is discarded too: the first pass over all cases after the warm-up.
  for (let round = 0; round <= rounds; round++) {
    for (const [i, p] of pairs.entries()) {
      const a = await batch(p.library, p.inFlight, batchMs);
      const b = await batch(p.floor, p.inFlight, batchMs);
      const c = await batch(p.floor, p.inFlight, batchMs);
      const d = await batch(p.library, p.inFlight, batchMs);
      if (round === 0) continue;
      const s = samples[i] as (typeof samples)[number];
      // Time per call over both batches of each side: calls-weighted, as one 2-batch run.
      s.library.push((a.us * a.calls + d.us * d.calls) / (a.calls + d.calls));
      s.floor.push((b.us * b.calls + c.us * c.calls) / (b.calls + c.calls));
      s.libraryCpu.push((a.cpuUs * a.calls + d.cpuUs * d.calls) / (a.calls + d.calls));
      s.floorCpu.push((b.cpuUs * b.calls + c.cpuUs * c.calls) / (b.calls + c.calls));
      s.libraryCalls.push(a.calls, d.calls);
      s.floorCalls.push(b.calls, c.calls);
    }
    if (round > 0 && round % 5 === 0) process.stderr.write(`  round ${round}/${rounds}\n`);
  }

  // And still the same answers after all the calls (a body the handler consumed or zeroed would
  // turn the library's side into fast 400s).
  for (const c of cases) {
    const response = (await c.library()) as { status: number; body: string };
    if (response.status !== 200 || response.body !== c.expected) {
      throw new Error(`${c.name}: after the rounds, ${response.status} ${response.body}`);
    }
  }

  return {
    rounds,
    batchMs,
    warmupMs,
    seconds: (performance.now() - started) / 1000,
    cases: pairs.map((p, i) => {
      const t = samples[i] as (typeof samples)[number];
      const ratios = t.library.map((l, r) => l / (t.floor[r] as number));
      const cpuRatios = t.libraryCpu.map((l, r) => l / (t.floorCpu[r] as number));
      return {
        name: p.name,
        detail: p.detail,
        inFlight: p.inFlight,
        calls: { library: median(t.libraryCalls), floor: median(t.floorCalls) },
        libraryUs: median(t.library),
        floorUs: median(t.floor),
        ratios,
        ratio: spread(ratios),
        libraryCpuUs: median(t.libraryCpu),
        floorCpuUs: median(t.floorCpu),
        cpuRatios,
        cpuRatio: spread(cpuRatios),
      };
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await main();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
