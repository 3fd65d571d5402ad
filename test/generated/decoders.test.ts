// The generated decoders (src/generated/decoders.ts) against the plan they unroll: on payloads as
// JSON.parse makes them, shaped by each field list (values plain, encoded, malformed, not
// strings; fields missing; extra keys; arrays under `*` holding objects, strings, nulls; arrays and
// strings where objects are planned), the payload, the report and the raw view must be exactly
// `compileDecoding(fields).decodeInPlace`'s. The same property must catch broken generated code.
import { readFileSync } from "node:fs";
import { transformSync } from "esbuild";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DECODERS_PATH,
  decoderModuleText,
  ENCODED_FIELD_LISTS,
  emitDecoder,
  generateDecodersText,
} from "../../scripts/generate-decoders.js";
import * as lists from "../../src/callbacks/encoded-fields.js";
import * as form from "../../src/decode/form.js";
import * as policy from "../../src/decode/policy.js";
import {
  compileDecoding,
  type DecodedInPlace,
  type PathNode,
  pathTreeOf,
} from "../../src/decode/policy.js";
import { PAYLOAD_DECODERS } from "../../src/generated/decoders.js";
import { CALLBACK_NAMES } from "../../src/index.js";
import { DEFINITIONS } from "./definitions.js";

type Decode = (payload: unknown) => DecodedInPlace<unknown> | undefined;
type Container = Record<string | number, unknown>;

describe("src/generated/decoders.ts", () => {
  it("is what the encoded-field lists generate today", () => {
    const committed = readFileSync(new URL(`../../${DECODERS_PATH}`, import.meta.url), "utf8");
    const fresh = generateDecodersText();
    if (fresh !== committed) {
      expect.fail(
        `${DECODERS_PATH} is out of date with the encoded-field lists: run npm run generate, and commit the file`,
      );
    }
  });

  it("has no runtime code generation (Workers and CSP hosts forbid it)", () => {
    const committed = readFileSync(new URL(`../../${DECODERS_PATH}`, import.meta.url), "utf8");
    expect(committed).not.toMatch(/new Function|\beval\(/);
  });

  it("has a decoder for every callback with encoded fields, from its definition's list", () => {
    for (const definition of Object.values(DEFINITIONS)) {
      const { name, encodedFields } = definition;
      const generated = PAYLOAD_DECODERS[name];
      if (encodedFields.length === 0) expect(generated, name).toBeUndefined();
      else expect(generated?.fields, name).toStrictEqual(encodedFields);
    }
    expect(Object.keys(DEFINITIONS).length).toBe(CALLBACK_NAMES.length - 1);
    expect(ENCODED_FIELD_LISTS.GetCheckoutCartInfo).toBeUndefined();
    expect(PAYLOAD_DECODERS.GetCheckoutCartInfo).toBeUndefined();
  });

  it("refuses a path whose segment a named load could read from a prototype", () => {
    // The plan itself refuses `__proto__`, `constructor` and `prototype`.
    expect(() => emitDecoder("d", ["A.constructor"])).toThrow(TypeError);
    for (const segment of ["toString", "valueOf", "length", "hasOwnProperty", "isPrototypeOf"]) {
      expect(emitDecoder("d", [`A.${segment}`]), segment).toHaveProperty("refused");
    }
    expect(emitDecoder("d", ["A.0"])).toHaveProperty("refused");
    expect(emitDecoder("d", ["A-B.C"])).toHaveProperty("refused");
    expect(emitDecoder("d", ["*.C"])).toHaveProperty("refused");
    expect(emitDecoder("d", ["A.*.C", "A.B"])).toHaveProperty("code");
  });
});

// ---------------------------------------------------------------------------------------------
// Payloads shaped by a path tree.

const STRINGS: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("plain", "", "+44 20", "a+b", "a%40b.com", "%2B44", "Jos%C3%A9", "%E2%82%AC5"),
  fc.constantFrom("%", "100%", "%zz", "%E0%A4%A", "%ED%A0%80", "%C3", "%41", "%20"),
  fc
    .array(
      fc.constantFrom("a", "b c", "+", "%40", "%2B", "%C3%A9", "%F0%9F%98%80", "%", "%zz", "é"),
      { maxLength: 5 },
    )
    .map((parts) => parts.join("")),
  fc.string({ maxLength: 6 }),
);

