import { assertKnownKeys, optionNames } from "../auth/validate.js";
import {
  createGetCheckoutCartInfoHandler,
  type GetCheckoutCartInfoFunction,
  type GetCheckoutCartInfoOptions,
} from "../callbacks/get-checkout-cart-info.js";
import {
  createNotifyOrderRefundHandler,
  type NotifyOrderRefundFunction,
} from "../callbacks/notify-order-refund.js";
import {
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentFunction,
} from "../callbacks/perform-order-payment.js";
import {
  createRedeemGiftCardHandler,
  type RedeemGiftCardFunction,
} from "../callbacks/redeem-gift-card.js";
import {
  createRefundGiftCardHandler,
  type RefundGiftCardFunction,
} from "../callbacks/refund-gift-card.js";
import {
  createRemoveRestrictedProductsHandler,
  type RemoveRestrictedProductsFunction,
} from "../callbacks/remove-restricted-products.js";
import {
  createSendAdditionalRequiredDocumentsToMerchantHandler,
  type SendAdditionalRequiredDocumentsToMerchantFunction,
} from "../callbacks/send-additional-required-documents-to-merchant.js";
import {
  createSendOrderToMerchantHandler,
  type SendOrderToMerchantFunction,
} from "../callbacks/send-order-to-merchant.js";
import {
  createSendRMAInfoToMerchantHandler,
  type SendRMAInfoToMerchantFunction,
} from "../callbacks/send-rma-info-to-merchant.js";
import {
  assertVerifySession,
  checksShopperSession,
  SESSION_CALLBACKS,
  type VerifySession,
} from "../callbacks/shopper-session.js";
import {
  createUpdateOrderShippingInfoHandler,
  type UpdateOrderShippingInfoFunction,
} from "../callbacks/update-order-shipping-info.js";
import {
  createUpdateOrderStatusHandler,
  type UpdateOrderStatusFunction,
} from "../callbacks/update-order-status.js";
import {
  createUpdateParcelDispatchHandler,
  type UpdateParcelDispatchFunction,
} from "../callbacks/update-parcel-dispatch.js";
import {
  createValidateGiftCardHandler,
  type ValidateGiftCardFunction,
} from "../callbacks/validate-gift-card.js";
import {
  createValidateVoucherHandler,
  type ValidateVoucherFunction,
} from "../callbacks/validate-voucher.js";
import { DEFAULT_BODY_TIMEOUT_MS, discardBody } from "./body.js";
import { protectParsedBody } from "./card.js";
import type { CheckedFunction } from "./checked.js";
import {
  type CallbackContext,
  type CallbackFunction,
  type CallbackHandler,
  checkDecodingShape,
  HANDLER_OPTION_KEYS,
  type HandlerOptions,
  handleAuthEarly,
  watchAuth,
} from "./engine.js";
import { FAILURE_STATUS } from "./errors.js";
import { isRecord } from "./objects.js";
import {
  checkRoutePaths,
  MISSED_BELOW_MOUNT,
  type MountMissReporter,
  normalisePath,
  pathnameOf,
} from "./paths.js";
import { defaultOnError, notify, redactCards, textOf } from "./report.js";
import { failureResponse } from "./responses.js";
import { isTimerDelay } from "./timers.js";
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
  ValidateGiftCard: createValidateGiftCardHandler,
  RedeemGiftCard: createRedeemGiftCardHandler,
  RefundGiftCard: createRefundGiftCardHandler,
  ValidateVoucher: createValidateVoucherHandler,
  NotifyOrderRefund: createNotifyOrderRefundHandler,
  UpdateOrderShippingInfo: createUpdateOrderShippingInfoHandler,
} as const satisfies Record<CallbackName, unknown>;

/** The merchant's function type of each callback. */
export interface CallbackFunctions {
  GetCheckoutCartInfo: GetCheckoutCartInfoFunction;
  SendOrderToMerchant: SendOrderToMerchantFunction;
  UpdateOrderStatus: UpdateOrderStatusFunction;
  PerformOrderPayment: PerformOrderPaymentFunction;
  SendRMAInfoToMerchant: SendRMAInfoToMerchantFunction;
  UpdateParcelDispatch: UpdateParcelDispatchFunction;
  RemoveRestrictedProducts: RemoveRestrictedProductsFunction;
  SendAdditionalRequiredDocumentsToMerchant: SendAdditionalRequiredDocumentsToMerchantFunction;
  ValidateGiftCard: ValidateGiftCardFunction;
  RedeemGiftCard: RedeemGiftCardFunction;
  RefundGiftCard: RefundGiftCardFunction;
  ValidateVoucher: ValidateVoucherFunction;
  NotifyOrderRefund: NotifyOrderRefundFunction;
  UpdateOrderShippingInfo: UpdateOrderShippingInfoFunction;
}

