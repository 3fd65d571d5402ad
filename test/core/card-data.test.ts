// security.md cases 24, 27 and 28; PCI DSS 3.3.1 / 3.4.1 / 3.5.1. Luhn-valid card numbers and
// CVVs go through every failure path; none may appear in a response, a header, a log line or an
// error the library writes.
import { inspect } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { maskCardNumber } from "../../src/core/card.js";
import {
  type BodyInput,
  type CallbackEndpoint,
  CallbackError,
  type CallbackFailure,
  type CallbackHandler,
  type CallbackRequest,
  type CallbackResponse,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
  createUpdateOrderStatusHandler,
  type HandlerOptions,
  type PaymentDetails,
  redactCardNumbers,
} from "../../src/index.js";
import {
  captureConsole,
  encoder,
  parsed,
  post,
  StubAuthenticator,
  trackedStream,
} from "./helpers.js";
import { paymentDetails, withCheckDigit } from "./leaks.js";

// ---------------------------------------------------------------------------------------------
// Test cards
// ---------------------------------------------------------------------------------------------

const VISA = "4111111111111111";
const MASTERCARD = "5555555555554444";
const AMEX = "378282246310005";
const LONG = withCheckDigit("622126000000000001"); // 19 digits
const PANS = [VISA, MASTERCARD, AMEX, LONG] as const;
const CVVS = ["737", "0123", "4821"] as const;

/** How a card number may be written in free text. */
function spellings(pan: string): string[] {
  const groups = pan.match(/.{1,4}/g) ?? [];
  return [pan, groups.join(" "), groups.join("-")];
}

/** Whether a text carries the card number in any spelling (spaces and dashes ignored). */
function carriesPan(text: string, pan: string): boolean {
  return text.replace(/[\s-]/g, "").includes(pan);
}

/** Whether a text carries the CVV as a standalone value. Stack frames are left out. */
function carriesCvv(text: string, cvv: string): boolean {
  const withoutStacks = text.replace(/\n\s+at .*/g, "");
  return new RegExp(`(?<![0-9])${cvv}(?![0-9])`).test(withoutStacks);
}

function order(pan: string, cvv: string): Record<string, unknown> {
  return {
    OrderId: "GE100",
    MerchantGUID: "guid-1",
    StatusCode: "new",
    Products: [{ Sku: "SKU-1", Price: 10, Quantity: 1, VATRate: 20 }],
    PaymentDetails: paymentDetails(pan, cvv),
  };
}

// ---------------------------------------------------------------------------------------------
// Capturing everything the library writes
// ---------------------------------------------------------------------------------------------

interface Capture {
  /** Every console line (error, warn, log, info, debug), as inspected text. */
  readonly logs: string[];
  /** What a custom onError received, as JSON and as util.inspect, with the merchant's error apart. */
  readonly hooks: string[];
  readonly failures: CallbackFailure[];
}

let capture: Capture;
const logs = captureConsole();

beforeEach(() => {
  capture = { logs, hooks: [], failures: [] };
});

/**
 * Keeps what a custom onError received, the error included: the hook gets a scrubbed copy of the
 * merchant's exception, never the exception itself, so every part of it is checked.
 */
function collectingOnError(failure: CallbackFailure): void {
  capture.failures.push(failure);
  const { error, ...rest } = failure;
  capture.hooks.push(JSON.stringify(rest), inspect(rest, { depth: 10 }));
  capture.hooks.push(JSON.stringify(error) ?? "", inspect(error, { depth: 10, showHidden: true }));
  if (error instanceof Error) {
    capture.hooks.push(error.message, error.stack ?? "", String(error.cause ?? ""));
  }
}

type HookMode = "custom" | "default";

function texts(response: CallbackResponse): string[] {
  return [response.body, JSON.stringify(response.headers), ...capture.logs, ...capture.hooks];
}

function expectNoCardData(response: CallbackResponse, pan: string, cvv: string): void {
  for (const text of texts(response)) {
    for (const spelling of spellings(pan)) expect(text).not.toContain(spelling);
    expect(carriesPan(text, pan), text).toBe(false);
    expect(carriesCvv(text, cvv), text).toBe(false);
  }
}

type Fn = (payload: unknown, context: unknown) => unknown;
type Factory = (fn: Fn, options: HandlerOptions) => CallbackHandler;

const FACTORIES: ReadonlyArray<[string, Factory]> = [
  ["SendOrderToMerchant", createSendOrderToMerchantHandler as unknown as Factory],
  ["PerformOrderPayment", createPerformOrderPaymentHandler as unknown as Factory],
  ["UpdateOrderStatus", createUpdateOrderStatusHandler as unknown as Factory],
];

function handlerFor(
  factory: Factory,
  mode: HookMode,
  fn: Fn,
  options: Partial<HandlerOptions> = {},
) {
  return factory(fn, {
    auth: false,
    ...(mode === "custom" ? { onError: collectingOnError } : {}),
    ...options,
  });
}

// ---------------------------------------------------------------------------------------------
// Every failure path
// ---------------------------------------------------------------------------------------------

interface Path {
  readonly name: string;
  /** The kind the path must end in (so a path that silently succeeds fails the test). */
  readonly kind: CallbackFailure["kind"] | "success";
  readonly status: number;
  run(factory: Factory, mode: HookMode, pan: string, cvv: string): Promise<CallbackResponse>;
}

