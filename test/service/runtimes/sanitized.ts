/**
 * Run by `deno test --sanitize-resources` (as an esbuild bundle): a merchant's own tests, the
 * service client made at module level and each test calling an operation that is never retried
 * once. Review second-deno-1/2: the Deno HttpClient those calls go out through must be closed by
 * the end of the call, or the resource sanitizer fails the test ("An HTTP client was created
 * during the test, but not closed during the test").
 */
import { createServiceClient, isServiceError } from "../../../src/service/index.js";

declare const Deno: {
  env: { get(name: string): string | undefined };
  test(name: string, fn: () => Promise<void>): void;
};

const baseUrl = Deno.env.get("CBC_SERVICE_URL") ?? "";
const merchantGuid = Deno.env.get("CBC_MERCHANT_GUID") ?? "";
const client = createServiceClient({ baseUrl, merchantGuid, timeoutMs: 2_000 });
const fast = createServiceClient({ baseUrl, merchantGuid, timeoutMs: 300 });

async function code(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return "resolved";
  } catch (error) {
    if (!isServiceError(error)) throw error;
    return `${error.code} ${error.mayHaveBeenApplied}`;
  }
}

function expectCode(actual: string, expected: string): void {
  if (actual !== expected) throw new Error(`expected ${expected}, got ${actual}`);
}

Deno.test("dispatch, answered", async () => {
  expectCode(
    await code(() => client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] })),
    "resolved",
  );
});

Deno.test("refund, its answer lost", async () => {
  expectCode(
    await code(() =>
      client.createOrderRefund({
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: 0.5 }],
      }),
    ),
    "NETWORK_ERROR true",
  );
});

Deno.test("void, no answer in time", async () => {
  expectCode(
    await code(() => fast.voidParcel({ OrderId: "GE-1001", ParcelCode: "P-1001-2" })),
    "TIMEOUT true",
  );
  // The timed-out request's connection is aborted; its client is closed when fetch rejects.
  await new Promise((resolve) => setTimeout(resolve, 100));
});

Deno.test("a service client per test, parcel status whose answer stalls", async () => {
  const own = createServiceClient({ baseUrl, merchantGuid, timeoutMs: 300 });
  expectCode(
    await code(() =>
      own.updateParcelStatus({
        orderId: "GE-1001",
        parcelCode: "P-1001-1",
        merchantParcelStatusCode: "Delivered",
      }),
    ),
    "TIMEOUT true",
  );
  // The stalled body is cancelled (not awaited); its client is closed when that cancel runs.
  await new Promise((resolve) => setTimeout(resolve, 100));
});
