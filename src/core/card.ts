/**
 * Card data handling (PCI DSS 3.3.1, 3.4.1, 3.5.1): PaymentDetails objects that print masked and
 * a CVV dropped once the merchant's function returns. Free text is scrubbed in `redact.ts`.
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
  // A payment the service collected itself has no card number (null).
  const card = this.CardNumber;
  return typeof card === "string" ? `[PaymentDetails ${maskCardNumber(card)}]` : "[PaymentDetails]";
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
  try {
    Object.defineProperties(value, PROTECTION);
  } catch {
    // A frozen object (a framework's own body) cannot take the methods; it is not the merchant's.
  }
}

/** Removes the CVV (PCI DSS 3.3.1: not kept after authorisation, not even masked). */
export function dropCvv(value: unknown): void {
  if (value === null || typeof value !== "object") return;
  try {
    if (Object.hasOwn(value, "CVVNumber")) delete (value as Record<string, unknown>).CVVNumber;
  } catch {
    // Only a frozen object refuses; there is nothing more this library can do to it.
  }
}

export { redactCardNumbers } from "./redact.js";
