// What onError and the default console line receive in the corners of the failure reporting
// (review ops: 5, 6, 8, 10).
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import vm from "node:vm";
import { describe, expect, it, vi } from "vitest";
import {
  CallbackError,
  type CallbackFailure,
  createAuth,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createMemoryIdempotencyStore,
  createSendOrderToMerchantHandler,
  createUpdateOrderStatusHandler,
  withIdempotency,
} from "../../src/index.js";

const body = '{"OrderId":"1","StatusCode":"x"}';
const post = { method: "POST", url: "/x", headers: {}, body };

describe("onError", () => {
  it("an async onError from another realm that rejects leaves no unhandled rejection (ops-5)", async () => {
    const unhandled: unknown[] = [];
    const listener = (error: unknown) => void unhandled.push(error);
    process.on("unhandledRejection", listener);
    const onError = vm.runInNewContext("(async () => { throw new Error('log shipper down') })");
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw new Error("boom");
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post);
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.off("unhandledRejection", listener);
    expect(response.status).toBe(500);
    expect(unhandled.map(String)).toEqual([]);
  });

  it.each([
    [
      "throw undefined",
      () => {
        throw undefined;
      },
    ],
    ["Promise.reject()", () => Promise.reject()],
  ])("%s reaches onError as a NonError (ops-6)", async (_label, fn) => {
    const failures: CallbackFailure[] = [];
    const handler = createUpdateOrderStatusHandler(fn as never, {
      auth: false,
      onError: (failure) => void failures.push(failure),
    });
    const response = await handler.handle(post);
    expect(response.status).toBe(500);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.error).toBeInstanceOf(Error);
    expect(failures[0]?.error).toMatchObject({ name: "NonError", message: "undefined" });
  });

  it("the default console line says undefined was thrown (ops-6)", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw undefined;
      },
      { auth: false },
    );
    await handler.handle(post);
    const line = String(spy.mock.calls[0]?.[0]);
    spy.mockRestore();
    expect(line).toMatch(/the handler threw \(NonError: undefined\)/);
  });

  it("a CallbackError whose message getter throws is answered with its code as the message (ops-8)", async () => {
    const failures: CallbackFailure[] = [];
    const error = new CallbackError("OUT_OF_STOCK", "x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("getter");
      },
    });
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw error;
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    const response = await handler.handle(post);
    const answer = JSON.parse(response.body);
    expect(answer.ErrorCode).toBe("OUT_OF_STOCK");
    expect(answer.Message).not.toBe("undefined");
    expect(answer.Message).toBe("OUT_OF_STOCK");
    expect(failures[0]?.reason).toBe("OUT_OF_STOCK: (its message could not be read)");
  });
});

