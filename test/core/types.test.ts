// The public types a merchant writes against (tsc checks this file; vitest runs the few runtime
// assertions). A type that drifts from what the factories accept fails to compile here.
import { describe, expect, expectTypeOf, it } from "vitest";
// @ts-expect-error RequestInfo was renamed CallbackRequestInfo
import type { RequestInfo as OldRequestInfo } from "../../src/index.js";
import {
  type CallbackFunction,
  type CallbackHandlers,
  type CallbackRequestInfo,
  type CheckoutCartInfo,
  createCallbackRouter,
  type createGetCheckoutCartInfoHandler,
  type createPerformOrderPaymentHandler,
  type createRemoveRestrictedProductsHandler,
  type createSendAdditionalRequiredDocumentsToMerchantHandler,
  type createSendOrderToMerchantHandler,
  type createSendRMAInfoToMerchantHandler,
  type createUpdateOrderStatusHandler,
  type createUpdateParcelDispatchHandler,
  type GetCheckoutCartInfoFunction,
  type GetCheckoutCartInfoRequest,
  type PerformOrderPaymentFunction,
  type PerformOrderPaymentRequest,
  type PerformOrderPaymentResult,
  type RemoveRestrictedProductsFunction,
  type SendAdditionalRequiredDocumentsToMerchantFunction,
  type SendOrderToMerchantFunction,
  type SendOrderToMerchantRequest,
  type SendOrderToMerchantResult,
  type SendRMAInfoToMerchantFunction,
  type UpdateOrderStatusFunction,
  type UpdateParcelDispatchFunction,
} from "../../src/index.js";
import { post } from "./helpers.js";

describe("public types", () => {
  it("each callback's function type is exactly what its factory accepts", () => {
    expectTypeOf<
      Parameters<typeof createSendOrderToMerchantHandler>[0]
    >().toEqualTypeOf<SendOrderToMerchantFunction>();
    expectTypeOf<
      Parameters<typeof createUpdateOrderStatusHandler>[0]
    >().toEqualTypeOf<UpdateOrderStatusFunction>();
    expectTypeOf<
      Parameters<typeof createPerformOrderPaymentHandler>[0]
    >().toEqualTypeOf<PerformOrderPaymentFunction>();
    expectTypeOf<
      Parameters<typeof createSendRMAInfoToMerchantHandler>[0]
    >().toEqualTypeOf<SendRMAInfoToMerchantFunction>();
    expectTypeOf<
      Parameters<typeof createUpdateParcelDispatchHandler>[0]
    >().toEqualTypeOf<UpdateParcelDispatchFunction>();
    expectTypeOf<
      Parameters<typeof createRemoveRestrictedProductsHandler>[0]
    >().toEqualTypeOf<RemoveRestrictedProductsFunction>();
    expectTypeOf<
      Parameters<typeof createSendAdditionalRequiredDocumentsToMerchantHandler>[0]
    >().toEqualTypeOf<SendAdditionalRequiredDocumentsToMerchantFunction>();
    expectTypeOf<
      Parameters<typeof createGetCheckoutCartInfoHandler>[0]
    >().toEqualTypeOf<GetCheckoutCartInfoFunction>();
    expectTypeOf<SendOrderToMerchantFunction>().toEqualTypeOf<
      CallbackFunction<SendOrderToMerchantRequest, SendOrderToMerchantResult>
    >();
    expectTypeOf<PerformOrderPaymentFunction>().toEqualTypeOf<
      CallbackFunction<PerformOrderPaymentRequest, PerformOrderPaymentResult>
    >();
    expectTypeOf<GetCheckoutCartInfoFunction>().toEqualTypeOf<
      CallbackFunction<GetCheckoutCartInfoRequest, CheckoutCartInfo>
    >();
  });

  it("the required result fields are required in the types", () => {
    expectTypeOf<SendOrderToMerchantResult["InternalOrderId"]>().toEqualTypeOf<string | number>();
    expectTypeOf<PerformOrderPaymentResult["PaymentAmount"]>().toEqualTypeOf<string | number>();
    expectTypeOf<PerformOrderPaymentResult["PaymentCurrencyCode"]>().toEqualTypeOf<string>();
    // @ts-expect-error InternalOrderId is required
    const noId: SendOrderToMerchantResult = { OrderId: "M-1" };
    // @ts-expect-error PaymentCurrencyCode is required
    const noCurrency: PerformOrderPaymentResult = { PaymentAmount: 10 };
    expect([noId, noCurrency]).toHaveLength(2);
  });

  it("standalone functions typed with the exported types plug into the router", async () => {
    const saveOrder: SendOrderToMerchantFunction = async (order, context) => {
      const request: CallbackRequestInfo = context.request;
      return { InternalOrderId: `M-${order.OrderId}`, Message: request.method };
    };
    const charge: PerformOrderPaymentFunction = (payment) => ({
      InternalOrderId: payment.OrderId,
      PaymentAmount: "10.00",
      PaymentCurrencyCode: "EUR",
    });
    const cart: GetCheckoutCartInfoFunction = (query) => ({
      productsList: [],
      cartId: query.merchantCartToken,
    });
    const handlers: CallbackHandlers = {
      SendOrderToMerchant: saveOrder,
      PerformOrderPayment: charge,
      GetCheckoutCartInfo: cart,
    };
    const router = createCallbackRouter({ auth: false, onError: () => undefined, handlers });
    const order = { OrderId: "GE1", Products: [] };
    const response = await router.handle(post(JSON.stringify(order), {}, "/SendOrderToMerchant"));
    expect(JSON.parse(response.body)).toStrictEqual({
      Success: true,
      InternalOrderId: "M-GE1",
      Message: "POST",
    });
  });

  it("RequestInfo is now CallbackRequestInfo", () => {
    expectTypeOf<CallbackRequestInfo["header"]>().toEqualTypeOf<
      (name: string) => string | undefined
    >();
    expectTypeOf<CallbackRequestInfo["url"]>().toEqualTypeOf<URL>();
    // The old name is gone from the package: its import fails, so it is `any` here.
    expectTypeOf<OldRequestInfo>().toBeAny();
  });
});
