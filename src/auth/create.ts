import { AuthenticationError, AuthenticationOutage } from "../core/errors.js";
import { isPlainObject } from "../core/objects.js";
import { CALLBACK_NAMES, type CallbackName } from "../core/types.js";
import { BasicVerifier } from "./basic.js";
import type { AuthConfig, AuthMethod, AuthModes } from "./config.js";
import { IpVerifier } from "./ip.js";
import { assertDigestClaim, compileJwt, verifyBodyDigest } from "./jwt.js";
import {
  CartTokenVerifier,
  checkMerchantGuid,
  compileMerchantGuid,
  HeaderSecretVerifier,
  UrlSecretVerifier,
} from "./modes.js";
import type { Authenticator, AuthRequest, AuthResult } from "./types.js";
import { assertKnownKeys, configError } from "./validate.js";

type ModeName = keyof AuthModes;

const EMPTY_BODY = new Uint8Array(0);

const MODE_NAMES = [
  "jwt",
  "merchantGuid",
  "basic",
  "headerSecret",
  "urlSecret",
  "ipAllowList",
  "cartToken",
] as const satisfies readonly ModeName[];

/** How each mode's configuration is checked and compiled, once, at start-up. */
const COMPILERS = {
  jwt: (value, at) => compileJwt(value, at),
  merchantGuid: (value, at) => compileMerchantGuid(value, at),
  basic: (value, at) => BasicVerifier.compile(value, at),
  headerSecret: (value, at) => HeaderSecretVerifier.compile(value, at),
  urlSecret: (value, at) => UrlSecretVerifier.compile(value, at),
  ipAllowList: (value, at) => IpVerifier.compile(value, at),
  cartToken: (value, at) => CartTokenVerifier.compile(value, at),
} satisfies { readonly [M in ModeName]: (value: NonNullable<AuthModes[M]>, at: string) => unknown };

/** The compiled modes of one callback. */
type Plan = { readonly [M in ModeName]?: Awaited<ReturnType<(typeof COMPILERS)[M]>> };

/**
 * The one callback that carries a cart token (its payload's `merchantCartToken`, checked once the
 * payload is built); a top-level `cartToken` applies to it only.
 */
const CART_CALLBACK: CallbackName = "GetCheckoutCartInfo";

/**
 * The callbacks whose documented payload carries no MerchantGUID (NotifyOrderRefund's refund
 * details, 000 §2.4) or is not documented at all (SendAdditionalRequiredDocumentsToMerchant's,
 * 001 §6; RedeemGiftCard's, RefundGiftCard's, ValidateVoucher's and UpdateOrderShippingInfo's,
 * 000 §4.10): a GUID they carry must match, but none is required, as long as another mode proved
 * the caller. ValidateGiftCard is not here: its request lists MerchantGUID (000 §5.4).
 */
const GUID_WHEN_PRESENT: ReadonlySet<CallbackName> = new Set<CallbackName>([
  "NotifyOrderRefund",
  "SendAdditionalRequiredDocumentsToMerchant",
  "RedeemGiftCard",
  "RefundGiftCard",
  "ValidateVoucher",
  "UpdateOrderShippingInfo",
]);

/**
 * Whether a plan has a mode that proves who is calling. `merchantGuid` does not (it is no secret),
 * nor a `cartToken` without `verify` (any token passes), nor an `ipAllowList` that admits every
 * IPv4 or every IPv6 address (anyone can call from one).
 */
function provesCaller(plan: Plan): boolean {
  return (
    plan.jwt !== undefined ||
    plan.basic !== undefined ||
    plan.headerSecret !== undefined ||
    plan.urlSecret !== undefined ||
    (plan.ipAllowList !== undefined && !plan.ipAllowList.admitsAnyone) ||
    plan.cartToken?.verifies === true
  );
}

