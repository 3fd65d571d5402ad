// decodeInPlace against a plain model of it written here (eager bookkeeping: a frame for every
// container, a path string for every value, a record for every change), on generated plans and
// payloads: arrays, `*`, an index beside a `*`, frozen containers, containers with their own
// prototype, a container reachable twice, nulls and non-string values. What a caller can see must
// be the same: the decoded payload and which of its containers are the input's own, the report
// (its order too), and the raw view with the copies it makes and the order it tells of them.
// Making decodeInPlace cheaper (issue 13) must not change any of it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFormValue, encodeFormValue, looksEncoded } from "../../src/decode/form.js";
import {
  compileDecoding,
  type DecodePolicy,
  type DecodingOptions,
  type DecodingPlanEntry,
} from "../../src/decode/policy.js";

type Container = Record<string | number, unknown>;

// ---------------------------------------------------------------------------------------------
// The model.

interface ModelNode {
  readonly name: string;
  readonly path: string;
  policy: DecodePolicy | undefined;
  readonly named: ModelNode[];
  star: ModelNode | undefined;
}

/** The path tree of a plan, built from its public entries (children in first-seen order). */
function modelTree(entries: readonly DecodingPlanEntry[]): ModelNode {
  const root: ModelNode = { name: "", path: "", policy: undefined, named: [], star: undefined };
  for (const { path, policy } of entries) {
    let at = root;
    for (const name of path.split(".")) {
      const full = at.path === "" ? name : `${at.path}.${name}`;
      const fresh = (): ModelNode => ({
        name,
        path: full,
        policy: undefined,
        named: [],
        star: undefined,
      });
      if (name === "*") {
        if (at.star === undefined) at.star = fresh();
        at = at.star;
      } else {
        let next = at.named.find((n) => n.name === name);
        if (next === undefined) {
          next = fresh();
          at.named.push(next);
        }
        at = next;
      }
    }
    at.policy = policy;
  }
  return root;
}

interface ModelFrame {
  readonly container: object;
  readonly up: ModelFrame | undefined;
  readonly slot: string | number;
}

interface ModelReport {
  decoded: string[];
  unchanged: string[];
  malformed: string[];
}

function copyKeepingPrototype(value: object): Container {
  // slice, not a spread: a hole stays a hole.
  if (Array.isArray(value)) return value.slice() as unknown as Container;
  const copy = Object.create(Object.getPrototypeOf(value)) as Container;
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: (value as Container)[key],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy;
}

function modelDecodeInPlace(entries: readonly DecodingPlanEntry[], input: unknown) {
  const report: ModelReport = { decoded: [], unchanged: [], malformed: [] };
  const changes: { frame: ModelFrame; slot: string | number; sent: string }[] = [];
  const standsFor = new Map<object, object>();

  const leaf = (value: string, policy: DecodePolicy, path: string): string => {
    if (policy === "off") {
      report.unchanged.push(path);
      return value;
    }
    if (policy === "auto" && !looksEncoded(value)) {
      report.unchanged.push(path);
      return value;
    }
    const decoded = decodeFormValue(value);
    if (decoded === undefined) report.malformed.push(path);
    else if (decoded === value) report.unchanged.push(path);
    else {
      report.decoded.push(path);
      return decoded;
    }
    return value;
  };

  const walk = (
    value: unknown,
    node: ModelNode,
    concrete: string | undefined,
    up: ModelFrame | undefined,
    slot: string | number,
  ): unknown => {
    if (value === null || typeof value !== "object") return value;
    const frame: ModelFrame = { container: value, up, slot };
    let copy: Container | undefined;
    const put = (key: string | number, next: unknown) => {
      if (copy === undefined) {
        if (Reflect.set(value, key, next)) return;
        copy = copyKeepingPrototype(value);
        standsFor.set(copy, standsFor.get(value) ?? value);
      }
      copy[key] = next;
    };
    const one = (
      item: unknown,
      child: ModelNode,
      key: string | number,
      path: string | undefined,
      fallback: string,
    ) => {
      if (item === null) return;
      if (typeof item === "string") {
        if (child.policy === undefined) return;
        const next = leaf(item, child.policy, path ?? fallback);
        if (next === item) return;
        changes.push({ frame, slot: key, sent: item });
        put(key, next);
      } else if (typeof item === "object") {
        const next = walk(item, child, path, frame, key);
        if (next !== item) put(key, next);
      }
    };
    if (node.star !== undefined && Array.isArray(value)) {
      const base = concrete ?? node.path;
      for (let i = 0; i < value.length; i++) {
        const path = base === "" ? String(i) : `${base}.${i}`;
        one(value[i], node.star, i, path, path);
      }
    }
    for (const child of node.named) {
      const holder = (copy ?? value) as Container;
      if (!Object.hasOwn(holder, child.name)) continue;
      const path = concrete === undefined ? undefined : `${concrete}.${child.name}`;
      one(holder[child.name], child, child.name, path, child.path);
    }
    return copy ?? value;
  };

  const payload = walk(input, modelTree(entries), undefined, undefined, "");
  const raw = (onCopy?: (original: object, copy: object) => void): unknown => {
    if (changes.length === 0) return input;
    const made = new Map<object, Container>();
    const copyFor = (seen: object): Container => {
      const original = standsFor.get(seen) ?? seen;
      let copy = made.get(original);
      if (copy === undefined) {
        copy = copyKeepingPrototype(original);
        made.set(original, copy);
        if (onCopy !== undefined) onCopy(original, copy);
      }
      return copy;
    };
    for (const change of changes) {
      copyFor(change.frame.container)[change.slot] = change.sent;
      let at = change.frame;
      while (at.up !== undefined) {
        const parentCopy = copyFor(at.up.container);
        const childCopy = copyFor(at.container);
        if (parentCopy[at.slot] === childCopy) break;
        parentCopy[at.slot] = childCopy;
        at = at.up;
      }
    }
    return copyFor(input as object);
  };
  return { payload, report, raw };
}

