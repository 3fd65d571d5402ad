/**
 * What a merchant built from the examples must do: answer all fourteen callbacks, signed as the
 * service signs them, in the order a real order goes through them, and refuse a forged token.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { createServiceKeys, fixture, type ServiceKeys } from "../../adapters/support/keys.js";
import { MERCHANT_GUID } from "../../adapters/support/merchant.js";
import { ROOT } from "../../adapters/support/runtime.js";
import { GIFT_CARD_UNAUTHORIZED, type Send, signedPost } from "../../adapters/support/suite.js";

export { MERCHANT_GUID };

/** The file of `dir` (searched recursively) modified last, and when (ms); undefined if none. */
function newestFile(dir: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(path);
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
  }
  return newest;
}

/**
 * The examples import the package by name, which resolves to dist/: it must be built, after the
 * last change of any file under src/ (a build rewrites all of dist/, dist/index.js included).
 */
export function assertBuilt(root: string = ROOT): void {
  const entry = join(root, "dist/index.js");
  if (!existsSync(entry)) {
    throw new Error(
      "dist/ is missing: run `npm run build` before the example tests (npm test does)",
    );
  }
  const newest = newestFile(join(root, "src"));
  if (newest && statSync(entry).mtimeMs < newest.mtimeMs) {
    throw new Error(
      `dist/ is older than ${relative(root, newest.path)}: run \`npm run build\` before the example tests`,
    );
  }
}

export async function exampleKeys(): Promise<ServiceKeys> {
  return createServiceKeys();
}

/** The environment every example reads. */
export function exampleEnv(keys: ServiceKeys): Record<string, string> {
  return {
    SERVICE_PUBLIC_KEY: keys.publicKeyPem,
    SERVICE_ENVIRONMENT: "test",
    MERCHANT_GUID,
    PORT: "0",
    HOST: "127.0.0.1",
  };
}

function payload(name: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...JSON.parse(fixture(name)), ...overrides });
}

/**
 * What the examples' default `onError` logs over the flow: one line per refusal, in order. The
 * in-process examples (Next.js route module, workerd) log into the test's console, so their tests
 * capture and check these lines instead of letting them through.
 */
export const FLOW_LOG = [
  "[crossborder-callbacks] GetCheckoutCartInfo 200 handler_failure: CART_NOT_FOUND: Unknown cart",
  "[crossborder-callbacks] ValidateGiftCard 401 unauthorized: the shopper session was refused (verifySession)",
  "[crossborder-callbacks] UpdateOrderShippingInfo order NOPE 200 handler_failure: ORDER_NOT_FOUND: Unknown order",
  "[crossborder-callbacks] SendOrderToMerchant 401 unauthorized: JWT signature verification failed",
  "[crossborder-callbacks] SendOrderToMerchant 401 unauthorized: MerchantGUID does not match",
];

/**
 * For an example that runs in the test's own process: keeps what it writes on console.error and
 * console.warn (call at the top level of the test file), for a test to compare with FLOW_LOG.
 */
export function captureExampleLog(): string[] {
  const logged: string[] = [];
  beforeAll(() => {
    for (const method of ["error", "warn"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(" "));
      });
    }
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });
  return logged;
}