/**
 * The refusal of callbacks nothing proves the caller of. An IP list that admits everyone is named
 * (the merchant has an ipAllowList: "add one" would not help), and narrowing it comes first. The
 * cost of `allowWeakAuth` is said where it applies: with a GUID configured and nothing else
 * vouching, the GUID is required on the callbacks whose payload may carry none (NotifyOrderRefund's
 * never does, 000 §2.4), so the service's calls there would be refused.
 */
function weakAuthError(weak: readonly CallbackName[], plans: ReadonlyMap<CallbackName, Plan>) {
  const wide = new Set<string>();
  const guidRequired: CallbackName[] = [];
  for (const name of weak) {
    const plan = plans.get(name);
    for (const list of plan?.ipAllowList?.admitsAnyoneThrough ?? []) wide.add(list);
  }
  for (const name of GUID_WHEN_PRESENT) {
    if (weak.includes(name) && plans.get(name)?.merchantGuid !== undefined) guidRequired.push(name);
  }
  let allowWeak = "or set allowWeakAuth: true to accept forged calls";
  if (guidRequired.length > 0) {
    const none = guidRequired.includes("NotifyOrderRefund")
      ? ", though NotifyOrderRefund's payload carries none"
      : "";
    const last = guidRequired.pop();
    const names = guidRequired.length > 0 ? `${guidRequired.join(", ")} and ${last}` : last;
    allowWeak += ` (it then requires MerchantGUID on ${names}${none})`;
  }
  const head = `has nothing that proves the caller for ${weak.join(", ")}`;
  const lists = [...wide];
  if (lists.length === 0) {
    return configError(
      "config",
      `${head} (merchantGuid is not a secret; a cartToken without verify accepts any token): add jwt, basic, headerSecret, urlSecret, ipAllowList or cartToken.verify for them, ${allowWeak}`,
    );
  }
  const narrow = lists
    .map((list) =>
      list.endsWith(".trustedProxies")
        ? `${list} to your own proxies' ranges`
        : `${list} to the service's ranges`,
    )
    .join(" and ");
  const hold = `${lists.join(" and ")} ${lists.length === 1 ? "holds" : "hold"}`;
  return configError(
    "config",
    `${head}: ${hold} every IPv4 or every IPv6 address, so any caller passes the IP allow-list; narrow ${narrow} first, or add jwt, basic, headerSecret, urlSecret or cartToken.verify, ${allowWeak}`,
  );
}

/**
 * Builds the authenticator every handler and the router share. Everything expensive happens here,
 * once: keys are imported and checked, CIDRs parsed, secrets digested. A configuration that cannot
 * work (no mode, an unusable key, a private key, RSA under 2048 bits, `none`/HS* algorithms, a
 * misspelt option) is refused with a TypeError naming the option path. So is one that leaves a
 * callback with nothing that proves the caller (only `merchantGuid`, a `cartToken` without
 * `verify`, or an `ipAllowList` that admits every IPv4 or IPv6 address), unless
 * `allowWeakAuth: true` says you accept forged calls.
 *
 * Modes are AND-ed: every configured mode must pass. `callbacks` replaces a mode for one callback,
 * or switches it off with `false`. Request-time modes run in this order: ip, headerSecret,
 * urlSecret, basic, jwt (and cartToken from the URL on a callback other than GetCheckoutCartInfo);
 * then, once the payload is built, merchantGuid, bodyDigest and GetCheckoutCartInfo's cartToken.
 */
