/**
 * The one redaction mechanism. Every text the library lets out — what `onError` receives (the
 * reason, every field of an error's copy), the default console line, the texts of a
 * `CallbackError` sent back, the reports on a merchant's result — passes through a `Redactor`.
 *
 * A redactor masks Luhn-valid 13–19 digit card numbers, and this request's own card number and
 * CVV wherever a text quotes them. It is linear in the text and the secrets (one scan for card
 * numbers; a Knuth–Morris–Pratt search per secret for up to eight, past that one search for all of
 * them, see {@link patternSearch}, built once per redactor on its first text: a body of thousands
 * of card objects must not cost a pass over the text per secret, review AMP-3), builds no regular
 * expression from request data, and cannot throw: anything it cannot read becomes `[unreadable]`,
 * never the text itself.
 */

import { cardNumbersOf } from "./card-keys.js";
import { foldDigits, foldedScan, foldText, unfold } from "./fold.js";
import { markStarts, type PatternSearch, patternSearch } from "./secret-search.js";

/** Turns any value into a text safe to let out. */
export type Redactor = (value: unknown) => string;

/** What replaces this request's card number or CVV. */
const SECRET_MASK = "***";
/** What a value becomes when it cannot be turned into text (a throwing `toString`, a revoked Proxy). */
export const UNREADABLE = "[unreadable]";
/** A secret shorter than this cannot be told from other text (every "7" is not a CVV). */
const MIN_SECRET_LENGTH = 3;

const ZERO = 48;
const NINE = 57;
const SPACE = 32;
const DASH = 45;
/** A space as form encoding writes it: the service form-encodes PaymentDetails' text fields. */
const PLUS = 43;
const PERCENT = 37;

/**
 * Characters that may stand between the digit groups of a card number written by hand or by
 * another system, besides one space, dash or `+`: spaces of any width (tab, no-break, figure,
 * thin, narrow no-break), dots, slashes and underscores. Not `:` or `,` (times, lists).
 */
const WIDE_SEPARATORS = new Set([SPACE, DASH, PLUS, 9, 0xa0, 0x2007, 0x2009, 0x202f, 46, 47, 95]);
/**
 * The same characters percent-encoded, as a quote of an encoded field spells them: .NET's
 * `HttpUtility.UrlEncode` (the service's) writes a space as `+`, a `+` as `%2b` and `/` as `%2f`
 * in lower-case hex; other encoders write a space as `%20`, a no-break space as `%C2%A0`.
 */
const ENCODED_SEPARATORS = new Set([0x20, 0x09, 0x2b, 0x2d, 0x2e, 0x2f, 0x5f]);
/** The most separators (characters or escapes) a gap between two digit groups may hold. */
const MAX_GAP_SEPARATORS = 3;

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/**
 * Any value as text, without letting an exception out: a string as it is, a primitive through
 * `String`, an object through its own `toString` when that works.
 */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return typeof value === "symbol" ? value.toString() : String(value);
  } catch {
    return UNREADABLE;
  }
}

/** `2d` with its digits summed (Luhn's doubling). */
function doubled(digit: number): number {
  const twice = digit * 2;
  return twice > 9 ? twice - 9 : twice;
}

/**
 * Replaces every Luhn-valid 13–19 digit sequence with its masked form, keeping the separators and
 * the last four digits. Between its digit groups a sequence may have one space, dash or `+` (mixed
 * freely), or the same gap each time of up to three separators (see {@link WIDE_SEPARATORS} and
 * {@link ENCODED_SEPARATORS}); a space's spellings (` `, `+`, `%20`) mix (see {@link gapKind}:
 * `4111+1111%201111+1111`):
 * `4111.1111.1111.1111`, `4111  1111  1111  1111`, `4111%201111%201111%201111`. A list of amounts (`100.00 200.00 …`) mixes its gaps and is no
 * sequence. A sequence may start and end at a gap inside a longer run of digits, so a card number
 * followed by a CVV or an expiry (`4111 1111 1111 1111 737`) is found too; a card number glued to
 * more digits is part of a longer number and left alone. One pass over the text; each run is
 * checked in time linear in its length (at most 19 digits between a start and an end, Luhn sums
 * from prefix sums).
 */
export function redactCardNumbers(text: string): string {
  // Digits of any script, other spaces and dashes, read as ASCII (review i18n-1).
  return foldedScan(text, redactAsciiCardNumbers);
}

/** {@link redactCardNumbers} of a text whose digits and separators are ASCII (see `fold.ts`). */
function redactAsciiCardNumbers(text: string): string {
  return replaceDigitRuns(
    text,
    13,
    (start, end, digits) => maskRun(text, start, end, digits, true),
    true,
  );
}

/** {@link redactCardNumbers} with only one space, dash or `+` between digit groups. */
function redactClassicCardNumbers(text: string): string {
  return replaceDigitRuns(text, 13, (start, end, digits) =>
    maskRun(text, start, end, digits, false),
  );
}

/**
 * The text with each run of at least `minDigits` digits (see {@link forEachDigitRun}) replaced by
 * what `replace` gives for it (`undefined`: left as written). The text itself when none is.
 */
