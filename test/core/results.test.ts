// What the merchant's function returns, at run time: unknown fields are left out of the answer and
// reported as a warning; a repeated verdict must say true; a missing or unusable field of an order
// callback is answered without it and reported as a warning (the function has run: a 500 would
// deliver the order again), a blank one answered as it is (the testing kit flags both). And the
// shopper-session check of the gift-card callbacks: refused with a 401, never quoting the session.
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { writtenText } from "../../src/core/responses.js";
import {
  CALLBACK_NAMES,
  CallbackError,
  type CallbackFailure,
  type CallbackName,
  createCallbackRouter,
  createPerformOrderPaymentHandler,
  createRedeemGiftCardHandler,
  createRefundGiftCardHandler,
  createSendOrderToMerchantHandler,
  createValidateGiftCardHandler,
  createValidateVoucherHandler,
  FAILURE_STATUS,
  type GiftCardRequest,
  withIdempotency,
} from "../../src/index.js";
import { checkResponse } from "../../src/testing/index.js";
import { GIFT_CARD_UNAUTHORIZED } from "../adapters/support/suite.js";
import { collector, json, post } from "./helpers.js";

const ORDER = JSON.stringify({
  OrderId: "GE100",
  Products: [{ Sku: "SKU-1", Price: 10, Quantity: 1 }],
  PaymentDetails: { CardNumber: "4111111111111111", CVVNumber: "737" },
});

const AUTH_TOKEN = "c2Vzc2lvbi10b2tlbi1vZi1zaG9wcGVyLTQy";
const SESSION_ID = "sess-9f8e7d";
const CARD_REQUEST = JSON.stringify({
  MerchantGUID: "guid-1",
  CardFields: { CardId: "GC-1" },
  CustomerEmail: "jane.doe%40example.com",
  AuthToken: AUTH_TOKEN,
  SessionId: SESSION_ID,
});

/** Every text a failure carries, as a logger would print it. */
function printed(failures: readonly CallbackFailure[]): string {
  return failures
    .map((failure) => {
      const error = failure.error instanceof Error ? failure.error : undefined;
      return [JSON.stringify(failure), inspect(failure), error?.message, error?.stack].join("\n");
    })
    .join("\n");
}

