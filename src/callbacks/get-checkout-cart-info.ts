import { assertKnownKeys, configError, optionNames } from "../auth/validate.js";
import type { ReadBody } from "../core/body.js";
import { describeIssueList, parseBounded } from "../core/bounded-parse.js";
import type { CallbackFactory } from "../core/checked.js";
import {
  type CallbackDefinition,
  type CallbackFunction,
  createCallbackHandler,
  type HandlerOptions,
  handleAuthEarly,
} from "../core/engine.js";
import { isUnsafeNumber, jsonText, numberLiteralAt } from "../core/exact-numbers.js";
import { fieldInAnyCase } from "../core/objects.js";
import { type ResponseShape, responseInfoShape, type SchemaLevel } from "../core/responses.js";
import { readFormFields } from "../decode/form.js";
import { ACCEPT, CART_CHECKER, REJECT } from "../generated/checkers.js";
import { getCheckoutCartInfoRequestSchema } from "../schemas/checkout-request.js";
import { type CheckoutCartInfo, checkoutCartInfoSchema } from "../schemas/index.js";

export { getCheckoutCartInfoRequestSchema };

/**
 * The parameters of a GetCheckoutCartInfo call, from the query (GET) or the query and the body
 * (POST, JSON or form). Every parameter sent is kept; these are the ones the types name.
 */
export interface GetCheckoutCartInfoRequest {
  /**
   * The cart's token. Filled from `cartToken` when the service names it so (and from the names in
   * `parameterNames`). Some stores send `<cartToken>-<languageId>`: see `splitCartToken`.
   */
  merchantCartToken?: string | null | undefined;
  /** The shopper's country: 2 letters documented, 3 seen (`"GER"`); kept as sent. */
  countryCode?: string | null | undefined;
  currencyCode?: string | null | undefined;
  /**
   * The token under the name some stores configure: when both names are sent, the same value as
   * `merchantCartToken` (the one the cart-token authentication checks).
   */
  cartToken?: string | null | undefined;
  /** Sent in a POST body; checked by `createAuth({ merchantGuid })`. */
  MerchantGUID?: string | null | undefined;
  /** The call validates stock (`IsStockValidation=1`); from "1"/"0"/"true"/"false", any case. */
  IsStockValidation?: boolean | undefined;
  /** Whether fixed prices are supported (`isFixedPriceSupported=false`); as `IsStockValidation`. */
  isFixedPriceSupported?: boolean | undefined;
}

/**
 * A type with every list, at any depth, taken as `readonly` too: what a function may answer. The
 * library never writes to an answer, so a frozen catalog or an `as const` list is taken as it is;
 * `CheckoutCartInfo` itself keeps mutable lists, for a cart built up with `push`.
 */
export type ReadonlyLists<T> = T extends readonly (infer Item)[]
  ? readonly ReadonlyLists<Item>[]
  : T extends object
    ? { [K in keyof T]: ReadonlyLists<T[K]> }
    : T;

/** The merchant's function for GetCheckoutCartInfo, to type a standalone function. */
export type GetCheckoutCartInfoFunction = CallbackFunction<
  GetCheckoutCartInfoRequest,
  ReadonlyLists<CheckoutCartInfo>
>;

export interface GetCheckoutCartInfoOptions extends HandlerOptions {
  /** Methods answered. Default both: the service calls with GET unless the operator set POST. */
  methods?: ReadonlyArray<"GET" | "POST"> | undefined;
  /**
   * The names the service uses for the parameters, when the operator configured others
   * (`CartId`). The payload keeps the documented names. `merchantCartToken` is also read from
   * `cartToken` unless you name it here.
   */
  parameterNames?:
    | {
        merchantCartToken?: string | undefined;
        countryCode?: string | undefined;
        currencyCode?: string | undefined;
      }
    | undefined;
}

/** The options of this factory beyond every factory's. */
const CART_OPTION_NAMES = optionNames<Omit<GetCheckoutCartInfoOptions, keyof HandlerOptions>>({
  methods: true,
  parameterNames: true,
});

const PARAMETERS = ["merchantCartToken", "countryCode", "currencyCode"] as const;
const FLAGS = ["IsStockValidation", "isFixedPriceSupported"] as const;

const checkCart = CART_CHECKER.schema === checkoutCartInfoSchema ? CART_CHECKER.check : undefined;

