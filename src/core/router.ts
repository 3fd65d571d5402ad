import { createGetCheckoutCartInfoHandler } from "../callbacks/get-checkout-cart-info.js";
import { createPerformOrderPaymentHandler } from "../callbacks/perform-order-payment.js";
import { createRemoveRestrictedProductsHandler } from "../callbacks/remove-restricted-products.js";
import { createSendAdditionalRequiredDocumentsToMerchantHandler } from "../callbacks/send-additional-required-documents-to-merchant.js";
import { createSendOrderToMerchantHandler } from "../callbacks/send-order-to-merchant.js";
import { createSendRMAInfoToMerchantHandler } from "../callbacks/send-rma-info-to-merchant.js";
import { createUpdateOrderStatusHandler } from "../callbacks/update-order-status.js";
import { createUpdateParcelDispatchHandler } from "../callbacks/update-parcel-dispatch.js";
import { discardBody } from "./body.js";
import type { CallbackFunction, CallbackHandler, HandlerOptions } from "./engine.js";
import { FAILURE_STATUS } from "./errors.js";
import { normalisePath, pathnameOf } from "./paths.js";
import { defaultOnError, notify, redactCards } from "./report.js";
import { failureResponse } from "./responses.js";
import type { CallbackEndpoint, CallbackName, CallbackRequest, CallbackResponse } from "./types.js";

const FACTORIES = {
  GetCheckoutCartInfo: createGetCheckoutCartInfoHandler,
  SendOrderToMerchant: createSendOrderToMerchantHandler,
  UpdateOrderStatus: createUpdateOrderStatusHandler,
  PerformOrderPayment: createPerformOrderPaymentHandler,
  SendRMAInfoToMerchant: createSendRMAInfoToMerchantHandler,
  UpdateParcelDispatch: createUpdateParcelDispatchHandler,
  RemoveRestrictedProducts: createRemoveRestrictedProductsHandler,
  SendAdditionalRequiredDocumentsToMerchant: createSendAdditionalRequiredDocumentsToMerchantHandler,
} as const satisfies Record<CallbackName, unknown>;

type Factories = typeof FACTORIES;

/** For each callback: the merchant's function (built with the router's options) or a handler. */
export type CallbackHandlers = {
  [K in CallbackName]?: Parameters<Factories[K]>[0] | CallbackHandler<K>;
};

export interface CallbackRouterOptions extends Omit<HandlerOptions, "auth"> {
  /** Required when any entry of `handlers` is a function: it is built with these options. */
  auth?: HandlerOptions["auth"];
  /** Prefix of every path, e.g. `/crossborder`. Default: none. */
  basePath?: string;
  /** The path of a callback under `basePath`. Default: its name (`/SendOrderToMerchant`). */
  paths?: Partial<Record<CallbackName, string>>;
  handlers: CallbackHandlers;
}

export interface CallbackRouter extends CallbackEndpoint {
  /** The full path of each mounted callback. */
  readonly routes: Readonly<Partial<Record<CallbackName, string>>>;
}

/**
 * Mounts any subset of the callbacks under one base path. Paths match case-insensitively, with
 * or without a trailing slash; other paths answer 404 (Express and Koa pass them on instead).
 */
export function createCallbackRouter(options: CallbackRouterOptions): CallbackRouter {
  const { basePath = "", paths = {}, handlers, ...handlerOptions } = options;
  const base = normalisePath(basePath);
  const table = new Map<string, CallbackEndpoint>();
  const routes: Partial<Record<CallbackName, string>> = {};
  for (const name of Object.keys(handlers) as CallbackName[]) {
    if (!Object.hasOwn(FACTORIES, name)) {
      throw new TypeError(`createCallbackRouter: unknown callback "${name}"`);
    }
    const entry = handlers[name];
    if (entry === undefined) continue;
    const handler = typeof entry === "function" ? build(name, entry, handlerOptions) : entry;
    if (handler.callback !== name) {
      throw new TypeError(
        `createCallbackRouter: the handler under "${name}" is for ${handler.callback}`,
      );
    }
    const path = `${base}${normalisePath(paths[name] ?? name)}`;
    const key = path.toLowerCase();
    if (table.has(key)) throw new TypeError(`createCallbackRouter: two callbacks at ${path}`);
    table.set(key, handler);
    routes[name] = path;
  }
  const onError = handlerOptions.onError ?? defaultOnError;

  function find(pathname: string): CallbackEndpoint | undefined {
    return table.get(normalisePath(pathname).toLowerCase());
  }

  return {
    routes,
    matches: (pathname) => find(pathname) !== undefined,
    async handle(request: CallbackRequest): Promise<CallbackResponse> {
      const handler = find(pathnameOf(request.url));
      if (handler) return handler.handle(request);
      void discardBody(request.body);
      notify(
        onError,
        {
          kind: "not_found",
          status: FAILURE_STATUS.not_found,
          callback: undefined,
          reason: "no callback at this path",
        },
        redactCards,
      );
      return failureResponse("not_found");
    },
  };
}

function build(
  name: CallbackName,
  fn: unknown,
  options: Omit<CallbackRouterOptions, "handlers" | "basePath" | "paths">,
): CallbackHandler {
  const factory = FACTORIES[name] as (
    fn: CallbackFunction<unknown, unknown>,
    options: HandlerOptions,
  ) => CallbackHandler;
  return factory(fn as CallbackFunction<unknown, unknown>, options as HandlerOptions);
}
