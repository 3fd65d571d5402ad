/**
 * Card data handling (PCI DSS 3.3.1, 3.4.1, 3.5.1): PaymentDetails objects that print masked and
 * a CVV dropped once the merchant's function returns. Free text is scrubbed in `redact.ts`.
 */

import { paymentDetailsSchema } from "../schemas/payment.js";
import { isParsedBody } from "./body.js";
import {
  CARD_NUMBER,
  CVV_NUMBER,
  cardNumbersOf,
  fieldNamesOf,
  hiddenFieldsOf,
  isCardDataKey,
  namesCardNumber,
  namesCvv,
  recordHiddenFields,
} from "./card-keys.js";
import { foldDigits, foldMarks, foldText, mayFold, unfold } from "./fold.js";
import { isRecord } from "./objects.js";
import {
  createRedactor,
  digitRunsOf,
  MIN_CARD_DIGITS,
  maskDigitRuns,
  maskSecret,
  replaceMarked,
  textOf,
} from "./redact.js";
import { findCardObjects } from "./seal.js";

const NODE_INSPECT = Symbol.for("nodejs.util.inspect.custom");
const DENO_INSPECT = Symbol.for("Deno.customInspect");

const CARD_FIELDS = [CARD_NUMBER, CVV_NUMBER] as const;
/** The fields the spec gives PaymentDetails; any other key is unknown (or damaged in transit). */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(paymentDetailsSchema.shape));

/** Shows at most the last four digits of a card number; everything else becomes `*`. */
export function maskCardNumber(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const digits = value.replace(/\D/g, "");
  return digits.length <= 4
    ? "*".repeat(digits.length)
    : `${"*".repeat(digits.length - 4)}${digits.slice(-4)}`;
}

export { namesCvv };

/**
 * Whether a key of a card object holds a CVV: `CVVNumber`, or any key the spec does not give
 * PaymentDetails whose name contains `cvv` in any case. The spec's own fields (nearly every key
 * of a payment object) cost one set lookup and are never matched against the pattern.
 */
function isCvvKey(key: string): boolean {
  return key === "CVVNumber" || (!KNOWN_FIELDS.has(key) && namesCvv(key));
}

/**
 * The keys of a card object's own fields that hold a CVV besides `CVVNumber`; undefined when none.
 * Read from `names`: by default the library's view of its fields (`fieldNamesOf`, the masked
 * views' and the reports'); the CVV drop gives every own name.
 */
function otherCvvKeys(
  details: Record<string, unknown>,
  names: readonly string[] = fieldNamesOf(details),
): string[] | undefined {
  let keys: string[] | undefined;
  for (const key of names) {
    if (key === "CVVNumber" || !isCvvKey(key)) continue;
    keys ??= [];
    keys.push(key);
  }
  return keys;
}

/** A card field's value as a secret: a string, or the text of a number. */
function pushSecret(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number") out.push(String(value));
}

/**
 * The `CardNumber` and `CVVNumber` of a PaymentDetails object (own or inherited), and its own
 * card numbers under the key in another case (`cardNumber`; a CVV in another case is one of the
 * keys that name a CVV: {@link otherCvvSecrets}).
 */
function cardFieldSecrets(details: Record<string, unknown>): string[] {
  const secrets: string[] = [];
  for (const field of CARD_FIELDS) pushSecret(details[field], secrets);
  for (const key of fieldNamesOf(details)) {
    if (key !== CARD_NUMBER && namesCardNumber(key)) pushSecret(details[key], secrets);
  }
  return secrets;
}

/** The CVVs a card object holds under other keys that name one (see {@link isCvvKey}). */
function otherCvvSecrets(details: Record<string, unknown>, out: string[]): void {
  const keys = otherCvvKeys(details);
  if (keys !== undefined) for (const key of keys) pushSecret(details[key], out);
}

/** The known card number and CVVs of a PaymentDetails object, to be masked wherever quoted. */
function knownSecrets(details: Record<string, unknown>): string[] {
  const secrets = cardFieldSecrets(details);
  otherCvvSecrets(details, secrets);
  return secrets;
}

