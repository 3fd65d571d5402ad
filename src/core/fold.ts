/**
 * Digits and separators of any script, read as ASCII for the card-number scans (review i18n-1).
 *
 * The scans of `redact.ts` and `card.ts` read ASCII `0-9` and a few ASCII separators. A card
 * number quoted in another script's decimal digits (Arabic-Indic `٤١١١…`, Persian `۴۱۱۱…`,
 * full-width `４１１１…`, Devanagari, any `\p{Nd}`), or with its groups joined by an ideographic
 * space (U+3000), an en space or a full-width hyphen, is the same number: {@link foldDigits} gives
 * the text with every such character written as its ASCII counterpart, the scans run on that, and
 * {@link unfold} puts back, of what they kept, the characters as written (the last four digits of
 * a masked number in their script, the text around it untouched).
 *
 * A text of ASCII only (nearly every text) costs one regular-expression test and is scanned as
 * it is; a text with other characters but none to fold, one more.
 */

/** A character outside ASCII: the only texts that may need folding. */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * What {@link foldDigits} rewrites: a decimal digit outside ASCII; a space outside ASCII other
 * than those the scans read already (U+00A0, U+2007, U+2009, U+202F), a hyphen or dash, or the
 * full-width form of `+ - . / _`.
 */
const SEPARATORS =
  "\u1680\u2000-\u2006\u2008\u200a\u205f\u3000\u2010-\u2014\u2212\ufe63\uff0b\uff0d\uff0e\uff0f\uff3f";
const FOLDABLE = new RegExp(`[^\\P{Nd}0-9]|[${SEPARATORS}]`, "u");
/**
 * Whether a text needs folding: a digit outside ASCII, or one of those separators next to an
 * ASCII digit (a separator elsewhere, an em dash between words, joins no digits: the text is
 * scanned as it is, at no extra cost).
 */
const NEEDS_FOLDING = new RegExp(`[^\\P{Nd}0-9]|[0-9][${SEPARATORS}]|[${SEPARATORS}][0-9]`, "u");

const IS_DIGIT = /^\p{Nd}$/u;

/** Each non-ASCII decimal digit's value, learnt on first sight. */
const digitValues = new Map<number, number>();

/**
 * The value of a decimal digit (a code point of \p{Nd}). Unicode writes them in runs of ten, 0 to
 * 9 in order (a stability guarantee), runs of several scripts back to back (the mathematical
 * digits): the value is the distance to the first of its run, modulo ten.
 */
function digitValue(code: number): number {
  const known = digitValues.get(code);
  if (known !== undefined) return known;
  let first = code;
  while (first > 0 && IS_DIGIT.test(String.fromCodePoint(first - 1))) first--;
  const value = (code - first) % 10;
  digitValues.set(code, value);
  return value;
}

/** The ASCII character a foldable code point is read as (see {@link FOLDABLE}). */
function folded(code: number): string {
  if (code === 0x3000) return " "; // ideographic space: a space, as NFKC reads it
  if (code === 0x1680 || code === 0x205f || (code >= 0x2000 && code <= 0x200a)) return "\u2009";
  if ((code >= 0x2010 && code <= 0x2014) || code === 0x2212 || code === 0xfe63 || code === 0xff0d)
    return "-";
  if (code === 0xff0b) return "+";
  if (code === 0xff0e) return ".";
  if (code === 0xff0f) return "/";
  if (code === 0xff3f) return "_";
  return String(digitValue(code));
}

/** A text folded: `text`, and where each of its characters starts in the text as written. */
export interface Folded {
  readonly text: string;
  /** `origin[k]`: the index, in the text as written, of `text[k]`; `origin[text.length]` its length. */
  readonly origin: Int32Array;
}

/**
 * The text with its digits of other scripts as ASCII digits and its other spaces and dashes as
 * the separators the scans know (see {@link FOLDABLE}); `undefined` when it has none (the text is
 * scanned as it is). A digit outside the BMP (two code units) becomes one character.
 */
export function foldDigits(text: string): Folded | undefined {
  if (!mayFold(text)) return undefined;
  const pieces: string[] = [];
  const origin = new Int32Array(text.length + 1);
  let size = 0;
  let copied = 0;
  for (let at = 0; at < text.length; ) {
    const code = text.codePointAt(at) as number;
    const width = code > 0xffff ? 2 : 1;
    if (code < 0x80 || !FOLDABLE.test(String.fromCodePoint(code))) {
      for (let k = 0; k < width; k++) origin[size++] = at + k;
      at += width;
      continue;
    }
    pieces.push(text.slice(copied, at), folded(code));
    origin[size++] = at;
    at += width;
    copied = at;
  }
  pieces.push(text.slice(copied));
  origin[size] = text.length;
  return { text: pieces.join(""), origin: origin.subarray(0, size + 1) };
}

/** Whether {@link foldDigits} would change the text (one regular-expression test for ASCII). */
export function mayFold(text: string): boolean {
  return NON_ASCII.test(text) && NEEDS_FOLDING.test(text);
}

/** A text folded as {@link foldDigits} folds it (a secret, a card number). */
export function foldText(text: string): string {
  return foldDigits(text)?.text ?? text;
}

/** Marks made on the text as written, moved onto the folded text (a character marked if any of what it is folded from is). */
export function foldMarks(marks: Uint8Array, folded: Folded): Uint8Array {
  const { text, origin } = folded;
  const out = new Uint8Array(text.length);
  for (let k = 0; k < text.length; k++) {
    for (let at = origin[k] as number; at < (origin[k + 1] as number); at++) {
      if (marks[at] === 1) out[k] = 1;
    }
  }
  return out;
}

/** The mask a marked stretch becomes (see `replaceMarked`). */
const MARK_LENGTH = 3;

/**
 * The text as written, masked as `result` masks the folded text: `result` is `folded.text` with
 * some characters replaced one for one (a digit by `*`), and, where `marks` says so, each marked
 * stretch by a mask of three characters. A character the scans kept is put back as written.
 */
export function unfold(
  written: string,
  folded: Folded,
  result: string,
  marks?: Uint8Array | undefined,
): string {
  const { text, origin } = folded;
  const pieces: string[] = [];
  let k = 0;
  for (let i = 0; i < text.length; ) {
    if (marks !== undefined && marks[i] === 1) {
      pieces.push(result.slice(k, k + MARK_LENGTH));
      k += MARK_LENGTH;
      while (i < text.length && marks[i] === 1) i++;
      continue;
    }
    const char = result.charAt(k);
    pieces.push(
      char === text.charAt(i) ? written.slice(origin[i] as number, origin[i + 1] as number) : char,
    );
    i++;
    k++;
  }
  return pieces.join("");
}

/**
 * A text function applied to the folded text, its result unfolded: `scan` must keep the text's
 * length, replacing characters one for one.
 */
export function foldedScan(text: string, scan: (text: string) => string): string {
  const folded = foldDigits(text);
  if (folded === undefined) return scan(text);
  const result = scan(folded.text);
  return result === folded.text ? text : unfold(text, folded, result);
}
