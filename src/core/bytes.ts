/**
 * Whether a value is bytes (a `Uint8Array`, a `Buffer`), of this realm or of another one: a test
 * environment such as vitest's or jest's `jsdom` hands the library the request's and the answer's
 * chunks as a Uint8Array of another realm, for which `instanceof Uint8Array` is false (review
 * testkit-2). `instanceof` stays the first test, so bytes of this realm (every call in production)
 * cost nothing more; the others are told by the typed array's own name, which the intrinsic
 * `%TypedArray%.prototype[Symbol.toStringTag]` getter reads from the object's internal slot (the
 * same for every realm; `undefined` for anything that is no typed array, and an object cannot
 * forge it as it can its own `Symbol.toStringTag`).
 */
const typedArrayName = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  Symbol.toStringTag,
)?.get as (this: unknown) => string | undefined;

export function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array || foreignBytes(value);
}

function foreignBytes(value: unknown): boolean {
  return ArrayBuffer.isView(value) && typedArrayName.call(value) === "Uint8Array";
}