/** A result every one of FACTORIES accepts (SendOrderToMerchant and PerformOrderPayment require fields). */
const OK_RESULT = { InternalOrderId: "M-1", PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" };
const ok: Fn = () => OK_RESULT;

const PATHS: readonly Path[] = [
  {
    name: "bad token (AuthenticationError), body never read",
    kind: "unauthorized",
    status: 401,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { auth: new StubAuthenticator("deny") }).handle(
        post(JSON.stringify(order(pan, cvv)), { authorization: "Bearer abc.def.ghi" }),
      ),
  },
  {
    name: "authenticator throwing a TypeError",
    kind: "unauthorized",
    status: 401,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { auth: new StubAuthenticator("type-error") }).handle(
        post(JSON.stringify(order(pan, cvv))),
      ),
  },
  {
    name: "payload check refusing after the body was parsed (merchant GUID)",
    kind: "unauthorized",
    status: 401,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { auth: new StubAuthenticator("deny-payload") }).handle(
        post(JSON.stringify(order(pan, cvv))),
      ),
  },
  {
    name: "malformed JSON quoting the card (truncated)",
    kind: "malformed_body",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(
        post(`{"PaymentDetails":{"CardNumber":"${pan}","CVVNumber":"${cvv}", `),
      ),
  },
  {
    name: "malformed JSON with the card as a bare token",
    kind: "malformed_body",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(post(`{"CardNumber": ${pan}x, "CVV": ${cvv}}`)),
  },
  {
    name: "invalid UTF-8 next to the card",
    kind: "malformed_body",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(
        post(
          new Uint8Array([
            ...encoder.encode(`{"CardNumber":"${pan}","CVVNumber":"${cvv}","x":"`),
            0xff,
            ...encoder.encode('"}'),
          ]),
        ),
      ),
  },
  {
    name: "schema failure: card number and CVV as JSON numbers",
    kind: "invalid_payload",
    status: 400,
    run: (factory, mode, pan, cvv) => {
      const body = JSON.stringify(order(pan, cvv))
        .replace(`"${pan}"`, pan)
        .replace(`"${cvv}"`, String(Number(cvv)));
      return handlerFor(factory, mode, ok).handle(post(body));
    },
  },
  {
    name: "schema failure elsewhere, a valid card present",
    kind: "invalid_payload",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(
        post(
          JSON.stringify({ ...order(pan, cvv), OrderId: 12345, StatusCode: 7, Products: "none" }),
        ),
      ),
  },
  {
    name: "schema failure on an already-parsed body",
    kind: "invalid_payload",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(
        post(
          parsed({
            ...order(pan, cvv),
            OrderId: null,
            PaymentDetails: { CardNumber: Number(pan.slice(0, 15)), CVVNumber: cvv },
          }),
        ),
      ),
  },
  {
    name: "the handler's CallbackError quoting the card",
    kind: "handler_failure",
    status: 200,
    run: (factory, mode, pan) =>
      handlerFor(factory, mode, () => {
        throw new CallbackError(
          "DECLINED",
          `Card ${spellings(pan)[1]} declined`,
          `issuer refused ${pan}`,
        );
      }).handle(post(JSON.stringify(order(pan, "737")))),
  },
  {
    name: "the handler throwing new Error('card ' + pan)",
    kind: "internal_error",
    status: 500,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, () => {
        throw new Error(`card ${pan} failed`);
      }).handle(post(JSON.stringify(order(pan, cvv)))),
  },
  {
    name: "the handler throwing with the card followed by more digits",
    kind: "internal_error",
    status: 500,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, () => {
        throw new TypeError(`charge failed: ${pan} 2030 ${spellings(pan)[2]}-03`);
      }).handle(post(JSON.stringify(order(pan, cvv)))),
  },
  {
    // An unknown field is left out of the answer and reported as a warning naming the field.
    name: "the handler returning a result with the card (unknown field)",
    kind: "result_fields_ignored",
    status: 200,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, (payload) => ({
        ...OK_RESULT,
        CardNumber: (payload as { PaymentDetails: PaymentDetails }).PaymentDetails.CardNumber,
      })).handle(post(JSON.stringify(order(pan, cvv)))),
  },
  {
    name: "the handler returning the payment object as a field",
    // Left out of the answer, which is sent: the function has run (a warning, not a 500).
    kind: "result_incomplete",
    status: 200,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, (payload) => ({
        Message: (payload as { PaymentDetails: unknown }).PaymentDetails,
      })).handle(post(JSON.stringify(order(pan, cvv)))),
  },
  {
    name: "oversized body",
    kind: "payload_too_large",
    status: 413,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { maxBodyBytes: 100 }).handle(
        post(JSON.stringify(order(pan, cvv))),
      ),
  },
  {
    name: "oversized stream",
    kind: "payload_too_large",
    status: 413,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { maxBodyBytes: 100 }).handle(
        post(trackedStream([encoder.encode(JSON.stringify(order(pan, cvv)))]).stream),
      ),
  },
  {
    name: "compressed stream",
    kind: "unsupported_media_type",
    status: 415,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok).handle(
        post(trackedStream([encoder.encode(JSON.stringify(order(pan, cvv)))]).stream, {
          "content-encoding": "br",
        }),
      ),
  },
  {
    name: "too deep",
    kind: "malformed_body",
    status: 400,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, ok, { maxDepth: 2 }).handle(post(JSON.stringify(order(pan, cvv)))),
  },
  {
    name: "the success path",
    kind: "success",
    status: 200,
    run: (factory, mode, pan, cvv) =>
      handlerFor(factory, mode, () => ({ ...OK_RESULT, Message: "charged" })).handle(
        post(JSON.stringify(order(pan, cvv))),
      ),
  },
];

