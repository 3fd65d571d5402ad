import { describe, expect, it } from "vitest";
import { describeIssues } from "../../src/core/engine.js";
import { CART_CHECKER, DEFER, PAYLOAD_CHECKERS } from "../../src/generated/checkers.js";
import {
  CALLBACK_NAMES,
  type CallbackFailure,
  type CallbackName,
  type CheckoutCartInfo,
  checkoutCartInfoSchema,
  createCallbackRouter,
  sendOrderToMerchantSchema,
} from "../../src/index.js";
import { getCheckoutCartInfoRequestSchema } from "../../src/schemas/checkout-request.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";

// The engine runs the generated checker before zod: when it accepts, the checked body itself is
// the payload (no copy); otherwise zod decides exactly as before, with its issues and its output.

type AnyFunction = (payload: unknown, context: { rawPayload: unknown }) => unknown;

const RESULTS: Readonly<Record<CallbackName, unknown>> = {
  GetCheckoutCartInfo: { productsList: [] },
  SendOrderToMerchant: { InternalOrderId: "M-1" },
  UpdateOrderStatus: {},
  PerformOrderPayment: { PaymentAmount: 10, PaymentCurrencyCode: "USD" },
  SendRMAInfoToMerchant: {},
  UpdateParcelDispatch: {},
  RemoveRestrictedProducts: {},
  SendAdditionalRequiredDocumentsToMerchant: {},
  ValidateGiftCard: { Success: true },
  RedeemGiftCard: { Success: true },
  RefundGiftCard: { Success: true },
  ValidateVoucher: { Success: true },
  NotifyOrderRefund: {},
  UpdateOrderShippingInfo: {},
};

/** A router whose functions keep what they receive, and the failures it reports. */
function recording(cart?: () => unknown) {
  const seen: { callback: CallbackName; payload: unknown; raw: unknown }[] = [];
  const failures: CallbackFailure[] = [];
  const handlers: Record<string, AnyFunction> = {};
  for (const callback of CALLBACK_NAMES) {
    handlers[callback] = (payload, context) => {
      seen.push({ callback, payload, raw: context.rawPayload });
      return callback === "GetCheckoutCartInfo" && cart !== undefined ? cart() : RESULTS[callback];
    };
  }
  const router = createCallbackRouter({
    auth: false,
    onError: (failure) => void failures.push(failure),
    handlers: handlers as never,
  });
  return { router, seen, failures };
}

/** A POST of an already-parsed body, as a framework's JSON parser hands it over. */
function postParsed(callback: CallbackName, body: unknown) {
  return {
    method: "POST",
    url: `/${callback}`,
    headers: { "content-type": "application/json" },
    body: body as never,
  };
}