const OTHER: fc.Arbitrary<unknown> = fc.constantFrom(null, 0, 1.5, true, false);
const EXTRA_KEY = fc.constantFrom("Extra", "Name", "Salutation2", "Id", "Notes");
const JSON_VALUE: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });

/** A value at a node: mostly what the plan expects there, sometimes anything else. */
function valueAt(node: PathNode, depth: number): fc.Arbitrary<unknown> {
  const options: fc.WeightedArbitrary<unknown>[] = [
    { weight: node.policy === undefined ? 1 : 6, arbitrary: STRINGS },
    { weight: 1, arbitrary: OTHER },
  ];
  if (node.children.length > 0 && depth < 6) {
    options.push({ weight: 12, arbitrary: objectAt(node, depth) });
  }
  if (node.wildcard !== undefined && depth < 6) {
    const wildcard = node.wildcard;
    options.push({
      weight: 12,
      arbitrary: fc.array(valueAt(wildcard, depth + 1), { maxLength: 4 }),
    });
  } else {
    // An array where an object or a string is planned: the plan reads no named child of it.
    options.push({ weight: 1, arbitrary: fc.array(fc.oneof(STRINGS, OTHER), { maxLength: 2 }) });
  }
  return fc.oneof(...options);
}

function objectAt(node: PathNode, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const child of node.children) shape[child.segment] = valueAt(child, depth + 1);
  return fc
    .tuple(
      fc.record(shape, { requiredKeys: [] }),
      fc.dictionary(EXTRA_KEY, JSON_VALUE, { maxKeys: 2 }),
      fc.boolean(),
    )
    .map(([planned, extra, extraFirst]) =>
      extraFirst ? { ...extra, ...planned } : { ...planned, ...extra },
    );
}

function payloads(fields: readonly string[]): fc.Arbitrary<unknown> {
  return objectAt(pathTreeOf(compileDecoding(fields)), 0);
}

// ---------------------------------------------------------------------------------------------
// The comparison.

/** Every container of a value with its path (containers are never shared in JSON.parse's output). */
function containersOf(value: unknown, path = "$", out = new Map<object, string>()) {
  if (typeof value !== "object" || value === null) return out;
  out.set(value, path);
  for (const [key, item] of Object.entries(value)) containersOf(item, `${path}.${key}`, out);
  return out;
}

/** For each container of `value`: its path, and the path of the input container it is (or "new"). */
function identities(value: unknown, input: Map<object, string>): string[] {
  return [...containersOf(value)].map(([object, path]) => `${path}=${input.get(object) ?? "new"}`);
}

interface Run {
  readonly input: Map<object, string>;
  readonly result: DecodedInPlace<unknown>;
  readonly inputRoot: unknown;
}

function run(decode: (payload: unknown) => DecodedInPlace<unknown> | undefined, text: string): Run {
  const inputRoot: unknown = JSON.parse(text);
  const input = containersOf(inputRoot);
  const result = decode(inputRoot);
  if (result === undefined) throw new Error("the generated decoder gave up");
  return { input, result, inputRoot };
}

