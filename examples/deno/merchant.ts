// The same file in every example (written from examples/express/merchant.ts by scripts/sync-examples.ts).
/**
 * The merchant side of all fourteen callbacks, over an in-memory store. Every example carries its
 * own copy of this file; replace the store with your database.
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
  extraField,
  type GiftCardRequest,
  hasCardToCharge,
  type IdempotencyOptions,
  type InternationalDetails,
  isOrderStatus,
  type OrderRefund,
  paymentDetailsOf,
  splitCartToken,
  type VerifySession,
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
  /** What was paid, once it was: a repeat of the payment answers this and charges nothing. */
  paid: Charge | undefined;
  /** The order's total in the shopper's currency; undefined when the order did not state it. */
  readonly charge: Charge | undefined;
  /** The parcels dispatched, by parcel code: each recorded once, however often it is sent. */
  readonly parcels: string[];
  /** The returns, by RMANumber (unique per return, spec 4.5): each recorded once. */
  readonly returns: string[];
  /** Refunds as the service states them: amounts kept as the exact text sent ("170.1000"). */
  readonly refunds: {
    readonly refundId: string;
    readonly amount: string;
    readonly currency: string;
  }[];
  shippingMethod: string | undefined;
  trackingNumber: string | undefined;
  documentsReceived: boolean;
}

/** A gift card or voucher the store issued: its balance in cents, never a float. */
interface StoredCard {
  balanceCents: number;
  readonly currencyCode: string;
}

/** Cents as the text the service reads ("25.00"). */
function amountText(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** An amount as text ("25.00") or a number, in cents; undefined when it is not an amount. */
function cents(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^\d+(\.\d+)?$/.test(text.trim())) return undefined;
  return Math.round(Number(text) * 100);
}

/** The transaction total of an order (the shopper's currency), when it states one. */
function chargeOf(details: InternationalDetails | null | undefined): Charge | undefined {
  const amount = details?.TransactionTotalPrice ?? details?.TotalPrice;
  const currencyCode = details?.TransactionCurrencyCode ?? details?.CurrencyCode;
  return typeof amount === "number" && currencyCode ? { amount, currencyCode } : undefined;
}

/**
 * The order's payment, made once: the first call charges the card (unless the service collected
 * the money itself); a repeat — the same order delivered again, or PerformOrderPayment after
 * SendOrderToMerchant — charges nothing and answers what was paid.
 */
function payOnce(store: MemoryStore, order: StoredOrder, charge: Charge, details: unknown): Charge {
  if (order.paid) return order.paid;
  // Charge the card here with your payment provider (charge.amount in charge.currencyCode), with
  // the order id as its idempotency key; never store PaymentDetails.
  // No card to charge: the service collected the money itself ("OT"), or sent no card number.
  if (hasCardToCharge(details)) store.charges.push({ orderId: order.orderId, charge });
  order.paid = charge;
  return charge;
}

/** What the merchant keeps. Card data (PaymentDetails) is never stored. */
export class MemoryStore {
  readonly carts = new Map<string, CheckoutCartInfo>();
  readonly orders = new Map<string, StoredOrder>();
  /**
   * Statuses that arrived before their order, by OrderId (UpdateOrderStatus can overtake
   * SendOrderToMerchant, and the service does not retry it: 001 §4.3): applied when the order
   * arrives. A cancellation kept here stays kept when another status follows it. At most
   * `maxPendingStatuses`, the oldest dropped first; in your database, keep each with the time it
   * arrived and drop it after the longest delay you accept for an order to arrive.
   */
  readonly pendingStatuses = new Map<string, string>();
  /** How many statuses for orders not arrived yet are kept (default 1000). */
  readonly maxPendingStatuses: number;
  /** Gift cards and vouchers by code. */
  readonly cards = new Map<string, StoredCard>();
  /** Shopper sessions: the session token handed to the service at checkout → its session id. */
  readonly sessions = new Map<string, string>();
  /**
   * The last gift-card redemption or refund applied to each card of an order (or cart), by
   * `cardOperationScope`, with its answer: the same one delivered again is answered as the first
   * time, not applied twice.
   */
  readonly cardOperations = new Map<
    string,
    { readonly operation: string; readonly answer: GiftCardAnswer }
  >();
  /** The cards charged, in order: where your payment provider's calls would go. */
  readonly charges: { readonly orderId: string; readonly charge: Charge }[] = [];
  #sequence = 1000;

