// The generated checkers against zod, side by side, on fuzzed values (fast-check), for every
// schema the generator covers: each callback's payload and the cart a merchant returns.
//
// For every value: the checker ACCEPTs ⇒ zod accepts and zod's output deep-equals the value (so
// the engine may use the value itself); the checker REJECTs ⇒ zod rejects; zod accepts ⇒ the
// checker ACCEPTs or DEFERs, and it DEFERs only where a construct needs zod (an object or array
// without the plain prototype, a string within its limit in code points but not in UTF-16 units).
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { parseBounded } from "../../src/core/bounded-parse.js";
import {
  ACCEPT,
  CART_CHECKER,
  DEFER,
  DEFERRED_TO_ZOD,
  type GeneratedChecker,
  PAYLOAD_CHECKERS,
  REJECT,
  type Verdict,
} from "../../src/generated/checkers.js";
import { CALLBACK_NAMES, type CallbackName } from "../../src/index.js";
import { productSkuRule } from "../../src/schemas/product.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";

type Schema = z.core.$ZodType;
type Json = unknown;

const FIXTURES = new URL("../fixtures/", import.meta.url);

function readJson(url: URL): Json {
  return JSON.parse(readFileSync(url, "utf8"));
}

/** The real-shape captures of each callback's payload, by their file names' prefix. */
const REAL_SHAPE_PREFIXES: readonly [string, CallbackName | "cart"][] = [
  ["get-checkout-cart-info-answer-", "cart"],
  // The get-/post- captures of GetCheckoutCartInfo are wire parameters ("1" for a flag), which
  // the callback turns into its payload first: its payload seed is the sample.
  ["send-order-", "SendOrderToMerchant"],
  ["perform-order-payment-", "PerformOrderPayment"],
  ["notify-order-refund-", "NotifyOrderRefund"],
  ["update-parcel-dispatch-", "UpdateParcelDispatch"],
];

function realShapes(target: CallbackName | "cart"): Json[] {
  const directory = new URL("real-shapes/", FIXTURES);
  return readdirSync(directory)
    .filter((file) =>
      REAL_SHAPE_PREFIXES.some(([prefix, owner]) => owner === target && file.startsWith(prefix)),
    )
    .map((file) => readJson(new URL(file, directory)));
}

interface Subject {
  readonly label: string;
  readonly checker: GeneratedChecker;
  readonly seeds: readonly Json[];
}

/** One subject per distinct schema (the four gift-card callbacks share theirs). */
function subjects(): Subject[] {
  const bySchema = new Map<unknown, { label: string; checker: GeneratedChecker; seeds: Json[] }>();
  for (const callback of CALLBACK_NAMES) {
    const checker = PAYLOAD_CHECKERS[callback];
    const entry = bySchema.get(checker.schema) ?? { label: callback, checker, seeds: [] };
    bySchema.set(checker.schema, entry);
    entry.seeds.push(SAMPLE_BUILDERS[callback]());
    // test/fixtures/GetCheckoutCartInfo.json is the cart a merchant answers, not the request.
    if (callback !== "GetCheckoutCartInfo") {
      entry.seeds.push(readJson(new URL(`${callback}.json`, FIXTURES)));
    }
    entry.seeds.push(...realShapes(callback));
  }
  const cart = {
    label: "CheckoutCartInfo (the cart a merchant returns)",
    checker: CART_CHECKER,
    seeds: [readJson(new URL("GetCheckoutCartInfo.json", FIXTURES)), ...realShapes("cart")],
  };
  return [...bySchema.values(), cart];
}

// ---------------------------------------------------------------------------------------------
// Valid values from the schema itself: every field, present or absent, null where allowed.
// ---------------------------------------------------------------------------------------------

const FIELD_NAME = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((key) => key !== "__proto__" && !(key in Object.prototype));

const ANY_JSON = fc.jsonValue({ maxDepth: 2 });

function defOf(schema: Schema): Record<string, unknown> {
  return schema._zod.def as unknown as Record<string, unknown>;
}

