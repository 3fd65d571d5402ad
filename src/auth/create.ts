import { AuthenticationError } from "../core/errors.js";
import { CALLBACK_NAMES, type CallbackName } from "../core/types.js";
import { BasicVerifier } from "./basic.js";
import type { AuthConfig, AuthMethod, AuthModes } from "./config.js";
import { IpVerifier } from "./ip.js";
import { assertDigestClaim, compileJwt, type JwtVerifier, verifyBodyDigest } from "./jwt.js";
import {
  CartTokenVerifier,
  checkMerchantGuid,
  compileMerchantGuid,
  HeaderSecretVerifier,
  UrlSecretVerifier,
} from "./modes.js";
import type { Authenticator, AuthRequest, AuthResult } from "./types.js";
import { assertKnownKeys, configError, isPlainObject } from "./validate.js";

type ModeName = keyof AuthModes;

const MODE_NAMES = [
  "jwt",
  "merchantGuid",
  "basic",
  "headerSecret",
  "urlSecret",
  "ipAllowList",
  "cartToken",
] as const satisfies readonly ModeName[];

/** The one callback whose URL carries a cart token; a top-level `cartToken` applies to it only. */
const CART_CALLBACK: CallbackName = "GetCheckoutCartInfo";

/** The compiled modes of one callback, in the order they run. */
interface Plan {
  readonly ip?: IpVerifier;
  readonly headerSecret?: HeaderSecretVerifier;
  readonly urlSecret?: UrlSecretVerifier;
  readonly basic?: BasicVerifier;
  readonly jwt?: JwtVerifier;
  readonly cartToken?: CartTokenVerifier;
  readonly merchantGuid?: ReadonlySet<string>;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Builds the authenticator every handler and the router share. Everything expensive happens here,
 * once: keys are imported and checked, CIDRs parsed, secrets digested. A configuration that cannot
 * work (no mode, an unusable key, a private key, RSA under 2048 bits, `none`/HS* algorithms, a
 * misspelt option) is refused with a TypeError naming the option path.
 *
 * Modes are AND-ed: every configured mode must pass. `callbacks` replaces a mode for one callback,
 * or switches it off with `false`. Request-time modes run in this order: ip, headerSecret,
 * urlSecret, basic, jwt, cartToken; then, once the body is parsed, merchantGuid and bodyDigest.
 */
export async function createAuth(config: AuthConfig): Promise<Authenticator> {
  if (!isPlainObject(config)) throw configError("config", "must be an object");
  assertKnownKeys(config, [...MODE_NAMES, "callbacks"], "config");
  const callbacks = config.callbacks ?? {};
  if (!isPlainObject(callbacks)) throw configError("callbacks", "must be an object");
  assertKnownKeys(callbacks, CALLBACK_NAMES, "callbacks");

  // Compiled once per configuration object, so a mode shared by callbacks is compiled once.
  const compiled = new Map<string, Map<unknown, Promise<unknown>>>();
  const compile = <T>(
    mode: ModeName,
    value: object | string,
    make: () => Promise<T> | T,
  ): Promise<T> => {
    let byValue = compiled.get(mode);
    if (byValue === undefined) {
      byValue = new Map();
      compiled.set(mode, byValue);
    }
    let entry = byValue.get(value);
    if (entry === undefined) {
      entry = Promise.resolve().then(make);
      byValue.set(value, entry);
    }
    return entry as Promise<T>;
  };

  const buildPlan = async (
    modes: Partial<Record<ModeName, unknown>>,
    path: (m: string) => string,
  ) => {
    const plan: Mutable<Plan> = {};
    // Sequential, so the first configuration error is the one reported.
    for (const mode of MODE_NAMES) {
      const value = modes[mode];
      if (value === undefined) continue;
      if (value === null || (typeof value !== "object" && typeof value !== "string")) {
        throw configError(path(mode), "must be an object (or false under callbacks)");
      }
      const at = path(mode);
      switch (mode) {
        case "jwt":
          plan.jwt = await compile(mode, value, () => compileJwt(value as never, at));
          break;
        case "merchantGuid":
          plan.merchantGuid = await compile(mode, value, () =>
            compileMerchantGuid(value as never, at),
          );
          break;
        case "basic":
          plan.basic = await compile(mode, value, () => BasicVerifier.compile(value as never, at));
          break;
        case "headerSecret":
          plan.headerSecret = await compile(mode, value, () =>
            HeaderSecretVerifier.compile(value as never, at),
          );
          break;
        case "urlSecret":
          plan.urlSecret = await compile(mode, value, () =>
            UrlSecretVerifier.compile(value as never, at),
          );
          break;
        case "ipAllowList":
          plan.ip = await compile(mode, value, () => IpVerifier.compile(value as never, at));
          break;
        case "cartToken":
          plan.cartToken = await compile(mode, value, () =>
            CartTokenVerifier.compile(value as never, at),
          );
          break;
      }
    }
    return plan;
  };

  // Top-level modes first, so their mistakes are reported under their own path.
  await buildPlan(config, (mode) => mode);

  const plans = new Map<string, Plan>();
  let needsRawBody = false;
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
    if (plan.jwt?.bodyDigest !== undefined) needsRawBody = true;
    plans.set(name, plan);
  }
  if (plans.size === 0) {
    throw configError(
      "config",
      "configures no authentication mode (jwt, basic, headerSecret, urlSecret, ipAllowList, cartToken, merchantGuid); to run without authentication pass `auth: false` in the handler options",
    );
  }

