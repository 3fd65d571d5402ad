/**
 * The merchant side of all seven callbacks, over an in-memory store, shared by every example.
 * Copy this file next to your server and replace the store with your database.
 *
 * Configuration (environment variables):
 * - SERVICE_PUBLIC_KEY   the service's public key (PEM; `\n` escapes are accepted)
 * - SERVICE_ENVIRONMENT  `test` or `production` (which of the service's keys signs the calls)
 * - MERCHANT_GUID        your merchant GUID; every payload's MerchantGUID must match it
 */
import {
  CallbackError,
  type CallbackHandlers,
  type CallbackRouter,
  type CheckoutCartInfo,
  createAuth,
  createCallbackRouter,
  type IdempotencyOptions,
  type InternationalDetails,
  withIdempotency,
} from "crossborder-callbacks";

export interface MerchantConfig {
  readonly publicKey: string;
  readonly environment: "test" | "production";
  readonly merchantGuid: string;
}

/** Reads the configuration from environment variables; refuses to start without it. */
export function readConfig(env: Readonly<Record<string, string | undefined>>): MerchantConfig {
  const publicKey = env.SERVICE_PUBLIC_KEY;
  const environment = env.SERVICE_ENVIRONMENT ?? "test";
  const merchantGuid = env.MERCHANT_GUID;
  if (!publicKey) throw new Error("SERVICE_PUBLIC_KEY is not set (the service's public key, PEM)");
  if (!merchantGuid) throw new Error("MERCHANT_GUID is not set");
  if (environment !== "test" && environment !== "production") {
    throw new Error('SERVICE_ENVIRONMENT must be "test" or "production"');
  }
  return { publicKey, environment, merchantGuid };
}

/** What the shopper pays: the amount and its currency, as the order states them. */
interface Charge {
  readonly amount: number;
  readonly currencyCode: string;
}

interface StoredOrder {
  readonly internalOrderId: string;
  readonly orderId: string;
  status: string;
  paid: boolean;
  /** The order's total in the shopper's currency; undefined when the order did not state it. */
  readonly charge: Charge | undefined;
  readonly parcels: string[];
  readonly returns: string[];
}

/** The transaction total of an order (the shopper's currency), when it states one. */
function chargeOf(details: InternationalDetails | null | undefined): Charge | undefined {
  const amount = details?.TransactionTotalPrice ?? details?.TotalPrice;
  const currencyCode = details?.TransactionCurrencyCode ?? details?.CurrencyCode;
  return typeof amount === "number" && currencyCode ? { amount, currencyCode } : undefined;
}

/** What the merchant keeps. Card data (PaymentDetails) is never stored. */
export class MemoryStore {
  readonly carts = new Map<string, CheckoutCartInfo>();
  readonly orders = new Map<string, StoredOrder>();
  #sequence = 1000;

  constructor() {
    // One cart to try GetCheckoutCartInfo with: ?merchantCartToken=demo-cart
    this.carts.set("demo-cart", {
      productsList: [
        {
          ProductCode: "TSHIRT-BLK-M",
          CartItemId: "1",
          Name: "Organic Cotton T-Shirt",
          ListPrice: 29,
          SalePrice: 29,
          OrderedQuantity: 2,
        },
        {
          ProductCode: "MUG-WHT",
          CartItemId: "2",
          Name: "Enamel Mug",
          ListPrice: 12,
          SalePrice: 12,
          OrderedQuantity: 1,
        },
      ],
    });
  }

  nextOrderId(): string {
    this.#sequence += 1;
    return `M-${this.#sequence}`;
  }

  order(orderId: string): StoredOrder {
    const order = this.orders.get(orderId);
    if (!order) throw new CallbackError("ORDER_NOT_FOUND", "Unknown order", `No order ${orderId}`);
    return order;
  }
}

