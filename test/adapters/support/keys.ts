import { readFileSync } from "node:fs";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";

/** The service's key pair, and a stranger's key that the merchant does not trust. */
export interface ServiceKeys {
  readonly publicKeyPem: string;
  sign(): Promise<string>;
  signWithStrangerKey(): Promise<string>;
}

async function sign(privateKey: CryptoKey): Promise<string> {
  return new SignJWT({ sub: "crossborder-service" })
    .setProtectedHeader({ alg: "RS256" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey);
}

export async function createServiceKeys(): Promise<ServiceKeys> {
  const [service, stranger] = await Promise.all([
    generateKeyPair("RS256", { extractable: true }),
    generateKeyPair("RS256", { extractable: true }),
  ]);
  const publicKeyPem = await exportSPKI(service.publicKey);
  return {
    publicKeyPem,
    sign: () => sign(service.privateKey),
    signWithStrangerKey: () => sign(stranger.privateKey),
  };
}

export function fixture(name: string): string {
  return readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), "utf8");
}
