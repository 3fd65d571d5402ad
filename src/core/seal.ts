import {
  CARD_NUMBER,
  CVV_NUMBER,
  fieldNamesOf,
  hasCasedCardField,
  isCardFieldKey,
  isPaymentDetailsKey,
  PAYMENT_DETAILS,
} from "./card-keys.js";

/**
 * The one walk over a parsed body before it is validated — `JSON.parse` output, a framework's
 * already-parsed `req.body`, or GetCheckoutCartInfo's object built from the query and the body.
 * In a single iterative pass (no recursion, so any nesting is safe) it:
 * - bounds the nesting depth;
 * - deletes every own `__proto__` key, at every level, known fields and unknown alike, arrays
 *   included: `JSON.parse` turns `__proto__` into an ordinary key, which a merchant's
 *   `Object.assign` or deep merge would then follow into a prototype (`constructor` keys are plain
 *   data and stay);
 * - finds every `PaymentDetails` object, whatever the callback and however deep, and checks its
 *   card fields: an object or null, whose `CardNumber` and `CVVNumber` are strings or null (as
 *   JSON numbers a card number or a CVV with a leading zero is already corrupted);
 * - finds every other object with an own `CardNumber` or `CVVNumber` (a PaymentDetails whose key
 *   was damaged in transit): card data too, protected the same way, its fields not checked (the
 *   schema decides, as before);
 * - finds the same keys in any other ASCII case (`paymentDetails`, `CARDNUMBER`, `cvvNumber`:
 *   src/core/card-keys.ts): card data protected the same way, never checked (an object under a
 *   `paymentDetails` key is a card object; anything else there is left as it is).
 * The body is changed in place: nothing of it is copied. GetCheckoutCartInfo's payload is built
 * from the body's fields and the query: the walk covers it (and so the body's nested values); the
 * body's own top level only needs `dropProtoKey`.
 */

/** A `PaymentDetails` object found in the body, and the keys that lead to it from the root. */
export interface CardSite {
  readonly path: readonly (string | number)[];
  readonly details: Record<string, unknown>;
}

/**
 * The walk's verdict. A refused body still holds card data (a framework's `req.body` outlives the
 * request): `cards` then lists every card object of the whole body, the ones past the problem
 * included, for the engine to protect and strip of their CVV.
 */
export type Sealing =
  | { readonly ok: true; readonly cards: readonly CardSite[] }
  | { readonly ok: false; readonly problem: "too_deep"; readonly cards: readonly object[] }
  /** `description` names the path and the rule, never the value. */
  | {
      readonly ok: false;
      readonly problem: "card_data";
      readonly description: string;
      readonly cards: readonly object[];
    };

/** A refusal of the walk, before the body's card objects are added to it. */
type Problem =
  | { readonly ok: false; readonly problem: "too_deep" }
  | { readonly ok: false; readonly problem: "card_data"; readonly description: string };

const PROTO = "__proto__";
const CARD_FIELDS = [CARD_NUMBER, CVV_NUMBER] as const;
const NO_CARDS: readonly CardSite[] = Object.freeze([]);
const TOO_DEEP: Problem = { ok: false, problem: "too_deep" };
const ownKey = Object.prototype.hasOwnProperty;

function isObject(value: unknown): value is object {
  return value !== null && typeof value === "object";
}

/** Deletes a value's own `__proto__` key, if it has one: the step the walk takes at every node. */
export function dropProtoKey(value: unknown): void {
  if (isObject(value) && ownKey.call(value, PROTO))
    delete (value as Record<string, unknown>)[PROTO];
}

/**
 * Seals a parsed body in place (see the module comment). The root is level 1; a body with an
 * object or array below level `maxDepth` is `too_deep`.
 */
export function sealBody(root: unknown, maxDepth: number): Sealing {
  if (!isObject(root)) return { ok: true, cards: NO_CARDS };
  const sealing = walk(root, maxDepth);
  return sealing.ok ? sealing : { ...sealing, cards: findCardObjects(root) };
}

