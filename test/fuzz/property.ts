/**
 * The fuzzer's property, shared by the suite (`test/fuzz/fuzz.test.ts`, a short seeded run) and
 * `npm run fuzz` (`scripts/fuzz.ts`, the long form). For every callback of `CALLBACK_NAMES`
 * (callbacks added later are covered by the same loop), a sample payload carrying generated card
 * data is mutated — fields deleted, types swapped, nulls, huge strings, numbers as card fields,
 * `__proto__` / `constructor` injected at random depths, encoded garbage, bad JSON bytes, BOM and
 * odd encodings, duplicate keys — and sent through a transport (string, bytes, chunked stream,
 * Node-style async iterable, already-parsed object, fetch `Request` through the fetch adapter) to a
 * router authenticating real RS256 tokens, whose merchant functions throw anything.
 *
 * The oracle computes, from what was mutated, the exact failure kind (its status, its ErrorCode)
 * or the merchant's own outcome, and checks: the callback's own response shape; no card number
 * (the request's own, or any Luhn-valid one) and no CVV of the request in the response, in what
 * `onError` received (every string, deep) or on the console; no prototype changed; no `__proto__`
 * own key reachable from the payload or the raw payload; every PaymentDetails printed masked and
 * without its CVV after the function returned; a pristine request still accepted afterwards.
 * The card keys (`PaymentDetails`, `CardNumber`, `CVVNumber`) are card data in any letter case: a
 * card may be placed under `paymentDetails` with `cardNumber`/`cvvNumber`, protected like the
 * exact one; only the exact `PaymentDetails` has its card fields checked (a 400 otherwise).
 */
import { inspect } from "node:util";
import fc from "fast-check";
import type { z } from "zod";
import { toFetch } from "../../src/adapters/fetch.js";
import { createAuth } from "../../src/auth/index.js";
import { getCheckoutCartInfoRequestSchema } from "../../src/callbacks/get-checkout-cart-info.js";
import { notifyOrderRefund } from "../../src/callbacks/notify-order-refund.js";
import { performOrderPayment } from "../../src/callbacks/perform-order-payment.js";
import { redeemGiftCard } from "../../src/callbacks/redeem-gift-card.js";
import { refundGiftCard } from "../../src/callbacks/refund-gift-card.js";
import { removeRestrictedProducts } from "../../src/callbacks/remove-restricted-products.js";
import { sendAdditionalRequiredDocumentsToMerchant } from "../../src/callbacks/send-additional-required-documents-to-merchant.js";
import { sendOrderToMerchant } from "../../src/callbacks/send-order-to-merchant.js";
import { sendRMAInfoToMerchant } from "../../src/callbacks/send-rma-info-to-merchant.js";
import { updateOrderShippingInfo } from "../../src/callbacks/update-order-shipping-info.js";
import { updateOrderStatus } from "../../src/callbacks/update-order-status.js";
import { updateParcelDispatch } from "../../src/callbacks/update-parcel-dispatch.js";
import { validateGiftCard } from "../../src/callbacks/validate-gift-card.js";
import { validateVoucher } from "../../src/callbacks/validate-voucher.js";
import { FAILURE_CODE } from "../../src/core/errors.js";
import {
  EACH,
  type FieldStep,
  isUnsafeNumber,
  type PathStep,
  pathText,
  unsafeNumberPaths,
} from "../../src/core/exact-numbers.js";
import {
  type BodyInput,
  CALLBACK_NAMES,
  CallbackError,
  type CallbackFailure,
  type CallbackHandlers,
  type CallbackName,
  createCallbackRouter,
  FAILURE_STATUS,
  type FailureKind,
  type WarningKind,
} from "../../src/index.js";
import { answerSuccess } from "../../src/testing/check.js";
import {
  checkResponse,
  createTestKeys,
  SAMPLE_MERCHANT_GUID,
  samplePayload,
  signServiceToken,
} from "../../src/testing/index.js";
import {
  luhnValid,
  paymentDetails,
  quotesStandalone,
  stringsOf,
  withCheckDigit,
} from "../core/leaks.js";

// ---------------------------------------------------------------------------------------------
// What a case is made of
// ---------------------------------------------------------------------------------------------

const TRANSPORTS = ["string", "bytes", "stream", "iterable", "parsed", "fetch"] as const;
type Transport = (typeof TRANSPORTS)[number];

/** A change to the payload as a value (before it is written as JSON). */
type Mutation =
  | { readonly op: "delete"; readonly pick: number }
  | { readonly op: "set"; readonly pick: number; readonly value: unknown }
  | {
      readonly op: "card";
      readonly pick: number;
      readonly field: "CardNumber" | "CVVNumber";
      readonly value: unknown;
    }
  | { readonly op: "inject"; readonly pick: number; readonly key: string; readonly value: unknown };

/** A change to the body as bytes (one per case). */
type Wire =
  | { readonly kind: "none" }
  | { readonly kind: "bom" }
  | { readonly kind: "badUtf8"; readonly at: number }
  | { readonly kind: "utf16" }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "garbage"; readonly text: string }
  | { readonly kind: "duplicateKey"; readonly pick: number; readonly value: unknown }
  | { readonly kind: "empty" }
  | { readonly kind: "nonObject"; readonly value: unknown }
  | { readonly kind: "deep"; readonly pick: number; readonly levels: number }
  | { readonly kind: "oversize" };

/** A change to the request around the body (one per case). */
type Around =
  | "none"
  | "noAuth"
  | "badToken"
  | "strangerToken"
  | "wrongMethod"
  | "gzip"
  | "declaredTooLarge"
  | "stall"
  | "breakMidway";

/** What the merchant's function does. */
type Behaviour =
  | { readonly kind: "ok" }
  | { readonly kind: "callbackError"; readonly status: number | undefined; readonly card: boolean }
  | { readonly kind: "error"; readonly where: "name" | "message" | "code" | "stack" }
  | { readonly kind: "string" }
  | { readonly kind: "object" }
  | { readonly kind: "null" }
  | { readonly kind: "undefined" }
  | { readonly kind: "proxy" }
  | { readonly kind: "toStringThrows" }
  | { readonly kind: "unusableResult" }
  /**
   * A refusal returned instead of thrown where the rules read one: RedeemGiftCard and
   * RefundGiftCard returning `IsValid` false (in any of its forms) are answered 500, never
   * `Success: true`; every other callback returns its plain success.
   */
  | { readonly kind: "refusalReturned"; readonly isValid: false | string }
  /**
   * A failure reported with an error code in the result (review-left D1): PerformOrderPayment,
   * RedeemGiftCard and RefundGiftCard returning their success plus an `ErrorCode` (on the gift-card
   * calls, or an `ErrorText`) without a `Success` of their own (absent or null) are answered 500;
   * with their own `Success` true (a ported answer's `ErrorCode: 100`), a success. The other
   * callbacks whose result has an `ErrorCode` return their success plus one, without `Success`:
   * a success still (SendOrderToMerchant with a card to charge: with one `result_incomplete`
   * warning); the rest return their plain success.
   */
  | {
      readonly kind: "errorCodeReturned";
      readonly field: "ErrorCode" | "ErrorText";
      readonly success: "absent" | null | true | "true";
    };

/** The callbacks whose result's `IsValid: false` is a refusal (a 500), not a success. */
const REFUSED_BY_IS_VALID: ReadonlySet<CallbackName> = new Set([
  "RedeemGiftCard",
  "RefundGiftCard",
]);

/**
 * The callbacks whose result's error code (`ErrorCode`; on the gift-card calls `ErrorText` too)
 * without its own `Success: true` is a refusal (a 500): their success says money moved.
 */
const REFUSED_BY_ERROR_CODE: ReadonlySet<CallbackName> = new Set([
  "PerformOrderPayment",
  "RedeemGiftCard",
  "RefundGiftCard",
]);

/** The other callbacks whose result has an `ErrorCode` field, answered as it is. */
const ANSWERS_ERROR_CODE: ReadonlySet<CallbackName> = new Set([
  "SendOrderToMerchant",
  "UpdateOrderStatus",
  "SendAdditionalRequiredDocumentsToMerchant",
  "NotifyOrderRefund",
  "UpdateOrderShippingInfo",
  "ValidateGiftCard",
  "ValidateVoucher",
]);

/** Whether the case's merchant returns a failure with an error code the library answers 500. */
function refusedByErrorCode(c: FuzzCase): boolean {
  return (
    c.merchant.kind === "errorCodeReturned" &&
    REFUSED_BY_ERROR_CODE.has(c.callback) &&
    (c.merchant.success === "absent" || c.merchant.success === null)
  );
}

