/**
 * Integers beyond 2^53 that `JSON.parse` has already rounded: where an id may arrive as a JSON
 * number (a gift card's `CardId`, an IPv6 range bound), the exact digits are taken back from the
 * JSON text. Only on the rare path: the caller first checks, on the parsed value, that such a
 * number is there (`isUnsafeNumber`, `unsafeNumberPaths`); the text is scanned then, once per
 * field, linearly (strings skipped as they are, escapes included), and nothing is allocated
 * before. All the paths are found in one pass over the text (`numberLiteralsAt`).
 */

/** A step of a path: a member's name, an array's index. */
export type PathStep = string | number;

/** A step of a field's description (`exactIdFields`): a member's name, or `EACH` entry of a list. */
export const EACH: unique symbol = Symbol("each");
export type FieldStep = string | typeof EACH;

/**
 * A JSON number that no longer holds the integer sent: beyond ±(2^53 − 1), where doubles stop
 * holding every integer (2^53 itself is also `9007199254740993` rounded). Every double there is an
 * integer, so a fraction sent is caught as well.
 */
export function isUnsafeNumber(value: unknown): value is number {
  return (
    typeof value === "number" &&
    (value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER)
  );
}

/**
 * The paths (list indexes filled in) of the fields described by `fields` that hold an unsafe
 * number in `root`, or undefined when none does (the common case: no allocation).
 */
export function unsafeNumberPaths(
  root: unknown,
  fields: readonly (readonly FieldStep[])[],
): PathStep[][] | undefined {
  let found: PathStep[][] | undefined;
  for (const field of fields) {
    if (!holdsUnsafe(root, field, 0)) continue;
    found ??= [];
    collect(root, field, 0, [], found);
  }
  return found;
}

function holdsUnsafe(value: unknown, field: readonly FieldStep[], at: number): boolean {
  if (at === field.length) return isUnsafeNumber(value);
  if (value === null || typeof value !== "object") return false;
  const step = field[at] as FieldStep;
  if (step === EACH) {
    if (!Array.isArray(value)) return false;
    for (const item of value) if (holdsUnsafe(item, field, at + 1)) return true;
    return false;
  }
  return (
    Object.hasOwn(value, step) &&
    holdsUnsafe((value as Record<string, unknown>)[step], field, at + 1)
  );
}

function collect(
  value: unknown,
  field: readonly FieldStep[],
  at: number,
  trail: PathStep[],
  found: PathStep[][],
): void {
  if (at === field.length) {
    if (isUnsafeNumber(value)) found.push([...trail]);
    return;
  }
  if (value === null || typeof value !== "object") return;
  const step = field[at] as FieldStep;
  if (step === EACH) {
    if (!Array.isArray(value)) return;
    for (let index = 0; index < value.length; index++) {
      trail.push(index);
      collect(value[index], field, at + 1, trail, found);
      trail.pop();
    }
    return;
  }
  if (!Object.hasOwn(value, step)) return;
  trail.push(step);
  collect((value as Record<string, unknown>)[step], field, at + 1, trail, found);
  trail.pop();
}

/** A path as the library's 400s name one (`GiftCardsData.0.CardId`). */
export function pathText(path: readonly PathStep[]): string {
  return path.length > 0 ? path.map(String).join(".") : "(root)";
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The source text of the number at `path` in the JSON `text` (which `JSON.parse` accepted), as
 * `JSON.parse` reads it: a member repeated in an object is its last one. Undefined when the path
 * leads to no number. Linear in the text; no recursion.
 */
export function numberLiteralAt(text: string, path: readonly PathStep[]): string | undefined {
  return numberLiteralsAt(text, [path])[0];
}

/** A node of the wanted paths' trie: its steps onward, and the paths that end here. */
interface Wanted {
  readonly next: Map<PathStep, Wanted>;
  readonly ends: number[];
}

/**
 * The source texts of the numbers at every one of `paths` (aligned with them; undefined where a
 * path leads to no number), in one pass over `text` (SECOND-ENC-1): the paths share their common
 * prefixes (a trie), each object's members and each list's entries are walked once, recording
 * where the wanted ones start, and only those are entered. Each character is read at most once
 * per level of the deepest path (a few: the callbacks' descriptions), so the cost is linear in
 * the text whatever the number of paths (N ids in a list used to cost N walks of the list).
 * The recursion's depth is the paths' length, not the text's.
 */
export function numberLiteralsAt(
  text: string,
  paths: readonly (readonly PathStep[])[],
): (string | undefined)[] {
  const root: Wanted = { next: new Map(), ends: [] };
  paths.forEach((path, index) => {
    let node = root;
    for (const step of path) {
      let child = node.next.get(step);
      if (child === undefined) {
        child = { next: new Map(), ends: [] };
        node.next.set(step, child);
      }
      node = child;
    }
    node.ends.push(index);
  });
  const found: (string | undefined)[] = new Array(paths.length).fill(undefined);
  resolve(text, skipSpace(text, 0), root, found);
  return found;
}

function resolve(text: string, at: number, node: Wanted, found: (string | undefined)[]): void {
  if (node.ends.length > 0) {
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (match !== null) for (const index of node.ends) found[index] = match[0];
  }
  if (node.next.size === 0) return;
  const open = text.charCodeAt(at);
  // Where each wanted step's value starts (an object's last member of that name).
  const starts: [number, Wanted][] = [];
  if (open === 0x5b /* [ */) {
    let i = skipSpace(text, at + 1);
    if (text.charCodeAt(i) === 0x5d /* ] */) return;
    for (let index = 0; ; index++) {
      const child = node.next.get(index);
      if (child !== undefined) starts.push([i, child]);
      i = skipSpace(text, skipValue(text, i));
      if (text.charCodeAt(i) !== 0x2c /* , */) break;
      i = skipSpace(text, i + 1);
    }
  } else if (open === 0x7b /* { */) {
    const chosen = new Map<Wanted, number>();
    let i = skipSpace(text, at + 1);
    while (text.charCodeAt(i) === 0x22 /* " */) {
      const keyEnd = skipString(text, i);
      const child = wantedKey(text, i, keyEnd, node.next);
      i = skipSpace(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a /* : */) break;
      i = skipSpace(text, i + 1);
      if (child !== undefined) chosen.set(child, i);
      i = skipSpace(text, skipValue(text, i));
      if (text.charCodeAt(i) !== 0x2c /* , */) break;
      i = skipSpace(text, i + 1);
    }
    for (const [child, start] of chosen) starts.push([start, child]);
  }
  for (const [start, child] of starts) resolve(text, start, child, found);
}

/** The child of `next` named by the JSON string `text[start, end)` (quotes included), if any. */
function wantedKey(
  text: string,
  start: number,
  end: number,
  next: Map<PathStep, Wanted>,
): Wanted | undefined {
  const inner = text.slice(start + 1, end - 1);
  if (!inner.includes("\\")) return next.get(inner);
  try {
    const name: unknown = JSON.parse(text.slice(start, end));
    return typeof name === "string" ? next.get(name) : undefined;
  } catch {
    return undefined;
  }
}

function skipSpace(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/** The index after the string that opens at `at`. */
function skipString(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) return i;
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
}

/** The index after the value that starts at `at` (a string, an object, a list, a literal). */
function skipValue(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === 0x22) return skipString(text, at);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    let i = at;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i = skipString(text, i);
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
      i++;
    }
    return i;
  }
  let i = at;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (
      c === 0x2c ||
      c === 0x7d ||
      c === 0x5d ||
      c === 0x20 ||
      c === 0x0a ||
      c === 0x0d ||
      c === 0x09
    )
      return i;
    i++;
  }
  return i;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The text `parseJson` parsed from these bytes (a BOM dropped), or undefined if not UTF-8. */