describe("unknown result fields: a warning, not a lost order", () => {
  it("answers with the known fields and warns, naming the unknown ones", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () =>
        ({ InternalOrderId: "M-1", OrderID: "GE100", Statuscode: "new" }) as {
          InternalOrderId: string;
        },
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({ Success: true, InternalOrderId: "M-1" });
    expect(failures).toStrictEqual([
      {
        kind: "result_fields_ignored",
        status: FAILURE_STATUS.result_fields_ignored,
        severity: "warning",
        callback: "SendOrderToMerchant",
        reason: `the result's unknown fields were left out of the answer: "OrderID", "Statuscode"`,
        orderId: "GE100",
      },
    ]);
  });

  it("a misspelt required field: 200 without it, a warning for the unknown field and one for the missing one", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => ({ InternalOrderID: "M-1" }) as unknown as { InternalOrderId: string },
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({ Success: true });
    expect(failures.map((f) => [f.kind, f.status, f.severity, f.reason])).toStrictEqual([
      [
        "result_fields_ignored",
        200,
        "warning",
        `the result's unknown fields were left out of the answer: "InternalOrderID"`,
      ],
      [
        "result_incomplete",
        200,
        "warning",
        "the handler's result is incomplete, answered 200 all the same (the function has run): missing InternalOrderId",
      ],
    ]);
  });

  const delivered: readonly [string, "order" | "payment" | "redeem", unknown][] = [
    ["SendOrderToMerchant without its id", "order", { OrderId: "M-1" }],
    ["SendOrderToMerchant returning a string", "order", "created"],
    ["PerformOrderPayment without the amount", "payment", { PaymentCurrencyCode: "EUR" }],
    ["RedeemGiftCard with an object balance", "redeem", { Balance: { amount: 5 } }],
  ];
  it.each(delivered)(
    "%s, under withIdempotency and delivered three times: the function runs once, every delivery is answered 200",
    async (_label, kind, result) => {
      // Before, such a result was a 500 after the side effect: withIdempotency released it, the
      // service delivered again, and every delivery created another order or charged again.
      let runs = 0;
      const fn = withIdempotency(async () => {
        runs++;
        return result as never;
      });
      const { failures, onError } = collector();
      const handler =
        kind === "order"
          ? createSendOrderToMerchantHandler(fn, { auth: false, onError })
          : kind === "payment"
            ? createPerformOrderPaymentHandler(fn, { auth: false, onError })
            : createRedeemGiftCardHandler(fn, { auth: false, onError });
      const body = kind === "redeem" ? CARD_REQUEST : ORDER;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await handler.handle(post(body))).status);
      expect(statuses).toStrictEqual([200, 200, 200]);
      expect(runs).toBe(1);
      // Each delivery answered with the recorded result is told as incomplete, a warning.
      expect(failures.map((failure) => [failure.kind, failure.status])).toEqual(
        Array.from({ length: 3 }, () => ["result_incomplete", 200]),
      );
    },
  );

  it("a present but blank required field is answered 200: the order exists, a 500 would redeliver it", async () => {
    // The function has already created the order (or charged the card) when it returns. The
    // service reads Success (wire-facts §1); a 500 makes it redeliver, and withIdempotency does
    // not record an unusable result, so each redelivery would create another order.
    let created = 0;
    const { failures, onError } = collector();
    const order = createSendOrderToMerchantHandler(
      withIdempotency(async () => {
        created++;
        return { InternalOrderId: "" };
      }),
      { auth: false, onError },
    );
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await order.handle(post(ORDER))).status);
    expect(statuses).toStrictEqual([200, 200, 200]);
    expect(created).toBe(1);
    const payment = createPerformOrderPaymentHandler(
      () => ({ PaymentAmount: " ", PaymentCurrencyCode: "" }),
      { auth: false, onError },
    );
    const response = await payment.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({
      Success: true,
      PaymentAmount: " ",
      PaymentCurrencyCode: "",
    });
    expect(failures).toStrictEqual([]);
  });

  it("never quotes a field name that is not an identifier (card data, a session token)", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () =>
        ({
          InternalOrderId: "M-1",
          "4111111111111111": true,
          "737": true,
          "Card 4111 1111 1111 1111": true,
        }) as { InternalOrderId: string },
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(failures[0]?.reason).toBe(
      "the result's unknown fields were left out of the answer: 3 more",
    );
    expect(printed(failures)).not.toMatch(/4111|737/);
  });

  it("masks this request's CVV and session values inside a quoted field name", async () => {
    // The warning is written after the function returned, when the CVV is already dropped from
    // the payload: the redactor must still know it.
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () =>
        ({ InternalOrderId: "M-1", cvv_737: true, OrderID: "GE100" }) as {
          InternalOrderId: string;
        },
      { auth: false, onError },
    );
    expect((await handler.handle(post(ORDER))).status).toBe(200);
    expect(failures[0]?.reason).toBe(
      `the result's unknown fields were left out of the answer: "cvv_***", "OrderID"`,
    );
    const { failures: cardFailures, onError: cardOnError } = collector();
    const card = createValidateGiftCardHandler(
      () => ({ IsValid: true, s_sess_9f8e7d: 1 }) as { IsValid: boolean },
      { auth: false, onError: cardOnError },
    );
    const request = JSON.stringify({ CardFields: { CardId: "GC-1" }, SessionId: "sess_9f8e7d" });
    expect((await card.handle(post(request))).status).toBe(200);
    expect(cardFailures[0]?.reason).toBe(
      `the result's unknown fields were left out of the answer: "s_***"`,
    );
  });

  it("the default onError writes a warning on console.warn, not console.error", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const handler = createSendOrderToMerchantHandler(
        () => ({ InternalOrderId: "M-1", Extra: 1 }) as { InternalOrderId: string },
        { auth: false },
      );
      expect((await handler.handle(post(ORDER))).status).toBe(200);
      expect(error).not.toHaveBeenCalled();
      expect(warn.mock.calls).toStrictEqual([
        [
          `[crossborder-callbacks] SendOrderToMerchant order GE100 200 warning result_fields_ignored: the result's unknown fields were left out of the answer: "Extra"`,
        ],
      ]);
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it.each([
    ["Success: true", { Success: true }, 200],
    ['Success: "true"', { Success: "true" }, 200],
    ["Success: null", { Success: null }, 200],
    ["Success: false", { Success: false }, 500],
    ['Success: "False"', { Success: "False" }, 500],
    ["IsSuccess: false", { IsSuccess: false }, 500],
  ])("a result repeating the verdict (%s): only true is accepted", async (_l, verdict, status) => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => ({ InternalOrderId: "M-1", ...verdict }) as { InternalOrderId: string },
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(status);
    if (status === 200) {
      expect(json(response)).toStrictEqual({ Success: true, InternalOrderId: "M-1" });
      expect(failures).toStrictEqual([]);
    } else {
      // A refusal written as a result would read as success if dropped: it is not guessed.
      const key = Object.keys(verdict)[0];
      expect(failures.map((f) => f.reason)).toStrictEqual([
        `the handler's result is unusable: "${key}" is not true: throw a CallbackError to refuse`,
      ]);
    }
  });

  // wire-facts §1/§6: "Success": "true" as text is read as true wherever the library reads a
  // Success, on every callback: each answers its own verdict (RMA the text "True",
  // RemoveRestrictedProducts IsSuccess); a false one, in any case, is never sent as a success.
  it.each(CALLBACK_NAMES.filter((name) => name !== "GetCheckoutCartInfo"))(
    "%s: a result's Success as the text true in any case is its own success verdict",
    async (name) => {
      const required: Partial<Record<CallbackName, object>> = {
        SendOrderToMerchant: { InternalOrderId: "M-1" },
        PerformOrderPayment: { PaymentAmount: "10", PaymentCurrencyCode: "EUR" },
        ValidateGiftCard: { IsValid: true },
        ValidateVoucher: { IsValid: true },
      };
      const verdict =
        name === "SendRMAInfoToMerchant"
          ? { Success: "True" }
          : name === "RemoveRestrictedProducts"
            ? { IsSuccess: true }
            : { Success: true };
      const body = JSON.stringify({
        OrderId: "GE100",
        RMANumber: "R1",
        ReturnedProducts: [],
        StatusCode: "N/A",
        Products: [{ Sku: "SKU-1", Price: 10, Quantity: 1 }],
        PaymentDetails: { CardNumber: null, CVVNumber: null, PaymentMethodCode: "OT" },
        DispatchedParcel: {},
        RemovedProductCodes: [],
      });
      for (const [text, status] of [
        ["true", 200],
        ["TRUE", 200],
        ["True", 200],
        ["false", 500],
        [" False ", 500],
      ] as const) {
        const { failures, onError } = collector();
        const router = createCallbackRouter({
          auth: false,
          onError,
          handlers: { [name]: () => ({ ...required[name], Success: text }) },
        });
        const response = await router.handle(post(body, {}, `/${name}`));
        expect(response.status, `${name} ${text}`).toBe(status);
        if (status === 200) {
          expect(json(response), `${name} ${text}`).toMatchObject(verdict);
          expect(failures, `${name} ${text}`).toStrictEqual([]);
        } else {
          expect(
            failures.map((failure) => failure.kind),
            `${name} ${text}`,
          ).toStrictEqual(["internal_error"]);
        }
      }
    },
  );

  it("gift-card answers write Balance as text and booleans as booleans", async () => {
    const handler = createValidateGiftCardHandler(
      () => ({ IsValid: true, Balance: 12.5, CurrencyCode: "EUR", IsOperatorGiftCard: true }),
      { auth: false },
    );
    const body = json(await handler.handle(post(CARD_REQUEST)));
    expect(body).toStrictEqual({
      Success: true,
      IsValid: true,
      Balance: "12.5",
      CurrencyCode: "EUR",
      IsOperatorGiftCard: true,
    });
  });

  it.each([
    ["true", true],
    [" TRUE ", true],
    ["false", false],
    ["False", false],
    [" FALSE ", false],
    [false, false],
    [true, true],
  ] as const)(
    "a gift-card answer with IsValid as the text %j is read like Success: IsValid %s",
    async (text, valid) => {
      const { failures, onError } = collector();
      const validate = createValidateGiftCardHandler(
        () => ({ IsValid: text }) as unknown as { IsValid: boolean },
        { auth: false, onError },
      );
      const response = await validate.handle(post(CARD_REQUEST));
      expect(response.status).toBe(200);
      expect(json(response)).toStrictEqual({ Success: true, IsValid: valid });
      expect(failures).toStrictEqual([]);
      // A redemption or a refund saying the card is not valid did not debit or credit it: it is a
      // refusal returned instead of thrown, never answered Success: true (the service reads that
      // as done), but a 500, as a Success: false result is.
      for (const factory of [createRedeemGiftCardHandler, createRefundGiftCardHandler]) {
        // (An ErrorCode beside IsValid true is a refusal too since review-left D1: see below.)
        const handler = factory(
          () =>
            ({
              IsValid: text,
              ...(valid ? {} : { ErrorCode: "INSUFFICIENT" }),
              Balance: "0",
            }) as never,
          { auth: false, onError },
        );
        const answer = await handler.handle(post(CARD_REQUEST));
        if (valid) {
          expect(answer.status).toBe(200);
          expect(json(answer)).toStrictEqual({ Success: true, IsValid: true, Balance: "0" });
          expect(failures).toStrictEqual([]);
        } else {
          expect(answer.status).toBe(500);
          expect(json(answer)).toMatchObject({ Success: false, ErrorCode: "INTERNAL_ERROR" });
          expect(failures.splice(0).map((f) => [f.kind, f.reason])).toStrictEqual([
            [
              "internal_error",
              `the handler's result is unusable: "IsValid" is false: throw a CallbackError to refuse`,
            ],
          ]);
        }
      }
    },
  );

  it("a gift-card answer with IsValid as other text: a validation is unusable (a 500, not a valid card); a redemption is answered without it, with a warning", async () => {
    const { failures, onError } = collector();
    const handler = createValidateGiftCardHandler(
      () => ({ IsValid: "yes" }) as unknown as { IsValid: boolean },
      { auth: false, onError },
    );
    const response = await handler.handle(post(CARD_REQUEST));
    expect(response.status).toBe(500);
    expect(json(response)).toStrictEqual({
      Success: false,
      ErrorCode: "INTERNAL_ERROR",
      Message: "Internal error",
      Description: "",
      IsValid: false,
      ErrorText: "Internal error",
    });
    expect(failures.map((f) => f.reason)).toStrictEqual([
      `the handler's result is unusable: field "IsValid" must be a boolean`,
    ]);
    const redeem = createRedeemGiftCardHandler(
      () => ({ IsValid: "yes", Balance: "0" }) as unknown as { IsValid: true },
      { auth: false, onError },
    );
    const redeemed = await redeem.handle(post(CARD_REQUEST));
    expect(redeemed.status).toBe(200);
    expect(json(redeemed)).toStrictEqual({ Success: true, Balance: "0" });
    expect(failures.map((f) => f.kind)).toStrictEqual(["internal_error", "result_incomplete"]);
  });

  it("a result whose getter throws: the readable fields are answered (200), the rest named in a warning", async () => {
    let runs = 0;
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => {
        runs++;
        return {
          InternalOrderId: "M-1",
          get OrderId(): string {
            throw new Error("lazy field not loaded 4111111111111111");
          },
        };
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({ Success: true, InternalOrderId: "M-1" });
    expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
      [
        "result_incomplete",
        `the handler's result is incomplete, answered 200 all the same (the function has run): field "OrderId" could not be read`,
      ],
    ]);
    expect(runs).toBe(1);
    // Review ops-9: the getter's exception, the only clue to why, is the warning's error, scrubbed.
    const error = failures[0]?.error as Error | undefined;
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).toMatch(/^lazy field not loaded /);
    expect(error?.message).not.toContain("4111111111111111");
  });

  it("a result field whose getter throws: the first read error is the warning's error, or the 500's for a verdict (review ops-9)", async () => {
    const { failures, onError } = collector();
    const order = createSendOrderToMerchantHandler(
      () => ({
        get InternalOrderId(): string {
          throw new Error("lazy load: column internal_id missing");
        },
        get OrderId(): string {
          throw new Error("the second one");
        },
      }),
      { auth: false, onError },
    );
    expect((await order.handle(post(ORDER))).status).toBe(200);
    expect(failures.map((f) => f.kind)).toStrictEqual(["result_incomplete"]);
    expect((failures[0]?.error as Error | undefined)?.message).toBe(
      "lazy load: column internal_id missing",
    );
    // Something thrown that is not an Error arrives as a NonError, as everywhere.
    const thrower = createSendOrderToMerchantHandler(
      () => ({
        InternalOrderId: "M-1",
        get OrderId(): string {
          throw undefined;
        },
      }),
      { auth: false, onError },
    );
    expect((await thrower.handle(post(ORDER))).status).toBe(200);
    expect(failures[1]?.kind).toBe("result_incomplete");
    expect((failures[1]?.error as Error | undefined)?.name).toBe("NonError");
    // A verdict that cannot be read: the 500 carries the getter's error.
    const validate = createValidateGiftCardHandler(
      () => ({
        get IsValid(): boolean {
          throw new Error("verdict lost");
        },
      }),
      { auth: false, onError },
    );
    expect((await validate.handle(post(CARD_REQUEST))).status).toBe(500);
    expect(failures[2]?.kind).toBe("internal_error");
    expect(failures[2]?.reason).toBe(
      `the handler's result is unusable: field "IsValid" could not be read`,
    );
    expect((failures[2]?.error as Error | undefined)?.message).toBe("verdict lost");
    // A fully readable result that is incomplete says no error.
    const missing = createSendOrderToMerchantHandler(() => ({ OrderId: "GE100" }) as never, {
      auth: false,
      onError,
    });
    expect((await missing.handle(post(ORDER))).status).toBe(200);
    expect(failures[3]?.kind).toBe("result_incomplete");
    expect(failures[3]?.error).toBeUndefined();
  });

  it("a result whose keys cannot be listed (a Proxy): answered 200 with nothing of it, a warning; a validation's is a 500", async () => {
    const hostile = () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error("no keys");
          },
        },
      );
    const { failures, onError } = collector();
    const order = createSendOrderToMerchantHandler(() => hostile() as never, {
      auth: false,
      onError,
    });
    const response = await order.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({ Success: true });
    expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
      [
        "result_incomplete",
        "the handler's result is incomplete, answered 200 all the same (the function has run): reading it threw; missing InternalOrderId",
      ],
    ]);
    expect((failures[0]?.error as Error | undefined)?.message).toBe("no keys");
    const validate = createValidateGiftCardHandler(() => hostile() as never, {
      auth: false,
      onError,
    });
    expect((await validate.handle(post(CARD_REQUEST))).status).toBe(500);
    expect(failures[1]?.reason).toBe("the handler's result is unusable: reading it threw");
  });

  it("is given the AuthToken, the SessionId and the context, and lets an accepted call through", async () => {
    const seen: unknown[] = [];
    const handler = createValidateGiftCardHandler(
      (request) => ({ IsValid: request.CardFields?.CardId === "GC-1", Balance: "10.00" }),
      {
        auth: false,
        verifySession: (authToken, sessionId, context) => {
          seen.push(authToken, sessionId, context.callback, context.request.method);
          return authToken === AUTH_TOKEN && sessionId === SESSION_ID;
        },
      },
    );
    const response = await handler.handle(post(CARD_REQUEST));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({ Success: true, IsValid: true, Balance: "10.00" });
    expect(seen).toStrictEqual([AUTH_TOKEN, SESSION_ID, "ValidateGiftCard", "POST"]);
  });

  it.each([
    ["false", () => false],
    ["a truthy non-boolean", () => "yes" as unknown as boolean],
    ["a promise of false", async () => false],
  ])(
    "refuses with a generic 401 when it returns %s; the function never runs",
    async (_l, verify) => {
      const { failures, onError } = collector();
      let ran = false;
      const handler = createValidateVoucherHandler(
        () => {
          ran = true;
          return { IsValid: true };
        },
        { auth: false, onError, verifySession: verify },
      );
      const response = await handler.handle(post(CARD_REQUEST));
      expect(response.status).toBe(401);
      expect(json(response)).toStrictEqual(GIFT_CARD_UNAUTHORIZED);
      expect(ran).toBe(false);
      expect(failures).toStrictEqual([
        {
          kind: "unauthorized",
          status: 401,
          callback: "ValidateVoucher",
          reason: "the shopper session was refused (verifySession)",
          error: undefined,
        },
      ]);
    },
  );

  it("gets undefined for a session the request does not carry", async () => {
    const seen: unknown[] = [];
    const handler = createRedeemGiftCardHandler(() => undefined, {
      auth: false,
      verifySession: (authToken, sessionId) => {
        seen.push(authToken, sessionId);
        return true;
      },
    });
    const body = JSON.stringify({ CardFields: { CardId: "GC-1" }, AuthToken: null });
    expect((await handler.handle(post(body))).status).toBe(200);
    expect(seen).toStrictEqual([undefined, undefined]);
  });

  it("no text given to onError quotes the AuthToken or the SessionId, whatever throws", async () => {
    const throwing: ((request: GiftCardRequest) => never)[] = [
      (request) => {
        throw new Error(`session ${request.AuthToken} expired (id ${request.SessionId})`);
      },
      (request) => {
        throw new CallbackError(
          "SESSION",
          `bad session ${request.AuthToken}`,
          `${request.SessionId}`,
        );
      },
    ];
    for (const fail of throwing) {
      const { failures, onError } = collector();
      const handler = createValidateGiftCardHandler(fail, { auth: false, onError });
      const response = await handler.handle(post(CARD_REQUEST));
      expect(failures).toHaveLength(1);
      const text = `${printed(failures)}\n${response.body}`;
      expect(text).not.toContain(AUTH_TOKEN);
      expect(text).not.toContain(SESSION_ID);
      expect(text).toContain("***");
    }
    // The same when verifySession itself throws quoting them: a 500, masked.
    const { failures, onError } = collector();
    const handler = createValidateGiftCardHandler(() => ({ IsValid: true }), {
      auth: false,
      onError,
      verifySession: (authToken) => {
        throw new Error(`session store down for ${authToken}`);
      },
    });
    const response = await handler.handle(post(CARD_REQUEST));
    expect(response.status).toBe(500);
    expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
      ["internal_error", "the authorization check before the handler threw"],
    ]);
    expect(printed(failures)).not.toContain(AUTH_TOKEN);
    expect(printed(failures)).toContain("session store down for ***");
  });

  it("a rejected verifySession promise is a 500, and the function never runs", async () => {
    const { failures, onError } = collector();
    let ran = false;
    const handler = createRedeemGiftCardHandler(
      () => {
        ran = true;
      },
      { auth: false, onError, verifySession: async () => Promise.reject(new Error("timeout")) },
    );
    const response = await handler.handle(post(CARD_REQUEST));
    expect(response.status).toBe(500);
    expect(ran).toBe(false);
    expect(failures.map((f) => [f.kind, f.reason, (f.error as Error).message])).toStrictEqual([
      ["internal_error", "the authorization check before the handler threw", "timeout"],
    ]);
  });

  it("the router passes verifySession to the gift-card functions it builds", async () => {
    const { failures, onError } = collector();
    const router = createCallbackRouter({
      auth: false,
      onError,
      verifySession: () => false,
      handlers: {
        ValidateGiftCard: () => ({ IsValid: true }),
        SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      },
    });
    const card = await router.handle(post(CARD_REQUEST, {}, "/ValidateGiftCard"));
    expect(card.status).toBe(401);
    // The other callbacks carry no shopper session: verifySession does not apply to them.
    const order = await router.handle(post(ORDER, {}, "/SendOrderToMerchant"));
    expect(order.status).toBe(200);
    expect(failures.map((f) => f.kind)).toStrictEqual(["unauthorized"]);
  });

  // Review c1 defect 3: a gift-card handler built with its own factory (README's pattern for
  // mixing functions and handlers) was mounted without any session check, silently.
  it("the router refuses a prebuilt gift-card or voucher handler without a verifySession of its own, when it has one", () => {
    const verifySession = () => false;
    const prebuilt = {
      ValidateGiftCard: () =>
        createValidateGiftCardHandler(() => ({ IsValid: true }), { auth: false }),
      RedeemGiftCard: () => createRedeemGiftCardHandler(() => undefined, { auth: false }),
      RefundGiftCard: () => createRefundGiftCardHandler(() => undefined, { auth: false }),
      ValidateVoucher: () =>
        createValidateVoucherHandler(() => ({ IsValid: true }), { auth: false }),
    };
    for (const [name, build] of Object.entries(prebuilt)) {
      expect(
        () =>
          createCallbackRouter({
            auth: false,
            verifySession,
            handlers: { ValidateGiftCard: () => ({ IsValid: true }), [name]: build() },
          }),
        name,
      ).toThrow(
        new TypeError(
          `createCallbackRouter: the handler under "${name}" was built without verifySession, and the router's verifySession reaches only the functions it builds: give it to that handler's factory too, or pass the function itself`,
        ),
      );
    }
    // A handler-like object of your own: the router cannot tell whether it checks the session.
    expect(() =>
      createCallbackRouter({
        auth: false,
        verifySession,
        handlers: {
          RedeemGiftCard: {
            callback: "RedeemGiftCard",
            matches: () => true,
            handle: async () => ({ status: 200, headers: {}, body: "{}" }),
          },
        },
      }),
    ).toThrow(/the handler under "RedeemGiftCard" was built without verifySession/);
  });

  // Review OPT D2b: it was accepted, and every gift-card or voucher call was then a 500.
  it("a verifySession that is not a function is refused at construction, by the factories and the router", () => {
    const factories = {
      ValidateGiftCard: createValidateGiftCardHandler,
      RedeemGiftCard: createRedeemGiftCardHandler,
      RefundGiftCard: createRefundGiftCardHandler,
      ValidateVoucher: createValidateVoucherHandler,
    };
    for (const [name, factory] of Object.entries(factories) as [
      string,
      typeof createValidateGiftCardHandler,
    ][]) {
      for (const value of ["sessions", { verify: () => true }, null]) {
        const create = () =>
          factory(() => ({ IsValid: true }) as never, {
            auth: false,
            verifySession: value as never,
          });
        expect(create, name).toThrow(TypeError);
        expect(create, name).toThrow(`${name}: verifySession must be a function`);
      }
    }
    // The router refuses it even when no gift-card callback is among those it builds.
    for (const handlers of [
      { ValidateGiftCard: () => ({ IsValid: true }) },
      { SendOrderToMerchant: () => ({}) },
    ]) {
      expect(() =>
        createCallbackRouter({
          auth: false,
          verifySession: "sessions" as never,
          handlers,
        } as never),
      ).toThrow("createCallbackRouter: verifySession must be a function");
    }
  });

  it("the router mounts a prebuilt gift-card handler that checks the session itself, and any without a router verifySession", async () => {
    const ran: string[] = [];
    const redeem = () =>
      createRedeemGiftCardHandler(
        () => {
          ran.push("redeem");
        },
        { auth: false, onError: () => {}, verifySession: () => false },
      );
    const router = createCallbackRouter({
      auth: false,
      onError: () => {},
      verifySession: () => true,
      handlers: { ValidateGiftCard: () => ({ IsValid: true }), RedeemGiftCard: redeem() },
    });
    // Its own check runs: it refuses.
    expect((await router.handle(post(CARD_REQUEST, {}, "/RedeemGiftCard"))).status).toBe(401);
    expect(ran).toStrictEqual([]);
    // Without a router verifySession nothing is expected of it: mounted as it is.
    const plain = createCallbackRouter({
      auth: false,
      handlers: {
        RedeemGiftCard: createRedeemGiftCardHandler(
          () => {
            ran.push("plain");
          },
          { auth: false },
        ),
      },
    });
    expect((await plain.handle(post(CARD_REQUEST, {}, "/RedeemGiftCard"))).status).toBe(200);
    expect(ran).toStrictEqual(["plain"]);
  });
});

