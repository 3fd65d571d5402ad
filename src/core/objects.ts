/** Object shape tests shared across the library. */

/** Any object that is not null and not an array (a class instance counts). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A plain object: a record whose prototype is `Object.prototype` or null (an object literal,
 * `JSON.parse` output, `Object.create(null)`), not a class instance, Map or Date.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
