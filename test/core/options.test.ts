/**
 * The options of the handler factories and of the router, checked when the handler is built: a
 * misspelt key, an `onError` or a `decoding` that cannot work is a TypeError naming the option,
 * never a value silently ignored (a 64 MiB limit kept at 1 MiB, every failure report dropped).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import {
  CALLBACK_NAMES,
  type CallbackHandler,
  type CallbackName,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createNotifyOrderRefundHandler,
  createPerformOrderPaymentHandler,
  createRedeemGiftCardHandler,
  createRefundGiftCardHandler,
  createRemoveRestrictedProductsHandler,
  createSendAdditionalRequiredDocumentsToMerchantHandler,
  createSendOrderToMerchantHandler,
  createSendRMAInfoToMerchantHandler,
  createUpdateOrderShippingInfoHandler,
  createUpdateOrderStatusHandler,
  createUpdateParcelDispatchHandler,
  createValidateGiftCardHandler,
  createValidateVoucherHandler,
} from "../../src/index.js";
import { collector, post } from "./helpers.js";

type Factory = (fn: (...args: never[]) => unknown, options: unknown) => CallbackHandler;

const FACTORIES: Readonly<Record<CallbackName, Factory>> = {
  GetCheckoutCartInfo: createGetCheckoutCartInfoHandler as unknown as Factory,
  SendOrderToMerchant: createSendOrderToMerchantHandler as unknown as Factory,
  UpdateOrderStatus: createUpdateOrderStatusHandler as unknown as Factory,
  PerformOrderPayment: createPerformOrderPaymentHandler as unknown as Factory,
  SendRMAInfoToMerchant: createSendRMAInfoToMerchantHandler as unknown as Factory,
  UpdateParcelDispatch: createUpdateParcelDispatchHandler as unknown as Factory,
  RemoveRestrictedProducts: createRemoveRestrictedProductsHandler as unknown as Factory,
  SendAdditionalRequiredDocumentsToMerchant:
    createSendAdditionalRequiredDocumentsToMerchantHandler as unknown as Factory,
  ValidateGiftCard: createValidateGiftCardHandler as unknown as Factory,
  RedeemGiftCard: createRedeemGiftCardHandler as unknown as Factory,
  RefundGiftCard: createRefundGiftCardHandler as unknown as Factory,
  ValidateVoucher: createValidateVoucherHandler as unknown as Factory,
  NotifyOrderRefund: createNotifyOrderRefundHandler as unknown as Factory,
  UpdateOrderShippingInfo: createUpdateOrderShippingInfoHandler as unknown as Factory,
};

const fn = () => undefined;
const orderText = readFileSync(
  new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
  "utf8",
);

/** Every option the README and the types document for every factory, with a working value. */
const DOCUMENTED = {
  auth: false,
  maxBodyBytes: 64 * 1024 * 1024,
  maxDepth: 32,
  bodyTimeoutMs: 10_000,
  decoding: { default: "auto", fields: { Phone1: "off" } },
  onError: () => undefined,
  // The gift-card and voucher factories' own; the router shares it with every function it builds,
  // so a factory that has no session to check takes it too (and has nothing to check).
  verifySession: () => true,
} as const;