describe("the router's 404 (ops-10)", () => {
  it("names the method and the path asked for, never the query", async () => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      basePath: "/crossborder",
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    const response = await router.handle({
      method: "POST",
      url: "/api/crossborder/UpdateOrderStatus?secret=s3cr3t",
      headers: {},
      body: "{}",
    });
    expect(response.status).toBe(404);
    expect(failures[0]?.reason).toBe(
      "no callback at this path: POST /api/crossborder/UpdateOrderStatus",
    );
    expect(failures[0]?.reason).not.toContain("s3cr3t");
  });

  // Review adversary (ADVERSARY-2): the path was quoted with its escapes as sent, so a card number
  // written `%34%31…` (or with one digit escaped) was masked nowhere.
  it.each([
    ["every digit escaped", "/x/%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"],
    ["one digit escaped", "/x/411111111111111%31"],
  ])("names a path by its decoded text, masked: %s", async (_label, path) => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    const response = await router.handle({ method: "POST", url: path, headers: {}, body: "{}" });
    expect(response.status).toBe(404);
    expect(failures[0]?.reason).toBe("no callback at this path: POST /x/************1111");
  });

  // Review second-doubt (SECOND-DOUBT-5): every ASCII escape was decoded (`%2F` and `%3F` read as
  // another path with a query), and a card number escaped twice was quoted as sent.
  it.each([
    ["other escapes kept", "/a%2Fb%3Fx=/%34111111111111111", "/a%2Fb%3Fx=/************1111"],
    [
      "escaped twice",
      `/x/${[..."4111111111111111"].map((d) => `%25${(0x30 + Number(d)).toString(16)}`).join("")}`,
      "/x/************1111",
    ],
    // Review second-seq (SECOND-SEQ-8): three rounds at most, and other segments decoded with it.
    [
      "escaped four times",
      `/x/${[..."4111111111111111"].map((d) => `%252525${(0x30 + Number(d)).toString(16)}`).join("")}`,
      "/x/************1111",
    ],
    [
      "another segment's escapes kept",
      `/a%2520b/${[..."4111111111111111"].map((d) => `%${(0x30 + Number(d)).toString(16)}`).join("")}`,
      "/a%2520b/************1111",
    ],
    // Review final2: a separator escaped once (`%2E` beside `.`, `%5F` beside `_`).
    ["%2E beside .", "/x/4111%2E1111.1111.1111", "/x/****.****.****.1111"],
    ["digits and %2E", "/x/%34%31%31%31%2E1111.1111.1111", "/x/****.****.****.1111"],
    // Review last: a non-ASCII separator the masker knows (U+202F), and a decoded segment's
    // `/`, `?` that would read as another route and a query.
    ["U+202F escaped", "/x/4111%E2%80%AF1111%E2%80%AF1111%E2%80%AF1111", null],
    [
      "%2F and %3F kept escaped",
      "/x/4111111111111111%2Fadmin%3Fq%3D1",
      "/x/************1111%2Fadmin%3Fq=1",
    ],
  ])("decodes only what spells a card number: %s", async (_label, path, shown) => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    await router.handle({ method: "POST", url: path, headers: {}, body: "{}" });
    if (shown === null) expect(failures[0]?.reason).not.toMatch(/4111|1111.*1111.*1111/);
    else expect(failures[0]?.reason).toBe(`no callback at this path: POST ${shown}`);
  });

  it("names a path whose escapes are not UTF-8 as sent", async () => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    await router.handle({ method: "POST", url: "/x/%E0%A4%A/%zz", headers: {}, body: "{}" });
    expect(failures[0]?.reason).toBe("no callback at this path: POST /x/%E0%A4%A/%zz");
  });
});

