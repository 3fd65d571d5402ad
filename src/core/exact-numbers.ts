/**
 * Integers beyond 2^53 that `JSON.parse` has already rounded: where an id may arrive as a JSON
 * number (a gift card's `CardId`, an IPv6 range bound), the exact digits are taken back from the
 * JSON text. Only on the rare path: the caller first checks, on the parsed value, that such a
 * number is there (`isUnsafeNumber`, `unsafeNumberPaths`); the text is scanned then, once per
 * field, linearly (strings skipped as they are, escapes included), and nothing is allocated
 * before.
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
  let at = skipSpace(text, 0);
  for (const step of path) {
    const open = text.charCodeAt(at);
    if (typeof step === "number") {
      if (open !== 0x5b /* [ */) return undefined;
      at = skipSpace(text, at + 1);
      if (text.charCodeAt(at) === 0x5d /* ] */) return undefined;
      for (let index = 0; index < step; index++) {
        at = skipSpace(text, skipValue(text, at));
        if (text.charCodeAt(at) !== 0x2c /* , */) return undefined;
        at = skipSpace(text, at + 1);
      }
      continue;
    }
    if (open !== 0x7b /* { */) return undefined;
    at = skipSpace(text, at + 1);
    let chosen = -1;
    while (text.charCodeAt(at) === 0x22 /* " */) {
      const keyEnd = skipString(text, at);
      const matches = keyIs(text, at, keyEnd, step);
      at = skipSpace(text, keyEnd);
      if (text.charCodeAt(at) !== 0x3a /* : */) return undefined;
      at = skipSpace(text, at + 1);
      if (matches) chosen = at;
      at = skipSpace(text, skipValue(text, at));
      if (text.charCodeAt(at) !== 0x2c /* , */) break;
      at = skipSpace(text, at + 1);
    }
    if (chosen < 0) return undefined;
    at = chosen;
  }
  NUMBER.lastIndex = at;
  const match = NUMBER.exec(text);
  return match === null ? undefined : match[0];
}

/** Whether the JSON string `text[start, end)` (quotes included) is `name` once unescaped. */
function keyIs(text: string, start: number, end: number, name: string): boolean {
  const inner = text.slice(start + 1, end - 1);
  if (!inner.includes("\\")) return inner === name;
  try {
    return JSON.parse(text.slice(start, end)) === name;
  } catch {
    return false;
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

/**
 * Gives each unsafe number of `root` at `paths` its exact text from `text` (a string: the id's
 * type allows text). Returns the paths whose number could not be found in the text (none: `[]`).
 */
export function restoreExactNumbers(
  root: unknown,
  paths: readonly (readonly PathStep[])[],
  text: string | undefined,
): PathStep[][] {
  const lost: PathStep[][] = [];
  for (const path of paths) {
    const literal = text === undefined ? undefined : numberLiteralAt(text, path);
    const parent = valueAt(root, path.slice(0, -1));
    const last = path.at(-1) as PathStep;
    if (
      literal === undefined ||
      parent === null ||
      typeof parent !== "object" ||
      // The literal must be the number the value holds (the text is the one parsed).
      Number(literal) !== (parent as Record<PathStep, unknown>)[last]
    ) {
      lost.push([...path]);
      continue;
    }
    try {
      Object.defineProperty(parent, last, {
        value: literal,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } catch {
      lost.push([...path]);
    }
  }
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
