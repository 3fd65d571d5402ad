// A merchant's code with `exactOptionalPropertyTypes` on, written against the package as it is
// published (the name resolves through package.json "exports" to dist/*.d.ts). It only has to
// compile: `test/service/consumer.test.ts` runs tsc on it with ./tsconfig.json.
import {
  type CallOptions,
  createServiceClient,
  type OperationName,
  type ServiceClientOptions,
  ServiceConflictError,
  ServiceError,
  type ServiceErrorCode,
  ServiceRateLimitError,
  type VoidParcelCode,
} from "crossborder-callbacks/service";
import {
  createServiceSimulator,
  type ServiceSimulatorOptions,
} from "crossborder-callbacks/testing";

// Options read from configuration are often `T | undefined`: each one is accepted as such.
declare const configured: {
  attempts?: number;
  timeoutMs?: number;
  user?: string;
  port?: number;
  voidToken?: boolean;
  ipName?: string;
  refundPath?: string;
};
const options: ServiceClientOptions = {
  baseUrl: "https://service.example",
  merchantGuid: "6f1c3c2e-4b7a-4d55-9f0e-2a8b7c6d5e4f",
  credentials: { userName: "merchant", password: "password-1" },
  timeoutMs: configured.timeoutMs,
  retries: { maxAttempts: configured.attempts, baseDelayMs: undefined },
  hooks: { onRequest: (event) => void event.url, includeBodies: undefined },
  names: {
    getShippingDetailsExtended: { serviceLevel: "serviceLevel" },
    locationByIp: { ip: configured.ipName },
  },
  jwt: { voidParcel: configured.voidToken },
  paths: { createOrderRefund: configured.refundPath },
  tokenCache: { get: async () => null, set: async () => undefined },
};
const client = createServiceClient(options);
const perCall: CallOptions = { timeoutMs: configured.timeoutMs, signal: undefined };
const simulatorOptions: ServiceSimulatorOptions = {
  port: configured.port,
  userName: configured.user,
};

export async function everyMethod(): Promise<void> {
  const summary = await client.calculateBillingSummary(
    {
      subscriptionId: "SUB-1",
      currencyCode: "EUR",
      products: [{ code: "SKU-1", quantity: 1, price: 10 }],
      shippingAmount: undefined,
    },
    { idempotencyKey: undefined, ...perCall },
  );
  if (summary.calculated) void summary.delivery.totals.taxes;
  else void summary.error.code;
  // @ts-expect-error: an uncalculated summary has no delivery to charge.
  void summary.delivery;
  await client.dispatchConsolidatedShipment({ OrderIds: ["GE-1"], HubCode: undefined }, perCall);
  await client.getShippingDetailsExtended({ amount: 1, currencyCode: "EUR", serviceLevel: 2 });
  const voided = await client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" });
  for (const warning of voided.warnings) void (warning.code satisfies VoidParcelCode);
  await client.updateParcelStatus({
    orderId: "GE-1",
    parcelCode: "P-1",
    merchantParcelStatusCode: "Delivered",
  });
  await client.saveProductsList({
    products: [{ Sku: "SKU-1", Price: 1, Quantity: 1, VATRate: 0.2 }],
    countryCode: undefined,
  });
  for await (const change of client.recentProductCountries()) {
    void (change.action satisfies "upsert" | "delete");
  }
  for await (const change of client.recentProductCountries({ requestId: undefined })) {
    void change.record.ProductCode;
  }
  await client.locationByIp({ ip: "203.0.113.7" }, perCall);
  await client.vatCategoryCountries({ countryCode: "DE", vatCategoryCodes: undefined });
  await client.getOrderRefunds({ orderId: "GE-1" });
  await client.createOrderRefund({
    OrderId: "GE-1",
    RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
  });
  const simulator = await createServiceSimulator(simulatorOptions);
  simulator.fail("locationByIp", { status: 429, retryAfter: undefined }, { code: "B001" });
  await simulator.close();
}

export function handle(error: unknown): string {
  if (error instanceof ServiceRateLimitError) return `retry in ${error.retryAfterMs ?? 0} ms`;
  if (error instanceof ServiceConflictError) void (error.kind satisfies "conflict");
  if (!(error instanceof ServiceError)) return "not ours";
  const code: ServiceErrorCode = error.code;
  switch (code) {
    case "IDEMPOTENCY_KEY_CONFLICT":
    case "B002":
    case "C104":
      return error.operation satisfies OperationName;
    default:
      return code;
  }
}