/**
 * Whether an order as the merchant's function got it carried a card to charge (001 §4.2): its
 * `PaymentDetails` (that key, else the key in any case) is an object with a `CardNumber` (in any
 * case) that is text, not blank, and its `PaymentMethodCode` (that key, else in any case) is not
 * "OT" (the service collected the payment itself).
 */
function chargesCard(order: unknown): boolean {
  const details = anyCase(order, "PaymentDetails");
  if (details === null || typeof details !== "object" || Array.isArray(details)) return false;
  const method = anyCase(details, "PaymentMethodCode");
  if (typeof method === "string" && method.trim().toUpperCase() === "OT") return false;
  // Own names, hidden ones too: the card fields are not enumerable (review PIT-1).
  return Object.getOwnPropertyNames(details).some((key) => {
    const value = (details as Record<string, unknown>)[key];
    return /^cardnumber$/i.test(key) && typeof value === "string" && value.trim() !== "";
  });
}

/** A field by its name, else by the name in any case (the first such key). */
function anyCase(value: unknown, name: string): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, name)) return record[name];
  const key = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : record[key];
}

interface Card {
  readonly pan: string;
  readonly cvv: string;
  /** `cased`: at the top level under PaymentDetails in another case, its card fields too. */
  readonly where: "sample" | "top" | "nested" | "array" | "cased";
  readonly pick: number;
}

export interface FuzzCase {
  readonly callback: CallbackName;
  readonly transport: Transport;
  readonly chunk: number;
  readonly cartMethod: "GET" | "POST";
  readonly card: Card;
  readonly mutations: readonly Mutation[];
  readonly wire: Wire;
  readonly around: Around;
  readonly merchant: Behaviour;
  readonly hook: "custom" | "console";
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** The statuses the fuzzed merchant's CallbackError carries (its answer may quote them). */
const THROWN_STATUSES = [200, 409, 422, 503] as const;

/**
 * Numbers that fixed texts carry (statuses, limits, the merchant's own thrown statuses): a CVV
 * equal to one could not be told apart from the text quoting it.
 */
const RESERVED = new Set(
  [...Object.values(FAILURE_STATUS), ...THROWN_STATUSES, 64, 1048576].map((n) => String(n)),
);

const HUGE = 300_000;

const panArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .string({ unit: fc.constantFrom(..."0123456789"), minLength: 12, maxLength: 18 })
      .map((digits) => withCheckDigit(`4${digits.slice(1)}`)),
  },
  { weight: 1, arbitrary: fc.constant(`5${"4".repeat(HUGE - 1)}`) },
);

const cvvArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .string({ unit: fc.constantFrom(..."0123456789"), minLength: 3, maxLength: 4 })
      .filter((cvv) => !RESERVED.has(cvv)),
  },
  { weight: 1, arbitrary: fc.constant("7".repeat(HUGE)) },
);

/** Encoded-looking garbage: malformed and well-formed percent sequences, pluses. */
const encodedGarbageArb = fc
  .array(
    fc.constantFrom(
      "%",
      "%zz",
      "%E0%A4%A",
      "%ED%A0%80",
      "100%",
      "+",
      "%2B",
      "%252B",
      "%00",
      "a",
      "é",
      "%C3%A9",
      " ",
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(""));

const hugeStringArb = fc
  .constantFrom("x", "%41", "€", "\u0000", "<")
  .map((unit) => unit.repeat(HUGE / unit.length));

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  // Integers beyond 2^53 (a 19-digit gift card id): exact from the text, or a 400 (ENC-1).
  { weight: 1, arbitrary: fc.constantFrom(2 ** 53, -(2 ** 60), 6035710000000000000) },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: encodedGarbageArb },
  { weight: 1, arbitrary: hugeStringArb },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("set" as const), pick: fc.nat(), value: valueArb }),
  fc.record({
    op: fc.constant("card" as const),
    pick: fc.nat(),
    field: fc.constantFrom("CardNumber" as const, "CVVNumber" as const),
    value: fc.oneof(
      fc.constant(4111111111111111),
      fc.constant(737),
      fc.constant(null),
      fc.constant(undefined),
      fc.boolean(),
      fc.constant([]),
      fc.constant("7".repeat(HUGE)),
    ),
  }),
  fc.record({
    op: fc.constant("inject" as const),
    pick: fc.nat(),
    key: fc.constantFrom("__proto__", "constructor", "__proto__", "prototype"),
    value: fc.oneof(
      fc.constant({ polluted: true, OrderId: "forged", MerchantGUID: "forged" }),
      fc.constant({ prototype: { polluted: true } }),
      fc.jsonValue({ maxDepth: 2 }),
      fc.constant({ PaymentDetails: { CardNumber: 4111111111111111 } }),
    ),
  }),
);

const wireArb: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "bom" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("badUtf8" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "utf16" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("garbage" as const), text: fc.string() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("duplicateKey" as const),
      pick: fc.nat(),
      value: fc.jsonValue({ maxDepth: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "empty" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("nonObject" as const),
      value: fc.oneof(
        fc.constant([]),
        fc.constant(null),
        fc.integer(),
        fc.string(),
        fc.constant([{ a: 1 }]),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep" as const),
      pick: fc.nat(),
      levels: fc.integer({ min: 70, max: 1500 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "oversize" as const }) },
);

const aroundArb: fc.Arbitrary<Around> = fc.oneof(
  { weight: 30, arbitrary: fc.constant("none" as const) },
  ...(
    [
      "noAuth",
      "badToken",
      "strangerToken",
      "wrongMethod",
      "gzip",
      "declaredTooLarge",
      "stall",
      "breakMidway",
    ] as const
  ).map((around) => ({ weight: 1, arbitrary: fc.constant(around) })),
);

const behaviourArb: fc.Arbitrary<Behaviour> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ kind: "ok" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("callbackError" as const),
      status: fc.constantFrom(undefined, ...THROWN_STATUSES),
      card: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("error" as const),
      where: fc.constantFrom(
        "name" as const,
        "message" as const,
        "code" as const,
        "stack" as const,
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      { kind: "string" as const },
      { kind: "object" as const },
      { kind: "null" as const },
      { kind: "undefined" as const },
      { kind: "proxy" as const },
      { kind: "toStringThrows" as const },
      { kind: "unusableResult" as const },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("refusalReturned" as const),
      isValid: fc.constantFrom(false as const, "false", "False", " FALSE "),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("errorCodeReturned" as const),
      field: fc.constantFrom("ErrorCode" as const, "ErrorText" as const),
      success: fc.constantFrom("absent" as const, null, true as const, "true" as const),
    }),
  },
);

export const fuzzCaseArb: fc.Arbitrary<FuzzCase> = fc.record({
  callback: fc.constantFrom(...CALLBACK_NAMES),
  transport: fc.constantFrom(...TRANSPORTS),
  chunk: fc.integer({ min: 1, max: 4096 }),
  cartMethod: fc.constantFrom("GET" as const, "POST" as const),
  card: fc.record({
    pan: panArb,
    cvv: cvvArb,
    where: fc.constantFrom(
      "sample" as const,
      "top" as const,
      "nested" as const,
      "array" as const,
      "cased" as const,
    ),
    pick: fc.nat(),
  }),
  mutations: fc.array(mutationArb, { maxLength: 3 }),
  wire: wireArb,
  around: aroundArb,
  merchant: behaviourArb,
  hook: fc.constantFrom("custom" as const, "custom" as const, "console" as const),
});

// ---------------------------------------------------------------------------------------------
// Building the payload
// ---------------------------------------------------------------------------------------------

type Key = string | number;
type Json = Record<string, unknown> | unknown[];

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return isObject(value) && !Array.isArray(value);
}

/** Every path to a value in the tree (the root excluded), depth first. */
function pathsOf(root: unknown): Key[][] {
  const out: Key[][] = [];
  const stack: [unknown, Key[]][] = [[root, []]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, Key[]];
    if (!isObject(node)) continue;
    const keys: Key[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const key of keys.reverse()) {
      const next = [...path, key];
      out.push(next);
      stack.push([(node as Record<Key, unknown>)[key], next]);
    }
  }
  return out;
}

/** Paths of the objects (not arrays) in the tree, the root first. */
function objectPathsOf(root: unknown): Key[][] {
  return [[], ...pathsOf(root).filter((path) => isRecord(at(root, path)))];
}

function at(root: unknown, path: readonly Key[]): unknown {
  let node = root;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<Key, unknown>)[key];
  }
  return node;
}