function replaceDigitRuns(
  text: string,
  minDigits: number,
  replace: (start: number, end: number, digits: number) => string | undefined,
  wide = false,
): string {
  let pieces: string[] | undefined;
  let copied = 0;
  forEachDigitRun(
    text,
    minDigits,
    (start, end, digits) => {
      const replacement = replace(start, end, digits);
      if (replacement === undefined) return;
      pieces ??= [];
      pieces.push(text.slice(copied, start), replacement);
      copied = end;
    },
    wide,
  );
  if (pieces === undefined) return text;
  pieces.push(text.slice(copied));
  return pieces.join("");
}

/**
 * Calls `found(start, end, digits)` for every run of digits in the text holding at least
 * `minDigits` digits: digit groups with a gap between them (see {@link gapAt}), the digits of an
 * escape in a gap not counted. One pass over the text.
 */
function forEachDigitRun(
  text: string,
  minDigits: number,
  found: (start: number, end: number, digits: number) => void,
  wide = false,
): void {
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) {
      // When `wide`, an escape is skipped whole: no run starts at the `20` of `card%20…`, which
      // would glue it to the card after it.
      i += wide && code === PERCENT && hexByte(text, i + 1) >= 0 ? 3 : 1;
      continue;
    }
    const start = i;
    let digits = 0;
    let j = i;
    // When `wide`: the most digits a stretch of groups joined by gaps of one kind holds (see
    // maskRun). A run without such a stretch of `minDigits` (a list of amounts, `100.00 200.00`)
    // is not reported.
    let longest = 0;
    let stretch = 0;
    let group = 0;
    let previousGap = -1;
    let previousKind = 0;
    for (;;) {
      digits++;
      group++;
      j++;
      if (j < length && isDigit(text.charCodeAt(j))) continue;
      const gap = gapAt(text, j, wide);
      if (gap === 0) break;
      if (wide) {
        const kind = gapKind(text, j, gap);
        // A first filter: one space's spellings and one dash are taken together here (a superset);
        // maskRun keeps a stretch only if its single gaps fit one family (see gapKind).
        if (
          previousGap >= 0 &&
          (kind <= ANY_SPACE ? previousKind <= ANY_SPACE : previousKind === kind)
        )
          stretch += group;
        else {
          if (stretch + group > longest) longest = stretch + group;
          stretch = group;
        }
        previousGap = j;
        previousKind = kind;
        group = 0;
      }
      j += gap;
    }
    i = j;
    if ((wide ? Math.max(longest, stretch + group) : digits) >= minDigits) found(start, j, digits);
  }
}

/**
 * The kinds of a gap of one separator that mix within one card number, as bits: main's rule, one
 * space, dash or `+` as such (`LITERAL`), and a space as form encoding spells it, `+` or `%20`
 * (`FORM_SPACE`). A space or `+` is both; a dash only the first, a `%20` only the second. A stretch
 * of groups is one sequence while its gaps share a bit (see {@link joinedKind}).
 */
const LITERAL = 1;
const FORM_SPACE = 2;
const ANY_SPACE = LITERAL | FORM_SPACE;

/**
 * A gap's kind: for one space, dash, `+` or `%20`, its bits (see {@link LITERAL}); else, a multiple
 * of 4, its separators' classes in order, the same for the spellings of a space (` `, `+`, `%20`)
 * and for an escape in either case (`%2b`, `%2B`), so that `++` and `%20%20` mix. Other separators
 * and their escapes (`.` and `%2E`, `-` and `%2D`) are apart: mixed, they are lists, not cards.
 */
function gapKind(text: string, at: number, size: number): number {
  if (size === 1 || size === 3) {
    const code =
      size === 1
        ? text.charCodeAt(at)
        : text.charCodeAt(at) === PERCENT
          ? hexByte(text, at + 1)
          : -1;
    if (code === SPACE) return size === 1 ? ANY_SPACE : FORM_SPACE;
    if (size === 1 && code === PLUS) return ANY_SPACE;
    if (size === 1 && code === DASH) return LITERAL;
  }
  let kind = 0;
  for (let k = at; k < at + size; ) {
    const length = separatorAt(text, k);
    kind = kind * 32 + separatorClass(text, k, length);
    k += length;
  }
  return kind * 4;
}

/**
 * The kind of a stretch whose gaps so far are of kind `stretch`, once a gap of `kind` joins it; 0
 * if it cannot: one space's spellings and single dashes narrow to the bits they share, other kinds
 * only join the same kind.
 */
function joinedKind(stretch: number, kind: number): number {
  if (kind <= ANY_SPACE) return stretch <= ANY_SPACE ? stretch & kind : 0;
  return stretch === kind ? kind : 0;
}

/** The class (1 to 31) of the separator of `length` at `at`; a percent-escape apart from its character. */
function separatorClass(text: string, at: number, length: number): number {
  if (length === 6) return 2; // %C2%A0, a no-break space in UTF-8
  if (length === 3) {
    const byte = hexByte(text, at + 1);
    // A form-encoded space is a space, however spelt.
    if (byte === SPACE) return 1;
    return 16 + ENCODED_CLASSES.indexOf(byte);
  }
  const code = text.charCodeAt(at);
  return code === SPACE || code === PLUS ? 1 : 3 + WIDE_CLASSES.indexOf(code);
}

/** Separators in the order of their classes (see separatorClass). */
const WIDE_CLASSES = [DASH, 9, 0xa0, 0x2007, 0x2009, 0x202f, 46, 47, 95];
const ENCODED_CLASSES = [0x09, 0x2b, 0x2d, 0x2e, 0x2f, 0x5f];

