/**
 * Result types that catch misspelt fields in what a merchant's function returns, inline arrow
 * functions included. TypeScript checks excess properties only where an object literal meets a
 * declared type; a function's return type is inferred, so `{ InternalOrderID: … }` would compile.
 * The factories therefore infer the result type `R` and require `R & NoExtraFields<R, Shape>`: a
 * field that `Shape` does not name becomes `never`, at any depth, so it cannot be assigned.
 */
import type { CallbackContext, CallbackHandler } from "./engine.js";
import type { CallbackName } from "./types.js";

/**
 * Marks the fields of a result type that a success must not set: a result whose inferred type sets
 * one (a required field that is not only `null`) does not compile; a declared type where it is
 * optional (the exported `GiftCardResult`) does, as nothing says it is set.
 */
export interface RefusedFields<K extends string> {
  /**
   * Type-only marker (never set). A string key, not a `unique symbol`: the ESM and CommonJS
   * declarations would each declare their own symbol, and a result typed by one would not fit a
   * factory typed by the other (a project mixing `.cts` and `.mts` files), as for `ParsedBody`.
   * Not part of the API: never set, never read.
   */
  readonly __crossborderRefusedFields?: K;
}

/** The fields a result type marks as refused (of every object member of a union). */
type RefusedKeys<Shape> = Shape extends RefusedFields<infer K> ? K : never;

/**
 * Marks the boolean fields of a result type that a success must not set `false` (a redemption's
 * `IsValid`): a result whose inferred type sets one to the literal `false` does not compile. A
 * `boolean` does: TypeScript widens a returned `true` to `boolean` (a block body, an `async` or
 * standalone function, a router entry), and a widened `true` cannot be told from a real `boolean`.
 */
export interface RefusedFalse<K extends string> {
  /** Type-only marker (never set, not part of the API), string-keyed as {@link RefusedFields}'s. */
  readonly __crossborderRefusedFalse?: K;
}

type RefusedFalseKeys<Shape> = Shape extends RefusedFalse<infer K> ? K : never;

/**
 * What a result may set a {@link RefusedFalse} field to: its own type, unless that is only `false`
 * (leaving out `null` and `undefined`). Never `boolean`, which a widened `true` is.
 */
type NotFalse<R, K extends keyof R> = [Exclude<R[K], null | undefined>] extends [false]
  ? true | null | undefined
  : R[K];

/** Whether `R` sets `K`: required, and not only `null` or `undefined`. */
type Sets<R, K extends keyof R> =
  Partial<Pick<R, K>> extends Pick<R, K>
    ? false
    : [NonNullable<R[K]>] extends [never]
      ? false
      : true;

/** The keys a result type names (of every object member of a union). */
type KnownKeys<Shape> = Shape extends object ? keyof Shape : never;

type ItemOf<Shape> = Shape extends readonly (infer Item)[] ? Item : never;

type FieldOf<Shape, K extends PropertyKey> = Shape extends object
  ? K extends keyof Shape
    ? NonNullable<Shape[K]>
    : never
  : never;

/**
 * The check laid over a result `R`: every field `Shape` does not name is typed `never`, and the
 * known fields holding objects or arrays are checked the same way, at every depth and inside a
 * promise. Known fields holding plain values are left to `R` itself, but for a field `Shape` marks
 * refused ({@link RefusedFields}): `never` where `R` sets it, else its own type, so that in a union
 * (`cond ? { Balance } : { ErrorCode: "X" }`) the member without it does not take the other.
 */
export type NoExtraFields<R, Shape> =
  R extends PromiseLike<infer Value>
    ? PromiseLike<NoExtraFields<Value, Shape>>
    : R extends readonly (infer Item)[]
      ? readonly NoExtraFields<Item, ItemOf<Shape>>[]
      : R extends object
        ? {
            [K in keyof R as K extends RefusedKeys<Shape> | RefusedFalseKeys<Shape>
              ? K
              : K extends KnownKeys<Shape>
                ? NonNullable<R[K]> extends object
                  ? K
                  : never
                : K]: K extends RefusedKeys<Shape>
              ? Sets<R, K> extends true
                ? never
                : R[K]
              : K extends RefusedFalseKeys<Shape>
                ? NotFalse<R, K>
                : K extends KnownKeys<Shape>
                  ? NoExtraFields<R[K], FieldOf<Shape, K>>
                  : never;
          } & RefusedLeftOut<R, Shape>
        : unknown;

/**
 * A refused field a member leaves out stays optional and nullish: a member without it (a
 * variable, a second `return`) does not take the type of one that sets it. Nothing (`unknown`)
 * for a shape that refuses no field, so that the messages of every other check stay as they are.
 */
type RefusedLeftOut<R, Shape> = [RefusedKeys<Shape>] extends [never]
  ? unknown
  : { [K in Exclude<RefusedKeys<Shape>, keyof R>]?: null | undefined };

/** A result of type `R` (or a promise of one) that names no field outside `Shape`. */
export type Checked<R, Shape> = R & NoExtraFields<R, Shape>;

/**
 * A merchant's function whose return value `R` — a result or a promise of one — is checked
 * against the callback's result type `Shape`.
 */
export type CheckedFunction<TPayload, R, Shape> = (
  payload: TPayload,
  context: CallbackContext<TPayload>,
) => Checked<R, Shape>;

/**
 * The factory of one callback: `(fn, options) => handler`. Generic in what `fn` returns, so that
 * a misspelt result field is a compile error even for an inline arrow function.
 */
export type CallbackFactory<TName extends CallbackName, TPayload, TResult, TOptions> = <
  R extends TResult | PromiseLike<TResult>,
>(
  fn: CheckedFunction<TPayload, R, TResult>,
  options: TOptions,
) => CallbackHandler<TName>;