/** Throws (an assertion error) unless the two runs cannot be told apart. */
function sameOutcome(expected: Run, actual: Run): void {
  const a = expected.result;
  const b = actual.result;
  expect(b.report).toStrictEqual(a.report);
  expect(b.payload).toStrictEqual(a.payload);
  // Decoded in place: the input itself, each of its containers where it was.
  expect(b.payload === actual.inputRoot).toBe(a.payload === expected.inputRoot);
  expect(identities(b.payload, actual.input)).toStrictEqual(identities(a.payload, expected.input));
  const copiesA: [string | undefined, unknown][] = [];
  const copiesB: [string | undefined, unknown][] = [];
  const rawA = a.raw((original, copy) => copiesA.push([expected.input.get(original), copy]));
  const rawB = b.raw((original, copy) => copiesB.push([actual.input.get(original), copy]));
  expect(rawB).toStrictEqual(rawA);
  // The same copies, of the same containers, in the same order; the rest shared with the input.
  expect(copiesB).toStrictEqual(copiesA);
  expect(identities(rawB, actual.input)).toStrictEqual(identities(rawA, expected.input));
  // The raw view leaves the decoded payload as it was.
  expect(b.payload).toStrictEqual(a.payload);
}

function property(fields: readonly string[], decode: Decode) {
  const plan = compileDecoding(fields);
  return fc.property(payloads(fields), (payload) => {
    const text = JSON.stringify(payload);
    sameOutcome(
      run((value) => plan.decodeInPlace(value), text),
      run(decode, text),
    );
  });
}

/** The distinct generated decoders, with their field lists. */
const GENERATED = [
  ...new Map(
    Object.values(PAYLOAD_DECODERS).map((generated) => [generated.decode, generated.fields]),
  ),
];

