/**
 * Writes src/generated/checkers.ts: for each callback's payload schema and for the cart a merchant
 * returns from GetCheckoutCartInfo, plain TypeScript that checks a value IN PLACE — one small
 * function per object schema, no copy, no `new Function` — and answers with a verdict:
 *
 * - ACCEPT: zod accepts the value, and zod's output deep-equals the value itself, so the value can
 *   be used as it is; for the cart (sent as its JSON) every object and array of the shape met is
 *   also without a `toJSON`, so that `JSON.stringify` writes what was checked;
 * - REJECT: zod rejects the value (zod is then run for its issue list);
 * - DEFER: the checker cannot tell exactly (a construct whose output differs from its input, a
 *   check it cannot emit, an object that is not plain): zod decides.
 *
 * The walk reads zod's internals (`schema._zod.def`, `_zod.traits`, `_zod.optin`/`optout`) and
 * emits code only for the constructs it knows to be identity on success: `looseObject`,
 * `optional`, `nullable`, `string`, `number`, `boolean`, `array`, `union`, `enum`, `literal`,
 * `unknown`, `pipe` of those, and the checks listed in `emitCheck`. Anything else — transforms,
 * defaults, coercion, strip or strict objects, unknown refinements, a zod feature this script has
 * never seen — becomes `return DEFER`. The precondition of a plain check is the engine's sealing
 * walk (src/core/seal.ts): no own `__proto__` key anywhere in the value. `checkSealed` runs the
 * same functions so that they also find what the walk looks for, for a body the walk would leave
 * as it is (see its comment in the prelude).
 *
 * `npm run generate` writes the file; `generateCheckersText()` returns its text (formatted by
 * Biome), which the stale-file test compares with the committed file.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  CARD_NUMBER,
  CVV_NUMBER,
  isCardFieldKey,
  isPaymentDetailsKey,
  PAYMENT_DETAILS,
} from "../src/core/card-keys.js";
import type { CallbackName } from "../src/core/types.js";
import { getCheckoutCartInfoRequestSchema } from "../src/schemas/checkout-request.js";
import * as schemas from "../src/schemas/index.js";
import { productSkuRule } from "../src/schemas/product.js";

type Schema = z.core.$ZodType;
type Check = z.core.$ZodCheck;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the file goes, relative to the repository. */
export const CHECKERS_PATH = "src/generated/checkers.ts";

/** A schema the generated file imports: its export name and module (relative to the file). */
interface Source {
  readonly exportName: string;
  readonly module: string;
}

const SCHEMAS_MODULE = "../schemas/index.js";

/** Each callback's payload schema: the `schema` of its definition in src/callbacks. */
export const PAYLOAD_SCHEMAS: { readonly [K in CallbackName]: Source } = {
  GetCheckoutCartInfo: {
    exportName: "getCheckoutCartInfoRequestSchema",
    module: "../schemas/checkout-request.js",
  },
  SendOrderToMerchant: { exportName: "sendOrderToMerchantSchema", module: SCHEMAS_MODULE },
  UpdateOrderStatus: { exportName: "updateOrderStatusSchema", module: SCHEMAS_MODULE },
  PerformOrderPayment: { exportName: "performOrderPaymentSchema", module: SCHEMAS_MODULE },
  SendRMAInfoToMerchant: { exportName: "sendRMAInfoToMerchantSchema", module: SCHEMAS_MODULE },
  UpdateParcelDispatch: { exportName: "updateParcelDispatchSchema", module: SCHEMAS_MODULE },
  RemoveRestrictedProducts: {
    exportName: "removeRestrictedProductsSchema",
    module: SCHEMAS_MODULE,
  },
  SendAdditionalRequiredDocumentsToMerchant: {
    exportName: "sendAdditionalRequiredDocumentsSchema",
    module: SCHEMAS_MODULE,
  },
  ValidateGiftCard: { exportName: "giftCardRequestSchema", module: SCHEMAS_MODULE },
  RedeemGiftCard: { exportName: "giftCardRequestSchema", module: SCHEMAS_MODULE },
  RefundGiftCard: { exportName: "giftCardRequestSchema", module: SCHEMAS_MODULE },
  ValidateVoucher: { exportName: "giftCardRequestSchema", module: SCHEMAS_MODULE },
  NotifyOrderRefund: { exportName: "notifyOrderRefundSchema", module: SCHEMAS_MODULE },
  UpdateOrderShippingInfo: { exportName: "updateOrderShippingInfoSchema", module: SCHEMAS_MODULE },
};

/** The cart a merchant returns from GetCheckoutCartInfo (validated in its `response.success`). */
export const CART_SCHEMA: Source = { exportName: "checkoutCartInfoSchema", module: SCHEMAS_MODULE };

/** Every schema the generated file may import, by export name. */
const EXPORTED: ReadonlyMap<string, Schema> = new Map<string, Schema>([
  ...(Object.entries(schemas) as [string, unknown][]).filter(
    (entry): entry is [string, Schema] => isSchema(entry[1]) && entry[0].endsWith("Schema"),
  ),
  ["getCheckoutCartInfoRequestSchema", getCheckoutCartInfoRequestSchema],
]);

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && "_zod" in value;
}

function schemaOf(source: Source): Schema {
  const schema = EXPORTED.get(source.exportName);
  if (schema === undefined) throw new Error(`no schema exported as ${source.exportName}`);
  return schema;
}

/**
 * Refinements the generator knows, by identity: the condition (over the object `o`) under which
 * zod's check passes once every field passed. Any other refinement defers to zod.
 */
const KNOWN_REFINEMENTS: ReadonlyMap<Check, (object: string) => string> = new Map([
  [
    productSkuRule as unknown as Check,
    (o: string) => `typeof ${o}.Sku === "string" || typeof ${o}.SKU === "string"`,
  ],
]);

