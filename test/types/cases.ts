// A merchant's file with misspelt fields, one per line, and the same file spelt right: shared by
// test/types/compile.test.ts (against the sources) and test/package/types.test.ts (against dist/).

export const HEADER = `import {
  createAuth,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createPerformOrderPaymentHandler,
  createRedeemGiftCardHandler,
  createSendOrderToMerchantHandler,
  createUpdateOrderStatusHandler,
  createValidateGiftCardHandler,
} from "crossborder-callbacks";
import { ServiceNetworkError } from "crossborder-callbacks/service";

const options = { auth: false } as const;
// A merchant's own subclass of a service error (a test double, a wrapper of its own).
export class FakeNetworkError extends ServiceNetworkError { readonly attempt = 1; }
declare const caught: unknown;
const jwt = { environment: "test", keys: { test: "PEM" } } as const;
// A database row or a parsed body: its fields are \`any\`.
declare const row: any;
`;

/** One merchant's code per line number: the misspelt form and the correct one. */
export const CASES = [
  {
    wrong: `createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderID }), options);`,
    right: `createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderId }), options);`,
    message:
      "TS2551 Property 'OrderID' does not exist on type 'SendOrderToMerchantRequest'. Did you mean 'OrderId'?",
  },
  {
    wrong: `createUpdateOrderStatusHandler((update) => void update.statusCode, options);`,
    right: `createUpdateOrderStatusHandler((update) => void update.StatusCode, options);`,
    message:
      "TS2551 Property 'statusCode' does not exist on type 'UpdateOrderStatusRequest'. Did you mean 'StatusCode'?",
  },
  {
    wrong: `createUpdateOrderStatusHandler((update) => void update.PrimaryShipping?.Adress1, options);`,
    right: `createUpdateOrderStatusHandler((update) => void update.PrimaryShipping?.Address1, options);`,
    message: "TS2551 Property 'Adress1' does not exist on type 'Address'. Did you mean 'Address1'?",
  },
  {
    wrong: `createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1", OrderID: "x" }), options);`,
    right: `createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1", OrderId: "x" }), options);`,
    message:
      "TS2322 Type 'string' is not assignable to type '\"OrderID is not a field of the SendOrderToMerchant result\"'.",
    at: "OrderID",
  },
  {
    wrong: `createUpdateOrderStatusHandler(() => ({ InternalOrderId: "M-1", StatusCod: "x" }), options);`,
    right: `createUpdateOrderStatusHandler(() => ({ InternalOrderId: "M-1", StatusCode: "x" }), options);`,
    message:
      "TS2322 Type 'string' is not assignable to type '\"StatusCod is not a field of the UpdateOrderStatus result\"'.",
    at: "StatusCod",
  },
  {
    wrong: `createPerformOrderPaymentHandler(() => ({ PaymentAmout: 10, PaymentCurrencyCode: "EUR" }), options);`,
    right: `createPerformOrderPaymentHandler(() => ({ PaymentAmount: 10, PaymentCurrencyCode: "EUR" }), options);`,
    // The misspelt field is named (review dx-2), not only the one it was meant to be.
    message:
      "TS2322 Type 'number' is not assignable to type '\"PaymentAmout is not a field of the PerformOrderPayment result\"'.",
    at: "PaymentAmout",
  },
  {
    wrong: `createValidateGiftCardHandler(async () => ({ IsValid: true, Balanse: "5.00" }), options);`,
    right: `createValidateGiftCardHandler(async () => ({ IsValid: true, Balance: "5.00" }), options);`,
    message:
      "Type 'string' is not assignable to type '\"Balanse is not a field of the ValidateGiftCard result\"'.",
  },
  {
    wrong: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCod: "SKU-1" }] }), options);`,
    right: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "SKU-1" }] }), options);`,
    message:
      "TS2322 Type '\"SKU-1\"' is not assignable to type '\"ProductCod is not a field of productsList[] in the GetCheckoutCartInfo result\"'.",
    at: "ProductCod",
  },
  {
    wrong: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: async () => ({ InternalOrderId: "1", OrderID: "x" }) } });`,
    right: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: async () => ({ InternalOrderId: "1", OrderId: "x" }) } });`,
    message:
      "Type 'string' is not assignable to type '\"OrderID is not a field of the SendOrderToMerchant result\"'.",
  },
  {
    // A misspelt field whose value is \`any\` (a database row) is refused too: \`any\` is
    // assignable to every type but \`never\` (second reading of fix-types, S2).
    wrong: `createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderId, OrderID: row.id }), options);`,
    right: `createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderId, OrderId: row.id }), options);`,
    message: "TS2322 Type 'any' is not assignable to type 'never'.",
    at: "OrderID",
  },
  {
    wrong: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "A", ListPrise: row.price }] }), options);`,
    right: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "A", ListPrice: row.price }] }), options);`,
    message: "TS2322 Type 'any' is not assignable to type 'never'.",
    at: "ListPrise",
  },
  {
    wrong: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: (order) => ({ InternalOrderId: order.OrderId, OrderID: JSON.parse("1") }) } });`,
    right: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: (order) => ({ InternalOrderId: order.OrderId, OrderId: JSON.parse("1") }) } });`,
    // \`any\` is assignable to any type but \`never\`: the message cannot name the field, the
    // error points at it (review dx-2; before, the entry's key, in seven lines).
    message: "TS2322 Type 'any' is not assignable to type 'never'.",
    at: "OrderID",
  },
  {
    // Readonly lists are taken in a cart's answer, and still checked (second reading S3).
    wrong: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "A", ListPrise: 1 }] as const }), options);`,
    right: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "A", ListPrice: 1 }] as const }), options);`,
    message: "ListPrise",
  },
  {
    wrong: `createCallbackRouter({ ...options, handlers: { GetCheckoutCartInfo: () => ({ productList: [] as const }) } });`,
    right: `createCallbackRouter({ ...options, handlers: { GetCheckoutCartInfo: () => ({ productsList: [] as const }) } });`,
    message: "productList is not a field of the GetCheckoutCartInfo result",
    at: "productList",
  },
  {
    // A redemption cannot answer "not valid": IsValid false is always a 500 (review-types T1).
    wrong: `createRedeemGiftCardHandler((card) => (card.CardFields ? { Balance: "1" } : { IsValid: false }), options);`,
    right: `createRedeemGiftCardHandler((card) => (card.CardFields ? { Balance: "1" } : { IsValid: true }), options);`,
    message: "IsValid: false;",
  },
  {
    // A router entry's result is widened (IsValid: boolean, which a widened true is too): only a
    // literal false is refused there, so \`as const\` (second reading S1).
    wrong: `createCallbackRouter({ ...options, handlers: { RefundGiftCard: () => ({ IsValid: false as const }) } });`,
    right: `createCallbackRouter({ ...options, handlers: { RefundGiftCard: () => ({ IsValid: true }) } });`,
    message: "TS2322 Type 'false' is not assignable to type 'true'.",
    at: "IsValid",
  },
  {
    // A router entry given as undefined compiles (T4), and a function beside it is still checked.
    wrong: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: process.env.X ? () => ({ InternalOrderId: "1", OrderID: "x" }) : undefined } });`,
    right: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: process.env.X ? () => ({ InternalOrderId: "1", OrderId: "x" }) : undefined } });`,
    message: "OrderID",
  },
  {
    // createAuth refuses a top-level merchantGuid given as undefined (an unset variable would
    // switch the check off): its type says so too. Under callbacks, undefined still inherits.
    wrong: `void createAuth({ jwt, merchantGuid: process.env.MERCHANT_GUID, callbacks: { SendOrderToMerchant: { merchantGuid: undefined } } });`,
    right: `void createAuth({ jwt, merchantGuid: "7c9e6679-7425-40de-944b-e07fc1f90ae7", callbacks: { SendOrderToMerchant: { merchantGuid: undefined } } });`,
    message:
      "merchantGuid: string | undefined; callbacks: { SendOrderToMerchant: { merchantGuid: undefined; }; }; }' is not assignable to parameter of type 'AuthConfig' with 'exactOptionalPropertyTypes: true'.",
  },
  {
    // `instanceof` a merchant's subclass narrows to that subclass, not to `never` (its misspelt
    // member is named on it): the typed `Symbol.hasInstance` the service errors inherit narrows
    // to the union of the library's classes only for ServiceError itself (second-left-1).
    wrong: `export const attempt = caught instanceof FakeNetworkError ? caught.attemp : 0;`,
    right: `export const attempt = caught instanceof FakeNetworkError ? caught.attempt : 0;`,
    message:
      "TS2551 Property 'attemp' does not exist on type 'FakeNetworkError'. Did you mean 'attempt'?",
  },
] as const;

