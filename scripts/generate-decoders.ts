/**
 * Writes src/generated/decoders.ts: for each callback with encoded fields, one function that does
 * what `compileDecoding(fields).decodeInPlace(payload)` does (the default plan: `auto` on every
 * path) with the path tree unrolled into named property loads (`o.PrimaryShipping`,
 * `a.FirstName`), in the order the plan's walk (`visitInPlace`, src/decode/policy.ts) visits:
 * at each node the `*` over an array's elements first, then the named children in the tree's
 * order. Same payload, same report (lists, order, concrete paths), same `raw()` (the changes are
 * recorded with the same frames, built only for containers where a value changed and their
 * ancestors).
 *
 * The tree is the plan's own (`pathTreeOf(compileDecoding(fields))`), so the order cannot drift
 * from the walk's. A callback is left out (the engine then runs the plan) when a path segment is
 * not a plain identifier, is a name Object.prototype or Array.prototype has (a named load could
 * read an inherited value where the walk's own check says absent), or is all digits (an array
 * index: the walk reads an array's named children, which an array from JSON.parse never has only
 * because such names are not indices).
 *
 * `npm run generate` writes the file; `generateDecodersText()` returns its text (formatted by
 * Biome), which the stale-file test compares with the committed file.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DISPATCH_ENCODED_FIELDS,
  GIFT_CARD_ENCODED_FIELDS,
  ORDER_ENCODED_FIELDS,
  REFUND_ENCODED_FIELDS,
  RMA_ENCODED_FIELDS,
} from "../src/callbacks/encoded-fields.js";
import type { CallbackName } from "../src/core/types.js";
import { compileDecoding, type PathNode, pathTreeOf } from "../src/decode/policy.js";
import { formatGenerated } from "./generate-checkers.js";

/** The lists of src/callbacks/encoded-fields.ts, by export name. */
const LISTS = {
  ORDER_ENCODED_FIELDS,
  RMA_ENCODED_FIELDS,
  DISPATCH_ENCODED_FIELDS,
  GIFT_CARD_ENCODED_FIELDS,
  REFUND_ENCODED_FIELDS,
} as const;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the file goes, relative to the repository. */
export const DECODERS_PATH = "src/generated/decoders.ts";

/**
 * Each callback's field list: the export of src/callbacks/encoded-fields.ts its definition's
 * `encodedFields` is (`undefined`: an empty list). A test checks this against the definitions, and
 * the engine compares each generated decoder's list with its definition's before using it.
 */
export const ENCODED_FIELD_LISTS: { readonly [K in CallbackName]: keyof typeof LISTS | undefined } =
  {
    GetCheckoutCartInfo: undefined,
    SendOrderToMerchant: "ORDER_ENCODED_FIELDS",
    UpdateOrderStatus: "ORDER_ENCODED_FIELDS",
    PerformOrderPayment: "ORDER_ENCODED_FIELDS",
    SendRMAInfoToMerchant: "RMA_ENCODED_FIELDS",
    UpdateParcelDispatch: "DISPATCH_ENCODED_FIELDS",
    RemoveRestrictedProducts: undefined,
    SendAdditionalRequiredDocumentsToMerchant: undefined,
    ValidateGiftCard: "GIFT_CARD_ENCODED_FIELDS",
    RedeemGiftCard: "GIFT_CARD_ENCODED_FIELDS",
    RefundGiftCard: "GIFT_CARD_ENCODED_FIELDS",
    ValidateVoucher: "GIFT_CARD_ENCODED_FIELDS",
    NotifyOrderRefund: "REFUND_ENCODED_FIELDS",
    UpdateOrderShippingInfo: "ORDER_ENCODED_FIELDS",
  };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Why a segment cannot be read with a named load, or `undefined` when it can. */
function refusedSegment(segment: string): string | undefined {
  if (!IDENTIFIER.test(segment)) return `"${segment}" is not a plain identifier`;
  if (segment in Object.prototype || segment in Array.prototype) {
    return `"${segment}" is a property of Object.prototype or Array.prototype`;
  }
  return undefined;
}

