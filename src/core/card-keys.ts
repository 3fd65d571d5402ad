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

/** A key naming a CVV, in any case: `cvvNumber`, `Cvv2`, `"\uFFFD(CVVNumber"` (damaged in transit). */
const CVV_KEY = /cvv/i;

/** Whether a key names a CVV, in any case (see `isCvvKey` of src/core/card.ts for a card object's). */
export function namesCvv(key: string): boolean {
  return CVV_KEY.test(key);
}

const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * An object's own string keys as `Object.keys` lists them, with the card fields a protected card
 * object holds as non-enumerable own properties (`CardNumber` in any case, a key naming a CVV:
 * src/core/card.ts hides them from spread, loggers and document stores) in their places. What the
 * library reads a card object's fields through; an object with no hidden field gives its keys.
 */
export function fieldNamesOf(value: object): string[] {
  const names = Object.getOwnPropertyNames(value);
  let kept: string[] | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (isEnumerable.call(value, name) || isCardNumberKey(name) || namesCvv(name)) {
      kept?.push(name);
    } else {
      kept ??= names.slice(0, i);
    }
  }
  return kept ?? names;
}

/**
 * Whether an object has an own key that is `CardNumber` or `CVVNumber` in another case than the
 * exact one (the exact keys are looked up directly, enumerable or not), hidden ones included.
 */
export function hasCasedCardField(value: object): boolean {
  for (const key of fieldNamesOf(value)) {
    if (key !== CARD_NUMBER && key !== CVV_NUMBER && isCardFieldKey(key)) return true;
  }
  return false;
}

/** The values of an object's own keys that are `CardNumber` in any case (hidden ones too), the exact one first. */
export function cardNumbersOf(value: Record<string, unknown>, out: unknown[] = []): unknown[] {
  if (Object.hasOwn(value, CARD_NUMBER)) out.push(value[CARD_NUMBER]);
  for (const key of fieldNamesOf(value)) {
    if (key !== CARD_NUMBER && isCardNumberKey(key)) out.push(value[key]);
  }
  return out;
}
