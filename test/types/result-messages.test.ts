// What the compiler says when a merchant's function returns a wrong result (review dx-2), under
// the tsconfig.json of `tsc --init` (strict, exactOptionalPropertyTypes): the message names the
// unknown field and the callback, says that `Success` is the library's to write, is as short for
// an async function as the check allows (never through `then`/`onfulfilled`), and in the
// router's `handlers` each mistake is its own short error at the field, none hiding another.
// Payload types stay inferred as they were.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, describe as describeDiagnostic, type Project } from "./program.js";

const HEADER = `import {
  createCallbackRouter,
  createRedeemGiftCardHandler,
  createSendOrderToMerchantHandler,
  createSendRMAInfoToMerchantHandler,
  createUpdateOrderStatusHandler,
  createUpdateParcelDispatchHandler,
  type CallbackContext,
  type SendOrderToMerchantRequest,
  type UpdateOrderStatusRequest,
} from "crossborder-callbacks";
const options = { auth: false } as const;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
`;
const FIRST = HEADER.split("\n").length;

const FILES = {
  // One line each, from FIRST on.
  "misspelt.ts": `${HEADER}export const a = createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderId, PaymentAmout: 3 }), options);
export const b = createUpdateParcelDispatchHandler(() => ({ Mesage: "sent" }), options);
`,
  "success.ts": `${HEADER}export const a = createSendOrderToMerchantHandler(() => ({ Success: true, InternalOrderId: "M-1" }), options);
export const b = createUpdateParcelDispatchHandler(() => ({ Success: "true", Message: "x" }), options);
export const c = createSendRMAInfoToMerchantHandler(() => ({ Success: "True" }), options);
`,
  "async.ts": `${HEADER}export const a = createSendOrderToMerchantHandler(async (order) => ({ InternalOrderId: order.OrderId, PaymentAmout: 3 }), options);
export const b = createSendOrderToMerchantHandler(async (order) => ({ InternalOrderID: order.OrderId }), options);
`,
  "router.ts": `${HEADER}export const router = createCallbackRouter({ ...options, handlers: {
  SendOrderToMerchant: (order) => ({ InternalOrderID: order.OrderId }),
  ValidateGiftCard: () => ({ Balance: 3 }),
  UpdateOrderStatus: (update) => ({ InternalOrderId: update.OrderId, StatusCod: update.StatusCode }),
  SendOrderToMerchent: () => ({ InternalOrderId: "M-1" }),
  UpdateParcelDispatch: async () => ({ Success: true }),
} });
`,
  "inferred.ts": `${HEADER}export const router = createCallbackRouter({ ...options, handlers: {
  SendOrderToMerchant: (order, context) => {
    const payload: Equal<typeof order, SendOrderToMerchantRequest> = true;
    const ctx: Equal<typeof context, CallbackContext<SendOrderToMerchantRequest>> = true;
    void payload, ctx;
    return { InternalOrderId: order.OrderId };
  },
  UpdateOrderStatus: async (update) => {
    const payload: Equal<typeof update, UpdateOrderStatusRequest> = true;
    void payload;
  },
} });
export const factory = createSendOrderToMerchantHandler((order, context) => {
  const payload: Equal<typeof order, SendOrderToMerchantRequest> = true;
  const ctx: Equal<typeof context, CallbackContext<SendOrderToMerchantRequest>> = true;
  void payload, ctx;
  return { InternalOrderId: order.OrderId };
}, options);
export const status = createUpdateOrderStatusHandler(async () => undefined, options);
`,
  // What was refused stays refused, each line (from FIRST on) at least one error.
  "refused.ts": `${HEADER}declare const row: any;
export const a = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: () => ({}) } });
export const b = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: () => undefined } });
export const c = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: () => ({ InternalOrderId: true }) } });
export const d = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: async () => "M-1" } });
export const e = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: createUpdateOrderStatusHandler(() => undefined, options) } });
export const f = createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: (order) => ({ InternalOrderId: order.OrderId, OrderID: row }) } });
export const g = createCallbackRouter({ ...options, handlers: { UpdateParcelDispatch: () => ({ Message: 1 }) } });
export const h = createCallbackRouter({ ...options, handlers: { UpdateParcelDispatch: (parcel: SendOrderToMerchantRequest) => void parcel } });
export const i = createSendOrderToMerchantHandler(() => "M-1", options);
export const j = createSendOrderToMerchantHandler(async () => ({}), options);
export const k = createSendOrderToMerchantHandler(() => new Date(), options);
export const l = createUpdateParcelDispatchHandler(() => ({ Message: ["x"] }), options);
export const m = createSendRMAInfoToMerchantHandler(() => ({ Sucess: "True" }), options);
export const n = createSendOrderToMerchantHandler((order) => ({ InternalOrderId: order.OrderId, Success: row }), options);
export const o = createSendOrderToMerchantHandler(() => Promise.resolve({ InternalOrderId: 1, Extra: 1 }), options);
export const p = createUpdateParcelDispatchHandler(() => [], options);
export const q = createUpdateParcelDispatchHandler(() => () => 1, options);
export const r = createUpdateParcelDispatchHandler(async () => [1], options);
export const s = createUpdateOrderStatusHandler(async () => ["M-1"], options);
export const t = createRedeemGiftCardHandler(() => [{ Balance: 1 }], options);
export const u = createCallbackRouter({ ...options, handlers: { UpdateParcelDispatch: () => [] } });
export const v = createCallbackRouter({ ...options, handlers: { UpdateParcelDispatch: () => () => 1 } });
export const w = createCallbackRouter({ ...options, handlers: { UpdateOrderStatus: async () => [] } });
`,
  // An array or a function where the result type has none (review second-client-1), one line each.
  "not-an-object.ts": `${HEADER}export const a = createUpdateParcelDispatchHandler(() => [], options);
export const b = createUpdateParcelDispatchHandler(() => () => 1, options);
export const c = createCallbackRouter({ ...options, handlers: { UpdateParcelDispatch: () => [] } });
`,
} as const;