class Refusal extends Error {}

/** A part of a concrete path: a segment, or the variable of an array index (under `*`). */
type PathPart = { readonly text: string } | { readonly index: string };

function pathExpression(parts: readonly PathPart[]): string {
  if (parts.every((part) => "text" in part)) {
    return JSON.stringify(parts.map((part) => (part as { text: string }).text).join("."));
  }
  const text = parts.map((part) => ("text" in part ? part.text : `\${${part.index}}`)).join(".");
  return `\`${text}\``;
}

/**
 * A container's frame, made only when a value in it (or below it) changes: its variable, and the
 * statements making it and its ancestors' frames (root first) where not made yet.
 */
interface LazyFrame {
  readonly variable: string;
  readonly build: readonly string[];
}

/** Emits the body of one decoder function over one path tree. */
class Emitter {
  readonly lines: string[] = [];
  /** The names read with named loads (the prototype guard checks each). */
  readonly names = new Set<string>();
  #counter = 0;

  fresh(prefix: string): string {
    this.#counter += 1;
    return `${prefix}${this.#counter}`;
  }

  /**
   * The value `value` at `node`, held by `container` under `key` (a string literal or an index
   * variable), whose frame is `frame`.
   */
  value(
    node: PathNode,
    value: string,
    container: string,
    frame: LazyFrame,
    key: string,
    parts: readonly PathPart[],
  ): void {
    const hasPolicy = node.policy !== undefined;
    if (hasPolicy && node.policy !== "auto") {
      throw new Refusal(`policy ${node.policy} at ${node.path} (only the default plan is made)`);
    }
    const below = node.wildcard !== undefined || node.children.length > 0;
    if (!hasPolicy && !below) return;
    if (hasPolicy) {
      const decoded = this.fresh("d");
      const write = key.startsWith('"')
        ? `${container}.${JSON.parse(key) as string} = ${decoded};`
        : `${container}[${key}] = ${decoded};`;
      this.lines.push(
        `if (typeof ${value} === "string") {`,
        `const ${decoded} = auto(${value}, ${pathExpression(parts)}, report);`,
        `if (${decoded} !== ${value}) {`,
        ...frame.build,
        `changes.push(${frame.variable}, ${key}, ${value});`,
        write,
        "}",
        below ? "} else" : "}",
      );
    }
    if (below) {
      this.lines.push(`if (typeof ${value} === "object" && ${value} !== null) {`);
      this.container(node, value, frame, key, parts);
      this.lines.push("}");
    }
  }

  /** The object or array `value` at `node` (its frame's parent `parentFrame`, its key `key`). */
  container(
    node: PathNode,
    value: string,
    parentFrame: LazyFrame | undefined,
    key: string,
    parts: readonly PathPart[],
  ): void {
    const frameOf = (variable: string, holder: string): LazyFrame => ({
      variable,
      build: [
        ...(parentFrame?.build ?? []),
        `${variable} ??= { node: ${holder}, parent: ${parentFrame?.variable ?? "undefined"}, key: ${key} };`,
      ],
    });
    const { wildcard, children } = node;
    if (wildcard !== undefined) {
      // An array: its elements under `*`. Its named children, if any, are never own properties
      // of an array JSON.parse made (none is an index, nor `length`): nothing to read there.
      const array = this.fresh("a");
      const frameVar = this.fresh("f");
      const index = this.fresh("i");
      const item = this.fresh("v");
      this.lines.push(
        `if (Array.isArray(${value})) {`,
        `const ${array}: unknown[] = ${value};`,
        `let ${frameVar}: Frame | undefined;`,
        `for (let ${index} = 0; ${index} < ${array}.length; ${index}++) {`,
        `const ${item}: unknown = ${array}[${index}];`,
      );
      this.value(wildcard, item, array, frameOf(frameVar, array), index, [...parts, { index }]);
      this.lines.push("}", children.length > 0 ? "} else {" : "}");
    } else if (children.length > 0) {
      this.lines.push(`if (!Array.isArray(${value})) {`);
    }
    if (children.length > 0) {
      const object = this.fresh("o");
      const frameVar = this.fresh("f");
      this.lines.push(
        `const ${object} = ${value} as Container;`,
        `let ${frameVar}: Frame | undefined;`,
      );
      for (const child of children) {
        const refused = refusedSegment(child.segment);
        if (refused !== undefined) throw new Refusal(refused);
        this.names.add(child.segment);
        const item = this.fresh("v");
        this.lines.push(`const ${item}: unknown = ${object}.${child.segment};`);
        this.value(child, item, object, frameOf(frameVar, object), JSON.stringify(child.segment), [
          ...parts,
          { text: child.segment },
        ]);
      }
      this.lines.push("}");
    }
  }
}