/**
 * The cart as the merchant returns it, validated before it is sent: a wrong cart is a 500. What is
 * sent is what was validated (reviews truth TRUTH-2, second-truth SECOND-TRUTH-1), and what is
 * sent is the cart as `JSON.stringify` writes it, as any framework's `res.json` would. The
 * generated checker accepts only plain objects and arrays without a `toJSON`, which
 * `JSON.stringify` writes as they were read: the usual cart, sent as it is (the hot path, no
 * copy). Any other (an ORM model with its own `toJSON`, a `Date`, a null prototype, a class) is
 * first written as JSON and read back, and that JSON form is what is validated and sent: a model
 * is sent as its `toJSON` writes it, never its bookkeeping (`dataValues`, `$__`); a class whose
 * fields are getters and that has no `toJSON` would write none of them: it is refused (a 500
 * saying so) rather than sent `{}`.
 */
export const cartShape: ResponseShape<CheckoutCartInfo> = {
  asReturned: true,
  get dataLevel() {
    return CART_DATA_LEVEL;
  },
  success(result) {
    const verdict = checkCart === undefined ? undefined : checkCart(result);
    if (verdict === ACCEPT) return { body: result as object };
    let sent: unknown;
    try {
      const text = JSON.stringify(result, refusingUnwrittenGetters());
      sent = text === undefined ? undefined : JSON.parse(text);
    } catch (error) {
      // A BigInt, a cycle, a getter or a toJSON that throws: named by the schema when it is in a
      // known field, otherwise by what JSON.stringify threw.
      const read = issuesOf(result);
      // JSON's own errors (a BigInt, a cycle) and a class's unwritten getters are TypeErrors; what
      // a toJSON threw is the report's error only.
      const why = error instanceof TypeError ? `: ${error.message}` : "";
      return {
        invalid: `not a CheckoutCartInfo: ${read ?? `it cannot be written as JSON${why}`}`,
        readError: error,
      };
    }
    const checked = parseBounded(checkoutCartInfoSchema, sent, 5);
    if (!checked.success) {
      // Said only when the cart read as it is would pass: its JSON form is what is wrong.
      const written = verdict !== REJECT && issuesOf(result) === undefined ? AS_JSON : "";
      return {
        invalid: `not a CheckoutCartInfo${written}: ${describeIssueList(checked.issues, 5, checked.complete)}`,
      };
    }
    return { body: checked.data as object };
  },
  failure: responseInfoShape().failure,
};

/**
 * `JSON.stringify`'s replacer for a cart that is not plain data, called with each value after its
 * `toJSON`: throws for an object of a class with a getter named as a field of the cart at that
 * object's level, in any letter case (the service reads names so), which the object does not hold
 * as its own data: JSON would leave that field out (a line of getters sent `{}`). Other getters
 * (a line's `get total()`, or its `get currencyCode()`, a name of the cart's own level) drop
 * nothing the service reads there, and a class whose fields are its own is written whole.
 * Each call tracks the level and the path of every object it writes, from its holder's.
 */
function refusingUnwrittenGetters(): (this: unknown, key: string, value: unknown) => unknown {
  // Each object's level and path (`productsList.2`), from its holder's (review observe-6).
  const levels = new WeakMap<object, { level: Level; path: string }>();
  return function replacer(this: unknown, key: string, value: unknown): unknown {
    if (typeof value !== "object" || value === null) return value;
    let level: Level | undefined = CART_LEVEL;
    let path = "";
    if (key !== "") {
      const holder = typeof this === "object" && this !== null ? levels.get(this) : undefined;
      level = Array.isArray(this)
        ? holder?.level.element
        : holder?.level.fields?.get(key.toLowerCase());
      path = holder === undefined || holder.path === "" ? key : `${holder.path}.${key}`;
    }
    if (level === undefined) return value;
    levels.set(value, { level, path });
    const prototype = Object.getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === Array.prototype || prototype === null) {
      return value;
    }
    if (level.fields !== undefined && hidesField(value, prototype, level.fields)) {
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      const what = typeof name === "string" && name !== "" ? `a ${name}` : "an object";
      throw new TypeError(
        `${path === "" ? "the cart" : path} is ${what} whose getters JSON does not write (it has no toJSON): return plain data, or give its class a toJSON`,
      );
    }
    return value;
  };
}

