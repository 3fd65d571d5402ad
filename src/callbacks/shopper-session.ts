import { assertOptionalFunction } from "../auth/validate.js";
import { giftCardSecretsOf } from "../core/card.js";
import type { CallbackFactory } from "../core/checked.js";
import {
  type CallbackContext,
  type CallbackDefinition,
  type CallbackHandler,
  type HandlerOptions,
  handleAuthEarly,
  handlerFactory,
} from "../core/engine.js";
import type { CallbackName } from "../core/types.js";
import { type GiftCardRequest, giftCardRequestSchema } from "../schemas/index.js";
import { GIFT_CARD_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * Checks the shopper's session that a gift-card or voucher request carries (`AuthToken`,
 * `SessionId`: the merchant's own session, handed to the service at checkout). Resolve `true`
 * to go on; anything else (`false`, a truthy non-boolean) is answered 401 with the generic body,
 * and `onError` is told "the shopper session was refused" — never the token. If it throws or
 * rejects (your session store is down), the call is answered 500 and `onError` gets the error with
 * the session values masked. Either value may be undefined when the request does not carry it.
 */
export type VerifySession = (
  authToken: string | undefined,
  sessionId: string | undefined,
  context: CallbackContext<GiftCardRequest>,
) => boolean | Promise<boolean>;

/** The options of the gift-card and voucher factories. */
export interface GiftCardHandlerOptions extends HandlerOptions {
  /** Checks the shopper's session before your function runs (recommended). */
  verifySession?: VerifySession | undefined;
}

/** The session fields: checked by `verifySession`, never quoted in what the library reports. */
export const SESSION_FIELDS: readonly string[] = ["AuthToken", "SessionId"];

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * A `verifySession` option, checked when the factory or the router is called: checked again per
 * call (checkShopperSession), but one of another type made every gift-card or voucher call a 500.
 */
export function assertVerifySession(value: unknown, owner: string): void {
  assertOptionalFunction(value, "verifySession", owner);
}

/** The `authorize` step of the gift-card and voucher callbacks. */
export async function checkShopperSession(
  payload: GiftCardRequest,
  context: CallbackContext<GiftCardRequest>,
  options: HandlerOptions,
): Promise<string | undefined> {
  const verify = (options as GiftCardHandlerOptions).verifySession;
  if (verify === undefined) return undefined;
  if (typeof verify !== "function") throw new TypeError("verifySession must be a function");
  const accepted = await verify(text(payload.AuthToken), text(payload.SessionId), context);
  return accepted === true ? undefined : "the shopper session was refused (verifySession)";
}

/**
 * What the gift-card and voucher callbacks share: POST, the request of Part 5.4, the shopper's
 * e-mail encoded, the session checked by `verifySession` and never quoted, nor the card's PIN
 * (any `CardFields` member but `CardId`). Each callback adds its name and its answer.
 */
export const GIFT_CARD_FAMILY = {
  methods: ["POST"],
  source: { kind: "json" },
  schema: giftCardRequestSchema,
  encodedFields: GIFT_CARD_ENCODED_FIELDS,
  secretFields: SESSION_FIELDS,
  secretValues: giftCardSecretsOf,
  authorize: checkShopperSession,
  // Ids typed text or number: one beyond 2^53 arrives as its exact digits (text), never rounded.
  exactNumbers: [["CardFields", "CardId"], ["CustomerId"]],
} as const satisfies Omit<CallbackDefinition<GiftCardRequest, unknown>, "name" | "response">;

/** The callbacks that carry a shopper session (`verifySession` applies to them only). */
export const SESSION_CALLBACKS: ReadonlySet<CallbackName> = new Set<CallbackName>([
  "ValidateGiftCard",
  "RedeemGiftCard",
  "RefundGiftCard",
  "ValidateVoucher",
]);

/**
 * Marks the handlers a gift-card or voucher factory built with a `verifySession` of their own: a
 * registered symbol, not a set of this module's, as the router may come from the other build
 * (CommonJS or ES modules) than the factory that built the handler.
 */
const SESSION_CHECKED = Symbol.for("crossborder-callbacks/sessionChecked@1");

/** Whether a handler was built by a gift-card or voucher factory with a `verifySession`. */
export function checksShopperSession(handler: CallbackHandler): boolean {
  return (handler as { readonly [SESSION_CHECKED]?: unknown })[SESSION_CHECKED] === true;
}

/**
 * `handlerFactory` for a gift-card or voucher callback that remembers which handlers check the
 * shopper's session, so that the router can refuse one that does not where it has a check.
 */
export function giftCardHandlerFactory<TName extends CallbackName, TPayload, TResult>(
  definition: CallbackDefinition<TPayload, TResult> & { readonly name: TName },
): CallbackFactory<TName, TPayload, TResult, GiftCardHandlerOptions> {
  const create = handlerFactory<TName, TPayload, TResult, GiftCardHandlerOptions>(definition);
  return (fn, options) => {
    handleAuthEarly(options);
    assertVerifySession(options?.verifySession, definition.name);
    const handler = create(fn, options);
    if (options?.verifySession !== undefined) {
      Object.defineProperty(handler, SESSION_CHECKED, { value: true });
    }
    return handler;
  };
}