/** Sets an own data property (even `__proto__`), as JSON.parse would have made it. */
function define(target: object, key: Key, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A deep copy of JSON data that keeps own `__proto__` keys as own keys. */
function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function isCartGet(c: FuzzCase): boolean {
  return c.callback === "GetCheckoutCartInfo" && c.cartMethod === "GET";
}

interface Built {
  readonly payload: Record<string, unknown>;
  /** Dotted paths the mutations changed (a refusal must name one of them). */
  readonly touched: string[];
}

/** The sample payload of a case, with its card data placed and its mutations applied. */
function buildPayload(c: FuzzCase): Built {
  const flat = isCartGet(c);
  const payload = clone(samplePayload(c.callback)) as Record<string, unknown>;
  if (c.callback === "GetCheckoutCartInfo" && !flat) payload.MerchantGUID = SAMPLE_MERCHANT_GUID;
  if (!flat) placeCard(payload, c.card);
  const touched: string[] = [];
  for (const mutation of c.mutations) {
    const path = flat ? mutateQuery(payload, mutation) : mutate(payload, mutation);
    if (path !== undefined) touched.push(path.join("."));
  }
  return { payload, touched };
}

/** PaymentDetails, CardNumber and CVVNumber in other letter cases. */
const CASINGS = [
  ["paymentDetails", "cardNumber", "cvvNumber"],
  ["PAYMENTDETAILS", "CARDNUMBER", "CVVNUMBER"],
  ["paymentdetails", "Cardnumber", "cvvnumber"],
] as const;

/** The card keys in any ASCII case (`i` without `u` folds no other letter into ASCII). */
const DETAILS_KEY = /^paymentdetails$/i;
const CARD_NUMBER_KEY = /^cardnumber$/i;
const CVV_NUMBER_KEY = /^cvvnumber$/i;
/**
 * A key of a card object naming a card number: `CardNumber` in any case or any key ending with it
 * (`"\uFFFD(CardNumber"`, damaged in transit). With a key naming a CVV (`/cvv/i`), the card fields
 * the library hides and masks (review SECOND-PITA-3).
 */
const CARD_FIELD_KEY = /cardnumber$/i;
/** The key damaged in transit the generated card objects sometimes also carry their number under. */
const DAMAGED_CARD_KEY = "\uFFFD(CardNumber";

/**
 * The values of an object's own keys matching `key` (a card field in any case), non-enumerable ones
 * too: a protected card object hides its card fields (review PIT-1).
 */
function fieldsNamed(details: Record<string, unknown>, key: RegExp): unknown[] {
  return Object.getOwnPropertyNames(details)
    .filter((name) => key.test(name))
    .map((name) => details[name]);
}

function placeCard(payload: Record<string, unknown>, card: Card): void {
  // The sample's own PaymentDetails take the generated card data.
  for (const path of pathsOf(payload)) {
    const found = at(payload, path);
    if (path.at(-1) === "PaymentDetails" && isRecord(found)) {
      found.CardNumber = card.pan;
      found.CVVNumber = card.cvv;
    }
  }
  const details = paymentDetails(card.pan, card.cvv);
  // A copy of the card number under a key damaged in transit: a card field all the same.
  if (card.pick % 3 === 0) details[DAMAGED_CARD_KEY] = card.pan;
  if (card.where === "cased") {
    // The keys in another case: card data all the same (never checked).
    const casing = CASINGS[card.pick % CASINGS.length] as (typeof CASINGS)[number];
    const { CardNumber: pan, CVVNumber: cvv, ...rest } = details;
    payload[casing[0]] = { [casing[1]]: pan, [casing[2]]: cvv, ...rest };
  } else if (card.where === "top") payload.PaymentDetails = details;
  else if (card.where === "array")
    payload.FuzzPayments = [{ Kind: "card", PaymentDetails: details }];
  else if (card.where === "nested") {
    const targets = objectPathsOf(payload);
    const target = at(payload, targets[card.pick % targets.length] as Key[]);
    if (isRecord(target)) target.PaymentDetails = details;
  }
}

/** GetCheckoutCartInfo by GET: its parameters are query strings. */
function mutateQuery(payload: Record<string, unknown>, mutation: Mutation): Key[] | undefined {
  const keys = Object.keys(payload);
  const key = keys[mutation.pick % Math.max(keys.length, 1)];
  const text = (value: unknown) =>
    typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  if (mutation.op === "inject") {
    define(payload, mutation.key, text(mutation.value));
    return mutation.key === "__proto__" ? undefined : [mutation.key];
  }
  if (key === undefined) return undefined;
  if (mutation.op === "delete") delete payload[key];
  else if (mutation.op === "set") payload[key] = text(mutation.value);
  else return undefined;
  return [key];
}

function mutate(payload: Record<string, unknown>, mutation: Mutation): Key[] | undefined {
  if (mutation.op === "card") {
    const cards = pathsOf(payload).filter((path) => path.at(-1) === "PaymentDetails");
    const path = cards[mutation.pick % Math.max(cards.length, 1)];
    const details = path === undefined ? undefined : at(payload, path);
    if (path === undefined || !isRecord(details)) return undefined;
    if (mutation.value === undefined) delete details[mutation.field];
    else details[mutation.field] = mutation.value;
    return [...path, mutation.field];
  }
  if (mutation.op === "inject") {
    const targets = objectPathsOf(payload);
    const path = targets[mutation.pick % targets.length] as Key[];
    define(at(payload, path) as object, mutation.key, clone(mutation.value));
    return mutation.key === "__proto__" ? undefined : [...path, mutation.key];
  }
  const paths = pathsOf(payload);
  const path = paths[mutation.pick % Math.max(paths.length, 1)];
  if (path === undefined) return undefined;
  const parent = at(payload, path.slice(0, -1)) as Json;
  const key = path.at(-1) as Key;
  if (mutation.op === "delete") {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key as string];
  } else define(parent, key, clone(mutation.value));
  return path;
}

// ---------------------------------------------------------------------------------------------
// The wire: the bytes sent, and what the engine can make of them
// ---------------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const BYTE_LEVEL = new Set<Wire["kind"]>(["bom", "badUtf8", "utf16", "truncate", "garbage"]);

/** The body as sent (undefined for GET) and the query string. */
interface Sent {
  readonly bytes: Uint8Array | undefined;
  /** For the parsed transport: the framework's value (`undefined` when it has none). */
  readonly value: unknown;
  readonly query: URLSearchParams;
}

function wireOf(c: FuzzCase, payload: Record<string, unknown>): Sent {
  const query = new URLSearchParams();
  if (isCartGet(c)) {
    for (const key of Object.keys(payload)) query.append(key, String(payload[key]));
    return { bytes: undefined, value: undefined, query };
  }
  // A framework's parsed body can only be JSON: byte-level damage does not reach the engine.
  const w =
    c.transport === "parsed" && BYTE_LEVEL.has(c.wire.kind) ? { kind: "none" as const } : c.wire;
  let text = JSON.stringify(payload);
  switch (w.kind) {
    case "empty":
      return { bytes: new Uint8Array(0), value: undefined, query };
    case "nonObject":
      text = JSON.stringify(w.value);
      break;
    case "duplicateKey": {
      const keys = Object.keys(payload);
      const key = keys[w.pick % Math.max(keys.length, 1)];
      // An earlier copy of a key: the last one wins, so the payload does not change.
      if (key !== undefined)
        text = `{${JSON.stringify(key)}:${JSON.stringify(w.value)},${text.slice(1)}`;
      break;
    }
    case "deep": {
      const targets = objectPathsOf(payload);
      const target = at(payload, targets[w.pick % targets.length] as Key[]) as Record<
        string,
        unknown
      >;
      let nested: unknown = "bottom";
      for (let i = 0; i < w.levels; i++) nested = [nested];
      target.Deep = nested;
      text = JSON.stringify(payload);
      break;
    }
    case "oversize":
      payload.Padding = "p".repeat(MAX_BODY);
      text = JSON.stringify(payload);
      break;
    case "garbage":
      // Never JSON (nothing valid starts with "<"); for the cart, form fields without a GUID.
      text = `<${w.text}`;
      break;
    default:
      break;
  }
  let bytes: Uint8Array;
  if (w.kind === "bom") bytes = encoder.encode(`\uFEFF${text}`);
  else if (w.kind === "utf16") {
    bytes = new Uint8Array(text.length * 2);
    for (let i = 0; i < text.length; i++) {
      bytes[i * 2] = text.charCodeAt(i) & 0xff;
      bytes[i * 2 + 1] = text.charCodeAt(i) >> 8;
    }
  } else if (w.kind === "badUtf8") {
    const good = encoder.encode(text);
    const cut = w.at % good.length;
    bytes = new Uint8Array(good.length + 2);
    bytes.set(good.subarray(0, cut), 0);
    bytes.set([0xc3, 0x28], cut);
    bytes.set(good.subarray(cut), cut + 2);
  } else if (w.kind === "truncate") {
    bytes = encoder.encode(text).slice(0, w.at % Math.max(text.length, 1));
  } else bytes = encoder.encode(text);
  if (c.transport === "string") {
    // A string carries text, not bytes: what it can carry is what the engine encodes again.
    bytes = encoder.encode(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes));
  }
  let value: unknown;
  if (c.transport === "parsed")
    value = bytes.length === 0 ? undefined : JSON.parse(new TextDecoder().decode(bytes));
  return { bytes, value, query };
}