export async function createAuth(config: AuthConfig): Promise<Authenticator> {
  if (!isPlainObject(config)) throw configError("config", "must be an object");
  assertKnownKeys(config, [...MODE_NAMES, "callbacks", "allowWeakAuth"], "config");
  const allowWeakAuth = config.allowWeakAuth ?? false;
  if (typeof allowWeakAuth !== "boolean") throw configError("allowWeakAuth", "must be a boolean");
  const callbacks = config.callbacks ?? {};
  if (!isPlainObject(callbacks)) throw configError("callbacks", "must be an object");
  assertKnownKeys(callbacks, CALLBACK_NAMES, "callbacks");

  // Compiled once per configuration object, so a mode shared by callbacks is compiled once.
  const compiled = new Map<ModeName, Map<unknown, Promise<unknown>>>();
  const compile = (mode: ModeName, value: object | string, at: string): Promise<unknown> => {
    let byValue = compiled.get(mode);
    if (byValue === undefined) {
      byValue = new Map();
      compiled.set(mode, byValue);
    }
    let entry = byValue.get(value);
    if (entry === undefined) {
      const compiler = COMPILERS[mode] as (value: unknown, at: string) => unknown;
      entry = Promise.resolve().then(() => compiler(value, at));
      byValue.set(value, entry);
    }
    return entry;
  };

  const buildPlan = async (
    modes: Partial<Record<ModeName, unknown>>,
    path: (m: string) => string,
  ): Promise<Plan> => {
    const plan: Partial<Record<ModeName, unknown>> = {};
    // Sequential, so the first configuration error is the one reported.
    for (const mode of MODE_NAMES) {
      const value = modes[mode];
      if (value === undefined) continue;
      if (value === null || (typeof value !== "object" && typeof value !== "string")) {
        throw configError(path(mode), "must be an object (or false under callbacks)");
      }
      plan[mode] = await compile(mode, value, path(mode));
    }
    return plan as Plan;
  };

  // `merchantGuid: process.env.MERCHANT_GUID` with the variable unset would switch the check off
  // without a word: a key given as undefined is refused (left out, no GUID is checked).
  if (Object.hasOwn(config, "merchantGuid") && config.merchantGuid === undefined) {
    throw configError(
      "merchantGuid",
      "is undefined (an unset environment variable?): give the merchant GUID, or leave the key out to check none",
    );
  }
  // Top-level modes first, so their mistakes are reported under their own path.
  const top = await buildPlan(config, (mode) => mode);
  const bothAtTop = top.jwt !== undefined && top.basic !== undefined;

  const plans = new Map<CallbackName, Plan>();
  const rawBodyCallbacks = new Set<CallbackName>();
  const weak: CallbackName[] = [];
  for (const name of CALLBACK_NAMES) {
    const overrides: unknown = callbacks[name];
    const modes: Partial<Record<ModeName, unknown>> = {};
    for (const mode of MODE_NAMES) {
      if (mode === "cartToken" && name !== CART_CALLBACK) continue;
      modes[mode] = config[mode];
    }
    if (overrides !== undefined) {
      if (!isPlainObject(overrides)) throw configError(`callbacks.${name}`, "must be an object");
      assertKnownKeys(overrides, MODE_NAMES, `callbacks.${name}`);
      for (const mode of MODE_NAMES) {
        const value = overrides[mode];
        if (value === false) modes[mode] = undefined;
        else if (value !== undefined) modes[mode] = value;
      }
    }
    const plan = await buildPlan(modes, (mode) =>
      overrides !== undefined && (overrides as Record<string, unknown>)[mode] !== undefined
        ? `callbacks.${name}.${mode}`
        : mode,
    );
    const where = overrides === undefined ? "config" : `callbacks.${name}`;
    if (
      plan.jwt !== undefined &&
      plan.basic !== undefined &&
      bothAtTop &&
      overrides === undefined
    ) {
      // Both from the top level: named there, not as this callback's conflict, whose "switch one
      // off under callbacks.X" led to the next callback's, 14 times (review dx-4).
      throw configError(
        "config",
        `sets both jwt and basic at the top level, but both read the one Authorization header (${name} is the first callback left with both): keep one at the top level and give the other only to the callbacks that use it, under callbacks.<name> with the first switched off there ({ jwt: false, basic: {…} })`,
      );
    }
    if (plan.jwt !== undefined && plan.basic !== undefined) {
      throw configError(
        where,
        `enables both jwt and basic for ${name}, but both read the one Authorization header; switch one off under callbacks.${name}`,
      );
    }
    if (
      plan.headerSecret?.name === "authorization" &&
      (plan.jwt !== undefined || plan.basic !== undefined)
    ) {
      throw configError(where, `uses the Authorization header twice for ${name}`);
    }
    if (Object.keys(plan).length === 0) {
      if (overrides !== undefined) {
        throw configError(
          `callbacks.${name}`,
          "switches off every authentication mode; to serve this callback without authentication, pass `auth: false` in its handler options",
        );
      }
      // No mode for this callback: it is refused at request time (fail closed).
      continue;
    }
    if (!provesCaller(plan)) weak.push(name);
    if (plan.jwt?.bodyDigest !== undefined) rawBodyCallbacks.add(name);
    plans.set(name, plan);
  }
  if (plans.size === 0) {
    throw configError(
      "config",
      "configures no authentication mode (jwt, basic, headerSecret, urlSecret, ipAllowList, cartToken, merchantGuid); to run without authentication pass `auth: false` in the handler options",
    );
  }
  if (weak.length > 0 && !allowWeakAuth) throw weakAuthError(weak, plans);

  return {
    needsRawBody(callback: CallbackName): boolean {
      return rawBodyCallbacks.has(callback);
    },

    async authenticateRequest(request: AuthRequest): Promise<AuthResult> {
      const plan = plans.get(request.callback);
      if (plan === undefined) {
        throw new AuthenticationError("no authentication mode is configured for this callback");
      }
      const methods: AuthMethod[] = [];
      let step: AuthMethod = "ip";
      try {
        if (plan.ipAllowList !== undefined) {
          plan.ipAllowList.verify(request);
          methods.push("ip");
        }
        if (plan.headerSecret !== undefined) {
          step = "headerSecret";
          await plan.headerSecret.verify(request);
          methods.push("headerSecret");
        }
        if (plan.urlSecret !== undefined) {
          step = "urlSecret";
          await plan.urlSecret.verify(request);
          methods.push("urlSecret");
        }
        if (plan.basic !== undefined) {
          step = "basic";
          await plan.basic.verify(request.headers);
          methods.push("basic");
        }
        let claims: Readonly<Record<string, unknown>> | undefined;
        if (plan.jwt !== undefined) {
          step = "jwt";
          claims = await plan.jwt.verify(request.headers);
          const digest = plan.jwt.bodyDigest;
          if (digest !== undefined) {
            if (hasBody(request.method)) assertDigestClaim(claims, digest);
            // A token that binds a body is not accepted without one (a POST's token replayed as
            // a GET), unless what it binds is the empty body.
            else if (Object.hasOwn(claims, digest.claim)) {
              await verifyBodyDigest(claims, EMPTY_BODY, digest);
            }
          }
          methods.push("jwt");
        }
        // GetCheckoutCartInfo's cart token is checked on the payload (authenticatePayload), where
        // the merchant's value is; on any other callback it is the URL parameter's.
        const cartTokenLater = plan.cartToken !== undefined && request.callback === CART_CALLBACK;
        if (plan.cartToken !== undefined && !cartTokenLater) {
          step = "cartToken";
          await plan.cartToken.verifyUrl(request, () => credentialsOf(plan, request));
          methods.push("cartToken");
        }
        // merchantGuid alone cannot vouch for a bodiless request (GetCheckoutCartInfo by GET); the
        // cart token can, and the payload stage then refuses a request without one.
        if (methods.length === 0 && !hasBody(request.method) && !cartTokenLater) {
          throw new AuthenticationError(
            "no request-level authentication mode is configured, and a request without a body carries no MerchantGUID",
          );
        }
        return claims === undefined ? { methods } : { methods, claims };
      } catch (error) {
        throw sanitize(error, step);
      }
    },

    async authenticatePayload(
      result: AuthResult,
      payload: unknown,
      rawBody: Uint8Array | undefined,
      request: AuthRequest,
    ): Promise<AuthResult | undefined> {
      const plan = plans.get(request.callback);
      if (plan === undefined) {
        throw new AuthenticationError("no authentication mode is configured for this callback");
      }
      const added: AuthMethod[] = [];
      let step: AuthMethod = "merchantGuid";
      try {
        if (plan.merchantGuid !== undefined) {
          // GetCheckoutCartInfo by GET has no body: the GUID is checked only if one is present
          // (the cart payload keeps every query and body field, so a MerchantGUID sent is seen).
          // So on the callbacks whose documented payload has none, when another mode proves the
          // caller (it has passed by now); with nothing else vouching (merchantGuid alone, a cart
          // token any value passes), the GUID is all there is: required.
          const optional =
            (request.callback === CART_CALLBACK && !hasBody(request.method)) ||
            (GUID_WHEN_PRESENT.has(request.callback) && provesCaller(plan));
          if (checkMerchantGuid(plan.merchantGuid, payload, optional)) added.push("merchantGuid");
        }
        const digest = plan.jwt?.bodyDigest;
        if (digest !== undefined && hasBody(request.method)) {
          step = "bodyDigest";
          await verifyBodyDigest(result.claims, rawBody, digest);
          added.push("bodyDigest");
        }
        // Last, so the merchant's verify only sees a payload every other check accepted.
        if (plan.cartToken !== undefined && request.callback === CART_CALLBACK) {
          step = "cartToken";
          await plan.cartToken.verifyPayload(payload, request, () => credentialsOf(plan, request));
          added.push("cartToken");
        }
      } catch (error) {
        throw sanitize(error, step);
      }
      return added.length === 0 ? undefined : { ...result, methods: [...result.methods, ...added] };
    },
  };
}

