// `simulate` as one journey: the order id the endpoint answers is carried into the later calls,
// the order (and its payment) is delivered twice as the service redelivers, and the wire-facts §6
// forms ("as captured") are sent after each sample.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { ALL_CALLBACKS, rowProblems, simulate } from "../../src/cli/simulate.js";
import { CallbackError, type CallbackHandlers, createCallbackRouter } from "../../src/index.js";
import {
  CAPTURED_CALLBACKS,
  capturedPayload,
  createTestKeys,
  SAMPLE_MERCHANT_ORDER_ID,
  sendCallback,
  type TestKeys,
} from "../../src/testing/index.js";
import {
  listen,
  MERCHANT_GUID,
  type RunningServer,
  startMerchant,
  startRawMerchant,
} from "../testing/helpers.js";

let keys: TestKeys;
const servers: RunningServer[] = [];

beforeAll(async () => {
  keys = await createTestKeys();
});

afterAll(async () => {
  for (const server of servers) await server.close();
});

/** A library router with these handlers, and its base URL. */
async function merchant(handlers: Partial<CallbackHandlers>) {
  const auth = createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: MERCHANT_GUID,
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    handlers,
    onError: () => {},
  });
  const server = await listen(toNodeListener(router));
  servers.push(server);
  return `${server.origin}/crossborder`;
}

const run = (base: string, callbacks = ALL_CALLBACKS) =>
  simulate({ url: base, callbacks, privateKey: keys.privateKey, merchantGuid: MERCHANT_GUID });

const ORDER_FLOW = ["SendOrderToMerchant", "PerformOrderPayment", "UpdateOrderStatus"] as const;

describe("the merchant's order id is carried through the journey (K5)", () => {
  it("sends the InternalOrderId answered by SendOrderToMerchant as the later calls' MerchantOrderId", async () => {
    // A correct merchant finding its orders by its own id (001 §2.1: MerchantOrderId is the id
    // returned from the earlier SendOrderToMerchant).
    const mine = new Map<string, string>();
    const find = (id: string | null | undefined) => {
      if (!id || !mine.has(id)) throw new CallbackError("ORDER_NOT_FOUND", "Unknown order");
      return id;
    };
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        const id =
          [...mine].find(([, serviceId]) => serviceId === order.OrderId)?.[0] ??
          `M-${mine.size + 1}`;
        mine.set(id, order.OrderId);
        return { InternalOrderId: id, PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
      UpdateOrderStatus: (update) => ({ InternalOrderId: find(update.MerchantOrderId) }),
      PerformOrderPayment: (payment) => ({
        InternalOrderId: find(payment.MerchantOrderId),
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
      }),
    });
    const rows = await run(base, ORDER_FLOW);
    expect(rows.map((row) => [row.callback, rowProblems(row)])).toEqual(
      ORDER_FLOW.map((callback) => [callback, []]),
    );
    const payment = rows.find((row) => row.callback === "PerformOrderPayment");
    const status = rows.find((row) => row.callback === "UpdateOrderStatus");
    expect(payment?.payload).toMatchObject({ MerchantOrderId: "M-1" });
    expect(status?.payload).toMatchObject({ MerchantOrderId: "M-1" });
  });

  it("keeps the sample's MerchantOrderId when no SendOrderToMerchant answered one, and a given payload's", async () => {
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-9" }),
      UpdateOrderStatus: () => ({}),
    });
    const alone = await run(base, ["UpdateOrderStatus"]);
    expect(alone[0]?.payload).toMatchObject({ MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID });
    const given = await simulate({
      url: base,
      callbacks: ["SendOrderToMerchant", "UpdateOrderStatus"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
      payloads: {
        UpdateOrderStatus: { OrderId: "GE-1", StatusCode: "canceled", MerchantOrderId: "X-7" },
      },
    });
    expect(given[1]?.payload).toMatchObject({ MerchantOrderId: "X-7" });
  });
});

