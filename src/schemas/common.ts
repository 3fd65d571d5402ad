import type { OmitIndexSignature } from "type-fest";
import { z } from "zod";

// Shared leaf schemas: built once and reused by every resource (zod schemas are immutable).

/** Text the spec leaves optional; real payloads send `null` for absent values. */
export const optionalString = z.string().nullish();
/** Decimal the spec leaves optional; never coerced from text. */
export const optionalNumber = z.number().nullish();
/** Integer the spec leaves optional. */
export const optionalInteger = z.number().int().nullish();
/** Boolean the spec leaves optional; "true" as text is rejected on purpose. */
export const optionalBoolean = z.boolean().nullish();

/** A field the spec names without a usable shape (or as "various"); may be missing. */
export const optionalUnknown = z.unknown().optional();

/** An object the spec names but does not describe: any fields, all kept. */
export const openObjectSchema = z.looseObject({});

/** One `{Key, Value}` pair of the URL parameters list. */
export const keyValuePairSchema = z.looseObject({
  Key: optionalString,
  Value: optionalString,
});

/** Documented as a JSON list in a string, seen as a real list and as null: accept all three. */
export const urlParametersSchema = z.union([z.string(), z.array(keyValuePairSchema)]).nullish();

/** A product attribute as orders and carts carry it. */
export const productAttributeSchema = z.looseObject({
  AttributeKey: optionalString,
  AttributeValue: optionalString,
});

export type KeyValuePair = z.output<typeof keyValuePairSchema>;
export type UrlParameters = z.output<typeof urlParametersSchema>;
export type ProductAttribute = z.output<typeof productAttributeSchema>;

/**
 * A loose object type without its index signatures, all the way down: what the library lets
 * through at run time (unknown fields) is not what a merchant should be able to misspell.
 */
export type DocumentedFields<T> = T extends readonly (infer Item)[]
  ? DocumentedFields<Item>[]
  : T extends object
    ? { [K in keyof OmitIndexSignature<T>]: DocumentedFields<OmitIndexSignature<T>[K]> }
    : T;
