/**
 * 1. The full handler against the floor, in process, with mitata.
 *
 * Each pair (pipeline, floor) is measured in alternating rounds (ABBA order), so drift from other
 * load on the machine falls on both; the figure is the median over rounds of each round's median.
 * Run as a child process: `node --expose-gc --import tsx bench/pipeline.ts` prints one JSON line.
 */
import { importSPKI, jwtVerify } from "jose";
import { measure } from "mitata";
import {
  authConfig,
  CART_QUERY,
  cartWithProducts,
  loadLib,
  median,
  ORDER_RESPONSE,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
  secretsFromEnv,
  updateOrderStatusBody,
} from "./shared.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
/** Per measurement, in ns of CPU time (mitata's default is 642 ms). */
const MIN_CPU_TIME = 30e6;
/** Calls of each function before the rounds. */
const WARMUP = 500;
const STAGE_ROUNDS = 10;
/** The first pairs are the figures; the others take them apart. */
const FIGURES = 3;

export interface PairResult {
  readonly name: string;
  readonly detail: string;
  /** Median over rounds of mitata's p50, in ns. */
  readonly pipelineNs: number;
  readonly floorNs: number;
  readonly ratio: number;
  /** The per-round ratios, to show the spread. */
  readonly roundRatios: readonly number[];
}

export interface StageResult {
  readonly name: string;
  readonly ns: number;
}

export interface PipelineResult {
  readonly rounds: number;
  readonly pairs: readonly PairResult[];
  /**
   * Measured the same way, to take the figures apart: `authentication` (createAuth's
   * authenticateRequest against jose's jwtVerify), `… without JWT` (the handler with `auth: false`
   * against JSON.parse + stringify), `order validation` and `cart validation` (zod's check added to
   * the same work).
   */
  readonly aux: readonly PairResult[];
  /** SendOrderToMerchant's stages measured alone, to show where the pipeline's time goes. */
  readonly stages: readonly StageResult[];
  readonly bodyBytes: Record<string, number>;
}

/**
 * mitata's p50 of `fn`. `gc: false`: mitata's default full GC before each measurement makes V8
 * shrink the young generation, so for the next tens of milliseconds allocation-heavy code (JSON.parse,
 * zod) pays a scavenge every few calls: zod's validation of the order measured 4–5x slower that way
 * than in steady state. A server in steady state has its young generation grown, so measurements
 * run without forced GCs, after a warm-up.
 */
async function p50(fn: () => unknown): Promise<number> {
  const stats = await measure(fn, { min_cpu_time: MIN_CPU_TIME, gc: false });
  return stats.p50;
}

interface Pair {
  readonly name: string;
  readonly detail: string;
  readonly pipeline: () => unknown;
  readonly floor: () => unknown;
  /** The answer's body the pipeline must give; undefined for a pair that is not a handler. */
  readonly expected: string | undefined;
}

