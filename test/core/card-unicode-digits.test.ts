// Review i18n-1 (HIGH): the redactor knew ASCII `0-9` only. This request's own card number (and
// CVV) quoted in another script's decimal digits (Arabic-Indic, Persian, full-width, Devanagari,
// any \p{Nd}), or with its groups joined by other spaces (U+3000, thin spaces) or a full-width
// hyphen, went out in clear: in the answer to the service (a CallbackError's Message and
// Description, a success Message), in the onError report, and from `redactCardNumbers`. A digit
// counts by its value whatever its script; what is kept (the last four digits, the separators, the
// text around) is kept as written.
import { describe, expect, it } from "vitest";
import { createRedactor, maskCardDigits, maskDigitRuns } from "../../src/core/redact.js";
import {
  CallbackError,
  type CallbackFailure,
  createPerformOrderPaymentHandler,
  redactCardNumbers,
} from "../../src/index.js";
import { json, post } from "./helpers.js";
import { paymentDetails } from "./leaks.js";

const VISA = "4111111111111111";
/** Not Luhn-valid: only its place in the request says it is a card number. */
const ODD_PAN = "1234567812345678";
const CVV = "737";

/** ASCII digits written in the script whose zero is `zero` (a BMP or astral code point). */
const inScript =
  (zero: number) =>
  (text: string): string =>
    text.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));

const FAMILIES: Record<string, (text: string) => string> = {
  "Arabic-Indic (U+0660)": inScript(0x0660),
  "Extended Arabic-Indic / Persian (U+06F0)": inScript(0x06f0),
  "full-width (U+FF10)": inScript(0xff10),
  "Devanagari (U+0966)": inScript(0x0966),
  "Bengali (U+09E6)": inScript(0x09e6),
  "Thai (U+0E50)": inScript(0x0e50),
  "mathematical bold, outside the BMP (U+1D7CE)": inScript(0x1d7ce),
};