/**
 * The length of the gap at `at` between two digit groups, 0 if there is none: one space, dash or
 * `+`; or, when `wide`, up to three separators (characters or escapes) followed by a digit.
 */
function gapAt(text: string, at: number, wide: boolean): number {
  if (!wide) {
    const next = text.charCodeAt(at);
    return (next === SPACE || next === DASH || next === PLUS) && isDigit(text.charCodeAt(at + 1))
      ? 1
      : 0;
  }
  let k = at;
  for (let count = 0; count < MAX_GAP_SEPARATORS; count++) {
    const size = separatorAt(text, k);
    if (size === 0) return 0;
    k += size;
    if (isDigit(text.charCodeAt(k))) return k - at;
  }
  return 0;
}

/** The length of the separator (a character or a percent-escape of one) at `at`, 0 if none. */
function separatorAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code !== PERCENT) return WIDE_SEPARATORS.has(code) ? 1 : 0;
  const byte = hexByte(text, at + 1);
  if (ENCODED_SEPARATORS.has(byte)) return 3;
  // A no-break space in UTF-8: %C2%A0.
  return byte === 0xc2 && text.charCodeAt(at + 3) === PERCENT && hexByte(text, at + 4) === 0xa0
    ? 6
    : 0;
}

/** The byte two hex digits at `at` spell, -1 if they are not two hex digits. */
function hexByte(text: string, at: number): number {
  const high = hexValue(text.charCodeAt(at));
  const low = hexValue(text.charCodeAt(at + 1));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

function hexValue(code: number): number {
  if (code >= ZERO && code <= NINE) return code - ZERO;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The fewest digits of a card number (ISO/IEC 7812: 12 to 19). */
export const MIN_CARD_DIGITS = 12;

/**
 * Masks every run of at least 12 digits (a single space, dash or `+` allowed between them), Luhn-valid
 * or not, keeping the separators and the last four digits. For text that is card data by where it
 * sits (any field of a PaymentDetails object), where a longer run is no order or tracking number.
 */
export function maskDigitRuns(text: string): string {
  return foldedScan(text, (ascii) =>
    replaceDigitRuns(ascii, MIN_CARD_DIGITS, (start, end, count) =>
      maskedRun(ascii, start, end, count),
    ),
  );
}

/** The run `text[start, end)` (of `count` digits) with every digit but the last four masked. */
function maskedRun(text: string, start: number, end: number, count: number): string {
  let digits = count;
  let out = "";
  for (let k = start; k < end; k++) {
    const char = text.charAt(k);
    if (!isDigit(char.charCodeAt(0))) out += char;
    else out += digits-- > 4 ? "*" : char;
  }
  return out;
}

/**
 * The text with one card number (given by its digits, 12 or more) masked in any spelling, Luhn-valid
 * or not: every run of digits (a single space, dash or `+` between them) holding it keeps only its last
 * four digits, and a text that still holds those digits in order (other separators, percent-escapes
 * included: see {@link holdsCard}) keeps none.
 */
export function maskCardDigits(text: string, digits: string): string {
  if (digits.length < MIN_CARD_DIGITS) return text;
  return cardsMasker([digits])(text);
}

/**
 * A function masking, in a text, the card number of each of these card objects (under
 * `CardNumber` in any case), in any spelling. The numbers are read now: the merchant's function
 * may clear a card once it has charged it.
 */
export function cardNumbersMasker(
  cards: Iterable<Record<string, unknown>>,
): (text: string) => string {
  const numbers: string[] = [];
  for (const card of cards) {
    for (const value of cardNumbersOf(card)) {
      const found = cardDigits(value);
      if (found !== undefined) numbers.push(found);
    }
  }
  return cardsMasker(numbers);
}

/**
 * Masks these card numbers (digits, 12 or more; the first of equal ones counts) in a text: every
 * run of digits (a single space, dash or `+` between them) holding one of them keeps only its last
 * four digits, and a text where one of them would keep more than its last four digits so (held
 * across runs or in none: other separators, escapes, a number glued to another's run), or that
 * still holds one after, keeps none. One search for all the numbers, built on the first text: a
 * text costs its length, not its length times the number of cards (review AMP-3).
 *
 * Until review AMP-3 the numbers were masked one after the other (`maskCardDigits` each, in
 * order), and the result depended on their order: the masking of one number's run could make
 * another number's digits follow each other in the text, which was then let out so, or break a
 * number held across runs, whose digits then went out but for the masked runs' (review
 * second-card-2). Now no digit goes out in either case, whatever the order.
 */
function cardsMasker(cards: readonly string[]): (text: string) => string {
  const numbers = cards.length > 1 ? [...new Set(cards)] : cards;
  if (numbers.length === 0) return (text) => text;
  let search: CardSearch | undefined;
  // Digits of any script read as ASCII (review i18n-1).
  return (text) => foldedScan(text, maskAscii);
  function maskAscii(text: string): string {
    search ??= cardSearch(numbers, true);
    const card = search;
    // A number the text holds (digits, escapes read)? None: nothing to mask.
    if (!holdsCard(text, card)) return text;
    const masked = replaceDigitRuns(text, MIN_CARD_DIGITS, (start, end, count) =>
      card.leastIndexIn(onlyDigits(text.slice(start, end)), Number.POSITIVE_INFINITY) < 0
        ? undefined
        : maskedRun(text, start, end, count),
    );
    // A number held in the text that the runs' masking leaves more of than its last four digits
    // (one in no run, or across runs: review second-card-2), or one still held once they are
    // masked: no digit goes out. `maskedRun` keeps the text's length: a digit of the text goes
    // out if it is still a digit in `masked`.
    if (exposesCard(text, card, masked, undefined) || holdsCard(masked, card))
      return masked.replace(/[0-9]/g, "*");
    return masked;
  }
}

/** The digits of a card number field (a string or a number), when it has enough to be one. */
export function cardDigits(value: unknown): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const digits = onlyDigits(foldText(String(value)));
  return digits.length >= MIN_CARD_DIGITS ? digits : undefined;
}

function onlyDigits(text: string): string {
  return text.replace(/[^0-9]/g, "");
}

/** Every run of at least 12 digits in the text, as written (see {@link maskDigitRuns}). */
export function digitRunsOf(text: string, out: string[]): void {
  // Digits of any script as ASCII digits: the runs are secrets a folded text is searched for.
  const ascii = foldText(text);
  forEachDigitRun(ascii, MIN_CARD_DIGITS, (start, end) => {
    out.push(ascii.slice(start, end));
  });
}

/**
 * The run `text[start, end)` (of `count` digits) with its card numbers masked, if it has any. A
 * sequence is whole digit groups whose gaps are all one space, dash or `+`, or all the same.
 */
function maskRun(
  text: string,
  start: number,
  end: number,
  count: number,
  wide: boolean,
): string | undefined {
  // The digit offset where each group starts (and `count` last); each gap's length in the text and
  // its kind (see gapKind).
  const bounds: number[] = [0];
  const gapSizes: number[] = [];
  const gapKinds: number[] = [];
  // Luhn prefix sums: in `sums[p]`, the digits at offsets of parity p are doubled.
  const even = new Int32Array(count + 1);
  const odd = new Int32Array(count + 1);
  let offset = 0;
  for (let k = start; k < end; ) {
    const code = text.charCodeAt(k);
    if (!isDigit(code)) {
      const size = gapAt(text, k, wide);
      bounds.push(offset);
      gapSizes.push(size);
      gapKinds.push(gapKind(text, k, size));
      k += size;
      continue;
    }
    const digit = code - ZERO;
    even[offset + 1] = (even[offset] as number) + (offset % 2 === 0 ? doubled(digit) : digit);
    odd[offset + 1] = (odd[offset] as number) + (offset % 2 === 1 ? doubled(digit) : digit);
    offset++;
    k++;
  }
  bounds.push(count);
  let hide: Uint8Array | undefined;
  for (let a = 0; a < bounds.length; a++) {
    const from = bounds[a] as number;
    // The kind of the gaps a to b - 2 together (see joinedKind).
    let stretch = 0;
    for (let b = a + 1; b < bounds.length; b++) {
      // Groups a to b - 1, joined by the gaps a to b - 2: all of one kind.
      if (b - 2 > a) {
        stretch = joinedKind(stretch, gapKinds[b - 2] as number);
        if (stretch === 0) break;
      } else if (b - 2 === a) stretch = gapKinds[a] as number;
      const to = bounds[b] as number;
      const size = to - from;
      if (size > 19) break;
      if (size < 13) continue;
      // From the right, the last digit is not doubled: the digits of the other parity are.
      const sums = to % 2 === 0 ? even : odd;
      if (((sums[to] as number) - (sums[from] as number)) % 10 === 0) {
        hide ??= new Uint8Array(count);
        hide.fill(1, from, to - 4);
      }
    }
  }
  if (hide === undefined) return undefined;
  let out = "";
  offset = 0;
  for (let k = start, gap = 0; k < end; ) {
    const char = text.charAt(k);
    if (isDigit(char.charCodeAt(0))) {
      out += hide[offset++] === 1 ? "*" : char;
      k++;
      continue;
    }
    // A gap as written, the digits of its escapes included.
    const size = gapSizes[gap++] as number;
    out += text.slice(k, k + size);
    k += size;
  }
  return out;
}

/** Knuth–Morris–Pratt failure table of a pattern. */
function failureTable(pattern: string): Int32Array {
  const table = new Int32Array(pattern.length);
  let k = 0;
  for (let i = 1; i < pattern.length; i++) {
    while (k > 0 && pattern.charCodeAt(i) !== pattern.charCodeAt(k)) k = table[k - 1] as number;
    if (pattern.charCodeAt(i) === pattern.charCodeAt(k)) k++;
    table[i] = k;
  }
  return table;
}

/** A secret to mask, with its search table built on first use. */
interface Secret {
  readonly text: string;
  table?: Int32Array;
}

/**
 * Marks, in `marks`, every occurrence of the secret that does not sit inside a longer run of
 * digits ("737" is a CVV in "cvv 737", not in "order 17371"). Returns the marks (allocated on the
 * first occurrence).
 */
function markSecret(text: string, secret: Secret, marks: Uint8Array | undefined) {
  const pattern = secret.text;
  const size = pattern.length;
  if (size > text.length) return marks;
  secret.table ??= failureTable(pattern);
  const table = secret.table;
  let k = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    while (k > 0 && code !== pattern.charCodeAt(k)) k = table[k - 1] as number;
    if (code === pattern.charCodeAt(k)) k++;
    if (k === size) {
      const from = i - size + 1;
      if (!isDigit(text.charCodeAt(from - 1)) && !isDigit(text.charCodeAt(i + 1))) {
        marks ??= new Uint8Array(text.length);
        marks.fill(1, from, i + 1);
      }
      k = table[k - 1] as number;
    }
  }
  return marks;
}

