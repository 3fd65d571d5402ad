/**
 * The key names that mark card data: `PaymentDetails`, `CardNumber` and `CVVNumber`, in any ASCII
 * letter case (the service binds names case-insensitively, and a body may carry `paymentDetails`
 * or `CARDNUMBER`). Only the exact `PaymentDetails` key of a schema has its value checked; a key in
 * another case is protected the same way, never refused.
 *
 * Each test costs a length comparison for nearly every key: only a key of the name's length is
 * compared letter by letter (no lower-cased copy is made).
 */

export const PAYMENT_DETAILS = "PaymentDetails";
export const CARD_NUMBER = "CardNumber";
export const CVV_NUMBER = "CVVNumber";

/**
 * Whether `key` equals `lower` (lower-case ASCII letters only) ignoring ASCII case. `c | 0x20` is
 * the lower case of an ASCII letter, and equals a lower-case letter for that letter's two cases
 * only: no other character, ASCII or not, matches.
 */
function caseless(key: string, lower: string): boolean {
  if (key.length !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    if ((key.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** `PaymentDetails` in any ASCII case. */
export function isPaymentDetailsKey(key: string): boolean {
  return key.length === 14 && (key === PAYMENT_DETAILS || caseless(key, "paymentdetails"));
}

/** `CardNumber` in any ASCII case. */
export function isCardNumberKey(key: string): boolean {
  return key.length === 10 && (key === CARD_NUMBER || caseless(key, "cardnumber"));
}

/** `CVVNumber` in any ASCII case. */
export function isCvvNumberKey(key: string): boolean {
  return key.length === 9 && (key === CVV_NUMBER || caseless(key, "cvvnumber"));
}

/** `CardNumber` or `CVVNumber` in any ASCII case: an object with such an own key is card data. */
export function isCardFieldKey(key: string): boolean {
  return isCardNumberKey(key) || isCvvNumberKey(key);
}

/**
 * Whether an object has an own enumerable key that is `CardNumber` or `CVVNumber` in another case
 * than the exact one (the exact keys are looked up directly, enumerable or not).
 */
export function hasCasedCardField(value: object): boolean {
  for (const key of Object.keys(value)) {
    if (key !== CARD_NUMBER && key !== CVV_NUMBER && isCardFieldKey(key)) return true;
  }
  return false;
}

/** The values of an object's own keys that are `CardNumber` in any case, the exact one first. */
export function cardNumbersOf(value: Record<string, unknown>, out: unknown[] = []): unknown[] {
  if (Object.hasOwn(value, CARD_NUMBER)) out.push(value[CARD_NUMBER]);
  for (const key of Object.keys(value)) {
    if (key !== CARD_NUMBER && isCardNumberKey(key)) out.push(value[key]);
  }
  return out;
}