/**
 * The request's credentials a throwing `verify` may quote (it is handed the request): the
 * `Authorization` header, its credentials and, for Basic, their decoded text and password; the
 * secret header's and the secret URL parameter's values. Read only when `verify` threw, each read
 * guarded: nothing here may turn the outage into another error.
 */
function credentialsOf(plan: Plan, request: AuthRequest): string[] {
  const found: string[] = [];
  const add = (value: string | null | undefined): void => {
    const text = value?.trim();
    if (text !== undefined && text !== "") found.push(text);
  };
  const attempt = (read: () => void): void => {
    try {
      read();
    } catch {
      // A header or URL that cannot be read: nothing of it to mask.
    }
  };
  attempt(() => {
    const authorization = request.headers.get("authorization");
    if (authorization === null) return;
    add(authorization);
    const scheme = /^(\S+)[ \t]+(\S+)$/.exec(authorization.trim());
    if (scheme === null) return;
    add(scheme[2]);
    if (scheme[1]?.toLowerCase() !== "basic") return;
    const binary = atob(scheme[2] as string);
    const decoded = new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
    add(decoded);
    add(decoded.slice(decoded.indexOf(":") + 1));
  });
  const { headerSecret, urlSecret } = plan;
  if (headerSecret !== undefined) attempt(() => add(request.headers.get(headerSecret.name)));
  if (urlSecret !== undefined) {
    attempt(() => {
      for (const value of request.url.searchParams.getAll(urlSecret.parameter)) add(value);
    });
  }
  return found;
}

/** GET and HEAD carry no body, so nothing binds to one and no MerchantGUID can be required. */
function hasBody(method: string): boolean {
  const upper = method.toUpperCase();
  return upper !== "GET" && upper !== "HEAD";
}

/**
 * Only our own errors pass: anything else is replaced, so no foreign object (or payload) leaks. An
 * `AuthenticationOutage` (the merchant's `verify` threw) passes too: the engine answers it 500 and
 * scrubs what it carries. Any other step's unexpected error stays a refusal: the library's own
 * checks throw only on what the request holds (the token among it), never on an outage.
 */
function sanitize(error: unknown, step: AuthMethod): AuthenticationError | AuthenticationOutage {
  return error instanceof AuthenticationError || error instanceof AuthenticationOutage
    ? error
    : new AuthenticationError(`authentication failed: unexpected error in ${step}`);
}
