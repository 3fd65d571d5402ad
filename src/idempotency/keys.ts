/**
 * The default idempotency key of each callback, and how every key is made flat and short before it
 * reaches a store. No key ever holds card data or a digest of it (PCI DSS 3.5.1 forbids an unkeyed
 * hash of a card number): card fields are left out of every digest, whole.
 */
import { sha256Text } from "../auth/digest.js";
import { giftCardFieldsOf, holdsCardSecret, isGiftCardFieldsName } from "../core/card.js";
import { fieldNamesOf, isCardDataKey } from "../core/card-keys.js";
import type { CallbackContext } from "../core/engine.js";
import { fieldInAnyCase, isRecord } from "../core/objects.js";
import { hasControlCharacter } from "../core/text.js";
import { MAX_KEY_LENGTH } from "./store.js";

/** Derives the key of a delivery; `undefined` runs the function without deduplication. */
export type IdempotencyKeyFunction<TPayload> = (
  payload: TPayload,
  context: CallbackContext<TPayload>,
) => string | undefined | Promise<string | undefined>;

/** Fields that are card data wherever they appear (in any casing): never part of a key or a digest. */
const CARD_FIELDS = new Set([
  "paymentdetails",
  "cardnumber",
  "cvvnumber",
  "cardnumberlastfourdigits",
  "expirationdate",
]);

/**
 * A field name that is card data: one of the names above in any casing, or one a transit damage
 * left recognisable (`"\uFFFD(CardNumber"`): ending in the card number's or the payment object's
 * name, or naming a CVV.
 */
function isCardField(name: string): boolean {
  if (isCardDataKey(name)) return true;
  const lower = name.toLowerCase();
  return CARD_FIELDS.has(lower) || lower.endsWith("paymentdetails");
}

/**
 * An object holding a card number or a CVV (`isCardDataKey`: the rule src/core/card.ts hides and
 * masks by): all of it is card data (its other keys may be damaged copies).
 */
function isCardObject(value: Record<string, unknown>): boolean {
  // Own names with the hidden card fields of a protected card object (the key of a payload stays
  // what it was before they were hidden).
  for (const name of fieldNamesOf(value)) if (isCardDataKey(name)) return true;
  return false;
}

/** The shopper's own session (gift cards, vouchers): a secret of the merchant's, never digested. */
const SESSION_FIELDS = new Set(["AuthToken", "SessionId"]);

/**
 * Canonical JSON (keys sorted) of a payload without its card fields and session secrets, so key
 * order never matters. `top` for the payload itself, whose `CardFields` is the gift card's.
 */
