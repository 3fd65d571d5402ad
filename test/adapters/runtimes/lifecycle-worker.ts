/**
 * Run by workerd through Miniflare (as an esbuild bundle, no nodejs_compat): what goes on after
 * a request ends (review serverless). Everything is built at module scope, as the README's Workers
 * example does, and kept across requests: withIdempotency over a memory store with fault switches
 * (twice, as two instances sharing the store), and a service client.
 */
import { toFetch } from "../../../src/adapters/fetch.js";
import {
  createCallbackRouter,
  createMemoryIdempotencyStore,
  type IdempotencyStore,
  type SendOrderToMerchantRequest,
  withIdempotency,
} from "../../../src/index.js";
import { createServiceClient, type ServiceClient } from "../../../src/service/index.js";

interface Env {
  readonly SERVICE_URL: string;
  readonly MERCHANT_GUID: string;
  readonly USER_NAME: string;
  readonly PASSWORD: string;
}
interface Ctx {
  waitUntil(promise: Promise<unknown>): void;
}

let runs = 0;
let sleepMs = 0;
let failComplete = 0;
let claimDelayMs = 0;
const inner = createMemoryIdempotencyStore();
const store: IdempotencyStore = {
  ...inner,
  async claim(key, owner, leaseMs) {
    const delay = claimDelayMs;
    claimDelayMs = 0;
    // Applied at once, answered late (a loaded link).
    const claimed = inner.claim(key, owner, leaseMs);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    return claimed;
  },
  async complete(key, owner, result, ttlMs) {
    if (failComplete > 0) {
      failComplete--;
      throw new Error("read ECONNRESET");
    }
    return inner.complete(key, owner, result, ttlMs);
  },
};
const order = async (payload: SendOrderToMerchantRequest) => {
  const run = ++runs;
  if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
  return { InternalOrderId: `M-${run}`, OrderId: payload.OrderId };
};
const options = { store, leaseMs: 1_500, waitMs: 300, storeTimeoutMs: 300 } as const;
const endpoint = () =>
  toFetch(
    createCallbackRouter({
      basePath: "/crossborder",
      auth: false,
      onError: () => undefined,
      handlers: { SendOrderToMerchant: withIdempotency(order, options) },
    }),
  );
const callbacks = endpoint();
/** Another instance (isolate) over the same store. */
const other = endpoint();

let client: ServiceClient | undefined;

export default {
  async fetch(request: Request, env: Env, ctx: Ctx): Promise<Response> {
    const url = new URL(request.url);
    const rest = (prefix: string) => new Request(request.url.replace(prefix, "/"), request);
    switch (url.pathname.split("/")[1]) {
      case "config":
        sleepMs = Number(url.searchParams.get("sleepMs") ?? 0);
        failComplete = Number(url.searchParams.get("failComplete") ?? 0);
        claimDelayMs = Number(url.searchParams.get("claimDelayMs") ?? 0);
        return Response.json({ ok: true });
      case "state":
        return Response.json({ runs, record: await inner.get(url.searchParams.get("key") ?? "") });
      case "race":
        // The request ends while the function runs (the client left and the platform cancelled
        // it; a timeout in front): its continuation and timers never run again.
        return Promise.race([
          callbacks(rest("/race/"), env, ctx),
          new Promise<Response>((resolve) =>
            setTimeout(() => resolve(new Response("gone", { status: 504 })), 200),
          ),
        ]);
      case "nowait":
        // A handler not given the Worker's ctx: no waitUntil.
        return callbacks(rest("/nowait/"));
      case "other":
        return other(rest("/other/"), env, ctx);
      case "service": {
        client ??= createServiceClient({
          baseUrl: env.SERVICE_URL,
          merchantGuid: env.MERCHANT_GUID,
          credentials: { userName: env.USER_NAME, password: env.PASSWORD },
          deadlineMs: 1_000,
          timeoutMs: 1_000,
        });
        const deadlineMs = Number(url.searchParams.get("deadlineMs"));
        try {
          await client.getShippingDetailsExtended(
            { amount: 10, currencyCode: "EUR", destinationCountry: "GB" },
            { deadlineMs },
          );
          return Response.json({ ok: true });
        } catch (error) {
          return Response.json({ ok: false, code: (error as { code?: unknown }).code });
        }
      }
      default:
        return callbacks(request, env, ctx);
    }
  },
};
