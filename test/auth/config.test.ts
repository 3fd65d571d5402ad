import { exportJWK, exportPKCS8 } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuthConfig, createAuth } from "../../src/auth/index.js";
import { normalizePem } from "../../src/auth/pem.js";
import { AuthenticationError } from "../../src/core/errors.js";
import { CALLBACK_NAMES } from "../../src/core/types.js";
import { bearer, ecKey, makeRequest, refusal, rsaKey, signToken, type TestKey } from "./helpers.js";

let testKey: TestKey;
let prodKey: TestKey;
let ec: TestKey;

beforeAll(async () => {
  [testKey, prodKey, ec] = await Promise.all([rsaKey(), rsaKey(), ecKey()]);
});

const jwt = (extra: Record<string, unknown> = {}) =>
  ({
    environment: "production",
    keys: { test: [testKey.pem], production: [prodKey.pem] },
    ...extra,
  }) as AuthConfig["jwt"];

/** createAuth must refuse with a TypeError whose message matches. */
async function refused(config: unknown, message: RegExp): Promise<void> {
  const attempt = createAuth(config as AuthConfig);
  await expect(attempt).rejects.toBeInstanceOf(TypeError);
  await expect(attempt).rejects.toThrow(message);
}

describe("createAuth refuses unusable configurations at start-up", () => {
  it("refuses a configuration with no mode at all", async () => {
    await refused({}, /configures no authentication mode.*auth: false/);
    await refused({ callbacks: {} }, /configures no authentication mode/);
    await refused({ jwt: undefined }, /configures no authentication mode/);
  });

  it("refuses a callback override that switches every mode off", async () => {
    await refused(
      { jwt: jwt(), callbacks: { UpdateOrderStatus: { jwt: false } } },
      /callbacks\.UpdateOrderStatus switches off every authentication mode/,
    );
  });

  it("refuses jwt and basic on the same callback (one Authorization header)", async () => {
    await refused({ jwt: jwt(), basic: { username: "u", password: "p" } }, /both jwt and basic/);
    // Both at the top level: the conflict is named there, not under the first callback (dx-4).
    await refused(
      { jwt: jwt(), basic: { username: "u", password: "p" } },
      /^createAuth: config sets both jwt and basic at the top level/,
    );
    // Splitting them per callback is fine.
    const auth = await createAuth({
      jwt: jwt(),
      callbacks: { GetCheckoutCartInfo: { jwt: false, basic: { username: "u", password: "p" } } },
    });
    expect(auth.needsRawBody("GetCheckoutCartInfo")).toBe(false);
    expect(auth.needsRawBody("SendOrderToMerchant")).toBe(false);
  });

  it("names basic.username for the client's spelling userName (review dx-4)", async () => {
    await refused(
      { basic: { userName: "u", password: "p" } },
      /basic has an unknown option "userName".*did you mean "username"/,
    );
  });

  it("refuses misspelt options and unknown callbacks", async () => {
    await refused({ jwt: jwt({ isuser: "x" }) }, /jwt has an unknown option "isuser"/);
    await refused({ jwt: jwt(), merchantGUID: "x" }, /config has an unknown option "merchantGUID"/);
    await refused(
      { jwt: jwt(), callbacks: { SendOrder: { jwt: false } } },
      /callbacks has an unknown option "SendOrder"/,
    );
    await refused(
      { jwt: jwt(), callbacks: { SendOrderToMerchant: { jwtt: false } } },
      /callbacks\.SendOrderToMerchant has an unknown option "jwtt"/,
    );
  });

  it("refuses a missing or unknown environment (no default, no fallback)", async () => {
    await refused(
      { jwt: jwt({ environment: undefined }) },
      /jwt\.environment must be "test" or "production"/,
    );
    await refused({ jwt: jwt({ environment: "staging" }) }, /jwt\.environment/);
  });

  it("refuses none and HS* at runtime, and at the type level", async () => {
    for (const alg of ["none", "None", "HS256", "hs512"]) {
      await refused({ jwt: jwt({ algorithms: [alg] }) }, /is not allowed: only asymmetric/);
    }
    await refused({ jwt: jwt({ algorithms: [] }) }, /jwt\.algorithms must be a non-empty array/);
    await refused({ jwt: jwt({ algorithms: ["ML-DSA-44"] }) }, /is not one of RS256/);
    const typed = () =>
      createAuth({
        jwt: {
          environment: "production",
          keys: { production: prodKey.pem },
          // @ts-expect-error HS256 is not a JwsAlgorithm: the type refuses it too.
          algorithms: ["HS256"],
        },
      });
    await expect(typed()).rejects.toBeInstanceOf(TypeError);
  });

  it("names an unset environment variable given as the selected keys (review dx-1)", async () => {
    await refused(
      { jwt: jwt({ keys: { test: [testKey.pem], production: undefined } }) },
      /jwt\.keys\.production is undefined \(an unset environment variable\?\)/,
    );
  });

  it("hints to JSON.parse a JWK kept as JSON text (review dx-4)", async () => {
    const publicJwk = await exportJWK(prodKey.publicKey);
    await refused(
      { jwt: jwt({ keys: { production: JSON.stringify(publicJwk) } }) },
      /jwt\.keys\.production\[0\] is a JWK as JSON text: pass JSON\.parse\(…\) of it/,
    );
  });

  it("refuses a selected environment without keys, naming it", async () => {
    await refused(
      { jwt: jwt({ keys: { test: [testKey.pem] } }) },
      /jwt\.keys\.production no key configured for the selected environment "production"/,
    );
    await refused(
      { jwt: jwt({ keys: { test: [testKey.pem], production: [] } }) },
      /selected environment "production"/,
    );
    await refused(
      { jwt: jwt({ environment: "test", keys: { production: prodKey.pem } }) },
      /selected environment "test"/,
    );
  });

  it("refuses a private key (PEM or JWK), naming environment and index", async () => {
    const pkcs8 = await exportPKCS8(prodKey.privateKey);
    await refused(
      { jwt: jwt({ keys: { production: [prodKey.pem, pkcs8] } }) },
      /jwt\.keys\.production\[1\] is a private key/,
    );
    const privateJwk = await exportJWK(prodKey.privateKey);
    await refused(
      { jwt: jwt({ keys: { test: [privateJwk], production: [prodKey.pem] } }) },
      /jwt\.keys\.test\[0\] is a private JWK/,
    );
  });

  it("refuses garbage, PKCS#1, two PEM blocks, symmetric JWKs and unfit key types", async () => {
    await refused(
      { jwt: jwt({ keys: { production: ["not a key"] } }) },
      /keys\.production\[0\] is not a PEM text/,
    );
    const broken = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----";
    await refused(
      { jwt: jwt({ keys: { production: [broken] } }) },
      /keys\.production\[0\] is not a usable public key for the allowed algorithms \(RS256\)/,
    );
    const pkcs1 = prodKey.pem.replaceAll("PUBLIC KEY", "RSA PUBLIC KEY");
    await refused({ jwt: jwt({ keys: { production: [pkcs1] } }) }, /PKCS#1/);
    await refused(
      { jwt: jwt({ keys: { production: [prodKey.pem + testKey.pem] } }) },
      /exactly one PEM block/,
    );
    await refused(
      { jwt: jwt({ keys: { production: [{ kty: "oct", k: "c2VjcmV0" }] } }) },
      /symmetric \(oct\) JWK/,
    );
    const rsaJwk = await exportJWK(prodKey.publicKey);
    await refused(
      { jwt: jwt({ keys: { production: [{ ...rsaJwk, alg: "HS256" }] } }) },
      /"alg" HS256, which is not an allowed algorithm/,
    );
    // An encryption key is not a signing key (found by mutation testing: no test gave one).
    await refused(
      { jwt: jwt({ keys: { production: [{ ...rsaJwk, use: "enc" }] } }) },
      /keys\.production\[0\] has "use" other than "sig"/,
    );
    // An EC key cannot serve the default RS256.
    await refused(
      { jwt: jwt({ keys: { production: [ec.pem] } }) },
      /keys\.production\[0\] is not a usable public key for the allowed algorithms \(RS256\)/,
    );
    await refused({ jwt: jwt({ keys: { production: [42] } }) }, /must be a PEM string/);
  });

  it("refuses out-of-range claim options and a malformed bodyDigest", async () => {
    await refused({ jwt: jwt({ clockToleranceSeconds: -1 }) }, /clockToleranceSeconds must be/);
    await refused({ jwt: jwt({ clockToleranceSeconds: Number.NaN }) }, /clockToleranceSeconds/);
    await refused(
      { jwt: jwt({ maxTokenAgeSeconds: 0 }) },
      /maxTokenAgeSeconds must be a number > 0/,
    );
    await refused({ jwt: jwt({ requireExpiration: "no" }) }, /requireExpiration must be a boolean/);
    await refused({ jwt: jwt({ issuer: "" }) }, /jwt\.issuer must be/);
    await refused({ jwt: jwt({ bodyDigest: { claim: "" } }) }, /bodyDigest\.claim/);
    await refused(
      { jwt: jwt({ bodyDigest: { claim: "bh", encoding: "base64" } }) },
      /bodyDigest\.encoding/,
    );
  });

  it("reports a broken per-callback key under the callback's path", async () => {
    await refused(
      {
        jwt: jwt(),
        callbacks: {
          UpdateParcelDispatch: { jwt: jwt({ keys: { production: ["garbage"] } }) },
        },
      },
      /callbacks\.UpdateParcelDispatch\.jwt\.keys\.production\[0\]/,
    );
  });

  it("refuses malformed secondary modes", async () => {
    await refused(
      { basic: { username: "a:b", password: "p" } },
      /basic\.username cannot contain ":"/,
    );
    await refused({ basic: [] }, /basic must hold at least one credential/);
    await refused({ basic: [{ username: "u", password: "" }] }, /basic\[0\]\.password/);
    await refused({ headerSecret: { name: "X Secret", value: "v" } }, /not a valid header name/);
    await refused({ headerSecret: { name: "X-Secret", value: " v" } }, /whitespace/);
    await refused({ urlSecret: { parameter: "", value: "v" } }, /urlSecret\.parameter/);
    await refused({ ipAllowList: { allow: [] } }, /ipAllowList\.allow must not be empty/);
    await refused({ ipAllowList: { allow: ["10.0.0.0/33"] } }, /prefix longer than 32/);
    await refused({ ipAllowList: { allow: ["127.1"] } }, /allow\[0\] is not an IP address/);
    await refused(
      { ipAllowList: { allow: ["1.2.3.4"], trustedProxies: ["x"] } },
      /trustedProxies\[0\]/,
    );
    await refused({ merchantGuid: [] }, /merchantGuid must be/);
    await refused({ merchantGuid: "  " }, /merchantGuid must be a non-empty string/);
    // `merchantGuid: process.env.MERCHANT_GUID` with the variable unset: the check would be off
    // without a word. Given as a key, undefined is refused; left out, there is no GUID check.
    await refused(
      { jwt: jwt(), merchantGuid: undefined },
      /merchantGuid is undefined \(an unset environment variable\?\)/,
    );
    await expect(createAuth({ jwt: jwt() })).resolves.toBeDefined();
    await refused({ cartToken: { verify: "yes" } }, /cartToken\.verify must be a function/);
    await refused({ jwt: false }, /jwt must be an object/);
  });
});

describe("normalizePem", () => {
  it("trims, unescapes literal \\n and turns CRLF into LF", () => {
    const pem = prodKey.pem.trim();
    const expected = `${pem}\n`;
    expect(normalizePem(`\n  ${pem.replaceAll("\n", "\\n")}  `)).toBe(expected);
    expect(normalizePem(pem.replaceAll("\n", "\\r\\n"))).toBe(expected);
    expect(normalizePem(pem.replaceAll("\n", "\r\n"))).toBe(expected);
    expect(normalizePem(`\t${pem}\n\n\n`)).toBe(expected);
    expect(normalizePem(normalizePem(pem))).toBe(expected);
    expect(normalizePem("   ")).toBe("");
    expect(() => normalizePem(undefined as unknown as string)).toThrow(TypeError);
  });
});

describe("composition per callback", () => {
  it("replaces or switches off a mode for one callback; the others keep the top-level modes", async () => {
    const auth = await createAuth({
      jwt: jwt(),
      callbacks: { GetCheckoutCartInfo: { jwt: false, cartToken: { verify: () => true } } },
    });
    const cart = makeRequest({
      callback: "GetCheckoutCartInfo",
      method: "GET",
      url: "https://m.example/cart?merchantCartToken=abc",
    });
    // The cart token is checked on the payload, where the merchant's value is.
    const result = await auth.authenticateRequest(cart);
    expect(result).toEqual({ methods: [] });
    await expect(
      auth.authenticatePayload?.(result, { merchantCartToken: "abc" }, undefined, cart),
    ).resolves.toEqual({ methods: ["cartToken"] });
    await refusal(auth.authenticateRequest(makeRequest({ callback: "UpdateOrderStatus" })));
    const token = await signToken(prodKey.privateKey);
    await expect(
      auth.authenticateRequest(bearer(token, { callback: "UpdateOrderStatus" })),
    ).resolves.toMatchObject({ methods: ["jwt"] });
  });

  it("ANDs every configured mode, reporting them in the order they ran", async () => {
    const auth = await createAuth({
      jwt: jwt(),
      headerSecret: { name: "X-Callback-Secret", value: "s3cret" },
      urlSecret: { parameter: "key", value: "k3y" },
      ipAllowList: { allow: ["203.0.113.0/24"] },
      merchantGuid: "6A1B2C3D-0000-4000-8000-000000000001",
    });
    const token = await signToken(prodKey.privateKey);
    const request = (headers: Record<string, string>, url: string, remoteAddress: string) =>
      makeRequest({ headers, url, remoteAddress });
    const good = request(
      { Authorization: `Bearer ${token}`, "X-Callback-Secret": "s3cret" },
      "https://m.example/orders?key=k3y",
      "203.0.113.5",
    );
    const result = await auth.authenticateRequest(good);
    expect(result.methods).toEqual(["ip", "headerSecret", "urlSecret", "jwt"]);
    const full = await auth.authenticatePayload?.(
      result,
      { MerchantGUID: "6a1b2c3d-0000-4000-8000-000000000001" },
      undefined,
      good,
    );
    expect(full?.methods).toEqual(["ip", "headerSecret", "urlSecret", "jwt", "merchantGuid"]);
    expect(full?.claims).toBe(result.claims);
    // The request-time result is left as it was: the engine uses the one returned.
    expect(result.methods).toEqual(["ip", "headerSecret", "urlSecret", "jwt"]);

    // Each mode failing alone refuses the request.
    await refusal(
      auth.authenticateRequest(
        request(
          { Authorization: `Bearer ${token}`, "X-Callback-Secret": "s3cret" },
          "https://m.example/orders?key=k3y",
          "198.51.100.1",
        ),
      ),
    );
    await refusal(
      auth.authenticateRequest(
        request(
          { Authorization: `Bearer ${token}`, "X-Callback-Secret": "wrong!" },
          "https://m.example/orders?key=k3y",
          "203.0.113.5",
        ),
      ),
    );
    await refusal(
      auth.authenticateRequest(
        request(
          { Authorization: `Bearer ${token}`, "X-Callback-Secret": "s3cret" },
          "https://m.example/orders?key=nope",
          "203.0.113.5",
        ),
      ),
    );
    await refusal(
      auth.authenticateRequest(
        request(
          { "X-Callback-Secret": "s3cret" },
          "https://m.example/orders?key=k3y",
          "203.0.113.5",
        ),
      ),
    );
  });

  it("applies a top-level cartToken to GetCheckoutCartInfo only", async () => {
    const auth = await createAuth({ jwt: jwt(), cartToken: {} });
    const token = await signToken(prodKey.privateKey);
    const cart = bearer(token, {
      callback: "GetCheckoutCartInfo",
      method: "GET",
      url: "https://m.example/cart",
    });
    const result = await auth.authenticateRequest(cart);
    expect(result.methods).toEqual(["jwt"]);
    expect((await refusal(auth.authenticatePayload?.(result, {}, undefined, cart))).message).toBe(
      "cart token (the payload's merchantCartToken) missing",
    );
    await expect(
      auth.authenticateRequest(bearer(token, { callback: "SendOrderToMerchant" })),
    ).resolves.toMatchObject({ methods: ["jwt"] });
  });

  it("fails closed at request time for a callback left without any mode", async () => {
    const auth = await createAuth({ cartToken: { verify: () => true } });
    const error = await refusal(
      auth.authenticateRequest(makeRequest({ callback: "SendOrderToMerchant" })),
    );
    expect(error.message).toBe("no authentication mode is configured for this callback");
    await refusal(auth.authenticatePayload?.({ methods: [] }, {}, undefined, makeRequest()));
  });

  it("turns an unexpected exception into an AuthenticationError without passing it on", async () => {
    const auth = await createAuth({ jwt: jwt() });
    const request = {
      ...makeRequest(),
      headers: {
        get(): string | null {
          throw new Error("secret-bearing failure");
        },
      },
    };
    const error = await refusal(auth.authenticateRequest(request));
    expect(error.message).toBe("authentication failed: unexpected error in jwt");
    expect(error.cause).toBeUndefined();
    expect(error).toBeInstanceOf(AuthenticationError);
  });

  it("compiles a mode shared by several callbacks once, and a replacement separately", async () => {
    const other = await rsaKey();
    const auth = await createAuth({
      jwt: jwt(),
      callbacks: {
        RemoveRestrictedProducts: {
          jwt: { environment: "production", keys: { production: other.pem } },
        },
      },
    });
    const remove = { callback: "RemoveRestrictedProducts" } as const;
    await expect(
      auth.authenticateRequest(bearer(await signToken(other.privateKey), remove)),
    ).resolves.toBeDefined();
    await refusal(auth.authenticateRequest(bearer(await signToken(prodKey.privateKey), remove)));
    await expect(
      auth.authenticateRequest(bearer(await signToken(prodKey.privateKey))),
    ).resolves.toBeDefined();
  });
});

describe("createAuth refuses configurations that prove nothing about the caller", () => {
  const GUID = "6A1B2C3D-0000-4000-8000-000000000001";
  const ALL = CALLBACK_NAMES.filter((name) => name !== "GetCheckoutCartInfo").join(", ");

  it("refuses merchantGuid alone (not a secret), naming every callback and the fix", async () => {
    const attempt = createAuth({ merchantGuid: GUID });
    await expect(attempt).rejects.toBeInstanceOf(TypeError);
    await expect(attempt).rejects.toThrow(
      `has nothing that proves the caller for GetCheckoutCartInfo, ${ALL} (`,
    );
    await expect(attempt).rejects.toThrow(
      /add jwt, basic, headerSecret, urlSecret, ipAllowList or cartToken\.verify .*allowWeakAuth: true/,
    );
  });

  it("refuses a cartToken without verify, alone or with merchantGuid", async () => {
    await refused({ cartToken: {} }, /nothing that proves the caller for GetCheckoutCartInfo \(/);
    await refused(
      { cartToken: { parameter: "CartId" }, merchantGuid: GUID },
      /nothing that proves the caller for GetCheckoutCartInfo, SendOrderToMerchant,/,
    );
    // With verify the cart token proves the caller (and the other callbacks stay fail-closed).
    await expect(createAuth({ cartToken: { verify: () => true } })).resolves.toBeDefined();
  });

  it("names only the callbacks an override leaves weak", async () => {
    await refused(
      { jwt: jwt(), merchantGuid: GUID, callbacks: { UpdateOrderStatus: { jwt: false } } },
      /nothing that proves the caller for UpdateOrderStatus \(/,
    );
    await refused(
      { jwt: jwt(), callbacks: { GetCheckoutCartInfo: { jwt: false, cartToken: {} } } },
      /nothing that proves the caller for GetCheckoutCartInfo \(/,
    );
  });

  it("accepts any proving mode, with or without merchantGuid", async () => {
    const proving: AuthConfig[] = [
      { jwt: jwt() },
      { basic: { username: "u", password: "p" } },
      { headerSecret: { name: "X-Secret", value: "s" } },
      { urlSecret: { parameter: "key", value: "k" } },
      { ipAllowList: { allow: ["203.0.113.0/24"] } },
    ];
    for (const config of proving) {
      await expect(createAuth(config)).resolves.toBeDefined();
      await expect(createAuth({ ...config, merchantGuid: GUID })).resolves.toBeDefined();
    }
  });

  // Review OPT D9: any ipAllowList counted as proof, one that admits every address too.
  it("does not count an ipAllowList that admits every address of IPv4 or IPv6 as proof", async () => {
    const everyone = [
      ["0.0.0.0/0"],
      ["::/0"],
      ["0.0.0.0/0", "::/0"],
      ["203.0.113.0/24", "0.0.0.0/0"],
      ["0.0.0.0/1", "128.0.0.0/1"], // together, all of IPv4
      ["128.0.0.0/2", "0.0.0.0/1", "192.0.0.0/2"],
      ["::ffff:0.0.0.0/96"], // all of IPv4, written mapped
      ["::/1", "8000::/1"],
      ["0.0.0.0/0 "],
    ];
    for (const allow of everyone) {
      await refused(
        { ipAllowList: { allow } },
        /nothing that proves the caller for GetCheckoutCartInfo, .*: ipAllowList\.allow holds every IPv4 or every IPv6 address/,
      );
      await refused(
        { ipAllowList: { allow }, merchantGuid: GUID },
        /nothing that proves the caller/,
      );
      await expect(
        createAuth({ ipAllowList: { allow }, allowWeakAuth: true }),
        allow.join(),
      ).resolves.toBeDefined();
    }
    // Trusting every address as a proxy lets any caller name an allowed client in X-Forwarded-For.
    await refused(
      { ipAllowList: { allow: ["203.0.113.7"], trustedProxies: ["::/0", "0.0.0.0/0"] } },
      /nothing that proves the caller/,
    );
    await refused(
      { ipAllowList: { allow: ["203.0.113.7"], trustedProxies: ["0.0.0.0/1", "128.0.0.0/1"] } },
      /nothing that proves the caller/,
    );
    // Ranges that leave any address out, or trusted proxies of your own, still prove the caller.
    for (const ipAllowList of [
      { allow: ["0.0.0.0/1"] },
      { allow: ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5"] },
      { allow: ["0.0.0.0/1", "128.0.0.1/32"] },
      { allow: ["::/1", "::ffff:10.0.0.0/104"] },
      { allow: ["203.0.113.0/24"], trustedProxies: ["10.0.0.0/8", "::1"] },
    ]) {
      await expect(createAuth({ ipAllowList }), JSON.stringify(ipAllowList)).resolves.toBeDefined();
    }
    // Beside another mode that proves the caller, it is only a further check.
    await expect(
      createAuth({ jwt: jwt(), ipAllowList: { allow: ["0.0.0.0/0", "::/0"] } }),
    ).resolves.toBeDefined();
  });

  // Second read S4: the refusal named neither list and said to add the ipAllowList the merchant
  // had; allowWeakAuth, its other advice, then requires the GUID NotifyOrderRefund never carries.
  it("names the list that admits everyone, advises narrowing it first, and warns what allowWeakAuth costs", async () => {
    const message = async (config: unknown) =>
      ((await createAuth(config as AuthConfig).catch((e: unknown) => e)) as Error).message;
    const proxies = await message({
      ipAllowList: { allow: ["203.0.113.0/24"], trustedProxies: ["0.0.0.0/0"] },
      merchantGuid: GUID,
    });
    expect(proxies).toMatch(
      /^createAuth: config has nothing that proves the caller for .*: ipAllowList\.trustedProxies holds every IPv4 or every IPv6 address, so any caller passes the IP allow-list; narrow ipAllowList\.trustedProxies to your own proxies' ranges first, /,
    );
    expect(proxies).not.toContain("ipAllowList.allow");
    expect(proxies).toMatch(
      /or set allowWeakAuth: true to accept forged calls \(it then requires MerchantGUID on NotifyOrderRefund, SendAdditionalRequiredDocumentsToMerchant, RedeemGiftCard, RefundGiftCard, ValidateVoucher and UpdateOrderShippingInfo, though NotifyOrderRefund's payload carries none\)$/,
    );
    expect(proxies.indexOf("narrow")).toBeLessThan(proxies.indexOf("allowWeakAuth"));

    const allow = await message({ ipAllowList: { allow: ["0.0.0.0/0"] }, merchantGuid: GUID });
    expect(allow).toMatch(
      /: ipAllowList\.allow holds every IPv4 or every IPv6 address, .*; narrow ipAllowList\.allow to the service's ranges first, /,
    );
    expect(allow).not.toContain("trustedProxies");
    const both = await message({
      ipAllowList: { allow: ["::/0"], trustedProxies: ["::/0"] },
    });
    expect(both).toMatch(/: ipAllowList\.allow and ipAllowList\.trustedProxies hold every/);
    // Without a merchantGuid no GUID is checked anywhere: no such warning.
    expect(both).toMatch(/allowWeakAuth: true to accept forged calls$/);
    expect(both).not.toContain("MerchantGUID");

    const scoped = await message({
      jwt: jwt(),
      callbacks: {
        NotifyOrderRefund: { jwt: false, ipAllowList: { allow: ["0.0.0.0/0"] } },
      },
    });
    expect(scoped).toMatch(
      /^createAuth: config has nothing that proves the caller for NotifyOrderRefund: callbacks\.NotifyOrderRefund\.ipAllowList\.allow holds every/,
    );

    // merchantGuid alone: the same warning after allowWeakAuth.
    const guidOnly = await message({ merchantGuid: GUID });
    expect(guidOnly).toMatch(/merchantGuid is not a secret/);
    expect(guidOnly).toMatch(
      /then requires MerchantGUID on NotifyOrderRefund, SendAdditionalRequiredDocumentsToMerchant, RedeemGiftCard, RefundGiftCard, ValidateVoucher and UpdateOrderShippingInfo, though/,
    );
  });

  it("allows weak setups only with an explicit allowWeakAuth: true", async () => {
    const auth = await createAuth({ merchantGuid: GUID, cartToken: {}, allowWeakAuth: true });
    const post = makeRequest({ callback: "UpdateOrderStatus" });
    const result = await auth.authenticateRequest(post);
    await expect(
      auth.authenticatePayload?.(result, { MerchantGUID: GUID }, undefined, post),
    ).resolves.toEqual({ methods: ["merchantGuid"] });
    await refused({ merchantGuid: GUID, allowWeakAuth: false }, /nothing that proves the caller/);
    await refused({ merchantGuid: GUID, allowWeakAuth: "yes" }, /allowWeakAuth must be a boolean/);
  });
});