/**
 * A text of a PaymentDetails object as it may be printed: every run of 12 or more digits masked
 * (Luhn-valid or not: in a payment object, it is card data), and the object's own card number
 * and CVV wherever quoted.
 */
function textMasker(details: Record<string, unknown>): (text: string) => string {
  const redact = createRedactor(knownSecrets(details));
  return (text) => redact(maskDigitRuns(text));
}

/**
 * A masked copy of any value below a PaymentDetails object: strings (keys included) masked,
 * numbers of 12 or more digits turned into masked text, arrays and objects copied the same way.
 * Cycles (a merchant's own additions) are copied once.
 */
function maskedValue(value: unknown, mask: (text: string) => string, seen: Map<object, unknown>) {
  if (typeof value === "string") return mask(value);
  if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    const masked = mask(text);
    return masked === text ? value : masked;
  }
  if (value === null || typeof value !== "object") return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(maskedValue(item, mask, seen));
    return copy;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && !isProtected(value)) {
    // A Date, a Map, a class instance the merchant put there: its text, masked.
    return mask(textOf(value));
  }
  return maskedObject(value as Record<string, unknown>, mask, seen);
}

/**
 * A masked copy of an object: its card fields masked whole (at any depth: a payment object
 * inside another), every other key and value through `mask`, with the object's own card number
 * and CVV added to what `mask` hides.
 */
function maskedObject(
  value: Record<string, unknown>,
  outer: ((text: string) => string) | undefined,
  seen: Map<object, unknown>,
): Record<string, unknown> {
  const own = textMasker(value);
  const mask = outer === undefined ? own : (text: string) => own(outer(text));
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  // The card fields a protected object hides (non-enumerable) print masked in their places.
  for (const key of fieldNamesOf(value)) {
    const item = value[key];
    // A card number (`cardNumber`, `CARDNUMBER`, `"\uFFFD(CardNumber"`: the one rule,
    // `isCardDataKey`): masked to its last four digits.
    if (namesCardNumber(key)) {
      copy[key === CARD_NUMBER ? key : mask(key)] =
        typeof item === "string" || typeof item === "number"
          ? maskCardNumber(String(item))
          : maskedValue(item, mask, seen);
    } else if (isCvvKey(key)) {
      copy[key === "CVVNumber" ? key : mask(key)] =
        item === undefined || item === null ? item : "***";
    } else {
      copy[mask(key)] = maskedValue(item, mask, seen);
    }
  }
  return copy;
}

function maskedCopy(this: Record<string, unknown>): Record<string, unknown> {
  return maskedObject(this, undefined, new Map());
}

function maskedString(this: Record<string, unknown>): string {
  // A payment the service collected itself has no card number (null). The key in another case
  // (`cardNumber`) is the card number too.
  const card = [this.CardNumber, ...cardNumbersOf(this)].find((value) => typeof value === "string");
  return typeof card === "string" ? `[PaymentDetails ${maskCardNumber(card)}]` : "[PaymentDetails]";
}

function maskedInspect(this: Record<string, unknown>): Record<string, unknown> {
  return maskedCopy.call(this);
}

/**
 * Deno's hook must return text: Deno prints anything else through `String()` (`[object Object]`).
 * Deno passes its own `inspect` and the current options, so the masked copy prints as Node and Bun
 * print it, nested in an order too; called without them, the short masked text. Deno calls the hook
 * before its depth check and its `inspect` counts from zero, so the depth left here is passed on
 * (`depth - currentDepth`; below zero, Deno prints `[Object]` as for a plain object).
 */
function maskedDenoInspect(
  this: Record<string, unknown>,
  inspect?: unknown,
  options?: unknown,
): string {
  if (typeof inspect !== "function") return maskedString.call(this);
  const { depth, currentDepth } = (options ?? {}) as { depth?: unknown; currentDepth?: unknown };
  const relative =
    typeof depth === "number" && typeof currentDepth === "number"
      ? { ...(options as object), depth: depth - currentDepth }
      : options;
  return String(inspect(maskedCopy.call(this), relative));
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
  [DENO_INSPECT]: hidden(maskedDenoInspect),
};

