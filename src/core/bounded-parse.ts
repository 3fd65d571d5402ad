/**
 * zod's verdict on a value, with its issues, at a cost bounded by the issues described rather than
 * by the value's size.
 *
 * zod builds every issue of a value before saying anything: an order of 340,000 empty products
 * (1 MiB) made a million issues, about 10 s and 850 MB of heap, of which ten were described
 * (review AMP-4). Here a walk over the schema finds the failing parts first, in the order zod would
 * report them, and stops once more than `limit` have failed; zod then runs only on those parts,
 * with their own schemas, and their issues get the part's path in front. The walk decides exactly
 * what zod decides (it descends only through objects, arrays, optional, nullable and unions, whose
 * verdict is their parts' verdicts, and asks zod of everything else), so a value zod accepts is
 * never refused here: zod's own parse then gives the output.
 *
 * The parts described:
 * - a value not of its schema's kind (not an object, not an array), and every other construct (a
 *   string, a number, a `preprocess`...): the value itself, with its schema;
 * - an object with checks of its own (`.check`, `.refine`) whose failures are not inside one of its
 *   arrays: the whole object, so that its checks speak too (SendOrderToMerchant's product without a
 *   SKU). With a failure inside an array, its checks are left out (they would make zod walk the
 *   array), and the result says it is not complete (`… and more`);
 * - a union no option of which accepts: the whole union when no option fails inside an array,
 *   otherwise the parts of the first option that does (a list given where the list was expected).
 *   Length checks of an array that also has failing items are left out the same way.
 *
 * An object's or array's own checks read zod's output (defaults filled in, preprocess and transform
 * results, unknown keys stripped), not the raw value. Once its parts all pass, zod decides them on
 * the object itself; only where zod's output is the value (a loose object whose fields change no
 * value) are the checks run alone on the value, without walking it again (review second-zod-1).
 */
import { type z, z as zod } from "zod";

/** One issue, its path from the value's root. */
export type BoundedIssue = z.core.$ZodIssue;

export type BoundedParse<T> =
  | { readonly success: true; readonly data: T }
  | {
      readonly success: false;
      /** The failing parts' issues, in zod's order: more than `limit` when `complete` is false. */
      readonly issues: readonly BoundedIssue[];
      /** False when the walk stopped before the end: there are more issues than those. */
      readonly complete: boolean;
    };

/** A failing part: zod is run on `value` with `schema`, its issues prefixed with `path`. */
interface Part {
  readonly path: readonly PropertyKey[];
  readonly schema: z.core.$ZodType;
  readonly value: unknown;
}

const OK = 0;
/** Failed, with no failure inside an array of the value. */
const FLAT = 1;
/** Failed inside an array of the value, or the walk stopped within it. */
const DEEP = 2;
type Status = typeof OK | typeof FLAT | typeof DEEP;

class Walk {
  readonly parts: Part[] = [];
  /** The failures found (each is at least one issue). */
  failures = 0;
  /** Own checks of a failing object or array were left out: the issues found are not all. */
  omitted = false;
  /** The path of the value being visited (copied only for a failure). */
  readonly path: PropertyKey[];
  constructor(
    readonly limit: number,
    path: readonly PropertyKey[] = [],
  ) {
    this.path = [...path];
  }

  get full(): boolean {
    return this.failures > this.limit;
  }

  fail(schema: z.core.$ZodType, value: unknown): Status {
    this.parts.push({ path: [...this.path], schema, value });
    this.failures++;
    return FLAT;
  }

  /** The value against the schema: OK, or the failing parts added to `parts`. */
  visit(schema: z.core.$ZodType, value: unknown): Status {
    const def = schema._zod.def as unknown as Def;
    switch (def.type) {
      case "optional":
        return value === undefined ? OK : this.visit(def.innerType as z.core.$ZodType, value);
      case "nullable":
        return value === null ? OK : this.visit(def.innerType as z.core.$ZodType, value);
      case "string":
        if (typeof value === "string" && plain(def)) return OK;
        return this.leaf(schema, value);
      case "number":
        if (Number.isFinite(value) && plain(def)) return OK;
        return this.leaf(schema, value);
      case "boolean":
        if (typeof value === "boolean" && plain(def)) return OK;
        return this.leaf(schema, value);
      case "unknown":
      case "any":
        return OK;
      case "object":
        return this.object(schema, def, value);
      case "array":
        return this.array(schema, def, value);
      case "union":
        return this.union(schema, def, value);
      default:
        return this.leaf(schema, value);
    }
  }