/** For each callback: the merchant's function (built with the router's options) or a handler. */
export type CallbackHandlers = {
  [K in CallbackName]?: CallbackFunctions[K] | CallbackHandler<K> | undefined;
};

type PayloadOf<K extends CallbackName> = Parameters<CallbackFunctions[K]>[0];
type ResultOf<K extends CallbackName> = Awaited<ReturnType<CallbackFunctions[K]>>;

/**
 * What `handlers` is inferred as: each callback's function typed by its payload, returning
 * anything, or a handler. What a function returns is checked by {@link CheckedHandlers}, not
 * here: an entry failing this constraint would make the compiler drop what it inferred of every
 * entry and report one mistake against the bare function types, hiding the others (review dx-2).
 */
export type RouterEntries = {
  [K in CallbackName]?:
    | ((payload: PayloadOf<K>, context: CallbackContext<PayloadOf<K>>) => unknown)
    | CallbackHandler<K>
    | undefined;
};

/**
 * `handlers` with what each function returns checked against its callback's result type: a
 * misspelt result field is a compile error, inline functions included, and so is a key that names
 * no callback (each mistake its own error).
 */
export type CheckedHandlers<H> = {
  [K in keyof H]: K extends CallbackName
    ? NonNullable<H[K]> extends (...args: never[]) => infer Output
      ? CheckedFunction<PayloadOf<K>, Output, ResultOf<K>, K> | Extract<H[K], undefined>
      : H[K]
    : string extends K
      ? H[K]
      : `${K & string} is not the name of a callback`;
};

export interface CallbackRouterOptions<H extends RouterEntries = CallbackHandlers>
  extends Omit<HandlerOptions, "auth"> {
  /** Required when any entry of `handlers` is a function: it is built with these options. */
  auth?: HandlerOptions["auth"] | undefined;
  /** Prefix of every path, e.g. `/crossborder`. Default: none. */
  basePath?: string | undefined;
  /** The path of a callback under `basePath`. Default: its name (`/SendOrderToMerchant`). */
  paths?: Partial<Record<CallbackName, string>> | undefined;
  /** The shopper-session check of the gift-card and voucher functions (see their factories). */
  verifySession?: VerifySession | undefined;
  handlers: H;
}

/**
 * The router's options as `handlers` is checked: the options themselves where every entry passes,
 * else `handlers` as {@link CheckedHandlers}, alone, so that each failing entry is compared with
 * its checked function only (its error then points into the function's result, one error per
 * entry) rather than with an intersection of the function and its check.
 */
type RouterOptionsOf<H extends RouterEntries> = [H] extends [CheckedHandlers<H>]
  ? CallbackRouterOptions<H>
  : Omit<CallbackRouterOptions<H>, "handlers"> & { handlers: CheckedHandlers<H> };

export interface CallbackRouter extends CallbackEndpoint {
  /** The full path of each mounted callback. */
  readonly routes: Readonly<Partial<Record<CallbackName, string>>>;
}

/**
 * Mounts any subset of the callbacks under one base path. Paths match case-insensitively, with
 * or without a trailing slash; other paths answer 404 (Express and Koa pass them on instead).
 */
