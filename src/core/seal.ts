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
 *   schema decides, as before).
 * The body is changed in place: nothing of it is copied. GetCheckoutCartInfo's payload is built
 * from the body's fields and the query: the walk covers it (and so the body's nested values); the
 * body's own top level only needs `dropProtoKey`.
 */

/** A `PaymentDetails` object found in the body, and the keys that lead to it from the root. */
export interface CardSite {
  readonly path: readonly (string | number)[];
  readonly details: Record<string, unknown>;
}

export type Sealing =
  | { readonly ok: true; readonly cards: readonly CardSite[] }
  | { readonly ok: false; readonly problem: "too_deep" }
  /** `description` names the path and the rule, never the value. */
  | { readonly ok: false; readonly problem: "card_data"; readonly description: string };

const PROTO = "__proto__";
const PAYMENT_DETAILS = "PaymentDetails";
const CARD_FIELDS = ["CardNumber", "CVVNumber"] as const;
const NO_CARDS: readonly CardSite[] = Object.freeze([]);
const TOO_DEEP: Sealing = { ok: false, problem: "too_deep" };

function isObject(value: unknown): value is object {
  return value !== null && typeof value === "object";
}

/** Deletes a value's own `__proto__` key, if it has one: the step the walk takes at every node. */
export function dropProtoKey(value: unknown): void {
  if (isObject(value) && Object.hasOwn(value, PROTO))
    delete (value as Record<string, unknown>)[PROTO];
}

/**
 * Seals a parsed body in place (see the module comment). The root is level 1; a body with an
 * object or array below level `maxDepth` is `too_deep`.
 */
export function sealBody(root: unknown, maxDepth: number): Sealing {
  if (!isObject(root)) return { ok: true, cards: NO_CARDS };
  // Depth-first: when a node of depth d is taken, `path[0 … d-2]` leads to it.
  const nodes: object[] = [root];
  const depths: number[] = [1];
  const keys: (string | number)[] = [""];
  const path: (string | number)[] = [];
  let cards: CardSite[] | undefined;
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop() as number;
    const key = keys.pop() as string | number;
    if (depth > 1) path[depth - 2] = key;
    path.length = depth - 1;
    dropProtoKey(node);
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (!isObject(child)) continue;
        if (depth >= maxDepth) return TOO_DEEP;
        nodes.push(child);
        depths.push(depth + 1);
        keys.push(i);
      }
      continue;
    }
    // An object carrying card fields outside a PaymentDetails key (that key damaged in transit)
    // holds card data all the same: protected like one, its fields left as the schema takes them.
    if (
      key !== PAYMENT_DETAILS &&
      (Object.hasOwn(node, CARD_FIELDS[0]) || Object.hasOwn(node, CARD_FIELDS[1]))
    ) {
      cards ??= [];
      cards.push({ path: [...path], details: node as Record<string, unknown> });
    }
    const names = Object.keys(node);
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const child: unknown = (node as Record<string, unknown>)[name];
      if (name === PAYMENT_DETAILS) {
        const problem = checkCard(child, path, name);
        if (problem !== undefined) return problem;
        if (child !== null) {
          cards ??= [];
          cards.push({ path: [...path, name], details: child as Record<string, unknown> });
        }
      }
      if (!isObject(child)) continue;
      if (depth >= maxDepth) return TOO_DEEP;
      nodes.push(child);
      depths.push(depth + 1);
      keys.push(name);
    }
  }
  return { ok: true, cards: cards ?? NO_CARDS };
}

function checkCard(
  details: unknown,
  path: readonly (string | number)[],
  name: string,
): Sealing | undefined {
  if (details === null) return undefined;
  if (!isObject(details) || Array.isArray(details)) {
    return cardProblem([...path, name], "expected an object or null");
  }
  for (const field of CARD_FIELDS) {
    const value = Object.hasOwn(details, field)
      ? (details as Record<string, unknown>)[field]
      : undefined;
    if (value === undefined || value === null || typeof value === "string") continue;
    return cardProblem(
      [...path, name, field],
      `expected a string or null, got ${Array.isArray(value) ? "an array" : typeof value} (card data is never coerced)`,
    );
  }
  return undefined;
}

function cardProblem(path: readonly (string | number)[], message: string): Sealing {
  return { ok: false, problem: "card_data", description: `${path.join(".")}: ${message}` };
}