/**
 * Every card object of a value: each object under a `PaymentDetails` key, and each object with an
 * own `CardNumber` or `CVVNumber`, at any depth (those keys in any ASCII case). For a refused body
 * (rare: one more pass over the whole body) and for the helpers that mask a payload's card data
 * outside the engine (the testing kit, withIdempotency given a context of its own); iterative and
 * visiting each object once, so neither depth nor a cycle (a framework's own body) can stop it.
 */
export function findCardObjects(root: object): object[] {
  const cards = new Set<object>();
  const seen = new Set<object>();
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as object;
    if (seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const child of node) if (isObject(child)) stack.push(child);
      continue;
    }
    if (ownKey.call(node, CARD_FIELDS[0]) || ownKey.call(node, CARD_FIELDS[1])) cards.add(node);
    // Hidden card fields too (a protected card object's, in another case: `cardNumber`).
    for (const name of fieldNamesOf(node)) {
      if (isCardFieldKey(name)) cards.add(node);
      const child: unknown = (node as Record<string, unknown>)[name];
      if (!isObject(child)) continue;
      if (isPaymentDetailsKey(name) && !Array.isArray(child)) cards.add(child);
      stack.push(child);
    }
  }
  return [...cards];
}

/** The walk itself (see the module comment): the card sites, or the first problem. */
function walk(root: object, maxDepth: number): Sealing | Problem {
  // Depth-first, children pushed in key order and taken last first. Each entry is a node, its
  // depth, and its key in its parent (an array's index). No path is kept: card sites are rare, and
  // a site's path is read from `keys` (the key of the node taken at each level on the way down)
  // only when one is found, at a cost of its depth (never of its parents' widths).
  const nodes: object[] = [root];
  const depths: number[] = [1];
  const keyStack: (string | number)[] = [""];
  const keys: (string | number)[] = [];
  let cards: CardSite[] | undefined;
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    keys[depth - 1] = keyStack.pop() as string | number;
    dropProtoKey(node);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (!isObject(child)) continue;
        if (depth >= maxDepth) return TOO_DEEP;
        nodes.push(child);
        depths.push(depth + 1);
        keyStack.push(i);
      }
      continue;
    }
    const ownCard = ownKey.call(node, CARD_FIELDS[0]) || ownKey.call(node, CARD_FIELDS[1]);
    if (depth >= maxDepth) {
      // Any object below is too deep, unless a PaymentDetails before it fails its check first:
      // the keys in order, as the rule is stated.
      const problem = lastLevel(node, keys, depth);
      if (problem !== undefined) return problem;
      // Nothing below: the node itself may hold card fields (a key in another case is rare, and
      // only this level's nodes need the second look at their keys).
      if (ownCard || hasCasedCardField(node)) cards = addSelf(cards, node, keys, depth);
      continue;
    }
    // Nothing below this node can be too deep: the children are pushed first, a PaymentDetails key
    // seen on the way (nothing is changed before its check below).
    // `for … in` filtered to own keys lists exactly `Object.keys`, in its order, and is V8's
    // fastest way through a JSON object: it builds the map's enumeration cache and loads each
    // value from it. (`Object.values` is as slow as keyed loads until some `Object.keys` has built
    // that cache, and `Object.hasOwn` here is not optimised the way `hasOwnProperty.call` is.)
    // The card keys in another case cost a length comparison a key (src/core/card-keys.ts).
    let cased = false;
    let hasDetails = false;
    let details: unknown;
    // The first PaymentDetails key in any case and its value; any others, as name, value, ….
    let firstName: string | undefined;
    let firstValue: unknown;
    let more: unknown[] | undefined;
    for (const name in node) {
      if (!ownKey.call(node, name)) continue;
      const child: unknown = (node as Record<string, unknown>)[name];
      if (isPaymentDetailsKey(name)) {
        if (name === PAYMENT_DETAILS) {
          hasDetails = true;
          details = child;
        }
        if (firstName === undefined) {
          firstName = name;
          firstValue = child;
        } else {
          more ??= [];
          more.push(name, child);
        }
      } else if (isCardFieldKey(name)) {
        cased = true;
      }
      if (isObject(child)) {
        nodes.push(child);
        depths.push(depth + 1);
        keyStack.push(name);
      }
    }
    if (ownCard || cased) cards = addSelf(cards, node, keys, depth);
    if (firstName !== undefined) {
      if (hasDetails) {
        const problem = checkCard(details, keys, depth);
        if (problem !== undefined) return problem;
      }
      cards = addDetails(cards, firstName, firstValue, keys, depth);
      if (more !== undefined) {
        for (let i = 0; i < more.length; i += 2) {
          cards = addDetails(cards, more[i] as string, more[i + 1], keys, depth);
        }
      }
    }
  }
  return { ok: true, cards: cards ?? NO_CARDS };
}

