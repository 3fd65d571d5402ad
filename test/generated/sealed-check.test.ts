// Issue 13: the sealed check (`checkSealed`) does the schema check and finds what the sealing walk
// (src/core/seal.ts) would find, in one walk, and answers only for a body the walk would leave as
// it is. Side by side with the walk and the plain check, on fuzzed bodies built to trip it: a
// `__proto__` key anywhere, card fields and PaymentDetails keys where no schema expects them,
// numbers for card fields, unknown fields holding deep or hostile values, depth limits from 1 up.
//
// Whenever the sealed check answers (card objects found): the walk on a copy of the same body is
// ok, changes nothing, finds the same card objects (by path), and the plain check accepts. And
// for every sample, fixture and real capture, it does answer (the engine's usual way is taken).
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { sealBody } from "../../src/core/seal.js";
import {
  ACCEPT,
  checkSealed,
  type GeneratedChecker,
  PAYLOAD_CHECKERS,
} from "../../src/generated/checkers.js";
import { CALLBACK_NAMES } from "../../src/index.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";

const FIXTURES = new URL("../fixtures/", import.meta.url);
const VISA = "4111111111111111";

type Path = readonly (string | number)[];

function readJson(url: URL): unknown {
  return JSON.parse(readFileSync(url, "utf8"));
}

/** A deep copy keeping every own key as data, `__proto__` included (JSON text round trip). */
function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The real-shape captures of each callback's payload, by their file names' prefix. */
const REAL_SHAPE_PREFIXES: Partial<Record<string, string>> = {
  SendOrderToMerchant: "send-order-",
  PerformOrderPayment: "perform-order-payment-",
  NotifyOrderRefund: "notify-order-refund-",
  UpdateParcelDispatch: "update-parcel-dispatch-",
};

interface Subject {
  readonly label: string;
  readonly checker: GeneratedChecker;
  readonly seeds: unknown[];
}

function subjects(): Subject[] {
  const bySchema = new Map<unknown, Subject>();
  const realShapes = readdirSync(new URL("real-shapes/", FIXTURES));
  for (const callback of CALLBACK_NAMES) {
    const checker = PAYLOAD_CHECKERS[callback];
    const subject = bySchema.get(checker.schema) ?? { label: callback, checker, seeds: [] };
    bySchema.set(checker.schema, subject);
    subject.seeds.push(SAMPLE_BUILDERS[callback]());
    if (callback !== "GetCheckoutCartInfo") {
      subject.seeds.push(readJson(new URL(`${callback}.json`, FIXTURES)));
    }
    const prefix = REAL_SHAPE_PREFIXES[callback];
    if (prefix === undefined) continue;
    for (const file of realShapes.filter((name) => name.startsWith(prefix))) {
      subject.seeds.push(readJson(new URL(`real-shapes/${file}`, FIXTURES)));
    }
  }
  return [...bySchema.values()];
}

/** Every path to an object or array of the value (the root included). */
function containers(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value === null || typeof value !== "object") return out;
  out.push(prefix);
  for (const key of Object.keys(value)) {
    const next = Array.isArray(value) ? Number(key) : key;
    containers((value as Record<string, unknown>)[key], [...prefix, next], out);
  }
  return out;
}

function at(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node;
}