describe("the generated checker on the engine's path", () => {
  it("every callback's checker was generated from the schema its definition validates with", () => {
    for (const callback of CALLBACK_NAMES) {
      expect(PAYLOAD_CHECKERS[callback], callback).toBeDefined();
    }
    expect(PAYLOAD_CHECKERS.GetCheckoutCartInfo.schema).toBe(getCheckoutCartInfoRequestSchema);
    expect(PAYLOAD_CHECKERS.SendOrderToMerchant.schema).toBe(sendOrderToMerchantSchema);
    expect(CART_CHECKER.schema).toBe(checkoutCartInfoSchema);
  });

  it("a body the checker accepts is the payload itself, for every JSON callback", async () => {
    const { router, seen, failures } = recording();
    for (const callback of CALLBACK_NAMES) {
      if (callback === "GetCheckoutCartInfo") continue;
      const body = SAMPLE_BUILDERS[callback]();
      const sent = structuredClone(body) as Record<string, unknown>;
      const before = seen.length;
      await router.handle(postParsed(callback, body));
      // The merchant's function ran (what it answered does not matter here).
      expect(seen.length, `${callback}: ${JSON.stringify(failures)}`).toBe(before + 1);
      const call = seen.at(-1);
      expect(call?.callback).toBe(callback);
      // Not a copy: the very object the framework parsed, decoded in place.
      expect(call?.payload, callback).toBe(body);
      // The raw view still holds the values as sent (card objects aside: their CVV is gone).
      const raw = call?.raw as Record<string, unknown>;
      for (const key of Object.keys(sent)) {
        if (key === "PaymentDetails") continue;
        expect(raw[key], `${callback}.${key}`).toStrictEqual(sent[key]);
      }
    }
  });

  it("GetCheckoutCartInfo's payload keeps its parameters in the order they came (no zod copy)", async () => {
    const { router, seen } = recording();
    const response = await router.handle({
      method: "GET",
      url: "/GetCheckoutCartInfo?countryCode=AU&merchantCartToken=demo-cart",
      headers: {},
    });
    expect(response.status).toBe(200);
    // zod's copy would list the schema's fields first (merchantCartToken before countryCode).
    expect(Object.keys(seen[0]?.raw as object)).toStrictEqual(["countryCode", "merchantCartToken"]);
  });

  it("a body the checker leaves to zod gets zod's copy (an object without a prototype)", async () => {
    const { router, seen, failures } = recording();
    const body = Object.assign(Object.create(null), SAMPLE_BUILDERS.UpdateOrderStatus());
    expect(PAYLOAD_CHECKERS.UpdateOrderStatus.check(body)).toBe(DEFER);
    const response = await router.handle(postParsed("UpdateOrderStatus", body));
    expect(response.status, JSON.stringify(failures)).toBe(200);
    const raw = seen[0]?.raw as object;
    expect(raw).not.toBe(body);
    expect(Object.getPrototypeOf(raw)).toBe(Object.prototype);
    expect(raw).toStrictEqual({ ...body });
  });

  it("a body zod rejects is answered with zod's issues, as before", async () => {
    const { router, seen, failures } = recording();
    const body = SAMPLE_BUILDERS.SendOrderToMerchant() as unknown as Record<string, unknown>;
    const products = body.Products as Record<string, unknown>[];
    (products[1] as Record<string, unknown>).Price = "10.00";
    delete (products[0] as Record<string, unknown>).Sku;
    const expected = sendOrderToMerchantSchema.safeParse(structuredClone(body));
    expect(expected.success).toBe(false);
    const response = await router.handle(postParsed("SendOrderToMerchant", body));
    expect(response.status).toBe(400);
    expect(seen).toHaveLength(0);
    const description = describeIssues(expected.error as never);
    expect(description).toContain("Products.1.Price");
    expect(failures[0]?.reason).toBe(`schema: ${description}`);
  });
});

describe("the cart a merchant returns", () => {
  const cart = (): CheckoutCartInfo => ({
    productsList: [{ ProductCode: "SKU-1", CartItemId: "1", SalePrice: 10, OrderedQuantity: 1 }],
    currencyCode: "USD",
    discountsList: [{ CouponCode: "SPRING", DiscountValue: 5, DiscountType: 1 }],
  });

  async function answer(result: unknown) {
    const { router, failures } = recording(() => result);
    const response = await router.handle({
      method: "GET",
      url: "/GetCheckoutCartInfo?merchantCartToken=c1",
      headers: {},
    });
    return { response, failures };
  }

  it("a valid cart is sent as returned", async () => {
    const { response } = await answer(cart());
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toStrictEqual(cart());
  });

  it("a coupon over 100 characters is refused with zod's reason", async () => {
    const broken = cart();
    (broken.discountsList as { CouponCode?: string }[])[0] = { CouponCode: "C".repeat(101) };
    const { response, failures } = await answer(broken);
    expect(response.status).toBe(500);
    const issues = checkoutCartInfoSchema.safeParse(broken);
    expect(failures[0]?.reason).toBe(
      `the handler's result is unusable: not a CheckoutCartInfo: ${describeIssues(issues.error as never, 5)}`,
    );
  });

  it("a coupon of 100 code points in more UTF-16 units is left to zod, which accepts it", async () => {
    const emoji = cart();
    // 60 emoji (two units each) and 40 letters: 100 code points, 160 units.
    const coupon = `${"\u{1F381}".repeat(60)}${"A".repeat(40)}`;
    (emoji.discountsList as { CouponCode?: string }[])[0] = { CouponCode: coupon };
    expect(CART_CHECKER.check(emoji)).toBe(DEFER);
    const { response } = await answer(emoji);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).discountsList[0].CouponCode).toBe(coupon);
  });
});