describe("each generated decoder is the default plan's decodeInPlace", () => {
  for (const [decode, fields] of GENERATED) {
    it(`${decode.name} (${fields.length} paths)`, () => {
      fc.assert(property(fields, decode), { numRuns: fields.length > 10 ? 300 : 500 });
    });
  }

  it("the payloads exercise every outcome: decoded, malformed, unchanged, missing", () => {
    const fields = lists.ORDER_ENCODED_FIELDS;
    const plan = compileDecoding(fields);
    const seen = { decoded: 0, malformed: 0, unchanged: 0 };
    for (const payload of fc.sample(payloads(fields), { numRuns: 100, seed: 13 })) {
      const { report } = plan.decodeInPlace(payload);
      seen.decoded += report.decoded.length;
      seen.malformed += report.malformed.length;
      seen.unchanged += report.unchanged.length;
    }
    expect(seen.decoded).toBeGreaterThan(100);
    expect(seen.malformed).toBeGreaterThan(20);
    expect(seen.unchanged).toBeGreaterThan(100);
  });

  it("a refund's credit notes, under two `*`, at their concrete paths", () => {
    const decode = PAYLOAD_DECODERS.NotifyOrderRefund?.decode as Decode;
    const body = {
      RefundDocument: [{ CreditNoteUrl: "https%3A%2F%2Fa" }, "x%40", null],
      Refunds: [
        null,
        { RefundDocument: [{ CreditNoteUrl: "b" }, { CreditNoteUrl: "%zz" }] },
        { RefundDocument: [{ CreditNoteUrl: "c+d" }] },
      ],
    };
    const result = decode(structuredClone(body));
    expect(result?.report).toStrictEqual({
      decoded: ["RefundDocument.0.CreditNoteUrl", "Refunds.2.RefundDocument.0.CreditNoteUrl"],
      unchanged: ["Refunds.1.RefundDocument.0.CreditNoteUrl"],
      malformed: ["Refunds.1.RefundDocument.1.CreditNoteUrl"],
    });
    expect(result?.raw()).toStrictEqual(body);
  });

  it("gives up (the plan decodes) when Object.prototype holds a value under a field's name", () => {
    const decode = PAYLOAD_DECODERS.SendOrderToMerchant?.decode as Decode;
    const body = { PrimaryShipping: { FirstName: "Jos%C3%A9" } };
    expect(decode(structuredClone(body))).toBeDefined();
    Object.defineProperty(Object.prototype, "City", {
      value: "from%20the%20prototype",
      configurable: true,
      writable: true,
    });
    try {
      expect(decode(structuredClone(body))).toBeUndefined();
    } finally {
      delete (Object.prototype as Container).City;
    }
    expect(decode(structuredClone(body))).toBeDefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Broken generated code: the property must tell it apart from the plan.

/** Decoders compiled from generated text (the test may; the library never does). */
function compile(text: string): Record<string, Decode> {
  const { code } = transformSync(text, { loader: "ts", format: "cjs" });
  const modules: Record<string, unknown> = {
    "../decode/form.js": form,
    "../decode/policy.js": policy,
  };
  const require = (specifier: string) => {
    const module = modules[specifier];
    if (module === undefined) throw new Error(`unexpected import ${specifier}`);
    return module;
  };
  const module = { exports: {} as { DECODERS: Record<string, Decode> } };
  new Function("require", "module", "exports", code)(require, module, module.exports);
  return module.exports.DECODERS;
}

/** Whether the differential property finds a difference between `decode` and the plan. */
function caught(fields: readonly string[], decode: Decode): boolean {
  return fc.check(property(fields, decode), { numRuns: 300, seed: 1 }).failed;
}

describe("the generator on lists beyond the library's", () => {
  const LISTS: Record<string, readonly string[]> = {
    // A planned value that is also a container of planned values.
    Nested: ["A", "A.B", "A.B.C", "D"],
    // An array's elements, and fields of its elements' elements.
    Arrays: ["A.*", "A.*.B", "A.*.*.C", "E.F"],
    Deep: ["A.B.C.D.E", "A.B.X", "A.Y", "Z"],
    Stars: ["A.*.B.*.C.*.D", "A.*.E"],
  };
  const { text, refused } = decoderModuleText(LISTS);
  const decoders = compile(text);

  it("makes each of them, and each is the plan's decodeInPlace", () => {
    expect(refused).toStrictEqual([]);
    for (const [name, fields] of Object.entries(LISTS)) {
      fc.assert(property(fields, decoders[name] as Decode), { numRuns: 300 });
    }
  });
});

describe("the property catches a broken decoder", () => {
  const order = lists.ORDER_ENCODED_FIELDS;
  const refund = lists.REFUND_ENCODED_FIELDS;

  it("the unbroken module text passes", () => {
    const { DecodeOrder, DecodeRefund } = compile(
      decoderModuleText({ DecodeOrder: order, DecodeRefund: refund }).text,
    );
    expect(caught(order, DecodeOrder as Decode)).toBe(false);
    expect(caught(refund, DecodeRefund as Decode)).toBe(false);
  });

  it("two fields visited in the other order", () => {
    const swapped = [...order];
    [swapped[1], swapped[2]] = [swapped[2] as string, swapped[1] as string];
    const { Swapped } = compile(decoderModuleText({ Swapped: swapped }).text);
    expect(caught(order, Swapped as Decode)).toBe(true);
  });

  it("a field skipped", () => {
    const skipped = order.filter((path) => path !== "PrimaryBilling.City");
    const { Skipped } = compile(decoderModuleText({ Skipped: skipped }).text);
    expect(caught(order, Skipped as Decode)).toBe(true);
  });

  it("a wrong concrete path under `*`", () => {
    const { text } = decoderModuleText({ Refund: refund });
    const broken = text.replace(
      /`RefundDocument\.\$\{(i\d+)\}\.CreditNoteUrl`/,
      (_match, index: string) => `\`RefundDocument.\${${index} + 1}.CreditNoteUrl\``,
    );
    expect(broken).not.toBe(text);
    expect(caught(refund, compile(broken).Refund as Decode)).toBe(true);
  });

  it("a decoded value not written back (the report alone is right)", () => {
    const { text } = decoderModuleText({ Order: order });
    const broken = text.replace(/\n\s*o\d+\.City = d\d+;/, "");
    expect(broken).not.toBe(text);
    expect(caught(order, compile(broken).Order as Decode)).toBe(true);
  });

  it("a frame with the wrong key (only the raw view differs)", () => {
    const { text } = decoderModuleText({ Order: order });
    const broken = text.replace('key: "SecondaryShipping" };', 'key: "PrimaryShipping" };');
    expect(broken).not.toBe(text);
    expect(caught(order, compile(broken).Order as Decode)).toBe(true);
  });
});