/** The path from the root to `target`, by identity. */
function pathTo(root: unknown, target: object, prefix: Path = []): Path | undefined {
  if (root === target) return prefix;
  if (root === null || typeof root !== "object") return undefined;
  for (const key of Object.keys(root)) {
    const next = Array.isArray(root) ? Number(key) : key;
    const found = pathTo((root as Record<string, unknown>)[key], target, [...prefix, next]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function nested(levels: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? { Deeper: value } : [value];
  return value;
}

/** Values that the sealing walk acts on, or that only look like it might. */
const HOSTILE: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    "text",
    42,
    true,
    VISA,
    Number(VISA),
    {},
    [],
    [VISA],
    { CardNumber: VISA, CVVNumber: "737" },
    { CardNumber: Number(VISA) },
    { CVVNumber: 737 },
    { PaymentDetails: { CardNumber: VISA } },
    { PaymentDetails: VISA },
    { PaymentDetails: null },
    { Note: { Inner: [{ CardNumber: VISA }] } },
    // Fix cardcase: the card keys in other cases are card data to the walk.
    { cardNumber: VISA, cvvNumber: "737" },
    { CARDNUMBER: Number(VISA) },
    { paymentDetails: { cardNumber: VISA } },
    { PAYMENTDETAILS: VISA },
    { paymentdetails: [{ CvvNumber: "737" }] },
    { Note: { Inner: [{ cvvnumber: "737" }] } },
    JSON.parse('{"__proto__":{"polluted":true}}'),
    JSON.parse('[{"a":{"__proto__":1}}]'),
    { constructor: { prototype: { x: 1 } } },
  ),
  fc.nat({ max: 12 }).map((levels) => nested(levels, "leaf")),
  fc.nat({ max: 12 }).map((levels) => nested(levels, { CVVNumber: "737" })),
  fc.jsonValue({ maxDepth: 3 }),
);

const KEY = fc.constantFrom(
  "__proto__",
  "CardNumber",
  "CVVNumber",
  "PaymentDetails",
  "cardNumber",
  "CVVNUMBER",
  "paymentDetails",
  "PAYMENTDETAILS",
  "InternationalPriceBeforeRounding",
  "Extra",
  "GiftCards",
  "MetaData",
  "Subs",
);

type Step =
  | { readonly kind: "add"; readonly key: string; readonly value: unknown }
  | { readonly kind: "replace"; readonly value: unknown };

const STEP: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), key: KEY, value: HOSTILE }),
  fc.record({ kind: fc.constant("replace" as const), value: HOSTILE }),
);

/** The body with one step applied at the container `pick` chooses (in place, on a copy). */
function apply(body: unknown, step: Step, pick: number): unknown {
  const all = containers(body);
  if (all.length === 0) return body;
  const path = all[pick % all.length] as Path;
  const target = at(body, path) as Record<string | number, unknown>;
  const value = copy(step.value);
  if (step.kind === "add" && !Array.isArray(target)) {
    Object.defineProperty(target, step.key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return body;
  }
  if (path.length === 0) return body;
  const parent = at(body, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1] as string | number] = value;
  return body;
}

interface Tally {
  answered: number;
  declined: number;
}

/** Runs both ways on copies of `body`; fails on any disagreement. */
function compare(checker: GeneratedChecker, body: unknown, maxDepth: number, tally: Tally): void {
  const text = JSON.stringify(body);
  const mine = copy(body);
  const found = checkSealed(checker, mine, maxDepth);
  // The sealed check changes nothing.
  expect(JSON.stringify(mine)).toBe(text);
  if (found === undefined) {
    tally.declined++;
    return;
  }
  tally.answered++;
  const theirs = copy(body);
  const sealing = sealBody(theirs, maxDepth);
  expect(sealing.ok, "the sealed check answered where the walk refuses").toBe(true);
  if (!sealing.ok) return;
  // The walk had nothing to delete: the body is as it was.
  expect(JSON.stringify(theirs)).toBe(text);
  expect(checker.check(theirs), "the sealed check answered where the check does not accept").toBe(
    ACCEPT,
  );
  const foundPaths = found.map((details) => JSON.stringify(pathTo(mine, details))).sort();
  const sealedPaths = sealing.cards.map((site) => JSON.stringify(site.path)).sort();
  expect(foundPaths).toStrictEqual(sealedPaths);
}

const DEPTHS = fc.constantFrom(1, 2, 3, 4, 5, 6, 7, 8, 10, 16, 64);