/** One decoder: its function's text, or why none is made for this list. */
export function emitDecoder(
  functionName: string,
  fields: readonly string[],
): { readonly code: string } | { readonly refused: string } {
  const root = pathTreeOf(compileDecoding(fields));
  const emitter = new Emitter();
  try {
    if (root.wildcard !== undefined) throw new Refusal("a `*` at the top level");
    if (root.policy !== undefined) throw new Refusal("an empty path");
    emitter.lines.push(`if (typeof payload === "object" && payload !== null) {`);
    emitter.container(root, "payload", undefined, '""', []);
    emitter.lines.push("}");
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.message };
    throw error;
  }
  const guard = [...emitter.names].map((name) => `PROTOTYPE.${name} !== undefined`).join(" || ");
  const code = [
    `function ${functionName}(payload: unknown): DecodedInPlace<unknown> | undefined {`,
    "// A name Object.prototype holds a value under: a named load would read it where the walk's",
    "// own check says absent. Then the plan decodes.",
    ...(guard === "" ? [] : [`if (${guard}) return undefined;`]),
    "const report: MutableReport = { decoded: [], unchanged: [], malformed: [] };",
    "const changes: ChangeLog = [];",
    ...emitter.lines,
    "return new InPlaceResult(payload, payload, report, changes, undefined);",
    "}",
  ].join("\n");
  return { code };
}

const PRELUDE = `type Container = Record<string, unknown>;

/** Read with named loads: a value here under a field's name makes a decoder give up. */
const PROTOTYPE = Object.prototype as Container;

/** A generated decoder, and the field list it was generated from (it decodes that list only). */
export interface GeneratedDecoder {
  readonly fields: readonly string[];
  /**
   * What \`compileDecoding(fields).decodeInPlace(payload)\` gives, for a payload meeting the
   * preconditions above; \`undefined\` (decode with the plan) when Object.prototype has a value
   * under one of the names read.
   */
  readonly decode: (payload: unknown) => DecodedInPlace<unknown> | undefined;
}

/** \`decodeLeaf\` of src/decode/policy.ts under the \`auto\` policy. */
function auto(value: string, path: string, report: MutableReport): string {
  return decodeLeaf(value, "auto", path, report);
}`;

const HEADER = [
  "// Generated by scripts/generate-decoders.ts from the callbacks' encoded-field lists: do not",
  "// edit. After changing a list (src/callbacks/encoded-fields.ts), run `npm run generate` (a test",
  "// fails while this file is out of date).",
  "//",
  "// Each function decodes a payload in place exactly as the default plan does",
  "// (`compileDecoding(fields).decodeInPlace`: policy `auto` on every path), with named property",
  "// loads in the order the plan's walk visits. Preconditions, which the engine guarantees when it",
  "// uses one (a body it parsed, accepted by `checkSealed`):",
  "// - the payload is what JSON.parse makes: every container a plain object or an array with the",
  "//   standard prototype, every property an own, enumerable, writable data property (nothing",
  "//   frozen, no getter or setter), no array with a property other than its indices and length;",
  "// - Object.prototype has no value under a field's name (checked at each call: `undefined` is",
  "//   returned otherwise, and the plan decodes), so a named load of a field that is not own yields",
  "//   `undefined` exactly where the walk's `hasOwnProperty` says absent. `checkSealed` declines",
  "//   already while Object.prototype holds a name its checks read; checked here all the same, for",
  "//   the names of the field lists. (A getter under such a name there would be called by it.)",
  "// - nothing changed the payload between the check and the decoding: an authenticator's",
  "//   `authenticatePayload`, which runs between them, only reads it (its documented contract).",
];