function canonical(value: unknown, top = false): string | undefined {
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item) ?? "null").join(",")}]`;
  if (isRecord(value)) {
    if (isCardObject(value)) return undefined;
    const parts: string[] = [];
    for (const name of Object.keys(value).sort()) {
      const field = value[name];
      if (field === undefined || isCardField(name) || SESSION_FIELDS.has(name)) continue;
      // The gift card's CardFields holding more than its id: left out whole, its id digested apart
      // (droppedCardId). Only the payload's own: one below it has no id digested apart, and left
      // out it would give two different cards one key.
      if (top && isGiftCardFieldsName(name) && isRecord(field) && holdsCardSecret(field)) continue;
      const text = canonical(field);
      if (text !== undefined) parts.push(`${JSON.stringify(name)}:${text}`);
    }
    return `{${parts.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 (base64url) of the payload as sent, card fields and session secrets left out. */
export function contentDigest(rawPayload: unknown): Promise<string> {
  return digest(rawPayload, []);
}

/**
 * The content digest, with the gift card ids in it when given (kept even where their `CardFields`
 * object is left out for holding a security code). One id is digested as it always was.
 */
function digest(rawPayload: unknown, cardIds: readonly string[]): Promise<string> {
  const text = canonical(rawPayload, true) ?? "null";
  if (cardIds.length === 0) return sha256Text(text, "base64url");
  const ids = JSON.stringify(cardIds.length === 1 ? cardIds[0] : cardIds);
  return sha256Text(`${ids}:${text}`, "base64url");
}

function text(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function field(payload: unknown, ...path: string[]): string | undefined {
  let value: unknown = payload;
  for (const name of path) value = isRecord(value) ? value[name] : undefined;
  return text(value);
}

/**
 * The gift card ids (`CardFields.CardId`, each in any case), sorted, of every top-level
 * `CardFields` member ({@link giftCardFieldsOf}, any case) left out of the digest: it holds a
 * security code (any member but the id: {@link holdsCardSecret}) or is a card object. Two such members differing only in case
 * are both left out, so both ids are kept, or two different cards would share one key.
 */
function droppedCardIds(payload: unknown): string[] {
  const ids: string[] = [];
  for (const fields of giftCardFieldsOf(payload)) {
    if (!(isCardObject(fields) || holdsCardSecret(fields))) continue;
    const id = text(fieldInAnyCase(fields, "CardId"));
    if (id !== undefined) ids.push(id);
  }
  return ids.sort();
}

function join(...parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined).join(":");
}

/**
 * The default key, per callback (the README's table says why):
 * - SendOrderToMerchant: the order id and a digest of the order without card data (an update has
 *   new content; a redelivery the same);
 * - UpdateOrderStatus: the order id and the status code (case-insensitive);
 * - PerformOrderPayment: the order id alone: an order is paid once, whatever the card;
 * - SendRMAInfoToMerchant: the RMA number (unique per return);
 * - UpdateParcelDispatch: the order id, the parcel code and a digest of the dispatch;
 * - GetCheckoutCartInfo, ValidateGiftCard, ValidateVoucher: none (reads, not deduplicated);
 * - RemoveRestrictedProducts: none (idempotent by nature; the same removal again is a new event);
 * - UpdateOrderShippingInfo: none (the latest shipping info applied again is harmless; a change
 *   back, A → B → A, is a real sequence);
 * - RedeemGiftCard, RefundGiftCard: the order id and a digest of the payload, with the gift
 *   card's `CardFields.CardId` (each in any case) digested apart when its CardFields holds a
 *   security code, any member but the id (two cards of one order, amount and currency are two
 *   operations);
 * - any other: the order id (or RMA number, cart id, cart token) and a digest of the payload.
 */
export async function defaultIdempotencyKey(
  _payload: unknown,
  context: CallbackContext<unknown>,
): Promise<string | undefined> {
  const raw = context.rawPayload;
  const orderId = field(raw, "OrderId");
  let cardIds: string[] = [];
  switch (context.callback) {
    case "GetCheckoutCartInfo":
    case "ValidateGiftCard":
    case "ValidateVoucher":
    // Removal is idempotent by nature, and the same removal again is a new event (the shopper
    // put the product back): deduplicating it would answer success and leave the product.
    case "RemoveRestrictedProducts":
    // The latest shipping info applied again changes nothing, and a change back to earlier
    // content (A → B → A) is a real update: deduplicating it would ship to B.
    case "UpdateOrderShippingInfo":
      return undefined;
    // A CardFields holding a security code (any member but CardId: a Pin, a SecurityCode) is left
    // out of the digest whole: the card's id is digested on its own, so two cards are two keys
    // (the id is a bearer secret: hashed only). A CardFields of CardId alone is in the digest:
    // its key stays what it always was.
    case "RedeemGiftCard":
    case "RefundGiftCard":
      cardIds = droppedCardIds(raw);
      break;
    case "UpdateOrderStatus": {
      const status = field(raw, "StatusCode")?.toLowerCase();
      if (orderId !== undefined && status !== undefined) return join(orderId, status);
      break;
    }
    case "PerformOrderPayment":
      if (orderId !== undefined) return orderId;
      break;
    case "SendRMAInfoToMerchant": {
      const rma = field(raw, "RMANumber");
      if (rma !== undefined) return rma;
      break;
    }
    case "UpdateParcelDispatch": {
      const parcel =
        field(raw, "DispatchedParcel", "Code") ??
        field(raw, "DispatchedParcel", "ParcelTracking", "ParcelCode");
      return join(orderId, parcel, await contentDigest(raw));
    }
  }
  const id =
    orderId ??
    field(raw, "RMANumber") ??
    field(raw, "CartId") ??
    field(raw, "CartToken") ??
    field(raw, "merchantCartToken");
  return join(id, await digest(raw, cardIds));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Whether a key holds a lone surrogate (ill-formed UTF-16): encoded as UTF-8 (by the byte round
 * trip below, and by the Redis and PostgreSQL clients) each becomes U+FFFD, so two keys differing
 * only there would be one key.
 */
function hasLoneSurrogate(key: string): boolean {
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code < 0xd800 || code > 0xdfff) continue;
    const next = key.charCodeAt(i + 1);
    if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

/** The longest `namespace` of `withIdempotency`: with a callback's name and a digest, within `MAX_KEY_LENGTH`. */
export const MAX_NAMESPACE_LENGTH = 128;

/**
 * Checks `withIdempotency`'s `namespace`: a text with a non-blank character, at most
 * `MAX_NAMESPACE_LENGTH` long, without control characters or lone surrogates (which a store, or
 * UTF-8, would change: two namespaces would be one). Returns it as given.
 */
export function checkNamespace(value: unknown): string {
  if (
    typeof value !== "string" ||
    value.trim() === "" ||
    value.length > MAX_NAMESPACE_LENGTH ||
    hasControlCharacter(value) ||
    hasLoneSurrogate(value)
  ) {
    throw new TypeError(
      `withIdempotency: namespace must be a non-empty text of at most ${MAX_NAMESPACE_LENGTH} characters, without control characters (a shop's or an environment's name: "shop-a", "production")`,
    );
  }
  return value;
}

/**
 * The key a store receives: the namespace (when given), the callback, then the derived key; the
 * derived key hashed when the whole is longer than `MAX_KEY_LENGTH` or when it holds control
 * characters (NUL among them, which some stores refuse) or lone surrogates. Built through a byte
 * round trip, so that the stored string is one flat sequence and not a rope of the pieces it was
 * concatenated from (which would keep them all). Without a namespace, the key is what it always was.
 */
export async function storedKey(
  callback: string,
  key: string,
  namespace?: string | undefined,
): Promise<string> {
  const head = namespace === undefined ? callback : `${namespace}:${callback}`;
  let stored = `${head}:${key}`;
  // A lone surrogate is hashed in its JSON escape (`\ud800`), as hashing encodes UTF-8 too.
  const lone = hasLoneSurrogate(key);
  if (stored.length > MAX_KEY_LENGTH || hasControlCharacter(key) || lone)
    stored = `${head}:#${await sha256Text(lone ? JSON.stringify(key) : key, "base64url")}`;
  return decoder.decode(encoder.encode(stored));
}
