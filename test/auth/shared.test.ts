import { describe, expect, it } from "vitest";
import { sha256, sha256Text, toHex } from "../../src/auth/digest.js";
import { isPlainObject, isRecord } from "../../src/core/objects.js";
import { bodyDigest } from "../../src/testing/token.js";

// FIPS 180-2 test vector: SHA-256("abc").
const ABC_HEX = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const ABC_B64U = "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0";

describe("digest helpers (the one home of SHA-256, hex and base64url)", () => {
  it("writes SHA-256 as lower-case hex or unpadded base64url, from text or bytes", async () => {
    expect(toHex(await sha256("abc"))).toBe(ABC_HEX);
    await expect(sha256Text("abc", "hex")).resolves.toBe(ABC_HEX);
    await expect(sha256Text(new TextEncoder().encode("abc"), "base64url")).resolves.toBe(ABC_B64U);
    const shared = new Uint8Array(new SharedArrayBuffer(3));
    shared.set(new TextEncoder().encode("abc"));
    await expect(sha256Text(shared, "hex")).resolves.toBe(ABC_HEX);
  });

  it("is what the test-token helper signs", async () => {
    await expect(bodyDigest("abc")).resolves.toBe(ABC_B64U);
    await expect(bodyDigest("abc", "hex")).resolves.toBe(ABC_HEX);
  });
});

describe("object shape helpers", () => {
  class Thing {}
  it("isRecord: any non-null, non-array object", () => {
    for (const value of [{}, Object.create(null), new Thing(), new Date()]) {
      expect(isRecord(value)).toBe(true);
    }
    for (const value of [null, undefined, [], "x", 1]) expect(isRecord(value)).toBe(false);
  });

  it("isPlainObject: only object literals, JSON objects and null-prototype objects", () => {
    for (const value of [{}, JSON.parse('{"__proto__":{"a":1}}'), Object.create(null)]) {
      expect(isPlainObject(value)).toBe(true);
    }
    for (const value of [new Thing(), new Date(), new Map(), [], null, "x"]) {
      expect(isPlainObject(value)).toBe(false);
    }
  });
});
