import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { decodeProtectedHeader, generateKeyPair, importSPKI, jwtVerify } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import {
  bodyDigest,
  createTestKeys,
  type SendCallbackOptions,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";

let keys: TestKeys;
beforeAll(async () => {
  keys = await createTestKeys();
});

async function verify(token: string, publicKey = keys.publicKey) {
  return jwtVerify(token, await importSPKI(publicKey, "RS256"), { algorithms: ["RS256"] });
}

describe("createTestKeys", () => {
  it("makes an RSA-2048 pair: SPKI public PEM, PKCS#8 private PEM", async () => {
    expect(keys.publicKey).toMatch(
      /^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n?$/,
    );
    expect(keys.privateKey).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n?$/,
    );
    const details = createPublicKey(keys.publicKey);
    expect(details.asymmetricKeyType).toBe("rsa");
    expect(details.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it("makes a new pair on each call, whose halves match", async () => {
    const other = await createTestKeys();
    expect(other.publicKey).not.toBe(keys.publicKey);
    const token = await signServiceToken(other.privateKey);
    await expect(verify(token, other.publicKey)).resolves.toBeDefined();
    await expect(verify(token, keys.publicKey)).rejects.toThrow(/signature/);
  });
});

describe("signServiceToken", () => {
  it("signs RS256 with iat and a 300 s exp by default, no iss or aud", async () => {
    const before = Math.floor(Date.now() / 1000);
    const token = await signServiceToken(keys.privateKey);
    const { payload, protectedHeader } = await verify(token);
    expect(protectedHeader).toEqual({ alg: "RS256", typ: "JWT" });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    expect(payload.iss).toBeUndefined();
    expect(payload.aud).toBeUndefined();
  });

  // second-left-2: `{ expiresIn: -3600 }` (for an expired token) signed a valid 300 s one.
  it("refuses an unknown option, naming the known ones and the closest", async () => {
    await expect(signServiceToken(keys.privateKey, { expiresIn: -3600 } as never)).rejects.toThrow(
      /^signServiceToken: options has an unknown option "expiresIn" \(known: issuer, audience, expiresInSeconds, issuedAt, keyId, claims, bodyDigestClaim, bodyDigestEncoding, body\)$/,
    );
    await expect(
      signServiceToken(keys.privateKey, { issuer: "i", kid: "k" } as never),
    ).rejects.toThrow(TypeError);
    await expect(
      signServiceToken(keys.privateKey, { bodyDigestClam: "bd", body: "{}" } as never),
    ).rejects.toThrow('did you mean "bodyDigestClaim"?');
  });

  it("sets issuer, audience, lifetime, iat, kid and extra claims", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signServiceToken(keys.privateKey, {
      issuer: "https://service.example",
      audience: "merchant-1",
      expiresInSeconds: 60,
      issuedAt: now - 10,
      keyId: "test-2025",
      claims: { merchant: "m-1", iat: 1, scope: ["callbacks"] },
    });
    expect(decodeProtectedHeader(token).kid).toBe("test-2025");
    const { payload } = await verify(token);
    expect(payload).toMatchObject({
      iss: "https://service.example",
      aud: "merchant-1",
      iat: now - 10,
      exp: now + 50,
      merchant: "m-1",
      scope: ["callbacks"],
    });
  });

  it("gives an expired token for a negative lifetime", async () => {
    const token = await signServiceToken(keys.privateKey, { expiresInSeconds: -120 });
    await expect(verify(token)).rejects.toThrow(/exp/);
  });

  it("accepts a CryptoKey", async () => {
    const pair = await generateKeyPair("RS256");
    const token = await signServiceToken(pair.privateKey, { audience: ["a", "b"] });
    const { payload } = await jwtVerify(token, pair.publicKey);
    expect(payload.aud).toEqual(["a", "b"]);
  });

  it("accepts Node's KeyObject, from a PEM or generated, as sendCallback's privateKey too", async () => {
    const fromPem = createPrivateKey(keys.privateKey);
    await expect(verify(await signServiceToken(fromPem))).resolves.toBeDefined();
    const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const options = { privateKey: pair.privateKey } satisfies SendCallbackOptions;
    const token = await signServiceToken(options.privateKey, { issuer: "https://service.example" });
    const { payload } = await jwtVerify(token, pair.publicKey);
    expect(payload.iss).toBe("https://service.example");
  });

  it("refuses what is no key, in its type and at run time", async () => {
    // @ts-expect-error a number is not a key
    await expect(signServiceToken(42)).rejects.toThrow(TypeError);
    // @ts-expect-error nor is an empty object
    await expect(signServiceToken({})).rejects.toThrow(TypeError);
    // @ts-expect-error nor a Buffer (of the PEM)
    await expect(signServiceToken(Buffer.from(keys.privateKey))).rejects.toThrow(TypeError);
    const jwk = createPrivateKey(keys.privateKey).export({ format: "jwk" });
    // @ts-expect-error nor a JWK (jose would import one; the parameters do not take it)
    const options: SendCallbackOptions = { privateKey: jwk };
    expect(options.privateKey).toBe(jwk);
  });

  it("adds the SHA-256 of the body under the configured claim, base64url or hex", async () => {
    const body = '{"OrderId":"GE1","City":"São Paulo"}';
    const digest = createHash("sha256").update(body, "utf8").digest();
    const b64 = await signServiceToken(keys.privateKey, { body, bodyDigestClaim: "bodyHash" });
    expect((await verify(b64)).payload.bodyHash).toBe(digest.toString("base64url"));
    const hex = await signServiceToken(keys.privateKey, {
      body: new TextEncoder().encode(body),
      bodyDigestClaim: "sha",
      bodyDigestEncoding: "hex",
    });
    expect((await verify(hex)).payload.sha).toBe(digest.toString("hex"));
    await expect(bodyDigest("")).resolves.toBe(createHash("sha256").digest("base64url"));
  });

  it("adds no digest without a claim name, and refuses a claim name without a body", async () => {
    const token = await signServiceToken(keys.privateKey, { body: "{}" });
    expect(Object.keys((await verify(token)).payload).sort()).toEqual(["exp", "iat"]);
    await expect(
      signServiceToken(keys.privateKey, { bodyDigestClaim: "bodyHash" }),
    ).rejects.toThrow(/needs the body/);
    await expect(
      signServiceToken(keys.privateKey, { expiresInSeconds: Number.NaN }),
    ).rejects.toThrow(RangeError);
  });

  it("refuses a key that is not a PKCS#8 private key", async () => {
    await expect(signServiceToken(keys.publicKey)).rejects.toThrow();
  });
});