  /** A construct zod decides whole (a string, a preprocess...). */
  leaf(schema: z.core.$ZodType, value: unknown): Status {
    if (zod.safeParse(schema, value).success) return OK;
    return this.fail(schema, value);
  }

  object(schema: z.core.$ZodType, def: Def, value: unknown): Status {
    const catchall = def.catchall as z.core.$ZodType | undefined;
    const open = catchall === undefined || OPEN.has(catchall._zod.def.type);
    // Not an object (zod's own test), or unknown keys checked (a strict object): zod decides.
    if (!open || typeof value !== "object" || value === null || Array.isArray(value)) {
      return this.leaf(schema, value);
    }
    const start = this.parts.length;
    let status: Status = OK;
    const { keys, schemas } = fieldsOf(schema, def);
    const record = value as Record<string, unknown>;
    for (let i = 0; i < keys.length; i++) {
      if (this.full) return DEEP;
      const key = keys[i] as string;
      const fieldSchema = schemas[i] as z.core.$ZodType;
      this.path.push(key);
      let field = this.visit(fieldSchema, record[key]);
      this.path.pop();
      if (field === OK && fieldSchema._zod.optin === undefined && !(key in record)) {
        // A required key that is absent fails even when its schema takes undefined (z.unknown()):
        // zod says so of the object, as of this key alone.
        field = this.fail(zod.looseObject({ [key]: fieldSchema }), {});
      }
      if (field > status) status = field;
    }
    if (!hasChecks(def)) return status;
    // Every field passes: what the object's own checks say, on zod's output.
    if (status === OK) return this.checks(schema, def, value);
    // A failure inside an array: the checks are left out, and may have had something to say.
    if (status === DEEP) this.omitted = true;
    if (status === FLAT) {
      // Bounded: no array of the object fails, so zod on it makes as many issues as the schema
      // has fields at most, its own checks' included.
      this.parts.length = start;
      this.parts.push({ path: [...this.path], schema, value });
    }
    return status;
  }

  array(schema: z.core.$ZodType, def: Def, value: unknown): Status {
    if (!Array.isArray(value)) return this.leaf(schema, value);
    const element = def.element as z.core.$ZodType;
    let failed = false;
    for (let i = 0; i < value.length; i++) {
      if (this.full) return DEEP;
      this.path.push(i);
      if (this.visit(element, value[i]) !== OK) failed = true;
      this.path.pop();
    }
    if (failed) {
      // Its length checks are left out (zod runs them beside the items' issues).
      if (hasChecks(def)) this.omitted = true;
      return DEEP;
    }
    // Every item passes: what the array's own checks (a length) say.
    return hasChecks(def) ? this.checks(schema, def, value) : OK;
  }

  /**
   * The own checks of an object or an array whose parts all pass; the part is the whole. zod runs
   * them on its output: the checks alone on the value where that output is the value, otherwise zod
   * on the whole (its parts pass, so its issues can only be the checks').
   */
  checks(schema: z.core.$ZodType, def: Def, value: unknown): Status {
    const judge = unchanged(schema) ? checksOnly(schema, def) : schema;
    if (zod.safeParse(judge, value).success) return OK;
    return this.fail(schema, value);
  }

  union(schema: z.core.$ZodType, def: Def, value: unknown): Status {
    let deep: Walk | undefined;
    for (const option of def.options as z.core.$ZodType[]) {
      const walk = walkFrom(this.limit - this.failures, this.path);
      const status = walk.visit(option, value);
      if (status === OK) return OK;
      if (status === DEEP && deep === undefined) deep = walk;
    }
    if (deep === undefined) return this.leaf(schema, value);
    this.parts.push(...deep.parts);
    this.failures += deep.failures;
    if (deep.omitted) this.omitted = true;
    return DEEP;
  }
}

/** An object schema's fields, in zod's order, read once per schema. */
const FIELDS = new WeakMap<
  z.core.$ZodType,
  { readonly keys: readonly string[]; readonly schemas: readonly z.core.$ZodType[] }
>();

function fieldsOf(schema: z.core.$ZodType, def: Def) {
  let fields = FIELDS.get(schema);
  if (fields === undefined) {
    const shape = def.shape as Record<string, z.core.$ZodType>;
    // zod skips a shape key named __proto__: it neither reads nor writes it.
    const keys = Object.keys(shape).filter((key) => key !== "__proto__");
    fields = { keys, schemas: keys.map((key) => shape[key] as z.core.$ZodType) };
    FIELDS.set(schema, fields);
  }
  return fields;
}

/** Per object or array schema with checks: the same checks on any object or any array. */
const CHECKS_ONLY = new WeakMap<z.core.$ZodType, z.core.$ZodType>();

