// Review deps-2 and deps-3: what the merchant's own jose (4, 5 or 6) hands out must be accepted
// where the package takes keys, as it is at run time. jose 5's `JWK` is an interface without an
// index signature, which `PublicJwk` (then `readonly [member: string]: unknown`) refused:
// "Index signature for type 'string' is missing in type 'JWK'". jose 4/5's `generateKeyPair()`
// and `importPKCS8()` answer `KeyLike` (`{ type: string }`), which `privateKey` refused, although
// it is a KeyObject or a CryptoKey that signs. The three shapes are declared here as each jose
// major declares them (jose is not a dependency of the merchant's project in this test).
import { afterAll, beforeAll, expect, it } from "vitest";
import { createProject, describe as describeDiagnostic, type Project } from "./program.js";

const JOSE = `
/** jose 4: an interface with an index signature. */
interface Jose4JWK {
  alg?: string; crv?: string; d?: string; dp?: string; dq?: string; e?: string; ext?: boolean;
  k?: string; key_ops?: string[]; kid?: string; kty?: string; n?: string;
  oth?: Array<{ d?: string; r?: string; t?: string }>; p?: string; q?: string; qi?: string;
  use?: string; x?: string; y?: string; x5c?: string[]; x5t?: string; "x5t#S256"?: string;
  x5u?: string;
  [propName: string]: unknown;
}
/** jose 5: interfaces without an index signature. */
interface Jose5JWKParameters {
  kty: string; alg?: string; key_ops?: string[]; ext?: boolean; use?: string; x5c?: string[];
  x5t?: string; "x5t#S256"?: string; x5u?: string; kid?: string;
}
interface Jose5JWK extends Jose5JWKParameters {
  crv?: string; d?: string; dp?: string; dq?: string; e?: string; k?: string; n?: string;
  p?: string; q?: string; qi?: string; x?: string; y?: string;
}
/** jose 6: a type alias. */
type Jose6JWK = {
  kty?: "RSA" | "EC" | "OKP" | "oct" | "AKP" | (string & {}); alg?: string; key_ops?: string[];
  ext?: boolean; use?: "sig" | "enc" | (string & {}); x5c?: string[]; x5t?: string;
  "x5t#S256"?: string; x5u?: string; kid?: string; crv?: string; e?: string; n?: string;
  x?: string; y?: string; d?: string; [propName: string]: unknown;
};
/** jose 4 and 5: what generateKeyPair() and importPKCS8() answer. */
interface JoseKeyLike { type: string }
`;

const JWKS = `import { createAuth } from "crossborder-callbacks";
${JOSE}
declare const k4: Jose4JWK;
declare const k5: Jose5JWK;
declare const k6: Jose6JWK;
const merchantGuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
for (const key of [k4, k5, k6]) {
  await createAuth({ jwt: { environment: "test", keys: { test: key } }, merchantGuid });
  await createAuth({ jwt: { environment: "test", keys: { test: [{ key, kid: "k2" }, key] } }, merchantGuid });
}
await createAuth({ jwt: { environment: "test", keys: { test: k5, production: [k4, k6] } }, merchantGuid });
// A JWK written out keeps compiling, with its RSA, EC and X.509 members.
await createAuth({
  jwt: {
    environment: "test",
    keys: {
      test: { kty: "RSA", n: "AQAB", e: "AQAB", kid: "k1", alg: "RS256", use: "sig", x5c: ["MII"] },
      production: { kty: "EC", crv: "P-256", x: "x", y: "y", key_ops: ["verify"], ext: true },
    },
  },
  merchantGuid,
});
export {};
`;

const KEYS = `import { sendCallback, signServiceToken } from "crossborder-callbacks/testing";
import { generateKeyPairSync } from "node:crypto";
${JOSE}
declare const privateKey: JoseKeyLike;
const merchantGuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
await signServiceToken(privateKey);
await sendCallback("http://127.0.0.1/cb", "SendOrderToMerchant", { privateKey, merchantGuid });
await signServiceToken(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey);
// @ts-expect-error a number is no key
await signServiceToken(42);
// @ts-expect-error nor is an object without a type
await signServiceToken({ kty: "RSA" });
export {};
`;

let project: Project;
beforeAll(() => {
  project = createProject("jose-keys");
}, 60_000);
afterAll(() => project?.remove());

it("the JWKs that jose 4, 5 and 6 export are public keys createAuth takes", () => {
  const diagnostics = project.diagnostics({ "jwks.ts": JWKS }).get("jwks.ts") ?? [];
  expect(diagnostics.map(describeDiagnostic)).toStrictEqual([]);
}, 120_000);

it("the private keys of jose 4 and 5 (KeyLike) sign in signServiceToken and sendCallback", () => {
  const diagnostics = project.diagnostics({ "keys.ts": KEYS }).get("keys.ts") ?? [];
  expect(diagnostics.map(describeDiagnostic)).toStrictEqual([]);
}, 120_000);