  // The methods array of each result we issued, so payload-time modes can be appended to it.
  const issued = new WeakMap<AuthResult, AuthMethod[]>();

  return {
    needsRawBody,

    async authenticateRequest(request: AuthRequest): Promise<AuthResult> {
      const plan = plans.get(request.callback);
      if (plan === undefined) {
        throw new AuthenticationError("no authentication mode is configured for this callback");
      }
      const methods: AuthMethod[] = [];
      let step: AuthMethod = "ip";
      try {
        if (plan.ip !== undefined) {
          plan.ip.verify(request);
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
          if (digest !== undefined && hasBody(request.method)) assertDigestClaim(claims, digest);
          methods.push("jwt");
        }
        if (plan.cartToken !== undefined) {
          step = "cartToken";
          await plan.cartToken.verify(request);
          methods.push("cartToken");
        }
        // merchantGuid alone cannot vouch for a bodiless request (GetCheckoutCartInfo by GET).
        if (methods.length === 0 && !hasBody(request.method)) {
          throw new AuthenticationError(
            "no request-level authentication mode is configured, and a request without a body carries no MerchantGUID",
          );
        }
        const result: AuthResult = claims === undefined ? { methods } : { methods, claims };
        issued.set(result, methods);
        return result;
      } catch (error) {
        throw sanitize(error, step);
      }
    },

    async authenticatePayload(
      result: AuthResult,
      payload: unknown,
      rawBody: Uint8Array | undefined,
      request: AuthRequest,
    ): Promise<void> {
      const plan = plans.get(request.callback);
      if (plan === undefined) {
        throw new AuthenticationError("no authentication mode is configured for this callback");
      }
      const methods = issued.get(result);
      let step: AuthMethod = "merchantGuid";
      try {
        if (plan.merchantGuid !== undefined) {
          // GetCheckoutCartInfo by GET has no body: the GUID is checked only if one is present.
          const optional = request.callback === CART_CALLBACK && !hasBody(request.method);
          if (checkMerchantGuid(plan.merchantGuid, payload, optional))
            methods?.push("merchantGuid");
        }
        const digest = plan.jwt?.bodyDigest;
        if (digest !== undefined && hasBody(request.method)) {
          step = "bodyDigest";
          await verifyBodyDigest(result.claims, rawBody, digest);
          methods?.push("bodyDigest");
        }
      } catch (error) {
        throw sanitize(error, step);
      }
    },
  };
}

/** GET and HEAD carry no body, so nothing binds to one and no MerchantGUID can be required. */
function hasBody(method: string): boolean {
  const upper = method.toUpperCase();
  return upper !== "GET" && upper !== "HEAD";
}

/** Only our own errors pass: anything else is replaced, so no foreign object (or payload) leaks. */
function sanitize(error: unknown, step: AuthMethod): AuthenticationError {
  return error instanceof AuthenticationError
    ? error
    : new AuthenticationError(`authentication failed: unexpected error in ${step}`);
}
