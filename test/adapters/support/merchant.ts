/**
 * The merchant every adapter test serves: a router over SendOrderToMerchant and
 * GetCheckoutCartInfo with JWT + merchant GUID authentication. Web APIs only: it is also bundled
 * into the Bun, Deno and workerd servers.
 */
import { createAuth } from "../../../src/auth/index.js";
import {
  type CallbackFailure,
  type CallbackRouter,
  type CheckoutCartInfo,
  createCallbackRouter,
} from "../../../src/index.js";

/** The GUID of the SendOrderToMerchant fixture. */
export const MERCHANT_GUID = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";

/** The cart the merchant answers for a token, country and currency. */
export function cartFor(
  token: string,
  countryCode: string,
  currencyCode: string,
): CheckoutCartInfo {
  return {
    productsList: [
      {
        ProductCode: "TSHIRT-BLK-M",
        CartItemId: "1",
        Name: "Organic Cotton T-Shirt",
        ListPrice: 29,
        SalePrice: 29,
        OrderedQuantity: 2,
      },
    ],
    cartId: token,
    countryCode,
    currencyCode,
  };
}

export interface TestRouterOptions {
  /** The service's public key (SPKI PEM). */
  readonly publicKey: string;
  readonly basePath?: string;
  readonly bodyTimeoutMs?: number;
  /** Default: failures are dropped. */
  readonly onError?: (failure: CallbackFailure) => void;
  /**
   * Sees each order SendOrderToMerchant receives, as the merchant's function does, with the
   * request's headers (a runtime server logs it when the test asks, to show what its console prints).
   */
  readonly onOrder?: (order: unknown, header: (name: string) => string | undefined) => void;
}

export function createTestRouter(options: TestRouterOptions): CallbackRouter {
  return createCallbackRouter({
    basePath: options.basePath ?? "/crossborder",
    auth: createAuth({
      jwt: { environment: "test", keys: { test: options.publicKey } },
      merchantGuid: MERCHANT_GUID,
    }),
    ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
    onError: options.onError ?? (() => undefined),
    handlers: {
      SendOrderToMerchant: (order, context) => {
        options.onOrder?.(order, (name) => context.request.header(name));
        return {
          InternalOrderId: `M-${order.OrderId}`,
          OrderId: `SHOP-${order.CartId}`,
          // Shows that the adapter passed the peer address on.
          Message: `from ${context.request.remoteAddress ?? "unknown"}`,
        };
      },
      GetCheckoutCartInfo: (query) =>
        cartFor(query.merchantCartToken ?? "", query.countryCode ?? "", query.currencyCode ?? ""),
    },
  });
}