/**
 * A merchant's product-country sync, as README §recentProductCountries invites: a `delete`'s keys
 * are strings (it is yielded only when both are present), so they reach a `string` parameter. And
 * a fetch handler whose `remoteAddress` is a function or `null`, as README's fetch section allows.
 */
export const SYNC = `import type { IncomingMessage } from "node:http";
import { createCallbackRouter } from "crossborder-callbacks";
import { toExpress } from "crossborder-callbacks/express";
import { toFetch } from "crossborder-callbacks/fetch";
import { toKoa } from "crossborder-callbacks/koa";
import { toNodeListener } from "crossborder-callbacks/node";
import { createServiceClient, type ProductCountry } from "crossborder-callbacks/service";

declare const db: {
  remove(country: string, product: string): Promise<void>;
  upsert(country: string | null | undefined, product: string | null | undefined, record: ProductCountry): Promise<void>;
};
const client = createServiceClient({ baseUrl: "https://x", merchantGuid: "g" });
const removed = new Map<string, string>();
for await (const change of client.recentProductCountries({ requestId: 0 })) {
  const { record } = change;
  if (change.action === "delete") {
    await db.remove(change.record.CountryCode, change.record.ProductCode);
    removed.set(change.record.CountryCode, change.record.ProductCode);
  } else await db.upsert(record.CountryCode, record.ProductCode, record);
}

// README's "left out or \`null\`: no address" for toFetch's remoteAddress (final reading 3).
declare const behindCdn: boolean;
export const handler = toFetch(createCallbackRouter({ auth: false, handlers: {} }), {
  remoteAddress: behindCdn ? (request: Request) => request.headers.get("CF-Connecting-IP") : null,
});

// The same option on the Node adapters (review DEPLOY-2): a function of the Node request, or null.
declare const onUnixSocket: boolean;
const nodeRouter = createCallbackRouter({ auth: false, handlers: {} });
export const listener = toNodeListener(nodeRouter, {
  remoteAddress: onUnixSocket ? () => "127.0.0.1" : null,
});
export const middleware = toExpress(nodeRouter, {
  remoteAddress: (req: IncomingMessage) => req.socket.remoteAddress ?? "127.0.0.1",
});
export const koa = toKoa(nodeRouter, { remoteAddress: (req) => req.socket?.remoteAddress });
// node:http and Koa hand the function the Node request: a richer type of the caller's choosing
// (Express's, whose \`ip\` a plain Node request lacks) is refused (review second-deploy-2).
interface ExpressLikeRequest extends IncomingMessage { readonly ip: string }
// @ts-expect-error the listener passes node:http's request, not Express's
toNodeListener(nodeRouter, { remoteAddress: (req: ExpressLikeRequest) => req.ip });
// @ts-expect-error Koa's middleware passes ctx.req, not Express's request
toKoa(nodeRouter, { remoteAddress: (req: ExpressLikeRequest) => req.ip });
`;

