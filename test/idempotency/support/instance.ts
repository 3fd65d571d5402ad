/**
 * One server instance for the multi-process tests: the Express example itself (its app, its
 * router with the order callbacks wrapped in `withIdempotency`, its store chosen from
 * IDEMPOTENCY_STORE), with the demo merchant's SendOrderToMerchant and PerformOrderPayment
 * replaced by functions whose side effect is a row in a PostgreSQL table every instance shares,
 * so that a second run anywhere is counted. Started as a user starts the example:
 * `node --import tsx test/idempotency/support/instance.ts` with TSX_TSCONFIG_PATH set to the
 * tsconfig without paths (the package from dist/).
 *
 * Environment: the example's (SERVICE_PUBLIC_KEY, MERCHANT_GUID, IDEMPOTENCY_STORE,
 * REDIS_URL / DATABASE_URL, IDEMPOTENCY_LEASE_MS), plus EFFECTS_URL (the side-effect database),
 * EFFECT_MS (how long each function takes) and STALL=1 (this instance's functions never finish:
 * the one the SIGKILL test kills in the middle).
 */
import pg from "pg";
import { createApp } from "../../../examples/express/app.js";
import { idempotencyFromEnv } from "../../../examples/express/idempotency.js";
import { createMerchantRouter, readConfig } from "../../../examples/express/merchant.js";

const env = process.env;
const effects = new pg.Pool({ connectionString: env.EFFECTS_URL, max: 10 });
effects.on("error", () => undefined);
const effectMs = Number(env.EFFECT_MS ?? 20);
const stall = env.STALL === "1";
const idempotency = await idempotencyFromEnv(env);
if (!idempotency.options) throw new Error("set IDEMPOTENCY_STORE");
let runs = 0;

/** The merchant's side effect: a row per run that started, and a row per run that finished. */
async function apply(callback: string, orderId: string): Promise<string> {
  runs++;
  const run = `${process.pid}-${runs}`;
  await effects.query("INSERT INTO starts (callback, order_id, pid) VALUES ($1, $2, $3)", [
    callback,
    orderId,
    process.pid,
  ]);
  // The merchant's work (a database write, a charge with the payment provider) takes a while.
  await new Promise((resolve) => setTimeout(resolve, stall ? 3_600_000 : effectMs));
  await effects.query(
    "INSERT INTO effects (callback, order_id, pid, run) VALUES ($1, $2, $3, $4)",
    [callback, orderId, process.pid, run],
  );
  return run;
}

const app = createApp(
  createMerchantRouter(readConfig(env), {
    basePath: "",
    idempotency: idempotency.options,
    handlers: {
      async SendOrderToMerchant(order) {
        const run = await apply("SendOrderToMerchant", order.OrderId);
        return { InternalOrderId: `M-${run}`, OrderId: order.OrderId };
      },
      async PerformOrderPayment(payment) {
        const run = await apply("PerformOrderPayment", payment.OrderId);
        return { InternalOrderId: `M-${run}`, PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
      },
    },
  }),
);
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  console.log(`listening on http://127.0.0.1:${port}`);
});
process.once("SIGTERM", () => {
  server.close(() => {
    void Promise.all([idempotency.close(), effects.end()]).then(() => process.exit(0));
  });
});