export function createCallbackRouter<H extends RouterEntries>(
  options: RouterOptionsOf<H>,
): CallbackRouter {
  if (!isRecord(options)) {
    throw new TypeError(
      "createCallbackRouter: options must be an object { auth, handlers, … } (see the README's quick start)",
    );
  }
  handleAuthEarly(options);
  if (!isRecord(options.handlers) || Array.isArray(options.handlers)) {
    throw new TypeError(
      "createCallbackRouter: options.handlers must be an object { SendOrderToMerchant: fn, … } mapping callback names to your functions (or to handlers from the factories)",
    );
  }
  checkRouterOptions(options);
  const { basePath = "", paths = {}, handlers, ...handlerOptions } = options;
  checkRoutePaths(basePath, paths, "createCallbackRouter");
  // Refused even when no gift-card callback is built here: the mistake is the same, and would
  // surface only once one is added.
  assertVerifySession(handlerOptions.verifySession, "createCallbackRouter");
  const onError = handlerOptions.onError ?? defaultOnError;
  // Said once for the router, before the handlers it builds would (review dx-1).
  if (handlerOptions.auth instanceof Promise) watchAuth(handlerOptions.auth, onError, undefined);
  const base = normalisePath(basePath);
  const table = new Map<string, CallbackEndpoint>();
  const names = new Map<string, CallbackName>();
  const routes: Partial<Record<CallbackName, string>> = {};
  for (const name of Object.keys(handlers) as CallbackName[]) {
    if (!Object.hasOwn(FACTORIES, name)) {
      throw new TypeError(`createCallbackRouter: unknown callback "${name}"`);
    }
    const entry = (handlers as CallbackHandlers)[name];
    if (entry === undefined) continue;
    if (typeof entry !== "function" && !isHandlerLike(entry)) {
      throw new TypeError(
        `createCallbackRouter: handlers.${name} must be a function or a handler from create${name}Handler (got ${kindOfEntry(entry)})`,
      );
    }
    const handler = typeof entry === "function" ? build(name, entry, handlerOptions) : entry;
    if (handler.callback !== name) {
      throw new TypeError(
        `createCallbackRouter: the handler under "${name}" is for ${handler.callback}`,
      );
    }
    // A built handler is finished: the router's options reach only the functions it builds. A
    // shopper-session check the merchant configured must not be missing from one gift-card
    // callback without a word, so such a handler is refused rather than mounted unchecked.
    if (
      typeof entry !== "function" &&
      handlerOptions.verifySession !== undefined &&
      SESSION_CALLBACKS.has(name) &&
      !checksShopperSession(handler)
    ) {
      throw new TypeError(
        `createCallbackRouter: the handler under "${name}" was built without verifySession, and the router's verifySession reaches only the functions it builds: give it to that handler's factory too, or pass the function itself`,
      );
    }
    const path = `${base}${normalisePath(paths[name] ?? name)}`;
    const key = path.toLowerCase();
    if (table.has(key)) throw new TypeError(`createCallbackRouter: two callbacks at ${path}`);
    table.set(key, handler);
    names.set(key, name);
    routes[name] = path;
  }
  // The rest of a body sent to no callback is drained as the callbacks' refusals drain theirs.
  const drainMs = isTimerDelay(handlerOptions.bodyTimeoutMs)
    ? handlerOptions.bodyTimeoutMs
    : DEFAULT_BODY_TIMEOUT_MS;

  function find(pathname: string): CallbackEndpoint | undefined {
    return table.get(normalisePath(pathname).toLowerCase());
  }

  // Said once per router (review migrate-4): see `MISSED_BELOW_MOUNT`.
  let mountReported = false;
  const reportMountMiss: MountMissReporter = (wholePathname, mountPrefix) => {
    if (mountReported) return;
    const name = names.get(normalisePath(wholePathname).toLowerCase());
    if (name === undefined) return;
    // Only when the mount prefix really is (the start of) the router's basePath: under a
    // parameter mount (`app.use("/:tenant", …)`) a path can spell a route by chance, and that
    // report would be false and spend the once (review second-mig-3).
    if (typeof mountPrefix === "string" && !repeatsBase(mountPrefix)) return;
    mountReported = true;
    notify(
      onError,
      {
        kind: "not_found",
        status: FAILURE_STATUS.not_found,
        callback: name,
        // The router's own paths only, never the request's (a prefix may carry anything).
        reason: `a call for ${routes[name]} reached this router below a mount path (Express app.use(prefix, …), koa-mount) that its own paths repeat (basePath "${base === "" ? "/" : base}"): the router saw the path without that prefix, serves no callback there, and passed the call on to next(), so whatever the app mounts after it answers it. Mount the router at the root, or build it without the prefix in basePath (said once per router)`,
      },
      redactCards,
    );
  };

  /** Whether a mount prefix is the router's basePath, or its first segments. */
  function repeatsBase(mountPrefix: string): boolean {
    const prefix = normalisePath(mountPrefix).toLowerCase();
    const lowerBase = base.toLowerCase();
    if (prefix === "" || prefix === "/") return false;
    return lowerBase === prefix || lowerBase.startsWith(`${prefix}/`);
  }

  const router: CallbackRouter = {
    routes,
    matches: (pathname) => find(pathname) !== undefined,
    // Not an async function (issue 13): a callback's answer is its handler's own promise, without
    // one more promise and its turns of the queue per call; a throw is still a rejection.
    handle(request: CallbackRequest): Promise<CallbackResponse> {
      try {
        const pathname = pathnameOf(request.url);
        const handler = find(pathname);
        // At the path the router gives it, whatever its name (review second-mig-2).
        if (handler) return Promise.resolve(handler.handle(request));
        return Promise.resolve(notFound(request, pathname));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
  Object.defineProperty(router, MISSED_BELOW_MOUNT, { value: reportMountMiss });
  return router;

  /** A path no callback is at: the body let go, reported, answered 404. */
  function notFound(request: CallbackRequest, pathname: string): CallbackResponse {
    void discardBody(request.body, drainMs);
    // A framework's req.body (node:http behind a parser) keeps no card data past the 404 either.
    protectParsedBody(request.body);
    notify(
      onError,
      {
        kind: "not_found",
        status: FAILURE_STATUS.not_found,
        callback: undefined,
        // What was asked for (a callback URL misconfigured: a prefix, a typo), without the
        // query, which may hold a urlSecret. As sent, unless its escapes spell card data
        // (`%34%31…`: review adversary), then decoded to be masked; escaped like every reason.
        reason: `no callback at this path: ${textOf(request.method)} ${shownPath(pathname)}`,
      },
      redactCards,
    );
    return failureResponse("not_found");
  }
}

/** A handler of a factory: its callback's name and `handle` (from any copy of the library). */
function isHandlerLike(value: unknown): value is CallbackHandler {
  return (
    isRecord(value) &&
    typeof value.handle === "function" &&
    typeof value.callback === "string" &&
    Object.hasOwn(FACTORIES, value.callback)
  );
}

/** What a handlers entry is, for the refusal: a router, a string, an object, null… */
function kindOfEntry(value: unknown): string {
  if (value === null) return "null";
  if (isRecord(value) && "routes" in value && typeof value.handle === "function") return "a router";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return `a ${typeof value}`;
}

/**
 * A percent-escape of a printable ASCII character: what can spell a card number (a digit, a
 * separator such as `.` or `_`, `%` for a number escaped twice) is among them.
 */
const CARD_ESCAPE = /%([2-7][0-9A-Fa-f])/g;

function unescaped(_escape: string, hex: string): string {
  return String.fromCharCode(Number.parseInt(hex, 16));
}

/**
 * A path as sent, but for a segment whose escapes, decoded until none is left (each round
 * shortens it; as UTF-8, or its printable ASCII ones where that fails), show a card number: that
 * segment decoded and masked, its `/`, `?`, `#` and `%` escaped again so that it reads as no other
 * route or query; every other segment as sent (reviews adversary, second-doubt, second-seq,
 * final2, last).
 */
function shownPath(pathname: string): string {
  if (pathname.indexOf("%") === -1) return pathname;
  return pathname
    .split("/")
    .map((segment) => {
      const decoded = decodedSegment(segment);
      if (decoded === segment) return segment;
      const masked = redactCards(decoded);
      return masked === decoded ? segment : masked.replace(PATH_SIGNS, escapedSign);
    })
    .join("/");
}

function decodedSegment(segment: string): string {
  let decoded = segment;
  for (;;) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      next = decoded.replace(CARD_ESCAPE, unescaped);
    }
    if (next === decoded) return decoded;
    decoded = next;
  }
}

/** What would read as another segment, a query, a fragment or an escape in a decoded segment. */
const PATH_SIGNS = /[/?#%]/g;

function escapedSign(sign: string): string {
  return `%${sign.charCodeAt(0).toString(16).toUpperCase()}`;
}

// The factories' options (the router gives them to every function it builds) and its own.
const ROUTER_OPTION_NAMES = optionNames<CallbackRouterOptions>({
  ...HANDLER_OPTION_KEYS,
  basePath: true,
  paths: true,
  handlers: true,
});

/**
 * GetCheckoutCartInfo's own options. Not in the router's type, but before its options were
 * checked the router gave them to the cart function it builds, so a JavaScript merchant's router
 * may carry them: they are taken, and given to that function alone (every other factory refuses
 * them). A cart handler built with a factory keeps its factory's, as for every router option.
 */
const CART_ONLY_OPTION_NAMES = optionNames<Omit<GetCheckoutCartInfoOptions, keyof HandlerOptions>>({
  methods: true,
  parameterNames: true,
});
const ROUTER_TAKES: readonly string[] = [...ROUTER_OPTION_NAMES, ...CART_ONLY_OPTION_NAMES];

/**
 * What the router checks itself, as it may build no handler (every one built with a factory) that
 * would: a misspelt option, and an `onError` that is not a function (its 404s would go unreported).
 * The factories check the rest of the options of the functions it builds.
 */
function checkRouterOptions(options: CallbackRouterOptions<RouterEntries>): void {
  assertKnownKeys(
    options as unknown as Record<string, unknown>,
    ROUTER_TAKES,
    "options",
    "createCallbackRouter",
  );
  const { onError, decoding } = options;
  if (onError !== undefined && onError !== null && typeof onError !== "function") {
    throw new TypeError("createCallbackRouter: onError must be a function (failure) => void");
  }
  checkDecodingShape(decoding, "createCallbackRouter");
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
  let given: Record<string, unknown> = options;
  if (name !== "GetCheckoutCartInfo" && CART_ONLY_OPTION_NAMES.some((key) => key in options)) {
    given = { ...options };
    for (const key of CART_ONLY_OPTION_NAMES) delete given[key];
  }
  return factory(fn as CallbackFunction<unknown, unknown>, given as unknown as HandlerOptions);
}