  constructor(options: { readonly maxPendingStatuses?: number } = {}) {
    this.maxPendingStatuses = options.maxPendingStatuses ?? 1000;
    // A gift card, a voucher and a shopper session to try the gift-card callbacks with.
    this.cards.set("GC-7342-1109-5561", { balanceCents: 10_000, currencyCode: "USD" });
    this.cards.set("SPRING25", { balanceCents: 2_500, currencyCode: "USD" });
    this.sessions.set("demo-auth-token", "demo-session");
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

  /**
   * Keeps a status for an order not arrived yet: a cancellation kept is not replaced, and past
   * `maxPendingStatuses` the oldest status is dropped.
   */
  keepPendingStatus(orderId: string, status: string): void {
    const kept = this.pendingStatuses.get(orderId);
    this.pendingStatuses.delete(orderId);
    this.pendingStatuses.set(orderId, finalStatus(kept, status));
    for (const oldest of this.pendingStatuses.keys()) {
      if (this.pendingStatuses.size <= this.maxPendingStatuses) break;
      this.pendingStatuses.delete(oldest);
    }
  }

  /** The card a gift-card or voucher request names. */
  card(request: GiftCardRequest): StoredCard {
    const code = request.CardFields?.CardId;
    const card = code === undefined || code === null ? undefined : this.cards.get(String(code));
    if (!card) throw new CallbackError("CARD_NOT_FOUND", "Unknown gift card or voucher");
    return card;
  }

  /** Checks the shopper's session the service passes along (AuthToken, SessionId). */
  readonly verifySession: VerifySession = (authToken, sessionId) =>
    authToken !== undefined && this.sessions.get(authToken) === sessionId;
}

/**
 * The status an order takes when `next` follows `current`: a cancellation is final (an order the
 * service cancelled is never charged or fulfilled, whatever status arrives after it, late or
 * out of order); any other status replaces the current one.
 */
function finalStatus(current: string | undefined, next: string): string {
  return current !== undefined && isOrderStatus(current, "canceled") ? current : next;
}

/** What RedeemGiftCard and RefundGiftCard answer. */
interface GiftCardAnswer {
  readonly Balance: string;
  readonly CurrencyCode: string;
}

/**
 * Where a redemption or refund applies: the order (or, before one, the service's cart token) and
 * the card. The service can deliver the same call again (an update, a manual retry), so a call
 * equal to the last one applied there (same kind and amount) is that call again, answered as the
 * first time, as an order is kept by its OrderId. A call that differs is applied: redeem 25,
 * refund 25, redeem 25 debits twice. Two equal calls in a row (a second redemption, or a second
 * refund, of the same amount) are one here, and a repeat delivered after another call is applied
 * again: if your payloads carry a transaction or refund reference (read with `extraField`), key
 * the calls by it instead.
 */
function cardOperationScope(request: GiftCardRequest): string {
  const scope = extraField(request, "OrderId") ?? request.CartToken ?? "";
  return JSON.stringify([scope, request.CardFields?.CardId ?? ""]);
}

/** Applies a redemption or refund once; a repeat of the last one gets its answer back. */
function applyCardOnce(
  store: MemoryStore,
  kind: "redeem" | "refund",
  request: GiftCardRequest,
  apply: () => GiftCardAnswer,
): GiftCardAnswer {
  const scope = cardOperationScope(request);
  const operation = JSON.stringify([kind, extraField(request, "Amount")]);
  const last = store.cardOperations.get(scope);
  if (last?.operation === operation) return last.answer;
  const answer = apply();
  store.cardOperations.set(scope, { operation, answer });
  return answer;
}

/** The amount a redeem or refund names: its own field names are not documented. */
function requestedCents(request: GiftCardRequest): number {
  const amount = cents(extraField(request, "Amount"));
  if (amount === undefined) throw new CallbackError("AMOUNT_MISSING", "No amount to apply");
  return amount;
}

/** The fourteen callbacks. Each receives a validated, decoded payload. */
export function merchantHandlers(store: MemoryStore) {
  return {
    GetCheckoutCartInfo({ merchantCartToken, countryCode, currencyCode }) {
      // Some stores send `<cartToken>-<languageId>`; this one's tokens never end in -digits.
      const { cartToken } = splitCartToken(merchantCartToken ?? "");
      const cart = store.carts.get(cartToken);
      if (!cart) throw new CallbackError("CART_NOT_FOUND", "Unknown cart");
      return { ...cart, cartId: cartToken, countryCode, currencyCode };
    },

    SendOrderToMerchant(order) {
      // The same order can arrive again (an update, a retry): answer with the same ids.
      const existing = store.orders.get(order.OrderId);
      const internalOrderId = existing?.internalOrderId ?? store.nextOrderId();
      // A status that arrived before the order (UpdateOrderStatus below) applies to it now.
      const pending = store.pendingStatuses.get(order.OrderId);
      store.pendingStatuses.delete(order.OrderId);
      // A cancellation is final, wherever it is stated: the stored status, a status kept for the
      // order, or the order's own StatusCode (its UpdateOrderStatus may have been lost: the
      // service does not retry it). Otherwise an update keeps the status UpdateOrderStatus set:
      // the order's StatusCode is taken for a new order only.
      const cancelled = [existing?.status, pending, order.StatusCode].find(
        (code) => code != null && isOrderStatus(code, "canceled"),
      );
      store.orders.set(order.OrderId, {
        internalOrderId,
        orderId: order.OrderId,
        status: cancelled ?? existing?.status ?? pending ?? order.StatusCode ?? "N/A",
        paid: existing?.paid,
        charge: chargeOf(order.InternationalDetails) ?? existing?.charge,
        parcels: existing?.parcels ?? [],
        returns: existing?.returns ?? [],
        refunds: existing?.refunds ?? [],
        shippingMethod: order.ShippingMethodCode ?? existing?.shippingMethod,
        trackingNumber: existing?.trackingNumber,
        documentsReceived: existing?.documentsReceived ?? false,
      });
      if (order.ClearCart && order.CartToken) store.carts.delete(order.CartToken);
      const answer = { InternalOrderId: internalOrderId, OrderId: internalOrderId };
      const stored = store.order(order.OrderId);
      // Cancelled by the service (maybe before the order reached you): recorded, so that later
      // callbacks find it, but never charged or fulfilled. An order that carried a card is
      // answered with what was charged (001 §4.2): nothing, `PaymentAmount` 0 in its currency.
      if (isOrderStatus(stored.status, "canceled") && !stored.paid) {
        const cancelled = {
          ...answer,
          StatusCode: stored.status,
          Message: "Order cancelled: not charged",
        };
        const currencyCode = stored.charge?.currencyCode;
        if (!hasCardToCharge(paymentDetailsOf(order)) || !currencyCode) return cancelled;
        return { ...cancelled, PaymentAmount: 0, PaymentCurrencyCode: currencyCode };
      }
      // With PaymentDetails in the order, the payment is made now (spec 4.2), once, and the
      // answer says what was charged.
      // The key in any letter case, as the library protects it.
      const details = paymentDetailsOf(order);
      if (!details || !stored.charge) return answer;
      const paid = payOnce(store, stored, stored.charge, details);
      return { ...answer, PaymentAmount: paid.amount, PaymentCurrencyCode: paid.currencyCode };
    },

    UpdateOrderStatus(update) {
      // Answered success, the same whether the order has arrived or not: support's manual retry
      // of a status, after its order arrived, gets the answer the first delivery got.
      const order = store.orders.get(update.OrderId);
      if (!order) {
        // The status overtook its order (the order may arrive late: an update, a manual retry).
        // The service does not retry UpdateOrderStatus (001 §4.3): a refusal would lose the
        // status, a cancellation included. Keep it for the order, and answer success.
        store.keepPendingStatus(update.OrderId, update.StatusCode);
        return;
      }
      // A cancellation is final; any other status replaces the current one.
      order.status = finalStatus(order.status, update.StatusCode);
    },

    PerformOrderPayment(payment) {
      const order = store.order(payment.OrderId);
      if (isOrderStatus(order.status, "canceled") && !order.paid) {
        // Never charge an order the service cancelled; a paid one is answered what was paid.
        throw new CallbackError("ORDER_CANCELLED", "The order was cancelled", order.orderId);
      }
      // The amount: the payment's own totals when it carries them, else the order's.
      const charge = chargeOf(payment.InternationalDetails) ?? order.charge;
      if (!charge && !order.paid) {
        if (!hasCardToCharge(paymentDetailsOf(payment))) {
          // Collected by the service, amount not stated: nothing to charge, nothing to report.
          return {
            InternalOrderId: order.internalOrderId,
            PaymentAmount: 0,
            PaymentCurrencyCode: "USD",
          };
        }
        throw new CallbackError("AMOUNT_UNKNOWN", "No amount to charge", `Order ${order.orderId}`);
      }
      const paid = payOnce(
        store,
        order,
        order.paid ?? (charge as Charge),
        paymentDetailsOf(payment),
      );
      return {
        InternalOrderId: order.internalOrderId,
        OrderId: order.internalOrderId,
        // What was actually charged: the service checks it against the order.
        PaymentAmount: paid.amount,
        PaymentCurrencyCode: paid.currencyCode,
      };
    },

    SendRMAInfoToMerchant(rma) {
      // A return is known by its RMANumber: the same return delivered again is recorded once
      // (with or without an idempotency store) and answered as the first time.
      const { returns } = store.order(rma.OrderId);
      if (!returns.includes(rma.RMANumber)) returns.push(rma.RMANumber);
      return { Message: `RMA ${rma.RMANumber} recorded` };
    },

    UpdateParcelDispatch(dispatch) {
      // A parcel is known by its code: a dispatch sent again (or updated) is recorded once.
      const parcel = dispatch.DispatchedParcel;
      const code = parcel.Code ?? parcel.ParcelTracking?.ParcelCode ?? "parcel";
      const { parcels } = store.order(dispatch.OrderId);
      if (!parcels.includes(code)) parcels.push(code);
      return { Message: "Dispatch recorded" };
    },

    SendAdditionalRequiredDocumentsToMerchant(documents) {
      // The payload is not specified: every field is unknown until checked.
      const orderId = extraField(documents, "OrderId");
      if (typeof orderId === "string") store.order(orderId).documentsReceived = true;
    },

    UpdateOrderShippingInfo(update) {
      const order = store.order(update.OrderId);
      order.shippingMethod = update.ShippingMethodCode ?? order.shippingMethod;
      order.trackingNumber =
        update.InternationalDetails?.OrderTrackingNumber ?? order.trackingNumber;
      return { InternalOrderId: order.internalOrderId };
    },

    NotifyOrderRefund(refund) {
      const order = store.order(refund.OrderId);
      // A refund is known by its RefundID, or (null or blank) by its place in the list.
      const record = (entry: OrderRefund, fallbackId: string) => {
        const refundId = entry.RefundID?.trim() || fallbackId;
        const recorded = {
          refundId,
          // Kept as the exact text: never turned into a float.
          amount: entry.TotalRefundAmount ?? "0",
          currency: entry.CurrencyCode ?? "",
        };
        const at = order.refunds.findIndex((r) => r.refundId === refundId);
        if (at === -1) order.refunds.push(recorded);
        else order.refunds[at] = recorded;
      };
      if (Array.isArray(refund.Refunds)) {
        // The order's refund details: each refund listed is recorded or updated; a refund that an
        // older notice, arriving late, does not list yet is kept.
        for (const [index, entry] of refund.Refunds.entries()) record(entry, `refund-${index + 1}`);
      } else if (refund.RefundID != null || refund.TotalRefundAmount != null) {
        // One refund's own fields at the top level.
        record(refund, `refund-${order.refunds.length + 1}`);
      }
      return { InternalOrderId: order.internalOrderId, Message: "Refund recorded" };
    },

    ValidateGiftCard(request) {
      const card = store.cards.get(String(request.CardFields?.CardId ?? ""));
      if (!card || card.balanceCents <= 0) {
        return { IsValid: false, ErrorCode: "CARD_NOT_USABLE", Message: "Unknown or empty card" };
      }
      const balance = amountText(card.balanceCents);
      return { IsValid: true, Balance: balance, CurrencyCode: card.currencyCode };
    },

    ValidateVoucher(request) {
      const voucher = store.cards.get(String(request.CardFields?.CardId ?? ""));
      if (!voucher) return { IsValid: false, ErrorCode: "VOUCHER_UNKNOWN" };
      const balance = amountText(voucher.balanceCents);
      return { IsValid: true, Balance: balance, CurrencyCode: voucher.currencyCode };
    },

    RedeemGiftCard(request) {
      // The same redemption delivered again debits nothing: it gets the first answer.
      return applyCardOnce(store, "redeem", request, () => {
        const card = store.card(request);
        const amount = requestedCents(request);
        if (amount > card.balanceCents) {
          throw new CallbackError("INSUFFICIENT_BALANCE", "The card does not cover the amount");
        }
        card.balanceCents -= amount;
        return { Balance: amountText(card.balanceCents), CurrencyCode: card.currencyCode };
      });
    },

    RefundGiftCard(request) {
      // The same refund delivered again credits nothing: it gets the first answer.
      return applyCardOnce(store, "refund", request, () => {
        const card = store.card(request);
        card.balanceCents += requestedCents(request);
        return { Balance: amountText(card.balanceCents), CurrencyCode: card.currencyCode };
      });
    },

    RemoveRestrictedProducts({ CartId, CartToken, RemovedProductCodes }) {
      // CartId is this store's own cart id (spec 4.7); CartToken is the service's SendCart
      // token, tried only when the id is not a cart here.
      const cart =
        (CartId ? store.carts.get(CartId) : undefined) ??
        (CartToken ? store.carts.get(CartToken) : undefined);
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
   * Apply each delivery of the callbacks that write (`ONCE` below) once (`withIdempotency`),
   * with these options (the store shared by your instances). Default: no deduplication.
   */
  readonly idempotency?: IdempotencyOptions<unknown> | undefined;
}

/**
 * The callbacks whose repeats must not apply twice: the order's writes, a gift card's debit and
 * credit, a refund, the documents received. Not listed: the reads (the cart, the validations),
 * and RemoveRestrictedProducts and UpdateOrderShippingInfo, which have no default key (a removal
 * or the latest shipping info applied again is harmless, and the same content again may be a
 * real change back): the store would never deduplicate them.
 */
const ONCE = [
  "SendOrderToMerchant",
  "UpdateOrderStatus",
  "PerformOrderPayment",
  "SendRMAInfoToMerchant",
  "UpdateParcelDispatch",
  "RedeemGiftCard",
  "RefundGiftCard",
  "NotifyOrderRefund",
  "SendAdditionalRequiredDocumentsToMerchant",
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

/**
 * The fourteen callbacks behind JWT + merchant GUID authentication, under one base path; the
 * gift-card and voucher callbacks also check the shopper's session.
 */
export function createMerchantRouter(
  config: MerchantConfig,
  options: MerchantRouterOptions = {},
): CallbackRouter {
  const store = options.store ?? new MemoryStore();
  return createCallbackRouter({
    basePath: options.basePath ?? "/crossborder",
    auth: createAuth({
      jwt: { environment: config.environment, keys: { [config.environment]: config.publicKey } },
      merchantGuid: config.merchantGuid,
    }),
    verifySession: store.verifySession,
    handlers: applyOnce({ ...merchantHandlers(store), ...options.handlers }, options.idempotency),
  });
}