/**
 * Whether an object's prototype chain (below `Object.prototype`) defines a getter named as one of
 * `fields` (lower-cased names of its level) that the object does not hold as its own data.
 */
function hidesField(
  value: object,
  prototype: object,
  fields: ReadonlyMap<string, unknown>,
): boolean {
  let own: Set<string> | undefined;
  for (let at = prototype; at !== null && at !== Object.prototype; at = Object.getPrototypeOf(at)) {
    for (const name of Object.getOwnPropertyNames(at)) {
      const lower = name.toLowerCase();
      if (!fields.has(lower)) continue;
      if (Object.getOwnPropertyDescriptor(at, name)?.get === undefined) continue;
      own ??= new Set(Object.keys(value).map((ownName) => ownName.toLowerCase()));
      if (!own.has(lower)) return true;
    }
  }
  return false;
}

/**
 * One level of the cart's schema: the fields of an object there (lower-cased names, each with
 * its own level) and the level of an array's items (a union's options merged).
 */
interface Level {
  fields?: Map<string, Level | undefined>;
  element?: Level | undefined;
}

function levelOf(schema: unknown, made = new Map<unknown, Level>()): Level | undefined {
  const found = made.get(schema);
  if (found !== undefined) return found;
  const level: Level = {};
  made.set(schema, level);
  const stack = [schema];
  while (stack.length > 0) {
    const def = (stack.pop() as { _zod?: { def?: Record<string, unknown> } } | undefined)?._zod
      ?.def;
    if (def === undefined) continue;
    if (def.type === "object") {
      level.fields ??= new Map();
      for (const [name, field] of Object.entries(def.shape as Record<string, unknown>)) {
        level.fields.set(name.toLowerCase(), levelOf(field, made));
      }
    } else if (def.type === "array") {
      level.element = levelOf(def.element, made);
    }
    for (const inner of [def.innerType, def.in]) if (inner !== undefined) stack.push(inner);
    if (Array.isArray(def.options)) stack.push(...def.options);
  }
  return level.fields === undefined && level.element === undefined ? undefined : level;
}

/** The cart's own level. */
const CART_LEVEL = levelOf(checkoutCartInfoSchema);

/** The cart's free texts: with card data in the request, masked like a message (review second-doubt). */
const CART_FREE_TEXT: ReadonlySet<string> = new Set(["name", "description"]);

/** The cart's levels with its data fields only: every field of its schema but its free texts. */
const CART_DATA_LEVEL: SchemaLevel | undefined = withoutFreeText(CART_LEVEL, new Map());

function withoutFreeText(
  level: Level | undefined,
  made: Map<Level, SchemaLevel>,
): SchemaLevel | undefined {
  if (level === undefined) return undefined;
  const found = made.get(level);
  if (found !== undefined) return found;
  const data: SchemaLevel = {};
  made.set(level, data);
  if (level.fields !== undefined) {
    data.fields = new Map();
    for (const [name, inner] of level.fields) {
      if (!CART_FREE_TEXT.has(name)) data.fields.set(name, withoutFreeText(inner, made));
    }
  }
  if (level.element !== undefined) data.element = withoutFreeText(level.element, made);
  return data;
}

/** Said of a cart refused in the JSON form of a cart that is not plain data. */
const AS_JSON =
  " as JSON writes it (what would be sent: a class's getters are written only by a toJSON of its own; return plain data, or give it a toJSON)";

/** The schema's issues with a cart read as it is (by property access), if it has any. */
function issuesOf(result: unknown): string | undefined {
  try {
    const checked = parseBounded(checkoutCartInfoSchema, result, 5);
    return checked.success ? undefined : describeIssueList(checked.issues, 5, checked.complete);
  } catch {
    return undefined;
  }
}

function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  // An own data property even for a key named `__proto__`.
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * Sets a documented parameter on the payload from its names: from the signed body alone when it
 * carries one of them (a JWT body digest), else the first name with a value (an empty one only
 * when nothing else has one, so an empty merchantCartToken does not hide a cartToken, nor an empty
 * configured name the token sent under the documented one).
 */