/**
 * The prototype of a protected PaymentDetails object: the masked views as its own non-enumerable
 * methods, `Object.prototype` above it. One prototype for every object, set in one step (defining
 * the four methods on each object cost six times as much). Frozen: shared by every request, it
 * cannot be changed by one (`Object.getPrototypeOf(details).toJSON = …` fails).
 */
const PROTECTED_PROTO: object = Object.freeze(Object.create(Object.prototype, PROTECTION));

/** Whether a value is a PaymentDetails object this module protected. */
export function isProtected(value: object): boolean {
  return Object.getPrototypeOf(value) === PROTECTED_PROTO || Object.hasOwn(value, NODE_INSPECT);
}

/**
 * Turns a card object's card fields (`isCardDataKey`: `CardNumber` in any case or any key ending
 * with it, `"\uFFFD(CardNumber"` included, and every key naming a CVV) into non-enumerable own
 * properties, values and places kept (review PIT-1): `pd.CardNumber` reads and
 * writes as before, `Object.hasOwn` and `delete` work, while what copies own enumerable properties
 * (spread, `Object.assign`, `Object.entries`, `structuredClone`, `for … in`, pino's and winston's
 * merges, BSON) leaves them out. A key that cannot be changed (a frozen object) is left.
 */
function hideCardFields(value: object): void {
  const names = Object.keys(value);
  // The names left enumerable, built on the way (linear: review SECOND-PITA-1), from the first
  // card field on (the keys before it are copied then).
  let visible: string[] | undefined;
  let hidden: string[] | undefined;
  for (let i = 0; i < names.length; i++) {
    const key = names[i] as string;
    if (isCardDataKey(key)) {
      try {
        Object.defineProperty(value, key, isCvvKey(key) ? cvvSlot(value, key) : HIDE);
        visible ??= names.slice(0, i);
        hidden ??= [];
        hidden.push(key);
        continue;
      } catch {
        // Not configurable (a frozen or sealed object): not the merchant's, left as it is.
      }
    }
    visible?.push(key);
  }
  // The library's walks read the names kept here rather than `Object.getOwnPropertyNames`.
  if (hidden !== undefined) recordHiddenFields(value, names, visible ?? names, hidden);
}

const HIDE: PropertyDescriptor = Object.freeze({ enumerable: false });

/**
 * A CVV field as protection leaves it: an accessor (non-enumerable, configurable) over a slot of
 * its own, which reads and writes as the value did. A freeze of the object by the merchant's
 * function (`Object.freeze`, an immutability helper's deep freeze) cannot make it keep the CVV
 * (review misbehave-3): the key can no longer be deleted, but writing `***` through the accessor
 * (`deleteKey`) still replaces the value in the slot, for the object and for the copies that
 * share the accessor (the raw payload's, `copyHiddenCardFields`).
 */
function cvvSlot(value: object, key: string): PropertyDescriptor {
  let slot = (value as Record<string, unknown>)[key];
  return {
    get: () => slot,
    set: (next: unknown) => {
      slot = next;
    },
    enumerable: false,
    configurable: true,
  };
}

/**
 * The card fields a protected card object hides, copied onto a copy of it, hidden the same way (the
 * raw view's copies are made by spreading, which leaves them out, and take the original's
 * prototype, so protecting them again would do nothing).
 */
export function copyHiddenCardFields(original: object, copy: object): void {
  const keys = Object.keys(copy);
  // The copy's names: its keys, then each field copied, in the order it is added (as
  // `Object.getOwnPropertyNames` lists them); the enumerable ones, apart (review SECOND-PITA-1).
  const names = keys.slice();
  const visible = keys;
  let hidden: string[] | undefined;
  for (const key of hiddenFieldsOf(original) ?? Object.getOwnPropertyNames(original)) {
    if (Object.hasOwn(copy, key) || !isCardDataKey(key)) continue;
    let descriptor = Object.getOwnPropertyDescriptor(original, key);
    if (descriptor === undefined) continue;
    // A CVV accessor ({@link cvvSlot}): the copy takes a slot of its own holding the value now,
    // as a copied value would be (a write to one is not seen in the other); `dropCvv` wipes both.
    if (descriptor.get !== undefined && isCvvKey(key)) {
      const slot = cvvSlot(original, key);
      descriptor = { ...slot, enumerable: descriptor.enumerable === true };
    }
    Object.defineProperty(copy, key, descriptor);
    names.push(key);
    if (descriptor.enumerable) {
      visible.push(key);
      continue;
    }
    hidden ??= [];
    hidden.push(key);
  }
  if (hidden !== undefined) recordHiddenFields(copy, names, visible, hidden);
}