// ---------------------------------------------------------------------------------------------
// Generated inputs. A payload is described by a spec, built twice (once per implementation), so
// the two runs get equal but separate objects with the same frozen containers, prototypes and
// sharing.

type Spec =
  | { readonly leaf: unknown }
  | {
      readonly array: readonly Spec[];
      readonly frozen: boolean;
    }
  | {
      readonly object: readonly (readonly [string, Spec])[];
      readonly frozen: boolean;
      readonly proto: "plain" | "null" | "custom";
      /** Its `b`, if any, made an accessor or read-only (what a frozen object is, one key). */
      readonly special: Special;
    };

type Special = "none" | "read-only" | "setter" | "no-setter" | "throwing-setter";

/** A prototype with a planned name on it: only own values are decoded, never inherited ones. */
const CUSTOM_PROTO = Object.freeze({ b: "from+the+prototype" });
const KEYS = ["a", "b", "0", "1"] as const;

const leafValue = fc.oneof(
  fc.string({ unit: fc.constantFrom("%", "+", " ", "@", "2", "b", "e", "a", "0", "f", "z", "c") }),
  fc.string({ unit: "grapheme", maxLength: 6 }).map(encodeFormValue),
  fc.constantFrom("%", "100%", "%zz", "%E0%A4%A", "%ED%A0%80", "+44", "a+b", "%41", "plain"),
  fc.constantFrom(null, 0, 1, true, false),
);

const specs = fc.letrec<{ spec: Spec }>((tie) => ({
  spec: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leafValue.map((leaf): Spec => ({ leaf })),
    fc
      .record({ array: fc.array(tie("spec"), { maxLength: 3 }), frozen: fc.boolean() })
      .map((s): Spec => s),
    fc
      .record({
        object: fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie("spec")), {
          maxLength: 4,
          selector: ([key]) => key,
        }),
        frozen: fc.boolean(),
        proto: fc.constantFrom(
          "plain" as const,
          "plain" as const,
          "null" as const,
          "custom" as const,
        ),
        special: fc.constantFrom<Special>(
          "none",
          "none",
          "none",
          "none",
          "read-only",
          "setter",
          "no-setter",
          "throwing-setter",
        ),
      })
      .map((s): Spec => s),
  ),
})).spec;

/** Builds a payload from its spec; `plain`: every `b` an ordinary value (for `apply`, which never writes). */
function build(spec: Spec, plain = false): unknown {
  if ("leaf" in spec) return spec.leaf;
  if ("array" in spec) {
    const array = spec.array.map((item) => build(item, plain));
    return spec.frozen ? Object.freeze(array) : array;
  }
  const object: Container =
    spec.proto === "plain"
      ? {}
      : (Object.create(spec.proto === "null" ? null : CUSTOM_PROTO) as Container);
  // Defined, not assigned: the prototype's frozen `b` would refuse an assignment.
  for (const [key, value] of spec.object) {
    const built = build(value, plain);
    Object.defineProperty(
      object,
      key,
      key === "b" && spec.special !== "none" && !plain
        ? special(spec.special, built)
        : { value: built, writable: true, enumerable: true, configurable: true },
    );
  }
  return spec.frozen ? Object.freeze(object) : object;
}

