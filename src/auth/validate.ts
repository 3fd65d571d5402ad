/**
 * Configuration checks shared by the modes, and by the other constructors that take options (the
 * handler factories, the router, withIdempotency and its stores): every mistake is a TypeError
 * naming its path, after the name of the function that refused it (`owner`).
 */

export function configError(path: string, problem: string, owner = "createAuth"): TypeError {
  return new TypeError(`${owner}: ${path} ${problem}`);
}

/**
 * A misspelt option (`isuser`) would silently switch a check off: refuse unknown names, naming the
 * closest known one when it is close enough to be a typo (`; did you mean "issuer"?`).
 */
export function assertKnownKeys(
  value: Record<string, unknown>,
  known: readonly string[],
  path: string,
  owner = "createAuth",
): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw configError(path, `has an unknown option ${unknownName(key, known)}`, owner);
    }
  }
}

/**
 * `"key" (known: a, b); did you mean "a"?`, the suggestion only when one is close; `(known: none)`
 * for an object that takes no key at all (an operation without names to override).
 */
export function unknownName(key: string, known: readonly string[]): string {
  const suggestion = closest(key, known);
  const mean = suggestion === undefined ? "" : `; did you mean "${suggestion}"?`;
  const list = known.length === 0 ? "none" : known.join(", ");
  return `"${key}" (known: ${list})${mean}`;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        previous + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length] as number;
}

/** The closest of `candidates` to `typed`, if it is close enough to be a typo. */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(typed.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(typed.length / 3))
    ? best
    : undefined;
}

/**
 * The names of an options type, from an object listing each once: the type makes a name missing
 * from the list, or one the type does not have, a compile error, so the list a constructor
 * accepts stays the documented one.
 */
export function optionNames<T>(names: { readonly [K in keyof T]-?: true }): readonly string[] {
  return Object.freeze(Object.keys(names));
}

/** A non-empty string, or the configuration is refused. */
export function requireString(value: unknown, path: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw configError(path, "must be a non-empty string");
  }
  return value;
}

/**
 * For the other constructors too (`owner`: the function refusing), as configError is.
 *
 * A function option, or left out (`undefined`): anything else (a logger object, a header name)
 * would be skipped, or fail on every call, instead of being refused once, at construction.
 */
export function assertOptionalFunction(value: unknown, path: string, owner: string): void {
  if (value !== undefined && typeof value !== "function") {
    throw configError(path, `must be a function, got ${typeName(value)}`, owner);
  }
}

/**
 * One of a few strings, or left out: any other value (`"Query"`, a typo from an environment
 * variable) would match none of the branches that read it. The message lists the allowed values,
 * never the one given.
 */
export function assertOptionalOneOf(
  value: unknown,
  allowed: readonly string[],
  path: string,
  owner: string,
): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    const list = allowed.map((item) => JSON.stringify(item)).join(" or ");
    const got = typeof value === "string" ? "" : `, got ${typeName(value)}`;
    throw configError(path, `must be ${list}${got}`, owner);
  }
}

/** The kind of a refused value, never the value itself (it may be a secret). */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" ? "an object" : `a ${type}`;
}
