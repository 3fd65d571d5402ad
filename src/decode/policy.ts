/**
 * Which fields of a callback payload get form-decoded, and how. Compiled once per handler into a
 * path tree; applied per request either in place (the engine: the payload is the request's own
 * object, the few values as sent are recorded to rebuild the raw view only when it is read) or
 * with copy-on-write (`apply`, never mutating its input).
 */

import { decodeFormValue, looksEncoded } from "./form.js";

/**
 * - `off`: never decode;
 * - `always`: decode every string (a plain `+44` becomes ` 44`: that is what always means);
 * - `auto`: decode only values that {@link looksEncoded}.
 */
export type DecodePolicy = "off" | "always" | "auto";

export interface DecodingOptions {
  /** Policy for every listed field without an entry in `fields`. Default `"auto"`. */
  default?: DecodePolicy | undefined;
  /**
   * Per-field policies. A key is a full dotted path (`"PrimaryShipping.Phone1"`,
   * `"ReturnedProducts.*.Name"`) or a bare field name (`"Phone1"`: that field in every listed
   * object). A full path wins over a bare name, a bare name over `default`. A key with `always`
   * or `auto` that is not in the callback's list is added to it as a full path; a key without a
   * dot is thus also the top-level field of that name (e.g. `CustomerComments`).
   */
  fields?: Readonly<Record<string, DecodePolicy>> | undefined;
}

/** Concrete paths (`ReturnedProducts.0.Name`) of the string values the plan looked at. */
export interface DecodingReport {
  /** The value changed by decoding. */
  readonly decoded: readonly string[];
  /** A string left as it is: plain under `auto`, nothing to decode, or policy `off`. */
  readonly unchanged: readonly string[];
  /** Looked encoded (or policy `always`) but the sequence is invalid: the raw value was kept. */
  readonly malformed: readonly string[];
}

export interface DecodingPlanEntry {
  readonly path: string;
  readonly policy: DecodePolicy;
}

export interface DecodingPlan {
  /** Every path the plan visits, with its resolved policy, in visiting order. */
  readonly entries: readonly DecodingPlanEntry[];
  /**
   * Decodes the planned fields of a payload. Returns the payload itself when nothing changed;
   * otherwise a copy in which only the objects and arrays on a changed path are new.
   */
  apply<T>(payload: T): { payload: T; report: DecodingReport };
  /**
   * Decodes the planned fields in the payload itself (a container that refuses the write, a
   * frozen object, is copied instead), recording each decoded value as it was sent.
   */
  decodeInPlace<T>(payload: T): DecodedInPlace<T>;
}

/** What decoding in place leaves: the decoded payload, its report, the raw view on demand. */
export interface DecodedInPlace<T> {
  /** The payload given, decoded (a copy of it only when it was frozen and a value changed). */
  readonly payload: T;
  readonly report: DecodingReport;
  /**
   * The payload as sent, built when called: the payload itself when nothing was decoded;
   * otherwise shallow copies of the objects and arrays that lead to a decoded value (as they are
   * now, each decoded value put back as sent), everything else shared with the payload.
   * `onCopy` is told of each copy (the engine protects a PaymentDetails copy like its original).
   */
  raw(onCopy?: (original: object, copy: object) => void): T;
}

/** A container on the path of a decoded value: its parent's frame, and its key in the parent. */
export interface Frame {
  readonly node: object;
  readonly parent: Frame | undefined;
  readonly key: string | number;
}

/**
 * The values decoded in place, three entries each: where it is (its container's frame, its key)
 * and its value as sent (`changes.push(frame, key, original)`). Issue 13: flat, not an object a
 * change (23 objects and their array per 30-product order, against one array).
 */
export type ChangeLog = (Frame | string | number)[];

/** One walk in place: what changed, and what had to be copied. */
interface Walk {
  readonly changes: ChangeLog;
  /** A frozen container's copy → the container (one logical place, whichever the walk saw). */
  copiedFrom: Map<object, object> | undefined;
}