let project: Project;
const found = new Map<string, string[]>();

beforeAll(() => {
  project = createProject("result-messages");
  for (const [name, diagnostics] of project.diagnostics(FILES)) {
    found.set(name, diagnostics.map(describeDiagnostic));
  }
}, 180_000);

afterAll(() => project?.remove());

/** The diagnostics of a file, each `line:col TSxxxx message`. */
function of(file: keyof typeof FILES): string[] {
  return found.get(file) ?? [];
}

/** The column (1-based) of `text` on line `line` of a file. */
function columnOf(file: keyof typeof FILES, line: number, text: string): number {
  const source = FILES[file].split("\n")[line - 1] ?? "";
  return source.indexOf(text) + 1;
}

describe("a result's unknown field is named, with its callback (review dx-2)", () => {
  it("in a factory: one line, at the field", () => {
    expect(of("misspelt.ts")).toStrictEqual([
      `${FIRST}:${columnOf("misspelt.ts", FIRST, "PaymentAmout")} TS2322 Type 'number' is not assignable to type '"PaymentAmout is not a field of the SendOrderToMerchant result"'.`,
      `${FIRST + 1}:${columnOf("misspelt.ts", FIRST + 1, "Mesage")} TS2322 Type 'string' is not assignable to type '"Mesage is not a field of the UpdateParcelDispatch result"'.`,
    ]);
  });

  it("Success in a result: the library writes it, throw CallbackError to refuse", () => {
    const said = (name: string) =>
      `is not assignable to type '"Success is written by the library: leave it out of the ${name} result (throw CallbackError to refuse)"'.`;
    const messages = of("success.ts");
    expect(messages).toHaveLength(3);
    expect(messages[0]).toBe(
      `${FIRST}:${columnOf("success.ts", FIRST, "Success")} TS2322 Type 'true' ${said("SendOrderToMerchant")}`,
    );
    expect(messages[1]).toBe(
      `${FIRST + 1}:${columnOf("success.ts", FIRST + 1, "Success")} TS2322 Type 'string' ${said("UpdateParcelDispatch")}`,
    );
    // Before: "not assignable to type 'NoResult | MessageResult | PromiseLike<…>'", no field.
    expect(messages[2]).toBe(
      `${FIRST + 2}:${columnOf("success.ts", FIRST + 2, "Success")} TS2322 Type 'string' ${said("SendRMAInfoToMerchant")}`,
    );
  });

  it("in an async function: the promise's value is compared, not `then`, and the field named", () => {
    const [misspelt, missing, ...rest] = of("async.ts");
    expect(rest).toStrictEqual([]);
    for (const text of [misspelt, missing]) {
      expect(text).not.toMatch(/then|onfulfilled|PromiseLike/);
      expect(text?.split("\n").length).toBeLessThanOrEqual(5);
    }
    expect(misspelt).toContain(
      `Type 'number' is not assignable to type '"PaymentAmout is not a field of the SendOrderToMerchant result"'.`,
    );
    expect(missing).toContain(
      `Type 'string' is not assignable to type '"InternalOrderID is not a field of the SendOrderToMerchant result"'.`,
    );
  });
});

