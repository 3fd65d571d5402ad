// Issue #10: card data and prototypes sealed on every path. One test (or group) per finding of
// the outside fuzzing run; each was written first and seen failing before the fix.
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import {
  type BodyInput,
  CallbackError,
  type CallbackHandler,
  createGetCheckoutCartInfoHandler,
  createPerformOrderPaymentHandler,
  createSendAdditionalRequiredDocumentsToMerchantHandler,
  createSendOrderToMerchantHandler,
  createSendRMAInfoToMerchantHandler,
  createUpdateOrderStatusHandler,
  type HandlerOptions,
} from "../../src/index.js";
import {
  chunked,
  collector,
  json,
  parsed,
  post,
  StubAuthenticator,
  trackedIterable,
  trackedStream,
} from "./helpers.js";
import { paymentDetails, quotesStandalone, stringsOf } from "./leaks.js";

const VISA = "4111111111111111";
const CVV = "737";

function card(cardNumber: unknown = VISA, cvv: unknown = CVV): Record<string, unknown> {
  return paymentDetails(cardNumber, cvv);
}

function payment(cardNumber: unknown = VISA, cvv: unknown = CVV): Record<string, unknown> {
  return { OrderId: "GE100", MerchantGUID: "guid-1", PaymentDetails: card(cardNumber, cvv) };
}

/** Whether a text quotes the CVV as a standalone value (not inside a longer run of digits). */
function quotesCvv(text: string, cvv = CVV): boolean {
  return quotesStandalone(text, cvv);
}

const strings = (value: unknown) => stringsOf(value);

let consoleLines: string[];
let consoleSpy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  consoleLines = [];
  consoleSpy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    consoleLines.push(args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" "));
  });
});
afterEach(() => consoleSpy.mockRestore());

// ---------------------------------------------------------------------------------------------
// 1. Every field of an exception's copy, and the console line
// ---------------------------------------------------------------------------------------------

describe("1. an exception's name (and every other field) is scrubbed", () => {
  function gatewayError(): Error {
    const error = new Error(`charge refused for ${VISA}`);
    error.name = `GatewayError ${VISA}/${CVV}`;
    Object.assign(error, { code: `E-${CVV}` });
    return error;
  }

  it("onError's copy masks the card number and this request's CVV in the name", async () => {
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw gatewayError();
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(JSON.stringify(payment())));
    expect(response.status).toBe(500);
    const copy = failures[0]?.error as Error & { code: string };
    expect(copy.name).toBe("GatewayError ************1111/***");
    expect(copy.message).toBe("charge refused for ************1111");
    expect(copy.code).toBe("E-***");
    for (const text of strings(failures)) {
      expect(text).not.toContain(VISA);
      expect(quotesCvv(text), text).toBe(false);
    }
  });

  it("the default console line prints neither the card number nor the CVV", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw gatewayError();
      },
      { auth: false },
    );
    expect((await handler.handle(post(JSON.stringify(payment())))).status).toBe(500);
    expect(consoleLines).toHaveLength(1);
    const line = consoleLines[0] as string;
    expect(line).toContain("GatewayError ************1111/***");
    expect(line).not.toContain(VISA);
    expect(quotesCvv(line), line).toBe(false);
  });

  it("a CallbackError whose name quotes the CVV: masked in the copy", async () => {
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      () => {
        const error = new CallbackError("DECLINED", "declined");
        Object.defineProperty(error, "name", { value: `Declined(${CVV})` });
        throw error;
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(JSON.stringify(payment())));
    expect(response.status).toBe(200);
    expect(failures[0]?.error).toMatchObject({ name: "Declined(***)" });
  });
});

// ---------------------------------------------------------------------------------------------
// Non-Error throwables: never a crash, never a 500 that should have been a refusal
// ---------------------------------------------------------------------------------------------