export function jsonText(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The most digits an exponent form is expanded to (`1e400` is not an id; nor a string that long). */
export const MAX_EXPANDED_DIGITS = 400;

const LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * The decimal digits of the integer a JSON number literal writes (SECOND-ENC-2): `-?\d+` as it is
 * (a leading zero is not JSON), an exponent or fraction form expanded exactly from its own digits,
 * no floating point (`1.2e20` → `"120000000000000000000"`, `4.25E+37`, `12.0`). Undefined when the
 * literal is not an integer (`9007199254740993.5`: the double rounded it to one, the text is not)
 * or would take more than `MAX_EXPANDED_DIGITS` digits (`1e400`, `1e999999`).
 */
export function integerDigits(literal: string): string | undefined {
  const match = LITERAL.exec(literal);
  if (match === null) return undefined;
  const [, sign, whole, fraction = "", exponentText] = match as unknown as [
    string,
    string,
    string,
    string | undefined,
    string | undefined,
  ];
  if (fraction === "" && exponentText === undefined) return literal;
  // An exponent of more digits than any expansion allowed is refused before it is converted.
  const exponentDigits = exponentText === undefined ? "0" : exponentText.replace(/^[+-]/, "");
  if (exponentDigits.replace(/^0+/, "").length > 6) {
    return /[1-9]/.test(whole + fraction) ? undefined : "0";
  }
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  let digits = (whole + fraction).replace(/^0+/, "");
  if (digits === "") return "0";
  let shift = exponent - fraction.length;
  // Trailing zeros of the digits move into the shift (`1.500e3`).
  const trimmed = digits.replace(/0+$/, "");
  shift += digits.length - trimmed.length;
  digits = trimmed;
  if (shift < 0) return undefined; // a fraction remains
  if (digits.length + shift > MAX_EXPANDED_DIGITS) return undefined;
  return `${sign}${digits}${"0".repeat(shift)}`;
}

/**
 * Gives each unsafe number of `root` at `paths` its exact digits from `text` (a string: the id's
 * type allows text), the literals of all the paths found in one pass (`numberLiteralsAt`). A
 * literal in exponent or fraction form is handed over expanded to its digits (`integerDigits`),
 * so the text is always `-?\d+` (`BigInt(text)` holds). Returns the paths whose number could not
 * be given so: not found in the text, or not an integer of at most `MAX_EXPANDED_DIGITS` digits
 * as written (none: `[]`).
 */
export function restoreExactNumbers(
  root: unknown,
  paths: readonly (readonly PathStep[])[],
  text: string | undefined,
): PathStep[][] {
  const lost: PathStep[][] = [];
  const literals = text === undefined ? undefined : numberLiteralsAt(text, paths);
  paths.forEach((path, index) => {
    const literal = literals?.[index];
    const parent = valueAt(root, path.slice(0, -1));
    const last = path.at(-1) as PathStep;
    const digits = literal === undefined ? undefined : integerDigits(literal);
    if (
      literal === undefined ||
      digits === undefined ||
      parent === null ||
      typeof parent !== "object" ||
      // The literal must be the number the value holds (the text is the one parsed).
      Number(literal) !== (parent as Record<PathStep, unknown>)[last]
    ) {
      lost.push([...path]);
      return;
    }
    try {
      Object.defineProperty(parent, last, {
        value: digits,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } catch {
      lost.push([...path]);
    }
  });
  return lost;
}

function valueAt(root: unknown, path: readonly PathStep[]): unknown {
  let value = root;
  for (const step of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PathStep, unknown>)[step];
  }
  return value;
}