function checksOnly(schema: z.core.$ZodType, def: Def): z.core.$ZodType {
  let only = CHECKS_ONLY.get(schema);
  if (only === undefined) {
    // A loose object keeps every key, so the checks read the fields they would have read.
    const base = def.type === "object" ? zod.looseObject({}) : zod.array(zod.unknown());
    only = (base as z.ZodType).check(...(def.checks as z.core.$ZodCheck<unknown>[]));
    CHECKS_ONLY.set(schema, only);
  }
  return only;
}

/** Per schema: whether zod's output for a value it accepts is that value (deep equal). */
const UNCHANGED = new WeakMap<z.core.$ZodType, boolean>();

/**
 * Whether zod's output of an accepted value equals the value: no default, catch, preprocess,
 * transform, pipe, coercion, overwriting check (`.trim()`) or stripped key anywhere in the schema.
 * False when unsure (zod then decides the checks on the whole).
 */
function unchanged(schema: z.core.$ZodType): boolean {
  let known = UNCHANGED.get(schema);
  if (known === undefined) {
    UNCHANGED.set(schema, false); // a schema reached again inside itself is not assumed unchanged
    known = unchangedBy(schema);
    UNCHANGED.set(schema, known);
  }
  return known;
}

function unchangedBy(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def as unknown as Def;
  const checks = (def.checks ?? []) as readonly z.core.$ZodCheck[];
  if (checks.some((check) => check._zod.def.check === "overwrite")) return false;
  switch (def.type) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
      return def.coerce !== true;
    case "literal":
    case "enum":
    case "null":
    case "undefined":
    case "unknown":
    case "any":
    case "nan":
    case "never":
      return true;
    case "optional":
    case "nullable":
      return unchanged(def.innerType as z.core.$ZodType);
    case "array":
      return unchanged(def.element as z.core.$ZodType);
    case "union":
      return (def.options as z.core.$ZodType[]).every(unchanged);
    case "object": {
      const catchall = def.catchall as z.core.$ZodType | undefined;
      // A strip object drops unknown keys; a loose or strict one keeps or refuses them.
      if (catchall === undefined || !unchanged(catchall)) return false;
      return fieldsOf(schema, def).schemas.every(unchanged);
    }
    default:
      return false;
  }
}

interface Def {
  readonly type: string;
  readonly checks?: readonly unknown[];
  readonly coerce?: boolean;
  readonly [key: string]: unknown;
}

/**
 * A walk of a union's option. Outside the class: a class body that names its class is built as
 * `class _Walk` (esbuild), and `constructor.name` would say so.
 */
function walkFrom(limit: number, path: readonly PropertyKey[]): Walk {
  return new Walk(limit, path);
}

/** A catchall that accepts every unknown key (a loose object's). */
const OPEN = new Set(["unknown", "any"]);

function hasChecks(def: Def): boolean {
  return def.checks !== undefined && def.checks.length > 0;
}

/** A primitive schema with no checks and no coercion: its kind is its whole verdict. */
function plain(def: Def): boolean {
  return !hasChecks(def) && def.coerce !== true;
}

/**
 * `schema.safeParse(value)`, with at most about `limit` failing parts described (see above).
 * Accepted values are zod's parse, output included.
 */
export function parseBounded<T>(schema: z.ZodType<T>, value: unknown, limit = 10): BoundedParse<T> {
  const walk = new Walk(limit);
  walk.visit(schema as z.core.$ZodType, value);
  const issues: BoundedIssue[] = [];
  for (const part of walk.parts) {
    const result = zod.safeParse(part.schema, part.value);
    if (result.success) continue;
    for (const issue of result.error.issues) {
      issues.push({ ...issue, path: [...part.path, ...issue.path] } as BoundedIssue);
    }
  }
  if (issues.length > 0) {
    return { success: false, issues, complete: !walk.full && !walk.omitted };
  }
  // Nothing failed in the walk: zod's parse (its output), and its issues if it disagrees.
  const result = schema.safeParse(value);
  if (result.success) return { success: true, data: result.data };
  return { success: false, issues: result.error.issues, complete: true };
}

/**
 * Issues as `path: message`, at most `limit`, then how many more (or that there are more, when the
 * list is not complete). Zod keeps input values out of its messages.
 */
export function describeIssueList(
  issues: readonly BoundedIssue[],
  limit: number,
  complete = true,
): string {
  const lines = issues.slice(0, limit).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    return `${path}: ${issue.message}`;
  });
  if (!complete) lines.push("… and more");
  else if (issues.length > limit) lines.push(`… and ${issues.length - limit} more`);
  return lines.join("; ");
}