async function main(): Promise<PipelineResult> {
  const lib = await loadLib();
  const { publicPem, token } = secretsFromEnv();
  // The floor's key is imported once, beforehand, as any correct receiver would.
  const key = await importSPKI(publicPem, "RS256");
  const auth = await lib.createAuth(authConfig(publicPem));
  const verifyOptions = { algorithms: ["RS256"] };
  const decoder = new TextDecoder();
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

  const orderBytes = Buffer.from(JSON.stringify(orderWithProducts()));
  const statusBytes = Buffer.from(JSON.stringify(updateOrderStatusBody()));
  const cart = cartWithProducts();
  const cartJson = JSON.stringify(cart);
  const orderResponseJson = JSON.stringify(ORDER_RESPONSE);

  const sendOrder = lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, { auth, ...quiet });
  const updateStatus = lib.createUpdateOrderStatusHandler(() => ORDER_RESULT, { auth, ...quiet });
  const getCart = lib.createGetCheckoutCartInfoHandler(() => cart, { auth, ...quiet });

  // The body is handed over as bytes, as every adapter hands it to the engine.
  const orderRequest = {
    method: "POST",
    url: "/crossborder/SendOrderToMerchant",
    headers,
    body: orderBytes,
  };
  const statusRequest = {
    method: "POST",
    url: "/crossborder/UpdateOrderStatus",
    headers,
    body: statusBytes,
  };
  const cartRequest = {
    method: "GET",
    url: `/crossborder/GetCheckoutCartInfo?${CART_QUERY}`,
    headers,
  };

  const bearer = (value: string) => value.slice("Bearer ".length);
  /** verify + JSON.parse of the body + JSON.stringify of the response: nothing else. */
  const floorWithBody = (bytes: Uint8Array, response: unknown) => async () => {
    await jwtVerify(bearer(headers.authorization), key, verifyOptions);
    const payload = JSON.parse(decoder.decode(bytes));
    return [payload, JSON.stringify(response)];
  };
  const floorCart = async () => {
    await jwtVerify(bearer(headers.authorization), key, verifyOptions);
    return JSON.stringify(cart);
  };

  const authRequest = {
    callback: "SendOrderToMerchant" as const,
    method: "POST",
    url: new URL("http://localhost/crossborder/SendOrderToMerchant"),
    headers: new Headers(headers),
    remoteAddress: undefined,
  };

  const sendOrderNoAuth = lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, {
    auth: false,
    ...quiet,
  });
  const updateStatusNoAuth = lib.createUpdateOrderStatusHandler(() => ORDER_RESULT, {
    auth: false,
    ...quiet,
  });
  /** The floor without the verification: JSON.parse of the body, JSON.stringify of the answer. */
  const parseAndStringify = (bytes: Uint8Array) => async () => [
    JSON.parse(decoder.decode(bytes)),
    JSON.stringify(ORDER_RESPONSE),
  ];

  const pairs: Pair[] = [
    {
      name: "SendOrderToMerchant",
      detail: `30 products, ${orderBytes.byteLength} B body`,
      pipeline: () => sendOrder.handle(orderRequest),
      floor: floorWithBody(orderBytes, ORDER_RESPONSE),
      expected: orderResponseJson,
    },
    {
      name: "GetCheckoutCartInfo",
      detail: `GET, 30-product cart returned, ${cartJson.length} B response`,
      pipeline: () => getCart.handle(cartRequest),
      floor: floorCart,
      expected: cartJson,
    },
    {
      name: "UpdateOrderStatus",
      detail: `${statusBytes.byteLength} B body`,
      pipeline: () => updateStatus.handle(statusRequest),
      floor: floorWithBody(statusBytes, ORDER_RESPONSE),
      expected: orderResponseJson,
    },
    {
      // Not a figure of its own: shows what createAuth adds to jose, measured the same way.
      name: "authentication",
      detail: "createAuth's authenticateRequest against a bare jwtVerify, same token",
      pipeline: () => auth.authenticateRequest(authRequest),
      floor: () => jwtVerify(bearer(headers.authorization), key, verifyOptions),
      expected: undefined,
    },
    {
      name: "SendOrderToMerchant without JWT",
      detail: "the handler with `auth: false` against JSON.parse + JSON.stringify",
      pipeline: () => sendOrderNoAuth.handle(orderRequest),
      floor: parseAndStringify(orderBytes),
      expected: orderResponseJson,
    },
    {
      name: "order validation",
      detail:
        "JSON.parse + sendOrderToMerchantSchema.safeParse + JSON.stringify against JSON.parse + JSON.stringify",
      pipeline: async () => {
        const order = JSON.parse(decoder.decode(orderBytes));
        return [lib.sendOrderToMerchantSchema.safeParse(order), JSON.stringify(ORDER_RESPONSE)];
      },
      floor: parseAndStringify(orderBytes),
      expected: undefined,
    },
    {
      name: "cart validation",
      detail:
        "checkoutCartInfoSchema.safeParse + JSON.stringify of the cart against JSON.stringify",
      pipeline: async () => [lib.checkoutCartInfoSchema.safeParse(cart), JSON.stringify(cart)],
      floor: async () => JSON.stringify(cart),
      expected: undefined,
    },
    {
      name: "UpdateOrderStatus without JWT",
      detail: "the handler with `auth: false` against JSON.parse + JSON.stringify",
      pipeline: () => updateStatusNoAuth.handle(statusRequest),
      floor: parseAndStringify(statusBytes),
      expected: orderResponseJson,
    },
  ];

  // Every pipeline must succeed with the same answer as its floor, or the figures mean nothing.
  for (const pair of pairs) {
    if (pair.expected === undefined) continue;
    const response = (await pair.pipeline()) as { status: number; body: string };
    if (response.status !== 200 || response.body !== pair.expected) {
      throw new Error(`${pair.name}: unexpected answer ${response.status} ${response.body}`);
    }
  }

  // Past the JIT's tiering before anything is recorded.
  for (const pair of pairs) {
    for (let i = 0; i < WARMUP; i++) {
      await pair.floor();
      await pair.pipeline();
    }
  }

  const samples = pairs.map(() => ({ pipeline: [] as number[], floor: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, pair] of pairs.entries()) {
      const s = samples[i] as { pipeline: number[]; floor: number[] };
      if (round % 2 === 0) {
        s.floor.push(await p50(pair.floor));
        s.pipeline.push(await p50(pair.pipeline));
      } else {
        s.pipeline.push(await p50(pair.pipeline));
        s.floor.push(await p50(pair.floor));
      }
    }
  }

  // Stages of SendOrderToMerchant alone (what the pipeline does beyond the floor shows here).
  const parsedOrder = JSON.parse(orderBytes.toString());
  const parsedStatus = JSON.parse(statusBytes.toString());
  const stageFns: [string, () => unknown][] = [
    ["TextDecoder + JSON.parse of the order (floor)", () => JSON.parse(decoder.decode(orderBytes))],
    [
      "sendOrderToMerchantSchema.safeParse (library)",
      () => lib.sendOrderToMerchantSchema.safeParse(parsedOrder),
    ],
    [
      "checkoutCartInfoSchema.safeParse of the cart (library)",
      () => lib.checkoutCartInfoSchema.safeParse(cart),
    ],
    ["JSON.stringify of the cart (floor)", () => JSON.stringify(cart)],
    [
      "updateOrderStatusSchema.safeParse (library)",
      () => lib.updateOrderStatusSchema.safeParse(parsedStatus),
    ],
    [
      "TextDecoder + JSON.parse of the status body (floor)",
      () => JSON.parse(decoder.decode(statusBytes)),
    ],
  ];
  const stageSamples = stageFns.map(() => [] as number[]);
  for (let round = 0; round < STAGE_ROUNDS; round++) {
    for (const [i, [, fn]] of stageFns.entries()) (stageSamples[i] as number[]).push(await p50(fn));
  }
  const stages: StageResult[] = stageFns.map(([name], i) => ({
    name,
    ns: median(stageSamples[i] as number[]),
  }));

  const results = pairs.map((pair, i) => {
    const s = samples[i] as { pipeline: number[]; floor: number[] };
    const pipelineNs = median(s.pipeline);
    const floorNs = median(s.floor);
    return {
      name: pair.name,
      detail: pair.detail,
      pipelineNs,
      floorNs,
      ratio: pipelineNs / floorNs,
      roundRatios: s.pipeline.map((p, r) => p / (s.floor[r] as number)),
    };
  });
  return {
    rounds: ROUNDS,
    pairs: results.slice(0, FIGURES),
    aux: results.slice(FIGURES),
    stages,
    bodyBytes: {
      SendOrderToMerchant: orderBytes.byteLength,
      UpdateOrderStatus: statusBytes.byteLength,
      GetCheckoutCartInfoResponse: cartJson.length,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await main();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
