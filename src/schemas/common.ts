import { z } from "zod";

// Shared leaf schemas: built once and reused by every resource (zod schemas are immutable).

/** Text the spec leaves optional; real payloads send `null` for absent values. */
export const optionalString = z.string().nullish();
/** Decimal the spec leaves optional; never coerced from text. */
export const optionalNumber = z.number().nullish();
/**
 * A number the spec documents as an integer, in a payload the service sends: not checked for
 * being whole, since a decimal there is still usable and refusing it would lose the call.
 */
export const optionalCount = optionalNumber;
/** An integer the merchant writes (the cart): checked, so that a mistake shows before sending. */
export const optionalInteger = z.number().int().nullish();
/** Boolean the spec leaves optional; "true" as text is rejected on purpose. */
export const optionalBoolean = z.boolean().nullish();

/** A field the spec names without a usable shape (or as "various"); may be missing. */
export const optionalUnknown = z.unknown().optional();

/** An object the spec names but does not describe: any fields, all kept. */
export const openObjectSchema = z.looseObject({});

/**
 * An object whose fields are not documented (`CustomerDTBreakdown`, an entry of `Subs`): every
 * field is `unknown` until you check it.
 */
export interface OpenObject {
  [field: string]: unknown;
}

/** One `{Key, Value}` pair of the URL parameters list. */
export const keyValuePairSchema = z.looseObject({
  Key: optionalString,
  Value: optionalString,
});

/** One `{Key, Value}` pair of `UrlParameters` as the service sends it. */
export interface KeyValuePair {
  Key?: string | null | undefined;
  Value?: string | null | undefined;
}

/** Documented as a JSON list in a string, seen as a real list and as null: accept all three. */
export const urlParametersSchema = z.union([z.string(), z.array(keyValuePairSchema)]).nullish();

/** `UrlParameters`: the JSON text of the pairs, the list itself, or nothing. Read it with `urlParameters()`. */
export type UrlParameters = string | KeyValuePair[] | null | undefined;

/** A product attribute as orders and carts carry it. */
export const productAttributeSchema = z.looseObject({
  AttributeKey: optionalString,
  AttributeValue: optionalString,
});

/** A product attribute: `{AttributeKey, AttributeValue}`. */
export interface ProductAttribute {
  AttributeKey?: string | null | undefined;
  AttributeValue?: string | null | undefined;
}

/**
 * `T` without its index signatures (`[field: string]: unknown`), its declared fields kept:
 * type-fest's `OmitIndexSignature`, written here because the declarations the package ships must
 * not import type-fest. It is ESM-only, so a CommonJS project type-checking them under node16
 * (`skipLibCheck: false`) gets TS1479, and tsup's declaration bundle drops the `resolution-mode`
 * attribute that would allow it. test/schemas/interfaces.test.ts checks it equals type-fest's.
 */
export type OmitIndexSignature<T> = {
  // biome-ignore lint/complexity/noBannedTypes: `{}` is the test: it is assignable to a Record of an index signature's key only
  [K in keyof T as {} extends Record<K, unknown> ? never : K]: T[K];
};

/**
 * A loose object type without its index signatures, all the way down: what the library lets
 * through at run time (unknown fields) is not what a merchant should be able to misspell. An
 * object with no documented field at all (an open object) keeps its index signature.
 */
export type DocumentedFields<T> = T extends readonly (infer Item)[]
  ? DocumentedFields<Item>[]
  : T extends object
    ? [keyof OmitIndexSignature<T>] extends [never]
      ? T
      : { [K in keyof OmitIndexSignature<T>]: DocumentedFields<OmitIndexSignature<T>[K]> }
    : T;

/**
 * {@link DocumentedFields} for what a merchant passes (a service client's request): its lists
 * readonly, so that a frozen or `as const` list is taken, as the client never writes to it.
 */
export type DocumentedInput<T> = T extends readonly (infer Item)[]
  ? readonly DocumentedInput<Item>[]
  : T extends object
    ? [keyof OmitIndexSignature<T>] extends [never]
      ? T
      : { [K in keyof OmitIndexSignature<T>]: DocumentedInput<OmitIndexSignature<T>[K]> }
    : T;
