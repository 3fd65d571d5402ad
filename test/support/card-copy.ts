/**
 * A deep copy of a payload as data, the card fields included: the library hides a card object's
 * card fields (`CardNumber` in any case, keys naming a CVV) as non-enumerable own properties (review
 * PIT-1), so `structuredClone` and a spread leave them out. Tests that compare what the merchant got
 * with what was sent copy it with this instead; the copy is plain, every field enumerable.
 */
export function copyWithCardFields<T>(value: T): T {
  return copy(value, new Map()) as T;
}

const CARD_FIELD = /^cardnumber$|cvv/i;

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== "object") return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(copy(item, seen));
    return out;
  }
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const name of Object.getOwnPropertyNames(value)) {
    if (!Object.prototype.propertyIsEnumerable.call(value, name) && !CARD_FIELD.test(name))
      continue;
    Object.defineProperty(out, name, {
      value: copy((value as Record<string, unknown>)[name], seen),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