describe("handler factories: options checked at construction", () => {
  it.each(CALLBACK_NAMES)("%s refuses an unknown option, naming it", (name) => {
    // Built apart from the call: no excess-property check, and `auth` makes it assignable.
    const options = { auth: false as const, maxBodySize: 64 * 1024 * 1024 };
    expect(() => FACTORIES[name](fn, options)).toThrow(TypeError);
    expect(() => FACTORIES[name](fn, options)).toThrow(
      new RegExp(`^${name}: options has an unknown option "maxBodySize" \\(known: auth, `),
    );
  });

  it.each(CALLBACK_NAMES)("%s takes every documented option, and undefined for each", (name) => {
    const extra =
      name === "GetCheckoutCartInfo"
        ? { methods: ["POST"], parameterNames: { merchantCartToken: "CartId" } }
        : {};
    expect(() => FACTORIES[name](fn, { ...DOCUMENTED, ...extra })).not.toThrow();
    const unset = Object.fromEntries(
      Object.keys({ ...DOCUMENTED, ...extra }).map((k) => [k, undefined]),
    );
    expect(() => FACTORIES[name](fn, { ...unset, auth: false })).not.toThrow();
  });

  it("GetCheckoutCartInfo's own options belong to it alone", () => {
    expect(() =>
      createSendOrderToMerchantHandler(
        fn as never,
        {
          auth: false,
          methods: ["POST"],
        } as never,
      ),
    ).toThrow(/SendOrderToMerchant: options has an unknown option "methods"/);
  });

  // Final reading F1-2: a misspelt member was ignored, so every cart call reached the function
  // with `merchantCartToken: undefined` and was answered 200 with the wrong cart.
  it("GetCheckoutCartInfo refuses a parameterNames member it does not know, naming it", () => {
    const build = () =>
      createGetCheckoutCartInfoHandler(fn as never, {
        auth: false,
        parameterNames: { merchantCartTokn: "CartId" } as never,
      });
    expect(build).toThrow(TypeError);
    expect(build).toThrow(
      'GetCheckoutCartInfo: parameterNames has an unknown option "merchantCartTokn" (known: merchantCartToken, countryCode, currencyCode); did you mean "merchantCartToken"?',
    );
  });

  // Open item 6: an unknown option is named with the closest valid one, as the CLI names a flag.
  it("names the closest valid option of a misspelt one, and none when nothing is close", () => {
    expect(() =>
      createSendOrderToMerchantHandler(fn as never, { auth: false, onErorr: () => {} } as never),
    ).toThrow(
      /^SendOrderToMerchant: options has an unknown option "onErorr" \(known: auth, .*\); did you mean "onError"\?$/,
    );
    expect(() =>
      createSendOrderToMerchantHandler(fn as never, { auth: false, zzzzzzzz: 1 } as never),
    ).toThrow(/unknown option "zzzzzzzz" \(known: [^)]*\)$/);
  });

  it.each([
    ["a number", 5],
    ["empty text", ""],
    ["null", null],
    ["an array", ["CartId"]],
  ])("GetCheckoutCartInfo refuses a parameterNames value that is %s", (_label, value) => {
    const build = () =>
      createGetCheckoutCartInfoHandler(fn as never, {
        auth: false,
        parameterNames: { merchantCartToken: value } as never,
      });
    expect(build).toThrow(
      new TypeError(
        "GetCheckoutCartInfo: parameterNames.merchantCartToken must be a non-empty string",
      ),
    );
  });

  it("GetCheckoutCartInfo refuses parameterNames that is not an object", () => {
    for (const parameterNames of ["CartId", 5, ["CartId"]]) {
      expect(() =>
        createGetCheckoutCartInfoHandler(fn as never, {
          auth: false,
          parameterNames: parameterNames as never,
        }),
      ).toThrow(new TypeError("GetCheckoutCartInfo: parameterNames must be an object"));
    }
    // Left out, null, or a member left undefined: the documented names.
    for (const parameterNames of [undefined, null, {}, { merchantCartToken: undefined }]) {
      expect(() =>
        createGetCheckoutCartInfoHandler(fn as never, {
          auth: false,
          parameterNames: parameterNames as never,
        }),
      ).not.toThrow();
    }
  });

  it.each([
    ["a logger object", { error: () => undefined }],
    ["a string", "console"],
    ["true", true],
  ])("onError as %s is refused (a report would be dropped on every failure)", (_label, onError) => {
    for (const name of CALLBACK_NAMES) {
      expect(() => FACTORIES[name](fn, { auth: false, onError }), name).toThrow(
        new TypeError(`${name}: onError must be a function (failure) => void`),
      );
    }
  });

  it("onError null or undefined is the default (a line on console.error)", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      for (const onError of [null, undefined]) {
        const handler = createSendOrderToMerchantHandler(fn as never, {
          auth: false,
          onError: onError as never,
        });
        expect((await handler.handle(post("{"))).status).toBe(400);
      }
      expect(printed).toHaveBeenCalledTimes(2);
    } finally {
      printed.mockRestore();
    }
  });

  it.each([
    ["a bare policy", "off", /^SendOrderToMerchant: decoding must be an object/],
    ["null", null, /^SendOrderToMerchant: decoding must be an object/],
    ["an array", ["off"], /^SendOrderToMerchant: decoding must be an object/],
    [
      "a misspelt key",
      { defaults: "off" },
      /^SendOrderToMerchant: decoding has an unknown option "defaults" \(known: default, fields\)/,
    ],
    ["a policy outside the set", { default: "never" }, /decoding\.default: decode policy must be/],
  ])("decoding as %s is refused", (_label, decoding, message) => {
    expect(() =>
      createSendOrderToMerchantHandler(fn as never, { auth: false, decoding: decoding as never }),
    ).toThrow(TypeError);
    expect(() =>
      createSendOrderToMerchantHandler(fn as never, { auth: false, decoding: decoding as never }),
    ).toThrow(message);
  });

  it("the checks leave a handler's answers as they were", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {
      ...DOCUMENTED,
      onError,
    });
    expect((await handler.handle(post(orderText))).status).toBe(200);
    expect((await handler.handle(post("{"))).status).toBe(400);
    expect(failures.map((f) => f.kind)).toEqual(["malformed_body"]);
  });
});