function checksOf(schema: Schema): Record<string, unknown>[] {
  return ((defOf(schema).checks as z.core.$ZodCheck[] | undefined) ?? []).map(
    (check) => check._zod.def as unknown as Record<string, unknown>,
  );
}

/** An arbitrary of values zod accepts unchanged, built from the schema's definition. */
function validArbitrary(schema: Schema): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const checks = checksOf(schema);
  switch (def.type) {
    case "string": {
      const max = checks.find((check) => check.check === "max_length")?.maximum as
        | number
        | undefined;
      return fc.string({ maxLength: Math.min(max ?? 24, 24) });
    }
    case "number":
      return checks.some((check) => check.check === "number_format")
        ? fc.oneof(fc.integer(), fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER))
        : fc.oneof(
            fc.double({ noNaN: true, noDefaultInfinity: true }),
            fc.integer(),
            fc.constantFrom(0, -0, 1e21, 5e-324),
          );
    case "boolean":
      return fc.boolean();
    case "unknown":
    case "any":
      return ANY_JSON;
    case "optional":
      return fc.option(validArbitrary(def.innerType as Schema), { nil: undefined, freq: 4 });
    case "nullable":
      return fc.option(validArbitrary(def.innerType as Schema), { nil: null, freq: 4 });
    case "array":
      return fc.array(validArbitrary(def.element as Schema), { maxLength: 3 });
    case "union":
      return fc.oneof(...(def.options as Schema[]).map(validArbitrary));
    case "object": {
      const shape = def.shape as Record<string, Schema>;
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(shape)) {
        fields[key] = validArbitrary(field);
        if (field._zod.optin === undefined) required.push(key);
      }
      const known = fc.record(fields, { requiredKeys: required });
      const extra = fc.dictionary(
        FIELD_NAME.filter((key) => !(key in shape)),
        ANY_JSON,
        { maxKeys: 3 },
      );
      const refined = (def.checks as unknown[] | undefined)?.includes(productSkuRule);
      return fc.tuple(known, extra).map(([fieldsPart, extraPart]) => {
        const value: Record<string, unknown> = { ...fieldsPart, ...extraPart };
        if (refined && typeof value.Sku !== "string" && typeof value.SKU !== "string") {
          value.Sku = "SKU-1";
        }
        return value;
      });
    }
    default:
      throw new Error(`the test has no arbitrary for a ${String(def.type)} schema: add one`);
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations: wrong types, null, missing and extra fields, numbers as text, limits crossed…
// ---------------------------------------------------------------------------------------------

type Mutation =
  /** `needsZod`: a value only zod can tell about (DEFER is right for it, and only for such). */
  | { readonly kind: "replace"; readonly value: unknown; readonly needsZod?: boolean }
  | { readonly kind: "delete" }
  | { readonly kind: "add"; readonly key: string; readonly value: unknown }
  | { readonly kind: "retype" }
  | { readonly kind: "unplain" }
  | { readonly kind: "wrap" };

const EMOJI_100 = `${"\u{1F381}".repeat(60)}${"A".repeat(40)}`;

const REPLACEMENTS: readonly unknown[] = [
  null,
  undefined,
  "",
  "text",
  "10.00",
  "true",
  "null",
  0,
  -0,
  42,
  1.5,
  -7,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  [],
  [1, "a"],
  {},
  { Sku: "A", Price: 1, Quantity: 1 },
  "x".repeat(51),
  "y".repeat(101),
];

const MUTATION: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .constantFrom(...REPLACEMENTS)
      .map((value) => ({ kind: "replace" as const, value })),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "delete" as const }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.oneof(FIELD_NAME, fc.constantFrom("Price", "Sku", "OrderId", "productsList", "CardId")),
        ANY_JSON,
      )
      .map(([key, value]) => ({ kind: "add" as const, key, value })),
  },
  { weight: 3, arbitrary: fc.constant({ kind: "retype" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "unplain" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "wrap" as const }) },
  {
    weight: 1,
    arbitrary: fc.constant({ kind: "replace" as const, value: EMOJI_100, needsZod: true }),
  },
);