/** zod's own default `when` of the length checks: those checks run on every string or array. */
const LENGTH_WHEN = (z.string().max(1)._zod.def.checks as Check[])[0]?._zod.def.when;

/** The zod-core traits of a schema, sorted: identifies exactly which constructor built it. */
function traitsOf(schema: Schema): string {
  return [...schema._zod.traits]
    .filter((trait) => trait.startsWith("$"))
    .sort()
    .join(",");
}

/** The trait sets handled, by def type: any subclass (a format, xor, exactOptional…) defers. */
const KNOWN_TRAITS: Readonly<Record<string, readonly string[]>> = {
  string: ["$ZodString,$ZodType"],
  number: ["$ZodNumber,$ZodType"],
  boolean: ["$ZodBoolean,$ZodType"],
  unknown: ["$ZodType,$ZodUnknown"],
  any: ["$ZodAny,$ZodType"],
  null: ["$ZodNull,$ZodType"],
  undefined: ["$ZodType,$ZodUndefined"],
  never: ["$ZodNever,$ZodType"],
  optional: ["$ZodOptional,$ZodType"],
  nullable: ["$ZodNullable,$ZodType"],
  array: ["$ZodArray,$ZodType"],
  union: ["$ZodType,$ZodUnion"],
  object: ["$ZodObject,$ZodObjectJIT,$ZodType", "$ZodObject,$ZodType"],
  enum: ["$ZodEnum,$ZodType"],
  literal: ["$ZodLiteral,$ZodType"],
  pipe: ["$ZodPipe,$ZodType"],
};

/** The def keys each handled type may carry (`error` only changes messages). */
const KNOWN_DEF_KEYS: Readonly<Record<string, readonly string[]>> = {
  string: ["coerce"],
  number: ["coerce"],
  boolean: ["coerce"],
  optional: ["innerType"],
  nullable: ["innerType"],
  array: ["element"],
  union: ["options"],
  object: ["shape", "catchall"],
  enum: ["entries"],
  literal: ["values"],
  pipe: ["in", "out"],
};

class Deferral extends Error {}

/** In a value sent as JSON: an object or array with a `toJSON` (own or inherited) defers. */
const TO_JSON_DEFERS = (x: string) =>
  `if (typeof (${x} as { toJSON?: unknown }).toJSON === "function") return DEFER;`;

const CARD_FIELDS: readonly string[] = [CARD_NUMBER, CVV_NUMBER];
/** The card data names as the schemas spell them (src/core/card-keys.ts). */
const CARD_NAMES_EXACT: ReadonlySet<string> = new Set([PAYMENT_DETAILS, ...CARD_FIELDS]);

/** A card data name in any ASCII case, as the walk matches it (src/core/card-keys.ts). */
function isCardKey(key: string): boolean {
  return isPaymentDetailsKey(key) || isCardFieldKey(key);
}

/**
 * The generated code's import of the card key predicates: one definition of a card key, the
 * walk's own (src/core/card-keys.ts), in the library and in the generated checks.
 */
const CARD_KEYS_IMPORT =
  'import { isCardNumberKey, isCvvNumberKey, isPaymentDetailsKey } from "../core/card-keys.js";';

/**
 * The deepest level at which a value of `schema` can hold an object or an array, the value itself
 * at level 1 (as src/core/seal.ts counts): 0 for a leaf, `Infinity` for a construct not followed
 * here (or a cycle). Objects and arrays in `unknown` fields and unknown keys are not counted: the
 * sealed check walks them within what `maxDepth` leaves below this depth (`plainValue`).
 */
export function levelsOf(schema: Schema, seen: Set<Schema> = new Set()): number {
  if (seen.has(schema)) return Number.POSITIVE_INFINITY;
  seen.add(schema);
  try {
    const def = schema._zod.def as unknown as Record<string, unknown>;
    switch (def.type) {
      case "string":
      case "number":
      case "boolean":
      case "null":
      case "undefined":
      case "never":
      case "enum":
      case "literal":
      case "unknown":
      case "any":
        return 0;
      case "optional":
      case "nullable":
        return levelsOf(def.innerType as Schema, seen);
      case "pipe":
        return Math.max(levelsOf(def.in as Schema, seen), levelsOf(def.out as Schema, seen));
      case "union":
        return Math.max(0, ...(def.options as Schema[]).map((option) => levelsOf(option, seen)));
      case "array":
        return 1 + levelsOf(def.element as Schema, seen);
      case "object":
        return (
          1 +
          Math.max(
            0,
            ...Object.values(def.shape as Record<string, Schema>).map((field) =>
              levelsOf(field, seen),
            ),
          )
        );
      default:
        return Number.POSITIVE_INFINITY;
    }
  } finally {
    seen.delete(schema);
  }
}

/** A value as a TypeScript literal, for the values `===` compares exactly as zod's `Set.has`. */
function literal(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number" && Number.isFinite(value))
    return Object.is(value, -0) ? "0" : String(value);
  throw new Deferral(`a literal ${typeof value} value`);
}

function propertyAccess(object: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)
    ? `${object}.${key}`
    : `${object}[${JSON.stringify(key)}]`;
}

function pascal(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^./, (first) => first.toUpperCase());
}

/** Whether zod's parse of `undefined` can succeed, for the constructs handled. */
function mayAcceptUndefined(schema: Schema): boolean {
  const def = schema._zod.def as unknown as Record<string, unknown>;
  switch (def.type) {
    case "unknown":
    case "any":
    case "undefined":
    case "optional":
      return true;
    case "nullable":
      return mayAcceptUndefined(def.innerType as Schema);
    case "union":
      return (def.options as Schema[]).some(mayAcceptUndefined);
    case "literal":
    case "enum":
      return schema._zod.values?.has(undefined) ?? true;
    case "pipe":
      return mayAcceptUndefined(def.in as Schema) && mayAcceptUndefined(def.out as Schema);
    case "string":
    case "number":
    case "boolean":
    case "null":
    case "never":
    case "array":
    case "object":
      return false;
    default:
      return true;
  }
}

