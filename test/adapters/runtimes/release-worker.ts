/**
 * Run by workerd through Miniflare (review ssls2-2): claims whose replies come after their
 * deliveries gave up, in two requests at once, must each be released within work handed to its
 * own request's `waitUntil`. A memory store whose claims are applied at once and answered after
 * the delays `/config?claims=` queues, and whose releases are answered after `releaseMs`; also
 * run in Node by test/idempotency/serverless.test.ts.
 */
import { toFetch } from "../../../src/adapters/fetch.js";
import {
  createCallbackRouter,
  createMemoryIdempotencyStore,
  type IdempotencyStore,
  type SendOrderToMerchantRequest,
  withIdempotency,
} from "../../../src/index.js";

interface Ctx {
  waitUntil(promise: Promise<unknown>): void;
}
let runs = 0;
const claimDelays: number[] = [];
let releaseDelayMs = 0;
const log: string[] = [];
const startedAt = Date.now();
const inner = createMemoryIdempotencyStore();
const store: IdempotencyStore = {
  ...inner,
  async claim(key, owner, leaseMs) {
    const delay = claimDelays.shift() ?? 0;
    // Applied at once, answered late (a loaded link).
    const claimed = inner.claim(key, owner, leaseMs);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    log.push(`${Date.now() - startedAt} claim answered ${key.slice(-13)} after ${delay}`);
    return claimed;
  },
  async release(key, owner) {
    log.push(`${Date.now() - startedAt} release sent ${key.slice(-13)}`);
    if (releaseDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, releaseDelayMs));
    const released = await inner.release(key, owner);
    log.push(`${Date.now() - startedAt} release answered ${key.slice(-13)} ${released}`);
    return released;
  },
};
const order = async (payload: SendOrderToMerchantRequest) => {
  runs++;
  return { InternalOrderId: `M-${runs}`, OrderId: payload.OrderId };
};
const callbacks = toFetch(
  createCallbackRouter({
    basePath: "/crossborder",
    auth: false,
    onError: () => undefined,
    handlers: {
      SendOrderToMerchant: withIdempotency(order, {
        store,
        leaseMs: 3_000,
        waitMs: 300,
        storeTimeoutMs: 300,
      }),
    },
  }),
);

export default {
  async fetch(request: Request, env: unknown, ctx: Ctx): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname.split("/")[1]) {
      case "config":
        for (const delay of (url.searchParams.get("claims") ?? "").split(",").filter(Boolean)) {
          claimDelays.push(Number(delay));
        }
        releaseDelayMs = Number(url.searchParams.get("releaseMs") ?? 0);
        return Response.json({ ok: true });
      case "state":
        return Response.json({ runs, log });
      default:
        return callbacks(request, env, ctx);
    }
  },
};