/**
 * An object carrying card fields outside a PaymentDetails key (that key damaged in transit, or the
 * fields in another case) holds card data all the same: protected like one, its fields left as the
 * schema takes them. An object under a PaymentDetails key (any case) is recorded by its parent,
 * not again here.
 */
function addSelf(
  cards: CardSite[] | undefined,
  node: object,
  keys: readonly (string | number)[],
  depth: number,
): CardSite[] | undefined {
  if (depth > 1) {
    const key = keys[depth - 1];
    if (typeof key === "string" && isPaymentDetailsKey(key)) return cards;
  }
  const list = cards ?? [];
  list.push({ path: pathTo(keys, depth), details: node as Record<string, unknown> });
  return list;
}

/**
 * The value under a PaymentDetails key of the node taken at `depth`, as a card site: under the
 * exact key (checked already) anything but null; under the key in another case, an object that
 * is not an array (anything else there holds no card object of its own, and is never refused).
 */
function addDetails(
  cards: CardSite[] | undefined,
  name: string,
  value: unknown,
  keys: readonly (string | number)[],
  depth: number,
): CardSite[] | undefined {
  if (name === PAYMENT_DETAILS ? value === null : !isObject(value) || Array.isArray(value)) {
    return cards;
  }
  const list = cards ?? [];
  const path = pathTo(keys, depth);
  path.push(name);
  list.push({ path, details: value as Record<string, unknown> });
  return list;
}

/**
 * A node at the depth limit: its keys in order, a PaymentDetails checked where it stands, the
 * first object child `too_deep`. `undefined` when none of its values is an object.
 */
function lastLevel(
  node: object,
  keys: readonly (string | number)[],
  depth: number,
): Problem | undefined {
  const names = Object.keys(node);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const child: unknown = (node as Record<string, unknown>)[name];
    if (name === PAYMENT_DETAILS) {
      const problem = checkCard(child, keys, depth);
      if (problem !== undefined) return problem;
    }
    if (isObject(child)) return TOO_DEEP;
  }
  return undefined;
}

/**
 * The keys from the root to the node taken at `depth`: `keys` holds, at each level, the key of the
 * node taken there (the root's, unused, at 0).
 */
function pathTo(keys: readonly (string | number)[], depth: number): (string | number)[] {
  return keys.slice(1, depth);
}

function checkCard(
  details: unknown,
  keys: readonly (string | number)[],
  depth: number,
): Problem | undefined {
  if (details === null) return undefined;
  if (!isObject(details) || Array.isArray(details)) {
    return cardProblem(keys, depth, [], "expected an object or null");
  }
  for (const field of CARD_FIELDS) {
    const value = Object.hasOwn(details, field)
      ? (details as Record<string, unknown>)[field]
      : undefined;
    if (value === undefined || value === null || typeof value === "string") continue;
    return cardProblem(
      keys,
      depth,
      [field],
      `expected a string or null, got ${Array.isArray(value) ? "an array" : typeof value} (card data is never coerced)`,
    );
  }
  return undefined;
}

/** A PaymentDetails problem of the node taken at `depth`: its path computed only now. */
function cardProblem(
  keys: readonly (string | number)[],
  depth: number,
  below: readonly string[],
  message: string,
): Problem {
  const path = [...pathTo(keys, depth), PAYMENT_DETAILS, ...below];
  return { ok: false, problem: "card_data", description: `${path.join(".")}: ${message}` };
}
