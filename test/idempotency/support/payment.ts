/** The PerformOrderPayment fixture the idempotency tests deliver, for an order of the test's choosing. */
import { readFileSync } from "node:fs";

const paymentText = readFileSync(
  new URL("../../fixtures/PerformOrderPayment.json", import.meta.url),
  "utf8",
);

/** The fixture's body (JSON text) with `OrderId` set to `orderId`. */
export function paymentFor(orderId: string): string {
  return JSON.stringify({ ...JSON.parse(paymentText), OrderId: orderId });
}