describe("a gift card's CardFields members other than CardId are never quoted (review S4)", () => {
  const GIFT_CARD_FACTORIES = [
    ["RedeemGiftCard", createRedeemGiftCardHandler],
    ["RefundGiftCard", createRefundGiftCardHandler],
    ["ValidateGiftCard", createValidateGiftCardHandler],
  ] as const;
  // Any member but CardId, any key case, texts and numbers, nested ones too.
  const fields = {
    CardId: "GC-7342",
    Pin: "4321",
    securityCODE: 9876,
    cvv: "5555",
    Extra: { Code: "8080" },
  };
  const SECRETS = /4321|9876|5555|8080/;

  for (const [name, factory] of GIFT_CARD_FACTORIES) {
    for (const wrapped of [false, true]) {
      it(`${name}${wrapped ? " under withIdempotency" : ""}: a thrown error quoting them reaches onError masked, and the 500 body never holds them`, async () => {
        const { failures, onError } = collector();
        const fn = async () => {
          throw new Error("card GC-7342 PIN 4321 code 9876 cvv 5555 extra 8080 rejected");
        };
        const handler = (factory as typeof createRedeemGiftCardHandler)(
          (wrapped ? withIdempotency(fn) : fn) as never,
          { auth: false, onError },
        );
        const request = JSON.stringify({
          OrderId: `GE-S4-${name}-${wrapped}`,
          Amount: "10.00",
          cardFields: fields,
        });
        const response = await handler.handle(post(request));
        expect(response.status).toBe(500);
        expect(response.body).not.toMatch(SECRETS);
        expect(failures).toHaveLength(1);
        expect(printed(failures)).not.toMatch(SECRETS);
        // The card's id is no security code: quoted as it is.
        expect((failures[0]?.error as Error | undefined)?.message).toBe(
          "card GC-7342 PIN *** code *** cvv *** extra *** rejected",
        );
      });
    }
  }

  it("a refusal thrown as a CallbackError quoting the PIN is answered and reported without it; a PIN under three characters is not masked (the stores' minimum)", async () => {
    const { failures, onError } = collector();
    const handler = createRedeemGiftCardHandler(
      async () => {
        throw new CallbackError("PIN_WRONG", "PIN 4321 is wrong", "PIN 4321 refused");
      },
      { auth: false, onError },
    );
    const response = await handler.handle(
      post(JSON.stringify({ CardFields: { CardId: "GC-1", Pin: "4321" }, Amount: "1.00" })),
    );
    expect(response.body).not.toContain("4321");
    expect(printed(failures)).not.toContain("4321");
    const { failures: short, onError: shortOnError } = collector();
    const shortPin = createRedeemGiftCardHandler(
      async () => {
        throw new Error("PIN 42 rejected");
      },
      { auth: false, onError: shortOnError },
    );
    await shortPin.handle(
      post(JSON.stringify({ CardFields: { CardId: "GC-1", Pin: "42" }, Amount: "1.00" })),
    );
    expect((short[0]?.error as Error | undefined)?.message).toBe("PIN 42 rejected");
  });

  for (const wrapped of [false, true]) {
    it(`a CallbackError's code reaches the service intact when it holds a PIN${wrapped ? " (under withIdempotency)" : ""}; its message is still masked (second read E1)`, async () => {
      for (const [pin, code] of [
        ["4001", "4001"],
        ["4001", "GC_4001"],
        ["FUNDS", "INSUFFICIENT_FUNDS"],
      ] as const) {
        const { failures, onError } = collector();
        const fn = async () => {
          throw new CallbackError(code, `PIN ${pin} refused`);
        };
        const handler = createRedeemGiftCardHandler((wrapped ? withIdempotency(fn) : fn) as never, {
          auth: false,
          onError,
        });
        const response = await handler.handle(
          post(
            JSON.stringify({
              OrderId: `GE-E1-${code}-${wrapped}`,
              Amount: "1.00",
              CardFields: { CardId: "GC-1", Pin: pin },
            }),
          ),
        );
        expect(response.status).toBe(200);
        expect(json(response)).toMatchObject({
          Success: false,
          ErrorCode: code,
          Message: "PIN *** refused",
        });
        expect(failures).toHaveLength(1);
        expect(failures[0]?.reason).not.toContain(`PIN ${pin}`);
      }
    });
  }

  it("a 400's answered Description names its paths as they are, even when a PIN is a word of them (the fuzzer's RedeemGiftCard seed 1804228351)", async () => {
    // The library's own descriptions name paths, never request values: the answer masks card data
    // in them, not a gift card's secrets (a PIN "Card" made CardFields.CardId read ***Fields.***Id).
    // onError's reason is a log: masked there all the same.
    for (const [name, factory] of GIFT_CARD_FACTORIES) {
      const { failures, onError } = collector();
      const handler = (factory as typeof createRedeemGiftCardHandler)(() => ({}) as never, {
        auth: false,
        onError,
      });
      const response = await handler.handle(
        post(JSON.stringify({ CardFields: { CardId: { no: 1 }, Pin: "Card" }, Amount: "1.00" })),
      );
      expect(response.status, name).toBe(400);
      expect(json(response)).toMatchObject({ ErrorCode: "INVALID_PAYLOAD" });
      expect(String((json(response) as { Description?: unknown }).Description)).toMatch(
        /^CardFields\.CardId\b/,
      );
      expect(failures.map((f) => f.kind)).toStrictEqual(["invalid_payload"]);
      expect(failures[0]?.reason).not.toContain("Card");
    }
  });

  // The service binds names in any case: a body may hold CardFields twice, in two casings. The key
  // treats both as gift cards (second read E3); the masking reads both too (final read F2).
  const TWO_CASINGS = {
    CardFields: { CardId: "GC-1", Pin: "1111" },
    cardFields: { CardId: "GC-2", Pin: "9876" },
  };
  for (const [name, factory] of GIFT_CARD_FACTORIES) {
    for (const wrapped of [false, true]) {
      it(`${name}${wrapped ? " under withIdempotency" : ""}: CardFields in two casings have both PINs masked in onError and in a CallbackError's answer (final read F2)`, async () => {
        const thrown = collector();
        const fn = async () => {
          throw new Error("PIN 1111 or PIN 9876 rejected");
        };
        const handler = (factory as typeof createRedeemGiftCardHandler)(
          (wrapped ? withIdempotency(fn) : fn) as never,
          { auth: false, onError: thrown.onError },
        );
        const request = (id: string) =>
          post(JSON.stringify({ OrderId: id, Amount: "1.00", ...TWO_CASINGS }));
        const response = await handler.handle(request(`GE-F2-${name}-${wrapped}`));
        expect(response.status).toBe(500);
        expect(response.body).not.toMatch(/1111|9876/);
        expect(thrown.failures).toHaveLength(1);
        expect(printed(thrown.failures)).not.toMatch(/1111|9876/);
        expect((thrown.failures[0]?.error as Error | undefined)?.message).toBe(
          "PIN *** or PIN *** rejected",
        );

        const refused = collector();
        const refuse = async () => {
          throw new CallbackError("PIN_WRONG", "PIN 9876 is wrong", "PIN 1111 refused");
        };
        const refusing = (factory as typeof createRedeemGiftCardHandler)(
          (wrapped ? withIdempotency(refuse) : refuse) as never,
          { auth: false, onError: refused.onError },
        );
        const answer = await refusing.handle(request(`GE-F2-refused-${name}-${wrapped}`));
        expect(answer.status).toBe(200);
        expect(json(answer)).toMatchObject({ ErrorCode: "PIN_WRONG" });
        expect(answer.body).toContain("PIN *** is wrong");
        expect(answer.body).not.toMatch(/1111|9876/);
        expect(refused.failures.length).toBeGreaterThan(0);
        expect(printed(refused.failures)).not.toMatch(/1111|9876/);
      });
    }
  }
});

