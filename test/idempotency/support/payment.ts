/** The PerformOrderPayment fixture the idempotency tests deliver, for an order of the test's choosing. */
import { fixture } from "../../adapters/support/keys.js";

const paymentText = fixture("PerformOrderPayment");

/** The fixture's body (JSON text) with `OrderId` set to `orderId`. */
export function paymentFor(orderId: string): string {
  return JSON.stringify({ ...JSON.parse(paymentText), OrderId: orderId });
}
