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

/**
 * The value under `name` of an object, or under a key equal to it in another letter case (the
 * service binds names case-insensitively); undefined when there is none, or `value` is no object.
 */
export function fieldInAnyCase(value: unknown, name: string): unknown {
  if (!isRecord(value)) return undefined;
  if (Object.hasOwn(value, name)) return value[name];
  const lower = name.toLowerCase();
  const key = Object.keys(value).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : value[key];
}

/**
 * Freezes a table the library reads at run time and exports (FAILURE_STATUS, the code tables…),
 * to the last level, so no write elsewhere in the process changes an answer or a retry rule.
 * Only arrays and plain objects are frozen: a zod schema or a class instance inside is left as it
 * is (zod caches on its schemas). Returns the same value; call it once, where the table is made.
 */
export function deepFreeze<T>(value: T): T {
  if (Array.isArray(value) || isPlainObject(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