describe("a payment or gift-card debit refused by returning an ErrorCode (review-left D1)", () => {
  // A result's verdict is the library's to write: a PerformOrderPayment, RedeemGiftCard or
  // RefundGiftCard result that carries an ErrorCode (on the gift-card calls also an ErrorText) and
  // does not say Success: true itself is a refusal written the ResponseInfo way (001 §2.2
  // "ErrorCode: error code on error"). Answered Success: true, the service would take the card
  // as charged, debited or credited; so it is a 500, as Success: false and IsValid: false are.
  const PAYMENT = JSON.stringify({
    OrderId: "GE100",
    MerchantGUID: "g",
    PaymentDetails: { CardNumber: "4111111111111111", CVVNumber: "737", PaymentMethodCode: "VI" },
  });
  const calls = [
    ["PerformOrderPayment", createPerformOrderPaymentHandler, PAYMENT],
    ["RedeemGiftCard", createRedeemGiftCardHandler, CARD_REQUEST],
    ["RefundGiftCard", createRefundGiftCardHandler, CARD_REQUEST],
  ] as const;
  const refused: [string, Record<string, unknown>][] = [
    ["ErrorCode and Message", { ErrorCode: "DECLINED", Message: "Card declined" }],
    ["Success: null", { Success: null, ErrorCode: "DECLINED" }],
    ["Success: undefined", { Success: undefined, ErrorCode: "DECLINED" }],
    ["IsSuccess: null", { IsSuccess: null, ErrorCode: "DECLINED" }],
    ["ErrorCode as a number", { ErrorCode: 100 }],
    ["ErrorCode 0", { ErrorCode: 0 }],
    [
      "the amount beside it",
      { PaymentAmount: 0, PaymentCurrencyCode: "USD", Balance: "3.00", ErrorCode: "DECLINED" },
    ],
  ];
  const giftCardRefused: [string, Record<string, unknown>][] = [
    ["IsValid: null", { IsValid: null, ErrorCode: "CARD_BLOCKED" }],
    ["IsValid: true", { IsValid: true, ErrorCode: "INSUFFICIENT_FUNDS", Balance: "3.00" }],
    ["ErrorText alone", { ErrorText: "Not enough balance", Balance: "3.00" }],
  ];

  for (const [name, factory, request] of calls) {
    const cases = name === "PerformOrderPayment" ? refused : [...refused, ...giftCardRefused];
    it.each(cases)(`${name}: %s is a 500, flagged by the testing kit`, async (_label, result) => {
      const { failures, onError } = collector();
      const handler = (factory as typeof createRedeemGiftCardHandler)(() => result as never, {
        auth: false,
        onError,
      });
      const response = await handler.handle(post(request));
      expect(response.status).toBe(500);
      expect(json(response)).toMatchObject({ Success: false, ErrorCode: "INTERNAL_ERROR" });
      const field = Object.hasOwn(result, "ErrorCode") ? "ErrorCode" : "ErrorText";
      expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
        [
          "internal_error",
          `the handler's result is unusable: "${field}" is set without "Success": true: throw a CallbackError to refuse`,
        ],
      ]);
      expect(
        checkResponse(name, response.status, response.headers["content-type"], response.body),
      ).not.toStrictEqual([]);
    });

    it(`${name}: an explicit Success: true with an ErrorCode (a ported answer), or a blank code, is answered as before`, async () => {
      const { failures, onError } = collector();
      const amount =
        name === "PerformOrderPayment" ? { PaymentAmount: 104, PaymentCurrencyCode: "EUR" } : {};
      const written =
        name === "PerformOrderPayment" ? { PaymentAmount: "104", PaymentCurrencyCode: "EUR" } : {};
      for (const [result, answer] of [
        [{ Success: true, ErrorCode: 100 }, { ErrorCode: "100" }],
        [{ Success: "true", ErrorCode: "100" }, { ErrorCode: "100" }],
        [{ IsSuccess: true, ErrorCode: "100" }, { ErrorCode: "100" }],
        [{ ErrorCode: null, Message: "Paid" }, { Message: "Paid" }],
        [
          { ErrorCode: "", Message: "Paid" },
          { ErrorCode: "", Message: "Paid" },
        ],
        [{ ErrorCode: "  " }, { ErrorCode: "  " }],
        ...(name === "PerformOrderPayment"
          ? []
          : [[{ Success: true, ErrorText: "none" }, { ErrorText: "none" }]]),
      ] as [Record<string, unknown>, Record<string, unknown>][]) {
        const handler = (factory as typeof createRedeemGiftCardHandler)(
          () => ({ ...amount, ...result }) as never,
          { auth: false, onError },
        );
        const response = await handler.handle(post(request));
        expect(response.status, JSON.stringify(result)).toBe(200);
        expect(json(response)).toStrictEqual({ Success: true, ...written, ...answer });
      }
      expect(failures).toStrictEqual([]);
    });
  }

  // An ErrorCode that cannot be answered (not text nor a finite number, or a getter that throws)
  // still says a refusal: left out of the answer, the rest would read Success: true (second-left
  // S1). `return { ErrorCode: pspResponse.error }` with a PSP's error object is plain JS.
  const unusableCode = (): [string, () => Record<string, unknown>][] => [
    ["an object", () => ({ ErrorCode: { code: "DECLINED" } })],
    ["an array", () => ({ ErrorCode: ["DECLINED"] })],
    ["a boolean", () => ({ ErrorCode: true })],
    ["NaN", () => ({ ErrorCode: Number.NaN })],
    [
      "a getter that throws",
      () =>
        Object.defineProperty({}, "ErrorCode", {
          enumerable: true,
          get() {
            throw new Error("lazy");
          },
        }),
    ],
  ];
  for (const [name, factory, request] of calls) {
    const amount =
      name === "PerformOrderPayment" ? { PaymentAmount: "1", PaymentCurrencyCode: "USD" } : {};
    it.each(unusableCode())(
      `${name}: an ErrorCode that is %s, without Success: true, is a 500 too`,
      async (_label, make) => {
        const { failures, onError } = collector();
        const handler = (factory as typeof createRedeemGiftCardHandler)(
          () => Object.assign(make(), amount) as never,
          { auth: false, onError },
        );
        const response = await handler.handle(post(request));
        expect(response.status).toBe(500);
        expect(json(response)).toMatchObject({ Success: false, ErrorCode: "INTERNAL_ERROR" });
        expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
          [
            "internal_error",
            `the handler's result is unusable: "ErrorCode" is set without "Success": true: throw a CallbackError to refuse`,
          ],
        ]);
      },
    );

    it(`${name}: an unusable ErrorCode beside the result's own Success: true is left out with a warning, as before`, async () => {
      const { failures, onError } = collector();
      const handler = (factory as typeof createRedeemGiftCardHandler)(
        () => ({ Success: true, ...amount, ErrorCode: { code: 100 } }) as never,
        { auth: false, onError },
      );
      const response = await handler.handle(post(request));
      expect(response.status).toBe(200);
      expect(json(response)).toStrictEqual({ Success: true, ...amount });
      expect(failures.map((f) => f.kind)).toStrictEqual(["result_incomplete"]);
    });
  }

  it("RedeemGiftCard: an ErrorText that is an object, without Success: true, is a 500", async () => {
    const { failures, onError } = collector();
    const handler = createRedeemGiftCardHandler(
      () => ({ Balance: "3.00", ErrorText: { text: "Not enough balance" } }) as never,
      { auth: false, onError },
    );
    const response = await handler.handle(post(CARD_REQUEST));
    expect(response.status).toBe(500);
    expect(failures.map((f) => f.reason)).toStrictEqual([
      `the handler's result is unusable: "ErrorText" is set without "Success": true: throw a CallbackError to refuse`,
    ]);
  });

  it("the other callbacks answering Success: true are not changed: an ErrorCode there is answered as before", async () => {
    // SendOrderToMerchant, UpdateOrderStatus and the other ResponseInfo callbacks: the order (or
    // the status, the refund) exists whatever the code says, and a 500 would deliver it again.
    // (An order without a card: one with a card to charge is warned of, see below.)
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => ({ InternalOrderId: "M-1", ErrorCode: "PARTIAL" }),
      { auth: false, onError },
    );
    const { PaymentDetails: _card, ...withoutCard } = JSON.parse(ORDER) as Record<string, unknown>;
    const response = await handler.handle(post(JSON.stringify(withoutCard)));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({
      Success: true,
      InternalOrderId: "M-1",
      ErrorCode: "PARTIAL",
    });
    // A validation's verdict is IsValid, required: IsValid false with an ErrorCode is its answer.
    const validate = createValidateGiftCardHandler(
      () => ({ IsValid: false, ErrorCode: "CARD_BLOCKED" }),
      { auth: false, onError },
    );
    const validated = await validate.handle(post(CARD_REQUEST));
    expect(json(validated)).toStrictEqual({
      Success: true,
      IsValid: false,
      ErrorCode: "CARD_BLOCKED",
    });
    expect(failures).toStrictEqual([]);
  });

  // 001 §4.2: an order carrying a card in PaymentDetails is charged in SendOrderToMerchant. An
  // ErrorCode without the result's own Success: true may be a decline the service will take as paid;
  // still a 200 (the order exists: a 500 would deliver it again), with one warning (second-left S2).
  const CHARGED_ORDER = readFileSync(
    new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
    "utf8",
  );
  it("SendOrderToMerchant with a card: an ErrorCode without Success: true is answered 200 with one result_incomplete warning", async () => {
    for (const code of ["DECLINED", 51, { code: "DECLINED" }] as const) {
      const { failures, onError } = collector();
      const handler = createSendOrderToMerchantHandler(
        () =>
          ({
            InternalOrderId: "M1",
            PaymentAmount: "0",
            PaymentCurrencyCode: "USD",
            ErrorCode: code,
            Message: "Card declined",
          }) as never,
        { auth: false, onError },
      );
      const response = await handler.handle(post(CHARGED_ORDER));
      expect(response.status).toBe(200);
      expect(json(response)).toMatchObject({ Success: true, InternalOrderId: "M1" });
      const warned = failures.filter((f) => f.reason.includes("charges"));
      expect(warned.map((f) => [f.kind, f.status, f.severity, f.reason])).toStrictEqual([
        [
          "result_incomplete",
          200,
          "warning",
          `the handler's result carries "ErrorCode" without "Success": true, answered 200 all the same (the order exists: a 500 would deliver it again): the order carried a card, which SendOrderToMerchant charges (001 §4.2), and the service takes it as paid; if the payment was refused, throw a CallbackError`,
        ],
      ]);
      expect(printed(failures)).not.toContain("4111111111111111");
    }
  });

  it("SendOrderToMerchant with a card: the warning holds when the function clears the card once charged (final-1 F2)", async () => {
    // PCI hygiene after the charge: the card number nulled, deleted, or the payment details
    // dropped. The order carried a card when it came in, which is what the warning is about.
    type Order = { PaymentDetails?: Record<string, unknown> | null };
    const clearings: readonly ((order: Order) => void)[] = [
      (order) => {
        if (order.PaymentDetails) order.PaymentDetails.CardNumber = null;
      },
      (order) => {
        if (order.PaymentDetails) delete order.PaymentDetails.CardNumber;
      },
      (order) => {
        order.PaymentDetails = null;
      },
    ];
    for (const clear of clearings) {
      const { failures, onError } = collector();
      const handler = createSendOrderToMerchantHandler(
        ((order: Order) => {
          clear(order);
          return { InternalOrderId: "M1", ErrorCode: "DECLINED" };
        }) as never,
        { auth: false, onError },
      );
      const response = await handler.handle(post(CHARGED_ORDER));
      expect(response.status).toBe(200);
      expect(json(response)).toStrictEqual({
        Success: true,
        InternalOrderId: "M1",
        ErrorCode: "DECLINED",
      });
      expect(
        failures.map((f) => [f.kind, f.severity]),
        clear.toString(),
      ).toStrictEqual([["result_incomplete", "warning"]]);
      expect(failures[0]?.reason).toContain("SendOrderToMerchant charges (001 §4.2)");
    }
  });

  it("SendOrderToMerchant: no such warning with the result's own Success: true, without a code, or without a card to charge", async () => {
    const card = JSON.parse(CHARGED_ORDER) as Record<string, unknown>;
    const { PaymentDetails: _details, ...noCard } = card;
    for (const [request, result] of [
      [CHARGED_ORDER, { Success: true, InternalOrderId: "M1", ErrorCode: 100 }],
      [CHARGED_ORDER, { InternalOrderId: "M1", ErrorCode: null, Message: "ok" }],
      [CHARGED_ORDER, { InternalOrderId: "M1", ErrorCode: " " }],
      [JSON.stringify(noCard), { InternalOrderId: "M1", ErrorCode: "DECLINED" }],
      [
        JSON.stringify({ ...noCard, PaymentDetails: { PaymentMethodCode: "OT" } }),
        { InternalOrderId: "M1", ErrorCode: "DECLINED" },
      ],
    ] as const) {
      const { failures, onError } = collector();
      const handler = createSendOrderToMerchantHandler(() => result as never, {
        auth: false,
        onError,
      });
      const response = await handler.handle(post(request));
      expect(response.status).toBe(200);
      expect(failures, JSON.stringify(result)).toStrictEqual([]);
    }
  });
});