/** The helper of the prelude checking `schema`, when it is a plain leaf made optional and nullable. */
function nullishLeaf(schema: Schema): string | undefined {
  const wrappers = new Set<string>();
  let node = schema;
  for (;;) {
    const def = node._zod.def as unknown as Record<string, unknown>;
    if (def.type !== "optional" && def.type !== "nullable") break;
    if (wrappers.has(def.type) || (def.checks as unknown[] | undefined)?.length) return undefined;
    if (KNOWN_TRAITS[def.type]?.[0] !== traitsOf(node)) return undefined;
    wrappers.add(def.type);
    node = def.innerType as Schema;
  }
  if (wrappers.size !== 2) return undefined;
  const def = node._zod.def as unknown as Record<string, unknown>;
  const helper = LEAF_HELPERS[String(def.type)];
  if (helper === undefined || (def.checks as unknown[] | undefined)?.length || def.coerce) {
    return undefined;
  }
  return KNOWN_TRAITS[String(def.type)]?.[0] === traitsOf(node) &&
    Object.keys(def).every((key) => ["type", "checks", "error", "coerce"].includes(key))
    ? helper
    : undefined;
}

const LEAF_HELPERS: Readonly<Record<string, string>> = {
  string: "countString",
  number: "countNumber",
  boolean: "countBoolean",
};

/**
 * `body` run only when `condition` holds: a single `if (test) return verdict;` folds into one
 * line (`optional(nullable(string))`, the commonest field, becomes one test).
 */
function unless(condition: string, body: readonly string[]): string[] {
  if (body.length === 0) return [];
  const single = body.length === 1 ? /^if \((.*)\) return (\w+);$/.exec(body[0] as string) : null;
  if (single !== null) {
    const test = single[1] as string;
    return [
      `if (${condition} && ${test.includes("||") ? `(${test})` : test}) return ${single[2]};`,
    ];
  }
  const inner = blocks.get(body);
  const block =
    inner === undefined
      ? [`if (${condition}) {`, ...body, "}"]
      : [`if (${condition} && ${inner}) {`, ...body.slice(1)];
  blocks.set(block, inner === undefined ? condition : `${condition} && ${inner}`);
  return block;
}

/** The blocks `unless` built (an `if` around all of them), with their condition. */
const blocks = new WeakMap<readonly string[], string>();

class Generator {
  /** The emitted functions, in the order they were first needed. */
  private readonly functions: string[] = [];
  private readonly names = new Map<Schema, string>();
  /** The functions of the roots sent as JSON (`rootFunction`'s `sent`), by schema. */
  private readonly sentNames = new Map<Schema, string>();
  /** Whether the root being emitted is sent as JSON. */
  private sent = false;
  private readonly taken = new Set<string>();
  private counter = 0;
  /** Where the emitted code always defers, and why: reported in the file. */
  readonly deferred: string[] = [];

  /**
   * Every name the emitted functions read with a named load or an \`in\` (the fields of every
   * shape, the refinements' reads): \`checkSealed\` declines while Object.prototype holds one.
   */
  private readonly fieldNames = new Set<string>();

  constructor(private readonly exportNames: ReadonlyMap<Schema, string>) {}

  text(): string {
    return [...this.functions, this.prototypeGuard()].join("\n\n");
  }

  /**
   * \`prototypeHoldsNoField\`: \`in\` on each name read (no getter called). Constant names on one
   * object: V8 folds the lot to a check of Object.prototype's map while nothing is added to it
   * (about 10 ns for 341 names, where \`Object.getOwnPropertyNames(Object.prototype)\` took 0.7–0.9
   * µs per call, and its count missed a standard key swapped for a field's name).
   */
  private prototypeGuard(): string {
    const names = [...this.fieldNames].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const held = names.map((key) => `${JSON.stringify(key)} in PROTOTYPE`).join(" ||\n");
    return [
      "/**",
      " * Whether Object.prototype holds nothing under a name the checks read: a field absent from a",
      " * body would be read from it (with its getter called), and counted as present.",
      " */",
      "function prototypeHoldsNoField(): boolean {",
      names.length === 0 ? "return true;" : `return !(${held});`,
      "}",
    ].join("\n");
  }

