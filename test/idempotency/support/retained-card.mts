// Run by retention.test.ts as `node --expose-gc --import tsx`: whether the PaymentDetails a
// delivery's function received is still reachable once the answer went out, with the store
// writing the record, and with the store refusing it (the record then retried in the background,
// the lease kept). Prints one JSON line: { written, unwritten }, true where still reachable.
import { readFileSync } from "node:fs";
import {
  createMemoryIdempotencyStore,
  createPerformOrderPaymentHandler,
  type IdempotencyStore,
  withIdempotency,
} from "../../../src/index.js";

const body = readFileSync(
  new URL("../../fixtures/PerformOrderPayment.json", import.meta.url),
  "utf8",
);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

async function reachableAfterAnswer(completeFails: boolean): Promise<boolean> {
  const inner = createMemoryIdempotencyStore();
  const store: IdempotencyStore = {
    ...inner,
    complete: (...args) => {
      if (completeFails) throw new Error("connect ECONNREFUSED 127.0.0.1:6379 (complete)");
      return inner.complete(...args);
    },
  };
  let seen: WeakRef<object> | undefined;
  const handler = createPerformOrderPaymentHandler(
    withIdempotency(
      async (payment) => {
        seen = new WeakRef(payment.PaymentDetails as object);
        return { PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
      },
      // A short lease: the background renewals and record retries run during the check.
      { store, leaseMs: 300 },
    ),
    { auth: false, onError: () => undefined },
  );
  const answer = await handler.handle({
    method: "POST",
    url: "/",
    headers: { "content-type": "application/json" },
    body,
  });
  if (answer.status !== 200) throw new Error(`answered ${answer.status}`);
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 60));
    gc?.();
  }
  return seen?.deref() !== undefined;
}

const written = await reachableAfterAnswer(false);
const unwritten = await reachableAfterAnswer(true);
console.log(JSON.stringify({ written, unwritten }));
process.exit(0);