type Path = readonly (string | number)[];

/** Every path to a node of the value (the root included). */
function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) paths(value[index], [...prefix, index], out);
  } else if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) {
      paths((value as Record<string, unknown>)[key], [...prefix, key], out);
    }
  }
  return out;
}

/** The value with one mutation applied at `path` (a fresh copy: seeds stay intact). */
function mutate(
  root: unknown,
  path: Path,
  mutation: Mutation,
): { value: unknown; needsZod: boolean } {
  const copy = structuredClone(root);
  let needsZod = false;
  const replace = (current: unknown): unknown => {
    switch (mutation.kind) {
      case "replace":
        needsZod = mutation.needsZod === true;
        return mutation.value;
      case "retype":
        // A number as its text, a text as a number, a flag as text: what a lax producer sends.
        if (typeof current === "number") return String(current);
        if (typeof current === "string") return current === "" ? 0 : Number(current);
        if (typeof current === "boolean") return current ? "true" : 1;
        if (Array.isArray(current)) return { ...current };
        if (current !== null && typeof current === "object") return Object.values(current);
        return current === null ? "null" : null;
      case "unplain":
        if (Array.isArray(current)) {
          needsZod = true;
          return Object.setPrototypeOf([...current], Object.create(Array.prototype));
        }
        if (current !== null && typeof current === "object") {
          needsZod = true;
          return Object.assign(Object.create(null), current);
        }
        return current;
      case "wrap":
        return [current];
      default:
        return current;
    }
  };
  if (path.length === 0) {
    if (
      mutation.kind === "add" &&
      copy !== null &&
      typeof copy === "object" &&
      !Array.isArray(copy)
    ) {
      (copy as Record<string, unknown>)[mutation.key] = mutation.value;
      return { value: copy, needsZod };
    }
    if (mutation.kind === "delete" || mutation.kind === "add") return { value: copy, needsZod };
    return { value: replace(copy), needsZod };
  }
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  const current = parent[last];
  if (mutation.kind === "delete") {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (mutation.kind === "add") {
    if (current !== null && typeof current === "object" && !Array.isArray(current)) {
      (current as Record<string, unknown>)[mutation.key] = mutation.value;
    } else {
      parent[last] = mutation.value;
    }
  } else {
    parent[last] = replace(current);
  }
  return { value: copy, needsZod };
}

// ---------------------------------------------------------------------------------------------
// The comparison.
// ---------------------------------------------------------------------------------------------

interface Tally {
  accepted: number;
  rejected: number;
  zodAccepted: number;
  deferred: number;
  deferredWhereZodAccepts: number;
}

/** Checks one value both ways; returns the verdict. Throws (fails the property) on a mismatch. */
function compare(
  checker: GeneratedChecker,
  value: unknown,
  needsZod: boolean,
  tally: Tally,
): Verdict {
  const verdict = checker.check(value);
  const result = (
    checker.schema as Schema & { safeParse(value: unknown): z.ZodSafeParseResult<unknown> }
  ).safeParse(value);
  if (result.success) tally.zodAccepted++;
  agreesBounded(checker.schema as Schema, value, result);
  if (verdict === ACCEPT) {
    tally.accepted++;
    expect(result.success, "the checker accepted what zod rejects").toBe(true);
    // zod's output is exactly the value: the engine hands the value itself on.
    expect(result.data).toStrictEqual(value);
  } else if (verdict === REJECT) {
    tally.rejected++;
    expect(result.success, "the checker rejected what zod accepts").toBe(false);
  } else {
    expect(verdict).toBe(DEFER);
    tally.deferred++;
    if (result.success) {
      tally.deferredWhereZodAccepts++;
      expect(needsZod, "the checker deferred a value nothing in it needs zod for").toBe(true);
    }
  }
  return verdict;
}

/**
 * What the engine runs when the checker does not accept (src/core/bounded-parse.ts): zod's
 * verdict, and issues zod gives too, in its order (a subsequence of zod's list), or inside the
 * union zod names `invalid_union` (the option that fails inside a list). Never an issue zod does
 * not have.
 */
function agreesBounded(
  schema: Schema,
  value: unknown,
  result: z.ZodSafeParseResult<unknown>,
): void {
  const bounded = parseBounded(schema as z.ZodType, value, 10);
  expect(bounded.success, "the bounded parse and zod disagree").toBe(result.success);
  if (bounded.success || result.success) return;
  expect(bounded.issues.length).toBeGreaterThan(0);
  const key = (issue: z.core.$ZodIssue) => `${issue.path.join(".")}: ${issue.message}`;
  const zodKeys = result.error.issues.map(key);
  const unions = result.error.issues
    .filter((issue) => issue.code === "invalid_union")
    .map((issue) => issue.path.join("."));
  let from = 0;
  for (const issue of bounded.issues) {
    const at = zodKeys.indexOf(key(issue), from);
    if (at >= 0) {
      from = at + 1;
      continue;
    }
    const path = issue.path.join(".");
    expect(
      unions.some((union) => path.startsWith(union)),
      `${key(issue)} is not among zod's issues ${JSON.stringify(zodKeys)}`,
    ).toBe(true);
  }
}

const RUNS = { seeds: 400, generated: 150, generatedMutated: 250 };

describe("generated checkers against zod", () => {
  it("the generator checks every construct of the current schemas itself", () => {
    expect(DEFERRED_TO_ZOD).toStrictEqual([]);
  });

  for (const subject of subjects()) {
    describe(subject.label, () => {
      const tally: Tally = {
        accepted: 0,
        rejected: 0,
        zodAccepted: 0,
        deferred: 0,
        deferredWhereZodAccepts: 0,
      };

      it("accepts every sample and fixture, as zod does", () => {
        expect(subject.seeds.length).toBeGreaterThan(0);
        for (const seed of subject.seeds) {
          expect(compare(subject.checker, seed, false, tally)).toBe(ACCEPT);
        }
      });

      it("agrees with zod on mutated samples", () => {
        const seed = fc.nat({ max: subject.seeds.length - 1 }).map((index) => subject.seeds[index]);
        // Each mutation at a path of the value as the previous mutations left it.
        const mutations = fc.array(fc.tuple(MUTATION, fc.nat()), { minLength: 1, maxLength: 3 });
        fc.assert(
          fc.property(seed, mutations, (start, steps) => {
            let value: unknown = start;
            let needsZod = false;
            for (const [mutation, pick] of steps) {
              const all = paths(value);
              const next = mutate(value, all[pick % all.length] as Path, mutation);
              value = next.value;
              needsZod ||= next.needsZod;
            }
            compare(subject.checker, value, needsZod, tally);
          }),
          { numRuns: RUNS.seeds },
        );
      });

      it("accepts values built from the schema, and agrees with zod once they are mutated", () => {
        const valid = validArbitrary(subject.checker.schema as Schema);
        fc.assert(
          fc.property(valid, (value) => {
            expect(compare(subject.checker, value, false, tally)).toBe(ACCEPT);
          }),
          { numRuns: RUNS.generated },
        );
        const mutated = valid.chain((value) =>
          fc.tuple(fc.constant(value), fc.constantFrom(...paths(value)), MUTATION),
        );
        fc.assert(
          fc.property(mutated, ([value, path, mutation]) => {
            const next = mutate(value, path, mutation);
            compare(subject.checker, next.value, next.needsZod, tally);
          }),
          { numRuns: RUNS.generatedMutated },
        );
      });

      it("saw both answers, and deferred only where zod was needed", () => {
        // Mutations must reach both sides, or the comparison proves little.
        expect(tally.accepted).toBeGreaterThan(0);
        expect(tally.rejected).toBeGreaterThan(0);
        expect(tally.deferredWhereZodAccepts).toBeLessThanOrEqual(tally.deferred);
        if (process.env.CHECKER_TALLY) console.log(subject.label, JSON.stringify(tally));
      });
    });
  }
});
