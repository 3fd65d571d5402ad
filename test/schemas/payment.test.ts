import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  type OrderPaymentMethod,
  orderPaymentMethodSchema,
  type PaymentDetails,
  type PerformOrderPaymentRequest,
  paymentDetailsSchema,
  performOrderPaymentSchema,
  sendOrderToMerchantSchema,
} from "../../src/schemas/index.js";

type Json = Record<string, unknown>;

function fixture(name: string): Json {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Json;
}

function issuePaths(result: { error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((issue) => issue.path.join("."));
}

const PAN = "4111111111111111";
const CVV = "737";
const payment = fixture("PerformOrderPayment");
const details = payment.PaymentDetails as Json;

/** Every way an error is commonly turned into text: none may carry card data. */
function renderings(error: z.ZodError | undefined): string[] {
  expect(error).toBeInstanceOf(z.ZodError);
  return [
    JSON.stringify(error),
    JSON.stringify(error?.issues),
    String(error),
    error?.message ?? "",
    error?.stack ?? "",
    z.prettifyError(error as z.ZodError),
    JSON.stringify(z.treeifyError(error as z.ZodError)),
    JSON.stringify(z.flattenError(error as z.ZodError)),
    inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
  ];
}

// Stack frames are dropped: their line numbers could contain the CVV's digits by chance.
function withoutStackFrames(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*at /.test(line))
    .join("\n");
}

function expectNoCardData(error: z.ZodError | undefined): void {
  for (const text of renderings(error).map(withoutStackFrames)) {
    expect(text).not.toContain(PAN);
    expect(text).not.toContain("411111");
    expect(text).not.toContain(CVV);
  }
}

