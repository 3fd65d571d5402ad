// Issue 13: a call the merchant's function answers at once (a value, not a promise) goes through
// the engine without a promise layer per step: `callWithPayload`, the card guard and the wait for
// `validateAndCall` are no async functions, so the promises a call makes (counted exactly with
// async_hooks) no longer grow with the steps a request passes. And the paths that do wait (a
// returned promise or thenable, a throw, a rejection) answer as before, the CVV dropped after the
// function in each.
import { createHook } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import {
  CallbackError,
  createSendOrderToMerchantHandler,
  createUpdateOrderStatusHandler,
} from "../../src/index.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";

const quiet = { onError: () => undefined } as const;
const RESULT = { InternalOrderId: "100004217", OrderId: "100004217" } as const;

function request(callback: string, body: unknown) {
  return {
    method: "POST",
    url: `/crossborder/${callback}`,
    headers: { "content-type": "application/json" },
    body: new TextEncoder().encode(JSON.stringify(body)),
  };
}

/** The promises created by `calls` awaited calls of `call` (after a warm-up), per call. */
async function promisesPerCall(call: () => Promise<unknown>, calls = 50): Promise<number> {
  for (let i = 0; i < 20; i++) await call();
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === "PROMISE") count++;
    },
  });
  hook.enable();
  try {
    for (let i = 0; i < calls; i++) await call();
  } finally {
    hook.disable();
  }
  return count / calls;
}

describe("a call answered at once makes no promise per step", () => {
  it("UpdateOrderStatus (no card data): 4 promises per call through handle, where there were 6", async () => {
    const handler = createUpdateOrderStatusHandler(() => undefined, { auth: false, ...quiet });
    const body = SAMPLE_BUILDERS.UpdateOrderStatus();
    expect((await handler.handle(request("UpdateOrderStatus", body))).status).toBe(200);
    expect(
      await promisesPerCall(() => handler.handle(request("UpdateOrderStatus", body))),
    ).toBeLessThanOrEqual(4);
  });

  it("SendOrderToMerchant with a card: 4 promises per call, where there were 8", async () => {
    const handler = createSendOrderToMerchantHandler(() => RESULT, { auth: false, ...quiet });
    const body = SAMPLE_BUILDERS.SendOrderToMerchant();
    expect(body.PaymentDetails).toBeTruthy();
    expect((await handler.handle(request("SendOrderToMerchant", body))).status).toBe(200);
    expect(
      await promisesPerCall(() => handler.handle(request("SendOrderToMerchant", body))),
    ).toBeLessThanOrEqual(4);
  });
});

describe("the paths that wait answer as before, the CVV dropped after the function", () => {
  type Order = ReturnType<typeof SAMPLE_BUILDERS.SendOrderToMerchant>;
  const cases: ReadonlyArray<{
    readonly label: string;
    readonly answer: (payload: Order) => unknown;
    readonly status: number;
  }> = [
    { label: "a value", answer: () => RESULT, status: 200 },
    { label: "a promise", answer: async () => RESULT, status: 200 },
    {
      label: "a thenable",
      answer: () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what is tested
        then: (done: (v: unknown) => void) => done(RESULT),
      }),
      status: 200,
    },
    {
      label: "a throw",
      answer: () => {
        throw new Error("boom");
      },
      status: 500,
    },
    { label: "a rejection", answer: () => Promise.reject(new Error("boom")), status: 500 },
    {
      label: "a thenable that rejects",
      answer: () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what is tested
        then: (_: unknown, fail: (e: unknown) => void) => fail(new Error("boom")),
      }),
      status: 500,
    },
    {
      label: "a CallbackError thrown",
      answer: () => {
        throw new CallbackError("OUT_OF_STOCK", "no");
      },
      status: 200,
    },
    {
      label: "a CallbackError rejected",
      answer: async () => {
        throw new CallbackError("OUT_OF_STOCK", "no");
      },
      status: 200,
    },
  ];
  for (const { label, answer, status } of cases) {
    it(`${label}: ${status}, and the card had its CVV while the function ran, not after`, async () => {
      const seen: unknown[] = [];
      let payment: Record<string, unknown> | undefined;
      const handler = createSendOrderToMerchantHandler(
        (order) => {
          payment = order.PaymentDetails as unknown as Record<string, unknown>;
          seen.push(payment.CVVNumber);
          return answer(order) as never;
        },
        { auth: false, ...quiet },
      );
      const response = await handler.handle(
        request("SendOrderToMerchant", SAMPLE_BUILDERS.SendOrderToMerchant()),
      );
      expect(response.status).toBe(status);
      expect(seen).toHaveLength(1);
      expect(typeof seen[0]).toBe("string");
      expect(payment?.CVVNumber).toBeUndefined();
    });
  }
});
