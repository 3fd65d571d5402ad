// The compiler itself, on a merchant's file with misspelt fields, under the tsconfig.json of
// `tsc --init`: each misspelling is an error on its own line, and the messages name the payload
// types (`SendOrderToMerchantRequest`), not an expansion of a zod type. The same file without the
// misspellings compiles. (test/core/types.test.ts checks the same points with @ts-expect-error.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, describe as describeDiagnostic, type Project } from "./program.js";

const HEADER = `import {
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
  createUpdateOrderStatusHandler,
  createValidateGiftCardHandler,
} from "crossborder-callbacks";

const options = { auth: false } as const;
`;

/** One merchant's code per line number: the misspelt form and the correct one. */
const CASES = [
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
    message: "TS2322 Type 'string' is not assignable to type 'never'.",
    at: "OrderID",
  },
  {
    wrong: `createUpdateOrderStatusHandler(() => ({ InternalOrderId: "M-1", StatusCod: "x" }), options);`,
    right: `createUpdateOrderStatusHandler(() => ({ InternalOrderId: "M-1", StatusCode: "x" }), options);`,
    message: "TS2322 Type 'string' is not assignable to type 'never'.",
    at: "StatusCod",
  },
  {
    wrong: `createPerformOrderPaymentHandler(() => ({ PaymentAmout: 10, PaymentCurrencyCode: "EUR" }), options);`,
    right: `createPerformOrderPaymentHandler(() => ({ PaymentAmount: 10, PaymentCurrencyCode: "EUR" }), options);`,
    message:
      "Property 'PaymentAmount' is missing in type '{ PaymentAmout: number; PaymentCurrencyCode: string; }' but required in type 'PerformOrderPaymentResult'.",
  },
  {
    wrong: `createValidateGiftCardHandler(async () => ({ IsValid: true, Balanse: "5.00" }), options);`,
    right: `createValidateGiftCardHandler(async () => ({ IsValid: true, Balance: "5.00" }), options);`,
    message: "Types of property 'Balanse' are incompatible.",
  },
  {
    wrong: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCod: "SKU-1" }] }), options);`,
    right: `createGetCheckoutCartInfoHandler(() => ({ productsList: [{ ProductCode: "SKU-1" }] }), options);`,
    message: "'ProductCod' does not exist in type",
  },
  {
    wrong: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: async () => ({ InternalOrderId: "1", OrderID: "x" }) } });`,
    right: `createCallbackRouter({ ...options, handlers: { SendOrderToMerchant: async () => ({ InternalOrderId: "1", OrderId: "x" }) } });`,
    message: "Types of property 'OrderID' are incompatible.",
  },
] as const;

const FIRST_LINE = HEADER.split("\n").length;

function file(form: "wrong" | "right"): string {
  return `${HEADER}${CASES.map((c) => c[form]).join("\n")}\n`;
}

let project: Project;
let wrong: string[];
let right: string[];

beforeAll(() => {
  project = createProject("compile-fail");
  const results = project.diagnostics({ "wrong.ts": file("wrong"), "right.ts": file("right") });
  wrong = (results.get("wrong.ts") ?? []).map(describeDiagnostic);
  right = (results.get("right.ts") ?? []).map(describeDiagnostic);
}, 180_000);

afterAll(() => project?.remove());

describe("misspelt fields under tsc --init's configuration", () => {
  it("the correct file compiles", () => {
    expect(right).toStrictEqual([]);
  });

  it("each misspelt line is exactly one error, on its own line", () => {
    const lines = wrong.map((text) => Number(text.split(":")[0]));
    expect(lines).toStrictEqual(CASES.map((_c, i) => FIRST_LINE + i));
  });

  it.each(CASES.map((c, i) => [c.wrong, c, i] as const))("%s", (_label, c, i) => {
    const diagnostic = wrong.find((text) => text.startsWith(`${FIRST_LINE + i}:`)) ?? "";
    expect(diagnostic).toContain(c.message);
    if ("at" in c) {
      // The error points at the misspelt field itself.
      const column = Number(/^\d+:(\d+) /.exec(diagnostic)?.[1]);
      expect(c.wrong.slice(column - 1)).toMatch(new RegExp(`^${c.at}\\b`));
    }
  });

  it("messages name the interfaces and stay short (no 700-character expansion)", () => {
    const reads = wrong.slice(0, 3);
    for (const text of reads) expect(text.length).toBeLessThan(160);
    expect(reads[0]).toContain("'SendOrderToMerchantRequest'");
    expect(reads[1]).toContain("'UpdateOrderStatusRequest'");
    expect(reads[2]).toContain("'Address'");
  });
});
