/**
 * The brands of the public error classes, so that `instanceof` (and the library's own checks)
 * holds across copies of the library: its ES module and CommonJS builds loaded in one process (an
 * ES module application with a CommonJS dependency that `require`s the package), or two bundles.
 * Each class's prototype carries a registered symbol, `Symbol.for("crossborder-callbacks/<Class>@1")`,
 * the same in every copy. A subclass's prototype inherits its base's, so an instance carries the
 * brand of its own class and of each branded class above it, and never a sibling's: a
 * `ServiceConflictError` is a `ServiceError` to every copy, and no copy's `ServiceRateLimitError`.
 */

/**
 * The brands' protocol, in their key (`…/<Class>@1`): bumped when a class's documented fields
 * change, so that a copy of another protocol (an older plugin's nested copy) sees the other's errors
 * as plain Errors instead of misreading them (review dual-3). The keys copies share: README
 * "CommonJS and ES modules, and two copies".
 */
const BRAND_PROTOCOL = 1;

/** Each branded class of this copy, with its brand; a class not in it (yours) has none. */
const BRANDS = new WeakMap<object, symbol>();

/**
 * Brands `ctor` as `name`, from its `static {}` block as `brandClass(this, "Name")`, and names it
 * so. The name is written out because `ctor.name` is not the class's name in every build: a
 * bundler renames a class whose body names it (esbuild makes `class ServiceError` with
 * `brandClass(ServiceError, …)` inside `class _ServiceError`: hence `this`), and a minifier renames
 * them all. Setting `ctor.name` keeps `constructor.name`, `util.inspect`'s header and a
 * `ServiceError`'s `name` (`new.target.name`) as documented in every build and bundle.
 */
export function brandClass(ctor: { readonly prototype: object }, name: string): void {
  const brand = Symbol.for(`crossborder-callbacks/${name}@${BRAND_PROTOCOL}`);
  Object.defineProperty(ctor.prototype, brand, { value: true });
  // As a class's own `name` is: read-only, not enumerable, configurable.
  Object.defineProperty(ctor, "name", { value: name, configurable: true });
  BRANDS.set(ctor, brand);
}

/**
 * What a branded class's `static [Symbol.hasInstance]` answers: the ordinary prototype check, or,
 * for an Error from another copy, whether it carries the brand of `ctor` itself (called on a
 * subclass, `ctor` is that subclass). A subclass you write has no brand of its own, so only the
 * ordinary check holds for it. Like `instanceof`, it may throw for a Proxy whose traps throw.
 */
export function isBrandedInstance(ctor: object, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(ctor, value)) return true;
  const brand = BRANDS.get(ctor);
  // An Error, as every branded class is one (a plain object carrying the symbol is none).
  return brand !== undefined && value instanceof Error && brand in value;
}