/**
 * Makes `JSON.stringify`, `String()` and `util.inspect` (Node, Bun, Deno) of a PaymentDetails
 * object print it masked, while its properties keep the real values the merchant pays with.
 * The object takes a prototype holding the masked views, so spreading or iterating it does not
 * see them. A payload key named `toJSON` or `toString` would shadow the prototype's: such an
 * object gets the methods as its own (non-enumerable) properties instead, replacing those keys.
 * Its card fields become non-enumerable ({@link hideCardFields}): copied by spread or a logger's
 * merge, they are left out rather than written in clear.
 */
export function protectPaymentDetails(value: unknown): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  if (isProtected(value)) return;
  hideCardFields(value);
  try {
    if (
      Object.getPrototypeOf(value) === Object.prototype &&
      !Object.hasOwn(value, "toJSON") &&
      !Object.hasOwn(value, "toString")
    ) {
      Object.setPrototypeOf(value, PROTECTED_PROTO);
    } else {
      Object.defineProperties(value, PROTECTION);
    }
  } catch {
    // A frozen object (a framework's own body) cannot take the methods; it is not the merchant's.
  }
}

/**
 * Removes the CVV (PCI DSS 3.3.1: not kept after authorisation, not even masked): the `CVVNumber`
 * field, every other own key naming a CVV (`cvvNumber`, a key damaged in transit such as
 * `"\uFFFD(CVVNumber"`: see {@link isCvvKey}), and every quote of any of them left in the object's
 * other strings, however deep: a copy under a key the spec does not give PaymentDetails is
 * removed, and a field quoting it (`"card … cvv 737"`) keeps its text with `***` in its place. A
 * key that cannot be deleted (not configurable) but can be written is overwritten with `***`.
 */
export function dropCvv(value: unknown): void {
  if (value === null || typeof value !== "object") return;
  const details = value as Record<string, unknown>;
  try {
    const own = Object.hasOwn(details, "CVVNumber");
    // The usual object: one set lookup a key (its keys are the spec's), no pattern matched. Every
    // own name, read now, not the names recorded when the card fields were hidden: a key naming a
    // CVV made non-enumerable since (the merchant's `Object.defineProperty(details, "Cvv2", …)`)
    // or before (a framework's body) is no visible change, and would outlive the function (review
    // SECOND-PITA-4). It runs once a request, and costs what reading the recorded names did
    // (measured on a 22-field payment object: 1.0–2.0 µs against 1.2–2.4 µs, best of 12 rounds).
    const others = otherCvvKeys(details, Object.getOwnPropertyNames(details));
    if (!own && others === undefined) return;
    // The quotes first, the fields last: deleting a key from the middle of an object turns it into
    // a dictionary, slower for the scrub's walk over its fields (940 → 730–830 ns for a payment object).
    // A quote that cannot be masked (a frozen value, a read-only field) must not keep the fields.
    try {
      if (others === undefined) {
        // The usual object: one CVV, `CVVNumber`.
        const known = cvvText(details.CVVNumber);
        if (known.length >= 3) scrubCvv(details, known);
      } else {
        // Each value once (the same value under two keys is scrubbed once), in key order.
        const cvvs = new Set<string>();
        if (own) cvvs.add(cvvText(details.CVVNumber));
        for (const key of others) cvvs.add(cvvText(details[key]));
        for (const known of cvvs) if (known.length < 3) cvvs.delete(known);
        if (cvvs.size <= SCRUB_ONE_BY_ONE) for (const known of cvvs) scrubCvv(details, known);
        else scrubCvv(details, new ManyCvvs(cvvs));
      }
    } finally {
      // Each key on its own, CVVNumber first: one that cannot be deleted (not configurable) must
      // not keep the others.
      if (own) deleteKey(details, "CVVNumber");
      if (others !== undefined) for (const key of others) deleteKey(details, key);
    }
  } catch {
    // A frozen object, a field that cannot be deleted or a quote that cannot be masked: there is
    // nothing more this library can do to it.
  }
}