describe("paymentDetailsSchema", () => {
  it("keeps card number and CVV as the exact strings sent", () => {
    const parsed = performOrderPaymentSchema.parse(payment);
    expect(parsed.PaymentDetails.CardNumber).toBe(PAN);
    expect(parsed.PaymentDetails.CVVNumber).toBe(CVV);
    expect(parsed.PaymentDetails.ExpirationDate).toBe("2030-03-31");
  });

  it("accepts masked test values and leading zeros (no format rule)", () => {
    for (const [CardNumber, CVVNumber] of [
      ["1234", "**3"],
      ["************1111", "012"],
    ]) {
      const parsed = paymentDetailsSchema.parse({ ...details, CardNumber, CVVNumber });
      expect([parsed.CardNumber, parsed.CVVNumber]).toEqual([CardNumber, CVVNumber]);
    }
  });

  it.each([
    ["CardNumber", 4111111111111111],
    ["CVVNumber", 737],
    ["CVVNumber", 12],
    ["ExpirationDate", 20300331],
    ["CountryCode", 1],
    ["PaymentMethodTypeCode", 1],
  ])("rejects %s = %j", (field, value) => {
    const result = paymentDetailsSchema.safeParse({ ...details, [field]: value });
    expect(result.success).toBe(false);
    expect(issuePaths(result)).toEqual([field]);
  });

  it("shares the address fields (both state spellings) and keeps unknown ones", () => {
    const parsed = paymentDetailsSchema.parse({
      ...details,
      StateOrProvice: "California",
      IssuerBankName: "Example Bank",
    });
    expect(parsed.StateOrProvice).toBe("California");
    expect(parsed.StateOrProvince).toBe("California");
    expect(parsed.IssuerBankName).toBe("Example Bank");
    expect(issuePaths(paymentDetailsSchema.safeParse({ ...details, Zip: 94104 }))).toEqual(["Zip"]);
  });

  it("accepts no card at all (paid to the service, OT) and nulls in every other field", () => {
    const noCard = Object.fromEntries(Object.keys(details).map((key) => [key, null]));
    const parsed = paymentDetailsSchema.parse({ ...noCard, PaymentMethodCode: "OT" });
    expect(parsed.CardNumber).toBeNull();
    expect(parsed.CVVNumber).toBeNull();
    expect(parsed.PaymentMethodCode).toBe("OT");
    expect(paymentDetailsSchema.safeParse({}).success).toBe(true);
  });

  it("types card data as strings or null (never numbers)", () => {
    expectTypeOf<PaymentDetails["CardNumber"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<PaymentDetails["CVVNumber"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<PaymentDetails["OwnerName"]>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<PerformOrderPaymentRequest["PaymentDetails"]>().toEqualTypeOf<PaymentDetails>();
    expect(Object.keys(paymentDetailsSchema.shape)).toContain("CardNumber");
  });
});

describe("performOrderPaymentSchema", () => {
  it("requires OrderId and PaymentDetails", () => {
    const { OrderId: _id, PaymentDetails: _details, ...rest } = payment;
    expect(issuePaths(performOrderPaymentSchema.safeParse(rest)).sort()).toEqual([
      "OrderId",
      "PaymentDetails",
    ]);
  });

  it("reports the full path of a nested card field", () => {
    const input = { ...payment, PaymentDetails: { ...details, CardNumber: Number(PAN) } };
    expect(issuePaths(performOrderPaymentSchema.safeParse(input))).toEqual([
      "PaymentDetails.CardNumber",
    ]);
  });
});

describe("zod issues never carry card data", () => {
  it("when the card number and CVV arrive as JSON numbers", () => {
    const body = JSON.parse(
      `{"OrderId":"GE1","PaymentDetails":${JSON.stringify({ ...details, CardNumber: 0, CVVNumber: 0 })}}`
        .replace('"CardNumber":0', `"CardNumber":${PAN}`)
        .replace('"CVVNumber":0', `"CVVNumber":${CVV}`),
    );
    const result = performOrderPaymentSchema.safeParse(body);
    expect(result.success).toBe(false);
    expect(issuePaths(result).sort()).toEqual([
      "PaymentDetails.CVVNumber",
      "PaymentDetails.CardNumber",
    ]);
    expectNoCardData(result.error);
  });

  it("when valid card strings sit beside other invalid fields", () => {
    const order = fixture("SendOrderToMerchant");
    const input = {
      ...order,
      OrderId: 1,
      Products: "none",
      PaymentDetails: { ...(order.PaymentDetails as Json), ExpirationDate: 20300331, Extra: PAN },
    };
    const result = sendOrderToMerchantSchema.safeParse(input);
    expect(issuePaths(result).sort()).toEqual([
      "OrderId",
      "PaymentDetails.ExpirationDate",
      "Products",
    ]);
    expectNoCardData(result.error);
  });

  it("when the card data is the wrong kind of value altogether", () => {
    for (const CardNumber of [[PAN], { pan: PAN }, true]) {
      const result = paymentDetailsSchema.safeParse({ ...details, CardNumber });
      expect(issuePaths(result)).toEqual(["CardNumber"]);
      expectNoCardData(result.error);
    }
  });
});

describe("orderPaymentMethodSchema", () => {
  const method = (fixture("SendOrderToMerchant").OrderPaymentMethods as Json[])[0] as Json;

  it("accepts a gift card entry identified by GUID", () => {
    const parsed = orderPaymentMethodSchema.parse({
      ...method,
      PaymentMethodId: null,
      PaymentMethodGuid: "0b3c2b8e-8c1d-4d1f-9f5a-6a7b8c9d0e1f",
      IsGiftCard: true,
      GiftCardFields: { Number: "GC-1", Pin: "****" },
    });
    expect(parsed.IsGiftCard).toBe(true);
    expect(parsed.GiftCardFields).toEqual({ Number: "GC-1", Pin: "****" });
  });

  it("rejects amounts sent as text", () => {
    const result = orderPaymentMethodSchema.safeParse({
      ...method,
      PaidAmountInMerchantCurrency: "104.03",
    });
    expect(issuePaths(result)).toEqual(["PaidAmountInMerchantCurrency"]);
    expectTypeOf<OrderPaymentMethod["PaymentMethodId"]>().toEqualTypeOf<
      number | null | undefined
    >();
  });
});
