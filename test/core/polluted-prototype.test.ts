// Review second-speed2-4: with a field's name on Object.prototype (a polluting dependency), the
// sealed check declines, and the walk and zod that decide instead read the prototype's value for a
// field the body lacks: a body without its required OrderId was accepted (200), the merchant's
// payload.OrderId the prototype's. No value of Object.prototype may stand in for the body's.
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import {
  createPerformOrderPaymentHandler,
  createUpdateOrderStatusHandler,
} from "../../src/index.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";
import { listen } from "../adapters/support/servers.js";
import { post } from "./helpers.js";

const proto = Object.prototype as Record<string, unknown>;
const added: string[] = [];
/** A non-enumerable value on Object.prototype (as `Object.defineProperty` by a dependency). */
function pollute(name: string, value: unknown): void {
  Object.defineProperty(proto, name, { value, configurable: true, writable: true });
  added.push(name);
}
afterEach(() => {
  for (const name of added.splice(0)) delete proto[name];
});

function status(change: (body: Record<string, unknown>) => void = () => undefined) {
  const body = SAMPLE_BUILDERS.UpdateOrderStatus() as unknown as Record<string, unknown>;
  change(body);
  return JSON.stringify(body);
}

describe("a field's name on Object.prototype", () => {
  it("does not stand in for a required field the body lacks: 400 INVALID_PAYLOAD, the merchant not called", async () => {
    let calls = 0;
    const handler = createUpdateOrderStatusHandler(
      () => {
        calls++;
      },
      { auth: false, onError: () => undefined },
    );
    const body = status((b) => delete b.OrderId);
    expect((await handler.handle(post(body))).status).toBe(400);
    pollute("OrderId", "FROM-PROTOTYPE");
    const answer = await handler.handle(post(body));
    // Before: 200, and the merchant saw payload.OrderId "FROM-PROTOTYPE".
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ ErrorCode: "INVALID_PAYLOAD" });
    expect(answer.body).toContain("OrderId");
    expect(calls).toBe(0);
  });

  it("is not read for an optional field the body lacks; the body's own fields are", async () => {
    const seen: Record<string, unknown>[] = [];
    const handler = createUpdateOrderStatusHandler(
      (payload) => {
        seen.push({
          OrderId: payload.OrderId,
          MerchantOrderId: payload.MerchantOrderId,
          hasMerchantOrderId: "MerchantOrderId" in payload,
        });
      },
      { auth: false, onError: () => undefined },
    );
    pollute("MerchantOrderId", "FROM-PROTOTYPE");
    const answer = await handler.handle(post(status((b) => delete b.MerchantOrderId)));
    expect(answer.status).toBe(200);
    expect(seen).toEqual([
      { OrderId: expect.any(String), MerchantOrderId: undefined, hasMerchantOrderId: false },
    ]);
  });

  it("a payment: the card guarded as on a clean prototype (no CVV left, masked when logged)", async () => {
    let details: Record<string, unknown> | undefined;
    let cvvDuring: unknown;
    const handler = createPerformOrderPaymentHandler(
      (payment) => {
        details = payment.PaymentDetails as unknown as Record<string, unknown>;
        cvvDuring = details.CVVNumber;
        return { InternalOrderId: "M-1", PaymentAmount: 10, PaymentCurrencyCode: "EUR" };
      },
      { auth: false, onError: () => undefined },
    );
    pollute("UserId", "FROM-PROTOTYPE");
    const body = JSON.stringify(SAMPLE_BUILDERS.PerformOrderPayment());
    const answer = await handler.handle(post(body));
    expect(answer.status).toBe(200);
    expect(typeof cvvDuring).toBe("string");
    expect(details && Object.hasOwn(details, "CVVNumber")).toBe(false);
    expect(JSON.stringify(details)).not.toMatch(/4111111111111111/);
  });

  it("through Express's own parsed body (req.body) too", async () => {
    let calls = 0;
    const app = express();
    app.use(express.json());
    app.use(
      "/cb",
      toExpress(
        createUpdateOrderStatusHandler(
          () => {
            calls++;
          },
          { auth: false, onError: () => undefined },
        ),
      ),
    );
    const server = await listen(app);
    try {
      pollute("StatusCode", "FROM-PROTOTYPE");
      const answer = await server.send("/cb", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: status((b) => delete b.StatusCode),
      });
      expect(answer.status).toBe(400);
      expect(calls).toBe(0);
    } finally {
      await server.close();
    }
  });
});