const POLICIES: ReadonlySet<string> = new Set<DecodePolicy>(["off", "always", "auto"]);
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
const WILDCARD = "*";
const hasOwn = Object.prototype.hasOwnProperty;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** A node of a plan's path tree (exported for scripts/generate-decoders.ts, which walks it). */
export interface PathNode {
  readonly segment: string;
  /** The configured path down to this node (with `*`), the concrete path when no `*` is above. */
  readonly path: string;
  /** Set when a planned path ends here. */
  policy: DecodePolicy | undefined;
  readonly children: PathNode[];
  wildcard: PathNode | undefined;
}

export interface MutableReport {
  readonly decoded: string[];
  readonly unchanged: string[];
  readonly malformed: string[];
}

type Container = Record<string, unknown>;

function assertPolicy(value: unknown, where: string): asserts value is DecodePolicy {
  if (typeof value !== "string" || !POLICIES.has(value)) {
    throw new TypeError(`${where}: decode policy must be "off", "always" or "auto"`);
  }
}

function splitPath(path: unknown, where: string): string[] {
  if (typeof path !== "string" || path === "") {
    throw new TypeError(`${where}: a decode path must be a non-empty string`);
  }
  const segments = path.split(".");
  for (const segment of segments) {
    if (segment === "") throw new TypeError(`${where}: empty segment in decode path "${path}"`);
    if (FORBIDDEN_SEGMENTS.has(segment)) {
      throw new TypeError(`${where}: forbidden segment "${segment}" in decode path "${path}"`);
    }
  }
  return segments;
}

/** The field name a bare-name key matches: the last segment that is not `*`. */
function bareName(segments: readonly string[]): string | undefined {
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i];
    if (segment !== WILDCARD) return segment;
  }
  return undefined;
}

function segmentsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  return (a === WILDCARD && ARRAY_INDEX.test(b)) || (b === WILDCARD && ARRAY_INDEX.test(a));
}

/** Two different paths that can name the same value would decode it twice: refuse them. */
function assertNoOverlap(paths: readonly (readonly string[])[]): void {
  for (let i = 0; i < paths.length; i++) {
    const a = paths[i] ?? [];
    for (let j = i + 1; j < paths.length; j++) {
      const b = paths[j] ?? [];
      if (a.length !== b.length) continue;
      if (a.every((segment, k) => segmentsOverlap(segment, b[k] ?? ""))) {
        throw new TypeError(
          `decode paths "${a.join(".")}" and "${b.join(".")}" name the same values; keep one`,
        );
      }
    }
  }
}

function newNode(segment: string, path: string): PathNode {
  return { segment, path, policy: undefined, children: [], wildcard: undefined };
}

function insert(root: PathNode, segments: readonly string[], policy: DecodePolicy): void {
  let node = root;
  for (const segment of segments) {
    const path = node.path === "" ? segment : `${node.path}.${segment}`;
    if (segment === WILDCARD) {
      node.wildcard ??= newNode(segment, path);
      node = node.wildcard;
      continue;
    }
    let child = node.children.find((c) => c.segment === segment);
    if (child === undefined) {
      child = newNode(segment, path);
      node.children.push(child);
    }
    node = child;
  }
  node.policy = policy;
}

/**
 * Compiles the decoding of a callback's field list (dotted paths, `*` for every array element)
 * under the merchant's options. Throws `TypeError` on a bad policy, an empty segment, a
 * `__proto__` / `constructor` / `prototype` segment, or two paths naming the same value.
 */