type Parsed =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly expected: Expected };

const malformed = (description: string): Expected => ({
  kinds: ["malformed_body"],
  description: (d) => d === description,
});

/** What the engine makes of bytes: UTF-8 (fatal, BOM dropped), then JSON — or, for the cart, a
 * form when the text does not start with "{". */
function parseBytes(c: FuzzCase, bytes: Uint8Array): Parsed {
  const isCart = c.callback === "GetCheckoutCartInfo";
  if (bytes.length === 0)
    return isCart
      ? { ok: true, value: undefined }
      : { ok: false, expected: malformed("Request body is empty") };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    // Gzip data (1f 8b) is the compressed-body 415, found only once the UTF-8 check failed.
    if (bytes[0] === 0x1f && bytes[1] === 0x8b)
      return { ok: false, expected: { kinds: ["unsupported_media_type"] } };
    return { ok: false, expected: malformed("Request body is not valid UTF-8") };
  }
  if (isCart && !text.trim().startsWith("{")) {
    const fields: Record<string, unknown> = {};
    // Decoded as the query is (SECOND-ENC-3): a name or value whose `%xx` is not strict UTF-8
    // is kept raw, as sent (the first of a repeated name wins).
    const form = text.trim();
    if (!form.includes("%")) {
      for (const [key, value] of new URLSearchParams(form)) define(fields, key, value);
      return { ok: true, value: fields };
    }
    const strict = (raw: string): string => {
      try {
        return decodeURIComponent(raw.replaceAll("+", " "));
      } catch {
        return raw;
      }
    };
    for (const pair of form.split("&")) {
      if (pair === "") continue;
      const equals = pair.indexOf("=");
      const key = strict(equals === -1 ? pair : pair.slice(0, equals));
      if (!Object.hasOwn(fields, key))
        define(fields, key, strict(equals === -1 ? "" : pair.slice(equals + 1)));
    }
    return { ok: true, value: fields };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, expected: malformed("Request body is not valid JSON") };
  }
}

/** What a framework's parsed value is to the engine: null is no body, a string is raw text. */
function parseValue(c: FuzzCase, value: unknown): Parsed {
  if (value === undefined || value === null) return parseBytes(c, new Uint8Array(0));
  if (typeof value === "string") return parseBytes(c, encoder.encode(value));
  return { ok: true, value };
}

// ---------------------------------------------------------------------------------------------
// The model: what the library must answer, from what was mutated
// ---------------------------------------------------------------------------------------------

/** The schemas of the callbacks. A callback missing here (added later) is still fuzzed: its
 * schema's refusal must then name a path a mutation touched. */
const SCHEMAS: Partial<Record<CallbackName, z.ZodType>> = {
  ValidateGiftCard: validateGiftCard.schema,
  RedeemGiftCard: redeemGiftCard.schema,
  RefundGiftCard: refundGiftCard.schema,
  ValidateVoucher: validateVoucher.schema,
  NotifyOrderRefund: notifyOrderRefund.schema,
  UpdateOrderShippingInfo: updateOrderShippingInfo.schema,
  GetCheckoutCartInfo: getCheckoutCartInfoRequestSchema,
  SendOrderToMerchant: sendOrderToMerchant.schema,
  UpdateOrderStatus: updateOrderStatus.schema,
  PerformOrderPayment: performOrderPayment.schema,
  SendRMAInfoToMerchant: sendRMAInfoToMerchant.schema,
  UpdateParcelDispatch: updateParcelDispatch.schema,
  RemoveRestrictedProducts: removeRestrictedProducts.schema,
  SendAdditionalRequiredDocumentsToMerchant: sendAdditionalRequiredDocumentsToMerchant.schema,
};

const MAX_BODY = 1024 * 1024;
const MAX_DEPTH = 64;
const SHORT_TIMEOUT_MS = 40;

type LibraryKind = Exclude<FailureKind, "handler_failure" | WarningKind>;

/**
 * A failure of the library's own (one kind, or either of two the walk may meet first), with what
 * its Description may say; or "the merchant decides", possibly refused by a schema this file does
 * not know (`unknownSchema`: the paths a refusal may name).
 */
type Expected =
  | {
      readonly kinds: readonly LibraryKind[];
      readonly description?: (text: string) => boolean;
    }
  | {
      readonly kinds: "merchant";
      readonly unknownSchema?: readonly string[];
    };

/** A copy without own `__proto__` keys, at every level (what the library must hand over). */
function sealed(value: unknown): unknown {
  if (!isObject(value)) return value;
  if (Array.isArray(value)) return value.map(sealed);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    if (key !== "__proto__") define(out, key, sealed(value[key]));
  return out;
}

function tooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (!isObject(node)) continue;
    if (depth > MAX_DEPTH) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Every value under a PaymentDetails key (in any case) reachable from a value (keys of objects,
 * not array indices).
 */
function paymentDetailsIn(root: unknown): { path: Key[]; value: unknown }[] {
  return pathsOf(root)
    .filter(
      (path) =>
        typeof path.at(-1) === "string" &&
        DETAILS_KEY.test(path.at(-1) as string) &&
        isRecord(at(root, path.slice(0, -1))),
    )
    .map((path) => ({ path, value: at(root, path) }));
}

/** The card objects under PaymentDetails keys in any case. */
function detailsObjects(value: unknown): Record<string, unknown>[] {
  return paymentDetailsIn(value)
    .map((found) => found.value)
    .filter(isRecord);
}

/** Whether a card object still holds a CVV field (`CVVNumber` in any case). */
function keepsCvv(details: Record<string, unknown>): boolean {
  return Object.getOwnPropertyNames(details).some((name) => CVV_NUMBER_KEY.test(name));
}

/**
 * A card field of a card object that a copy of its own enumerable properties would take (spread,
 * `Object.assign`, `structuredClone`, pino, winston, BSON): a key naming a card number (`CARD_FIELD_KEY`) or a key
 * naming a CVV, enumerable (review PIT-1: they must be hidden).
 */
function enumerableCardField(details: Record<string, unknown>): string | undefined {
  return Object.keys(details).find((name) => CARD_FIELD_KEY.test(name) || /cvv/i.test(name));
}

/** The card fields are checked under the exact PaymentDetails key only (another case: protected). */
function cardRuleBroken(root: unknown): boolean {
  const exact = paymentDetailsIn(root).filter(({ path }) => path.at(-1) === "PaymentDetails");
  for (const { value } of exact) {
    if (value === null) continue;
    if (!isRecord(value)) return true;
    for (const field of ["CardNumber", "CVVNumber"]) {
      const card = Object.hasOwn(value, field) ? value[field] : undefined;
      if (card !== undefined && card !== null && typeof card !== "string") return true;
    }
  }
  return false;
}

/** GetCheckoutCartInfo's payload: the body's fields, then the query's (first value of each). */
function cartInput(
  query: URLSearchParams,
  body: unknown,
  exactText = true,
): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  if (isObject(body))
    for (const key of Object.keys(body))
      define(payload, key, (body as Record<string, unknown>)[key]);
  for (const key of new Set(query.keys())) define(payload, key, query.get(key));
  // A documented parameter (or the cartToken alias) a JSON body sends as a finite number is its
  // text, as the same value in a query (README, "GetCheckoutCartInfo's parameters"); one beyond
  // 2^53 is the literal sent (its value the same), or stays a number the schema refuses when the
  // body's text is not at hand (a framework's parsed body).
  for (const key of Object.keys(payload)) {
    const value = payload[key];
    if (
      CART_PARAMETERS.has(key.toLowerCase()) &&
      typeof value === "number" &&
      Number.isFinite(value) &&
      (exactText || !isUnsafeNumber(value))
    )
      define(payload, key, String(value));
  }
  return payload;
}

