// The context after issue 13: the payload is decoded in place, and `context.rawPayload` is rebuilt
// from the values as sent only when read; the context is a class whose lazy parts are getters.
// What the merchant sees must not change: the raw payload is the payload as sent, whatever the
// merchant does to the decoded one, and its PaymentDetails print masked and lose the CVV.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  type CallbackContext,
  createSendOrderToMerchantHandler,
  type SendOrderToMerchantRequest,
} from "../../src/index.js";
import { collector, post } from "./helpers.js";
import { paymentDetails } from "./leaks.js";

const VISA = "4111111111111111";

function order(): Record<string, unknown> {
  return {
    OrderId: "GE1",
    MerchantGUID: "guid-1",
    Products: [{ Sku: "A", Price: 1, Quantity: 1, VATRate: 0 }],
    PrimaryShipping: {
      Address1: "548+Market+St.",
      City: "London",
      Email: "jane.doe%40example.com",
    },
    InternationalDetails: { OrderTrackingUrl: "http%3a%2f%2fexample.com%2ft" },
    PaymentDetails: paymentDetails(VISA, "737"),
  };
}

type Fn = (
  payload: SendOrderToMerchantRequest,
  context: CallbackContext<SendOrderToMerchantRequest>,
) => unknown;

async function run(fn: Fn): Promise<number> {
  const handler = createSendOrderToMerchantHandler(
    (payload, context) => {
      fn(payload, context);
      return { InternalOrderId: "M-1" };
    },
    { auth: false, onError: () => undefined },
  );
  return (await handler.handle(post(JSON.stringify(order())))).status;
}

type Json = Record<string, Record<string, unknown>>;

describe("rawPayload after decoding in place", () => {
  it("shows the encoded values as sent even when the merchant changed the payload first", async () => {
    let raw: unknown;
    let decoded: Json | undefined;
    const status = await run((payload, context) => {
      const p = payload as unknown as Json;
      expect(p.PrimaryShipping?.Address1).toBe("548 Market St.");
      // The merchant rewrites, deletes and replaces decoded values and objects.
      (p.PrimaryShipping as Record<string, unknown>).Address1 = "rewritten";
      delete (p.PrimaryShipping as Record<string, unknown>).Email;
      p.InternationalDetails = { OrderTrackingUrl: "replaced" };
      (p.PaymentDetails as Record<string, unknown>).OwnerName = "someone";
      raw = context.rawPayload;
      decoded = p;
    });
    expect(status).toBe(200);
    const sent = order();
    const r = raw as Json;
    expect(r.PrimaryShipping).toStrictEqual(sent.PrimaryShipping);
    expect(r.InternationalDetails).toStrictEqual(sent.InternationalDetails);
    expect(r.PaymentDetails?.OwnerName).toBe("Jane+Doe");
    expect(r.PaymentDetails?.CardNumber).toBe(VISA);
    // Untouched branches are shared with the payload, as before.
    expect(r.Products).toBe(decoded?.Products);
  });

  it("read first, it does not follow the merchant's later changes to decoded values", async () => {
    let raw: Json | undefined;
    const status = await run((payload, context) => {
      raw = context.rawPayload as unknown as Json;
      expect(context.rawPayload).toBe(raw);
      const p = payload as unknown as Json;
      (p.PrimaryShipping as Record<string, unknown>).Address1 = "rewritten";
      (p.PaymentDetails as Record<string, unknown>).OwnerName = "someone";
    });
    expect(status).toBe(200);
    const { CVVNumber: _cvv, ...withoutCvv } = order().PaymentDetails as Record<string, unknown>;
    expect(raw?.PrimaryShipping).toStrictEqual(order().PrimaryShipping);
    // Every own field, the hidden card number too (not enumerable: review PIT-1).
    const details = raw?.PaymentDetails as Record<string, unknown>;
    expect(
      Object.fromEntries(Object.getOwnPropertyNames(details).map((key) => [key, details[key]])),
    ).toStrictEqual(withoutCvv);
  });

  it("its PaymentDetails copy prints masked, and loses the CVV with the payload's", async () => {
    let raw: Json | undefined;
    let late: (() => unknown) | undefined;
    const status = await run((_payload, context) => {
      raw = context.rawPayload as unknown as Json;
      const details = raw.PaymentDetails as Record<string, unknown>;
      expect(details.CVVNumber).toBe("737");
      for (const view of [JSON.stringify(raw), inspect(raw, { depth: 5 }), String(details)]) {
        expect(view).not.toContain(VISA);
        expect(view).not.toMatch(/\b737\b/);
      }
      late = () => context.rawPayload;
    });
    expect(status).toBe(200);
    expect(Object.hasOwn(raw?.PaymentDetails ?? {}, "CVVNumber")).toBe(false);
    expect(late?.()).toBe(raw);
  });

  it("first read after the handler returned, it holds no CVV", async () => {
    let context: CallbackContext<SendOrderToMerchantRequest> | undefined;
    const status = await run((_payload, ctx) => {
      context = ctx;
    });
    expect(status).toBe(200);
    const raw = context?.rawPayload as unknown as Json;
    expect(raw.PrimaryShipping?.Address1).toBe("548+Market+St.");
    expect(Object.hasOwn(raw.PaymentDetails ?? {}, "CVVNumber")).toBe(false);
    expect(JSON.stringify(raw)).not.toContain(VISA);
  });
});

describe("the context object", () => {
  it("keeps its lazy parts on the prototype, and reportFailure works detached", async () => {
    const { failures, onError } = collector();
    const controller = new AbortController();
    let context: CallbackContext<SendOrderToMerchantRequest> | undefined;
    const handler = createSendOrderToMerchantHandler(
      (_payload, ctx) => {
        context = ctx;
        const { reportFailure } = ctx;
        reportFailure(`store down for card ${VISA}`);
        return { InternalOrderId: "M-1" };
      },
      { auth: false, onError },
    );
    const response = await handler.handle({
      ...post(JSON.stringify(order())),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ kind: "store_failure", severity: "warning" });
    expect(failures[0]?.reason).toBe("store down for card ************1111");
    const ctx = context as CallbackContext<SendOrderToMerchantRequest>;
    expect(ctx.signal).toBe(controller.signal);
    expect(ctx.reportFailure).toBe(ctx.reportFailure);
    expect(Object.keys(ctx).sort()).toStrictEqual(["auth", "callback", "decoding", "request"]);
    const proto = Object.getPrototypeOf(ctx) as object;
    for (const name of ["rawPayload", "signal", "reportFailure"]) {
      expect(typeof Object.getOwnPropertyDescriptor(proto, name)?.get).toBe("function");
    }
    // Printing the context shows no card data (the request's body is not reachable from it).
    expect(JSON.stringify(ctx)).not.toContain(VISA);
    expect(inspect(ctx, { depth: 10 })).not.toContain(VISA);
  });
});
