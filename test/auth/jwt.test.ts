import { inspect } from "node:util";
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type AuthConfig, createAuth, type JwtOptions } from "../../src/auth/index.js";
import { AuthenticationError } from "../../src/core/errors.js";
import { type CallbackFailure, createSendOrderToMerchantHandler } from "../../src/index.js";
import {
  b64u,
  bearer,
  ecKey,
  forge,
  freshClaims,
  makeRequest,
  now,
  refusal,
  rsaKey,
  selfSignedCertificate,
  signRaw,
  signToken,
  type TestKey,
  weakRsaKey,
} from "./helpers.js";

let testKey: TestKey;
let prodKey: TestKey;
let prodKeyNext: TestKey;
let attackerKey: TestKey;
let ec: TestKey;

beforeAll(async () => {
  [testKey, prodKey, prodKeyNext, attackerKey, ec] = await Promise.all([
    rsaKey(),
    rsaKey(),
    rsaKey(),
    rsaKey(),
    ecKey(),
  ]);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function config(jwt: Partial<JwtOptions> = {}): AuthConfig {
  return {
    jwt: {
      environment: "production",
      keys: { test: [testKey.pem], production: [prodKey.pem] },
      ...jwt,
    },
  };
}

/** Freezes the clock at a whole second so `exp == now` is exact. */
function freezeClock(): number {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2030-06-01T12:00:00Z"));
  return now();
}

describe("security.md — JWT", () => {
  it("1. accepts a valid RS256 token signed by the configured key with fresh claims", async () => {
    const auth = await createAuth(config());
    const result = await auth.authenticateRequest(
      bearer(await signToken(prodKey.privateKey, { iss: "svc" })),
    );
    expect(result.methods).toEqual(["jwt"]);
    expect(result.claims).toMatchObject({ sub: "service", iss: "svc" });
    expect(Object.isFrozen(result.claims)).toBe(true);
  });

  it("2. rejects alg none in every spelling, with empty or junk signature", async () => {
    const auth = await createAuth(config());
    for (const alg of ["none", "None", "NONE", "nOnE"]) {
      for (const signature of ["", "AAAA"]) {
        const token = forge({ alg, typ: "JWT" }, freshClaims(), signature);
        const error = await refusal(auth.authenticateRequest(bearer(token)));
        expect(error.message).toMatch(/algorithm not allowed|does not hold a compact JWT/);
      }
    }
  });

  it("3. rejects HS256 tokens keyed with the public key (PEM ± newline, DER) as 401, never a TypeError", async () => {
    const auth = await createAuth(config());
    const pem = prodKey.pem.trimEnd();
    const der = Uint8Array.from(atob(pem.replace(/-----[A-Z ]+-----|\s/g, "")), (c) =>
      c.charCodeAt(0),
    );
    const secrets = [new TextEncoder().encode(pem), new TextEncoder().encode(`${pem}\n`), der];
    for (const secret of secrets) {
      const token = await new SignJWT(freshClaims())
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .sign(secret);
      const error = await refusal(auth.authenticateRequest(bearer(token)));
      expect(error.message).toBe("JWT algorithm not allowed");
    }
  });

  it("4. rejects another algorithm of the same family (PS256, RS384) when RS256 is configured", async () => {
    const auth = await createAuth(config());
    const pkcs8 = await exportPKCS8(prodKey.privateKey);
    for (const alg of ["PS256", "RS384"] as const) {
      const key = await importPKCS8(pkcs8, alg);
      const token = await signToken(key, {}, { alg });
      const error = await refusal(auth.authenticateRequest(bearer(token)));
      expect(error.message).toBe("JWT algorithm not allowed");
    }
    // Control: the same key with the allowed algorithm passes, so the refusal is about alg only.
    await expect(
      auth.authenticateRequest(bearer(await signToken(prodKey.privateKey))),
    ).resolves.toBeDefined();
  });

  it("5. refuses a test token in production and a production token in test: no fallback", async () => {
    const production = await createAuth(config({ environment: "production" }));
    const test = await createAuth(config({ environment: "test" }));
    const testToken = await signToken(testKey.privateKey);
    const prodToken = await signToken(prodKey.privateKey);

    await refusal(production.authenticateRequest(bearer(testToken)));
    await refusal(test.authenticateRequest(bearer(prodToken)));
    await expect(production.authenticateRequest(bearer(prodToken))).resolves.toMatchObject({
      methods: ["jwt"],
    });
    await expect(test.authenticateRequest(bearer(testToken))).resolves.toMatchObject({
      methods: ["jwt"],
    });
  });

  it("6. ignores embedded jwk / jku / x5u / x5c headers for key choice", async () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const auth = await createAuth(config());
    const attackerJwk = await exportJWK(attackerKey.publicKey);
    const cert = await selfSignedCertificate(attackerKey);
    const x5c = cert.replace(/-----[A-Z ]+-----|\s/g, "");
    const embedded = [
      { jwk: attackerJwk },
      { jku: "https://attacker.example/jwks.json" },
      { x5u: "https://attacker.example/cert.pem" },
      { x5c: [x5c] },
    ];
    for (const extra of embedded) {
      const forged = await signRaw(
        { alg: "RS256", ...extra },
        freshClaims(),
        attackerKey.privateKey,
      );
      const error = await refusal(auth.authenticateRequest(bearer(forged)));
      expect(error.message).toBe("JWT signature verification failed");
      // The same headers on a token the configured key signed change nothing either.
      const genuine = await signRaw({ alg: "RS256", ...extra }, freshClaims(), prodKey.privateKey);
      await expect(auth.authenticateRequest(bearer(genuine))).resolves.toBeDefined();
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("7. a kid of ../, SQL, a number or an object has no effect on which key is used", async () => {
    const auth = await createAuth(
      config({
        keys: {
          production: [
            { key: prodKey.pem, kid: "2024-01" },
            { key: prodKeyNext.pem, kid: "2025-01" },
          ],
        },
      }),
    );
    const kids: unknown[] = ["../../etc/passwd", "' OR '1'='1' --", 42, { $ne: null }, ["2025-01"]];
    for (const kid of kids) {
      const genuine = await signRaw({ alg: "RS256", kid }, freshClaims(), prodKeyNext.privateKey);
      await expect(auth.authenticateRequest(bearer(genuine))).resolves.toMatchObject({
        methods: ["jwt"],
      });
      const forged = await signRaw({ alg: "RS256", kid }, freshClaims(), attackerKey.privateKey);
      await refusal(auth.authenticateRequest(bearer(forged)));
    }
  });

  it("8. rejects one flipped bit in header, payload or signature", async () => {
    const auth = await createAuth(config());
    const token = await signToken(prodKey.privateKey);
    await expect(auth.authenticateRequest(bearer(token))).resolves.toBeDefined();
    const parts = token
      .split(".")
      .map((part) => Uint8Array.from(atob(toBase64(part)), (c) => c.charCodeAt(0)));
    let tried = 0;
    for (const [segment, bytes] of parts.entries()) {
      // Every bit of header and payload; every 13th bit of the 256-byte signature.
      const step = segment === 2 ? 13 : 1;
      for (let bit = 0; bit < bytes.length * 8; bit += step) {
        const flipped = parts.map((p) => p.slice());
        const target = flipped[segment] as Uint8Array;
        target[bit >> 3] = (target[bit >> 3] as number) ^ (1 << (bit & 7));
        const tampered = flipped.map((p) => b64u(p)).join(".");
        await refusal(auth.authenticateRequest(bearer(tampered)));
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(500);
  });

  it("9. rejects malformed tokens: '', a.b, a.b., .b.c, a.b.c.d, a.b.c., ..., JSON-serialised JWS", async () => {
    const auth = await createAuth(config());
    const token = await signToken(prodKey.privateKey);
    const [h, p, s] = token.split(".");
    const json = JSON.stringify({ protected: h, payload: p, signature: s });
    const malformed = [
      "",
      "a.b",
      "a.b.",
      ".b.c",
      "a.b.c.d",
      "a.b.c.",
      "...",
      `${h}.${p}`,
      `${h}.${p}.`,
      `.${p}.${s}`,
      `${token}.${s}`,
      `${token}.`,
      json,
    ];
    for (const value of malformed) {
      await refusal(auth.authenticateRequest(bearer(value)));
      await refusal(auth.authenticateRequest(makeRequest({ headers: { Authorization: value } })));
    }
  });

  it("10. accepts exactly `Bearer <jwt>` (any case, surrounding whitespace) and the bare token", async () => {
    const auth = await createAuth(config());
    const token = await signToken(prodKey.privateKey);
    const acceptedValues = [
      `Bearer ${token}`,
      `bearer ${token}`,
      `BEARER\t${token}`,
      `  Bearer   ${token}  `,
      token,
      ` ${token}\t`,
    ];
    for (const value of acceptedValues) {
      await expect(
        auth.authenticateRequest(makeRequest({ headers: { Authorization: value } })),
      ).resolves.toMatchObject({ methods: ["jwt"] });
    }
    const refusedValues = [
      "Bearer",
      "Bearer ",
      `Bearer${token}`,
      `Bearer ${token} extra`,
      `Basic ${token}`,
      `JWT ${token}`,
      `Bearer Bearer ${token}`,
      `Token ${token}`,
    ];
    for (const value of refusedValues) {
      await refusal(auth.authenticateRequest(makeRequest({ headers: { Authorization: value } })));
    }
  });

  it("11. rejects an ES256 signature of 64 zero bytes (r = s = 0)", async () => {
    const auth = await createAuth(
      config({ algorithms: ["ES256"], keys: { production: [ec.pem] } }),
    );
    const zero = forge({ alg: "ES256", typ: "JWT" }, freshClaims(), new Uint8Array(64));
    const error = await refusal(auth.authenticateRequest(bearer(zero)));
    expect(error.message).toBe("JWT signature verification failed");
    // Control: a real ES256 token from that key passes.
    const real = await signToken(ec.privateKey, {}, { alg: "ES256" });
    await expect(auth.authenticateRequest(bearer(real))).resolves.toBeDefined();
  });

  it("12. refuses an RSA key under 2048 bits at start-up; normalises PEM with leading whitespace or literal \\n", async () => {
    const weak = await weakRsaKey();
    await expect(createAuth(config({ keys: { production: [weak.pem] } }))).rejects.toThrow(
      /jwt\.keys\.production\[0\] is an RSA key of 1024 bits/,
    );
    // A weak key in the other environment is refused too, before anything is served.
    await expect(
      createAuth(config({ keys: { test: [testKey.pem, weak.pem], production: [prodKey.pem] } })),
    ).rejects.toThrow(/jwt\.keys\.test\[1\] is an RSA key of 1024 bits/);

    const fromEnv = `\n   ${prodKey.pem.trim().replaceAll("\n", "\\n")}  \n`;
    const crlf = `\r\n${prodKey.pem.replaceAll("\n", "\r\n")}`;
    for (const pem of [fromEnv, crlf]) {
      const auth = await createAuth(config({ keys: { production: [pem] } }));
      await expect(
        auth.authenticateRequest(bearer(await signToken(prodKey.privateKey))),
      ).resolves.toMatchObject({ methods: ["jwt"] });
    }
  });

  it("13. exp: past and == now rejected, inside the tolerance accepted, missing per requireExpiration", async () => {
    const t = freezeClock();
    const strict = await createAuth(config({ clockToleranceSeconds: 0 }));
    const tolerant = await createAuth(config()); // default tolerance: 60 s
    const token = (claims: Record<string, unknown>) =>
      signRaw({ alg: "RS256" }, { sub: "service", iat: t - 100, ...claims }, prodKey.privateKey);

    await refusal(strict.authenticateRequest(bearer(await token({ exp: t - 1 }))));
    const atNow = await refusal(strict.authenticateRequest(bearer(await token({ exp: t }))));
    expect(atNow.message).toBe('JWT claim "exp" check failed');
    await expect(
      strict.authenticateRequest(bearer(await token({ exp: t + 1 }))),
    ).resolves.toBeDefined();

    await refusal(tolerant.authenticateRequest(bearer(await token({ exp: t - 60 }))));
    await expect(
      tolerant.authenticateRequest(bearer(await token({ exp: t - 59 }))),
    ).resolves.toBeDefined();

    const missing = await refusal(tolerant.authenticateRequest(bearer(await token({}))));
    expect(missing.message).toBe('JWT claim "exp" missing');
    const lenient = await createAuth(config({ requireExpiration: false }));
    await expect(lenient.authenticateRequest(bearer(await token({})))).resolves.toBeDefined();
  });

  it("14. nbf beyond now + tolerance rejected; iat in the future or older than the maximum age rejected", async () => {
    const t = freezeClock();
    const auth = await createAuth(config());
    const aged = await createAuth(config({ maxTokenAgeSeconds: 300 }));
    const token = (claims: Record<string, unknown>) =>
      signRaw({ alg: "RS256" }, { exp: t + 600, ...claims }, prodKey.privateKey);

    const nbf = await refusal(auth.authenticateRequest(bearer(await token({ nbf: t + 61 }))));
    expect(nbf.message).toBe('JWT claim "nbf" check failed');
    await expect(
      auth.authenticateRequest(bearer(await token({ nbf: t + 60 }))),
    ).resolves.toBeDefined();

    // A future iat is refused with and without maxTokenAgeSeconds.
    const future = await refusal(auth.authenticateRequest(bearer(await token({ iat: t + 61 }))));
    expect(future.message).toBe('JWT claim "iat" is in the future');
    await refusal(aged.authenticateRequest(bearer(await token({ iat: t + 61 }))));
    await expect(
      auth.authenticateRequest(bearer(await token({ iat: t + 60 }))),
    ).resolves.toBeDefined();

    const old = await refusal(aged.authenticateRequest(bearer(await token({ iat: t - 361 }))));
    expect(old.message).toBe('JWT claim "iat" check failed');
    await expect(
      aged.authenticateRequest(bearer(await token({ iat: t - 300 }))),
    ).resolves.toBeDefined();
    const noIat = await refusal(aged.authenticateRequest(bearer(await token({}))));
    expect(noIat.message).toBe('JWT claim "iat" missing');
  });

  it("15. exp / iat as strings, floats, 1e300 or negative are rejected deterministically", async () => {
    const t = freezeClock();
    const auth = await createAuth(config());
    const aged = await createAuth(config({ maxTokenAgeSeconds: 300 }));
    const cases: Array<[string, Record<string, unknown>]> = [
      ["exp string", { exp: String(t + 300), iat: t }],
      ["exp float", { exp: t + 300.5, iat: t }],
      ["exp 1e300", { exp: 1e300, iat: t }],
      ["exp negative", { exp: -1, iat: t }],
      ["iat string", { exp: t + 300, iat: String(t) }],
      ["iat float", { exp: t + 300, iat: t - 0.5 }],
      ["iat 1e300", { exp: t + 300, iat: 1e300 }],
      ["iat negative", { exp: t + 300, iat: -5 }],
      ["nbf float", { exp: t + 300, nbf: t - 0.25 }],
      // Found by mutation testing: a whole, safe number past 9999-12-31 (a token that never
      // expires) was only refused by the bound no test reached.
      ["exp past year 9999", { exp: 253_402_300_800, iat: t }],
      ["exp 2^53 - 1", { exp: Number.MAX_SAFE_INTEGER, iat: t }],
    ];
    for (const [label, claims] of cases) {
      const token = await signRaw(
        { alg: "RS256" },
        { sub: "service", ...claims },
        prodKey.privateKey,
      );
      for (const verifier of [auth, aged]) {
        const first = await refusal(verifier.authenticateRequest(bearer(token)));
        const second = await refusal(verifier.authenticateRequest(bearer(token)));
        expect(second.message, label).toBe(first.message);
        expect(first.message, label).toMatch(/^JWT claim "(exp|iat|nbf)"/);
      }
    }
  });

  it("16. rejects a wrong iss or aud when configured", async () => {
    const auth = await createAuth(
      config({ issuer: "crossborder-service", audience: ["merchant-1", "merchant-2"] }),
    );
    const good = { iss: "crossborder-service", aud: "merchant-2" };
    await expect(
      auth.authenticateRequest(bearer(await signToken(prodKey.privateKey, good))),
    ).resolves.toBeDefined();
    for (const [claims, reason] of [
      [{ ...good, iss: "someone-else" }, 'JWT claim "iss" check failed'],
      [{ aud: "merchant-2" }, 'JWT claim "iss" missing'],
      [{ ...good, aud: "merchant-3" }, 'JWT claim "aud" check failed'],
      [{ ...good, aud: ["other"] }, 'JWT claim "aud" check failed'],
      [{ iss: "crossborder-service" }, 'JWT claim "aud" missing'],
    ] satisfies Array<[Record<string, unknown>, string]>) {
      const error = await refusal(
        auth.authenticateRequest(bearer(await signToken(prodKey.privateKey, claims))),
      );
      expect(error.message).toBe(reason);
    }
  });

  it("17. rejects an unknown crit entry and b64: false (with or without crit)", async () => {
    const auth = await createAuth(config());
    const headers = [
      { alg: "RS256", crit: ["urn:example:unknown"], "urn:example:unknown": true },
      { alg: "RS256", crit: ["b64"], b64: false },
      { alg: "RS256", b64: false },
      { alg: "RS256", crit: ["exp"], exp: 1 },
    ];
    for (const header of headers) {
      const token = await signRaw(header, freshClaims(), prodKey.privateKey);
      const error = await refusal(auth.authenticateRequest(bearer(token)));
      expect(error.message).toMatch(/^JWT (crit|b64) header not supported$/);
    }
  });

  it("18. missing, empty, duplicated or oversized Authorization: 401, or 431 above 16 KiB", async () => {
    const auth = await createAuth(config());
    const token = await signToken(prodKey.privateKey);
    const withHeader = (value: string | undefined) =>
      auth.authenticateRequest(makeRequest({ headers: { Authorization: value } }));

    expect((await refusal(withHeader(undefined))).message).toBe("Authorization header missing");
    expect((await refusal(withHeader(""))).message).toBe("Authorization header empty");
    expect((await refusal(withHeader("   "))).message).toBe("Authorization header empty");
    const duplicated = await refusal(withHeader(`Bearer ${token}, Bearer ${token}`));
    expect(duplicated.message).toBe("Authorization header repeated or contains a comma");
    const big = await refusal(withHeader(`Bearer ${"a".repeat(16 * 1024)}`), "header_too_large");
    expect(big.message).toMatch(/longer than 16384/);
    // Exactly 16 KiB is read (and refused as a bad token), not answered with 431.
    await refusal(withHeader("a".repeat(16 * 1024)), "unauthorized");
  });
});

describe("JWT keys and policy", () => {
  it("accepts a public JWK as the key, and uses its kid", async () => {
    const jwk = { ...(await exportJWK(prodKey.publicKey)), kid: "jwk-1" };
    const auth = await createAuth(config({ keys: { production: [jwk] } }));
    const verify = vi.spyOn(crypto.subtle, "verify");
    const token = await signToken(prodKey.privateKey, {}, { kid: "jwk-1" });
    await expect(auth.authenticateRequest(bearer(token))).resolves.toMatchObject({
      methods: ["jwt"],
    });
    expect(verify).toHaveBeenCalledTimes(1);
    await refusal(auth.authenticateRequest(bearer(await signToken(testKey.privateKey))));
  });

  it("accepts an X.509 certificate PEM as the key (only its public key is used)", async () => {
    const certificate = await selfSignedCertificate(prodKey);
    const auth = await createAuth(config({ keys: { production: [certificate] } }));
    await expect(
      auth.authenticateRequest(bearer(await signToken(prodKey.privateKey))),
    ).resolves.toMatchObject({ methods: ["jwt"] });
    await refusal(auth.authenticateRequest(bearer(await signToken(attackerKey.privateKey))));
  });

  it("rotates keys: every listed key verifies, tried in order, a matching kid first", async () => {
    const auth = await createAuth(
      config({
        keys: {
          production: [
            { key: prodKey.pem, kid: "old" },
            { key: prodKeyNext.pem, kid: "new" },
          ],
        },
      }),
    );
    const verify = vi.spyOn(crypto.subtle, "verify");
    // No kid: the old key is tried first, fails, then the new one verifies.
    await auth.authenticateRequest(bearer(await signToken(prodKeyNext.privateKey)));
    expect(verify).toHaveBeenCalledTimes(2);
    verify.mockClear();
    // Matching kid: the new key is tried first, one verification only.
    await auth.authenticateRequest(
      bearer(await signToken(prodKeyNext.privateKey, {}, { kid: "new" })),
    );
    expect(verify).toHaveBeenCalledTimes(1);
    verify.mockClear();
    // A kid naming the wrong key still falls back to the other configured key.
    await auth.authenticateRequest(bearer(await signToken(prodKey.privateKey, {}, { kid: "new" })));
    expect(verify).toHaveBeenCalledTimes(2);
    verify.mockClear();
    await refusal(auth.authenticateRequest(bearer(await signToken(attackerKey.privateKey))));
    expect(verify).toHaveBeenCalledTimes(2);
  });

  it("imports keys once at createAuth, never per request (50 requests)", async () => {
    const importKey = vi.spyOn(crypto.subtle, "importKey");
    const auth = await createAuth(
      config({ keys: { test: [testKey.pem], production: [prodKey.pem, prodKeyNext.pem] } }),
    );
    expect(importKey.mock.calls.length).toBeGreaterThanOrEqual(3);
    importKey.mockClear();
    const tokens = await Promise.all([
      signToken(prodKey.privateKey),
      signToken(prodKeyNext.privateKey),
    ]);
    importKey.mockClear();
    for (let i = 0; i < 50; i++) {
      await auth.authenticateRequest(bearer(tokens[i % 2] as string));
    }
    await refusal(auth.authenticateRequest(bearer(await signToken(testKey.privateKey))));
    expect(importKey).not.toHaveBeenCalled();
  });

  it("never hands on jose's error: no payload, no token, no cause in what is thrown", async () => {
    const t = now();
    const auth = await createAuth(config());
    const secret = "4111111111111111";
    const token = await signRaw(
      { alg: "RS256" },
      { sub: "service", card: secret, iat: t - 1000, exp: t - 500 },
      prodKey.privateKey,
    );
    const error = await refusal(auth.authenticateRequest(bearer(token)));
    expect(error.message).toBe('JWT claim "exp" check failed');
    expect(error.cause).toBeUndefined();
    expect(Object.keys(error).sort()).toEqual(["kind", "name"]);
    for (const rendering of [
      inspect(error, { depth: 10 }),
      JSON.stringify(error),
      String(error.stack),
    ]) {
      expect(rendering).not.toContain(secret);
      expect(rendering).not.toContain(token.split(".")[1]);
    }
  });

  it("maps a key/algorithm mismatch inside jose to a 401 (RSA key, ES256 allowed, RS-only keys)", async () => {
    // ES256 is allowed but no configured key is EC: refused before any key is used.
    const auth = await createAuth(
      config({ algorithms: ["RS256", "ES256"], keys: { production: [prodKey.pem] } }),
    );
    const token = await signToken(ec.privateKey, {}, { alg: "ES256" });
    const error = await refusal(auth.authenticateRequest(bearer(token)));
    expect(error.message).toBe("JWT algorithm fits none of the configured keys");
  });

  it("accepts keys of mixed types when their algorithms are allowed", async () => {
    const auth = await createAuth(
      config({ algorithms: ["RS256", "ES256"], keys: { production: [prodKey.pem, ec.pem] } }),
    );
    await expect(
      auth.authenticateRequest(bearer(await signToken(ec.privateKey, {}, { alg: "ES256" }))),
    ).resolves.toBeDefined();
    await expect(
      auth.authenticateRequest(bearer(await signToken(prodKey.privateKey))),
    ).resolves.toBeDefined();
  });

  it("verifies PS256 and EdDSA when they are the configured algorithms", async () => {
    const ps = await createAuth(config({ algorithms: ["PS256"] }));
    const psKey = await importPKCS8(await exportPKCS8(prodKey.privateKey), "PS256");
    await expect(
      ps.authenticateRequest(bearer(await signToken(psKey, {}, { alg: "PS256" }))),
    ).resolves.toMatchObject({ methods: ["jwt"] });
    await refusal(ps.authenticateRequest(bearer(await signToken(prodKey.privateKey))));

    const ed = await generateKeyPair("EdDSA", { extractable: true });
    const eddsa = await createAuth(
      config({ algorithms: ["EdDSA"], keys: { production: await exportSPKI(ed.publicKey) } }),
    );
    await expect(
      eddsa.authenticateRequest(bearer(await signToken(ed.privateKey, {}, { alg: "EdDSA" }))),
    ).resolves.toMatchObject({ methods: ["jwt"] });
  });

  it("decides each token as a fresh verifier would, whatever token came before (the header is remembered)", async () => {
    // The verifier keeps what it decided of the last accepted header segment: a token after it
    // must get exactly the answer it gets first, with the same segment in other shapes too.
    const warm = await createAuth(
      config({ keys: { test: [testKey.pem], production: [prodKey.pem, prodKeyNext.pem] } }),
    );
    const token = await signToken(prodKey.privateKey);
    const [h, p, s] = token.split(".") as [string, string, string];
    const other = await signToken(prodKeyNext.privateKey, {}, { kid: "next" });
    const none = forge({ alg: "none" }, freshClaims(), "AAAA");
    const flipped = `${h}.${p}.${s.startsWith("A") ? "B" : "A"}${s.slice(1)}`;
    const candidates = [
      token,
      `${h}.${p}`,
      `${h}.${p}.${s}.${s}`,
      `${h}.${p}.${s}.${s}.${s}`,
      `${h}.${p}.${s}.${s}.${s}.${s}`,
      `${h}`,
      `${h}.`,
      `${h}..`,
      `${h}x.${p}.${s}`,
      `${h.slice(0, -1)}.${p}.${s}`,
      `${h}${h}.${p}.${s}`,
      flipped,
      other,
      none,
      `${h}.${forge({ alg: "RS256" }, freshClaims(), "").split(".")[1]}.${s}`,
    ];
    const outcome = async (auth: Awaited<ReturnType<typeof createAuth>>, value: string) => {
      try {
        const result = await auth.authenticateRequest(bearer(value));
        return { ok: true, methods: result.methods };
      } catch (error) {
        return { ok: false, message: (error as Error).message };
      }
    };
    for (const candidate of candidates) {
      const fresh = await outcome(
        await createAuth(
          config({ keys: { test: [testKey.pem], production: [prodKey.pem, prodKeyNext.pem] } }),
        ),
        candidate,
      );
      // After an accepted token with the same header, and after the candidate itself.
      expect(await outcome(warm, token)).toMatchObject({ ok: true });
      expect(await outcome(warm, candidate)).toEqual(fresh);
      expect(await outcome(warm, candidate)).toEqual(fresh);
      expect(await outcome(warm, other)).toMatchObject({ ok: true });
      expect(await outcome(warm, candidate)).toEqual(fresh);
    }
    // The remembered header vouches for nothing but itself.
    expect(await outcome(warm, token)).toMatchObject({ ok: true });
    expect(await outcome(warm, flipped)).toEqual({
      ok: false,
      message: "JWT signature verification failed",
    });
    expect(await outcome(warm, none)).toEqual({ ok: false, message: "JWT algorithm not allowed" });
  });

  it("refuses a token whose payload is not a JSON object", async () => {
    const auth = await createAuth(config());
    for (const payload of ["[1,2]", '"text"', "42", "{not json"]) {
      const token = await signRaw({ alg: "RS256" }, payload, prodKey.privateKey);
      const error = await refusal(auth.authenticateRequest(bearer(token)));
      expect(error.message).toBe("JWT malformed");
    }
  });
});

describe("security.md — JWT, facts about jose", () => {
  /** Signs header and payload given as JSON text (duplicate keys and all) with an RS256 key. */
  async function signText(header: string, payload: string, key: CryptoKey): Promise<string> {
    const input = `${b64u(header)}.${b64u(payload)}`;
    const signature = await crypto.subtle.sign(
      { name: "RSASSA-PKCS1-v1_5" },
      key,
      new TextEncoder().encode(input),
    );
    return `${input}.${b64u(new Uint8Array(signature))}`;
  }

  it("jose keeps the last of duplicate keys: the library's own header and claim checks read that same value", async () => {
    const t = freezeClock();
    const auth = await createAuth(config());
    const outcome = async (header: string, payload: string) => {
      const token = await signText(header, payload, prodKey.privateKey);
      try {
        await auth.authenticateRequest(bearer(token));
        return "accepted";
      } catch (error) {
        expect(error).toBeInstanceOf(AuthenticationError);
        return (error as Error).message;
      }
    };
    const claims = `"sub":"service","iat":${t}`;
    // alg: the last one decides, for the allow-list as for jose.
    expect(await outcome('{"alg":"none","alg":"RS256"}', `{${claims},"exp":${t + 300}}`)).toBe(
      "accepted",
    );
    expect(await outcome('{"alg":"RS256","alg":"none"}', `{${claims},"exp":${t + 300}}`)).toBe(
      "JWT algorithm not allowed",
    );
    expect(await outcome('{"alg":"RS256","alg":"HS256"}', `{${claims},"exp":${t + 300}}`)).toBe(
      "JWT algorithm not allowed",
    );
    // b64 / crit hidden behind a later duplicate are still seen.
    expect(
      await outcome('{"alg":"RS256","b64":true,"b64":false}', `{${claims},"exp":${t + 300}}`),
    ).toBe("JWT b64 header not supported");
    // exp: the last value is the one checked, by jose and by the whole-seconds check alike.
    expect(await outcome('{"alg":"RS256"}', `{${claims},"exp":${t - 500},"exp":${t + 300}}`)).toBe(
      "accepted",
    );
    expect(await outcome('{"alg":"RS256"}', `{${claims},"exp":${t + 300},"exp":${t - 500}}`)).toBe(
      'JWT claim "exp" check failed',
    );
    expect(
      await outcome('{"alg":"RS256"}', `{${claims},"exp":${t + 300},"exp":"${t + 300}"}`),
    ).toBe('JWT claim "exp" check failed');
    expect(
      await outcome(
        '{"alg":"RS256"}',
        `{"sub":"service","exp":${t + 300},"iat":${t},"iat":${t + 3600}}`,
      ),
    ).toBe('JWT claim "iat" is in the future');
  });

  it("12. an RSA key under 2048 bits is refused at start-up as a JWK and as a certificate too", async () => {
    const weak = await weakRsaKey();
    const jwk = await exportJWK(weak.publicKey);
    await expect(createAuth(config({ keys: { production: [jwk as never] } }))).rejects.toThrow(
      /jwt\.keys\.production\[0\] is an RSA key of 1024 bits/,
    );
    await expect(
      createAuth(config({ keys: { production: [{ key: jwk as never, kid: "old" }] } })),
    ).rejects.toThrow(/jwt\.keys\.production\[0\] is an RSA key of 1024 bits/);
    const certificate = await selfSignedCertificate(weak);
    await expect(createAuth(config({ keys: { production: [certificate] } }))).rejects.toThrow(
      /jwt\.keys\.production\[0\] is an RSA key of 1024 bits/,
    );
  });
});

describe("security.md — JWT refusals through a handler (3, 18, 27)", () => {
  const PAN = "4111111111111111";
  const CVV = "7351";

  it("forged, expired, wrong-issuer or oversized: 401 (431), a fixed body, no card data, token or payload anywhere", async () => {
    const t = now();
    const auth = await createAuth(config({ issuer: "crossborder-service" }));
    const order = JSON.stringify({
      OrderId: "GE100",
      Products: [{ Sku: "SKU-1", Price: 10, Quantity: 1 }],
      PaymentDetails: { CardNumber: PAN, CVVNumber: CVV },
    });
    const card = { card: PAN, cvv: CVV, note: `paid with ${PAN} cvv ${CVV}` };
    const pem = prodKey.pem.trimEnd();
    const hsWithPublicKey = async (secret: string) =>
      await new SignJWT({ ...freshClaims(), iss: "crossborder-service", ...card })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .sign(new TextEncoder().encode(secret));
    const tokens: Array<[string, string, number]> = [
      ["HS256 keyed with the PEM", await hsWithPublicKey(pem), 401],
      ["HS256 keyed with the PEM and a newline", await hsWithPublicKey(`${pem}\n`), 401],
      [
        "expired (JWTExpired carries the payload)",
        await signToken(prodKey.privateKey, {
          iss: "crossborder-service",
          iat: t - 1000,
          exp: t - 500,
          ...card,
        }),
        401,
      ],
      [
        "wrong issuer (JWTClaimValidationFailed carries the payload)",
        await signToken(prodKey.privateKey, { iss: "someone-else", ...card }),
        401,
      ],
      [
        "signed by another key",
        await signToken(attackerKey.privateKey, { iss: "crossborder-service", ...card }),
        401,
      ],
      ["over 16 KiB", `${"a".repeat(16 * 1024)}${PAN}`, 431],
    ];
    const logs: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      logs.push(args.map((a) => (typeof a === "string" ? a : inspect(a, { depth: 10 }))).join(" "));
    });
    const failures: CallbackFailure[] = [];
    let called = 0;
    const merchant = () => {
      called++;
      return { InternalOrderId: "M-1" };
    };
    const handlers = [
      createSendOrderToMerchantHandler(merchant, {
        auth,
        onError: (failure) => void failures.push(failure),
      }),
      createSendOrderToMerchantHandler(merchant, { auth }),
    ];
    const digits = (text: string) => text.replace(/[^0-9]/g, " ");
    for (const [label, token, status] of tokens) {
      const payloadSegment = token.split(".")[1] ?? token;
      for (const handler of handlers) {
        logs.length = 0;
        failures.length = 0;
        const response = await handler.handle({
          method: "POST",
          url: "/callback",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: order,
        });
        expect(response.status, label).toBe(status);
        expect(JSON.parse(response.body), label).toStrictEqual(
          status === 401
            ? {
                Success: false,
                ErrorCode: "UNAUTHORIZED",
                Message: "Unauthorized",
                Description: "",
              }
            : {
                Success: false,
                ErrorCode: "HEADER_TOO_LARGE",
                Message: "Request header too large",
                Description: "",
              },
        );
        const seen = [
          response.body,
          JSON.stringify(response.headers),
          ...logs,
          ...failures.map((f) => inspect(f, { depth: 10 })),
          ...failures.map((f) => `${f.reason} ${String((f.error as Error | undefined)?.stack)}`),
        ];
        // Exactly one report of the refusal: on the hook, or the default one line on stderr.
        expect(failures.length + logs.length, label).toBe(1);
        for (const text of seen) {
          expect(digits(text), label).not.toContain(PAN);
          expect(digits(text).split(" "), label).not.toContain(CVV);
          expect(text, label).not.toContain(payloadSegment.slice(0, 40));
        }
      }
    }
    expect(called).toBe(0);
  });
});

/** base64url → base64 with padding, for atob. */
function toBase64(part: string): string {
  const b64 = part.replaceAll("-", "+").replaceAll("_", "/");
  return b64 + "=".repeat((4 - (b64.length % 4)) % 4);
}