/**
 * Deletes one key holding a CVV (or naming one). One that cannot be deleted (not configurable, a
 * sealed object: strict mode throws) but can be written is overwritten with `***`, so the CVV is
 * not kept; one that can be neither (a frozen object) is left. Never throws.
 */
function deleteKey(details: Record<string, unknown>, key: string): void {
  try {
    delete details[key];
    return;
  } catch {
    // Not configurable, or the object is sealed (or frozen): overwritten below, if it can be. A
    // CVV field protection made an accessor ({@link cvvSlot}) can be, frozen too.
  }
  try {
    details[key] = "***";
  } catch {
    // Read-only too: nothing more can be done to this key.
  }
}

/** Protects each card object (see `protectPaymentDetails`) and removes its CVV (`dropCvv`). */
export function protectCards(cards: Iterable<object>): void {
  for (const details of cards) {
    protectPaymentDetails(details);
    dropCvv(details);
  }
}

/**
 * A framework's parsed body (`req.body`) that the engine did not walk, or walked only in a copy:
 * every card object in it (`findCardObjects`) prints masked and loses its CVV. Anything but a
 * parsed object (text, bytes, a stream) is left alone. Never throws: it runs on every answer.
 */
export function protectParsedBody(body: unknown): void {
  try {
    if (isParsedBody(body)) protectCards(findCardObjects(body as object));
  } catch {
    // A body that throws when walked (a getter, a Proxy): nothing this library can reach.
  }
}

/**
 * How many different CVVs one card object may hold and still be scrubbed one after the other
 * (the service sends one: `CVVNumber`). Past it (a body made to cost: thousands of keys naming a
 * CVV), all of them are scrubbed in one pass: see {@link ManyCvvs}.
 */
const SCRUB_ONE_BY_ONE = 8;

/** A CVV value as scrubbed: a string or a number's text, trimmed (anything else: none). */
function cvvText(value: unknown): string {
  return typeof value === "string" ? value.trim() : typeof value === "number" ? String(value) : "";
}

/**
 * More than {@link SCRUB_ONE_BY_ONE} different CVVs, all at once, in one pass over each text: a CVV
 * of digits only wherever it stands alone (a whole run of digits: as one by one), any other
 * wherever it occurs (found by one automaton over all of them, so a text costs its length, not its
 * length times the CVVs). A run of quotes next to or over each other becomes one `***`.
 */
class ManyCvvs {
  readonly #cvvs: ReadonlySet<string>;
  /** The CVVs with their digits of any script as ASCII (see `fold.ts`): the texts are read so. */
  readonly #folded = new Set<string>();
  readonly #digits = new Set<string>();
  readonly #automaton: Automaton | undefined;

  constructor(cvvs: ReadonlySet<string>) {
    this.#cvvs = cvvs;
    const others: string[] = [];
    for (const written of cvvs) {
      // A CVV of ASCII digits is masked where it stands alone, in any script's digits; any other
      // (`a12`, `٧٣٧`) wherever it is quoted as written, and one of other scripts' digits also
      // where it stands alone as ASCII digits.
      const cvv = foldText(written);
      this.#folded.add(cvv);
      if (ALL_DIGITS.test(cvv)) this.#digits.add(cvv);
      if (!ALL_DIGITS.test(written)) others.push(written);
    }
    this.#automaton = others.length > 0 ? buildAutomaton(others) : undefined;
  }

  /** Whether a trimmed text is one of the CVVs (a copy of it, deleted under an unknown key). */
  has(trimmed: string): boolean {
    return this.#cvvs.has(trimmed) || (mayFold(trimmed) && this.#folded.has(foldText(trimmed)));
  }