  private fresh(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter}`;
  }

  private nameFor(schema: Schema, suggested: string): string {
    const exported = this.exportNames.get(schema);
    const base = `check${pascal(exported === undefined ? suggested : exported.replace(/Schema$/, ""))}`;
    let name = base;
    for (let i = 2; this.taken.has(name); i++) name = `${base}${i}`;
    this.taken.add(name);
    return name;
  }

  /** The name of the function checking `schema` (an object or a union), emitted on first use. */
  functionFor(schema: Schema, where: string): string {
    const names = this.sent ? this.sentNames : this.names;
    const known = names.get(schema);
    if (known !== undefined) return known;
    const name = this.nameFor(schema, this.sent ? `${where}Sent` : where);
    names.set(schema, name);
    const index = this.functions.push("") - 1;
    const body = this.guarded(where, () => {
      const def = schema._zod.def as unknown as Record<string, unknown>;
      return def.type === "object"
        ? this.objectBody(schema, where, name)
        : this.unionBody(schema, name, where);
    });
    const keys = this.keySets.get(name);
    this.functions[index] = [
      `function ${name}(v: unknown): Verdict {\n${body.join("\n")}\n}`,
      ...(keys === undefined ? [] : [`\n\n${keys}`]),
    ].join("");
    return name;
  }

  /** Statements that defer when `build` meets a construct it cannot emit. */
  private guarded(where: string, build: () => string[]): string[] {
    try {
      return build();
    } catch (error) {
      if (!(error instanceof Deferral)) throw error;
      this.deferred.push(`${where}: ${error.message}`);
      return [`// ${error.message.replace(/\n/g, " ")}: zod decides.`, "return DEFER;"];
    }
  }

  /** The declaration of an object function's set of field names, by function name. */
  private readonly keySets = new Map<string, string>();

  private objectBody(schema: Schema, where: string, name: string): string[] {
    const def = schema._zod.def as unknown as {
      shape: Record<string, Schema>;
      catchall?: Schema;
      checks?: Check[];
    };
    const lines = [
      'if (typeof v !== "object" || v === null || Array.isArray(v)) return REJECT;',
      // zod's output is a plain object: one of another prototype (or none) is left to zod; in a
      // value sent as JSON (the cart), so is one with a `toJSON`, which JSON.stringify writes
      // otherwise than read here (review truth TRUTH-2). Not in a payload: parsed JSON has none.
      "if (Object.getPrototypeOf(v) !== Object.prototype) return DEFER;",
      ...(this.sent ? [TO_JSON_DEFERS("v")] : []),
    ];
    const catchall = def.catchall;
    if (catchall === undefined) throw new Deferral("an object that strips unknown keys");
    const catchallType = (catchall._zod.def as { type: string }).type;
    if (catchallType !== "unknown" && catchallType !== "any") {
      throw new Deferral(`an object whose unknown keys are ${catchallType}`);
    }
    if (Object.getOwnPropertySymbols(def.shape).length > 0) throw new Deferral("a symbol key");
    const fields: string[] = [];
    for (const key of Object.keys(def.shape)) {
      // zod reads inherited keys (`key in input`) and never copies `__proto__`: left to zod.
      if (key === "__proto__" || key in Object.prototype) {
        throw new Deferral(`a field named ${key}, which plain objects inherit`);
      }
      // The walk finds card data under these names in any case; the sealed check, under the
      // exact names only (the others are unknown keys, which make it decline).
      if (isCardKey(key) && !CARD_NAMES_EXACT.has(key)) {
        throw new Deferral(`a field named ${key}, a card key in another case`);
      }
      fields.push(...this.field(def.shape[key] as Schema, key, `${where}.${key}`));
    }
    // A leaf the helpers refused: the count is negative.
    fields.push("if (n < 0) return REJECT;");
    for (const check of def.checks ?? []) {
      const condition = KNOWN_REFINEMENTS.get(check);
      if (condition === undefined)
        throw new Deferral(`a refinement (${String(check._zod.def.check)})`);
      const text = condition("o");
      for (const read of text.matchAll(/\bo\.([A-Za-z_$][A-Za-z0-9_$]*)/g)) {
        this.fieldNames.add(read[1] as string);
      }
      fields.push(`if (!(${text})) return REJECT;`);
    }
    for (const key of Object.keys(def.shape)) this.fieldNames.add(key);
    // The sealed check: more keys than the shape's fields present means unknown fields, looked at
    // one by one (`plainExtra`): a `__proto__` key, card fields or a PaymentDetails where the
    // shape has none, or an object the walk would act on, leave the value to the sealing walk.
    // Issue 13: one function per shape, its field names a \`switch\` (property keys are
    // internalized strings: each case is a pointer comparison), so a field's value is never
    // loaded (a generic load of a double field boxes it: 1.4 KiB per 30-product order when every
    // value was read to skip the set lookup), and no set is asked.
    const keys = Object.keys(def.shape);
    const extras = `${name}_extras`;
    const cases = keys.map((key) => `      case ${JSON.stringify(key)}:`);
    this.keySets.set(
      name,
      [
        `/** Whether the keys of an object of ${name}'s shape other than its fields are all \`plainExtra\` (its fields skipped unread). */`,
        `function ${extras}(o: Record<string, unknown>): boolean {`,
        "  for (const key in o) {",
        ...(cases.length === 0
          ? []
          : ["    switch (key) {", ...cases, "        continue;", "    }"]),
        "    if (!plainExtra(key, o[key])) return false;",
        "  }",
        "  return true;",
        "}",
      ].join("\n"),
    );
    fields.push(`if (sealed && keyCount(o) !== n) sealed = ${extras}(o);`);
    if (CARD_FIELDS.some((field) => keys.includes(field))) fields.push("if (sealed) cardSelf(o);");
    lines.push("const o = v as Record<string, unknown>;", "let n = 0;", ...fields);
    lines.push("return ACCEPT;");
    return lines;
  }

  /** One field of an object: present or absent, as zod's `handlePropertyResult` decides. */
  private field(schema: Schema, key: string, where: string): string[] {
    const { optin, optout } = schema._zod;
    // Each field present is counted (`n`): the sealed check compares the count with the keys.
    // The commonest field, `z.string().nullish()` (or boolean): one call of a helper that counts
    // it, or makes the count negative (a rejection, answered once the fields are read); a number
    // is checked in place (below).
    // (Not for a PaymentDetails field, whatever its type: the sealed check looks at its value.)
    const leaf = key === PAYMENT_DETAILS ? undefined : nullishLeaf(schema);
    if (leaf === "countNumber") {
      // A number written out in place: through a helper call V8 boxes the value read from a
      // double field (a heap number per price), in the calls its inlining budget leaves out.
      // The 30-product order's sealed check, `bench/sealed.ts` (four runs, both orders):
      // 5.69 / 6.16 / 6.09 / 5.85 → 5.67 / 5.72 / 5.74 / 5.73 µs.
      const x = this.fresh("x");
      return [
        `const ${x} = ${propertyAccess("o", key)};`,
        `if (${x} !== undefined) {`,
        `if (${x} !== null && !Number.isFinite(${x})) return REJECT;`,
        "n++;",
        "}",
      ];
    }
    if (leaf !== undefined) return [`n += ${leaf}(${propertyAccess("o", key)});`];
    const x = this.fresh("x");
    const read = [`const ${x} = ${propertyAccess("o", key)};`, `if (${x} !== undefined) n++;`];
    const check = this.statements(schema, x, where);
    const inKey = `${JSON.stringify(key)} in o`;
    const tests: string[] = [];
    if (optin === "optional" && optout === "optional") {
      // Absent: accepted whatever the schema says of undefined, and left absent.
      if (mayAcceptUndefined(schema)) tests.push(...check);
      else if (check.length > 0) tests.push(`if (${x} !== undefined || ${inKey}) {`, ...check, "}");
    } else if (optin === undefined && optout === undefined) {
      // Absent: an issue even when the schema accepts undefined.
      if (mayAcceptUndefined(schema)) {
        tests.push(`if (${x} === undefined && !(${inKey})) return REJECT;`);
      }
      tests.push(...check);
    } else {
      throw new Deferral(`field ${key}: a default or another substitute for absence`);
    }
    // A payment object, wherever a schema has one: a card site of the sealed check.
    if (key === PAYMENT_DETAILS) tests.push(`if (sealed) cardDetails(${x});`);
    return [...read, ...tests];
  }

  private unionBody(schema: Schema, name: string, where: string): string[] {
    const options = (schema._zod.def as unknown as { options: Schema[] }).options;
    // zod's union takes the first option that succeeds: an option this checker rejects is one zod
    // rejects, so the next is tried; one it cannot tell about leaves the whole union to zod.
    const lines = ["let r: Verdict;"];
    options.forEach((option, index) => {
      const call = this.optionFunction(option, `${name}_${index}`, `${where}|${index}`);
      lines.push(`r = ${call}(v);`, "if (r !== REJECT) return r;");
    });
    lines.push("return REJECT;");
    return lines;
  }

  /** The function checking a root schema (of any kind). */
  /**
   * The function checking a root. `sent`: the value is sent as JSON (the cart a merchant returns),
   * so its objects and arrays with a `toJSON` defer too; its functions are its own (a payload's,
   * parsed JSON, check no `toJSON`).
   */
  rootFunction(schema: Schema, where: string, sent = false): string {
    this.sent = sent;
    try {
      return this.optionFunction(schema, `check${pascal(where)}`, where);
    } finally {
      this.sent = false;
    }
  }

  private optionFunction(schema: Schema, name: string, where: string): string {
    const type = (schema._zod.def as { type: string }).type;
    if ((type === "object" || type === "union") && this.handles(schema)) {
      return this.functionFor(schema, where);
    }
    this.taken.add(name);
    const index = this.functions.push("") - 1;
    const body = this.guarded(where, () => [
      ...this.statements(schema, "v", where),
      "return ACCEPT;",
    ]);
    this.functions[index] = `function ${name}(v: unknown): Verdict {\n${body.join("\n")}\n}`;
    return name;
  }

  /** Whether the schema's constructor and def are of the handled kinds (else it defers). */
  private handles(schema: Schema): boolean {
    return this.unhandled(schema) === undefined;
  }

  private unhandled(schema: Schema): string | undefined {
    const def = schema._zod.def as unknown as Record<string, unknown>;
    const type = String(def.type);
    const traits = KNOWN_TRAITS[type];
    if (traits === undefined) return `a ${type} schema`;
    if (!traits.includes(traitsOf(schema)))
      return `a ${type} schema of another kind (${traitsOf(schema)})`;
    const allowed = new Set(["type", "checks", "error", ...(KNOWN_DEF_KEYS[type] ?? [])]);
    for (const key of Object.keys(def)) {
      if (!allowed.has(key) && def[key] !== undefined) return `a ${type} schema with "${key}"`;
    }
    if (def.coerce) return `a coerced ${type}`;
    return undefined;
  }

  /**
   * Statements checking the value in variable `x` against `schema`: they return REJECT or DEFER
   * when it fails, and fall through when zod would accept it unchanged.
   */
  statements(schema: Schema, x: string, where: string): string[] {
    const reason = this.unhandled(schema);
    if (reason !== undefined) throw new Deferral(reason);
    const def = schema._zod.def as unknown as Record<string, unknown>;
    const checks = (def.checks as Check[] | undefined) ?? [];
    switch (def.type) {
      case "unknown":
      case "any":
        // Anything goes: an object or array here is left to the sealing walk (its depth, its keys).
        return [
          `if (sealed && typeof ${x} === "object" && ${x} !== null) sealed = plainValue(${x});`,
          ...this.checks(checks, x, "unknown"),
        ];
      case "never":
        return ["return REJECT;"];
      case "null":
        return [`if (${x} !== null) return REJECT;`, ...this.checks(checks, x, "null")];
      case "undefined":
        return [`if (${x} !== undefined) return REJECT;`, ...this.checks(checks, x, "undefined")];
      case "string":
        return [
          `if (typeof ${x} !== "string") return REJECT;`,
          ...this.checks(checks, x, "string"),
        ];
      case "boolean":
        return [
          `if (typeof ${x} !== "boolean") return REJECT;`,
          ...this.checks(checks, x, "boolean"),
        ];
      case "number":
        // Number.isFinite is false for anything but a finite number: zod refuses NaN and ±Infinity.
        return [`if (!Number.isFinite(${x})) return REJECT;`, ...this.checks(checks, x, "number")];
      case "enum":
      case "literal": {
        const values = [...(schema._zod.values ?? [])];
        if (values.length === 0) return ["return REJECT;"];
        const differs = values.map((value) => `${x} !== ${literal(value)}`).join(" && ");
        return [`if (${differs}) return REJECT;`, ...this.checks(checks, x, "unknown")];
      }
      case "optional": {
        const inner = def.innerType as Schema;
        if (inner._zod.optin === "defaulted") throw new Deferral("an optional default");
        return unless(
          `${x} !== undefined`,
          this.withChecks(this.statements(inner, x, where), checks, x),
        );
      }
      case "nullable": {
        const inner = this.statements(def.innerType as Schema, x, where);
        return unless(`${x} !== null`, this.withChecks(inner, checks, x));
      }
      case "pipe":
        // Both sides identity on success: the output of `in` is the value `out` receives.
        return [
          ...this.statements(def.in as Schema, x, where),
          ...this.statements(def.out as Schema, x, where),
        ];
      case "array": {
        const element = def.element as Schema;
        const i = this.fresh("i");
        const item = this.fresh("e");
        const elementType = (element._zod.def as { type: string }).type;
        const loop =
          (elementType === "object" || elementType === "union") && this.handles(element)
            ? this.call(this.functionFor(element, `${where}[]`), `${x}[${i}]`)
            : [`const ${item} = ${x}[${i}];`, ...this.statements(element, item, `${where}[]`)];
        const lines = [
          `if (!Array.isArray(${x})) return REJECT;`,
          `if (Object.getPrototypeOf(${x}) !== Array.prototype) return DEFER;`,
          ...(this.sent ? [TO_JSON_DEFERS(x)] : []),
          `if (sealed && ownKey.call(${x}, "__proto__")) sealed = false;`,
        ];
        if (loop.length > 0)
          lines.push(`for (let ${i} = 0; ${i} < ${x}.length; ${i}++) {`, ...loop, "}");
        lines.push(...this.checks(checks, x, "array"));
        return lines;
      }
      case "object":
      case "union":
        return [
          ...this.call(this.functionFor(schema, where), x),
          ...this.checks(checks, x, "unknown"),
        ];
      default:
        throw new Deferral(`a ${String(def.type)} schema`);
    }
  }

  /** `lines`, then a wrapper's own checks (the same array when there are none). */
  private withChecks(lines: string[], checks: readonly Check[], x: string): string[] {
    const own = this.checks(checks, x, "unknown");
    return own.length === 0 ? lines : [...lines, ...own];
  }

  private call(name: string, value: string): string[] {
    const r = this.fresh("r");
    return [`const ${r} = ${name}(${value});`, `if (${r} !== ACCEPT) return ${r};`];
  }

  /** The checks of a value already known to be of `kind`; one this script cannot emit defers. */
  private checks(checks: readonly Check[], x: string, kind: string): string[] {
    const lines: string[] = [];
    for (const check of checks) {
      const def = check._zod.def as unknown as Record<string, unknown>;
      const name = String(def.check);
      const lengthy = kind === "string" || kind === "array";
      if ((name === "max_length" || name === "min_length" || name === "length_equals") && lengthy) {
        if (def.when !== LENGTH_WHEN) throw new Deferral(`a ${name} check with its own condition`);
        const value = (
          name === "max_length" ? def.maximum : name === "min_length" ? def.minimum : def.length
        ) as number;
        if (!Number.isSafeInteger(value)) throw new Deferral(`a ${name} check of ${value}`);
        const length = `${x}.length`;
        if (kind === "array") {
          const op = name === "max_length" ? ">" : name === "min_length" ? "<" : "!==";
          lines.push(`if (${length} ${op} ${value}) return REJECT;`);
        } else if (name === "max_length") {
          // zod counts code points: a string within the bound in UTF-16 units is within it; a
          // longer one may still be (surrogate pairs), so zod decides.
          lines.push(`if (${length} > ${value}) return DEFER;`);
        } else if (name === "min_length") {
          // Code points are 1 or 2 units: fewer units than the floor fails, twice as many passes.
          lines.push(
            `if (${length} < ${value}) return REJECT;`,
            `if (${length} < ${value * 2}) return DEFER;`,
          );
        } else {
          lines.push(
            `if (${length} !== ${value}) return DEFER;`,
            `if (/[\\uD800-\\uDFFF]/.test(${x} as string)) return DEFER;`,
          );
        }
        continue;
      }
      if (def.when !== undefined) throw new Deferral(`a ${name} check with its own condition`);
      if (name === "number_format" && kind === "number" && def.format === "safeint") {
        lines.push(`if (!Number.isSafeInteger(${x})) return REJECT;`);
        continue;
      }
      if ((name === "less_than" || name === "greater_than") && kind === "number") {
        const value = def.value;
        if (typeof value !== "number" || !Number.isFinite(value))
          throw new Deferral(`a ${name} check`);
        const op = name === "less_than" ? (def.inclusive ? ">" : ">=") : def.inclusive ? "<" : "<=";
        lines.push(`if ((${x} as number) ${op} ${value}) return REJECT;`);
        continue;
      }
      throw new Deferral(`a ${name} check`);
    }
    return lines;
  }
}