describe("no card number or CVV in any response, header, log line or error", () => {
  for (const [callback, factory] of FACTORIES) {
    describe(callback, () => {
      for (const path of PATHS) {
        for (const mode of ["custom", "default"] as const) {
          it(`${path.name} (${mode} onError)`, async () => {
            for (const [i, pan] of PANS.entries()) {
              const cvv = CVVS[i % CVVS.length] as string;
              capture.logs.length = 0;
              capture.hooks.length = 0;
              capture.failures.length = 0;
              const response = await path.run(factory, mode, pan, cvv);
              expect(response.status).toBe(path.status);
              if (path.kind === "success") {
                expect(capture.logs).toStrictEqual([]);
              } else if (mode === "custom") {
                expect(capture.failures.map((f) => f.kind)).toStrictEqual([path.kind]);
                expect(capture.logs).toStrictEqual([]);
              } else {
                // The default hook wrote exactly one line, and it is the one checked.
                expect(capture.logs).toHaveLength(1);
                expect(capture.logs[0]).toContain(` ${path.kind}: `);
              }
              expectNoCardData(response, pan, cvv);
            }
          });
        }
      }
    });
  }

  it("the default logger masks the merchant's card number but keeps the last four digits", async () => {
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new Error(`card ${VISA} refused`);
      },
      { auth: false },
    );
    await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(capture.logs).toStrictEqual([
      "[crossborder-callbacks] SendOrderToMerchant order GE100 500 internal_error: the handler threw (Error: card ************1111 refused)",
    ]);
  });

  it("a CallbackError quoting the card reaches the service masked", async () => {
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new CallbackError("DECLINED", `Card ${VISA} declined`, `See 4111-1111-1111-1111`);
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(JSON.parse(response.body)).toStrictEqual({
      Success: false,
      ErrorCode: "DECLINED",
      Message: "Card ************1111 declined",
      Description: "See ****-****-****-1111",
    });
    expect(capture.failures[0]?.reason).toBe("DECLINED: Card ************1111 declined");
  });

  it("the custom onError receives a scrubbed copy of the merchant's exception, never the exception", async () => {
    // A payment provider's error: the posted card in its cause and in a property.
    class ProviderError extends Error {
      override readonly name = "ProviderError";
      readonly code = `E_CARD_${VISA}`;
      readonly request = { body: JSON.stringify({ card: VISA, cvv: "737" }) };
      readonly status = 402;
    }
    const original = new ProviderError(`charge of ${VISA} (cvv 737) refused`, {
      cause: { card: VISA },
    });
    for (const hook of ["the hook", "the default hook"] as const) {
      capture.logs.length = 0;
      capture.failures.length = 0;
      const handler = createPerformOrderPaymentHandler(
        () => {
          throw original;
        },
        { auth: false, ...(hook === "the hook" ? { onError: collectingOnError } : {}) },
      );
      const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
      expect(response.status).toBe(500);
      if (hook === "the default hook") {
        expect(capture.logs).toStrictEqual([
          "[crossborder-callbacks] PerformOrderPayment order GE100 500 internal_error: the handler threw (ProviderError: charge of ************1111 (cvv ***) refused)",
        ]);
        continue;
      }
      expect(capture.failures).toHaveLength(1);
      const failure = capture.failures[0] as CallbackFailure;
      expect(failure.reason).toBe("the handler threw");
      const copy = failure.error as Error & Record<string, unknown>;
      expect(copy).not.toBe(original);
      expect(copy).toBeInstanceOf(Error);
      expect(copy).not.toBeInstanceOf(ProviderError);
      expect(copy.name).toBe("ProviderError");
      expect(copy.message).toBe("charge of ************1111 (cvv ***) refused");
      expect(copy.code).toBe("E_CARD_************1111");
      expect(copy.cause).toBeUndefined();
      expect("cause" in copy).toBe(false);
      expect("request" in copy).toBe(false);
      expect("status" in copy).toBe(false);
      expect(Object.getOwnPropertyNames(copy).sort()).toStrictEqual([
        "code",
        "message",
        "name",
        "stack",
      ]);
      expect(copy.stack).toBeTypeOf("string");
      expect(carriesPan(copy.stack ?? "", VISA)).toBe(false);
      expect(copy.stack).toContain("charge of ************1111 (cvv ***) refused");
      expect(carriesPan(copy.message, VISA)).toBe(false);
      expect(carriesPan(inspect(copy, { showHidden: true, depth: 10 }), VISA)).toBe(false);
      // The merchant's own object is left as it was.
      expect(original.cause).toStrictEqual({ card: VISA });
      expect(original.message).toContain(VISA);
    }
  });

  it("a CallbackError's scrubbed copy keeps its code, drops its cause", async () => {
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new CallbackError("DECLINED", `Card ${VISA} declined`, undefined, {
          cause: { card: VISA },
        });
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(response.status).toBe(200);
    const copy = capture.failures[0]?.error as Error & Record<string, unknown>;
    expect(copy).toBeInstanceOf(CallbackError);
    expect(copy).toMatchObject({
      name: "CallbackError",
      code: "DECLINED",
      message: "Card ************1111 declined",
      description: undefined,
    });
    expect("cause" in copy).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// This request's own card number and CVV, quoted literally by the merchant
// ---------------------------------------------------------------------------------------------

describe("per-request redaction of the card number and CVV", () => {
  /** Not Luhn-valid: only this request's own card data says it is a card number. */
  const ODD_PAN = "1234567812345678";

  it("a CallbackError quoting this request's CVV: *** in the body, the reason and the copy", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw new CallbackError(
          "CVV_MISMATCH",
          "cvv 737 does not match (order 17371)",
          "Retry with another card than 737",
          { cause: "737" },
        );
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toStrictEqual({
      Success: false,
      ErrorCode: "CVV_MISMATCH",
      Message: "cvv *** does not match (order 17371)",
      Description: "Retry with another card than ***",
    });
    const failure = capture.failures[0] as CallbackFailure;
    expect(failure.kind).toBe("handler_failure");
    expect(failure.reason).toBe("CVV_MISMATCH: cvv *** does not match (order 17371)");
    const copy = failure.error as Error;
    expect(copy.message).toBe("cvv *** does not match (order 17371)");
    expect(copy.stack).toContain("cvv *** does not match (order 17371)");
    expect(carriesCvv(copy.stack ?? "", "737")).toBe(false);
  });

  it("an exception quoting this request's CVV and card number (not Luhn-valid): *** everywhere", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw new Error(`card ${ODD_PAN} with cvv 0123 refused, order 17371, ref 00123`);
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(ODD_PAN, "0123"))));
    expect(response.status).toBe(500);
    expect(response.body).not.toContain(ODD_PAN);
    expect(response.body).not.toContain("0123");
    const copy = capture.failures[0]?.error as Error;
    expect(copy.message).toBe("card *** with cvv *** refused, order 17371, ref 00123");
    expect(copy.stack).not.toContain(ODD_PAN);

    const declining = createPerformOrderPaymentHandler(
      () => {
        throw new CallbackError("DECLINED", `Card ${ODD_PAN} declined`, `cvv 0123, ref 00123`);
      },
      { auth: false, onError: collectingOnError },
    );
    const declined = await declining.handle(post(JSON.stringify(order(ODD_PAN, "0123"))));
    expect(JSON.parse(declined.body)).toStrictEqual({
      Success: false,
      ErrorCode: "DECLINED",
      Message: "Card *** declined",
      Description: "cvv ***, ref 00123",
    });
    expect(capture.failures[1]?.reason).toBe("DECLINED: Card *** declined");
  });

  it("this request's card number (not Luhn-valid) is masked whatever separators quote it", async () => {
    const groups = ODD_PAN.match(/.{1,4}/g) ?? [];
    const sent = groups.join(" ");
    for (const quoted of [ODD_PAN, groups.join("-"), groups.join("+"), groups.join(" ")]) {
      capture.failures.length = 0;
      const declining = createPerformOrderPaymentHandler(
        () => {
          throw new CallbackError("DECLINED", `Card ${quoted} declined`, "ref 00123");
        },
        { auth: false, onError: collectingOnError },
      );
      const declined = await declining.handle(post(JSON.stringify(order(sent, "0123"))));
      expect(JSON.parse(declined.body).Message).toBe("Card *** declined");
      expect(capture.failures[0]?.reason).toBe("DECLINED: Card *** declined");
      const failing = createPerformOrderPaymentHandler(
        () => {
          throw new Error(`card ${quoted} refused`);
        },
        { auth: false, onError: collectingOnError },
      );
      expect((await failing.handle(post(JSON.stringify(order(sent, "0123"))))).status).toBe(500);
      expect((capture.failures[1]?.error as Error | undefined)?.message).toBe("card *** refused");
    }
    // Sent without separators, quoted with them.
    capture.failures.length = 0;
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw new Error(`card ${groups.join("-")} refused`);
      },
      { auth: false, onError: collectingOnError },
    );
    await handler.handle(post(JSON.stringify(order(ODD_PAN, "0123"))));
    expect((capture.failures[0]?.error as Error | undefined)?.message).toBe("card *** refused");
  });

  it("this request's card number sent with dots and quoted plainly is masked", async () => {
    const groups = ODD_PAN.match(/.{1,4}/g) ?? [];
    const declining = createPerformOrderPaymentHandler(
      () => {
        throw new CallbackError("DECLINED", `Card ${ODD_PAN} declined`);
      },
      { auth: false, onError: collectingOnError },
    );
    const declined = await declining.handle(post(JSON.stringify(order(groups.join("."), "0123"))));
    expect(JSON.parse(declined.body).Message).toBe("Card *** declined");
    expect(capture.failures[0]?.reason).toBe("DECLINED: Card *** declined");
  });

  // Found by mutation testing: a 12-digit card number (the shortest, ISO/IEC 7812) sent without
  // separators was masked only where quoted the same way.
  it("this request's 12-digit card number is masked whatever separators quote it", async () => {
    const SHORT_PAN = "601100099999";
    const quoted = "6011 0009 9999";
    const declining = createPerformOrderPaymentHandler(
      () => {
        throw new CallbackError("DECLINED", `Card ${quoted} declined`);
      },
      { auth: false, onError: collectingOnError },
    );
    const declined = await declining.handle(post(JSON.stringify(order(SHORT_PAN, "0123"))));
    expect(JSON.parse(declined.body).Message).toBe("Card *** declined");
    expect(capture.failures[0]?.reason).toBe("DECLINED: Card *** declined");
  });

  // Found by mutation testing (a real leak): the redactor found this request's card number only
  // in runs of digits with single spaces, dashes or `+` between them, while the README promises it
  // masked "wherever quoted"; `4111.1111.1111.1111` in a CallbackError went out whole, in the
  // answer and to onError. A text still holding its digits in order now has every digit masked, as
  // the answer's ids and amounts already had.
  it("this request's card number quoted with other separators (dots, slashes) has no digit let out", async () => {
    const groups = ODD_PAN.match(/.{1,4}/g) ?? [];
    for (const [sent, quoted] of [
      [ODD_PAN, groups.join(".")],
      [groups.join(" "), groups.join("/")],
      [VISA, "4111.1111.1111.1111"],
      // Sent with other separators than one space, dash or `+` (found by the final reader).
      ["4111  1111  1111  1111", "4111.1111.1111.1111"],
      ["4111\u00a01111\u00a01111\u00a01111", "4111.1111.1111.1111"],
      [groups.join("."), groups.join("/")],
    ] as const) {
      capture.failures.length = 0;
      const declining = createPerformOrderPaymentHandler(
        () => {
          throw new CallbackError("DECLINED", `Card ${quoted} declined`, `ref ${quoted}`);
        },
        { auth: false, onError: collectingOnError },
      );
      const declined = await declining.handle(post(JSON.stringify(order(sent, "0123"))));
      const masked = `Card ${quoted.replace(/[0-9]/g, "*")} declined`;
      expect(JSON.parse(declined.body).Message).toBe(masked);
      expect(JSON.parse(declined.body).Description).toBe(`ref ${quoted.replace(/[0-9]/g, "*")}`);
      expect(capture.failures[0]?.reason).toBe(`DECLINED: ${masked}`);
      const failing = createPerformOrderPaymentHandler(
        () => {
          throw new Error(`card ${quoted} refused`);
        },
        { auth: false, onError: collectingOnError },
      );
      expect((await failing.handle(post(JSON.stringify(order(sent, "0123"))))).status).toBe(500);
      const message = (capture.failures[1]?.error as Error | undefined)?.message ?? "";
      expect(message).toBe(`card ${quoted.replace(/[0-9]/g, "*")} refused`);
      // An id of the answer quoting it the same way (only this request's card is masked there).
      const answering = createPerformOrderPaymentHandler(
        () => ({
          InternalOrderId: `ref ${quoted}`,
          PaymentAmount: "10.00",
          PaymentCurrencyCode: "EUR",
        }),
        { auth: false, onError: collectingOnError },
      );
      const answered = await answering.handle(post(JSON.stringify(order(sent, "0123"))));
      expect(answered.status).toBe(200);
      expect(JSON.parse(answered.body).InternalOrderId).toBe(
        `ref ${quoted.replace(/[0-9]/g, "*")}`,
      );
    }
  });

  // Review PAN D2: a quote of this request's card with percent-encoded separators (as an encoded
  // field spells it) held digits of its own ("20" of `%20`), so the card's digits were not found
  // in order and the text went out whole: in the answer, to onError, to the console.
  const spelled = (pan: string, gap: string) =>
    gap === "each digit"
      ? [...pan].map((d) => `%3${d}`).join("")
      : (pan.match(/.{4}/g) ?? []).join(gap);
  it.each([
    ["%20", "%20"],
    ["%2b (the service's own encoding of `+`)", "%2b"],
    ["%2B", "%2B"],
    ["%2D", "%2D"],
    ["%C2%A0", "%C2%A0"],
    ["every digit escaped", "each digit"],
    // Second reading of PAN (S2): separators that hold digits of their own, other than `%xx`.
    ["&#160; (an HTML-escaped no-break space)", "&#160;"],
    ["&#32;", "&#32;"],
    ["%2520 (encoded twice)", "%2520"],
    ["\\u00a0 (a JSON escape written as text)", "\\u00a0"],
  ])(
    "this request's card number quoted with %s separators: every digit masked",
    async (_label, gap) => {
      /** The digits a reader sees, escapes read. */
      const decodedDigits = (text: string) =>
        text
          .replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => {
            const char = String.fromCharCode(Number.parseInt(hex, 16));
            return /[0-9]/.test(char) ? char : "";
          })
          .replace(/[^0-9]/g, "");
      // A Luhn-valid card, and one only this request's card data says is a card number.
      for (const pan of [VISA, ODD_PAN]) {
        const quoted = spelled(pan, gap);
        const seen: string[] = [];
        for (const mode of ["custom", "default"] as const) {
          for (const thrown of [
            new CallbackError("DECLINED", `card ${quoted} refused`, `ref ${quoted}`),
            new Error(`card ${quoted} refused`),
          ]) {
            capture.logs.length = 0;
            capture.hooks.length = 0;
            const response = await handlerFor(
              createPerformOrderPaymentHandler as unknown as Factory,
              mode,
              () => {
                throw thrown;
              },
            ).handle(post(JSON.stringify(order(pan, "0123"))));
            seen.push(...texts(response));
            if (thrown instanceof CallbackError) {
              expect(JSON.parse(response.body).Message).toBe(
                `card ${quoted.replace(/[0-9]/g, "*")} refused`,
              );
            }
          }
        }
        for (const text of seen) {
          expect(text).not.toContain(quoted);
          expect(decodedDigits(text), text).not.toContain(pan);
        }
      }
    },
  );

  // Review PAN D3: another card's number (a card on file, a PSP's text) with other gaps than
  // one space, dash or `+` went out whole on every channel.
  it.each([".", "  ", "\t", "\u00a0", "/", "_", "%20"])(
    "another card's number joined by %j: masked in the answer, onError and the console",
    async (gap) => {
      const quoted = (MASTERCARD.match(/.{4}/g) ?? []).join(gap);
      const seen: string[] = [];
      for (const mode of ["custom", "default"] as const) {
        for (const thrown of [
          new CallbackError("DECLINED", `card ${quoted} refused`),
          new Error(`card ${quoted} refused`),
        ]) {
          capture.logs.length = 0;
          capture.hooks.length = 0;
          const response = await handlerFor(
            createPerformOrderPaymentHandler as unknown as Factory,
            mode,
            () => {
              throw thrown;
            },
          ).handle(post(JSON.stringify(order(VISA, "0123"))));
          seen.push(...texts(response));
        }
      }
      const masked = `****${gap}****${gap}****${gap}4444`;
      expect(seen.join("\n")).toContain(JSON.stringify(`card ${masked} refused`).slice(1, -1));
      for (const text of seen) expect(text).not.toContain(quoted);
    },
  );

  // Second reading of PAN (S1): a quote that is URL-encoded whole has an escape before the card
  // too (`card%20…`); the scan started a run at the `20` of it, so the card sat inside a longer
  // group and went out with its last eight digits, or whole.
  it.each([
    ["upstream: card%205555%205555%205555%204444%20refused", "card%20****%20****%20****%204444"],
    ["upstream: card%095555%095555%095555%094444%09refused", "card%09****%09****%09****%094444"],
    [`q=card%20${MASTERCARD}&x=1`, "q=card%20************4444"],
  ])(
    "another card's number after an escape (%s): masked in the answer and onError",
    async (text, masked) => {
      const response = await handlerFor(
        createPerformOrderPaymentHandler as unknown as Factory,
        "custom",
        () => {
          throw new CallbackError("DECLINED", text);
        },
      ).handle(post(JSON.stringify(order(VISA, "0123"))));
      expect(JSON.parse(response.body).Message).toContain(masked);
      for (const seen of texts(response)) {
        expect(seen.replace(/%[0-9a-f]{2}/gi, "").replace(/[^0-9]/g, "")).not.toContain(
          MASTERCARD.slice(4),
        );
      }
    },
  );

  // Second reading of PAN (S3): the wider scan ran on a success answer's texts too, so a dotted
  // date and time, tracking number or phone number that happens to pass the Luhn check (about
  // one in ten) reached the service masked. A success answer is the merchant's data: only this
  // request's own card and card numbers in the classic spelling are masked there, as before.
  it("a success answer's texts are answered as written: dotted dates, tracking and phone numbers", async () => {
    const result = {
      InternalOrderId: "M-1",
      PaymentAmount: "10.00",
      PaymentCurrencyCode: "EUR",
      Message: "Shipment 2026.11.26.12.30.45 booked",
      Description: "tracking 9400.1000.0000.0000.0000.00, hotline 0033.6.12.34.56.79",
    };
    // The texts do hold Luhn-valid sequences in the wider spelling: a refusal masks them.
    expect(redactCardNumbers(result.Message)).not.toBe(result.Message);
    expect(redactCardNumbers(result.Description)).not.toBe(result.Description);
    const response = await handlerFor(
      createPerformOrderPaymentHandler as unknown as Factory,
      "custom",
      () => result,
    ).handle(post(JSON.stringify(order(VISA, "0123"))));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({
      Message: result.Message,
      Description: result.Description,
    });
    // Masked as before: this request's own card in any spelling, another card spaced.
    const masking = await handlerFor(
      createPerformOrderPaymentHandler as unknown as Factory,
      "custom",
      () => ({
        ...result,
        Message: `charged ${VISA.match(/.{4}/g)?.join(".")}`,
        Description: `alt ${MASTERCARD.match(/.{4}/g)?.join(" ")}`,
      }),
    ).handle(post(JSON.stringify(order(VISA, "0123"))));
    expect(JSON.parse(masking.body)).toMatchObject({
      Message: "charged ****.****.****.****",
      Description: "alt **** **** **** 4444",
    });
  });

  it("the CVV of this request in a CallbackError code is masked too", async () => {
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new CallbackError("CVV-737", "declined");
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(JSON.parse(response.body)).toMatchObject({ ErrorCode: "CVV-***" });
    expect(capture.failures[0]?.reason).toBe("CVV-***: declined");
    expect(capture.failures[0]?.error).toMatchObject({ code: "CVV-***" });
  });

  // Found by review A (defect 3): the success result went out as returned, while the same texts
  // in a CallbackError were masked.
  it("a success result quoting this request's card number and CVV: masked in the answer, amounts and ids kept", async () => {
    const handler = createPerformOrderPaymentHandler(
      (payment) => ({
        InternalOrderId: "M-737",
        PaymentAmount: "737.00",
        PaymentCurrencyCode: "EUR",
        Message: `charged card ${payment.PaymentDetails?.CardNumber}`,
        Description: `cvv ${payment.PaymentDetails?.CVVNumber} ok, order 17371`,
        StatusCode: `paid ${ODD_PAN.match(/.{4}/g)?.join(" ")}`,
      }),
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(ODD_PAN, "737"))));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toStrictEqual({
      Success: true,
      InternalOrderId: "M-737",
      PaymentAmount: "737.00",
      PaymentCurrencyCode: "EUR",
      Message: "charged card ***",
      Description: "cvv *** ok, order 17371",
      // An id, amount or code field masks this request's own card only (not Luhn-valid here).
      StatusCode: "paid **** **** **** 5678",
    });
  });

  // Found by review adversary (ADVERSARY-1): the cart is the one nested answer, and only the
  // top-level texts of a success went through the redactor, so a cart request carrying a
  // PaymentDetails was answered with its card number and CVV in a line's name, in a field of the
  // merchant's own and under card-named keys.
  it("a cart quoting this request's card number and CVV: masked at every depth, codes and ids kept", async () => {
    const handler = createGetCheckoutCartInfoHandler(
      (query) => {
        const card = (query as { PaymentDetails?: { CardNumber?: string; CVVNumber?: string } })
          .PaymentDetails;
        return {
          productsList: [
            {
              ProductCode: "4006381333931",
              CartItemId: "737",
              Name: `card ${card?.CardNumber} cvv ${card?.CVVNumber}`,
              ListPrice: 737,
              SalePrice: 1,
              OrderedQuantity: 1,
            },
          ],
          debug: { CardNumber: card?.CardNumber, cvv: card?.CVVNumber, [`k${VISA}`]: 1 },
          // A field of the merchant's own, which the types refuse: a plain JavaScript merchant's.
        } as unknown as { productsList: [] };
      },
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(
      post(
        JSON.stringify({
          merchantCartToken: "t",
          PaymentDetails: { CardNumber: VISA, CVVNumber: "737" },
        }),
      ),
    );
    expect(response.status).toBe(200);
    expect(carriesPan(response.body, VISA), response.body).toBe(false);
    const cart = JSON.parse(response.body);
    expect(cart.productsList[0]).toMatchObject({
      // A Luhn-valid EAN-13 and an id equal to the CVV are codes: kept as returned.
      ProductCode: "4006381333931",
      CartItemId: "737",
      Name: "card ************1111 cvv ***",
      ListPrice: 737,
    });
    expect(cart.debug).toStrictEqual({ CardNumber: "************1111", "k************1111": 1 });
  });

  // Review second-doubt (SECOND-DOUBT-2/3/4): the codes-and-ids exemption matched any name ending
  // in those letters (`lastPaid`), addresses, image URLs and ID numbers of the cart's own fields had
  // the CVV's digits or a Luhn-valid number masked, and a `__proto__` key of a merchant's field was
  // dropped, only when the request carried a card.
  it("a cart with card data in the request: its data fields keep their values, free texts and fields of the merchant's own are masked", async () => {
    const MC = "5555555555554444";
    const cart = {
      productsList: [
        {
          ProductCode: "4006381333931",
          Name: "Boeing 737 model",
          Description: `another card ${MC}`,
          ImageURL: "https://cdn.example/p/737.jpg",
          ListPrice: 10,
          SalePrice: 10,
          OrderedQuantity: 1,
        },
      ],
      shippingDetails: { Address1: "737 Main Street", Zip: "73701" },
      userDetails: { UserIdNumber: "8001015009087" },
      lastPaid: MC,
      meta: JSON.parse('{"__proto__":{"x":1},"y":2}'),
    };
    const handler = createGetCheckoutCartInfoHandler(() => cart as never, {
      auth: false,
      onError: collectingOnError,
    });
    const withCard = JSON.stringify({
      merchantCartToken: "t",
      PaymentDetails: { CardNumber: VISA, CVVNumber: "737" },
    });
    const response = await handler.handle(post(withCard));
    expect(response.status).toBe(200);
    const answered = JSON.parse(response.body);
    expect(answered.productsList[0]).toMatchObject({
      ProductCode: "4006381333931",
      Name: "Boeing *** model",
      Description: "another card ************4444",
      ImageURL: "https://cdn.example/p/737.jpg",
    });
    expect(answered.shippingDetails).toStrictEqual({ Address1: "737 Main Street", Zip: "73701" });
    expect(answered.userDetails).toStrictEqual({ UserIdNumber: "8001015009087" });
    expect(answered.lastPaid).toBe("************4444");
    expect(response.body).toContain('"meta":{"__proto__":{"x":1},"y":2}');
  });

  // final2-6: every key naming a CVV was left out, a flag the cart holds (`cvvRequired: true`) too.
  it("a cart with card data in the request: a cvv-named field that cannot hold a CVV (a flag, a code) is kept", async () => {
    const handler = createGetCheckoutCartInfoHandler(
      () =>
        ({
          productsList: [],
          cvvRequired: true,
          checkout: {
            cvvResult: "M",
            cvvPolicy: null,
            cvvSample: 737,
            cvvText: "cvv 1",
            Cvv2: { a: 1 },
          },
        }) as never,
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(
      post(
        JSON.stringify({
          merchantCartToken: "t",
          PaymentDetails: { CardNumber: VISA, CVVNumber: "737" },
        }),
      ),
    );
    expect(JSON.parse(response.body)).toStrictEqual({
      productsList: [],
      cvvRequired: true,
      checkout: { cvvResult: "M" },
    });
  });

  // Review second-seq (SECOND-SEQ-1/2): a card-number key whose value had four digits or fewer
  // went out as it was (the request's CVV under `CardNumber`), and a field of the merchant's own
  // named like any cart field (`key`, `url`) anywhere was taken for a cart field.
  it("a cart with card data in the request: short card-number values masked, fields of the merchant's own masked whatever their names", async () => {
    const handler = createGetCheckoutCartInfoHandler(
      () =>
        ({
          productsList: [],
          CardNumber: "737",
          cardNumber: "cvv 737",
          pan: 737,
          masked: { CardNumber: "************1111" },
          // Review final2: the CVV behind asterisks is no masked card number.
          starred: { CardNumber: "***737" },
          myExtras: { key: "Boeing 737", url: "Boeing 737", Name: "Boeing 737" },
          urlParameters: [{ Key: "seat", Value: "737" }],
        }) as never,
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(
      post(
        JSON.stringify({
          merchantCartToken: "t",
          PaymentDetails: { CardNumber: VISA, CVVNumber: "737" },
        }),
      ),
    );
    expect(JSON.parse(response.body)).toStrictEqual({
      productsList: [],
      CardNumber: "***",
      cardNumber: "cvv ***",
      pan: 737,
      masked: { CardNumber: "************1111" },
      starred: { CardNumber: "******" },
      myExtras: { key: "Boeing ***", url: "Boeing ***", Name: "Boeing ***" },
      // A cart field where the schema has it: data, only the request's own card number masked.
      urlParameters: [{ Key: "seat", Value: "737" }],
    });
  });

  // Found by the second reader: an order id that happens to pass the Luhn check (about one numeric
  // id of 13–19 digits in ten) went back masked, and the service recorded the stars.
  it("an id that looks like a card number is answered as it is, with card data in the request", async () => {
    const LUHN_ID = "2026112601581233";
    const handler = createPerformOrderPaymentHandler(
      () => ({ InternalOrderId: LUHN_ID, PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" }),
      { auth: false, onError: collectingOnError },
    );
    const response = await handler.handle(post(JSON.stringify(order(VISA, "737"))));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).InternalOrderId).toBe(LUHN_ID);
  });

  it("another request's CVV, or a request without card data, changes nothing", async () => {
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new CallbackError("STOCK", "only 737 left, order 17371");
      },
      { auth: false, onError: collectingOnError },
    );
    const withOtherCvv = await handler.handle(post(JSON.stringify(order(VISA, "4821"))));
    expect(JSON.parse(withOtherCvv.body)).toMatchObject({ Message: "only 737 left, order 17371" });
    const { PaymentDetails: _card, ...withoutCard } = order(VISA, "737");
    const noCard = await handler.handle(post(JSON.stringify(withoutCard)));
    expect(JSON.parse(noCard.body)).toMatchObject({ Message: "only 737 left, order 17371" });
    expect(capture.failures.map((f) => f.reason)).toStrictEqual([
      "STOCK: only 737 left, order 17371",
      "STOCK: only 737 left, order 17371",
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// What the merchant's function sees, and what it keeps
// ---------------------------------------------------------------------------------------------

describe("a card number in a form-encoded field of PaymentDetails (`4111+1111+1111+1111`)", () => {
  const body = JSON.stringify({
    OrderId: "GE1",
    PaymentDetails: { CardNumber: MASTERCARD, CVVNumber: "737", Address1: "4111+1111+1111+1111" },
  });
  const digitsOnly = (text: string) => text.replace(/[\s+-]/g, "");

  it("is masked in every view of the raw payload, as in the decoded payload", async () => {
    const views: string[] = [];
    const handler = createPerformOrderPaymentHandler(
      (payload, context) => {
        views.push(JSON.stringify(payload), JSON.stringify(context.rawPayload));
        views.push(
          inspect(context.rawPayload, { depth: 5 }),
          String(context.rawPayload.PaymentDetails),
        );
        return { PaymentAmount: "1", PaymentCurrencyCode: "EUR" };
      },
      { auth: false, onError: () => undefined },
    );
    expect((await handler.handle(post(body))).status).toBe(200);
    expect(views).toHaveLength(4);
    for (const view of views) expect(digitsOnly(view)).not.toContain(VISA);
  });

  it("is masked in the onError copy of an exception quoting the raw value", async () => {
    const errors: unknown[] = [];
    const handler = createPerformOrderPaymentHandler(
      (_payload, context) => {
        const raw = context.rawPayload.PaymentDetails as { Address1?: string };
        throw new Error(`address rejected: ${raw.Address1}`);
      },
      { auth: false, onError: (failure) => errors.push(failure.error, failure.reason) },
    );
    expect((await handler.handle(post(body))).status).toBe(500);
    const text = errors.map((item) =>
      item instanceof Error ? `${item.message} ${item.stack}` : String(item),
    );
    expect(text.join(" ")).toContain("address rejected");
    expect(digitsOnly(text.join(" "))).not.toContain(VISA);
  });
});

describe("the payment object inside and after the handler", () => {
  interface Seen {
    payload: { PaymentDetails: Record<string, unknown> };
    raw: { PaymentDetails: Record<string, unknown> };
    views: string[];
    json: unknown;
    real: { card: unknown; cvv: unknown; rawCard: unknown; rawCvv: unknown; email: unknown };
  }

  function observe(outcome: "return" | "throw" | "callback-error") {
    const seen: Seen[] = [];
    const fn = (payload: unknown, context: { rawPayload: unknown }) => {
      const p = payload as Seen["payload"];
      const r = context.rawPayload as Seen["raw"];
      seen.push({
        payload: p,
        raw: r,
        views: [
          JSON.stringify(p),
          JSON.stringify(p.PaymentDetails),
          String(p.PaymentDetails),
          `${p.PaymentDetails}`,
          inspect(p, { depth: 10 }),
          inspect(p.PaymentDetails),
          JSON.stringify(r),
          String(r.PaymentDetails),
          inspect(r, { depth: 10 }),
        ],
        json: JSON.parse(JSON.stringify(p.PaymentDetails)),
        real: {
          card: p.PaymentDetails.CardNumber,
          cvv: p.PaymentDetails.CVVNumber,
          rawCard: r.PaymentDetails.CardNumber,
          rawCvv: r.PaymentDetails.CVVNumber,
          email: p.PaymentDetails.Email,
        },
      });
      if (outcome === "throw") throw new Error("merchant failure");
      if (outcome === "callback-error") throw new CallbackError("DECLINED", "declined");
      return OK_RESULT;
    };
    return { fn, seen };
  }

  for (const [callback, factory] of FACTORIES) {
    for (const outcome of ["return", "throw", "callback-error"] as const) {
      it(`${callback}: real values inside, masked views, CVV gone after the handler (${outcome})`, async () => {
        for (const [i, pan] of PANS.entries()) {
          const cvv = CVVS[i % CVVS.length] as string;
          const { fn, seen } = observe(outcome);
          const handler = factory(fn as Fn, { auth: false, onError: () => undefined });
          const response = await handler.handle(post(JSON.stringify(order(pan, cvv))));
          expect(response.status).toBe(outcome === "throw" ? 500 : 200);
          expect(seen).toHaveLength(1);
          const s = seen[0] as Seen;

          // Inside the handler, reading the property gives the real values to pay with.
          expect(s.real).toStrictEqual({
            card: pan,
            cvv,
            rawCard: pan,
            rawCvv: cvv,
            email: "jane.doe@example.com",
          });
          // Every printed view is masked: at most the last four digits, no CVV.
          const masked = maskCardNumber(pan) as string;
          expect(masked).toBe(`${"*".repeat(pan.length - 4)}${pan.slice(-4)}`);
          for (const view of s.views) {
            expect(carriesPan(view, pan), view).toBe(false);
            expect(view).toContain(pan.slice(-4));
            expect(carriesCvv(view, cvv), view).toBe(false);
          }
          expect(String(s.payload.PaymentDetails)).toBe(`[PaymentDetails ${masked}]`);
          expect(s.json).toMatchObject({
            CardNumber: masked,
            CVVNumber: "***",
          });

          // After the handler: the CVV is gone from both objects the handler kept.
          for (const details of [s.payload.PaymentDetails, s.raw.PaymentDetails]) {
            expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
            expect(details.CVVNumber).toBeUndefined();
            expect(details.CardNumber).toBe(pan);
            expect(carriesCvv(inspect(details), cvv)).toBe(false);
            expect(JSON.stringify(details)).not.toContain("CVVNumber");
          }
          // The masking methods do not show up when the object is spread or iterated.
          expect(Object.keys(s.payload.PaymentDetails)).not.toContain("toJSON");
          expect({ ...s.payload.PaymentDetails }).not.toHaveProperty("toJSON");
        }
      });
    }
  }

  it("an order without PaymentDetails (or with null) is untouched", async () => {
    const seen: unknown[] = [];
    const handler = createSendOrderToMerchantHandler(
      (payload) => {
        seen.push(payload);
        return { InternalOrderId: "M-1" };
      },
      { auth: false },
    );
    const base = { OrderId: "GE1", Products: [] };
    await handler.handle(post(JSON.stringify(base)));
    await handler.handle(post(JSON.stringify({ ...base, PaymentDetails: null })));
    expect(seen).toStrictEqual([base, { ...base, PaymentDetails: null }]);
  });

  it("an already-parsed body is protected the same way", async () => {
    const { fn, seen } = observe("return");
    const handler = (createPerformOrderPaymentHandler as unknown as Factory)(fn as Fn, {
      auth: false,
    });
    const body: BodyInput = parsed(order(VISA, "737"));
    expect((await handler.handle(post(body))).status).toBe(200);
    expect(seen[0]?.real.card).toBe(VISA);
    for (const view of seen[0]?.views ?? []) expect(carriesPan(view, VISA)).toBe(false);
    expect(Object.hasOwn(seen[0]?.payload.PaymentDetails ?? {}, "CVVNumber")).toBe(false);
  });
});

// Review c2, D2 and D5: a framework's req.body outlives the request, and an app's logger prints it
// once the answer is sent. The engine protected it only once the walk reached it: after a refusal
// from the headers (401, 405), a 413 or the router's 404 it kept the card number and the CVV.
describe("a framework's parsed body, whatever the answer", () => {
  const payment = (fn: Fn = () => OK_RESULT, options: Partial<HandlerOptions> = {}) =>
    (createPerformOrderPaymentHandler as unknown as Factory)(fn, {
      auth: false,
      onError: () => undefined,
      ...options,
    });
  const cases: [string, number, () => CallbackEndpoint, (body: BodyInput) => CallbackRequest][] = [
    [
      "refused for its method (PUT)",
      405,
      () => payment(),
      (body) => ({ ...post(body), method: "PUT" }),
    ],
    [
      "refused from the request's headers",
      401,
      () => payment(undefined, { auth: new StubAuthenticator("deny") }),
      post,
    ],
    [
      "refused because the authentication is misconfigured",
      500,
      () => payment(undefined, { auth: Promise.reject(new Error("no key")) }),
      post,
    ],
    [
      "refused for a Content-Length over maxBodyBytes",
      413,
      () => payment(undefined, { maxBodyBytes: 1000 }),
      (body) => post(body, { "content-length": "1001" }),
    ],
    [
      "answered 404 by the router (no callback at this path)",
      404,
      () =>
        createCallbackRouter({
          auth: false,
          onError: () => undefined,
          handlers: { UpdateOrderStatus: () => undefined },
        }),
      (body) => post(body, {}, "/PerformOrderPayment"),
    ],
    [
      "a GET whose body the cart ignores",
      200,
      () =>
        createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
          auth: false,
          onError: () => undefined,
        }),
      (body) => ({ ...post(body), method: "GET", url: "/cart?merchantCartToken=c" }),
    ],
  ];
  for (const [label, status, endpoint, request] of cases) {
    it(`${label} (${status}): masked, no CVV, the card number itself kept`, async () => {
      const body = order(VISA, "737") as { PaymentDetails: Record<string, unknown> };
      const response = await endpoint().handle(request(parsed(body)));
      expect(response.status).toBe(status);
      for (const view of [
        JSON.stringify(body),
        inspect(body, { depth: 10 }),
        String(body.PaymentDetails),
      ]) {
        expect(carriesPan(view, VISA), view).toBe(false);
        expect(carriesCvv(view, "737"), view).toBe(false);
      }
      expect(JSON.stringify(body)).toContain('"CardNumber":"************1111"');
      expect(Object.hasOwn(body.PaymentDetails, "CVVNumber")).toBe(false);
      expect(body.PaymentDetails.CardNumber).toBe(VISA);
    });
  }

  it("within maxBodyBytes by its Content-Length: read as before (200)", async () => {
    const seen: unknown[] = [];
    const handler = payment(
      (payload) => {
        seen.push(payload);
        return OK_RESULT;
      },
      {
        maxBodyBytes: 1000,
      },
    );
    const response = await handler.handle(
      post(parsed(order(VISA, "737")), { "content-length": "1000" }),
    );
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
// The helpers themselves
// ---------------------------------------------------------------------------------------------

describe("maskCardNumber", () => {
  it.each([
    [VISA, "************1111"],
    [MASTERCARD, "************4444"],
    [AMEX, "***********0005"],
    [LONG, `${"*".repeat(15)}${LONG.slice(-4)}`],
    ["4111 1111 1111 1111", "************1111"],
    ["4111-1111-1111-1111", "************1111"],
    ["1234", "****"],
    ["**3", "*"],
    ["", ""],
  ])("%s → %s", (input, expected) => {
    expect(maskCardNumber(input)).toBe(expected);
  });

  it("leaves non-strings as they are (the schema refuses numbers before this)", () => {
    expect(maskCardNumber(undefined)).toBeUndefined();
    expect(maskCardNumber(null)).toBeNull();
  });
});

describe("redactCardNumbers", () => {
  it.each(PANS.flatMap((pan) => spellings(pan).map((s) => [s, pan] as const)))(
    "masks %s",
    (spelling, pan) => {
      const out = redactCardNumbers(`paid with ${spelling} today`);
      expect(carriesPan(out, pan)).toBe(false);
      expect(out.replace(/[\s-]/g, "")).toContain(pan.slice(-4));
      expect(out.startsWith("paid with ")).toBe(true);
      expect(out.endsWith(" today")).toBe(true);
    },
  );

  it("keeps the separators and the last four digits", () => {
    // The shortest length it looks for, 13 digits (an old Visa), found by mutation testing.
    expect(redactCardNumbers("card 4222222222222 ok")).toBe("card *********2222 ok");
    expect(redactCardNumbers("card 422222222222 ok")).toBe("card 422222222222 ok");
    expect(redactCardNumbers("4111 1111 1111 1111")).toBe("**** **** **** 1111");
    expect(redactCardNumbers("card=4111111111111111;")).toBe("card=************1111;");
  });

  it.each([
    ["followed by a CVV", `${VISA} 737`],
    ["followed by an expiry", `${VISA} 2030`],
    ["after a date", `2025-03-10 ${VISA}`],
    ["between other numbers", `00 ${VISA} 99`],
    ["two cards in a row", `${VISA} ${MASTERCARD}`],
    ["spaced, then a CVV", `${spellings(AMEX)[1]} 1234`],
  ])("masks a card number %s", (_label, text) => {
    const out = redactCardNumbers(text);
    for (const pan of PANS) expect(carriesPan(out, pan)).toBe(false);
  });

  it.each([
    ["a non-Luhn 16-digit number", "4111111111111112"],
    ["a 12-digit number", "411111111111"],
    ["an order id", "GE927127001US"],
    ["a phone number", "+44 20 7946 0958"],
    ["a date and amount", "2030-03-31 total 123.45"],
    ["a plain sentence", "no digits here"],
    // A card number glued to more digits is part of a longer number, not a 13–19 digit sequence.
    ["a 21-digit reference", `00${VISA}999`],
    ["a tracking number", "JD014600006281234567"],
  ])("leaves %s alone", (_label, text) => {
    expect(redactCardNumbers(text)).toBe(text);
  });

  it("masks a card number whose groups are joined by `+` (a form-encoded space)", () => {
    // The service form-encodes PaymentDetails' text fields: "4111 1111 1111 1111" arrives as
    // "4111+1111+1111+1111", which the raw payload and a merchant's exception may quote.
    expect(redactCardNumbers("4111+1111+1111+1111")).toBe("****+****+****+1111");
    for (const pan of PANS) {
      const encoded = (pan.match(/.{1,4}/g) ?? []).join("+");
      const out = redactCardNumbers(`address ${encoded} rejected`);
      expect(out.replace(/[\s+-]/g, "")).not.toContain(pan);
      expect(out.replace(/[\s+-]/g, "").endsWith(`${pan.slice(-4)}rejected`)).toBe(true);
    }
    // A `+` that joins no digits is no separator.
    expect(redactCardNumbers("+44+20+7946+0958")).toBe("+44+20+7946+0958");
  });

  // Review PAN D3: only one space, dash or `+` joined the groups, so another card's number
  // written with dots, tabs, a no-break space, slashes, underscores, double spaces or an escaped
  // space went out whole on every channel.
  const WIDE_GAPS = [
    ".",
    "  ",
    "\t",
    "\u00a0",
    "\u202f",
    "/",
    "_",
    ". ",
    "%20",
    "%2b",
    "%2B",
    "%2f",
  ];
  /** The digits a reader sees, an escape in a gap (`%20`) not counted. */
  const digitsOf = (text: string) => text.replace(/%[0-9a-f]{2}/gi, "").replace(/[^0-9]/g, "");
  it.each(PANS.flatMap((pan) => WIDE_GAPS.map((gap) => [JSON.stringify(gap), gap, pan] as const)))(
    "masks a card number whose groups are joined by %s (%s)",
    (_label, gap, pan) => {
      const written = (pan.match(/.{1,4}/g) ?? []).join(gap);
      const out = redactCardNumbers(`card ${written} refused`);
      expect(digitsOf(out)).not.toContain(pan);
      // Every digit but the last four masked, the gaps as written.
      let kept = 4;
      const masked = written
        .split(/(%[0-9a-fA-F]{2})/)
        .reverse()
        .map((part) =>
          part.startsWith("%")
            ? part
            : [...part]
                .reverse()
                .map((char) => (/[0-9]/.test(char) && kept-- <= 0 ? "*" : char))
                .reverse()
                .join(""),
        )
        .reverse()
        .join("");
      expect(out).toBe(`card ${masked} refused`);
      expect(masked.replace(/%[0-9a-fA-F]{2}/g, "").replace(/[^0-9]/g, "")).toBe(pan.slice(-4));
    },
  );

  // fix-left: a card number whose gaps spell a form-encoded space in several ways (`+` next to
  // `%20`) was left whole: only one space, dash or `+` as such, or the very same gap each time, made
  // a sequence. Only a space's spellings (` `, `+`, `%20`) mix, and an escape's hex digits in either
  // case; `%2b`, `%2d` and `.`/`%2E` and the like stay apart (second reading D1: phone numbers and
  // amount lists that mix them were masked).
  it.each([
    ["+ and %20 (form-encoded spaces)", "4111+1111%201111+1111", "****+****%20****+1111"],
    ["%20 and +", "5555%205555+5555%204444", "****%20****+****%204444"],
    ["a space, + and %20", "5555 5555+5555%204444", "**** ****+****%204444"],
    ["%2b and %2B", "4111%2b1111%2B1111%2b1111", "****%2b****%2B****%2b1111"],
    ["%2D and %2d", "3782%2D822463%2d10005", "****%2D******%2d*0005"],
    ["%2E and %2e", "4111%2E1111%2e1111%2E1111", "****%2E****%2e****%2E1111"],
    ["++ and %20%20 (two spaces)", "5555++5555%20%205555++4444", "****++****%20%20****++4444"],
  ])(
    "masks a card number whose gaps spell one separator in several ways: %s",
    (_label, written, masked) => {
      const out = redactCardNumbers(`card ${written} refused`);
      expect(out).toBe(`card ${masked} refused`);
      expect(digitsOf(out)).not.toMatch(/4111111111111111|5555555555554444|378282246310005/);
    },
  );

  /**
   * Where a run of adjacent digit groups (percent-escapes count as gaps) joins into a Luhn-valid
   * 13–19 digit sequence, whatever the gaps are.
   */
  function luhnRun(text: string): [number, number] | undefined {
    const luhn = (digits: string) => {
      let sum = 0;
      for (let i = 0; i < digits.length; i++) {
        let n = Number(digits[digits.length - 1 - i]);
        if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
        sum += n;
      }
      return sum % 10 === 0;
    };
    const groups = [...text.replace(/%[0-9a-fA-F]{2}/g, "%..").matchAll(/[0-9]+/g)];
    for (let i = 0; i < groups.length; i++) {
      let joined = "";
      for (let j = i; j < groups.length && joined.length < 19; j++) {
        joined += groups[j]?.[0];
        const [first, last] = [groups[i], groups[j]];
        if (joined.length >= 13 && luhn(joined) && first && last) {
          return [first.index, last.index + last[0].length];
        }
      }
    }
    return undefined;
  }

  // Final reading 2 D5: five of these held no Luhn-valid sequence under any joining, so they could
  // not fail. Each now does, and the same text with one space in each of its gaps is masked: only
  // the gap rule (mixed gaps, or gaps that are not one) keeps it.
  it.each([
    ["amounts in a list", "Items 10.00 20.00 30.00 40.00 50.00"],
    // fix-left: one separator's spellings mix in a card number; different separators still do not.
    ["amounts in a form-encoded list", "Items+10.00%2020.00+30.00%2040.00+50.00"],
    ["amounts with escaped dots", "Items 10%2E00 20.00 30%2e00 40.00 50.00"],
    // Second reading of fix-left (D1): masked once `%20`, `%2B`, `%2D` mixed with other separators
    // and `.` with `%2E`; left alone on main.
    ["a form-encoded phone number", "phone=%2B91%2B264%2B555%2B4323%2D11"],
    ["a phone number with escaped spaces and a dash", "tel=0057%20398%20219%201285%2D7723"],
    ["form-encoded quantities", "qty=2398862%2089080%2054046%2D69"],
    ["ids joined by %2d and a dash", "ids=2726%2d6737%2d4055-10"],
    ["amounts joined by %2E", "amounts=7.84%2E8.32%2E3.94%2E1.28%2E8.16%2E7.54%2E3.82"],
    ["amounts joined by dots and %2E", "amounts=12.50.19.99%2E4.25%2E3.75.10.00"],
    ["a date and a time", "Order 2026-11-26 12.30.45 total 1 234.56 EUR"],
    ["a date with slashes and a time", "26/11/2026 12:30:45"],
    ["an IP address and port", "from 192.168.100.20:843"],
    ["a build of a date", "build 2026.11.26-1234.5677"],
    ["escaped separators", "ref%20548%2F1234%2E5678%2D9014"],
    ["a phone number", "Tel. 030/1234.5678 124"],
    ["an order number and its date", "parcel 927127004/2026.11.26"],
  ])("leaves %s alone", (_label, text) => {
    expect(redactCardNumbers(text)).toBe(text);
    const run = luhnRun(text);
    expect(run, "a Luhn-valid run if the gaps were joined").toBeDefined();
    const [start, end] = run ?? [0, 0];
    const spaced = text.slice(start, end).replace(/(?:%[0-9a-fA-F]{2}|[^0-9])+/g, " ");
    const uniform = `${text.slice(0, start)}${spaced}${text.slice(end)}`;
    expect(redactCardNumbers(uniform)).not.toBe(uniform);
  });

  // Second reading of PAN (S1): a run started inside the escape before a card (`card%20…`).
  it.each([
    ["card%205555%205555%205555%204444%20refused", "card%20****%20****%20****%204444%20refused"],
    ["card%095555%095555%095555%094444", "card%09****%09****%09****%094444"],
    ["q=card%205555555555554444", "q=card%20************4444"],
    ["a=%2F4111.1111.1111.1111", "a=%2F****.****.****.1111"],
  ])("masks a card number right after an escape: %s", (text, masked) => {
    expect(redactCardNumbers(text)).toBe(masked);
  });

  it("finds a card number inside a long run of spaced digit groups", () => {
    const out = redactCardNumbers(`${"12 ".repeat(50)}${VISA} ${"34 ".repeat(50)}`);
    expect(carriesPan(out, VISA)).toBe(false);
    expect(out.startsWith("12 12 12 ")).toBe(true);
    expect(out).toHaveLength(`${"12 ".repeat(50)}${VISA} ${"34 ".repeat(50)}`.length);
  });

  it("is idempotent", () => {
    const text = `a ${VISA} b ${spellings(AMEX)[2]} c ${LONG} 737`;
    const once = redactCardNumbers(text);
    expect(redactCardNumbers(once)).toBe(once);
  });

  it("is fast on long text", () => {
    const text = `${"1234 5678 ".repeat(5000)}${VISA}`;
    const start = performance.now();
    const out = redactCardNumbers(text);
    expect(performance.now() - start).toBeLessThan(1000);
    expect(carriesPan(out.slice(-30), VISA)).toBe(false);
  });
});
