import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  CallbackError,
  createCallbackRouter,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
} from "../../src/index.js";
import { collector, json, parsed, post } from "./helpers.js";

const order = JSON.parse(
  readFileSync(new URL("../fixtures/SendOrderToMerchant.json", import.meta.url), "utf8"),
) as Record<string, unknown> & { PaymentDetails: Record<string, unknown> };

describe("engine details", () => {
  it("treats a CallbackError from another copy of the library (ESM next to CJS) as one", async () => {
    // Another copy has another class, but the same registered brand.
    const brand: unique symbol = Symbol.for("crossborder-callbacks/CallbackError@1") as never;
    class ForeignCallbackError extends Error {
      readonly [brand] = true;
      readonly code = "OUT_OF_STOCK";
      readonly description = "SKU A1";
      readonly status = 200;
    }
    const { onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new ForeignCallbackError("No stock");
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(JSON.stringify(order)));
    expect(response.status).toBe(200);
    expect(json(response)).toEqual({
      Success: false,
      ErrorCode: "OUT_OF_STOCK",
      Message: "No stock",
      Description: "SKU A1",
    });
  });

  it.each([
    ["99", 99],
    ['"abc"', "abc"],
    ["600", 600],
    ["200.5", 200.5],
    ["NaN", Number.NaN],
    ["undefined", undefined],
    ["204", 204],
    ["205", 205],
    ["304", 304],
  ])(
    "a foreign CallbackError with status %s is answered 200, never a crash",
    async (_label, status) => {
      const brand: unique symbol = Symbol.for("crossborder-callbacks/CallbackError@1") as never;
      // Another copy (or a forged object) whose constructor did not check the status.
      const error = Object.assign(new Error("Order locked"), {
        [brand]: true,
        code: "LOCKED",
        description: undefined,
        status,
      });
      const { failures, onError } = collector();
      const handler = createSendOrderToMerchantHandler(
        () => {
          throw error;
        },
        { auth: false, onError },
      );
      const response = await handler.handle(post(JSON.stringify(order)));
      expect(response.status).toBe(200);
      expect(json(response)).toEqual({
        Success: false,
        ErrorCode: "LOCKED",
        Message: "Order locked",
        Description: "",
      });
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ kind: "handler_failure", status: 200 });
    },
  );

  it("a foreign CallbackError with a valid status keeps it", async () => {
    const brand: unique symbol = Symbol.for("crossborder-callbacks/CallbackError@1") as never;
    const error = Object.assign(new Error("Gone"), { [brand]: true, code: "GONE", status: 410 });
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw error;
      },
      { auth: false, onError: () => undefined },
    );
    const response = await handler.handle(post(JSON.stringify(order)));
    expect(response.status).toBe(410);
    expect(json(response)).toMatchObject({ Success: false, ErrorCode: "GONE" });
  });

  it("drops the CVV from a framework's already-parsed body once the function returns", async () => {
    const frameworkBody = structuredClone(order);
    const { onError } = collector();
    let seen: unknown;
    const handler = createPerformOrderPaymentHandler(
      (payment) => {
        seen = payment.PaymentDetails.CVVNumber;
        return { PaymentAmount: "123.73", PaymentCurrencyCode: "USD" };
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(parsed(frameworkBody)));
    expect(response.status).toBe(200);
    expect(seen).toBe(order.PaymentDetails.CVVNumber);
    expect(frameworkBody.PaymentDetails).not.toHaveProperty("CVVNumber");
    expect(frameworkBody.PaymentDetails.CardNumber).toBe(order.PaymentDetails.CardNumber);
  });

  it("builds a router of prebuilt handlers without router-level auth", async () => {
    const { onError } = collector();
    const router = createCallbackRouter({
      handlers: {
        SendOrderToMerchant: createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-9" }), {
          auth: false,
          onError,
        }),
      },
    });
    const response = await router.handle(post(JSON.stringify(order), {}, "/SendOrderToMerchant"));
    expect(json(response)).toEqual({ Success: true, InternalOrderId: "M-9" });
  });

  it("refuses a function entry when the router has no auth", () => {
    expect(() =>
      createCallbackRouter({ handlers: { SendOrderToMerchant: () => ({ InternalOrderId: 1 }) } }),
    ).toThrow(/auth/);
  });

  it("keeps CallbackError's status option", () => {
    expect(new CallbackError("X", "m", undefined, { status: 422 }).status).toBe(422);
    expect(() => new CallbackError("X", "m", undefined, { status: 99 })).toThrow(RangeError);
  });
});
