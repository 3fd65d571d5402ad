/**
 * The client's round through the simulator, run unchanged inside Bun, Deno and workerd (bundled
 * by esbuild with no Node built-ins). The host test queues the failures and checks the report
 * against what the simulator recorded.
 */
import {
  createServiceClient,
  isServiceError,
  ServiceNotFoundError,
  ServiceServerError,
} from "../../../src/service/index.js";

export interface ScenarioConfig {
  readonly baseUrl: string;
  readonly merchantGuid: string;
  readonly userName: string;
  readonly password: string;
}

function failureOf(error: unknown) {
  if (!isServiceError(error)) return { unexpected: String(error) };
  return {
    name: error.name,
    kind: error.kind,
    code: error.code,
    status: error.status,
    attempts: error.attempts,
  };
}

async function failure(call: () => Promise<unknown>) {
  try {
    await call();
    return { unexpected: "resolved" };
  } catch (error) {
    return failureOf(error);
  }
}

export async function runScenario(config: ScenarioConfig) {
  const client = createServiceClient({
    baseUrl: config.baseUrl,
    merchantGuid: config.merchantGuid,
    credentials: { userName: config.userName, password: config.password },
    retries: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
    timeoutMs: 500,
  });
  const rates = await Promise.all(
    Array.from({ length: 10 }, () =>
      client.getShippingDetailsExtended({
        amount: 10,
        currencyCode: "EUR",
        destinationCountry: "GB",
      }),
    ),
  );
  // The host queued a 503 for the billing summary: one retry, the same Idempotency-Key.
  const billing = await client.calculateBillingSummary({
    subscriptionId: "SUB-PHYSICAL-1",
    currencyCode: "EUR",
    products: [{ code: "SKU-1", quantity: 1, price: 10 }],
  });
  const voided = await client.voidParcel({ OrderId: "GE-1001", ParcelCode: "P-1001-2" });
  const changes = [];
  for await (const change of client.recentProductCountries({ defaultVatRates: { DE: 0.19 } })) {
    changes.push(`${change.action} ${change.record.ProductCode}`);
  }
  // The host queued a 503 for the dispatch: never retried.
  const dispatch503 = await failure(() =>
    client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] }),
  );
  const dispatchB001 = await failure(() =>
    client.dispatchConsolidatedShipment({ OrderIds: ["GE-9999"] }),
  );
  let notFoundClass = false;
  try {
    await client.getOrderRefunds({ orderId: "GE-404" });
  } catch (error) {
    notFoundClass = error instanceof ServiceNotFoundError && !(error instanceof ServiceServerError);
  }
  // The host queued a hang: the attempt times out (AbortSignal + setTimeout) and the retry answers.
  const location = await client.locationByIp({ ip: "203.0.113.7" });
  const invalid = await failure(() => client.locationByIp({ ip: "not an IP" }));
  return {
    rates: rates.map((answer) => answer[0]?.destinationCountry),
    billing: { calculated: billing.calculated, idempotencyKey: billing.idempotencyKey },
    warnings: voided.warnings.map((warning) => warning.code),
    changes,
    dispatch503,
    dispatchB001,
    notFoundClass,
    location: location.Country?.Code,
    invalid,
  };
}

export type ScenarioReport = Awaited<ReturnType<typeof runScenario>>;

/** The fetch handler every runtime serves: POST a config, get the report (or the failure) back. */
export async function handleRun(request: Request): Promise<Response> {
  try {
    const report = await runScenario((await request.json()) as ScenarioConfig);
    return Response.json(report);
  } catch (error) {
    return Response.json({ error: String(error) }, { status: 500 });
  }
}