/** The digit values a text holds, in order, whatever their script (written apart from src). */
function digitValues(text: string): string {
  let out = "";
  for (const char of text) {
    if (!/\p{Nd}/u.test(char)) continue;
    let zero = char.codePointAt(0) as number;
    while (/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero--;
    out += String(((char.codePointAt(0) as number) - zero) % 10);
  }
  return out;
}

/** Whether a text lets out more of a card than its last four digits, in any script. */
function leaksPan(text: string, pan = VISA): boolean {
  return digitValues(text).includes(pan.slice(0, -4)) || digitValues(text).includes(pan);
}

/** Whether a text quotes the CVV on its own (not inside a longer number), in any script. */
function quotesCvv(text: string, cvv = CVV): boolean {
  return text.split(/[^\p{Nd}]+/u).some((run) => run !== "" && digitValues(run) === cvv);
}

describe("redactCardNumbers: a Luhn-valid number in any script's digits", () => {
  for (const [name, write] of Object.entries(FAMILIES)) {
    it(`${name}: masked, its last four digits kept as written`, () => {
      const text = `card ${write(VISA)} ok`;
      const out = redactCardNumbers(text);
      expect(out).toBe(`card ************${write("1111")} ok`);
      expect(leaksPan(out)).toBe(false);
      // Grouped with spaces and dashes, as ASCII numbers are.
      expect(redactCardNumbers(write("4111 1111 1111 1111"))).toBe(
        `**** **** **** ${write("1111")}`,
      );
      expect(redactCardNumbers(write("4111-1111-1111-1111"))).toBe(
        `****-****-****-${write("1111")}`,
      );
    });
  }

  it("one number mixing scripts (Arabic-Indic, Persian, full-width, ASCII) is one number", () => {
    const mixed = `${FAMILIES["Arabic-Indic (U+0660)"]?.("4111")}${FAMILIES["Extended Arabic-Indic / Persian (U+06F0)"]?.("1111")}${FAMILIES["full-width (U+FF10)"]?.("1111")}1111`;
    expect(redactCardNumbers(`رقم ${mixed}`)).toBe("رقم ************1111");
  });

  const ar = FAMILIES["Arabic-Indic (U+0660)"] as (text: string) => string;
  const fw = FAMILIES["full-width (U+FF10)"] as (text: string) => string;
  for (const [name, separator] of [
    ["ideographic space U+3000", "\u3000"],
    ["no-break space U+00A0", "\u00a0"],
    ["thin space U+2009", "\u2009"],
    ["narrow no-break space U+202F", "\u202f"],
    ["en space U+2002", "\u2002"],
    ["full-width hyphen U+FF0D", "\uff0d"],
    ["hyphen U+2010", "\u2010"],
  ] as const) {
    it(`groups joined by ${name}: masked, ASCII and other scripts`, () => {
      for (const write of [(t: string) => t, ar, fw]) {
        const text = `カード ${["4111", "1111", "1111", "1111"].map(write).join(separator)} は`;
        const out = redactCardNumbers(text);
        expect(out, JSON.stringify(text)).toBe(
          `カード ${["****", "****", "****", write("1111")].join(separator)} は`,
        );
      }
    });
  }

  it("leaves other numbers in other scripts as written (prices, dates, short ids)", () => {
    const text = `${ar("السعر 1500.00 بتاريخ 2026/11/27 طلب 12345")} ${fw("注文 987654")}`;
    expect(redactCardNumbers(text)).toBe(text);
    expect(redactCardNumbers("Müller, Zürich — 東京 😀")).toBe("Müller, Zürich — 東京 😀");
  });

  it("maskDigitRuns (a payment object's fields) masks a run in another script", () => {
    expect(maskDigitRuns(`x ${ar(ODD_PAN)}`)).toBe(`x ************${ar("5678")}`);
  });

  it("maskCardDigits masks the request's own (not Luhn-valid) number in another script", () => {
    const out = maskCardDigits(`رقم ${ar(ODD_PAN)}`, ODD_PAN);
    expect(leaksPan(out, ODD_PAN)).toBe(false);
  });
});

describe("a request's redactor: its own card number and CVV in any script", () => {
  for (const [name, write] of Object.entries(FAMILIES)) {
    it(`${name}: the own card (Luhn-valid or not) and the CVV are masked`, () => {
      for (const scan of ["wide", "data"] as const) {
        const redact = createRedactor([VISA, ODD_PAN, CVV], scan);
        for (const text of [
          `card ${write(VISA)}, cvv ${write(CVV)}`,
          `card ${write(ODD_PAN)}`,
          `card ${write("1234.5678.1234.5678")} / ${write(CVV)}.`,
          `card ${["1234", "5678", "1234", "5678"].map(write).join("\u3000")}`,
        ]) {
          const out = redact(text);
          expect(leaksPan(out, VISA), `${scan} ${out}`).toBe(false);
          expect(leaksPan(out, ODD_PAN), `${scan} ${out}`).toBe(false);
          expect(quotesCvv(out), `${scan} ${out}`).toBe(false);
          expect(out.startsWith("card "), out).toBe(true);
        }
      }
    });
  }

  it("keeps the rest of a localised text as written", () => {
    const ar = FAMILIES["Arabic-Indic (U+0660)"] as (text: string) => string;
    const redact = createRedactor([VISA, CVV]);
    expect(redact(`رفضت البطاقة ${ar(VISA)} بمبلغ ${ar("150")}`)).toBe(
      `رفضت البطاقة ************${ar("1111")} بمبلغ ${ar("150")}`,
    );
    expect(redact(`الرمز ${ar(CVV)} خطأ`)).toBe("الرمز *** خطأ");
    // A CVV's digits inside a longer number are no CVV, in any script.
    expect(redact(`طلب ${ar("17371")}`)).toBe(`طلب ${ar("17371")}`);
  });
});

function order(cardNumber: string): Record<string, unknown> {
  return {
    OrderId: "GE-I18N-1",
    MerchantGUID: "guid-1",
    StatusCode: "new",
    Products: [],
    PaymentDetails: paymentDetails(cardNumber, CVV),
  };
}

describe("answers and onError reports of PerformOrderPayment quote the card in another script", () => {
  for (const [name, write] of Object.entries(FAMILIES)) {
    for (const pan of [VISA, ODD_PAN]) {
      it(`${name}, card ${pan === VISA ? "Luhn-valid" : "not Luhn-valid"}`, async () => {
        const failures: CallbackFailure[] = [];
        const options = { auth: false as const, onError: (f: CallbackFailure) => failures.push(f) };
        const spaced = (text: string) => text.replace(/(.{4})(?=.)/g, "$1\u3000");
        const declined = await createPerformOrderPaymentHandler(() => {
          throw new CallbackError(
            "DECLINED",
            `رفضت البطاقة ${write(pan)} (${write(CVV)})`,
            `カード ${write(spaced(pan))} は拒否されました`,
          );
        }, options).handle(post(JSON.stringify(order(pan))));
        const paid = await createPerformOrderPaymentHandler(
          () => ({
            PaymentAmount: "10.00",
            PaymentCurrencyCode: "EUR",
            Message: `تم الدفع بالبطاقة ${write(pan)}، الرمز ${write(CVV)}`,
          }),
          options,
        ).handle(post(JSON.stringify(order(pan))));
        const thrown = await createPerformOrderPaymentHandler(() => {
          throw new Error(`card ${write(spaced(pan))} failed, cvv ${write(CVV)}`);
        }, options).handle(post(JSON.stringify(order(pan))));

        expect(declined.status).toBe(200);
        expect(paid.status).toBe(200);
        expect(thrown.status).toBe(500);
        const answers = [declined, paid, thrown].map((r) => r.body);
        expect((json(declined) as { Message: string }).Message).toContain("رفضت البطاقة");
        expect((json(paid) as { Message: string }).Message).toContain("تم الدفع بالبطاقة");
        const reports = failures.flatMap((f) => [
          f.reason,
          String((f.error as Error | undefined)?.message),
        ]);
        expect(failures.length).toBeGreaterThan(0);
        for (const text of [...answers, ...reports]) {
          expect(leaksPan(text, pan), text).toBe(false);
          expect(quotesCvv(text), text).toBe(false);
        }
      });
    }
  }
});
