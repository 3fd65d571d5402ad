// Shared by the card-data, sealing and fuzz tests: test cards, and what counts as card data let
// out. Written apart from the library's redactor, so that a test never checks the code with itself.

/** Luhn check of a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Appends the Luhn check digit. */
export function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(`${body}${d}`)) return `${body}${d}`;
  throw new Error("unreachable");
}

/** A PaymentDetails object as the service sends it, with this card number and CVV (any type). */
export function paymentDetails(cardNumber: unknown, cvv: unknown): Record<string, unknown> {
  return {
    CardNumber: cardNumber,
    CVVNumber: cvv,
    ExpirationDate: "2030-03-31",
    OwnerName: "Jane+Doe",
    PaymentMethodCode: "1",
    PaymentMethodName: "Card",
    PaymentMethodTypeCode: "CreditCard",
    CountryCode: "US",
    CountryName: "United+States",
    Email: "jane.doe%40example.com",
  };
}

/** Whether a text quotes a digit secret (a CVV) as a standalone value, not inside a longer number. */
export function quotesStandalone(text: string, secret: string): boolean {
  const digit = (code: number) => code >= 48 && code <= 57;
  for (let from = text.indexOf(secret); from >= 0; from = text.indexOf(secret, from + 1)) {
    if (!digit(text.charCodeAt(from - 1)) && !digit(text.charCodeAt(from + secret.length))) {
      return true;
    }
  }
  return false;
}

/** Every string reachable from a value (own properties, arrays, an Error's name/message/stack). */
export function stringsOf(value: unknown, out: string[] = [], seen = new Set<unknown>()): string[] {
  if (typeof value === "string") out.push(value);
  else if (value !== null && typeof value === "object" && !seen.has(value)) {
    seen.add(value);
    if (value instanceof Error) out.push(value.name, value.message, value.stack ?? "");
    for (const key of Object.getOwnPropertyNames(value)) {
      out.push(key);
      stringsOf((value as Record<string, unknown>)[key], out, seen);
    }
  }
  return out;
}