  /** The text with every quote masked (the text itself when it quotes none). */
  mask(written: string): string {
    let marks: Uint8Array | undefined;
    // The other CVVs first, as written: a quote of one inside a run of digits cuts it, and each
    // piece is then looked at as a run of its own (`a12345` with `a12` and `345`: `******`, as one
    // CVV at a time gives; review second-card-1). Masking a whole run exposes nothing new: its
    // neighbours are not digits, or are masked already.
    if (this.#automaton !== undefined) marks = markOccurrences(written, this.#automaton, marks);
    // Then the runs of digits, those of any script read as ASCII (review i18n-1): `٧٣٧` quotes
    // `737`.
    const folded = foldDigits(written);
    const text = folded?.text ?? written;
    if (folded !== undefined && marks !== undefined) marks = foldMarks(marks, folded);
    if (this.#digits.size > 0) marks = markDigitRuns(text, this.#digits, marks);
    if (marks === undefined) return written;
    const masked = replaceMarked(text, marks);
    return folded === undefined ? masked : unfold(written, folded, masked, marks);
  }
}

const ALL_DIGITS = /^[0-9]+$/;

function isAsciiDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * Marks every whole run of ASCII digits that is one of `digits`, a digit already marked (in
 * `marks`) counting as no digit: it ends a run.
 */
function markDigitRuns(
  text: string,
  digits: ReadonlySet<string>,
  marks: Uint8Array | undefined,
): Uint8Array | undefined {
  let out = marks;
  const free = (at: number): boolean =>
    isAsciiDigit(text.charCodeAt(at)) && (marks === undefined || marks[at] !== 1);
  let i = 0;
  while (i < text.length) {
    if (!free(i)) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && free(i)) i++;
    if (i - start >= 3 && digits.has(text.slice(start, i))) {
      out ??= new Uint8Array(text.length);
      out.fill(1, start, i);
    }
  }
  return out;
}

/**
 * An Aho–Corasick automaton over some texts: `goto` maps `state * 0x10000 + char code` to the next
 * state (one map for all states), `fail` is each state's failure link, and `longest` the length of
 * the longest text that ends in that state (itself or through its failure links; 0 for none).
 */
interface Automaton {
  readonly goto: Map<number, number>;
  readonly fail: Int32Array;
  readonly longest: Int32Array;
}

function buildAutomaton(texts: readonly string[]): Automaton {
  const goto = new Map<number, number>();
  const ends: number[] = [0];
  // The children of each state, for the breadth-first pass: first child and next sibling.
  const firstChild: number[] = [-1];
  const sibling: number[] = [-1];
  const codeOf: number[] = [0];
  for (const text of texts) {
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let next = goto.get(state * 0x10000 + code);
      if (next === undefined) {
        next = ends.length;
        ends.push(0);
        firstChild.push(-1);
        codeOf.push(code);
        sibling.push(firstChild[state] as number);
        firstChild[state] = next;
        goto.set(state * 0x10000 + code, next);
      }
      state = next;
    }
    ends[state] = Math.max(ends[state] as number, text.length);
  }
  const fail = new Int32Array(ends.length);
  const longest = Int32Array.from(ends);
  const queue: number[] = [];
  for (let child = firstChild[0] as number; child !== -1; child = sibling[child] as number) {
    queue.push(child);
  }
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head] as number;
    for (let child = firstChild[state] as number; child !== -1; child = sibling[child] as number) {
      const code = codeOf[child] as number;
      let link = fail[state] as number;
      let next = goto.get(link * 0x10000 + code);
      while (next === undefined && link !== 0) {
        link = fail[link] as number;
        next = goto.get(link * 0x10000 + code);
      }
      const target = next ?? 0;
      fail[child] = target;
      longest[child] = Math.max(longest[child] as number, longest[target] as number);
      queue.push(child);
    }
  }
  return { goto, fail, longest };
}