/** The id fields whose numbers beyond 2^53 are taken exactly from the body's text. */
const GIFT_CARD_IDS: readonly (readonly FieldStep[])[] = [["CardFields", "CardId"], ["CustomerId"]];
const EXACT_NUMBERS: Partial<Record<string, readonly (readonly FieldStep[])[]>> = {
  ValidateGiftCard: GIFT_CARD_IDS,
  RedeemGiftCard: GIFT_CARD_IDS,
  RefundGiftCard: GIFT_CARD_IDS,
  ValidateVoucher: GIFT_CARD_IDS,
  NotifyOrderRefund: [
    ["GiftCardsData", EACH, "CardId"],
    ["Refunds", EACH, "GiftCardsData", EACH, "CardId"],
  ],
};

const CART_PARAMETERS: ReadonlySet<string> = new Set([
  "merchantcarttoken",
  "carttoken",
  "countrycode",
  "currencycode",
]);

/**
 * The callbacks whose documented payload carries no MerchantGUID or is not shown (000 §4.10): with
 * the JWT proving the caller, a GUID sent must match, and none is required (README, "merchantGuid").
 */
const GUID_WHEN_PRESENT: ReadonlySet<string> = new Set([
  "NotifyOrderRefund",
  "SendAdditionalRequiredDocumentsToMerchant",
  "RedeemGiftCard",
  "RefundGiftCard",
  "ValidateVoucher",
  "UpdateOrderShippingInfo",
]);

function merchantGuidRefused(payload: unknown, optional: boolean): boolean {
  let found = false;
  if (isRecord(payload)) {
    for (const key of Object.keys(payload)) {
      if (key.toLowerCase() !== "merchantguid") continue;
      const value = payload[key];
      // Where none is required, null or blank is none.
      if (optional && (value === null || (typeof value === "string" && value.trim() === "")))
        continue;
      if (typeof value !== "string" || value.trim().toLowerCase() !== SAMPLE_MERCHANT_GUID)
        return true;
      found = true;
    }
  }
  return !found && !optional;
}

/** From the parsed body on: the walk, the object check, the schema, the merchant GUID. */
function afterParse(
  c: FuzzCase,
  body: unknown,
  query: URLSearchParams,
  touched: readonly string[],
): Expected {
  const isCart = c.callback === "GetCheckoutCartInfo";
  // What the walk sees: a `__proto__` key is deleted before anything under it is looked at.
  const input = sealed(isCart ? cartInput(query, body, c.transport !== "parsed") : body);
  const deep = tooDeep(input);
  const broken = !deep && cardRuleBroken(input);
  if (deep) {
    // The walk stops at the first of the two problems it meets.
    return {
      kinds: ["malformed_body", "invalid_payload"],
      description: (d) =>
        d === `Request body is nested deeper than ${MAX_DEPTH} levels` ||
        d.includes("PaymentDetails"),
    };
  }
  if (broken)
    return {
      kinds: ["invalid_payload"],
      description: (d) => /PaymentDetails(\.\w+)?: expected /.test(d),
    };
  return afterWalk(c, input, touched);
}

/** After the walk: the object check, the schema, the merchant GUID. */
function afterWalk(c: FuzzCase, model: unknown, touched: readonly string[]): Expected {
  const isCart = c.callback === "GetCheckoutCartInfo";
  if (!isCart && !isRecord(model)) return malformed("Request body must be a JSON object");
  const schema = SCHEMAS[c.callback];
  let unknownSchema: readonly string[] | undefined;
  if (schema === undefined) unknownSchema = touched;
  else {
    const verdict = schema.safeParse(model);
    if (!verdict.success) {
      const issue = verdict.error.issues[0];
      const first = issue?.path.map(String).join(".") || "(root)";
      // A union no option of which accepts: zod's `invalid_union` there, or (the engine describes
      // only the failing parts, src/core/bounded-parse.ts) the issues of its option that fails
      // inside a list, under the union's path.
      const within =
        issue?.code === "invalid_union" && first !== "(root)" ? `${first}.` : undefined;
      return {
        kinds: ["invalid_payload"],
        description: (d) =>
          d.includes(`${first}: `) || (within !== undefined && d.includes(within)),
      };
    }
  }
  // An id typed text or number holding an integer beyond 2^53 (JSON.parse rounded it): its exact
  // digits from the body's text, or a 400 naming it when a framework parsed the body (ENC-1).
  const exact = EXACT_NUMBERS[c.callback];
  const unsafe = exact === undefined ? undefined : unsafeNumberPaths(model, exact);
  if (unsafe !== undefined && c.transport === "parsed") {
    const first = pathText(unsafe[0] as PathStep[]);
    return { kinds: ["invalid_payload"], description: (d) => d.includes(`${first}: `) };
  }
  if (merchantGuidRefused(model, isCartGet(c) || GUID_WHEN_PRESENT.has(c.callback)))
    return { kinds: ["unauthorized"], description: (d) => d === "" };
  return unknownSchema === undefined ? { kinds: "merchant" } : { kinds: "merchant", unknownSchema };
}

/** The input the engine validates (the cart's built from the query and body), if it parses. */
function received(c: FuzzCase, sent: Sent): unknown {
  const isCart = c.callback === "GetCheckoutCartInfo";
  if (isCartGet(c)) return cartInput(sent.query, undefined);
  const parsed =
    c.transport === "parsed" ? parseValue(c, sent.value) : parseBytes(c, sent.bytes as Uint8Array);
  if (!parsed.ok) return undefined;
  return isCart ? cartInput(sent.query, parsed.value, c.transport !== "parsed") : parsed.value;
}

/** The whole pipeline, in the engine's order: method, authentication, reading, parsing, then on. */
function expectedOf(c: FuzzCase, sent: Sent, touched: readonly string[]): Expected {
  const around = c.around;
  if (around === "wrongMethod") return { kinds: ["method_not_allowed"] };
  if (around === "noAuth" || around === "badToken" || around === "strangerToken") {
    return { kinds: ["unauthorized"], description: (d) => d === "" };
  }
  if (isCartGet(c)) return afterParse(c, undefined, sent.query, touched);
  const bytes = sent.bytes as Uint8Array;
  if (c.transport === "parsed") {
    // A parser's object (or a JSON number or boolean) is held to the limit by its Content-Length;
    // text is measured, and null or nothing is no body. Text handed to the engine is the raw
    // body: compressed, it is refused like the other raw forms; so is no body at all under a
    // coding (Bun hands `null` for an empty gzip body).
    const value = sent.value;
    if (around === "gzip" && (typeof value === "string" || value === undefined || value === null))
      return { kinds: ["unsupported_media_type"] };
    const object = value !== undefined && value !== null && typeof value !== "string";
    if (around === "declaredTooLarge" && object) return { kinds: ["payload_too_large"] };
    const parsed = parseValue(c, value);
    return parsed.ok ? afterParse(c, parsed.value, sent.query, touched) : parsed.expected;
  }
  // Refused from the headers, before a stream (even an empty one) is read, and before text or
  // bytes (even empty) are looked at: every raw body the engine reads must not be compressed.
  if (around === "gzip") return { kinds: ["unsupported_media_type"] };
  const streaming =
    c.transport === "stream" || c.transport === "iterable" || c.transport === "fetch";
  if (streaming) {
    if (around === "declaredTooLarge") return { kinds: ["payload_too_large"] };
    // Stalls or breaks after its first chunk, when it has a second one.
    if (around === "stall" && bytes.length > c.chunk) return { kinds: ["request_timeout"] };
    if (around === "breakMidway" && bytes.length > c.chunk) return { kinds: ["client_closed"] };
  }
  if (bytes.length > MAX_BODY) return { kinds: ["payload_too_large"] };
  const parsed = parseBytes(c, bytes);
  return parsed.ok ? afterParse(c, parsed.value, sent.query, touched) : parsed.expected;
}

// ---------------------------------------------------------------------------------------------
// What must never be let out
// ---------------------------------------------------------------------------------------------