const IMPORTS = [
  "import {",
  "  type ChangeLog,",
  "  type DecodedInPlace,",
  "  decodeLeaf,",
  "  type Frame,",
  "  InPlaceResult,",
  "  type MutableReport,",
  '} from "../decode/policy.js";',
];

/**
 * A module of decoders for any field lists, for tests: the same code as the generated file
 * (unformatted), the functions exported as `DECODERS` by name; `refused` for the lists left out.
 */
export function decoderModuleText(listsByName: Readonly<Record<string, readonly string[]>>): {
  readonly text: string;
  readonly refused: readonly string[];
} {
  const functions: string[] = [];
  const entries: string[] = [];
  const refused: string[] = [];
  for (const [name, fields] of Object.entries(listsByName)) {
    const result = emitDecoder(`decode${name}`, fields);
    if ("refused" in result) refused.push(`${name}: ${result.refused}`);
    else {
      functions.push(result.code);
      entries.push(`${JSON.stringify(name)}: decode${name},`);
    }
  }
  const text = [
    ...IMPORTS,
    PRELUDE,
    ...functions,
    `export const DECODERS: Record<string, (payload: unknown) => DecodedInPlace<unknown> | undefined> = {\n${entries.join("\n")}\n};`,
  ].join("\n\n");
  return { text, refused };
}

/** The text of src/generated/decoders.ts, formatted as Biome formats it. */
export function generateDecodersText(): string {
  const functions: string[] = [];
  const byList = new Map<
    string,
    { readonly fieldsName: string; readonly functionName: string | undefined }
  >();
  const constants: string[] = [];
  const refused: string[] = [];
  const entries: string[] = [];
  for (const [name, listName] of Object.entries(ENCODED_FIELD_LISTS) as [
    CallbackName,
    keyof typeof LISTS | undefined,
  ][]) {
    if (listName === undefined) continue;
    const fields = LISTS[listName];
    if (fields.length === 0) continue;
    let made = byList.get(listName);
    if (made === undefined) {
      const functionName = `decode${name}`;
      const result = emitDecoder(functionName, fields);
      const fieldsName = listName.replace(/_ENCODED_FIELDS$/, "_FIELDS");
      if ("refused" in result) {
        refused.push(`${listName}: ${result.refused}`);
        made = { fieldsName, functionName: undefined };
      } else {
        functions.push(result.code);
        constants.push(
          `/** The list ${functionName} decodes (${listName} when generated). */`,
          `const ${fieldsName}: readonly string[] = ${JSON.stringify(fields)};`,
        );
        made = { fieldsName, functionName };
      }
      byList.set(listName, made);
    }
    if (made.functionName !== undefined) {
      entries.push(`${name}: { fields: ${made.fieldsName}, decode: ${made.functionName} },`);
    }
  }
  const text = [
    ...HEADER,
    "//",
    refused.length === 0
      ? "// Lists left to the plan: none."
      : `// Lists left to the plan:\n${refused.map((line) => `// - ${line}`).join("\n")}`,
    "",
    'import type { CallbackName } from "../core/types.js";',
    ...IMPORTS,
    "",
    PRELUDE,
    "",
    ...constants,
    "",
    "/** The decoder of each callback with encoded fields, with the list it was generated from. */",
    "export const PAYLOAD_DECODERS: { readonly [K in CallbackName]?: GeneratedDecoder } = {",
    ...entries,
    "};",
    "",
    functions.join("\n\n"),
    "",
  ].join("\n");
  return formatGenerated(text, DECODERS_PATH);
}

/** The text as Biome writes it (formatting and import order), so that `biome check` passes. */
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = generateDecodersText();
  writeFileSync(join(ROOT, DECODERS_PATH), text);
  console.log(`wrote ${DECODERS_PATH} (${text.length} characters)`);
}