/** The generated module for these roots: its body, and where it always defers. */
export function emitCheckers(
  roots: ReadonlyArray<{ readonly name: string; readonly schema: Schema; readonly sent?: boolean }>,
  exportNames: ReadonlyMap<Schema, string> = new Map(),
): {
  readonly code: string;
  readonly functions: ReadonlyMap<string, string>;
  readonly deferred: readonly string[];
} {
  const generator = new Generator(exportNames);
  const functions = new Map<string, string>();
  for (const root of roots) {
    functions.set(root.name, generator.rootFunction(root.schema, root.name, root.sent === true));
  }
  return { code: generator.text(), functions, deferred: generator.deferred };
}

const PRELUDE = `/** Accepted: zod accepts the value and its output deep-equals it; the value is usable as is. */
export const ACCEPT = 0;
/** Rejected: zod rejects the value (run it for the issues). */
export const REJECT = 1;
/** Not decided here (a construct whose output differs from its input, a non-plain object): run zod. */
export const DEFER = 2;
export type Verdict = typeof ACCEPT | typeof REJECT | typeof DEFER;

/**
 * What a field's helper adds to the count of fields present when the field's value is refused:
 * far below any count (a small integer still while one or two fields are refused).
 */
const REFUSED = -1_000_000_000;

/** \`z.string().nullish()\`: 0 when absent, 1 for null or a string, REFUSED otherwise. */
function countString(x: unknown): number {
  return x === undefined ? 0 : x === null || typeof x === "string" ? 1 : REFUSED;
}

/** \`z.boolean().nullish()\`: 0 when absent, 1 for null or a boolean, REFUSED otherwise. */
function countBoolean(x: unknown): number {
  return x === undefined ? 0 : x === null || typeof x === "boolean" ? 1 : REFUSED;
}

/** A generated check, and the zod schema it was generated from (its answers are about that one). */
export interface GeneratedChecker {
  readonly schema: unknown;
  readonly check: (value: unknown) => Verdict;
  /** The deepest level of an object or array the schema describes (the value itself is level 1). */
  readonly levels: number;
}

// ---- The sealed check: the schema check and the sealing walk's findings in one walk. ----

/**
 * True while a sealed check runs and nothing in the value has needed the sealing walk so far:
 * every object met had its shape's keys and others the walk would not act on (each shape's \`…_extras\`), no
 * array had an own \`__proto__\` key, every value the schema does not describe passed
 * \`plainValue\`, every PaymentDetails passed the walk's card check. False outside
 * \`checkSealed\` (a plain check does none of this).
 */
let sealed = false;
/** Never added to: sites are added while \`sealed\` only, and \`addSite\` replaces it first. */
const NO_SITES: object[] = [];
/**
 * The payment objects the sealed check met (a PaymentDetails, or an object with card fields):
 * \`NO_SITES\` until the first (no array made for a body without one), and outside \`checkSealed\`.
 */
let cardSites: object[] = NO_SITES;
const ownKey = Object.prototype.hasOwnProperty;
/** Read with \`in\` by \`prototypeHoldsNoField\` (emitted after the checks). */
const PROTOTYPE: object = Object.prototype;
const EMPTY = {};
/**
 * How many levels a value the schema does not describe may have below the deepest object the
 * schema describes, within the request's depth limit (each such value sits at most one level
 * below that object).
 */
let openLevels = 0;

/** The enumerable keys of a plain object, own and inherited (nothing is inherited: checked first). */
function keyCount(o: object): number {
  let n = 0;
  for (const _key in o) n++;
  return n;
}

/**
 * Whether a key outside an object's shape, and its value, need nothing of the sealing walk: the
 * key is not \`__proto__\`, a card field or PaymentDetails (in any case), and the value holds no
 * object or array the walk would act on. Each shape's \`…_extras\` function asks it of every key
 * that is not one of the shape's fields.
 */
function plainExtra(key: string, value: unknown): boolean {
  if (sealedKey(key)) return false;
  return typeof value !== "object" || value === null || plainValue(value);
}

/**
 * A key the sealing walk acts on wherever it is: \`__proto__\`, a card field, PaymentDetails, those
 * in any ASCII case (src/core/card-keys.ts: \`paymentDetails\`, \`CARDNUMBER\` are card data too).
 * A key of none of their lengths costs one comparison; the value then goes to the walk.
 */
function sealedKey(key: string): boolean {
  switch (key.length) {
    case 9:
      return key === "__proto__" || isCvvNumberKey(key);
    case 10:
      return isCardNumberKey(key);
    case 14:
      return isPaymentDetailsKey(key);
    default:
      return false;
  }
}

/**
 * Whether a value the schema does not describe (an \`unknown\` field, a key outside a shape) needs
 * nothing of the sealing walk: no own \`__proto__\` key, no card field or PaymentDetails key (in any
 * case), and no
 * object or array deeper than \`openLevels\` below it (itself at level 1).
 */
function plainValue(root: object): boolean {
  const nodes: object[] = [root];
  const levels: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const level = levels.pop() as number;
    if (level > openLevels || ownKey.call(node, "__proto__")) return false;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === "object" && child !== null) {
          nodes.push(child);
          levels.push(level + 1);
        }
      }
      continue;
    }
    for (const key in node) {
      if (sealedKey(key)) return false;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        levels.push(level + 1);
      }
    }
  }
  return true;
}

/** A PaymentDetails value: an object whose card fields are strings or null, or null (seal.ts). */
function cardDetails(x: unknown): void {
  if (x === undefined || x === null) return;
  if (typeof x !== "object" || Array.isArray(x) || !cardField(x, "CardNumber") || !cardField(x, "CVVNumber")) {
    sealed = false;
    return;
  }
  addSite(x);
}

function cardField(x: object, key: string): boolean {
  const value = ownKey.call(x, key) ? (x as Record<string, unknown>)[key] : undefined;
  return value === undefined || value === null || typeof value === "string";
}

/** An object with its own card fields holds card data, whatever key it is under (seal.ts). */
function cardSelf(o: object): void {
  if (ownKey.call(o, "CardNumber") || ownKey.call(o, "CVVNumber")) addSite(o);
}

function addSite(o: object): void {
  if (cardSites === NO_SITES) cardSites = [o];
  else if (!cardSites.includes(o)) cardSites.push(o);
}

/**
 * Whether Object.prototype lends nothing to a body: no enumerable key, and nothing under a name the
 * checks read. Otherwise a field a body lacks reads as present, here and in zod alike (the engine
 * then checks a copy without prototypes; review second-speed2-4).
 */
export function prototypeIsClean(): boolean {
  for (const _key in EMPTY) return false;
  return prototypeHoldsNoField();
}

/**
 * The schema check and the sealing walk (src/core/seal.ts) in one walk, for a value the walk would
 * leave unchanged: the card objects the walk would find, when the checker ACCEPTs the value and
 * nothing in it needs the walk (no \`__proto__\` key, card field or PaymentDetails where its schema
 * has none; no level deeper than \`maxDepth\`, values the schema does not describe included; every
 * card field a string or null). For bodies of own enumerable data properties, as JSON.parse makes
 * them (the engine gives it no other). \`undefined\` otherwise: then seal and check as usual. Needs an
 * Object.prototype with no enumerable key and nothing under a name the checks read (otherwise
 * always \`undefined\`).
 */
export function checkSealed(
  checker: GeneratedChecker,
  value: unknown,
  maxDepth: number,
): readonly object[] | undefined {
  if (checker.levels > maxDepth) return undefined;
  if (!prototypeIsClean()) return undefined;
  sealed = true;
  cardSites = NO_SITES;
  openLevels = maxDepth - checker.levels;
  try {
    return checker.check(value) === ACCEPT && sealed ? cardSites : undefined;
  } finally {
    sealed = false;
    cardSites = NO_SITES;
  }
}`;