/**
 * What the run time takes and a merchant's strict project (exactOptionalPropertyTypes) must
 * compile (review-types T2-T5, T7): readonly lists in service requests and in a cart, \`null\` for
 * "not set" in the client's options, \`undefined\` for a router entry and a CallbackError's
 * status, and \`kind\` narrowing a ServiceError to its class.
 */
export const STRICT = `import {
  AuthenticationError,
  CallbackError,
  type CartProduct,
  type CheckoutCartInfo,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createRedeemGiftCardHandler,
  type GetCheckoutCartInfoFunction,
  createRefundGiftCardHandler,
  createUpdateOrderStatusHandler,
  hasCardToCharge,
  IdempotencyStoreError,
  type RedeemGiftCardRequest,
  type SendOrderToMerchantRequest,
} from "crossborder-callbacks";
import { createServiceClient, isServiceError, ServiceConflictError, ServiceError, ServiceRateLimitError, ServiceTimeoutError, type ServiceValidationError, ServiceValidationError as ServiceValidationErrorClass } from "crossborder-callbacks/service";

const options = { auth: false } as const;
const client = createServiceClient({ baseUrl: "https://x", merchantGuid: "g", merchantGuidIn: null,
  hooks: { onRequest: null, onResponse: null, onRetry: null, includeBodies: null } });
const ids = ["GE-1", "GE-2"] as const;
const parcels: readonly string[] = ["P-1"];
await client.dispatchConsolidatedShipment({ OrderIds: ids });
await client.dispatchConsolidatedShipment({ OrderIds: parcels });
// vatCategoryCountries takes readonly lists too, and \`hooks: null\` means not set (second reading S4).
await client.vatCategoryCountries({ countryCode: "DE", vatCategoryCodes: parcels });
await client.vatCategoryCountries({ countryCode: "DE", vatCategoryCodes: ["A"] as const });
export const unhooked = createServiceClient({ baseUrl: "https://x", merchantGuid: "g", hooks: null });
const catalog: readonly CartProduct[] = [{ ProductCode: "A", ListPrice: 10, OrderedQuantity: 1 }];
export const cart = createGetCheckoutCartInfoHandler(() => ({ productsList: catalog }), options);
// A numeric status code of the shop's own is answered as text, silently (T7).
export const status = createUpdateOrderStatusHandler((update) => ({ StatusCode: update.OrderId.length }), options);

declare const enablePayments: boolean;
export const router = createCallbackRouter({ ...options, handlers: {
  SendOrderToMerchant: (order) => ({ InternalOrderId: order.OrderId }),
  PerformOrderPayment: enablePayments ? () => ({ PaymentAmount: 1, PaymentCurrencyCode: "EUR" }) : undefined,
} });
const refusalStatus: number | undefined = enablePayments ? 422 : undefined;
export const refusal = new CallbackError("X", "y", undefined, { status: refusalStatus });

export function retryOrIssues(error: unknown): number | ServiceValidationError["issues"] | undefined {
  if (isServiceError(error)) {
    switch (error.kind) {
      case "rate-limit": return error.retryAfterMs;
      case "validation": return error.issues;
    }
  }
  if (error instanceof ServiceRateLimitError) return error.retryAfterMs;
  return undefined;
}

// \`instanceof ServiceError\` narrows by \`kind\` as isServiceError does; each class's own
// \`instanceof\` still narrows to that class (open item 5).
export function retryAfter(error: unknown): number | undefined {
  if (error instanceof ServiceError && error.kind === "rate-limit") return error.retryAfterMs;
  if (error instanceof ServiceError) {
    switch (error.kind) {
      case "validation": return error.issues.length;
      case "rate-limit": return error.retryAfterMs;
    }
  }
  if (error instanceof ServiceValidationErrorClass) return error.issues.length;
  return undefined;
}

// hasCardToCharge narrows the details it said yes to (not null, an object): their fields are read
// without \`?.\`; a no leaves them as they were (an "OT" payment is still its details).
declare const order: SendOrderToMerchantRequest;
export const cardLastFour = hasCardToCharge(order.PaymentDetails) ? order.PaymentDetails.CardNumber?.slice(-4) : undefined;
export const method = hasCardToCharge(order.PaymentDetails) ? undefined : order.PaymentDetails?.PaymentMethodCode;
declare const raw: unknown;
export const rawCard = hasCardToCharge(raw) ? Object.keys(raw) : [];

// \`instanceof\` still narrows with the classes' own \`Symbol.hasInstance\` (the brand that holds
// across the ES module and CommonJS builds): to the class named, a subclass to itself.
export function described(error: unknown): string {
  if (error instanceof ServiceConflictError) return error.kind satisfies "conflict";
  if (error instanceof ServiceError) return error.operation;
  if (error instanceof AuthenticationError) return error.kind satisfies "unauthorized" | "header_too_large";
  if (error instanceof IdempotencyStoreError) return error.operation;
  if (error instanceof CallbackError) return error.code;
  return "";
}
// final-1: a generic helper narrowing by the class it is given returns that class's instance.
export function asError<C extends typeof ServiceError>(error: unknown, cls: C): InstanceType<C> | undefined {
  return error instanceof cls ? error : undefined;
}
export const conflictOf: ServiceConflictError | undefined = asError(new Error(), ServiceConflictError);
export function notConflict(error: ServiceConflictError | ServiceRateLimitError): number | undefined {
  return error instanceof ServiceConflictError ? undefined : error.retryAfterMs;
}
// A merchant's own subclass (a test double, a wrapper) narrows to itself, not to \`never\`; under
// it, \`instanceof ServiceError\` still narrows by \`kind\` (second-left-1).
class FakeTimeoutError extends ServiceTimeoutError { readonly attempt = 1; }
abstract class ShopServiceError extends ServiceError { abstract readonly shop: string; }
export function ownSubclasses(error: unknown): number | string | undefined {
  if (error instanceof FakeTimeoutError) return error.attempt + (error.kind satisfies "timeout").length;
  if (error instanceof ShopServiceError) return error.shop;
  if (error instanceof ServiceError && error.kind === "rate-limit") return error.retryAfterMs;
  return undefined;
}
export function ownSubclassElse(error: FakeTimeoutError | ServiceRateLimitError): number | undefined {
  return error instanceof FakeTimeoutError ? error.attempt : error.retryAfterMs;
}

// A redemption that refuses by throwing and else answers IsValid true: TypeScript widens the
// \`true\` to \`boolean\` outside an inline expression body, and that must still compile
// (second reading of fix-types, S1).
declare function cardOk(id: unknown): Promise<boolean>;
export const redeemInline = createRedeemGiftCardHandler(async (card) => {
  if (!(await cardOk(card.CardFields?.CardId))) throw new CallbackError("CARD_INVALID", "Unknown card");
  return { IsValid: true, Balance: 1 };
}, options);
async function redeem(card: RedeemGiftCardRequest) {
  if (!(await cardOk(card.CardFields?.CardId))) throw new CallbackError("CARD_INVALID", "Unknown card");
  return { IsValid: true, Balance: 1 };
}
function redeemSync(_card: RedeemGiftCardRequest) {
  return { IsValid: true, Balance: "5" };
}
export const redeemAsync = createRedeemGiftCardHandler(redeem, options);
export const redeemStandalone = createRedeemGiftCardHandler(redeemSync, options);
export const refundStandalone = createRefundGiftCardHandler(redeemSync, options);
export const cards = createCallbackRouter({ ...options, handlers: {
  RedeemGiftCard: () => ({ IsValid: true, Balance: 1 }),
  RefundGiftCard: async () => ({ IsValid: true }),
} });
export const cardsStandalone = createCallbackRouter({ ...options, handlers: { RedeemGiftCard: redeem, RefundGiftCard: redeemSync } });

// A cart built up and pushed into stays a mutable CheckoutCartInfo; a frozen catalog, an
// \`as const\` list and a readonly list are taken by the factory, the function type and the
// router all the same (second reading S3).
declare const rows: { sku: string; price: number }[];
const built: CheckoutCartInfo = { productsList: [], currencyCode: "EUR" };
for (const r of rows) built.productsList.push({ ProductCode: r.sku, ListPrice: r.price, OrderedQuantity: 1 });
built.productsList.sort((a, b) => (a.ListPrice ?? 0) - (b.ListPrice ?? 0));
(built.discountsList ??= []).push({ CouponCode: "X" });
function addLine(target: CheckoutCartInfo, product: CartProduct) { target.productsList.push(product); }
addLine(built, { ProductCode: "B" });
const lines: CartProduct[] = built.productsList;
export const builtCart = createGetCheckoutCartInfoHandler(async () => built, options);
const frozen: readonly CartProduct[] = Object.freeze([{ ProductCode: "A", ListPrice: 10 }]);
export const frozenCart = createGetCheckoutCartInfoHandler(async () => ({ productsList: frozen, discountsList: [] as const }), options);
export const constCart = createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "A", Attributes: [{ AttributeCode: "c" }] }] as const }), options);
const cartFunction: GetCheckoutCartInfoFunction = () => ({ productsList: frozen, urlParameters: [] as const });
export const cartRouter = createCallbackRouter({ ...options, handlers: {
  GetCheckoutCartInfo: () => ({ productsList: frozen }),
} });
export const cartFunctionRouter = createCallbackRouter({ ...options, handlers: { GetCheckoutCartInfo: cartFunction } });
export const cartFunctionHandler = createGetCheckoutCartInfoHandler(cartFunction, options);
void lines;
`;

export const FIRST_LINE = HEADER.split("\n").length;

export function file(form: "wrong" | "right"): string {
  return `${HEADER}${CASES.map((c) => c[form]).join("\n")}\n`;
}