/** The request's own card numbers and CVVs, where a text could not contain them by chance. */
function secretsOf(input: unknown): string[] {
  const out: string[] = [];
  for (const details of detailsObjects(sealed(input))) {
    for (const value of [
      ...fieldsNamed(details, CARD_FIELD_KEY),
      ...fieldsNamed(details, CVV_NUMBER_KEY),
    ]) {
      if (typeof value !== "string") continue;
      const trimmed = value.trim();
      const digits = /^\d+$/.test(trimmed);
      if ((digits && trimmed.length >= 3 && !RESERVED.has(trimmed)) || trimmed.length >= 24)
        out.push(trimmed);
    }
  }
  // The shopper's session (gift cards, vouchers), never quoted either: where long enough that a
  // text could not hold it by chance.
  const top = sealed(input);
  for (const field of SESSION_FIELDS) {
    const value = top !== null && typeof top === "object" ? readOwn(top, field) : undefined;
    if (typeof value === "string" && value.trim().length >= 8)
      out.push(...quotedForms(value.trim()));
  }
  return out;
}

/**
 * A session value as a text may quote it (review privacy-1): as sent, URL-encoded, form-encoded,
 * JSON-escaped, and JSON-escaped with `/` as `\/`. Each is masked wherever quoted.
 */
function quotedForms(value: string): string[] {
  const forms = [value];
  try {
    const encoded = encodeURIComponent(value);
    forms.push(encoded, encoded.replace(/%20/g, "+"));
  } catch {
    // A lone surrogate: no URL quotes it.
  }
  const json = JSON.stringify(value).slice(1, -1);
  forms.push(json, json.replace(/\//g, "\\/"));
  return [...new Set(forms)];
}

const SESSION_FIELDS = ["AuthToken", "SessionId"] as const;

function readOwn(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

/** A Luhn-valid 13–19 digit sequence (single spaces or dashes between digits), found naively. */
function luhnSequence(text: string): string | undefined {
  for (const run of text.match(/\d(?:[ -]?\d)*/g) ?? []) {
    if (run.length < 13) continue;
    const groups = run.split(/[ -]/);
    for (let a = 0; a < groups.length; a++) {
      let digits = "";
      for (let b = a; b < groups.length; b++) {
        digits += groups[b];
        if (digits.length > 19) break;
        if (digits.length >= 13 && luhnValid(digits)) return digits;
      }
    }
  }
  return undefined;
}

/**
 * Where a text lets out a card number (any Luhn-valid one, when `anyCard`) or one of the
 * request's secrets. A stack frame's `file:line:column` is not card data, whatever its digits.
 */
function leak(
  texts: readonly string[],
  secrets: readonly string[],
  anyCard = true,
): string | undefined {
  for (const original of texts) {
    const text = original.replace(/:\d+:\d+/g, ":#:#");
    const luhn = anyCard ? luhnSequence(text) : undefined;
    if (luhn !== undefined)
      return `a Luhn-valid number ${luhn.slice(0, 6)}… in ${JSON.stringify(text.slice(0, 300))}`;
    for (const secret of secrets) {
      if (/^\d+$/.test(secret) ? quotesStandalone(text, secret) : text.includes(secret)) {
        return `the secret ${secret.slice(0, 8)}… (${secret.length} characters) in ${JSON.stringify(text.slice(0, 300))}`;
      }
    }
  }
  return undefined;
}

/** Own `__proto__` keys reachable from a value. */
function protoKeys(value: unknown): number {
  let count = 0;
  const seen = new Set<unknown>();
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isObject(node) || seen.has(node)) continue;
    seen.add(node);
    if (Object.hasOwn(node, "__proto__")) count++;
    for (const key of Object.keys(node)) stack.push((node as Record<string, unknown>)[key]);
  }
  return count;
}

function prototypeSnapshot(): string {
  const describe = (object: object) =>
    Object.getOwnPropertyNames(object)
      .map((name) => {
        const d = Object.getOwnPropertyDescriptor(object, name);
        return `${name}:${typeof d?.value}:${typeof d?.get}`;
      })
      .join(",");
  return `${describe(Object.prototype)}|${describe(Array.prototype)}|${describe(Function.prototype)}`;
}

/**
 * How a PaymentDetails the merchant holds prints: the card number masked to its last four digits,
 * the CVV `***` (or null), in JSON, `String()` and `util.inspect`. Only the card fields are
 * masked: the others (a phone number, an amount) print as they are, whatever digits they share
 * with a CVV.
 */
function unmasked(
  details: Record<string, unknown>,
  secrets: readonly string[],
): string | undefined {
  const masked = /^\**[0-9]{0,4}$/;
  const json = JSON.parse(JSON.stringify(details)) as Record<string, unknown>;
  for (const card of fieldsNamed(json, CARD_FIELD_KEY)) {
    if (typeof card === "string" && !masked.test(card))
      return `JSON CardNumber ${card.slice(0, 40)}`;
  }
  for (const cvv of fieldsNamed(json, CVV_NUMBER_KEY)) {
    if (cvv !== undefined && cvv !== null && cvv !== "***") {
      return `JSON CVVNumber ${String(cvv).slice(0, 40)}`;
    }
  }
  const text = String(details);
  if (!/^\[PaymentDetails( \**[0-9]{0,4})?\]$/.test(text)) return `String() ${text.slice(0, 60)}`;
  const printed = inspect(details);
  const cvv = /cvvnumber: ([^,\n}]*)/i.exec(printed)?.[1]?.trim();
  if (cvv !== undefined && cvv !== "'***'" && cvv !== "null")
    return `inspect CVVNumber ${cvv.slice(0, 40)}`;
  const long = secrets.filter((secret) => secret.length >= 13);
  return leak([printed], long, false);
}

// ---------------------------------------------------------------------------------------------
// The merchant
// ---------------------------------------------------------------------------------------------