describe("a result whose fields are accessors (a class with getters) is answered with them (review truth TRUTH-1)", () => {
  class OrderAck {
    readonly #id: string;
    constructor(id: string) {
      this.#id = id;
    }
    get InternalOrderId(): string {
      return this.#id;
    }
  }
  class PaymentAck {
    get InternalOrderId(): string {
      return "M-1";
    }
    get PaymentAmount(): string {
      return "10.00";
    }
    get PaymentCurrencyCode(): string {
      return "EUR";
    }
  }
  class CardCheck {
    readonly #ok: boolean;
    constructor(ok: boolean) {
      this.#ok = ok;
    }
    get IsValid(): boolean {
      return this.#ok;
    }
  }
  const PAYMENT = JSON.stringify({
    OrderId: "GE1",
    PaymentDetails: { CardNumber: null, CVVNumber: null, PaymentMethodCode: "OT" },
  });

  it("SendOrderToMerchant: the getter's InternalOrderId is answered, without a warning", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => new OrderAck("M-42"), {
      auth: false,
      onError,
    });
    const response = await handler.handle(post(ORDER));
    expect(json(response)).toStrictEqual({ Success: true, InternalOrderId: "M-42" });
    expect(failures).toStrictEqual([]);
  });

  it("PerformOrderPayment: the amount and currency charged are answered", async () => {
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(() => new PaymentAck(), {
      auth: false,
      onError,
    });
    const response = await handler.handle(post(PAYMENT));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({
      Success: true,
      InternalOrderId: "M-1",
      PaymentAmount: "10.00",
      PaymentCurrencyCode: "EUR",
    });
    expect(failures).toStrictEqual([]);
  });

  it("ValidateGiftCard: a getter's IsValid true is a valid card, not a 500; false is answered false", async () => {
    for (const ok of [true, false]) {
      const { failures, onError } = collector();
      const handler = createValidateGiftCardHandler(() => new CardCheck(ok), {
        auth: false,
        onError,
      });
      const response = await handler.handle(post(CARD_REQUEST));
      expect(response.status).toBe(200);
      expect(json(response)).toStrictEqual({ Success: true, IsValid: ok });
      expect(failures).toStrictEqual([]);
    }
  });

  it("an inherited Success getter that is not true is a 500; an unknown getter is neither answered nor named", async () => {
    class Refused extends OrderAck {
      get Success(): boolean {
        return false;
      }
      get Extra(): string {
        return "x";
      }
    }
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => new Refused("M-1") as OrderAck, {
      auth: false,
      onError,
    });
    expect((await handler.handle(post(ORDER))).status).toBe(500);
    expect(failures[0]?.reason).toContain('"Success" is not true');
  });

  it("a getter on the prototype that throws is named like an own one", async () => {
    class Lazy extends OrderAck {
      get OrderId(): string {
        throw new Error("not loaded");
      }
    }
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => new Lazy("M-1"), {
      auth: false,
      onError,
    });
    const response = await handler.handle(post(ORDER));
    expect(json(response)).toStrictEqual({ Success: true, InternalOrderId: "M-1" });
    expect(failures.map((f) => f.reason)).toStrictEqual([
      `the handler's result is incomplete, answered 200 all the same (the function has run): field "OrderId" could not be read`,
    ]);
  });
});