describe("redelivery (K3)", () => {
  it("reports a merchant that creates a second order when the same order is delivered again", async () => {
    let n = 0;
    const base = await merchant({
      SendOrderToMerchant: () => ({
        InternalOrderId: `M-${++n}`,
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
      }),
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && rowProblems(row)).toEqual([
      expect.stringMatching(
        /^redelivered \(the same payload again, as the service does after a timeout or a 5xx\): InternalOrderId "M-1" then "M-2": a duplicate order on redelivery.*withIdempotency/,
      ),
    ]);
  });

  it("reports a payment refused on redelivery after it succeeded", async () => {
    const paid = new Set<string>();
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      PerformOrderPayment: (payment) => {
        if (paid.has(payment.OrderId)) throw new CallbackError("ALREADY_PAID", "Paid already");
        paid.add(payment.OrderId);
        return { InternalOrderId: "M-1", PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rowProblems(rows[1] as (typeof rows)[number])).toEqual([
      expect.stringMatching(/^redelivered .*: a refusal: .*ALREADY_PAID.*withIdempotency/),
    ]);
  });

  it("delivers SendOrderToMerchant and PerformOrderPayment twice with the identical body; an idempotent merchant passes", async () => {
    const good = await startMerchant(keys.publicKey);
    servers.push(good);
    const rows = await simulate({
      url: good.base,
      callbacks: ["SendOrderToMerchant", "PerformOrderPayment"],
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(rows.map(rowProblems)).toEqual([[], []]);
    for (const callback of ["SendOrderToMerchant", "PerformOrderPayment"]) {
      const calls = good.calls.filter((call) => call.callback === callback);
      // The sample twice, then the captured form.
      expect(calls.length).toBe(3);
      expect(calls[1]?.payload).toEqual(calls[0]?.payload);
      expect(calls[2]?.payload).not.toEqual(calls[0]?.payload);
    }
  });
});

describe("the forms seen in real captures (K4)", () => {
  it("has a captured form of the order, its payment and the cart request, built from wire-facts §6", () => {
    expect([...CAPTURED_CALLBACKS].sort()).toEqual(
      ["GetCheckoutCartInfo", "PerformOrderPayment", "SendOrderToMerchant"].sort(),
    );
    const payment = capturedPayload("PerformOrderPayment");
    expect(payment.PaymentDetails).toMatchObject({
      CardNumber: null,
      CVVNumber: null,
      PaymentMethodCode: "OT",
    });
    const order = capturedPayload("SendOrderToMerchant");
    expect(order.PaymentDetails).toBeNull();
    expect(order.InternationalDetails?.TransactionCurrencyCode).toBe(" EUR");
    expect(order.Customer?.IsEndCustomerPrimary).toBe(false);
    // Encoded although the flag says the secondary is the end customer.
    expect(order.PrimaryBilling?.City).toBe("New+York");
    expect(order.PrimaryBilling?.StateOrProvince).toBe("New York");
    expect(order.PrimaryShipping?.Address2).toBe("Test Address2\r\nGlobal-e OrderId:GE927127");
    expect(Object.values(order.SecondaryShipping ?? {}).every((value) => value === null)).toBe(
      true,
    );
    expect(capturedPayload("GetCheckoutCartInfo")).toMatchObject({ countryCode: "GER" });
  });

  it("fails an endpoint that crashes on the service's own collection (CardNumber null, OT), which the sample alone passed", async () => {
    const base = await merchant({
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      PerformOrderPayment: (payment) => ({
        InternalOrderId: "M-1",
        PaymentAmount: "123.73",
        PaymentCurrencyCode: "USD",
        Message: `charged card ending ${(payment.PaymentDetails.CardNumber as string).slice(-4)}`,
      }),
    });
    const rows = await run(base, ["SendOrderToMerchant", "PerformOrderPayment"]);
    expect(rowProblems(rows[0] as (typeof rows)[number])).toEqual([]);
    const problems = rowProblems(rows[1] as (typeof rows)[number]);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((problem) => problem.startsWith("as captured (wire-facts §6"))).toBe(
      true,
    );
    expect(problems.join("\n")).toContain("HTTP 500");
  });

  it('fails an endpoint that refuses a stray space in a currency (" EUR")', async () => {
    const base = await merchant({
      SendOrderToMerchant: (order) => {
        const currency = order.InternationalDetails?.TransactionCurrencyCode ?? "USD";
        if (!/^[A-Z]{3}$/.test(currency)) throw new Error(`bad currency ${currency}`);
        return { InternalOrderId: `M-${order.OrderId}` };
      },
    });
    const [row] = await run(base, ["SendOrderToMerchant"]);
    expect(row && rowProblems(row)).toEqual([expect.stringMatching(/^as captured .*HTTP 500/)]);
  });

  it("sends the captured order's JSON with \\/ escapes, as PHP writes it", async () => {
    const raw = await startRawMerchant();
    servers.push(raw);
    await run(raw.base, ["SendOrderToMerchant"]);
    const sent = raw.seen.filter((request) => request.url.endsWith("/SendOrderToMerchant"));
    expect(sent.length).toBe(3);
    expect(sent[2]?.body).toContain('"N\\/A"');
    expect(sent[0]?.body).not.toContain("\\/");
  });

  it.each(CAPTURED_CALLBACKS)(
    "the library's own handlers answer %s's captured form 2xx, with no problem",
    async (callback) => {
      const good = await startMerchant(keys.publicKey);
      servers.push(good);
      const result = await sendCallback(good.base, callback, {
        privateKey: keys.privateKey,
        merchantGuid: MERCHANT_GUID,
        payload: capturedPayload(callback),
        escapeSlashes: true,
      });
      expect(result.status).toBeGreaterThanOrEqual(200);
      expect(result.status).toBeLessThan(300);
      expect(result.problems).toEqual([]);
    },
  );
});