describe("the router's handlers: each mistake its own short error (review dx-2)", () => {
  it("three wrong results and an unknown callback are four errors, at the fields", () => {
    const messages = of("router.ts");
    const at = (line: number, text: string) => `${line}:${columnOf("router.ts", line, text)}`;
    expect(messages).toStrictEqual([
      `${at(FIRST + 1, "InternalOrderID")} TS2322 Type 'string' is not assignable to type '"InternalOrderID is not a field of the SendOrderToMerchant result"'.`,
      expect.stringMatching(
        new RegExp(
          `^${at(FIRST + 2, "({ Balance")} TS2322 .*\\n  Property 'IsValid' is missing in type '\\{ Balance: number; \\}' but required in type 'ValidateGiftCardResult'\\.$`,
        ),
      ),
      `${at(FIRST + 3, "StatusCod:")} TS2322 Type 'string' is not assignable to type '"StatusCod is not a field of the UpdateOrderStatus result"'.`,
      `${at(FIRST + 4, "SendOrderToMerchent")} TS2322 Type '() => { InternalOrderId: string; }' is not assignable to type '"SendOrderToMerchent is not the name of a callback"'.`,
      expect.stringContaining(
        `Type 'boolean' is not assignable to type '"Success is written by the library: leave it out of the UpdateParcelDispatch result (throw CallbackError to refuse)"'.`,
      ),
    ]);
    for (const text of messages) expect(text).not.toMatch(/CheckedFunction|onfulfilled/);
  });

  it("what was refused before stays refused", () => {
    const lines = FILES["refused.ts"].split("\n").length - 1;
    const erring = new Set(of("refused.ts").map((text) => Number(text.split(":")[0])));
    const expected = Array.from({ length: lines - FIRST }, (_v, i) => FIRST + 1 + i);
    expect([...erring].sort((x, y) => x - y)).toStrictEqual(expected);
  });

  it("an array or a function is no result of an object-only callback (review second-client-1)", () => {
    const messages = of("not-an-object.ts");
    expect(messages).toHaveLength(3);
    expect(messages[0]).toContain(`'"an array is not a UpdateParcelDispatch result"'`);
    expect(messages[1]).toContain(`'"a function is not a UpdateParcelDispatch result"'`);
    expect(messages[2]).toContain(`'"an array is not a UpdateParcelDispatch result"'`);
    for (const text of messages) expect(text).not.toMatch(/CheckedFunction|onfulfilled/);
  });

  it("the payload and context stay inferred, in the router and the factories", () => {
    expect(of("inferred.ts")).toStrictEqual([]);
  });
});