describe("the sealed check against the sealing walk and the plain check", () => {
  for (const subject of subjects()) {
    describe(subject.label, () => {
      it("answers for every sample, fixture and real capture, as the walk and check would", () => {
        expect(subject.seeds.length).toBeGreaterThan(0);
        const tally: Tally = { answered: 0, declined: 0 };
        for (const seed of subject.seeds) compare(subject.checker, seed, 64, tally);
        expect(tally.declined).toBe(0);
      });

      it("never answers where the walk would act or the check would not accept", () => {
        const tally: Tally = { answered: 0, declined: 0 };
        const seed = fc.nat({ max: subject.seeds.length - 1 }).map((i) => subject.seeds[i]);
        fc.assert(
          fc.property(
            seed,
            fc.array(fc.tuple(STEP, fc.nat()), { maxLength: 3 }),
            DEPTHS,
            (start, steps, maxDepth) => {
              let body = copy(start);
              for (const [step, pick] of steps) body = apply(body, step, pick);
              compare(subject.checker, body, maxDepth, tally);
            },
          ),
          { numRuns: 300 },
        );
        // Both answers were seen: the property was not vacuous.
        expect(tally.answered).toBeGreaterThan(0);
        expect(tally.declined).toBeGreaterThan(0);
      });
    });
  }
});