/** Marks every occurrence of the automaton's texts in a text (the longest ending at each place). */
function markOccurrences(
  text: string,
  { goto, fail, longest }: Automaton,
  marks: Uint8Array | undefined,
): Uint8Array | undefined {
  let out = marks;
  let state = 0;
  // Marked up to here already: overlapping quotes cost their union, not their sum.
  let filled = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let next = goto.get(state * 0x10000 + code);
    while (next === undefined && state !== 0) {
      state = fail[state] as number;
      next = goto.get(state * 0x10000 + code);
    }
    state = next ?? 0;
    const size = longest[state] as number;
    if (size === 0) continue;
    out ??= new Uint8Array(text.length);
    const from = Math.max(i - size + 1, filled);
    out.fill(1, from, i + 1);
    filled = i + 1;
  }
  return out;
}

/** Scrubs one CVV (one by one: a text) or many at once from a card object's texts, nested ones too. */
function scrubCvv(details: Record<string, unknown>, cvv: string | ManyCvvs): void {
  // The object's own fields first; nested values (rare in a payment object) are walked after.
  let nested: object[] | undefined;
  scrubFields(details, cvv, true, (item) => {
    nested ??= [];
    nested.push(item);
  });
  if (nested === undefined) return;
  const stack = nested;
  const seen = new Set<object>([details]);
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    if (seen.has(node)) continue;
    seen.add(node);
    scrubFields(node, cvv, false, (item) => stack.push(item));
  }
}

/** Masks the CVVs in one object's string fields; tells of its object-valued fields. */
function scrubFields(
  node: Record<string, unknown>,
  cvv: string | ManyCvvs,
  top: boolean,
  nested: (item: object) => void,
): void {
  // The card object's own fields, hidden ones too (its card number); below it, plain objects.
  for (const key of top ? fieldNamesOf(node) : Object.keys(node)) {
    // Other keys naming a CVV are deleted after the scrub whatever it does to them.
    if (top && key === "CVVNumber") continue;
    const item = node[key];
    if (item !== null && typeof item === "object") {
      nested(item);
      continue;
    }
    if (typeof item !== "string") continue;
    const one = typeof cvv === "string";
    // A field that does not quote it (nearly all) costs one native search.
    // A text in other scripts' digits may quote it too (review i18n-1).
    if (one && !item.includes(cvv) && !mayFold(item)) continue;
    if (
      top &&
      !KNOWN_FIELDS.has(key) &&
      (one ? foldText(item.trim()) === foldText(cvv) : cvv.has(item.trim()))
    ) {
      // On its own: one that cannot be deleted must not keep the quotes in the fields after it.
      deleteKey(node, key);
      continue;
    }
    const masked = one ? maskSecret(item, cvv) : cvv.mask(item);
    if (masked !== item) node[key] = masked;
  }
}

/**
 * What a PaymentDetails object holds that the library's reports must mask wherever quoted: its
 * card number and CVV, and every run of 12 or more digits in any of its fields (a card number
 * under a damaged key, or in a field it does not belong to), nested values and keys included.
 */
export function cardSecretsOf(details: Record<string, unknown>, out: string[]): void {
  out.push(...knownSecrets(details));
  digitRunsOfFields(details, out);
}

/** A payload member naming a gift card's `CardFields`, in any key case. */
export function isGiftCardFieldsName(name: string): boolean {
  return name.toLowerCase() === "cardfields";
}

/**
 * Every top-level `CardFields` member of a gift-card request that is an object, in any key case
 * (the service binds names case-insensitively, so a body may hold `CardFields` and `cardFields`
 * both). The one rule for "the gift card's CardFields": the default key (which ids it digests
 * apart) and the redactors (which PINs they mask) both read it.
 */
export function giftCardFieldsOf(payload: unknown): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  if (!isRecord(payload)) return found;
  for (const name of Object.keys(payload)) {
    const fields = payload[name];
    if (isGiftCardFieldsName(name) && isRecord(fields)) found.push(fields);
  }
  return found;
}

/** A `CardFields` member other than `CardId` (in any case): a security code. */
function isCardSecretName(name: string): boolean {
  return name.toLowerCase() !== "cardid";
}

/**
 * Whether a gift card's `CardFields` holds a security code: any member but `CardId` (in any case).
 * The spec gives it `CardId` alone; what else a platform sends there (`Pin`, `SecurityCode`, `Cvv`)
 * is what proves the card is the shopper's, a few digits an unkeyed digest would not hide.
 */