/**
 * A module of checkers for any schemas, for tests: the same code as the generated file, with the
 * functions exported as `CHECKS` by root name, and where the generator always defers.
 */
export function checkerModuleText(
  roots: ReadonlyArray<{ readonly name: string; readonly schema: Schema }>,
): { readonly text: string; readonly deferred: readonly string[] } {
  const { code, functions, deferred } = emitCheckers(roots);
  const entries = [...functions].map(([name, fn]) => `${JSON.stringify(name)}: ${fn},`);
  const text = [
    CARD_KEYS_IMPORT,
    PRELUDE,
    code,
    `export const CHECKS: Record<string, (value: unknown) => Verdict> = {\n${entries.join("\n")}\n};`,
  ].join("\n\n");
  return { text, deferred };
}

/** The text of src/generated/checkers.ts, formatted as Biome formats it. */
export function generateCheckersText(): string {
  const exportNames = new Map<Schema, string>();
  for (const [name, schema] of [...EXPORTED].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!exportNames.has(schema)) exportNames.set(schema, name);
  }
  const payloads = Object.entries(PAYLOAD_SCHEMAS) as [CallbackName, Source][];
  const roots = [
    ...payloads.map(([, source]) => ({ name: source.exportName, schema: schemaOf(source) })),
    { name: CART_SCHEMA.exportName, schema: schemaOf(CART_SCHEMA), sent: true },
  ];
  const { code, functions, deferred } = emitCheckers(roots, exportNames);
  const imports = new Map<string, Set<string>>();
  for (const source of [...payloads.map(([, source]) => source), CART_SCHEMA]) {
    const names = imports.get(source.module) ?? new Set<string>();
    names.add(source.exportName);
    imports.set(source.module, names);
  }
  const entry = (source: Source) =>
    `{ schema: ${source.exportName}, check: ${functions.get(source.exportName)}, levels: ${levelsOf(schemaOf(source))} }`;
  const text = [
    "// Generated by scripts/generate-checkers.ts from the zod schemas: do not edit. After changing a",
    "// schema, run `npm run generate` (a test fails while this file is out of date).",
    "//",
    "// Each function checks a value in place, without copying it, and answers ACCEPT only when zod",
    "// accepts the value and zod's output deep-equals it. The value must have been sealed first",
    "// (src/core/seal.ts: no own `__proto__` key anywhere), or be checked by `checkSealed`, which",
    "// answers only for a value the sealing walk would leave as it is.",
    "//",
    deferred.length === 0
      ? "// Constructs always left to zod: none."
      : `// Constructs always left to zod:\n${deferred.map((line) => `// - ${line}`).join("\n")}`,
    "",
    CARD_KEYS_IMPORT,
    'import type { CallbackName } from "../core/types.js";',
    ...[...imports]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([module, names]) => `import { ${[...names].sort().join(", ")} } from "${module}";`),
    "",
    PRELUDE,
    "",
    `/** Where the generator always defers to zod (empty when every construct is checked here). */`,
    `export const DEFERRED_TO_ZOD: readonly string[] = ${JSON.stringify(deferred)};`,
    "",
    "/** The check of each callback's payload, with the schema of its definition. */",
    "export const PAYLOAD_CHECKERS: { readonly [K in CallbackName]: GeneratedChecker } = {",
    ...payloads.map(([name, source]) => `${name}: ${entry(source)},`),
    "};",
    "",
    "/** The check of the cart a merchant returns from GetCheckoutCartInfo. */",
    `export const CART_CHECKER: GeneratedChecker = ${entry(CART_SCHEMA)};`,
    "",
    code,
    "",
  ].join("\n");
  return formatGenerated(text, CHECKERS_PATH);
}

/** The text as Biome writes it (formatting and import order), so that `biome check` passes. */
/** A generated file's text as Biome writes it (`path`: the file it goes to, for Biome's settings). */
export function formatGenerated(text: string, path: string): string {
  const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
  return execFileSync(process.execPath, [biome, "check", "--write", `--stdin-file-path=${path}`], {
    cwd: ROOT,
    input: text,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = generateCheckersText();
  writeFileSync(join(ROOT, CHECKERS_PATH), text);
  console.log(`wrote ${CHECKERS_PATH} (${text.length} characters)`);
}