describe("router: options checked at construction", () => {
  const built = createSendOrderToMerchantHandler(fn as never, { auth: false });

  it("refuses an unknown option, naming it, also when every handler is built", () => {
    const options = {
      auth: false as const,
      maxBodySize: 1024,
      handlers: { SendOrderToMerchant: built },
    };
    expect(() => createCallbackRouter(options)).toThrow(
      /^createCallbackRouter: options has an unknown option "maxBodySize" \(known: /,
    );
    const mistyped = { auth: false as const, onErorr: fn, handlers: { UpdateOrderStatus: fn } };
    expect(() => createCallbackRouter(mistyped)).toThrow(/unknown option "onErorr"/);
  });

  it("refuses an onError that is not a function, also when every handler is built", () => {
    for (const handlers of [{ SendOrderToMerchant: built }, { UpdateOrderStatus: fn }]) {
      expect(() =>
        createCallbackRouter({ auth: false, onError: "console" as never, handlers }),
      ).toThrow(
        new TypeError("createCallbackRouter: onError must be a function (failure) => void"),
      );
    }
  });

  it.each([
    [
      "a bare policy",
      "off",
      "createCallbackRouter: decoding must be an object { default?, fields? }",
    ],
    [
      "a misspelt key",
      { defaults: "off" },
      'createCallbackRouter: decoding has an unknown option "defaults" (known: default, fields); did you mean "default"?',
    ],
  ])(
    "refuses a decoding as %s, naming itself, also when every handler is built",
    (_l, decoding, message) => {
      // With only built handlers no factory runs: the router checks it itself, under its own name
      // (the option was written on createCallbackRouter, not on the first function it builds).
      for (const handlers of [{ SendOrderToMerchant: built }, { SendOrderToMerchant: fn }]) {
        expect(() =>
          createCallbackRouter({
            auth: false,
            decoding: decoding as never,
            handlers: handlers as never,
          }),
        ).toThrow(new TypeError(message));
      }
    },
  );

  it("passes methods and parameterNames on to the cart function it builds, as on main", async () => {
    // Never in its type, but a JavaScript merchant's router gave them to GetCheckoutCartInfo:
    // start-up must not fail for them, and the other functions it builds must not get them.
    let token: unknown;
    const { failures, onError } = collector();
    const router = createCallbackRouter({
      auth: false,
      onError,
      methods: ["GET"],
      parameterNames: { merchantCartToken: "CartId" },
      handlers: {
        GetCheckoutCartInfo: (query: { merchantCartToken?: string }) => {
          token = query.merchantCartToken;
          return { productsList: [] };
        },
        SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      },
    } as never);
    const cart = await router.handle({
      method: "GET",
      url: "/GetCheckoutCartInfo?CartId=58211",
      headers: {},
    });
    expect(cart.status).toBe(200);
    expect(token).toBe("58211");
    expect((await router.handle(post("{}", {}, "/GetCheckoutCartInfo"))).status).toBe(405);
    expect(failures.map((f) => [f.kind, f.reason])).toEqual([
      ["method_not_allowed", "method POST"],
    ]);
    expect((await router.handle(post(orderText, {}, "/SendOrderToMerchant"))).status).toBe(200);
    // With no cart function, or a built cart handler (which keeps its factory's), still taken.
    const cartOptions = { auth: false as const, methods: ["POST"], parameterNames: {} };
    expect(() =>
      createCallbackRouter({ ...cartOptions, handlers: { UpdateOrderStatus: fn } } as never),
    ).not.toThrow();
    const builtCart = createGetCheckoutCartInfoHandler(fn as never, { auth: false });
    expect(() =>
      createCallbackRouter({
        ...cartOptions,
        handlers: { GetCheckoutCartInfo: builtCart },
      } as never),
    ).not.toThrow();
  });

  it("refuses, through the cart function it builds, a misspelt parameterNames member", () => {
    // Final reading F1-2: the router hands parameterNames to the cart factory, which checks it.
    const build = () =>
      createCallbackRouter({
        auth: false,
        parameterNames: { merchantCartTokn: "CartId" },
        handlers: { GetCheckoutCartInfo: () => ({ productsList: [] }) },
      } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(
      /^GetCheckoutCartInfo: parameterNames has an unknown option "merchantCartTokn"/,
    );
  });

  it("takes every documented option with a function for each callback", async () => {
    const handlers = Object.fromEntries(CALLBACK_NAMES.map((name) => [name, fn]));
    const { failures, onError } = collector();
    const router = createCallbackRouter({
      ...DOCUMENTED,
      onError,
      basePath: "/crossborder",
      paths: { UpdateParcelDispatch: "/parcels" },
      handlers: handlers as never,
    });
    expect(router.routes.UpdateParcelDispatch).toBe("/crossborder/parcels");
    expect((await router.handle(post("{}", {}, "/nowhere"))).status).toBe(404);
    expect(failures.map((f) => f.kind)).toEqual(["not_found"]);
  });
});

describe("arguments that are not what the factories and the router take (review dx-4)", () => {
  const noop = () => ({ InternalOrderId: "M-1" });

  it("the router's options and handlers must be objects, named", () => {
    const router = createCallbackRouter as unknown as (options?: unknown) => unknown;
    expect(() => router()).toThrow(
      /^createCallbackRouter: options must be an object \{ auth, handlers, … \}/,
    );
    expect(() => router("auth")).toThrow(/createCallbackRouter: options must be an object/);
    expect(() => router({ auth: false })).toThrow(
      /createCallbackRouter: options\.handlers must be an object \{ SendOrderToMerchant: fn, … \}/,
    );
    expect(() => router({ auth: false, handlers: [noop] })).toThrow(
      /options\.handlers must be an object/,
    );
  });

  it("an entry that is not a function or a handler says what it is and what is expected", () => {
    const router = createCallbackRouter as unknown as (options: unknown) => unknown;
    const inner = createCallbackRouter({ auth: false, handlers: { SendOrderToMerchant: noop } });
    const expected =
      /createCallbackRouter: handlers\.SendOrderToMerchant must be a function or a handler from createSendOrderToMerchantHandler/;
    for (const [entry, got] of [
      [inner, /\(got a router\)/],
      ["noop", /\(got a string\)/],
      [{ handle: noop }, /\(got an object\)/],
      [null, /\(got null\)/],
    ] as const) {
      expect(() => router({ auth: false, handlers: { SendOrderToMerchant: entry } })).toThrow(
        expected,
      );
      expect(() => router({ auth: false, handlers: { SendOrderToMerchant: entry } })).toThrow(got);
    }
  });

  it("a factory's options must be an object, named", () => {
    const factory = createSendOrderToMerchantHandler as unknown as (
      fn: unknown,
      options?: unknown,
    ) => unknown;
    expect(() => factory(noop, "auth")).toThrow(
      /^SendOrderToMerchant: options must be an object \{ auth, … \}/,
    );
    expect(() => factory(noop, 42)).toThrow(/options must be an object/);
    expect(() => factory(noop)).toThrow(/options\.auth is required/);
  });
});