/**
 * A card number as a secret: 12 to 19 digits, up to three characters that are neither digits nor
 * letters between them (spaces, no-break spaces, dashes, dots, slashes: however it was sent).
 */
const CARD_LIKE = /^\d(?:[^\d\p{L}]{0,3}\d){11,18}$/u;

/**
 * Marks every run of digits (single spaces, dashes or `+` between them) whose digits hold one of
 * the card numbers `cards` (digits only): the card quoted with other separators than it was sent.
 * The redactor's form of {@link maskCardDigits}: the run becomes `***`, as every secret it masks.
 */
function markCardDigits(
  text: string,
  cards: CardSearch,
  marks: Uint8Array | undefined,
): Uint8Array | undefined {
  let out = marks;
  forEachDigitRun(text, MIN_CARD_DIGITS, (start, end) => {
    if (cards.leastIndexIn(onlyDigits(text.slice(start, end)), Number.POSITIVE_INFINITY) >= 0) {
      out ??= new Uint8Array(text.length);
      out.fill(1, start, end);
    }
  });
  return out;
}

/** The search of a request's card numbers (digits only) in the digits of a text. */
type CardSearch = Pick<PatternSearch, "leastIndexIn" | "longestEndingIn">;

/**
 * {@link patternSearch} of card numbers; for a few (a request's own card, in its copies), the
 * string's own search of each, cheaper than building an automaton.
 */