export function holdsCardSecret(cardFields: Record<string, unknown>): boolean {
  for (const name of Object.keys(cardFields)) if (isCardSecretName(name)) return true;
  return false;
}

/**
 * A gift card's security codes in a gift-card request as sent: every value (a text or a number,
 * nested ones too) of its `CardFields` members other than `CardId`, in every top-level
 * `CardFields` ({@link giftCardFieldsOf}; both names in any key case), the `Pin`, `SecurityCode`
 * or `Cvv` that proves the card is the shopper's. The redactors mask them wherever quoted (those
 * under three characters are left, as for every secret).
 */
export function giftCardSecretsOf(payload: unknown): string[] {
  const secrets: string[] = [];
  const cards = giftCardFieldsOf(payload);
  if (cards.length === 0) return secrets;
  const stack: unknown[] = [];
  for (const fields of cards) {
    for (const name of Object.keys(fields)) if (isCardSecretName(name)) stack.push(fields[name]);
  }
  const seen = new Set<object>(cards);
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "string") secrets.push(node);
    else if (typeof node === "number" || typeof node === "bigint") secrets.push(String(node));
    else if (node !== null && typeof node === "object" && !seen.has(node)) {
      seen.add(node);
      for (const key of Object.keys(node)) stack.push((node as Record<string, unknown>)[key]);
    }
  }
  return secrets;
}

/** The runs of 12 or more digits in a payment object's own fields, keys and nested values. */
function digitRunsOfFields(details: Record<string, unknown>, out: string[]): void {
  // The object's own fields first (nested values are rare in a payment object). A text shorter
  // than a run cannot hold one, and the spec's field names hold none: neither is scanned.
  let stack: unknown[] | undefined;
  for (const key of fieldNamesOf(details)) {
    if (!KNOWN_FIELDS.has(key)) digitRunsIn(key, out);
    const value = details[key];
    if (value === null || typeof value !== "object") digitRunsIn(value, out);
    else if (stack === undefined) stack = [value];
    else stack.push(value);
  }
  if (stack === undefined) return;
  const seen = new Set<object>([details]);
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") digitRunsIn(node, out);
    else if (!seen.has(node)) {
      seen.add(node);
      for (const key of Object.keys(node)) {
        digitRunsIn(key, out);
        stack.push((node as Record<string, unknown>)[key]);
      }
    }
  }
}

/**
 * {@link cardSecretsOf} as of now, computed when asked: the object's fields are copied now (a
 * shallow copy: its texts cannot change, whatever is done to the object later); an object with a
 * nested value, which could change, is read now.
 */
export function cardSecretsLater(details: Record<string, unknown>): (out: string[]) => void {
  // The card fields as `cardSecretsOf` reads them (any own or inherited field, hidden ones too),
  // now; the copy, of own enumerable fields, serves the scan for digit runs, and gives the card
  // number under the key in another case (`cardNumber`), rare, read on the way.
  const known: string[] = [];
  for (const field of CARD_FIELDS) pushSecret(details[field], known);
  const copy: Record<string, unknown> = isProtected(details) ? fieldsCopy(details) : { ...details };
  for (const key in copy) {
    const value = copy[key];
    if (key !== CARD_NUMBER && namesCardNumber(key)) pushSecret(value, known);
    if (value !== null && typeof value === "object") {
      const now: string[] = [];
      cardSecretsOf(details, now);
      return (out) => {
        out.push(...now);
      };
    }
  }
  return (out) => {
    out.push(...known);
    // Other keys naming a CVV are looked for only when a text is redacted.
    otherCvvSecrets(copy, out);
    digitRunsOfFields(copy, out);
  };
}

/** A copy of a protected card object's fields, the hidden card fields as plain ones. */
function fieldsCopy(details: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of fieldNamesOf(details)) copy[key] = details[key];
  return copy;
}

/** The runs of 12 or more digits in a string or a number's text (none in a shorter text). */
function digitRunsIn(value: unknown, out: string[]): void {
  const text = typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
  if (text.length >= MIN_CARD_DIGITS) digitRunsOf(text, out);
}

export { redactCardNumbers } from "./redact.js";
