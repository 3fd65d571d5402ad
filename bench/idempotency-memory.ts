/**
 * The memory store's real window and cost: 100,000 distinct orders through `withIdempotency`
 * with its default key and the default in-memory store, heap measured after a full GC before,
 * after, and after the records' 24 hours have passed.
 *
 *   node --expose-gc --import tsx bench/idempotency-memory.ts [orders]
 */
import {
  type CallbackContext,
  createMemoryIdempotencyStore,
  type SendOrderToMerchantRequest,
  withIdempotency,
} from "../src/index.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const ORDERS = Number(process.argv[2] ?? 100_000);
const DAY_MS = 24 * 60 * 60 * 1000;

function heap(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

let now = Date.now();
let runs = 0;
const store = createMemoryIdempotencyStore({ now: () => now });
const createOrder = withIdempotency(
  async (order: SendOrderToMerchantRequest) => {
    runs++;
    return { InternalOrderId: `M-${100_000 + runs}`, OrderId: order.OrderId };
  },
  { store },
);

/** An order as the service sends one: the fields a default key reads, plus a little more. */
function order(i: number): SendOrderToMerchantRequest {
  return {
    OrderId: `GE${String(927_127_000 + i)}US`,
    MerchantGUID: "b4a3f1d2-0c5e-4f7a-9d8b-2e6c1a0f3b57",
    StatusCode: "N/A",
    CurrencyCode: "EUR",
    Products: [{ Sku: `SKU-${i % 50}`, Price: 29, Quantity: 1, VATRate: 19 }],
  } as unknown as SendOrderToMerchantRequest;
}

function context(payload: SendOrderToMerchantRequest): CallbackContext<SendOrderToMerchantRequest> {
  return {
    callback: "SendOrderToMerchant",
    rawPayload: payload,
    reportFailure: () => undefined,
  } as unknown as CallbackContext<SendOrderToMerchantRequest>;
}

const before = heap();
const started = performance.now();
for (let i = 0; i < ORDERS; i++) {
  const payload = order(i);
  await createOrder(payload, context(payload));
}
const elapsed = performance.now() - started;
const after = heap();

// A repeat of the very first order, 100,000 orders later: answered from the record.
const first = order(0);
await createOrder(first, context(first));
const firstRanAgain = runs !== ORDERS;

// A day and a minute later, the next delivery sweeps every expired record.
now += DAY_MS + 60_000;
const next = order(ORDERS);
await createOrder(next, context(next));
const afterExpiry = heap();
const repeatAfterExpiry = runs;
await createOrder(first, context(first));

const result = {
  orders: ORDERS,
  msPerDelivery: Number((elapsed / ORDERS).toFixed(4)),
  heapBeforeMB: Number((before / 1e6).toFixed(2)),
  heapAfterMB: Number((after / 1e6).toFixed(2)),
  bytesPerRecord: Math.round((after - before) / ORDERS),
  firstOrderRanAgainAfterAllOrders: firstRanAgain,
  heapAfter24hMB: Number((afterExpiry / 1e6).toFixed(2)),
  firstOrderRunsAgainAfter24h: runs === repeatAfterExpiry + 1,
};
console.log(JSON.stringify(result));