function cardSearch(cards: readonly string[], indexed: boolean): CardSearch {
  if (cards.length > FEW_SECRETS) return patternSearch(cards, { indexed });
  return {
    leastIndexIn(digits) {
      for (let index = 0; index < cards.length; index++)
        if (digits.includes(cards[index] as string)) return index;
      return -1;
    },
    longestEndingIn(digits) {
      let lengths: Int32Array | undefined;
      for (const card of cards) {
        for (let at = digits.indexOf(card); at >= 0; at = digits.indexOf(card, at + 1)) {
          lengths ??= new Int32Array(digits.length);
          const end = at + card.length - 1;
          if ((lengths[end] as number) < card.length) lengths[end] = card.length;
        }
      }
      return lengths;
    },
  };
}

/**
 * Up to this many secrets (a request's card number and CVV, a few digit runs), each is searched on
 * its own: building an automaton costs more than the few searches it would save on a short text.
 */
const FEW_SECRETS = 8;

/**
 * Whether the digits of a text, read in order whatever stands between them, hold one of the cards:
 * as written, or with its escapes read (`%20` is no digits, `%34` is a 4), so that a quote of an
 * encoded field (`4111%201111%201111%201111`, `4111%2b1111…`) is found too. The escapes read are
 * percent-escapes (encoded twice too: `%2520`), HTML character references (`&#160;`, `&#x34;`)
 * and JSON escapes written as text (`\u00a0`).
 */
function holdsCard(text: string, cards: CardSearch): boolean {
  return heldIndex(text, cards, Number.POSITIVE_INFINITY) >= 0;
}

/**
 * The least index of a card a text holds as {@link holdsCard} reads it (its digits, then the
 * digits of its escapes read), -1 if none; `below` as in {@link PatternSearch.leastIndexIn}.
 */
function heldIndex(text: string, cards: CardSearch, below: number): number {
  const digits = onlyDigits(text);
  const found = cards.leastIndexIn(digits, below);
  if (found >= 0 && found < below) return found;
  // Reading the escapes never adds digits (`%34` and `&#52;` are one digit written with two), so a
  // text with fewer digits than a card number holds none, escapes or not.
  if (digits.length < MIN_CARD_DIGITS) return found;
  if (!text.includes("%") && !text.includes("&#") && !text.includes("\\u")) return found;
  const decoded = cards.leastIndexIn(onlyDigits(readEscapes(text)), below);
  return found < 0 || (decoded >= 0 && decoded < found) ? decoded : found;
}

/**
 * Whether a card the text holds (its digits, and the digits of its escapes read: see
 * {@link heldIndex}) would go out with more than its last four digits readable: `kept` is the
 * text as masked, of the same length (a digit masked is no digit there), and `marks` what is
 * masked besides. Every occurrence counts, the longest ending at each digit standing for the
 * others ending there (it holds them). Linear: one search per reading, and prefix sums of the
 * digits kept (review second-card-2 and -3: a number held across runs, or glued to a run masked
 * as another number, kept the digits outside them).
 */