describe("a number in a result is written as decimal text, never an exponent (review truth TRUTH-5)", () => {
  const PAYMENT = JSON.stringify({
    OrderId: "GE1",
    PaymentDetails: { CardNumber: null, CVVNumber: null, PaymentMethodCode: "OT" },
  });

  it("writtenText: the shortest digits of the double, without exponent, read back to the same number", () => {
    const cases: [number, string][] = [
      [1e-7, "0.0000001"],
      [1e21, "1000000000000000000000"],
      [-1.5e-10, "-0.00000000015"],
      [1.2345e25, "12345000000000000000000000"],
      [5e-324, `0.${"0".repeat(323)}5`],
      [123.45, "123.45"],
      [-0, "0"],
      [0.000001, "0.000001"],
    ];
    for (const [value, text] of cases) expect(writtenText(value)).toBe(text);
    for (let i = 0; i < 2000; i++) {
      const value = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 80 - 40);
      const text = writtenText(value) as string;
      expect(text).toMatch(/^-?\d+(\.\d+)?$/);
      expect(Number(text)).toBe(value);
    }
  });

  it("PerformOrderPayment: 1e-7 and 1e21 are answered 0.0000001 and 1000000000000000000000", async () => {
    for (const [amount, text] of [
      [1e-7, "0.0000001"],
      [1e21, "1000000000000000000000"],
    ] as const) {
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        () => ({ InternalOrderId: "M-1", PaymentAmount: amount, PaymentCurrencyCode: "EUR" }),
        { auth: false, onError },
      );
      const response = await handler.handle(post(PAYMENT));
      expect((json(response) as Record<string, unknown>).PaymentAmount).toBe(text);
      // 1e21 is an integer beyond 2^53: its digits are the double's, said in a warning.
      expect(failures.length).toBe(amount === 1e21 ? 1 : 0);
    }
  });

  it("an integer id beyond 2^53 is written with a result_incomplete warning naming it; 2^53 - 1 without", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(
      () => ({ InternalOrderId: 2 ** 53 + 2, OrderId: Number.MAX_SAFE_INTEGER }),
      { auth: false, onError },
    );
    const response = await handler.handle(post(ORDER));
    expect(response.status).toBe(200);
    expect(json(response)).toStrictEqual({
      Success: true,
      InternalOrderId: "9007199254740994",
      OrderId: "9007199254740991",
    });
    expect(failures.map((f) => [f.kind, f.reason])).toStrictEqual([
      [
        "result_incomplete",
        `the handler's result is incomplete, answered 200 all the same (the function has run): field "InternalOrderId" is an integer beyond 2^53, written 9007199254740994, which may not be the number meant: return it as text`,
      ],
    ]);
  });
});
