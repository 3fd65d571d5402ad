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
 * Whether a key names a CVV: it contains `cvv` in any ASCII case (`cvvNumber`, `Cvv2`,
 * `"\uFFFD(CVVNumber"`, damaged in transit); as `/cvv/i` tests it, without a pattern.
 */
export function namesCvv(key: string): boolean {
  const end = key.length - 2;
  for (let i = 0; i < end; i++) {
    if (
      (key.charCodeAt(i) | 0x20) === 0x63 &&
      (key.charCodeAt(i + 1) | 0x20) === 0x76 &&
      (key.charCodeAt(i + 2) | 0x20) === 0x76
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Whether a value held under a key naming a CVV may be one: anything but a boolean or a text
 * without a decimal digit. `cvvRequired: true` and `cvvResult: "M"` are a merchant's flags and
 * codes, kept where a CVV is left out (stored records, a cart answered to a card-carrying
 * request); a number, a text with a digit, `null` (what the answer made of a result writes for a
 * field it leaves out: a `Cvv` it named is not kept by name), an object or array is left out whole.
 */
export function mayBeCvv(value: unknown): boolean {
  if (typeof value === "boolean") return false;
  return typeof value !== "string" || DECIMAL_DIGIT.test(value);
}

const DECIMAL_DIGIT = /\p{Nd}/u;

/**
 * Whether a key names a card number: `CardNumber` in any ASCII case, or any key ending with it
 * (`"\uFFFD(CardNumber"`, damaged in transit; `Card_cardnumber`). What idempotency/keys.ts has
 * always left out of a digest as a card number.
 */
export function namesCardNumber(key: string): boolean {
  if (key === CARD_NUMBER) return true;
  const from = key.length - 10;
  if (from < 0) return false;
  for (let i = 0; i < 10; i++) {
    if ((key.charCodeAt(from + i) | 0x20) !== CARD_NUMBER_LOWER.charCodeAt(i)) return false;
  }
  return true;
}

const CARD_NUMBER_LOWER = "cardnumber";

/**
 * The one rule of which keys of a card object are card data (review SECOND-PITA-3): a key naming
 * a card number ({@link namesCardNumber}) or a CVV ({@link namesCvv}). src/core/card.ts hides them
 * (non-enumerable) and masks them in the masked views; idempotency/keys.ts calls an object holding
 * one a card object, left out of every digest whole.
 */
export function isCardDataKey(key: string): boolean {
  return namesCardNumber(key) || namesCvv(key);
}

const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * The card objects src/core/card.ts protected, each with its own field names as they were when
 * its card fields were hidden: `names` (every field, in place) and `hidden` (the card fields made
 * non-enumerable). Reading them spares `Object.getOwnPropertyNames`,
 * which V8 does not cache for an object holding non-enumerable properties (≈ 2 µs a call on a
 * 22-field payment object, against ≈ 0.1 µs for `Object.keys`).
 */
const hiddenFields = new WeakMap<
  object,
  { names: string[]; visible: string[]; hidden: string[] }
>();

/**
 * Records the card fields `hidden` just made non-enumerable on `value`, which has own keys `names`
 * in place, `visible` of them enumerable. The caller builds `visible` as it goes (review
 * SECOND-PITA-1: computing it here from `names` and `hidden` cost their product, seconds for a
 * body of 60,000 keys naming a CVV, on an unsigned request).
 */
export function recordHiddenFields(
  value: object,
  names: string[],
  visible: string[],
  hidden: string[],
): void {
  hiddenFields.set(value, { names, visible, hidden });
}

/** The card fields recorded as hidden on `value` ({@link recordHiddenFields}); undefined when none. */
export function hiddenFieldsOf(value: object): readonly string[] | undefined {
  return hiddenFields.get(value)?.hidden;
}

/**
 * An object's own string keys as `Object.keys` lists them, with the card fields a protected card
 * object holds as non-enumerable own properties ({@link isCardDataKey}: src/core/card.ts hides
 * them from spread, loggers and document stores) in their places. What the
 * library reads a card object's fields through; an object with no hidden field gives its keys.
 * The array returned may be shared: callers read it, never change it.
 */
export function fieldNamesOf(value: object): string[] {
  const keys = Object.keys(value);
  const record = hiddenFields.get(value);
  // A protected object not changed since (its visible keys the same, its hidden ones still there):
  // the names recorded, in one `Object.keys` and a comparison.
  if (record !== undefined && sameNames(keys, record.visible)) {
    let kept = true;
    for (const name of record.hidden) kept &&= Object.hasOwn(value, name);
    if (kept) return record.names;
  }
  // Any other object: its own names, unless it holds none that is not enumerable (a plain object,
  // the usual case, gives the same list twice, both cached by V8).
  const names = Object.getOwnPropertyNames(value);
  if (names.length === keys.length) return keys;
  let kept: string[] | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (isEnumerable.call(value, name) || isCardDataKey(name)) {
      kept?.push(name);
    } else {
      kept ??= names.slice(0, i);
    }
  }
  return kept ?? names;
}

/** Whether `keys` are the recorded visible names, in the same order. */
function sameNames(keys: readonly string[], visible: readonly string[]): boolean {
  if (keys.length !== visible.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== visible[i]) return false;
  return true;
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

/**
 * The values of an object's own keys that name a card number ({@link namesCardNumber}: in any
 * case, or damaged in transit; hidden ones too), the exact `CardNumber` first.
 */
export function cardNumbersOf(value: Record<string, unknown>, out: unknown[] = []): unknown[] {
  if (Object.hasOwn(value, CARD_NUMBER)) out.push(value[CARD_NUMBER]);
  for (const key of fieldNamesOf(value)) {
    if (key !== CARD_NUMBER && namesCardNumber(key)) out.push(value[key]);
  }
  return out;
}