function exposesCard(
  text: string,
  cards: CardSearch,
  kept: string,
  marks: Uint8Array | undefined,
): boolean {
  const goesOut = (at: number): boolean =>
    isDigit(kept.charCodeAt(at)) && (marks === undefined || marks[at] !== 1);
  const only = onlyDigits(text);
  if (only.length < MIN_CARD_DIGITS) return false;
  const lengths = cards.longestEndingIn(only);
  if (lengths !== undefined) {
    // shown[k]: how many of the first k digits go out.
    const shown = new Int32Array(only.length + 1);
    for (let at = 0, k = 0; at < text.length; at++) {
      if (!isDigit(text.charCodeAt(at))) continue;
      shown[k + 1] = (shown[k] as number) + (goesOut(at) ? 1 : 0);
      k++;
    }
    if (exposedIn(lengths, shown)) return true;
  }
  if (!text.includes("%") && !text.includes("&#") && !text.includes("\\u")) return false;
  const { read, low, high } = readEscapesTraced(text);
  const readOnly = onlyDigits(read);
  const readLengths = cards.longestEndingIn(readOnly);
  if (readLengths === undefined) return false;
  // hidden[k]: how many of the text's first k characters are digits that do not go out.
  const hidden = new Int32Array(text.length + 1);
  for (let at = 0; at < text.length; at++)
    hidden[at + 1] =
      (hidden[at] as number) + (isDigit(text.charCodeAt(at)) && !goesOut(at) ? 1 : 0);
  // A digit read goes out when the characters it is read from all do (an escape's own digits
  // masked: `\\u00**` spells nothing).
  const shown = new Int32Array(readOnly.length + 1);
  for (let at = 0, k = 0; at < read.length; at++) {
    if (!isDigit(read.charCodeAt(at))) continue;
    const out = hidden[(high[at] as number) + 1] === hidden[low[at] as number];
    shown[k + 1] = (shown[k] as number) + (out ? 1 : 0);
    k++;
  }
  return exposedIn(readLengths, shown);
}

/** The digits of a card number that may go out: its last four (as a masked run keeps them). */
const KEPT_DIGITS = 4;

/**
 * {@link exposesCard} for one reading of the text: `lengths` the longest card ending at each of
 * its digits, `shown` the prefix sums of the digits that go out.
 */
function exposedIn(lengths: Int32Array, shown: Int32Array): boolean {
  for (let end = 0; end < lengths.length; end++) {
    const size = lengths[end] as number;
    if (size === 0) continue;
    // The card's digits but its last four: none may go out.
    if ((shown[end + 1 - KEPT_DIGITS] as number) > (shown[end + 1 - size] as number)) return true;
  }
  return false;
}

/**
 * {@link readEscapes}, with where each character of the text read comes from: the first and last
 * index, in the text, of what it is read from (one character copied as written, or the whole of
 * the escape that spells it, escapes encoded twice included).
 */
function readEscapesTraced(text: string): { read: string; low: Int32Array; high: Int32Array } {
  let read = text;
  let low = new Int32Array(text.length);
  for (let at = 0; at < text.length; at++) low[at] = at;
  let high = Int32Array.from(low);
  const apply = (pattern: RegExp, replace: (found: RegExpExecArray) => string): void => {
    const pieces: string[] = [];
    const lows: number[] = [];
    const highs: number[] = [];
    const copy = (from: number, to: number): void => {
      pieces.push(read.slice(from, to));
      for (let at = from; at < to; at++) {
        lows.push(low[at] as number);
        highs.push(high[at] as number);
      }
    };
    let copied = 0;
    for (let found = pattern.exec(read); found !== null; found = pattern.exec(read)) {
      copy(copied, found.index);
      const end = found.index + found[0].length;
      const written = replace(found);
      pieces.push(written);
      // An escape's characters are in order: its first one's low, its last one's high.
      for (let k = 0; k < written.length; k++) {
        lows.push(low[found.index] as number);
        highs.push(high[end - 1] as number);
      }
      copied = end;
    }
    copy(copied, read.length);
    read = pieces.join("");
    low = Int32Array.from(lows);
    high = Int32Array.from(highs);
  };
  for (let round = 0; round < 3 && /%25/i.test(read); round++) apply(/%25/gi, () => "%");
  apply(/%C2%A0|&nbsp;/gi, () => "\u00a0");
  apply(new RegExp(ESCAPE.source, "g"), (found) =>
    escapedCharacter(found[0], found[1], found[2], found[3], found[4]),
  );
  return { read, low, high };
}

/** A percent-escape, an HTML character reference (decimal or hex), or a JSON `\uXXXX` escape. */
const ESCAPE = /%([0-9A-Fa-f]{2})|&#([0-9]{1,7});|&#[xX]([0-9A-Fa-f]{1,6});|\\u([0-9A-Fa-f]{4})/g;

/**
 * The text with its escapes read, for finding a card number sent encoded: percent-escapes
 * (encoded twice too: `%2520`, whose `%25`s are read first, a few rounds at most), HTML character
 * references (`&#160;`, `&#x34;`, `&nbsp;`) and JSON escapes written as text (`\u00a0`). A
 * reference beyond Unicode reads as nothing, so reading never adds digits (`%34` and `&#52;` are
 * one digit written with two). Also the testing kit's, to find a card an answer sends back.
 */
export function readEscapes(text: string): string {
  if (!text.includes("%") && !text.includes("&") && !text.includes("\\")) return text;
  let read = text;
  for (let round = 0; round < 3 && /%25/i.test(read); round++) read = read.replace(/%25/gi, "%");
  read = read.replace(/%C2%A0|&nbsp;/gi, "\u00a0");
  return read.replace(ESCAPE, escapedCharacter);
}

/** An escape as the character it encodes, or as nothing past Unicode's last code point. */
function escapedCharacter(
  _escape: string,
  percent: string | undefined,
  decimal: string | undefined,
  hex: string | undefined,
  json: string | undefined,
): string {
  const code =
    decimal !== undefined
      ? Number.parseInt(decimal, 10)
      : Number.parseInt(percent ?? hex ?? json ?? "", 16);
  return code <= 0x10ffff ? String.fromCodePoint(code) : "";
}