describe("the sealed check declines what it cannot vouch for", () => {
  const checker = PAYLOAD_CHECKERS.SendOrderToMerchant;
  const order = (): Record<string, unknown> =>
    copy(SAMPLE_BUILDERS.SendOrderToMerchant()) as unknown as Record<string, unknown>;

  it("answers for the sample order, with its payment object", () => {
    const body = order();
    expect(checkSealed(checker, body, 64)).toStrictEqual([body.PaymentDetails]);
  });

  it("declines when Object.prototype has an enumerable key (the key counts would be off)", () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.pollutedForTest = 1;
    try {
      expect(checkSealed(checker, order(), 64)).toBeUndefined();
    } finally {
      delete proto.pollutedForTest;
    }
    expect(checkSealed(checker, order(), 64)).toBeDefined();
  });

  it("declines when Object.prototype was given a key, even one that is not enumerable", () => {
    Object.defineProperty(Object.prototype, "OrderId", { value: "x", configurable: true });
    try {
      expect(checkSealed(checker, order(), 64)).toBeUndefined();
    } finally {
      delete (Object.prototype as Record<string, unknown>).OrderId;
    }
  });

  it("declines when a standard key of Object.prototype was swapped for a field's name (the count of its keys is unchanged)", () => {
    const proto = Object.prototype as Record<string, unknown>;
    const standard = Object.getOwnPropertyDescriptor(proto, "__lookupSetter__");
    expect(standard).toBeDefined();
    delete proto.__lookupSetter__;
    // A getter, not called by the check: the body lacks the required OrderId, and the check must
    // not take the prototype's for the body's.
    let calls = 0;
    Object.defineProperty(proto, "OrderId", {
      get: () => {
        calls++;
        return "from the prototype";
      },
      configurable: true,
    });
    try {
      const body = order();
      delete body.OrderId;
      expect(checkSealed(checker, body, 64)).toBeUndefined();
      expect(calls).toBe(0);
    } finally {
      delete proto.OrderId;
      Object.defineProperty(proto, "__lookupSetter__", standard as PropertyDescriptor);
    }
    expect(checkSealed(checker, order(), 64)).toBeDefined();
  });

  it("declines for a field name of any schema on Object.prototype, and answers for other non-enumerable keys", () => {
    const proto = Object.prototype as Record<string, unknown>;
    // A name only the cart's schema has, and one of a PaymentDetails.
    for (const key of ["merchantCartToken", "CardNumber", "Sku"]) {
      Object.defineProperty(proto, key, { value: undefined, configurable: true });
      try {
        expect(checkSealed(checker, order(), 64), key).toBeUndefined();
      } finally {
        delete proto[key];
      }
    }
    // A key no schema reads, not enumerable: no check reads it, nothing counts it.
    Object.defineProperty(proto, "noSchemaHasThisKey", { value: 1, configurable: true });
    try {
      const body = order();
      expect(checkSealed(checker, body, 64)).toStrictEqual([body.PaymentDetails]);
    } finally {
      delete proto.noSchemaHasThisKey;
    }
  });

  it("declines a depth limit below the schema's own depth", () => {
    expect(checker.levels).toBeGreaterThan(1);
    expect(checkSealed(checker, order(), checker.levels - 1)).toBeUndefined();
    // An unknown field holding an array (the sample's GiftCards) needs one level more.
    expect(checkSealed(checker, order(), checker.levels)).toBeUndefined();
    expect(checkSealed(checker, order(), checker.levels + 1)).toBeDefined();
  });

  it("declines an unknown field whose value nests deeper than the limit allows", () => {
    const body = order();
    body.Extra = nested(64 - checker.levels, "leaf");
    expect(checkSealed(checker, copy(body), 64)).toBeDefined();
    body.Extra = nested(64 - checker.levels + 1, "leaf");
    expect(checkSealed(checker, copy(body), 64)).toBeUndefined();
    expect(sealBody(copy(body), 64).ok).toBe(true);
  });

  it("declines an array with its own __proto__ key, known or not (the walk deletes it)", () => {
    const protoArray = (): unknown[] => {
      const array: unknown[] = [];
      Object.defineProperty(array, "__proto__", {
        value: { polluted: true },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return array;
    };
    const unknownField = order();
    unknownField.GiftCards = protoArray();
    const knownArray = order();
    knownArray.Products = Object.assign(protoArray(), (knownArray.Products as unknown[]).slice());
    for (const [body, array] of [
      [unknownField, "GiftCards"],
      [knownArray, "Products"],
    ] as const) {
      expect(checkSealed(checker, body, 64)).toBeUndefined();
      // The walk, which then runs, deletes the key.
      expect(sealBody(body, 64).ok).toBe(true);
      expect(Object.hasOwn(body[array] as object, "__proto__")).toBe(false);
    }
  });

  it("leaves the state of a plain check alone after a check that threw", () => {
    const body = order();
    Object.defineProperty(body, "OrderId", {
      enumerable: true,
      get() {
        throw new Error("getter");
      },
    });
    expect(() => checkSealed(checker, body, 64)).toThrow("getter");
    // Nothing of the sealed check is left on: the next answers as usual.
    expect(checkSealed(checker, order(), 64)).toBeDefined();
    expect(checker.check(order())).toBe(ACCEPT);
  });
});

// ---------------------------------------------------------------------------------------------
// Every place a schema describes, reached: the samples leave some arrays empty and some fields
// out, so a body is also built from each schema with every field present and every array holding
// one element. On it, each rule of the sealed check is tried where it applies.
// ---------------------------------------------------------------------------------------------

type Schema = z.core.$ZodType;

interface Full {
  readonly value: unknown;
  /** Paths to the fields the schema takes anything in (`unknown`). */
  readonly open: Path[];
}

/** A value of `schema` with everything present, and where its open fields are. */
function fullValue(schema: Schema, path: Path = [], open: Path[] = []): Full {
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const checks = ((def.checks as z.core.$ZodCheck[] | undefined) ?? []).map(
    (check) => check._zod.def as unknown as Record<string, unknown>,
  );
  switch (def.type) {
    case "string": {
      const min = checks.find((check) => check.check === "min_length")?.minimum as number;
      return { value: "x".repeat(Math.max(1, min ?? 1)), open };
    }
    case "number":
      return { value: 1, open };
    case "boolean":
      return { value: true, open };
    case "enum":
    case "literal":
      return { value: [...(schema._zod.values ?? [])][0], open };
    case "unknown":
    case "any":
      open.push(path);
      return { value: "open", open };
    case "optional":
    case "nullable":
      return fullValue(def.innerType as Schema, path, open);
    case "pipe":
      return fullValue(def.in as Schema, path, open);
    case "union":
      return fullValue((def.options as Schema[])[0] as Schema, path, open);
    case "array":
      return { value: [fullValue(def.element as Schema, [...path, 0], open).value], open };
    case "object": {
      const value: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(def.shape as Record<string, Schema>)) {
        value[key] = fullValue(field, [...path, key], open).value;
      }
      return { value, open };
    }
    default:
      throw new Error(`no full value for a ${String(def.type)} schema: add one`);
  }
}

/** Every path to an object (not an array) of the value. */
function objectsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value === null || typeof value !== "object") return out;
  if (!Array.isArray(value)) out.push(prefix);
  for (const key of Object.keys(value)) {
    const next = Array.isArray(value) ? Number(key) : key;
    objectsOf((value as Record<string, unknown>)[key], [...prefix, next], out);
  }
  return out;
}

