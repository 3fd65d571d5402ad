/**
 * Run by Deno and Bun (as an esbuild bundle), one shot: each operation that is never retried, sent
 * on a warm connection (a safe call just before it) to a service that applies it and closes the
 * connection without answering. Prints one JSON line: what each call rejected with. Review
 * bunodeno-1: Deno's own fetch sent such a POST again on a new connection (denoland/deno#35610).
 */
import { createServiceClient, isServiceError } from "../../../src/service/index.js";

declare const Deno: { args: string[] } | undefined;
declare const process: { argv: string[] } | undefined;

const [baseUrl = "", merchantGuid = ""] =
  typeof Deno !== "undefined" ? Deno.args : (process?.argv.slice(2) ?? []);

const client = createServiceClient({ baseUrl, merchantGuid, timeoutMs: 2_000 });

async function outcome(call: () => Promise<unknown>) {
  try {
    await call();
    return { resolved: true };
  } catch (error) {
    if (!isServiceError(error)) return { unexpected: String(error) };
    return { code: error.code, mayHaveBeenApplied: error.mayHaveBeenApplied };
  }
}

// A safe call first, every time: its keep-alive connection is in the pool for the next request.
const warm = () => client.getOrderRefunds({ orderId: "GE-1001" });

await warm();
const dispatch = await outcome(() =>
  client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] }),
);
await warm();
const voided = await outcome(() =>
  client.voidParcel({ OrderId: "GE-1001", ParcelCode: "P-1001-2" }),
);
await warm();
const status = await outcome(() =>
  client.updateParcelStatus({
    orderId: "GE-1001",
    parcelCode: "P-1001-2",
    merchantParcelStatusCode: "Delivered",
  }),
);
await warm();
const refund = await outcome(() =>
  client.createOrderRefund({
    OrderId: "GE-1001",
    RefundProducts: [{ CartItemId: "1", RefundQuantity: 0.5 }],
  }),
);
// The retried operations still work after all this (on the pooled connections).
const after = await outcome(warm);
console.log(JSON.stringify({ dispatch, voided, status, refund, after }));
