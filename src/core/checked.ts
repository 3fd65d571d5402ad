/**
 * Result types that catch misspelt fields in what a merchant's function returns, inline arrow
 * functions included. TypeScript checks excess properties only where an object literal meets a
 * declared type; a function's return type is inferred, so `{ InternalOrderID: … }` would compile.
 * The factories therefore infer the result type `R` and require `R & NoExtraFields<R, Shape>`: a
 * field that `Shape` does not name becomes `never`, at any depth, so it cannot be assigned.
 */
import type { CallbackContext, CallbackHandler } from "./engine.js";
import type { CallbackName } from "./types.js";

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
 * promise. Known fields holding plain values are left to `R` itself.
 */
export type NoExtraFields<R, Shape> =
  R extends PromiseLike<infer Value>
    ? PromiseLike<NoExtraFields<Value, Shape>>
    : R extends readonly (infer Item)[]
      ? readonly NoExtraFields<Item, ItemOf<Shape>>[]
      : R extends object
        ? {
            [K in keyof R as K extends KnownKeys<Shape>
              ? NonNullable<R[K]> extends object
                ? K
                : never
              : K]: K extends KnownKeys<Shape> ? NoExtraFields<R[K], FieldOf<Shape, K>> : never;
          }
        : unknown;

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