export function compileDecoding(
  fields: readonly string[],
  options: DecodingOptions = {},
): DecodingPlan {
  const fallback = options.default ?? "auto";
  assertPolicy(fallback, "decoding.default");
  const overrides = options.fields ?? {};
  if (typeof overrides !== "object" || overrides === null) {
    throw new TypeError("decoding.fields must be an object");
  }
  for (const key of Object.keys(overrides)) {
    splitPath(key, "decoding.fields");
    assertPolicy(overrides[key], `decoding.fields["${key}"]`);
  }

  const paths: string[] = [];
  const seen = new Set<string>();
  for (const path of fields) {
    splitPath(path, "decode field list");
    if (!seen.has(path)) {
      seen.add(path);
      paths.push(path);
    }
  }
  for (const [key, policy] of Object.entries(overrides)) {
    if (policy !== "off" && !seen.has(key)) {
      seen.add(key);
      paths.push(key);
    }
  }

  const split = paths.map((path) => path.split("."));
  assertNoOverlap(split);

  const root = newNode("", "");
  const entries: DecodingPlanEntry[] = [];
  split.forEach((segments, i) => {
    const path = paths[i] ?? "";
    const bare = bareName(segments);
    let policy: DecodePolicy = fallback;
    if (Object.hasOwn(overrides, path)) policy = overrides[path] ?? fallback;
    else if (bare !== undefined && Object.hasOwn(overrides, bare)) {
      policy = overrides[bare] ?? fallback;
    }
    insert(root, segments, policy);
    entries.push(Object.freeze({ path, policy }));
  });
  return new CompiledDecodingPlan(root, Object.freeze(entries));
}

/** Each compiled plan's path tree, for {@link pathTreeOf}. */
const TREES = new WeakMap<DecodingPlan, PathNode>();

/**
 * The path tree a plan of {@link compileDecoding} walks (its root; children in visiting order),
 * for scripts/generate-decoders.ts, which emits code walking it in the same order. Not public API.
 */
export function pathTreeOf(plan: DecodingPlan): PathNode {
  const root = TREES.get(plan);
  if (root === undefined) throw new TypeError("not a plan made by compileDecoding");
  return root;
}

class CompiledDecodingPlan implements DecodingPlan {
  readonly #root: PathNode;
  readonly entries: readonly DecodingPlanEntry[];

  constructor(root: PathNode, entries: readonly DecodingPlanEntry[]) {
    this.#root = root;
    this.entries = entries;
    TREES.set(this, root);
  }