/** Replaces every marked stretch of the text with `***` (one per stretch). */
export function replaceMarked(text: string, marks: Uint8Array): string {
  const pieces: string[] = [];
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    if (marks[i] !== 1) {
      i++;
      continue;
    }
    pieces.push(text.slice(copied, i), SECRET_MASK);
    while (i < text.length && marks[i] === 1) i++;
    copied = i;
  }
  pieces.push(text.slice(copied));
  return pieces.join("");
}

/**
 * The text with every standalone occurrence of one secret (not inside a longer run of digits)
 * replaced by `***`, and nothing else changed: the text itself when it does not quote it.
 */
export function maskSecret(text: string, secret: string): string {
  // A quote in another script's digits (`٧٣٧` for `737`) is the secret too (review i18n-1).
  const folded = foldDigits(text);
  const ascii = folded?.text ?? text;
  const marks = markSecret(ascii, { text: foldText(secret) }, undefined);
  if (marks === undefined) return text;
  const masked = replaceMarked(ascii, marks);
  return folded === undefined ? masked : unfold(text, folded, masked, marks);
}

/**
 * The characters JSON encoders write as `\uXXXX` by default, one set per family: outside ASCII
 * (Python, PHP); `& < >` (Go, Rails); `= & < > '` (Java's Gson); `& < > ' "` and outside ASCII
 * (Symfony's JsonResponse: PHP's JSON_HEX_* flags); `+ & < > ' " \`` and outside ASCII (.NET's
 * System.Text.Json). Not the `u` flag: a character outside the BMP is tested by its first code
 * unit, so the sets with "outside ASCII" escape it, as encoders do, as its two code units.
 */