function withProtoKey(target: object): void {
  Object.defineProperty(target, "__proto__", {
    value: { polluted: true },
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

describe("the sealed check on a body with every field of its schema", () => {
  for (const subject of subjects()) {
    describe(subject.label, () => {
      const { value: full, open } = fullValue(subject.checker.schema as Schema);

      it("answers for it (every field and element is one it vouches for)", () => {
        expect(subject.checker.check(copy(full))).toBe(ACCEPT);
        expect(checkSealed(subject.checker, copy(full), 64)).toBeDefined();
      });

      it("declines an own __proto__ key on any of its objects", () => {
        const paths = objectsOf(full);
        expect(paths.length).toBeGreaterThan(0);
        for (const path of paths) {
          const body = copy(full);
          withProtoKey(at(body, path) as object);
          expect(checkSealed(subject.checker, body, 64), path.join(".")).toBeUndefined();
        }
      });

      it("declines a field the schema takes anything in holding what the walk acts on", () => {
        const hostile = [
          () => JSON.parse('{"a":{"__proto__":{"polluted":true}}}'),
          () => ({ Note: [{ CardNumber: VISA }] }),
          () => ({ PaymentDetails: null }),
          () => ({ Note: [{ cardNumber: VISA }] }),
          () => ({ paymentDetails: { Pan: VISA } }),
        ];
        for (const path of open) {
          for (const make of hostile) {
            const body = copy(full);
            const parent = at(body, path.slice(0, -1)) as Record<string | number, unknown>;
            parent[path[path.length - 1] as string | number] = make();
            expect(checkSealed(subject.checker, body, 64), path.join(".")).toBeUndefined();
          }
          // A harmless object there is vouched for.
          const body = copy(full);
          const parent = at(body, path.slice(0, -1)) as Record<string | number, unknown>;
          parent[path[path.length - 1] as string | number] = { Note: ["a", 1, null] };
          expect(checkSealed(subject.checker, body, 64), path.join(".")).toBeDefined();
        }
      });
    });
  }
});

// Fix cardcase: a card key in another case is card data to the walk, wherever it is; the sealed
// check, which finds card objects under the exact keys only, must leave such a body to the walk.
describe("the sealed check on a body with a card key in another case", () => {
  for (const subject of subjects()) {
    it(`${subject.label}: declined on any of its objects, as the walk finds a card object there`, () => {
      const { value: full } = fullValue(subject.checker.schema as Schema);
      const cased: ReadonlyArray<[string, unknown]> = [
        ["cardNumber", VISA],
        ["CVVNUMBER", "737"],
        ["paymentDetails", { Pan: VISA }],
        ["PaymentDETAILS", { cardnumber: VISA }],
      ];
      const paths = objectsOf(full);
      for (const path of paths) {
        for (const [key, value] of cased) {
          const body = copy(full);
          (at(body, path) as Record<string, unknown>)[key] = copy(value);
          const label = `${path.join(".")}.${key}`;
          expect(checkSealed(subject.checker, body, 64), label).toBeUndefined();
          const sealing = sealBody(copy(body), 64);
          const where = key.length === 14 ? [...path, key] : path;
          expect(
            sealing.ok && sealing.cards.some((site) => site.path.join(".") === where.join(".")),
            label,
          ).toBe(true);
        }
      }
    });
  }
});

describe("the sealed check on a minimal body (nothing to spare in any count)", () => {
  for (const callback of CALLBACK_NAMES) {
    it(`${callback}: an own __proto__ key on any object is declined`, () => {
      const checker = PAYLOAD_CHECKERS[callback];
      const body = copy(SAMPLE_BUILDERS[callback]()) as unknown as Record<string, unknown>;
      // Every key the check does not need removed, deepest objects first.
      for (const path of objectsOf(body).reverse()) {
        const node = at(body, path) as Record<string, unknown>;
        for (const key of Object.keys(node)) {
          const value = node[key];
          delete node[key];
          if (checker.check(body) !== ACCEPT) node[key] = value;
        }
      }
      expect(checkSealed(checker, copy(body), 64)).toBeDefined();
      for (const path of objectsOf(body)) {
        const variant = copy(body);
        withProtoKey(at(variant, path) as object);
        expect(checkSealed(checker, variant, 64), path.join(".") || "(root)").toBeUndefined();
      }
    });
  }
});