function choose(
  payload: Record<string, unknown>,
  fields: Record<string, unknown>,
  key: string,
  aliases: readonly string[],
  signedBody: boolean,
  read: ReadBody,
): void {
  if (signedBody) {
    const signed = aliases.find((alias) => fieldInAnyCase(fields, alias) !== undefined);
    if (signed !== undefined) {
      setField(
        payload,
        key,
        asText(firstOfList(fieldInAnyCase(fields, signed)), fields, signed, read),
      );
      return;
    }
  }
  let found: unknown;
  let foundAs = key;
  for (const alias of aliases) {
    const value = firstOfList(fieldInAnyCase(payload, alias));
    if (value === undefined || value === null) continue;
    if (value !== "") {
      found = value;
      foundAs = alias;
      break;
    }
    if (found === undefined) {
      found = value;
      foundAs = alias;
    }
  }
  if (found === "" && !isAbsent(fieldInAnyCase(payload, key))) return;
  // A number comes from the body's fields (the query's values are text), under the same key.
  if (found !== undefined) setField(payload, key, asText(found, fields, foundAs, read));
}

/**
 * A parameter a JSON body sent as a finite number, as the text the same value is in a query (a
 * store's numeric cart id): the number itself would be refused as not text. Any other value as it
 * is. A number beyond 2^53, which JSON.parse has rounded (another cart), is the literal sent, read
 * from the body's text (`name`: the parameter's name in `fields`, in any case); without that text
 * (a framework parsed the body) it stays a number, which the schema refuses naming the parameter.
 */
function asText(
  value: unknown,
  fields: Record<string, unknown>,
  name: string,
  read: ReadBody,
): unknown {
  if (typeof value !== "number" || !Number.isFinite(value)) return value;
  if (!isUnsafeNumber(value)) return String(value);
  const key = keyInAnyCase(fields, name);
  const text = read.kind === "bytes" && key !== undefined ? jsonText(read.bytes) : undefined;
  const literal = text === undefined ? undefined : numberLiteralAt(text, [key as string]);
  return literal !== undefined && Number(literal) === value ? literal : value;
}

/** The key `fieldInAnyCase` reads `name` under. */
function keyInAnyCase(value: Record<string, unknown>, name: string): string | undefined {
  if (Object.hasOwn(value, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(value).find((candidate) => candidate.toLowerCase() === lower);
}

/**
 * Gives every field of the payload that names the parameter (`names`, lower case: its documented
 * name and aliases, matched in any letter case) the value the documented name got: what
 * authentication checked (the cart token) is then the only token on the payload, whichever name a
 * store reads.
 */
function alignAliases(
  payload: Record<string, unknown>,
  names: ReadonlySet<string>,
  value: unknown,
): void {
  if (value === undefined) return;
  for (const present of Object.keys(payload)) {
    if (names.has(present.toLowerCase()) && payload[present] !== value) {
      setField(payload, present, value);
    }
  }
}

/**
 * The query's parameters into `query`, in one pass, the first value of a repeated parameter
 * winning (as `parseForm`; a lookup per key, `searchParams.get`, scans the whole query, O(k²)
 * before `verify` runs), decoded as the form body is (`readFormFields`): a name or value whose
 * `%xx` does not decode is kept raw, and the names so kept are returned.
 */
function readQuery(url: URL, query: Record<string, unknown>): string[] | undefined {
  return readFormFields(url.search.slice(1), query);
}

/**
 * A parameter repeated in a form a framework parsed (`express.urlencoded()` makes a list of its
 * values): its first value, as a repeated query or form parameter read here gives. Any other value
 * as it is.
 */
function firstOfList(value: unknown): unknown {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string")
    ? value[0]
    : value;
}

/** A query flag: "1"/"true" and "0"/"false" in any case (or a JSON boolean or 1/0). */
function flag(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  if (text === "1" || text === "true") return true;
  if (text === "0" || text === "false") return false;
  return undefined;
}

/** No value to read: missing, `null` or empty text. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

/**
 * `parameterNames` as given, checked: a misspelt member or a name that is not text would leave the
 * function a `merchantCartToken` of `undefined` on every call, answered 200 with the wrong cart.
 * Left out or `null`, and a member left `undefined`: the documented names.
 */
function checkedParameterNames(
  value: GetCheckoutCartInfoOptions["parameterNames"] | null | undefined,
): NonNullable<GetCheckoutCartInfoOptions["parameterNames"]> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw configError("parameterNames", "must be an object", "GetCheckoutCartInfo");
  }
  assertKnownKeys(value, PARAMETERS, "parameterNames", "GetCheckoutCartInfo");
  for (const key of PARAMETERS) {
    const wire: unknown = value[key];
    if (wire !== undefined && (typeof wire !== "string" || wire === "")) {
      throw configError(
        `parameterNames.${key}`,
        "must be a non-empty string",
        "GetCheckoutCartInfo",
      );
    }
  }
  return value;
}