const ENCODER_ESCAPES: readonly RegExp[] = [
  /[\u007f-\uffff]/,
  /[&<>\u2028\u2029]/,
  /[=&<>'\u2028\u2029]/,
  /[&<>'"\u007f-\uffff]/,
  /[+&<>'"`\u007f-\uffff]/,
];

/**
 * The spellings of a secret a text may quote it in: as sent, and as JSON encoders write it
 * inside a string: a quote or backslash escaped, the characters of `ENCODER_ESCAPES` as `\uXXXX`
 * (hex digits in either case, for ASCII and for the rest apart: PHP writes `\u003C` but
 * `\u00e4`), and each of those with `/` as `\/` (PHP).
 */
export function jsonSpellings(secret: string): string[] {
  const found = new Set([secret]);
  const texts = [JSON.stringify(secret).slice(1, -1)];
  for (const set of ENCODER_ESCAPES) {
    for (const upperAscii of [false, true]) {
      for (const upperOther of [false, true]) {
        texts.push(escapedWith(secret, set, upperAscii, upperOther));
      }
    }
  }
  for (const text of texts) {
    found.add(text);
    found.add(text.replace(/\//g, "\\/"));
  }
  return [...found];
}

/**
 * `secret` as a JSON string's content, the characters in `set` written as `\uXXXX` (a character
 * outside the BMP as its two code units, as encoders write it), the hex digits in upper case for
 * ASCII characters when `upperAscii`, for the others when `upperOther`.
 */
function escapedWith(
  secret: string,
  set: RegExp,
  upperAscii: boolean,
  upperOther: boolean,
): string {
  let text = "";
  for (const char of secret) {
    if (!set.test(char)) {
      text += JSON.stringify(char).slice(1, -1);
      continue;
    }
    const upper = char.charCodeAt(0) < 0x80 ? upperAscii : upperOther;
    for (let i = 0; i < char.length; i += 1) {
      const hex = char.charCodeAt(i).toString(16).padStart(4, "0");
      text += `\\u${upper ? hex.toUpperCase() : hex}`;
    }
  }
  return text;
}

/** `%XX` for a character of ASCII. */
function percentEncoded(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
}

function lowerCase(text: string): string {
  return text.toLowerCase();
}

/** Characters past which a secret gets only its plain, URL-encoded and JSON-escaped spellings. */
const LONG_SECRET = 256;

/**
 * What URL encoders escape beyond `encodeURIComponent` (which keeps `! ' ( ) * ~`): RFC 3986's
 * strict encoders (PHP's rawurlencode) all but `~`; a WHATWG form encoder (URLSearchParams, Java's
 * URLEncoder) all but `*`; PHP's urlencode all; .NET's HttpUtility.UrlEncode only `'` and `~`.
 */
const URL_ESCAPES: readonly RegExp[] = [/[!'()*]/g, /[!'()~]/g, /[!'()*~]/g, /['~]/g];

/**
 * The spellings a text quoting these secrets may hold each in, for a redactor to mask: as it is;
 * URL-encoded as `encodeURIComponent` and the encoders of `URL_ESCAPES` write it, each with hex
 * digits in either case (the service writes lower case, wire-facts §4) and with `+` or `%20` for a
 * space; and JSON-escaped as the encoders of `ENCODER_ESCAPES` write it, with `/` as `\/` too
 * (`jsonSpellings`, shared with the testing kit). One expansion for every credential of the
 * shopper's or the caller's: the cart token a `cartToken.verify` error quotes, and the session
 * values (`AuthToken`, `SessionId`) and gift-card security codes the engine masks.
 */
export function secretSpellings(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    // A secret longer than any token or PIN (a field of kilobytes): its text, URL-encoded and
    // JSON-escaped, once each; every spelling of every such field made a gift-card call block the
    // event loop for seconds (review last4-1).
    const long = secret.length > LONG_SECRET;
    for (const text of long
      ? [secret, JSON.stringify(secret).slice(1, -1)]
      : jsonSpellings(secret)) {
      forms.add(text);
    }
    let encoded: string;
    try {
      encoded = encodeURIComponent(secret);
    } catch {
      // A lone surrogate: no client can URL-encode it, so no text quotes it so.
      continue;
    }
    if (long) {
      forms.add(encoded);
      forms.add(encoded.replace(/%20/g, "+"));
      continue;
    }
    for (const each of [
      encoded,
      ...URL_ESCAPES.map((set) => encoded.replace(set, percentEncoded)),
    ]) {
      for (const text of [each, each.replace(/%[0-9A-F]{2}/g, lowerCase)]) {
        forms.add(text);
        forms.add(text.replace(/%20/g, "+"));
      }
    }
  }
  return [...forms];
}

/**
 * A redactor for one request: card numbers, and the given secrets (this request's card numbers
 * and CVVs, trimmed; those under three characters are left out) wherever quoted. A text that
 * still holds one of this request's card numbers in its digits (quoted with other separators)
 * has every digit masked.
 *
 * `scan` says which other card numbers are masked: `"wide"` (reports, logs, refusals) every
 * spelling {@link redactCardNumbers} finds; `"data"` (a success answer's texts, a stored result:
 * the merchant's data, sent to the service or back to the caller) only those joined by one space,
 * dash or `+`, so that a dotted date and time or tracking number passing the Luhn check is kept.
 */
export function createRedactor(
  secrets: readonly unknown[] = [],
  scan: RedactorScan = "wide",
): Redactor {
  const list: Secret[] = [];
  const seen = new Set<string>();
  // A card number is found by its digits, whatever separators the secret or the quote has. A set:
  // a payment object full of digit runs must not cost a search of the list per run.
  const digitSet = new Set<string>();
  for (const value of secrets) {
    if (typeof value !== "string") continue;
    // Searched for in texts whose digits of any script are read as ASCII (see `fold.ts`).
    const text = foldText(value.trim());
    if (text.length < MIN_SECRET_LENGTH || seen.has(text)) continue;
    seen.add(text);
    list.push({ text });
    if (CARD_LIKE.test(text)) digitSet.add(onlyDigits(text));
  }
  const cardDigits = [...digitSet];
  const wide = scan === "wide";
  // Built on the first text: one search for all the secrets, one for the card numbers' digits.
  let secretSearch: PatternSearch | undefined;
  let cards: CardSearch | undefined;
  return (value) => {
    try {
      const written = textOf(value);
      // Digits of any script, other spaces and dashes, read as ASCII (review i18n-1): the scans
      // below run on the folded text; what they keep is put back as written.
      const folded = foldDigits(written);
      const input = folded?.text ?? written;
      const text = redactClassicCardNumbers(input);
      let marks: Uint8Array | undefined;
      if (list.length > FEW_SECRETS) {
        secretSearch ??= patternSearch(
          list.map((secret) => secret.text),
          { indexed: false },
        );
        const starts = secretSearch.startsOf(text);
        if (starts !== undefined) {
          marks = new Uint8Array(text.length);
          markStarts(starts, marks);
        }
      } else for (const secret of list) marks = markSecret(text, secret, marks);
      if (cardDigits.length > 0) {
        cards ??= cardSearch(cardDigits, false);
        marks = markCardDigits(text, cards, marks);
      }
      const out = marks === undefined ? text : replaceMarked(text, marks);
      // A card number quoted with other separators (`4111.1111.1111.1111`, `4111%201111…`), or
      // one the masking above leaves more of than its last four digits (glued to another number's
      // run, masked as that number: review second-card-3), in the text as it came in: no digit
      // goes out, as in `maskCardDigits`. The Luhn masking keeps the text's length: a digit of
      // the text goes out if it is still a digit there and no secret covers it.
      let result: string;
      if (cards !== undefined && (holdsCard(out, cards) || exposesCard(input, cards, text, marks)))
        result = out.replace(/[0-9]/g, "*");
      // Other card numbers with other gaps than one space, dash or `+` (`5555.5555.5555.4444`),
      // masked last: this request's own, in any spelling, is masked above.
      else result = wide ? redactAsciiCardNumbers(out) : out;
      if (folded === undefined) return result;
      return result === input ? written : unfold(written, folded, result, marks);
    } catch {
      // Out of memory for a giant text, or anything else: nothing of the text goes out.
      return UNREADABLE;
    }
  };
}

/** Which other card numbers a request's redactor masks (see {@link createRedactor}). */
export type RedactorScan = "wide" | "data";

/**
 * {@link createRedactor} of the secrets `collect` gives, built when it first redacts something:
 * most requests never need it. `collect` must answer from values it copied when it was made.
 */
export function lazyRedactor(
  collect: () => readonly unknown[],
  scan: RedactorScan = "wide",
): Redactor {
  let redact: Redactor | undefined;
  return (value) => {
    if (redact === undefined) {
      try {
        redact = createRedactor(collect(), scan);
      } catch {
        // Secrets that cannot be told: no text may go out, now or later.
        redact = () => UNREADABLE;
      }
    }
    return redact(value);
  };
}

/** The redactor of a request without card data (or before its body is read). */
export const redactCards: Redactor = createRedactor();

/** {@link redactCards} for the merchant's data (see {@link createRedactor}'s `"data"` scan). */
export const redactCardsInData: Redactor = createRedactor([], "data");
