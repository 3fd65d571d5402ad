/**
 * Readers for values the wire carries in more than one form, and for the fields the types do not
 * name. None of them throws.
 */

/** One URL parameter of the shopper's checkout: `{ Key, Value }`, both as text. */
export interface UrlParameter {
  readonly Key: string;
  readonly Value: string;
}

const MAX_URL_PARAMETERS_TEXT = 64 * 1024;

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/**
 * The `{Key, Value}` pairs of a `UrlParameters` value, whichever form it arrived in: the JSON text
 * of the list (as documented), the list itself (as seen), or `null`. Never throws: anything that
 * is not such a list gives `[]`; an entry without a usable `Key` is skipped; numbers and booleans
 * become text, a missing or `null` `Value` becomes `""`. The pairs are fresh objects holding only
 * `Key` and `Value`, and a list, so a key named `__proto__` stays plain data.
 *
 * @example
 * const source = urlParameters(order.UrlParameters).find((p) => p.Key === "utm_source")?.Value;
 */
export function urlParameters(value: unknown): UrlParameter[] {
  try {
    let list = value;
    if (typeof value === "string") {
      if (value.length > MAX_URL_PARAMETERS_TEXT) return [];
      list = JSON.parse(value);
    }
    if (!Array.isArray(list)) return [];
    const pairs: UrlParameter[] = [];
    for (const entry of list as unknown[]) {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) continue;
      const record = entry as Record<string, unknown>;
      const key = Object.hasOwn(record, "Key") ? text(record.Key) : undefined;
      if (key === undefined) continue;
      const raw = Object.hasOwn(record, "Value") ? record.Value : undefined;
      pairs.push({ Key: key, Value: text(raw) ?? "" });
    }
    return pairs;
  } catch {
    return [];
  }
}

/**
 * A field the payload types do not name: the service sends "more parameters than listed", and the
 * library keeps them. Reads an own field only (never one inherited from a prototype); `undefined`
 * when absent. For a field the type does name, it is that field's type; otherwise `unknown`, to
 * check before use.
 *
 * @example
 * const firstOrder = extraField(order, "IsFirstOrderOfCustomer") === true;
 */
export function extraField<T extends object, K extends string>(
  object: T | null | undefined,
  name: K,
): K extends keyof T ? T[K] : unknown {
  if (object === null || object === undefined || typeof object !== "object") {
    return undefined as K extends keyof T ? T[K] : unknown;
  }
  return (
    Object.hasOwn(object, name) ? (object as Record<string, unknown>)[name] : undefined
  ) as K extends keyof T ? T[K] : unknown;
}

/** A cart token of the form `<cartToken>-<languageId>`, split. */
export interface CartTokenParts {
  readonly cartToken: string;
  /** The language id after the last `-` (1 to 4 digits), or undefined when there is none. */
  readonly languageId: string | undefined;
}

const TOKEN_WITH_LANGUAGE = /^(.+)-(\d{1,4})$/s;

/**
 * Splits a GetCheckoutCartInfo token sent as `<cartToken>-<languageId>` (some stores configure
 * the service so). Only a suffix of 1 to 4 digits after the last `-` counts as the language id, so
 * a UUID token (whose last group has 12 characters) is never split. Use it only if your store
 * builds its tokens that way: a token of your own that ends in `-` and digits would be split too.
 *
 * @example
 * const { cartToken, languageId } = splitCartToken(query.merchantCartToken ?? "");
 */
export function splitCartToken(token: string): CartTokenParts {
  const match = typeof token === "string" ? TOKEN_WITH_LANGUAGE.exec(token) : null;
  if (match === null)
    return { cartToken: typeof token === "string" ? token : "", languageId: undefined };
  return { cartToken: match[1] as string, languageId: match[2] as string };
}