/**
 * The cart during checkout: GET (or POST) with `merchantCartToken` (or `cartToken`),
 * `countryCode` and `currencyCode`, answered with the CheckoutCartInfo object. Called on every
 * cart page load, so keep it fast; a failure means checkout does not open.
 */
export const createGetCheckoutCartInfoHandler: CallbackFactory<
  "GetCheckoutCartInfo",
  GetCheckoutCartInfoRequest,
  ReadonlyLists<CheckoutCartInfo>,
  GetCheckoutCartInfoOptions
> = (fn, options) => {
  handleAuthEarly(options);
  const configured = checkedParameterNames(options?.parameterNames);
  const names = PARAMETERS.map((key) => {
    const wire = configured[key];
    const aliases =
      wire !== undefined ? [wire] : key === "merchantCartToken" ? [key, "cartToken"] : [key];
    // Every name the parameter goes by on the payload (lower case), given the chosen value.
    const named: ReadonlySet<string> = new Set(
      (key === "merchantCartToken" ? [key, "cartToken", ...aliases] : [key, ...aliases]).map(
        (name) => name.toLowerCase(),
      ),
    );
    return [key, aliases, named] as const;
  });
  const methods = options?.methods ?? ["GET", "POST"];
  if (methods.length === 0 || methods.some((method) => method !== "GET" && method !== "POST")) {
    throw new TypeError("GetCheckoutCartInfo: methods must be GET and/or POST");
  }
  const definition: CallbackDefinition<GetCheckoutCartInfoRequest, CheckoutCartInfo> & {
    readonly name: "GetCheckoutCartInfo";
  } = {
    name: "GetCheckoutCartInfo",
    methods,
    source: {
      kind: "query",
      // Every parameter is kept (a POST's MerchantGUID is checked by the authentication); the
      // query wins over the body, unless the body is signed (a JWT body digest): then the body's
      // fields win, and a documented name the body carries under any alias, even null or empty,
      // is taken from the body alone. The documented names are filled from the configured ones.
      build(url, body, signedBody, parsedForm, read, found) {
        const payload: Record<string, unknown> = {};
        let fields = (body !== null && typeof body === "object" ? body : {}) as Record<
          string,
          unknown
        >;
        // A form parser's lists (`express.urlencoded()`: `a=1&a=2` as ["1", "2"]) are reduced to
        // their first value, as the library's own parse of the form keeps it; a JSON body's lists
        // are its own. The framework's object is not written to.
        if (parsedForm) {
          const firsts: Record<string, unknown> = {};
          for (const key of Object.keys(fields)) setField(firsts, key, firstOfList(fields[key]));
          fields = firsts;
        }
        const query: Record<string, unknown> = {};
        const malformed = readQuery(url, query);
        // After the form body's own (the engine's parse of it), if any.
        if (malformed !== undefined) {
          found.queryMalformed =
            found.queryMalformed === undefined
              ? malformed
              : [...found.queryMalformed, ...malformed];
        }
        const [under, over] = signedBody ? [query, fields] : [fields, query];
        for (const key of Object.keys(under)) setField(payload, key, under[key]);
        for (const key of Object.keys(over)) setField(payload, key, over[key]);
        for (const [key, aliases, named] of names) {
          choose(payload, fields, key, aliases, signedBody, read);
          alignAliases(payload, named, fieldInAnyCase(payload, key));
        }
        for (const name of FLAGS) {
          const signed = signedBody ? fieldInAnyCase(fields, name) : undefined;
          const value = flag(
            firstOfList(signed !== undefined ? signed : fieldInAnyCase(payload, name)),
          );
          if (value === undefined) delete payload[name];
          else setField(payload, name, value);
        }
        return payload;
      },
    },
    schema: getCheckoutCartInfoRequestSchema,
    encodedFields: [],
    response: cartShape,
  };
  return createCallbackHandler(
    definition,
    // Read only, never written to: the readonly lists it may answer are its lists as they are.
    fn as CallbackFunction<GetCheckoutCartInfoRequest, CheckoutCartInfo>,
    options,
    CART_OPTION_NAMES,
  );
};