/** What a merchant's function returns to be a plain success (others return nothing). */
const RESULTS: Partial<Record<CallbackName, unknown>> = {
  ValidateGiftCard: { IsValid: true, Balance: "25.00", CurrencyCode: "USD" },
  ValidateVoucher: { IsValid: true, Balance: "5.00", CurrencyCode: "USD" },
  SendOrderToMerchant: { InternalOrderId: "M-1", OrderId: "SHOP-1" },
  PerformOrderPayment: { PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" },
  GetCheckoutCartInfo: {
    productsList: [{ ProductCode: "SKU-1", CartItemId: "1", SalePrice: 10, OrderedQuantity: 1 }],
    countryCode: "US",
    currencyCode: "USD",
  },
};

function firstCard(payload: unknown): { card: string; cvv: string } {
  for (const details of detailsObjects(payload)) {
    const [card] = fieldsNamed(details, CARD_NUMBER_KEY);
    const [cvv] = fieldsNamed(details, CVV_NUMBER_KEY);
    return { card: String(card), cvv: String(cvv) };
  }
  return { card: "no card", cvv: "no cvv" };
}

/** What the merchant throws, quoting the card data it was given wherever it can. */
function thrown(behaviour: Behaviour, payload: unknown): unknown {
  const { card, cvv } = firstCard(payload);
  const session =
    payload !== null && typeof payload === "object" ? readOwn(payload, "AuthToken") : undefined;
  // The session quoted as sent, and as a session service's URL or JSON body quotes it.
  const quoted = typeof session === "string" ? quotedForms(session).join(" ") : undefined;
  const text = `card ${card} cvv ${cvv}${quoted === undefined ? "" : ` session ${quoted}`}`;
  switch (behaviour.kind) {
    case "callbackError":
      return new CallbackError(
        behaviour.card ? `DECLINED-${cvv}` : "DECLINED",
        behaviour.card ? `declined: ${text}` : "declined",
        behaviour.card ? `retry without ${card}` : undefined,
        behaviour.status === undefined ? undefined : { status: behaviour.status },
      );
    case "error": {
      const error = new Error(behaviour.where === "message" ? text : "gateway failure");
      if (behaviour.where === "name") error.name = `GatewayError ${card}/${cvv}`;
      if (behaviour.where === "code") Object.assign(error, { code: `E-${cvv}-${card}` });
      if (behaviour.where === "stack") error.stack = `Error: x\n    at charge (${text})`;
      return error;
    }
    case "string":
      return text;
    case "object":
      return { card, cvv, message: text };
    case "null":
      return null;
    case "proxy": {
      const trap = () => {
        throw new Error(text);
      };
      return new Proxy(
        {},
        {
          get: trap,
          getPrototypeOf: trap,
          has: trap,
          ownKeys: trap,
          getOwnPropertyDescriptor: trap,
        },
      );
    }
    case "toStringThrows":
      return {
        toString() {
          throw new Error(text);
        },
      };
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------------------------

/** A case that broke a rule; its message says which. */
export class FuzzFailure extends Error {
  override readonly name = "FuzzFailure";
}

function ensure(condition: boolean, message: string): asserts condition {
  if (!condition) throw new FuzzFailure(message);
}

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/** A callback's failure shape, as its 405 shows it. */
interface Shape {
  readonly keys: string;
  readonly successField: string;
  readonly failureValue: unknown;
  readonly hasErrorCode: boolean;
  readonly hasDescription: boolean;
}

interface Seen {
  readonly payload: unknown;
  readonly raw: unknown;
  readonly problems: string[];
}

export interface FuzzHarness {
  /** Sends one case and checks everything; throws a `FuzzFailure` naming the broken rule. */
  check(c: FuzzCase): Promise<void>;
  /** Requests sent so far (the cases and the pristine requests after them). */
  readonly sent: number;
  /** How many cases ended in each outcome (`400 invalid_payload`, `merchant ok`, …). */
  readonly outcomes: ReadonlyMap<string, number>;
}

/** A router authenticating real RS256 tokens, whose functions behave as each case says. */
export async function createFuzzHarness(): Promise<FuzzHarness> {
  const keys = await createTestKeys();
  const stranger = await createTestKeys();
  const auth = await createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: SAMPLE_MERCHANT_GUID,
  });
  let token = await signServiceToken(keys.privateKey);
  let signedAt = Date.now();
  const strangerToken = await signServiceToken(stranger.privateKey);

  let behaviour: Behaviour = { kind: "ok" };
  let secrets: readonly string[] = [];
  const seen: Seen[] = [];
  const failures: CallbackFailure[] = [];
  const consoleLines: string[] = [];

  function merchant(name: CallbackName) {
    return (payload: unknown, context: { rawPayload: unknown }) => {
      const problems: string[] = [];
      if (protoKeys(payload) + protoKeys(context.rawPayload) > 0)
        problems.push("a __proto__ key reached the merchant");
      for (const details of [...detailsObjects(payload), ...detailsObjects(context.rawPayload)]) {
        const problem = unmasked(details, secrets);
        if (problem !== undefined) problems.push(`a PaymentDetails printed unmasked: ${problem}`);
        const field = enumerableCardField(details);
        if (field !== undefined)
          problems.push(`a card field a spread copies: ${field.slice(0, 40)}`);
      }
      seen.push({ payload, raw: context.rawPayload, problems });
      if (behaviour.kind === "ok") return RESULTS[name];
      if (behaviour.kind === "refusalReturned") {
        if (!REFUSED_BY_IS_VALID.has(name)) return RESULTS[name];
        return { IsValid: behaviour.isValid, ErrorCode: "INSUFFICIENT_FUNDS" };
      }
      if (behaviour.kind === "errorCodeReturned") {
        const success = RESULTS[name] ?? {};
        if (REFUSED_BY_ERROR_CODE.has(name)) {
          const field = REFUSED_BY_IS_VALID.has(name) ? behaviour.field : "ErrorCode";
          const verdict = behaviour.success === "absent" ? {} : { Success: behaviour.success };
          return { ...success, [field]: "DECLINED", ...verdict };
        }
        if (ANSWERS_ERROR_CODE.has(name)) return { ...success, ErrorCode: "DECLINED" };
        return RESULTS[name];
      }
      if (behaviour.kind === "unusableResult") {
        const { card, cvv } = firstCard(payload);
        return { [cvv]: "x", [card]: "y" };
      }
      throw thrown(behaviour, payload);
    };
  }
  const handlers: Record<string, unknown> = {};
  for (const name of CALLBACK_NAMES) handlers[name] = merchant(name);
  const router = (hook: "custom" | "console", bodyTimeoutMs: number) => {
    const built = createCallbackRouter({
      basePath: "/cb",
      auth,
      handlers: handlers as CallbackHandlers,
      bodyTimeoutMs,
      // One limit for every callback, set explicitly: the two document callbacks default to
      // 16 MiB (test/core/engine.test.ts), too large to send here chunk by chunk.
      maxBodyBytes: MAX_BODY,
      // The gift-card family checks the shopper's session first: accepted, so the function runs.
      verifySession: () => true,
      ...(hook === "custom"
        ? { onError: (failure: CallbackFailure) => void failures.push(failure) }
        : {}),
    });
    return { router: built, fetch: toFetch(built) };
  };
  const routers = {
    custom: router("custom", 10_000),
    console: router("console", 10_000),
    stallCustom: router("custom", SHORT_TIMEOUT_MS),
    stallConsole: router("console", SHORT_TIMEOUT_MS),
  };

  const shapes = new Map<CallbackName, Shape>();
  for (const name of CALLBACK_NAMES) {
    const response = await routers.custom.router.handle({
      method: "PUT",
      url: `/cb/${name}`,
      headers: {},
    });
    const body = JSON.parse(response.body) as Record<string, unknown>;
    const successField = "IsSuccess" in body ? "IsSuccess" : "Success";
    shapes.set(name, {
      keys: Object.keys(body).sort().join(","),
      successField,
      failureValue: body[successField],
      hasErrorCode: "ErrorCode" in body,
      hasDescription: "Description" in body,
    });
  }
  failures.length = 0;
  let sent = 0;
  const outcomes = new Map<string, number>();
  /** The parsed body last handed over, as a framework's req.body. */
  let givenBody: unknown;

  async function send(
    c: FuzzCase,
    wire: Sent,
    use: (typeof routers)[keyof typeof routers],
  ): Promise<Answer> {
    sent++;
    const around = c.around;
    const query = wire.query.toString();
    const url = `/cb/${c.callback}${query === "" ? "" : `?${query}`}`;
    const method = around === "wrongMethod" ? "PUT" : isCartGet(c) ? "GET" : "POST";
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (around === "badToken") headers.authorization = "Bearer not.a.token";
    else if (around === "strangerToken") headers.authorization = `Bearer ${strangerToken}`;
    else if (around !== "noAuth") headers.authorization = `Bearer ${token}`;
    if (around === "gzip") headers["content-encoding"] = "gzip";
    if (around === "declaredTooLarge") headers["content-length"] = String(MAX_BODY + 1);
    const bytes = wire.bytes;
    const parts: Uint8Array[] = [];
    if (bytes !== undefined)
      for (let i = 0; i < bytes.length; i += c.chunk) parts.push(bytes.slice(i, i + c.chunk));
    const stream = () => {
      let next = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (next >= 1 && next < parts.length && around === "stall")
            return new Promise<void>(() => undefined);
          if (next >= 1 && next < parts.length && around === "breakMidway") {
            controller.error(new Error("socket hang up"));
            return;
          }
          const part = parts[next++];
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
    };
    async function* iterable(): AsyncGenerator<Uint8Array> {
      for (const [index, part] of parts.entries()) {
        if (index >= 1 && around === "stall") await new Promise(() => undefined);
        if (index >= 1 && around === "breakMidway")
          throw Object.assign(new Error("aborted"), { code: "ECONNRESET" });
        yield part;
      }
    }
    const withBody = method !== "GET" && bytes !== undefined;
    if (c.transport === "fetch") {
      const init = { method, headers, body: withBody ? stream() : null, duplex: "half" };
      const response = await use.fetch(
        new Request(`http://merchant.test${url}`, init as RequestInit),
      );
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        out[name] = value;
      });
      return { status: response.status, headers: out, text: await response.text() };
    }
    let body: BodyInput;
    if (!withBody) body = undefined;
    else if (c.transport === "string")
      body = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    else if (c.transport === "bytes") body = bytes;
    else if (c.transport === "stream") body = stream();
    else if (c.transport === "iterable") body = iterable();
    else {
      body = clone(wire.value) as BodyInput;
      givenBody = body;
    }
    const response = await use.router.handle({ method, url, headers, body });
    return { status: response.status, headers: response.headers, text: response.body };
  }

  async function exchange(
    c: FuzzCase,
    stalled: boolean,
  ): Promise<{ answer: Answer; expected: Expected }> {
    const { payload, touched } = buildPayload(c);
    const wire = wireOf(c, payload);
    const expected = expectedOf(c, wire, touched);
    const use =
      c.hook === "custom"
        ? stalled
          ? routers.stallCustom
          : routers.custom
        : stalled
          ? routers.stallConsole
          : routers.console;
    // The request's own card data, as the engine receives it (a damaged key is no card field).
    secrets = secretsOf(received(c, wire) ?? payload);
    seen.length = 0;
    failures.length = 0;
    consoleLines.length = 0;
    // The default onError writes failures to console.error (and warnings to console.warn).
    const { error, warn } = console;
    console.error = console.warn = (...args: unknown[]) => {
      consoleLines.push(
        args.map((arg) => (typeof arg === "string" ? arg : inspect(arg))).join(" "),
      );
    };
    try {
      return { answer: await send(c, wire, use), expected };
    } finally {
      console.error = error;
      console.warn = warn;
    }
  }

  async function check(c: FuzzCase): Promise<void> {
    if (Date.now() - signedAt > 120_000) {
      token = await signServiceToken(keys.privateKey);
      signedAt = Date.now();
    }
    const before = prototypeSnapshot();
    behaviour = c.merchant;
    givenBody = undefined;
    const { answer, expected } = await exchange(c, c.around === "stall");
    verify(c, expected, answer);
    if (givenBody !== undefined) {
      // A framework's req.body keeps no CVV either, however the request ended.
      for (const details of detailsObjects(givenBody)) {
        ensure(!keepsCvv(details), "a CVV kept in the parsed body given");
      }
    }
    const outcome = `${answer.status} ${expected.kinds === "merchant" ? `merchant ${c.merchant.kind}` : (failures[0]?.kind ?? expected.kinds.join("|"))}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    ensure(prototypeSnapshot() === before, "a prototype changed");
    ensure(({} as Record<string, unknown>).polluted === undefined, "Object.prototype polluted");
    await pristine(c.callback);
  }

  function verify(c: FuzzCase, expected: Expected, answer: Answer): void {
    const shape = shapes.get(c.callback) as Shape;
    const told = failures.slice();
    const printed = leak(
      [answer.text, JSON.stringify(answer.headers), ...consoleLines, ...stringsOf(told)],
      secrets,
    );
    ensure(printed === undefined, `card data let out: ${printed}`);
    for (const { payload, raw, problems } of seen) {
      ensure(problems.length === 0, problems.join("; "));
      ensure(protoKeys(payload) + protoKeys(raw) === 0, "a __proto__ key reachable after the call");
      for (const details of [...detailsObjects(payload), ...detailsObjects(raw)]) {
        ensure(!keepsCvv(details), "a CVV kept after the function returned");
      }
    }
    ensure(
      /^application\/json/.test(answer.headers["content-type"] ?? ""),
      `content-type ${answer.headers["content-type"]}`,
    );
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(answer.text) as Record<string, unknown>;
    } catch {
      throw new FuzzFailure(`the answer is not JSON: ${answer.text.slice(0, 300)}`);
    }
    const kinds = told.map((failure) => `${failure.status} ${failure.kind}`);
    // The default logger writes a warning as `… 200 warning result_incomplete: …`, and names the
    // order after the callback when the report has one (`… order GE-1 500 internal_error: …`).
    const lines = consoleLines.map((line) => {
      const match =
        /^\[crossborder-callbacks\] \S+(?: order .*?)? (\d{3}) (?:warning )?(\w+):/.exec(line);
      return match === null ? line : `${match[1]} ${match[2]}`;
    });
    const reported = c.hook === "custom" ? kinds : lines;
    const context = () =>
      `answer ${answer.status} ${answer.text.slice(0, 300)}; told ${JSON.stringify(reported)}`;

    /** A failure answer: status, the callback's failure shape, its ErrorCode, one report. */
    const failed = (status: number, kind: FailureKind, code: (value: unknown) => boolean) => {
      ensure(answer.status === status, `expected ${status} ${kind}; ${context()}`);
      ensure(
        Object.keys(body).sort().join(",") === shape.keys,
        `failure shape ${Object.keys(body)} is not ${shape.keys}`,
      );
      ensure(
        body[shape.successField] === shape.failureValue,
        `${shape.successField} is ${String(body[shape.successField])}`,
      );
      if (shape.hasErrorCode)
        ensure(code(body.ErrorCode), `ErrorCode ${String(body.ErrorCode)} for ${kind}`);
      ensure(
        reported.length === 1 && reported[0] === `${status} ${kind}`,
        `expected one ${status} ${kind} report; ${context()}`,
      );
      if (c.hook === "custom") ensure(told[0]?.callback === c.callback, "onError's callback");
    };

    if (expected.kinds !== "merchant") {
      // Of two kinds the walk may meet first, the one reported.
      const kind =
        expected.kinds.find((k) => reported[0] === `${FAILURE_STATUS[k]} ${k}`) ??
        (expected.kinds[0] as LibraryKind);
      failed(FAILURE_STATUS[kind], kind, (value) => value === FAILURE_CODE[kind]);
      if (expected.description !== undefined && shape.hasDescription) {
        ensure(
          expected.description(String(body.Description)),
          `Description ${JSON.stringify(String(body.Description).slice(0, 300))} for ${kind}`,
        );
      }
      if (kind === "method_not_allowed")
        ensure(answer.headers.allow !== undefined, "a 405 without Allow");
      if (kind === "request_timeout")
        ensure(answer.headers.connection === "close", "a 408 without Connection: close");
      ensure(seen.length === 0, "the merchant was called on a failure the library answers");
      return;
    }
    if (expected.unknownSchema !== undefined && answer.status === 400 && seen.length === 0) {
      // A callback whose schema this file does not know refused: it must name what was touched.
      failed(400, "invalid_payload", (value) => value === FAILURE_CODE.invalid_payload);
      const description = String(body.Description ?? told[0]?.reason ?? "");
      ensure(
        expected.unknownSchema.some((path) => path !== "" && description.includes(path)),
        `a refusal naming no mutated path: ${description}`,
      );
      return;
    }
    ensure(seen.length === 1, `the merchant was called ${seen.length} times; ${context()}`);
    if (
      (c.merchant.kind === "refusalReturned" && REFUSED_BY_IS_VALID.has(c.callback)) ||
      refusedByErrorCode(c)
    ) {
      // Never answered Success: true (the service would take the card as charged or debited): a 500.
      failed(500, "internal_error", (value) => value === FAILURE_CODE.internal_error);
      return;
    }
    switch (c.merchant.kind) {
      case "refusalReturned":
      case "errorCodeReturned":
      case "ok": {
        ensure(
          answer.status === 200,
          `expected 200 (a callback added later may need its result in RESULTS); ${context()}`,
        );
        const problems = checkResponse(
          c.callback,
          answer.status,
          answer.headers["content-type"],
          answer.text,
        );
        ensure(problems.length === 0, `answer problems: ${problems.join("; ")}`);
        ensure(
          answerSuccess(c.callback, answer.status, body) === true,
          "the answer is not a success",
        );
        // SendOrderToMerchant charges an order's card (001 §4.2): an ErrorCode without Success
        // true there is answered, with one warning (second-left S2).
        const warned =
          c.merchant.kind === "errorCodeReturned" &&
          c.callback === "SendOrderToMerchant" &&
          chargesCard(seen[0]?.payload);
        ensure(
          JSON.stringify(reported) === (warned ? '["200 result_incomplete"]' : "[]"),
          `${warned ? "an unconfirmed charge not warned of" : "a success reported as a failure"}; ${context()}`,
        );
        return;
      }
      case "callbackError":
        failed(
          c.merchant.status ?? 200,
          "handler_failure",
          (value) => typeof value === "string" && value.startsWith("DECLINED"),
        );
        return;
      case "unusableResult":
        // A 500 today; a success with a warning once unknown result fields only warn.
        if (answer.status === 500)
          failed(500, "internal_error", (value) => value === FAILURE_CODE.internal_error);
        else {
          ensure(answer.status === 200, `expected 500 or 200; ${context()}`);
          ensure(reported.length >= 1, "an unusable result not reported");
        }
        return;
      default:
        failed(500, "internal_error", (value) => value === FAILURE_CODE.internal_error);
    }
  }

  async function pristine(name: CallbackName): Promise<void> {
    const c: FuzzCase = {
      callback: name,
      transport: "string",
      chunk: 4096,
      cartMethod: "POST",
      card: { pan: "4111111111111111", cvv: "4821", where: "sample", pick: 0 },
      mutations: [],
      wire: { kind: "none" },
      around: "none",
      merchant: { kind: "ok" },
      hook: "custom",
    };
    behaviour = c.merchant;
    const { answer } = await exchange(c, false);
    ensure(
      answer.status === 200 && failures.length === 0,
      `a pristine ${name} was refused afterwards: ${answer.status} ${answer.text.slice(0, 300)}`,
    );
  }

  return {
    check,
    get sent() {
      return sent;
    },
    outcomes,
  };
}

/** The property: every generated case passes every check. */
export function fuzzProperty(harness: FuzzHarness): fc.IAsyncPropertyWithHooks<[FuzzCase]> {
  return fc.asyncProperty(fuzzCaseArb, (c) => harness.check(c));
}
