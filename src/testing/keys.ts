import { exportPKCS8, exportSPKI, generateKeyPair } from "jose";
import { assertKitGlobals } from "./environment.js";

/** A freshly generated RSA key pair, both halves as PEM texts. */
export interface TestKeys {
  /** SPKI PEM (`-----BEGIN PUBLIC KEY-----`): configure it as the service's key, e.g. `keys.test`. */
  readonly publicKey: string;
  /** PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`): sign tokens with `signServiceToken`. */
  readonly privateKey: string;
}

/**
 * Generates an RSA-2048 key pair standing in for the operator's: give the public key to
 * `createAuth` (`jwt.keys.test`) and sign calls with the private key (`signServiceToken`,
 * `sendCallback`). Each call makes a new pair, so generate once per test file (`beforeAll`).
 *
 * @example
 * const keys = await createTestKeys();
 * const auth = createAuth({ jwt: { environment: "test", keys: { test: keys.publicKey } } });
 */
export async function createTestKeys(): Promise<TestKeys> {
  assertKitGlobals("createTestKeys", ["crypto.subtle", "TextEncoder"]);
  const { publicKey, privateKey } = await generateKeyPair("RS256", {
    modulusLength: 2048,
    extractable: true,
  });
  return {
    publicKey: await exportSPKI(publicKey),
    privateKey: await exportPKCS8(privateKey),
  };
}