describe("anything a merchant's function may throw", () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const trap = () => {
    throw new Error(`trap ${VISA} cvv ${CVV}`);
  };
  const throwables: [string, () => unknown][] = [
    ["a string quoting the card", () => `failed ${VISA} cvv ${CVV}`],
    ["null", () => null],
    ["undefined", () => undefined],
    ["a number", () => 42],
    ["a symbol", () => Symbol(`sym ${CVV}`)],
    ["a bigint", () => 10n],
    ["a plain object with card data", () => ({ card: VISA, cvv: CVV, message: `m ${VISA}` })],
    [
      "an object whose toString throws",
      () => ({
        toString: trap,
      }),
    ],
    [
      "an object whose getters throw",
      () =>
        Object.defineProperties(
          {},
          {
            message: { get: trap },
            name: { get: trap },
            code: { get: trap },
          },
        ),
    ],
    [
      "an Error whose getters throw",
      () =>
        Object.defineProperties(new Error("x"), { message: { get: trap }, stack: { get: trap } }),
    ],
    [
      "a Proxy whose every trap throws",
      () =>
        new Proxy(
          {},
          {
            get: trap,
            getPrototypeOf: trap,
            has: trap,
            ownKeys: trap,
            getOwnPropertyDescriptor: trap,
          },
        ),
    ],
    ["a revoked Proxy", () => revoked.proxy],
    ["a 5 MB string quoting the card at the end", () => `${"x".repeat(5_000_000)} ${VISA} ${CVV}`],
    ["an Error with a 5 MB message", () => new Error(`${"y".repeat(5_000_000)} ${VISA} ${CVV}`)],
  ];

  it.each(throwables)("%s: a well-formed 500, onError told, no card data", async (_label, make) => {
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw make();
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(JSON.stringify(payment())));
    expect(response.status).toBe(500);
    expect(json(response)).toStrictEqual({
      Success: false,
      ErrorCode: "INTERNAL_ERROR",
      Message: "Internal error",
      Description: "",
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]?.kind).toBe("internal_error");
    for (const text of strings(failures)) {
      expect(text.includes(VISA)).toBe(false);
      expect(quotesCvv(text)).toBe(false);
    }
  });

  it.each(throwables)(
    "%s: the default console line, no crash, no card data",
    async (_label, make) => {
      const handler = createPerformOrderPaymentHandler(
        () => {
          throw make();
        },
        { auth: false },
      );
      expect((await handler.handle(post(JSON.stringify(payment())))).status).toBe(500);
      expect(consoleLines).toHaveLength(1);
      expect((consoleLines[0] as string).includes(VISA)).toBe(false);
      expect(quotesCvv(consoleLines[0] as string)).toBe(false);
    },
  );

  it("a CallbackError whose fields throw on read is still the merchant's refusal", async () => {
    class Hostile extends CallbackError {
      override get message(): string {
        throw new Error(`no message ${VISA}`);
      }
      override set message(_value: string) {}
    }
    const error = new Hostile("DECLINED", "ignored", "desc");
    Object.defineProperty(error, "description", { get: trap });
    Object.defineProperty(error, "status", { get: trap });
    const { failures, onError } = collector();
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw error;
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post(JSON.stringify(payment())));
    expect(response.status).toBe(200);
    expect(json(response)).toMatchObject({ Success: false, ErrorCode: "DECLINED" });
    expect(failures[0]?.kind).toBe("handler_failure");
    for (const text of strings(failures)) expect(text.includes(VISA)).toBe(false);
  });

  it("a CallbackError with a 5 MB message is answered as the refusal, card data masked", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw new CallbackError("DECLINED", `${"z".repeat(5_000_000)} ${VISA} ${CVV}`);
      },
      { auth: false, onError: () => undefined },
    );
    const response = await handler.handle(post(JSON.stringify(payment())));
    expect(response.status).toBe(200);
    expect(response.body.includes(VISA)).toBe(false);
    expect(quotesCvv(response.body)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. A very long CardNumber or CVVNumber
// ---------------------------------------------------------------------------------------------

describe("2. a ~300,000-character CardNumber or CVVNumber", () => {
  const LONG_CARD = `4${"1".repeat(299_999)}`;
  const LONG_CVV = "7".repeat(300_000);

  it.each([
    ["card number", LONG_CARD, CVV],
    ["CVV", VISA, LONG_CVV],
    ["both", LONG_CARD, LONG_CVV],
  ])(
    "long %s: the refusal stays a refusal, and the secret is never emitted",
    async (_label, pan, cvv) => {
      const body = JSON.stringify(payment(pan, cvv));
      expect(body.length).toBeLessThan(1024 * 1024);
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        () => {
          throw new CallbackError("DECLINED", `card ${pan} cvv ${cvv}`, `again: ${pan}/${cvv}`);
        },
        { auth: false, onError },
      );
      const response = await handler.handle(post(body));
      expect(response.status).toBe(200);
      expect(json(response)).toMatchObject({
        Success: false,
        ErrorCode: "DECLINED",
        Message: expect.stringMatching(/^card \*+1* cvv \*\*\*$/),
      });
      const texts = [response.body, ...strings(failures)];
      for (const text of texts) {
        expect(text.includes(pan)).toBe(false);
        expect(cvv === CVV ? quotesCvv(text) : text.includes(cvv)).toBe(false);
      }
      expect(failures[0]).toMatchObject({ kind: "handler_failure", status: 200 });
    },
  );

  it("long card data and a plain exception: the console line emits no secret", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => {
        throw new Error(`card ${LONG_CARD} cvv ${LONG_CVV}`);
      },
      { auth: false },
    );
    const response = await handler.handle(post(JSON.stringify(payment(LONG_CARD, LONG_CVV))));
    expect(response.status).toBe(500);
    expect(consoleLines).toHaveLength(1);
    expect(consoleLines[0]?.includes(LONG_CARD)).toBe(false);
    expect(consoleLines[0]?.includes(LONG_CVV)).toBe(false);
    expect(consoleLines[0]?.length).toBeLessThan(10_000);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. A result report quoting the CVV
// ---------------------------------------------------------------------------------------------

describe("3. what is reported about the merchant's result goes through the redactor", () => {
  it("an unknown result key that is this request's CVV is never quoted", async () => {
    const { failures, onError } = collector();
    const handler = createUpdateOrderStatusHandler(() => ({ [CVV]: "x" }) as never, {
      auth: false,
      onError,
    });
    const body = { OrderId: "GE100", StatusCode: "new", PaymentDetails: card() };
    await handler.handle(post(JSON.stringify(body)));
    // Reported (a 500 today; a warning once unknown result fields only warn), never quoted.
    expect(failures.length).toBeGreaterThan(0);
    for (const text of strings(failures)) expect(quotesCvv(text), text).toBe(false);
  });

  it("an unknown result key that is a card number is masked", async () => {
    const { failures, onError } = collector();
    const handler = createUpdateOrderStatusHandler(() => ({ [VISA]: "x" }) as never, {
      auth: false,
      onError,
    });
    await handler.handle(post(JSON.stringify({ OrderId: "GE100", StatusCode: "new" })));
    for (const text of strings(failures)) expect(text).not.toContain(VISA);
  });
});

// ---------------------------------------------------------------------------------------------
// 4. `__proto__` keys never reach the merchant, whatever the transport
// ---------------------------------------------------------------------------------------------

/** Paths of every own `__proto__` key reachable from a value. */
function protoKeys(value: unknown, path = "$", out: string[] = []): string[] {
  if (value === null || typeof value !== "object") return out;
  if (Object.hasOwn(value, "__proto__")) out.push(`${path}.__proto__`);
  for (const key of Object.keys(value)) {
    protoKeys((value as Record<string, unknown>)[key], `${path}.${key}`, out);
  }
  return out;
}

const POISON =
  '{"__proto__":{"polluted":true,"OrderId":"forged"},"constructor":{"prototype":{"polluted":true}}}';

const TRANSPORTS: [string, (text: string) => BodyInput][] = [
  ["string", (text) => text],
  ["bytes", (text) => new TextEncoder().encode(text)],
  ["a chunked stream", (text) => trackedStream(chunked(text, 7)).stream],
  ["an async iterable", (text) => trackedIterable(chunked(text, 5)).iterable],
  ["an already-parsed object", (text) => parsed(JSON.parse(text))],
];

interface Seen {
  payload: unknown;
  raw: unknown;
}

async function deliver(
  make: (
    fn: (payload: unknown, context: { rawPayload: unknown }) => unknown,
    options: HandlerOptions,
  ) => CallbackHandler,
  text: string,
  transport: (text: string) => BodyInput,
  result: unknown = undefined,
): Promise<Seen> {
  const seen: Seen[] = [];
  const { failures, onError } = collector();
  const handler = make(
    (payload, context) => {
      seen.push({ payload, raw: context.rawPayload });
      return result;
    },
    { auth: false, onError },
  );
  const response = await handler.handle(post(transport(text)));
  expect(failures).toEqual([]);
  expect(response.status).toBe(200);
  expect(seen).toHaveLength(1);
  return seen[0] as Seen;
}

function expectSealed(seen: Seen): void {
  expect(protoKeys(seen.payload)).toEqual([]);
  expect(protoKeys(seen.raw)).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe("4. __proto__ keys are dropped at every level, known fields and unknown alike", () => {
  const updateOrderStatus = createUpdateOrderStatusHandler as never as Parameters<
    typeof deliver
  >[0];
  const rma = createSendRMAInfoToMerchantHandler as never as Parameters<typeof deliver>[0];
  const documents = createSendAdditionalRequiredDocumentsToMerchantHandler as never as Parameters<
    typeof deliver
  >[0];
  const inner = POISON.slice(1, -1);

  for (const [label, transport] of TRANSPORTS) {
    describe(`body as ${label}`, () => {
      it("UpdateOrderStatus: OrderStatusReason, an unknown field, PaymentDetails, arrays", async () => {
        const text = `{"OrderId":"GE1","StatusCode":"cancelled",${inner},"OrderStatusReason":{${inner},"Code":"R1"},"Extra":[{${inner}},[{${inner}}]],"PaymentDetails":{${inner},"CardNumber":"${VISA}","CVVNumber":"${CVV}","ExpirationDate":"2030-03-31","PaymentMethodCode":"1","PaymentMethodName":"Visa","PaymentMethodTypeCode":"CreditCard","CountryCode":"US","CountryName":"US"},"Products":[{${inner},"Sku":"A","Price":1,"Quantity":1,"VATRate":0,"Attributes":[{${inner}}]}]}`;
        const seen = await deliver(updateOrderStatus, text, transport);
        expectSealed(seen);
        const payload = seen.payload as Record<string, Record<string, unknown>>;
        const reason = payload.OrderStatusReason as Record<string, unknown>;
        expect(reason.Code).toBe("R1");
        const copied = Object.assign({}, reason) as Record<string, unknown>;
        expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
        expect(copied.polluted).toBeUndefined();
        // `constructor` keys stay plain own data (README).
        expect(Object.getOwnPropertyDescriptor(reason, "constructor")?.value).toStrictEqual({
          prototype: { polluted: true },
        });
        expect(payload.OrderId).toBe("GE1");
      });

      it("SendRMAInfoToMerchant: a PaymentDetails its schema does not describe", async () => {
        const text = `{"OrderId":"GE1","RMANumber":"R","ReturnedProducts":[],"PaymentDetails":{${inner},"CardNumber":"${VISA}","CVVNumber":"${CVV}"}}`;
        const seen = await deliver(rma, text, transport);
        expectSealed(seen);
      });

      it("SendAdditionalRequiredDocumentsToMerchant: Documents[]", async () => {
        const text = `{"OrderId":"GE1",${inner},"Documents":[{${inner},"DocumentUrl":"u"},{"Nested":{${inner}}}]}`;
        const seen = await deliver(documents, text, transport);
        expectSealed(seen);
        const docs = (seen.payload as { Documents: Record<string, unknown>[] }).Documents;
        expect(docs[0]?.DocumentUrl).toBe("u");
      });
    });
  }

  it("through the fetch adapter, from a Request", async () => {
    const seen: Seen[] = [];
    const handler = toFetch(
      createSendAdditionalRequiredDocumentsToMerchantHandler(
        (payload, context) => {
          seen.push({ payload, raw: context.rawPayload });
        },
        { auth: false },
      ),
    );
    const body = `{"OrderId":"GE1",${inner},"Documents":[{${inner},"DocumentUrl":"u"}]}`;
    const response = await handler(new Request("http://merchant/cb", { method: "POST", body }));
    expect(response.status).toBe(200);
    expectSealed(seen[0] as Seen);
  });

  it("GetCheckoutCartInfo: a __proto__ query parameter and __proto__ keys in a POST body", async () => {
    const seen: unknown[] = [];
    const { failures, onError } = collector();
    const handler = createGetCheckoutCartInfoHandler(
      (query) => {
        seen.push(query);
        return { productsList: [] };
      },
      { auth: false, onError },
    );
    const get = await handler.handle({
      method: "GET",
      url: "/cart?merchantCartToken=t&__proto__=x&constructor=y",
      headers: {},
    });
    expect(get.status).toBe(200);
    const post_ = await handler.handle(
      post(`{"merchantCartToken":"t",${inner},"Extra":{${inner}}}`, {}, "/cart?__proto__=q"),
    );
    expect(post_.status).toBe(200);
    expect(failures).toEqual([]);
    for (const query of seen) {
      expect(protoKeys(query)).toEqual([]);
      expect((query as Record<string, unknown>).merchantCartToken).toBe("t");
    }
    expect((seen[0] as Record<string, unknown>).constructor).toBe("y");
  });

  it("GetCheckoutCartInfo behind a parser: req.body itself keeps no __proto__ key, at any level", async () => {
    // Found by the fuzzer: the payload is built from the body's fields, so the body's own top
    // level was never walked; its `__proto__` key (and any CVV under it) stayed in req.body.
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
      auth: false,
      onError: () => undefined,
    });
    const body = JSON.parse(
      `{"merchantCartToken":"t","__proto__":{"PaymentDetails":{"CardNumber":"${VISA}","CVVNumber":"${CVV}"}},"Extra":{${inner}}}`,
    ) as Record<string, unknown>;
    expect((await handler.handle(post(parsed(body), {}, "/cart"))).status).toBe(200);
    expect(protoKeys(body)).toEqual([]);
    expect(body.merchantCartToken).toBe("t");
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Card fields wherever a PaymentDetails object appears
// ---------------------------------------------------------------------------------------------

describe("5. card protection does not depend on which schema lists PaymentDetails", () => {
  const INVALID_RMA = {
    Success: "False",
    Message: "Invalid request payload",
  };

  it.each([
    ["a numeric CardNumber", 4111111111111111, CVV, "PaymentDetails.CardNumber"],
    ["a numeric CVVNumber", VISA, 737, "PaymentDetails.CVVNumber"],
    ["a boolean CardNumber", true, CVV, "PaymentDetails.CardNumber"],
    ["an object CVVNumber", VISA, { v: CVV }, "PaymentDetails.CVVNumber"],
  ])(
    "%s in SendRMAInfoToMerchant (no PaymentDetails in its schema) is a 400",
    async (_l, pan, cvv, path) => {
      const { failures, onError } = collector();
      const seen: unknown[] = [];
      const handler = createSendRMAInfoToMerchantHandler((p) => void seen.push(p), {
        auth: false,
        onError,
      });
      const body = {
        OrderId: "GE1",
        RMANumber: "R",
        ReturnedProducts: [],
        PaymentDetails: card(pan, cvv),
      };
      const response = await handler.handle(post(JSON.stringify(body)));
      expect(response.status).toBe(400);
      expect(json(response)).toMatchObject({
        ...INVALID_RMA,
        Description: expect.stringContaining(path),
      });
      expect(seen).toEqual([]);
      expect(failures[0]?.kind).toBe("invalid_payload");
      for (const text of [response.body, ...strings(failures)]) {
        expect(text).not.toContain(VISA);
        expect(text).not.toContain("4111111111111111");
      }
    },
  );

  it("a numeric CardNumber nested anywhere (OrderPaymentMethods[].PaymentDetails) is a 400", async () => {
    const { failures, onError } = collector();
    const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "1" }), {
      auth: false,
      onError,
    });
    const body = {
      OrderId: "GE1",
      Products: [],
      OrderPaymentMethods: [{ PaymentMethodId: 1, PaymentDetails: card(4111111111111111) }],
    };
    const response = await handler.handle(post(JSON.stringify(body)));
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({
      ErrorCode: "INVALID_PAYLOAD",
      Description: expect.stringContaining("OrderPaymentMethods.0.PaymentDetails.CardNumber"),
    });
    expect(failures[0]?.kind).toBe("invalid_payload");
  });

  it.each([
    ["a string", "4111111111111111"],
    ["an array", [VISA]],
  ])("a PaymentDetails that is %s (not an object or null) is a 400", async (_l, details) => {
    const handler = createSendRMAInfoToMerchantHandler(() => undefined, {
      auth: false,
      onError: () => undefined,
    });
    const body = { OrderId: "GE1", RMANumber: "R", ReturnedProducts: [], PaymentDetails: details };
    const response = await handler.handle(post(JSON.stringify(body)));
    expect(response.status).toBe(400);
    expect(response.body).not.toContain(VISA);
  });

  it("a string card nested where no schema looks: masked in every view, CVV gone after", async () => {
    const seen: Record<string, unknown>[] = [];
    let views: string[] = [];
    const handler = createSendRMAInfoToMerchantHandler(
      (payload, context) => {
        seen.push(
          payload as unknown as Record<string, unknown>,
          context.rawPayload as unknown as Record<string, unknown>,
        );
        views = [
          JSON.stringify(payload),
          inspect(payload, { depth: 20 }),
          JSON.stringify(context.rawPayload),
        ];
        throw new Error(`declined ${CVV}`);
      },
      { auth: false, onError: () => undefined },
    );
    const body = {
      OrderId: "GE1",
      RMANumber: "R",
      ReturnedProducts: [{ Sku: "A", Refund: { PaymentDetails: card() } }],
      PaymentDetails: card(),
    };
    for (const input of [JSON.stringify(body), parsed(JSON.parse(JSON.stringify(body)))]) {
      const response = await handler.handle(post(input));
      expect(response.status).toBe(500);
      for (const view of views) {
        expect(view).not.toContain(VISA);
        expect(quotesCvv(view), view).toBe(false);
      }
      for (const object of seen.splice(0)) {
        const top = object.PaymentDetails as Record<string, unknown>;
        const products = object.ReturnedProducts as { Refund: Record<string, unknown> }[];
        const nested = products[0]?.Refund.PaymentDetails as Record<string, unknown>;
        for (const details of [top, nested]) {
          expect(details.CardNumber).toBe(VISA);
          expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
          expect(String(details)).toBe("[PaymentDetails ************1111]");
        }
      }
    }
  });

  it("a framework's parsed body keeps no CVV when the request is refused after the walk (schema, payload check)", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => ({ PaymentAmount: 1, PaymentCurrencyCode: "EUR" }),
      { auth: new StubAuthenticator("deny-payload"), onError: () => undefined },
    );
    const bodies = {
      // Refused by the schema (OrderId missing), by the payload check, or answered.
      schema: { PaymentDetails: card(), Extra: [{ PaymentDetails: card() }] },
      guid: payment(),
    };
    for (const body of Object.values(bodies)) {
      const response = await handler.handle(post(parsed(body)));
      expect([400, 401]).toContain(response.status);
      for (const details of [
        body.PaymentDetails,
        ...((body as { Extra?: { PaymentDetails: unknown }[] }).Extra ?? []).map(
          (e) => e.PaymentDetails,
        ),
      ]) {
        expect(Object.hasOwn(details as object, "CVVNumber")).toBe(false);
        expect((details as Record<string, unknown>).CardNumber).toBe(VISA);
      }
    }
  });

  it("null or absent card fields: accepted, printed without a crash", async () => {
    const views: string[] = [];
    const handler = createSendRMAInfoToMerchantHandler(
      (payload) => {
        views.push(
          JSON.stringify(payload),
          inspect(payload, { depth: 10 }),
          String((payload as unknown as { PaymentDetails: unknown }).PaymentDetails),
        );
      },
      { auth: false, onError: () => undefined },
    );
    for (const details of [card(null, null), { PaymentMethodCode: "OT" }, null]) {
      const body = {
        OrderId: "GE1",
        RMANumber: "R",
        ReturnedProducts: [],
        PaymentDetails: details,
      };
      const response = await handler.handle(post(JSON.stringify(body)));
      expect(response.status).toBe(200);
    }
    expect(views.length).toBe(9);
    expect(views[2]).toBe("[PaymentDetails]");
    expect(views[0]).toContain('"CardNumber":null');
  });

  it("a numeric CardNumber in a callback whose schema lists PaymentDetails stays a 400", async () => {
    const handler = createPerformOrderPaymentHandler(
      () => ({ PaymentAmount: 1, PaymentCurrencyCode: "EUR" }),
      {
        auth: false,
        onError: () => undefined,
      },
    );
    const response = await handler.handle(post(JSON.stringify(payment(4111111111111111))));
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({ ErrorCode: "INVALID_PAYLOAD" });
    expect(response.body).not.toContain(VISA);
  });
});