// Review observe-5: the copy's message and stack were non-enumerable, so a JSON logger (pino's
// `logger.error(failure)`, winston's json format, JSON.stringify) wrote `"error":{"name":…}`.
describe("the error copy written by a JSON logger (observe-5)", () => {
  const CARD = "4111111111111111";
  const order = readFileSync(
    new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
    "utf8",
  );
  const orderPost = { method: "POST", url: "/x", headers: {}, body: order };

  it("JSON.stringify(failure) keeps the message, the stack and the code, still masked", async () => {
    class ProviderError extends Error {
      override name = "ProviderError";
      constructor(
        message: string,
        readonly request: unknown,
      ) {
        super(message, { cause: new Error(`inner ${CARD}`) });
      }
    }
    const failures: CallbackFailure[] = [];
    const handler = createSendOrderToMerchantHandler(
      (o) => {
        const card = (o.PaymentDetails as { CardNumber?: string } | undefined)?.CardNumber;
        throw Object.assign(new ProviderError(`gateway timeout charging ${card}`, o), {
          code: "ETIMEDOUT",
        });
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    const response = await handler.handle(orderPost);
    expect(response.status).toBe(500);
    const text = JSON.stringify(failures[0]);
    const logged = JSON.parse(text);
    expect(logged.error.name).toBe("ProviderError");
    expect(logged.error.message).toBe("gateway timeout charging ************1111");
    expect(logged.error.stack).toContain(
      "ProviderError: gateway timeout charging ************1111",
    );
    expect(logged.error.code).toBe("ETIMEDOUT");
    expect(Object.keys(logged.error).sort()).toStrictEqual(["code", "message", "name", "stack"]);
    expect(text).not.toContain(CARD);
    expect(text).not.toContain("inner");
    expect(text).not.toContain("OrderId");
    // A console shows the error as before: its stack once, no `message:`/`stack:` keys.
    const shown = inspect(failures[0]?.error);
    expect(shown).not.toMatch(/message:|stack:/);
  });

  // Review second-obs-4: a thrown non-Error (or an Error whose stack was cleared) was copied with
  // an enumerable `stack: undefined`, which console.log(failure) printed as `{ stack: undefined }`.
  it.each([
    ["a string", "boom"],
    ["undefined", undefined],
    ["an error without a stack", Object.assign(new Error("nostack"), { stack: undefined })],
  ])(
    "console.log of a report whose function threw %s shows no stack: undefined",
    async (_name, thrown) => {
      const failures: CallbackFailure[] = [];
      const handler = createUpdateOrderStatusHandler(
        () => {
          throw thrown;
        },
        { auth: false, onError: (failure) => void failures.push(failure) },
      );
      await handler.handle({
        method: "POST",
        url: "/x",
        headers: {},
        body: '{"OrderId":"1","StatusCode":"x"}',
      });
      const error = failures[0]?.error as Error;
      expect(inspect(error)).not.toContain("stack: undefined");
      expect(Object.hasOwn(error, "stack")).toBe(false);
      expect(Object.keys(JSON.parse(JSON.stringify(error))).sort()).toStrictEqual([
        "message",
        "name",
      ]);
    },
  );

  it("a library error's copy writes its documented fields too", async () => {
    const failures: CallbackFailure[] = [];
    const handler = createSendOrderToMerchantHandler(
      () => {
        throw new CallbackError("DECLINED", `card ${CARD} declined`, "try another card", {
          status: 422,
        });
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    await handler.handle(orderPost);
    const logged = JSON.parse(JSON.stringify(failures[0]));
    expect(failures[0]?.error).toBeInstanceOf(CallbackError);
    expect(logged.error).toMatchObject({
      name: "CallbackError",
      message: "card ************1111 declined",
      code: "DECLINED",
      description: "try another card",
      status: 422,
    });
    expect(logged.error.stack).toContain("card ************1111 declined");
  });
});

// Review observe-2: the default line appended the error only for internal_error and
// client_closed, so a warning (a failOpen claim, a failed background record, a result getter
// that threw) said that something failed and never why.
describe("the default console line of a warning (observe-2)", () => {
  const order = readFileSync(
    new URL("../fixtures/SendOrderToMerchant.json", import.meta.url),
    "utf8",
  );
  const orderPost = { method: "POST", url: "/x", headers: {}, body: order };

  it("a failOpen claim failure says why the store failed", async () => {
    const spy = vi.spyOn(console, "warn").mockImplementation(() => {});
    const memory = createMemoryIdempotencyStore();
    const store = {
      ...memory,
      claim: async () => {
        throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:6379"), {
          code: "ECONNREFUSED",
        });
      },
    };
    const handler = createSendOrderToMerchantHandler(
      withIdempotency(() => ({ InternalOrderId: "M-1" }), { store, failOpen: true }),
      { auth: false },
    );
    const response = await handler.handle(orderPost);
    const lines = spy.mock.calls.map((call) => String(call[0]));
    spy.mockRestore();
    expect(response.status).toBe(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /200 warning store_failure: withIdempotency: the store failed to claim/,
    );
    expect(lines[0]).toMatch(/\(failOpen\) \(Error: connect ECONNREFUSED 10\.0\.0\.5:6379\)$/);
  });

  it("a result field whose getter threw says what it threw, card data masked", async () => {
    const spy = vi.spyOn(console, "warn").mockImplementation(() => {});
    const handler = createSendOrderToMerchantHandler(
      () => ({
        get InternalOrderId(): string {
          throw new Error("lazy load failed for card 4111111111111111");
        },
      }),
      { auth: false },
    );
    await handler.handle(orderPost);
    const lines = spy.mock.calls.map((call) => String(call[0]));
    spy.mockRestore();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("warning result_incomplete");
    expect(lines[0]).toMatch(/\(Error: lazy load failed for card \*{12}1111\)$/);
  });

  it("a warning without an error is the reason alone", async () => {
    const spy = vi.spyOn(console, "warn").mockImplementation(() => {});
    const handler = createSendOrderToMerchantHandler(() => ({}) as never, { auth: false });
    await handler.handle(orderPost);
    const line = String(spy.mock.calls[0]?.[0]);
    spy.mockRestore();
    expect(line).toMatch(/missing InternalOrderId$/);
  });
});

// Review observe-3: no report said which order it was about ("missing InternalOrderId", yet
// the README promises never a silently missing id).
describe("the order a report is about (observe-3)", () => {
  const order = JSON.parse(
    readFileSync(new URL("../fixtures/SendOrderToMerchant.json", import.meta.url), "utf8"),
  ) as Record<string, unknown>;
  const send = (fn: unknown, body = JSON.stringify(order)) => {
    const failures: CallbackFailure[] = [];
    const handler = createSendOrderToMerchantHandler(fn as never, {
      auth: false,
      onError: (failure) => void failures.push(failure),
    });
    return handler.handle({ method: "POST", url: "/x", headers: {}, body }).then(() => failures);
  };

  it.each([
    ["result_incomplete (missing InternalOrderId)", () => ({})],
    [
      "internal_error (the function threw)",
      () => {
        throw new Error("db down");
      },
    ],
    [
      "handler_failure (a CallbackError)",
      () => {
        throw new CallbackError("OUT_OF_STOCK", "no stock");
      },
    ],
    ["internal_error (an unusable result)", () => ({ InternalOrderId: "M-1", Success: false })],
  ])("%s names the delivery's OrderId", async (_label, fn) => {
    const failures = await send(fn);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.orderId).toBe(order.OrderId);
    expect(JSON.stringify(failures[0])).not.toContain("4111111111111111");
  });

  it("a refusal before the payload was validated names none", async () => {
    const failures = await send(() => ({ InternalOrderId: "M-1" }), '{"OrderId": 5}');
    expect(failures[0]?.kind).toBe("invalid_payload");
    expect("orderId" in (failures[0] ?? {})).toBe(false);
  });

  // Review second-obs (second-obs-3): a Luhn-valid id was named in clear beside a reason that
  // masks it (security.md #27: no Luhn-valid 13-19 digit run in an error object): masked the same.
  it("a Luhn-valid order id is masked as the reason masks it; the request's own card number never", async () => {
    const luhn = "4006381333908";
    const card = (order.PaymentDetails as { CardNumber: string }).CardNumber;
    const [kept] = await send(() => ({}), JSON.stringify({ ...order, OrderId: luhn }));
    expect(kept?.orderId).toBe("*********3908");
    const [plain] = await send(() => ({}), JSON.stringify({ ...order, OrderId: "GE927127001US" }));
    expect(plain?.orderId).toBe("GE927127001US");
    const [masked] = await send(() => ({}), JSON.stringify({ ...order, OrderId: `GE-${card}` }));
    expect(masked?.orderId).not.toContain(card);
  });

  it("a cart's report names its token", async () => {
    const failures: CallbackFailure[] = [];
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: 5 }) as never, {
      auth: false,
      onError: (failure) => void failures.push(failure),
    });
    await handler.handle({ method: "GET", url: "/?merchantCartToken=cart-77", headers: {} });
    expect(failures[0]?.kind).toBe("internal_error");
    expect(failures[0]?.orderId).toBe("cart-77");
  });

  // Review final2: where the cart token is the credential (createAuth's cartToken), the report of
  // a function that threw named the token whole as orderId, while the check's own reports mask it.
  it("a cart token that is the credential is not named", async () => {
    const token = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LWNhcnQ.sig-abcdef";
    const failures: CallbackFailure[] = [];
    const auth = await createAuth({ cartToken: { verify: (given) => given === token } });
    const handler = createGetCheckoutCartInfoHandler(
      () => {
        throw new Error("db down");
      },
      { auth, onError: (failure) => void failures.push(failure) },
    );
    const url = `/cart?merchantCartToken=${encodeURIComponent(token)}&countryCode=US`;
    const response = await handler.handle({ method: "GET", url, headers: {} });
    expect(response.status).toBe(500);
    expect(failures).toHaveLength(1);
    expect("orderId" in (failures[0] ?? {})).toBe(false);
    expect(JSON.stringify(failures)).not.toContain(token);
  });
});
