/**
 * Card data handling (PCI DSS 3.3.1, 3.4.1, 3.5.1): PaymentDetails objects that print masked,
 * a CVV dropped once the merchant's function returns, and a scrubber for free text.
 */

const NODE_INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");

/** Shows at most the last four digits of a card number; everything else becomes `*`. */
export function maskCardNumber(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const digits = value.replace(/\D/g, "");
  return digits.length <= 4
    ? "*".repeat(digits.length)
    : `${"*".repeat(digits.length - 4)}${digits.slice(-4)}`;
}

function maskedCopy(this: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...this };
  if ("CardNumber" in copy) copy.CardNumber = maskCardNumber(copy.CardNumber);
  if ("CVVNumber" in copy && copy.CVVNumber !== undefined && copy.CVVNumber !== null) {
    copy.CVVNumber = "***";
  }
  return copy;
}

function maskedString(this: Record<string, unknown>): string {
  return `[PaymentDetails ${String(maskCardNumber(this.CardNumber))}]`;
}

function maskedInspect(this: Record<string, unknown>): Record<string, unknown> {
  return maskedCopy.call(this);
}

const hidden = (value: unknown): PropertyDescriptor => ({
  value,
  enumerable: false,
  configurable: true,
  writable: true,
});

const PROTECTION: PropertyDescriptorMap = {
  toJSON: hidden(maskedCopy),
  toString: hidden(maskedString),
  [NODE_INSPECT]: hidden(maskedInspect),
  [DENO_INSPECT]: hidden(maskedInspect),
};

/**
 * Makes `JSON.stringify`, `String()` and `util.inspect` (Node, Bun, Deno) of a PaymentDetails
 * object print it masked, while its properties keep the real values the merchant pays with.
 * The methods are non-enumerable: spreading or iterating the object does not see them.
 */
export function protectPaymentDetails(value: unknown): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  if (Object.hasOwn(value, NODE_INSPECT)) return;
  Object.defineProperties(value, PROTECTION);
}

/** Removes the CVV (PCI DSS 3.3.1: not kept after authorisation, not even masked). */
export function dropCvv(value: unknown): void {
  if (value === null || typeof value !== "object") return;
  if (Object.hasOwn(value, "CVVNumber")) delete (value as Record<string, unknown>).CVVNumber;
}

/** Luhn check of a digit string. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** A run of digits, single spaces or dashes allowed between them. */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;

/**
 * Replaces every Luhn-valid 13–19 digit sequence (spaces or dashes allowed between digits) with
 * its masked form. Used on every text the library logs, since a merchant's exception message may
 * quote a card number. A sequence may start and end at a space or dash inside a longer run of
 * digits: a card number followed by a CVV or an expiry (`4111 1111 1111 1111 737`) is found too.
 */
export function redactCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    // Where a sequence may start or end: the run's ends and every separator, as digit offsets.
    const bounds = [0];
    let digits = "";
    for (const char of run) {
      if (char === " " || char === "-") bounds.push(digits.length);
      else digits += char;
    }
    bounds.push(digits.length);
    if (digits.length < 13) return run;
    const hide = new Uint8Array(digits.length);
    let found = false;
    // Bounds ascend: for each start, only the ends within 19 digits (linear in the run).
    for (let i = 0; i < bounds.length; i++) {
      const start = bounds[i] as number;
      for (let j = i + 1; j < bounds.length; j++) {
        const end = bounds[j] as number;
        if (end - start > 19) break;
        if (end - start >= 13 && passesLuhn(digits.slice(start, end))) {
          hide.fill(1, start, end - 4);
          found = true;
        }
      }
    }
    if (!found) return run;
    let index = 0;
    return run.replace(/\d/g, (digit) => (hide[index++] === 1 ? "*" : digit));
  });
}