function special(kind: Special, initial: unknown): PropertyDescriptor {
  let held = initial;
  const get = () => held;
  switch (kind) {
    case "read-only":
      return { value: initial, writable: false, enumerable: true, configurable: true };
    case "no-setter":
      return { get, enumerable: true, configurable: true };
    case "throwing-setter":
      return {
        get,
        set: () => {
          // A TypeError, like the engine's own refusal of a write: it must still reach the caller.
          throw new TypeError("the setter refuses");
        },
        enumerable: true,
        configurable: true,
      };
    default:
      return {
        get,
        set: (next: unknown) => {
          held = typeof next === "string" ? `set:${next}` : next;
        },
        enumerable: true,
        configurable: true,
      };
  }
}

/** Builds the payload; with `share`, the root's `b` becomes the very container at its `a`. */
function payloadOf(spec: Spec, share: boolean, plain = false): unknown {
  const root = build(spec, plain);
  if (share && root !== null && typeof root === "object" && !Object.isFrozen(root)) {
    const a = (root as Container).a;
    if (a !== null && typeof a === "object") {
      Object.defineProperty(root, "b", {
        value: a,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return root;
}

const segment = fc.constantFrom("a", "b", "0", "1", "*");
/**
 * Random paths, and paths that meet on the same values: an index beside a `*` (the element is
 * visited twice, a frozen one copied on the first visit and seen as its copy on the second),
 * nested `*`, a `*` at the root.
 */
const pathArb = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join(".")),
  fc.constantFrom(
    "a.*.a",
    "a.0.b",
    "a.*.a.*",
    "a.0.a.1.b",
    "a.1.b.*",
    "*.a",
    "0.b",
    "a.*.*",
    "a.1.0",
    "b",
    "a.b",
  ),
);
const policy = fc.constantFrom<DecodePolicy>("off", "always", "auto");
const optionsArb: fc.Arbitrary<DecodingOptions> = fc.record(
  {
    default: policy,
    fields: fc.dictionary(fc.oneof(pathArb, fc.constantFrom("a", "b", "0")), policy, {
      maxKeys: 3,
    }),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------------------------
// What a caller can see, written down so two runs over equal inputs compare with toStrictEqual.

/**
 * Labels every object by where it came from: the input's own containers by their place in a
 * depth-first walk of the input, the raw view's copies by the order `onCopy` was told of them,
 * anything else by the order this labeller first meets it.
 */
class Labeller {
  readonly #labels = new Map<object, string>();
  #fresh = 0;

  constructor(input: unknown) {
    let count = 0;
    const walk = (value: unknown) => {
      if (value === null || typeof value !== "object" || this.#labels.has(value)) return;
      this.#labels.set(value, `input#${count++}`);
      for (const key of Object.keys(value)) walk((value as Container)[key]);
    };
    walk(input);
  }

  copyTold(copy: object, index: number): void {
    if (!this.#labels.has(copy)) this.#labels.set(copy, `copy#${index}`);
  }

  label(value: object): string {
    let label = this.#labels.get(value);
    if (label === undefined) {
      label = `new#${this.#fresh++}`;
      this.#labels.set(value, label);
    }
    return label;
  }

  /** A value as a tree of plain data: each container with its label, prototype and entries. */
  describe(value: unknown): unknown {
    if (value === null || typeof value !== "object") return value;
    const proto = Object.getPrototypeOf(value);
    return {
      label: this.label(value),
      kind: Array.isArray(value)
        ? "array"
        : proto === null
          ? "null-proto"
          : proto === CUSTOM_PROTO
            ? "custom-proto"
            : "object",
      frozen: Object.isFrozen(value),
      entries: Object.keys(value).map((key) => [key, this.describe((value as Container)[key])]),
    };
  }
}

type Decoder = (payload: unknown) => {
  payload: unknown;
  report: unknown;
  raw(onCopy?: (original: object, copy: object) => void): unknown;
};

/** Decodes a fresh build of `spec` and writes down everything a caller can observe. */
function observe(decode: Decoder, spec: Spec, share: boolean, mutate: boolean) {
  const input = payloadOf(spec, share);
  const labels = new Labeller(input);
  let result: ReturnType<Decoder>;
  try {
    result = decode(input);
  } catch (error) {
    return { threw: String(error), input: labels.describe(input) };
  }
  const payload = labels.describe(result.payload);
  const report = result.report;
  const told: [string, string][] = [];
  const onCopy = (original: object, copy: object) => {
    labels.copyTold(copy, told.length);
    told.push([labels.label(original), labels.label(copy)]);
  };
  // The raw view after the caller changed the decoded payload: it must not follow.
  if (mutate && result.payload !== null && typeof result.payload === "object") {
    const top = result.payload as Container;
    for (const key of Object.keys(top)) {
      try {
        top[key] = "changed by the merchant";
      } catch {
        // Frozen, read-only or a setter that throws: the merchant's change did not happen.
      }
    }
  }
  const raw = labels.describe(result.raw(onCopy));
  const rawAgain = labels.describe(result.raw());
  return {
    payload,
    report,
    reportJson: JSON.stringify(report),
    reportKeys: Object.keys(report as object),
    told,
    raw,
    rawAgain,
    rawEqualsInput: JSON.stringify(labels.describe(input)),
  };
}

/** The plan, or undefined for paths compileDecoding refuses (two naming the same value). */
function planOf(fields: readonly string[], options: DecodingOptions) {
  try {
    return compileDecoding(fields, options);
  } catch {
    return undefined;
  }
}

describe("decodeInPlace, differential against a plain model", () => {
  it("the model itself agrees with apply on payload and report", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(pathArb, { minLength: 1, maxLength: 5 }),
        optionsArb,
        specs,
        (fields, options, spec) => {
          const plan = planOf(fields, options);
          fc.pre(plan !== undefined);
          const viaApply = plan.apply(payloadOf(spec, false, true));
          const viaModel = modelDecodeInPlace(plan.entries, payloadOf(spec, false, true));
          // apply's copies are plain objects (it keeps no prototype): compare the data only.
          expect(viaModel.payload).toEqual(viaApply.payload);
          expect(viaModel.report).toStrictEqual(viaApply.report);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("sees the same payload, report, raw view and copies as the model", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(pathArb, { minLength: 1, maxLength: 5 }),
        optionsArb,
        specs,
        fc.boolean(),
        fc.boolean(),
        (fields, options, spec, share, mutate) => {
          const plan = planOf(fields, options);
          fc.pre(plan !== undefined);
          const actual = observe((p) => plan.decodeInPlace(p), spec, share, mutate);
          const expected = observe((p) => modelDecodeInPlace(plan.entries, p), spec, share, mutate);
          expect(actual).toStrictEqual(expected);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("sees the same on payloads built to hit the plan's paths", () => {
    // Payloads shaped after the plan, so most generated paths lead somewhere.
    const shaped = (paths: readonly string[], leaves: readonly unknown[], frozen: boolean[]) => {
      let n = 0;
      const root: Container = {};
      for (const path of paths) {
        let at: Container = root;
        const names = path.split(".");
        names.forEach((name, i) => {
          const last = i === names.length - 1;
          const key = name === "*" ? "0" : name;
          const next = names[i + 1];
          if (last) {
            at[key] = leaves[n++ % leaves.length];
            if (name === "*") at[1] = leaves[n++ % leaves.length];
            return;
          }
          if (at[key] === null || typeof at[key] !== "object") {
            at[key] = next === "*" || next === "0" || next === "1" ? [] : {};
          }
          at = at[key] as Container;
        });
      }
      const freeze = (value: unknown) => {
        if (value === null || typeof value !== "object") return;
        for (const key of Object.keys(value)) freeze((value as Container)[key]);
        if (frozen[n++ % frozen.length]) Object.freeze(value);
      };
      freeze(root);
      return root;
    };
    fc.assert(
      fc.property(
        fc.uniqueArray(pathArb, { minLength: 1, maxLength: 6 }),
        optionsArb,
        fc.array(leafValue, { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        (fields, options, leaves, frozen) => {
          const plan = planOf(fields, options);
          fc.pre(plan !== undefined);
          const run = (decode: Decoder) => {
            const input = shaped(fields, leaves, frozen);
            const labels = new Labeller(input);
            const result = decode(input);
            const told: [string, string][] = [];
            const raw = result.raw((original, copy) => {
              labels.copyTold(copy, told.length);
              told.push([labels.label(original), labels.label(copy)]);
            });
            return {
              payload: labels.describe(result.payload),
              report: result.report,
              raw: labels.describe(raw),
              told,
            };
          };
          expect(run((p) => plan.decodeInPlace(p))).toStrictEqual(
            run((p) => modelDecodeInPlace(plan.entries, p)),
          );
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("gives plain, extensible report arrays, the same ones on every read", () => {
    const plan = compileDecoding(["A.*.Name", "A.0.Note", "B"]);
    const result = plan.decodeInPlace({
      A: [{ Name: "x+y", Note: "100%" }, { Name: "plain" }],
      B: "a%40b",
    });
    const { report } = result;
    expect(report.decoded).toBe(result.report.decoded);
    expect(report).toStrictEqual({
      decoded: ["A.0.Name", "B"],
      unchanged: ["A.1.Name"],
      malformed: ["A.0.Note"],
    });
    for (const list of [report.decoded, report.unchanged, report.malformed]) {
      expect(Array.isArray(list)).toBe(true);
      expect(Object.isFrozen(list)).toBe(false);
    }
    expect(Object.keys(report)).toStrictEqual(["decoded", "unchanged", "malformed"]);
  });
});