/** Declares the fourteen-callback flow (call inside a `describe`; the tests run in order). */
export function merchantFlow(send: () => Send, keys: () => ServiceKeys): void {
  const call = async (name: string, body: string) =>
    send()(`/crossborder/${name}`, signedPost(await keys().sign(), body));
  const cart = async () =>
    send()(
      "/crossborder/GetCheckoutCartInfo?merchantCartToken=demo-cart&countryCode=DE&currencyCode=EUR",
      {
        headers: { authorization: `Bearer ${await keys().sign()}` },
      },
    );

  it("GetCheckoutCartInfo: answers the cart", async () => {
    const response = await cart();
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ cartId: "demo-cart", countryCode: "DE", currencyCode: "EUR" });
    expect((body.productsList as { ProductCode: string }[]).map((p) => p.ProductCode)).toEqual([
      "TSHIRT-BLK-M",
      "MUG-WHT",
    ]);
  });

  it("RemoveRestrictedProducts: takes the products out of the cart", async () => {
    const response = await call(
      "RemoveRestrictedProducts",
      payload("RemoveRestrictedProducts", {
        CartId: "demo-cart",
        RemovedProductCodes: ["MUG-WHT"],
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ IsSuccess: true });
    const after = (await (await cart()).json()) as { productsList: { ProductCode: string }[] };
    expect(after.productsList.map((p) => p.ProductCode)).toEqual(["TSHIRT-BLK-M"]);
  });

  it("SendOrderToMerchant: answers the merchant's ids and, the order carrying PaymentDetails, what was charged; clears the cart", async () => {
    const response = await call(
      "SendOrderToMerchant",
      payload("SendOrderToMerchant", { CartToken: "demo-cart" }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      Success: true,
      InternalOrderId: "M-1001",
      OrderId: "M-1001",
      PaymentAmount: "123.73",
      PaymentCurrencyCode: "USD",
    });
    const gone = await cart();
    expect(await gone.json()).toMatchObject({ Success: false, ErrorCode: "CART_NOT_FOUND" });
  });

  it("UpdateOrderStatus: answers success, as it does before the order arrives (review second-seq-4)", async () => {
    const response = await call("UpdateOrderStatus", payload("UpdateOrderStatus"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ Success: true });
  });

  it("PerformOrderPayment: answers the same ids and the amount charged (the order's total)", async () => {
    // The payment carries no totals: the amount is the stored order's transaction total.
    const response = await call("PerformOrderPayment", payload("PerformOrderPayment"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      Success: true,
      InternalOrderId: "M-1001",
      OrderId: "M-1001",
      PaymentAmount: "123.73",
      PaymentCurrencyCode: "USD",
    });
  });

  it("PerformOrderPayment for the order paid with it: answers what was paid then, charges nothing more", async () => {
    const response = await call(
      "PerformOrderPayment",
      payload("PerformOrderPayment", {
        InternationalDetails: { TransactionTotalPrice: 99.5, TransactionCurrencyCode: "GBP" },
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      Success: true,
      PaymentAmount: "123.73",
      PaymentCurrencyCode: "USD",
    });
  });

  it("UpdateParcelDispatch: records the parcel", async () => {
    const response = await call("UpdateParcelDispatch", payload("UpdateParcelDispatch"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ Success: true, Message: "Dispatch recorded" });
  });

  it("SendRMAInfoToMerchant: records the return", async () => {
    const response = await call("SendRMAInfoToMerchant", payload("SendRMAInfoToMerchant"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ Success: "True", Message: "RMA RMA-000317 recorded" });
  });

  it("PerformOrderPayment without a card (paid to the service, OT) is answered success", async () => {
    const response = await call(
      "PerformOrderPayment",
      payload("real-shapes/perform-order-payment-no-card", { OrderId: "GE927127001US" }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ Success: true, InternalOrderId: "M-1001" });
  });

  it("SendAdditionalRequiredDocumentsToMerchant, UpdateOrderShippingInfo, NotifyOrderRefund", async () => {
    const documents = await call(
      "SendAdditionalRequiredDocumentsToMerchant",
      payload("SendAdditionalRequiredDocumentsToMerchant"),
    );
    expect(await documents.json()).toEqual({ Success: true });
    const shipping = await call("UpdateOrderShippingInfo", payload("UpdateOrderShippingInfo"));
    expect(await shipping.json()).toEqual({ Success: true, InternalOrderId: "M-1001" });
    const refund = await call("NotifyOrderRefund", payload("NotifyOrderRefund"));
    expect(await refund.json()).toEqual({
      Success: true,
      InternalOrderId: "M-1001",
      Message: "Refund recorded",
    });
  });

  const session = { AuthToken: "demo-auth-token", SessionId: "demo-session" };

  it("the gift card: validated, redeemed and refunded, its balance as text", async () => {
    const validate = await call("ValidateGiftCard", payload("ValidateGiftCard", session));
    expect(await validate.json()).toEqual({
      Success: true,
      IsValid: true,
      Balance: "100.00",
      CurrencyCode: "USD",
    });
    const redeem = await call("RedeemGiftCard", payload("RedeemGiftCard", session));
    expect(await redeem.json()).toEqual({ Success: true, Balance: "75.00", CurrencyCode: "USD" });
    const refund = await call("RefundGiftCard", payload("RefundGiftCard", session));
    expect(await refund.json()).toEqual({ Success: true, Balance: "85.00", CurrencyCode: "USD" });
    const voucher = await call("ValidateVoucher", payload("ValidateVoucher", session));
    expect(await voucher.json()).toMatchObject({ Success: true, IsValid: true, Balance: "25.00" });
  });

  it("a gift-card call with an unknown shopper session is refused with 401", async () => {
    const response = await call(
      "ValidateGiftCard",
      payload("ValidateGiftCard", { ...session, SessionId: "someone-else" }),
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(GIFT_CARD_UNAUTHORIZED);
  });

  it("answers an unknown order with the merchant's failure, but keeps a status that came before its order", async () => {
    const response = await call(
      "UpdateOrderShippingInfo",
      payload("UpdateOrderShippingInfo", { OrderId: "NOPE" }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      Success: false,
      ErrorCode: "ORDER_NOT_FOUND",
      Message: "Unknown order",
      Description: "No order NOPE",
    });
    // UpdateOrderStatus is never retried (001 §4.3): refusing it would lose it (review sequence-1).
    const early = await call(
      "UpdateOrderStatus",
      payload("UpdateOrderStatus", { OrderId: "NOT-YET" }),
    );
    expect(early.status).toBe(200);
    expect(await early.json()).toEqual({ Success: true });
  });

  it("refuses a forged token and another merchant's GUID with 401", async () => {
    const forged = await send()(
      "/crossborder/SendOrderToMerchant",
      signedPost(await keys().signWithStrangerKey(), payload("SendOrderToMerchant")),
    );
    expect(forged.status).toBe(401);
    const otherMerchant = await call(
      "SendOrderToMerchant",
      payload("SendOrderToMerchant", { MerchantGUID: "00000000-0000-0000-0000-000000000000" }),
    );
    expect(otherMerchant.status).toBe(401);
    expect(await otherMerchant.json()).toEqual({
      Success: false,
      ErrorCode: "UNAUTHORIZED",
      Message: "Unauthorized",
      Description: "",
    });
  });
}