  apply<T>(payload: T): { payload: T; report: DecodingReport } {
    const report: MutableReport = { decoded: [], unchanged: [], malformed: [] };
    const result = visit(payload, this.#root, undefined, report) as T;
    return { payload: result, report };
  }

  decodeInPlace<T>(payload: T): DecodedInPlace<T> {
    const report: MutableReport = { decoded: [], unchanged: [], malformed: [] };
    const walk: Walk = { changes: [], copiedFrom: undefined };
    const result =
      typeof payload === "object" && payload !== null
        ? (visitInPlace(payload, this.#root, undefined, report, walk, undefined, "") as T)
        : payload;
    return new InPlaceResult(payload, result, report, walk.changes, walk.copiedFrom);
  }
}

/**
 * The result of one decoding in place (exported for the generated decoders of
 * src/generated/decoders.ts, which record their changes as `visitInPlace` does).
 */
export class InPlaceResult<T> implements DecodedInPlace<T> {
  constructor(
    private readonly input: T,
    readonly payload: T,
    readonly report: DecodingReport,
    private readonly changes: Readonly<ChangeLog>,
    private readonly copiedFrom: ReadonlyMap<object, object> | undefined,
  ) {}

  raw(onCopy?: (original: object, copy: object) => void): T {
    const { changes, copiedFrom } = this;
    if (changes.length === 0) return this.input;
    const copies = new Map<object, Container>();
    const copyOf = (seen: object): Container => {
      const original = copiedFrom?.get(seen) ?? seen;
      let copy = copies.get(original);
      if (copy === undefined) {
        copy = shallowCopy(original);
        copies.set(original, copy);
        onCopy?.(original, copy);
      }
      return copy;
    };
    for (let c = 0; c < changes.length; c += 3) {
      const frame = changes[c] as Frame;
      copyOf(frame.node)[changes[c + 1] as string] = changes[c + 2] as string;
      // Link each copy into its parent's copy, up to the root (or to a link already made).
      for (let at: Frame = frame; at.parent !== undefined; at = at.parent) {
        const parent = copyOf(at.parent.node);
        const child = copyOf(at.node);
        if (parent[at.key as string] === child) break;
        parent[at.key as string] = child;
      }
    }
    return copyOf(this.input as object) as T;
  }
}

/** A copy of an object's own enumerable data (an own `__proto__` stays a key), same prototype. */
function shallowCopy(value: object): Container {
  if (Array.isArray(value)) return value.slice() as unknown as Container;
  const copy: Container = { ...(value as Container) };
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype) Object.setPrototypeOf(copy, proto);
  return copy;
}

/**
 * `visit`, writing each decoded value into the container it was read from, and recording it as
 * sent in `walk.changes`. A container that refuses a write (frozen) is copied, the copy returned
 * for its parent to take. Returns the value itself unless it had to be copied. `parent` is the
 * frame of the container holding the value, `key` its key there.
 *
 * Issue 13: this runs on every request, so it does only what it must per value: the own check is
 * `hasOwnProperty.call` (V8 optimises it, not `Object.hasOwn`), a write is a plain assignment
 * (`Reflect.set` is a builtin call V8 does not inline; {@link refusedWrite} tells a refusal apart
 * from a setter's own error only when one throws), and a string's path is built only under `*`.
 */
function visitInPlace(
  value: object,
  node: PathNode,
  concrete: string | undefined,
  report: MutableReport,
  walk: Walk,
  parent: Frame | undefined,
  key: string | number,
): object {
  const frame: Frame = { node: value, parent, key };
  let copy: Container | undefined;
  const wildcard = node.wildcard;
  if (wildcard !== undefined && Array.isArray(value)) {
    const prefix = concrete ?? node.path;
    const policy = wildcard.policy;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      let next: unknown;
      if (typeof item === "string") {
        if (policy === undefined) continue;
        next = decodeLeaf(item, policy, joinPath(prefix, String(i)), report);
        if (next === item) continue;
        walk.changes.push(frame, i, item);
      } else if (typeof item === "object" && item !== null) {
        next = visitInPlace(item, wildcard, joinPath(prefix, String(i)), report, walk, frame, i);
        if (next === item) continue;
      } else continue;
      if (copy === undefined) {
        try {
          (value as unknown[])[i] = next;
          continue;
        } catch (error) {
          if (!refusedWrite(error, value, i)) throw error;
        }
        copy = copyOfFrozen(value, walk);
      }
      copy[i] = next;
    }
  }
  const children = node.children;
  for (let c = 0; c < children.length; c++) {
    const child = children[c] as PathNode;
    const name = child.segment;
    // Read from the copy so a `*` sibling's changes to the same element are kept.
    const current: Container = copy ?? (value as Container);
    if (!hasOwn.call(current, name)) continue;
    const item = current[name];
    let next: unknown;
    if (typeof item === "string") {
      const policy = child.policy;
      if (policy === undefined) continue;
      next = decodeLeaf(
        item,
        policy,
        concrete === undefined ? child.path : joinPath(concrete, name),
        report,
      );
      if (next === item) continue;
      walk.changes.push(frame, name, item);
    } else if (typeof item === "object" && item !== null) {
      const path = concrete === undefined ? undefined : joinPath(concrete, name);
      next = visitInPlace(item, child, path, report, walk, frame, name);
      if (next === item) continue;
    } else continue;
    if (copy === undefined) {
      try {
        (value as Container)[name] = next;
        continue;
      } catch (error) {
        if (!refusedWrite(error, value, name)) throw error;
      }
      copy = copyOfFrozen(value, walk);
    }
    copy[name] = next;
  }
  return copy ?? value;
}

/**
 * After an assignment threw `error`: whether the object refused it (what `Reflect.set` reports as
 * `false`: a non-writable value, an accessor without a setter, a key it may not add), rather than
 * a setter on the way throwing its own error (which must reach the caller, as it would through
 * `Reflect.set`). A refusal is the engine's `TypeError`; the key is then looked up as `[[Set]]`
 * looks it up: the first object of the prototype chain that has it.
 */
function refusedWrite(error: unknown, target: object, key: string | number): boolean {
  if (!(error instanceof TypeError)) return false;
  for (let at: object | null = target; at !== null; at = Object.getPrototypeOf(at)) {
    const descriptor = Object.getOwnPropertyDescriptor(at, key);
    // A value (writable or not) or an accessor without a setter: refused. With a setter: it threw.
    if (descriptor !== undefined) return descriptor.set === undefined;
  }
  return true;
}

/** A copy of a container that refused a write, remembered as standing for it. */
function copyOfFrozen(value: object, walk: Walk): Container {
  const copy = shallowCopy(value);
  walk.copiedFrom ??= new Map();
  walk.copiedFrom.set(copy, walk.copiedFrom.get(value) ?? value);
  return copy;
}

function joinPath(prefix: string, segment: string): string {
  return prefix === "" ? segment : `${prefix}.${segment}`;
}

/** One planned string under its policy, recorded in the report (the generated decoders use it too). */
export function decodeLeaf(
  value: string,
  policy: DecodePolicy,
  path: string,
  report: MutableReport,
): string {
  if (policy === "off" || (policy === "auto" && !looksEncoded(value))) {
    report.unchanged.push(path);
    return value;
  }
  const decoded = decodeFormValue(value);
  if (decoded === undefined) {
    report.malformed.push(path);
    return value;
  }
  if (decoded === value) {
    report.unchanged.push(path);
    return value;
  }
  report.decoded.push(path);
  return decoded;
}

/**
 * Walks one node of the path tree over one value. `concrete` is the value's concrete path, or
 * `undefined` while no `*` was crossed (then it is `node.path`, and no string is built).
 * Returns the value itself when nothing below it changed.
 */
function visit(
  value: unknown,
  node: PathNode,
  concrete: string | undefined,
  report: MutableReport,
): unknown {
  if (typeof value === "string") {
    return node.policy === undefined
      ? value
      : decodeLeaf(value, node.policy, concrete ?? node.path, report);
  }
  if (typeof value !== "object" || value === null) return value;

  const isArray = Array.isArray(value);
  let copy: Container | undefined;
  const wildcard = node.wildcard;
  if (wildcard !== undefined && isArray) {
    const prefix = concrete ?? node.path;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === null || (typeof item !== "object" && typeof item !== "string")) continue;
      const next = visit(item, wildcard, joinPath(prefix, String(i)), report);
      if (next !== item) {
        copy ??= value.slice() as unknown as Container;
        copy[i] = next;
      }
    }
  }
  const children = node.children;
  for (let c = 0; c < children.length; c++) {
    const child = children[c] as PathNode;
    const key = child.segment;
    // Read from the copy so a `*` sibling's changes to the same element are kept.
    const current: Container = copy ?? (value as Container);
    if (!Object.hasOwn(current, key)) continue;
    const item = current[key];
    if (item === null || (typeof item !== "object" && typeof item !== "string")) continue;
    const next = visit(
      item,
      child,
      concrete === undefined ? undefined : joinPath(concrete, key),
      report,
    );
    if (next !== item) {
      // Spread copies own keys as data (never Object.assign): an own `__proto__` stays a key.
      copy ??= isArray ? (value.slice() as unknown as Container) : { ...(value as Container) };
      copy[key] = next;
    }
  }
  return copy ?? value;
}
