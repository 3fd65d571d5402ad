/**
 * Result types that catch misspelt fields in what a merchant's function returns, inline arrow
 * functions included. TypeScript checks excess properties only where an object literal meets a
 * declared type; a function's return type is inferred, so `{ InternalOrderID: … }` would compile.
 * The factories therefore infer the result type `R` and require it to pass `Checked<R, Shape>`: a
 * field that `Shape` does not name is typed as a text saying so, at any depth, so it cannot be
 * assigned, and the compiler's message names it.
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
 * What an unknown field of a result is typed: a text naming it, so that the compiler's message
 * does (`Type 'number' is not assignable to type '"PaymentAmout is not a field of the
 * SendOrderToMerchant result"'`). `never` for a value typed `any` (a database row), which is
 * assignable to every other type; the error still points at the field. `Success` and
 * `IsSuccess` at the top level say that the library writes them (review dx-2).
 */
type UnknownField<R, K extends keyof R, Name extends string, Path extends string> = 0 extends 1 &
  R[K]
  ? never
  : Path extends ""
    ? K extends "Success" | "IsSuccess"
      ? `${K} is written by the library: leave it out of the ${Name} result (throw CallbackError to refuse)`
      : `${K & string} is not a field of the ${Name} result`
    : `${K & string} is not a field of ${Path} in the ${Name} result`;

/**
 * The check laid over a result `R`: every field `Shape` does not name is typed as a text naming
 * it ({@link UnknownField}), and the known fields holding objects or arrays are checked the same
 * way, at every depth and inside a promise. Known fields holding plain values are left to `R`
 * itself, but for a field `Shape` marks refused ({@link RefusedFields}): `never` where `R` sets
 * it, else its own type, so that in a union (`cond ? { Balance } : { ErrorCode: "X" }`) the member
 * without it does not take the other. `Name` (the callback's) and `Path` (where in the result)
 * only word the messages.
 */
export type NoExtraFields<R, Shape, Name extends string = string, Path extends string = ""> =
  R extends Promise<infer Value>
    ? Promise<NoExtraFields<Value, Shape, Name, Path>>
    : R extends PromiseLike<infer Value>
      ? PromiseLike<NoExtraFields<Value, Shape, Name, Path>>
      : R extends readonly (infer Item)[]
        ? readonly NoExtraFields<Item, ItemOf<Shape>, Name, `${Path}[]`>[]
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
                    ? NoExtraFields<
                        R[K],
                        FieldOf<Shape, K>,
                        Name,
                        Path extends "" ? K & string : `${Path}.${K & string}`
                      >
                    : UnknownField<R, K, Name, Path>;
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

/**
 * A result of type `R` (or a promise of one) that is a `Shape` (a promise of one) and names no
 * field outside it: `R` itself where it passes, else the check it fails, which the compiler then
 * compares the result with, field by field (review dx-2). Not `R & check`: an unknown field's
 * type (a text) and its value's would reduce the whole to `never`, a message naming nothing. A
 * promise is checked as a `Promise` where `R` is one: the compiler then compares what it holds,
 * not the two `then` methods.
 */
export type Checked<R, Shape, Name extends string = string> = [R] extends [Check<R, Shape, Name>]
  ? R
  : Check<R, Shape, Name>;

type Check<R, Shape, Name extends string> = [NotAResult<R, Shape, Name>] extends [never]
  ? NoExtraFields<R, Shape, Name> & ShapeOf<R, Shape>
  : NotAResult<R, Shape, Name>;

/**
 * What an array or a function returned where the result type holds none is checked against: a
 * text saying so (`"an array is not a UpdateParcelDispatch result"`), or a promise of it for a
 * promise. `never` for every other result. Without it, a result type whose fields are all optional
 * (`MessageResult | NoResult`) would take an array or a function: laid over `NoExtraFields`, the
 * weak type's "nothing in common" check no longer applies (review second-client-1).
 */
type NotAResult<R, Shape, Name extends string> =
  R extends Promise<infer Value>
    ? [NotAValue<Value, Shape, Name>] extends [never]
      ? never
      : Promise<NotAValue<Value, Shape, Name>>
    : R extends PromiseLike<infer Value>
      ? [NotAValue<Value, Shape, Name>] extends [never]
        ? never
        : PromiseLike<NotAValue<Value, Shape, Name>>
      : NotAValue<R, Shape, Name>;

type NotAValue<R, Shape, Name extends string> = R extends readonly unknown[]
  ? [Extract<Shape, readonly unknown[]>] extends [never]
    ? `an array is not a ${Name} result`
    : never
  : R extends (...args: never[]) => unknown
    ? [Extract<Shape, (...args: never[]) => unknown>] extends [never]
      ? `a function is not a ${Name} result`
      : never
    : never;

/** `Shape`, or a promise of one where `R` is one (a `Promise` for a `Promise`). */
type ShapeOf<R, Shape> =
  R extends Promise<unknown>
    ? Promise<Shape>
    : R extends PromiseLike<unknown>
      ? PromiseLike<Shape>
      : Shape;

/**
 * A merchant's function whose return value `R` — a result or a promise of one — is checked
 * against the callback's result type `Shape`.
 */
export type CheckedFunction<TPayload, R, Shape, Name extends string = string> = (
  payload: TPayload,
  context: CallbackContext<TPayload>,
) => Checked<R, Shape, Name>;

/**
 * The factory of one callback: `(fn, options) => handler`. Generic in what `fn` returns, so that
 * a misspelt result field is a compile error even for an inline arrow function.
 */
export type CallbackFactory<TName extends CallbackName, TPayload, TResult, TOptions> = <
  // \`object\`: an object that is not a TResult (a missing or unknown field) is still inferred as
  // itself, and Checked names what is wrong with it, rather than the compiler comparing it with
  // this bare constraint (\`{ Success: "True" }\` is no MessageResult: nothing in common). The
  // rest keeps the result's literals (\`IsValid: false\`) as the checks need them.
  R extends TResult | Promise<TResult> | PromiseLike<TResult> | object,
>(
  fn: CheckedFunction<TPayload, R, TResult, TName>,
  options: TOptions,
) => CallbackHandler<TName>;