/** The seven callbacks. Each receives a validated, decoded payload. */
export function merchantHandlers(store: MemoryStore) {
  return {
    GetCheckoutCartInfo({ merchantCartToken, countryCode, currencyCode }) {
      const cart = merchantCartToken ? store.carts.get(merchantCartToken) : undefined;
      if (!cart) throw new CallbackError("CART_NOT_FOUND", "Unknown cart");
      return { ...cart, cartId: merchantCartToken, countryCode, currencyCode };
    },

    SendOrderToMerchant(order) {
      // The same order can arrive again (an update, a retry): answer with the same ids.
      const existing = store.orders.get(order.OrderId);
      const internalOrderId = existing?.internalOrderId ?? store.nextOrderId();
      store.orders.set(order.OrderId, {
        internalOrderId,
        orderId: order.OrderId,
        status: order.StatusCode ?? "N/A",
        paid: existing?.paid ?? false,
        charge: chargeOf(order.InternationalDetails) ?? existing?.charge,
        parcels: existing?.parcels ?? [],
        returns: existing?.returns ?? [],
      });
      if (order.ClearCart && order.CartToken) store.carts.delete(order.CartToken);
      return { InternalOrderId: internalOrderId, OrderId: internalOrderId };
    },

    UpdateOrderStatus(update) {
      const order = store.order(update.OrderId);
      order.status = update.StatusCode;
      return { InternalOrderId: order.internalOrderId, OrderId: order.internalOrderId };
    },

    PerformOrderPayment(payment) {
      const order = store.order(payment.OrderId);
      // The amount to charge: the payment's own totals when it carries them, else the order's.
      const charge = chargeOf(payment.InternationalDetails) ?? order.charge;
      if (!charge) {
        throw new CallbackError("AMOUNT_UNKNOWN", "No amount to charge", `Order ${order.orderId}`);
      }
      // Charge the card here with your payment provider (charge.amount in charge.currencyCode);
      // never store PaymentDetails.
      order.paid = true;
      return {
        InternalOrderId: order.internalOrderId,
        OrderId: order.internalOrderId,
        // What was actually charged: the service checks it against the order.
        PaymentAmount: charge.amount,
        PaymentCurrencyCode: charge.currencyCode,
      };
    },

    SendRMAInfoToMerchant(rma) {
      store.order(rma.OrderId).returns.push(rma.RMANumber);
      return { Message: `RMA ${rma.RMANumber} recorded` };
    },

    UpdateParcelDispatch(dispatch) {
      store.order(dispatch.OrderId).parcels.push(dispatch.DispatchedParcel.Code ?? "parcel");
      return { Message: "Dispatch recorded" };
    },

    RemoveRestrictedProducts({ CartToken, RemovedProductCodes }) {
      const cart = CartToken ? store.carts.get(CartToken) : undefined;
      if (!cart) return;
      const removed = new Set(RemovedProductCodes);
      cart.productsList = cart.productsList.filter(
        (product) => !removed.has(product.ProductCode ?? ""),
      );
    },
  } satisfies CallbackHandlers;
}

export interface MerchantRouterOptions {
  /** Where the callbacks live. Default `/crossborder` (`/crossborder/SendOrderToMerchant`, …). */
  readonly basePath?: string;
  readonly store?: MemoryStore;
  /** Your own functions in place of the demo's, callback by callback (the rest stay the demo's). */
  readonly handlers?: CallbackHandlers;
  /**
   * Apply each delivery of the order callbacks once (`withIdempotency`), with these options
   * (the store shared by your instances). Default: no deduplication.
   */
  readonly idempotency?: IdempotencyOptions<unknown>;
}

/** The callbacks whose repeats must not apply twice; a cart read or a removal is harmless. */
const ONCE = [
  "SendOrderToMerchant",
  "UpdateOrderStatus",
  "PerformOrderPayment",
  "SendRMAInfoToMerchant",
  "UpdateParcelDispatch",
] as const;

function applyOnce(handlers: CallbackHandlers, options: IdempotencyOptions<unknown> | undefined) {
  if (!options) return handlers;
  const wrapped: Record<string, unknown> = { ...handlers };
  for (const name of ONCE) {
    const fn = handlers[name];
    if (typeof fn === "function") wrapped[name] = withIdempotency(fn as never, options);
  }
  return wrapped as CallbackHandlers;
}

/** The seven callbacks behind JWT + merchant GUID authentication, under one base path. */
export function createMerchantRouter(
  config: MerchantConfig,
  options: MerchantRouterOptions = {},
): CallbackRouter {
  return createCallbackRouter({
    basePath: options.basePath ?? "/crossborder",
    auth: createAuth({
      jwt: { environment: config.environment, keys: { [config.environment]: config.publicKey } },
      merchantGuid: config.merchantGuid,
    }),
    handlers: applyOnce(
      { ...merchantHandlers(options.store ?? new MemoryStore()), ...options.handlers },
      options.idempotency,
    ),
  });
}
