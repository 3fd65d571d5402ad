import { base64url, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { expect } from "vitest";
import type { Authenticator, AuthRequest, AuthResult, HeaderReader } from "../../src/auth/index.js";
import { AuthenticationError } from "../../src/core/errors.js";
import type { CallbackName } from "../../src/core/types.js";

const encoder = new TextEncoder();

/** A key pair with its public PEM, as the operator would publish it. */
export interface TestKey {
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly pem: string;
}

export async function rsaKey(): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", {
    modulusLength: 2048,
    extractable: true,
  });
  return { privateKey, publicKey, pem: await exportSPKI(publicKey) };
}

/** jose refuses to generate RSA under 2048 bits; Web Crypto does not, and the key imports fine. */
export async function weakRsaKey(): Promise<TestKey> {
  const { privateKey, publicKey } = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 1024,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  return { privateKey, publicKey, pem: await exportSPKI(publicKey) };
}

export async function ecKey(): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { privateKey, publicKey, pem: await exportSPKI(publicKey) };
}

export const now = (): number => Math.floor(Date.now() / 1000);

/** A normal token signed by jose: fresh `iat`, `exp` in five minutes unless overridden. */
export async function signToken(
  key: CryptoKey,
  claims: JWTPayload = {},
  header: { alg?: string; kid?: string; [name: string]: unknown } = {},
): Promise<string> {
  const t = now();
  return new SignJWT({ sub: "service", iat: t, exp: t + 300, ...claims })
    .setProtectedHeader({ alg: "RS256", ...header })
    .sign(key);
}

export function b64u(input: string | Uint8Array): string {
  return base64url.encode(typeof input === "string" ? encoder.encode(input) : input);
}

/** Signs any header and payload text by hand with Web Crypto, for tokens jose refuses to make. */
export async function signRaw(
  header: Record<string, unknown>,
  payload: Record<string, unknown> | string,
  privateKey: CryptoKey,
): Promise<string> {
  const input = `${b64u(JSON.stringify(header))}.${b64u(
    typeof payload === "string" ? payload : JSON.stringify(payload),
  )}`;
  const algorithm =
    privateKey.algorithm.name === "ECDSA"
      ? { name: "ECDSA", hash: "SHA-256" }
      : { name: privateKey.algorithm.name };
  const signature = await crypto.subtle.sign(algorithm, privateKey, encoder.encode(input));
  return `${input}.${b64u(new Uint8Array(signature))}`;
}

/** A token assembled from arbitrary parts, signature included. */
export function forge(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  signature: string | Uint8Array,
): string {
  const sig = typeof signature === "string" ? signature : b64u(signature);
  return `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(payload))}.${sig}`;
}

export function freshClaims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const t = now();
  return { sub: "service", iat: t, exp: t + 300, ...extra };
}

/** The fetch-like header view the engine builds, from a plain record. */
export function headersOf(record: Readonly<Record<string, string | undefined>> = {}): HeaderReader {
  const map = new Map<string, string>();
  for (const [name, value] of Object.entries(record)) {
    if (value !== undefined) map.set(name.toLowerCase(), value);
  }
  return { get: (name) => map.get(name.toLowerCase()) ?? null };
}

export interface RequestInit {
  readonly callback?: CallbackName;
  readonly method?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly remoteAddress?: string | undefined;
}

export function makeRequest(init: RequestInit = {}): AuthRequest {
  const callback = init.callback ?? "SendOrderToMerchant";
  return {
    callback,
    method: init.method ?? "POST",
    url: new URL(init.url ?? `https://merchant.example/crossborder/${callback}`),
    headers: headersOf(init.headers),
    remoteAddress: init.remoteAddress,
  };
}

export function bearer(token: string, init: Omit<RequestInit, "headers"> = {}): AuthRequest {
  return makeRequest({ ...init, headers: { Authorization: `Bearer ${token}` } });
}

/** Awaits a refusal and returns it; fails the test when it resolves or throws anything else. */
export async function refusal(
  attempt: Promise<unknown> | unknown,
  kind: "unauthorized" | "header_too_large" = "unauthorized",
): Promise<AuthenticationError> {
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await attempt };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) throw new Error("expected an AuthenticationError, but authentication passed");
  expect(outcome.error).toBeInstanceOf(AuthenticationError);
  const error = outcome.error as AuthenticationError;
  expect(error.kind).toBe(kind);
  return error;
}

export async function accepted(auth: Authenticator, request: AuthRequest): Promise<AuthResult> {
  return await auth.authenticateRequest(request);
}

// --- A self-signed X.509 certificate, built with Web Crypto and a few DER helpers. ---

function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let n = length; n > 0; n >>= 8) bytes.unshift(n & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

function tlv(tag: number, ...content: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const total = content.reduce((sum, part) => sum + part.length, 0);
  const head = [tag, ...derLength(total)];
  const out = new Uint8Array(head.length + total);
  out.set(head, 0);
  let offset = head.length;
  for (const part of content) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const bytes = (...values: number[]) => new Uint8Array(values);
const SHA256_WITH_RSA = tlv(
  0x30,
  tlv(0x06, bytes(0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b)),
  bytes(0x05, 0x00),
);

function name(commonName: string): Uint8Array {
  const cn = tlv(0x30, tlv(0x06, bytes(0x55, 0x04, 0x03)), tlv(0x0c, encoder.encode(commonName)));
  return tlv(0x30, tlv(0x31, cn));
}

/** A self-signed RSA certificate (PEM) for `key`, as an operator might publish its key. */
export async function selfSignedCertificate(key: TestKey): Promise<string> {
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", key.publicKey));
  const validity = tlv(
    0x30,
    tlv(0x17, encoder.encode("250101000000Z")),
    tlv(0x17, encoder.encode("350101000000Z")),
  );
  const tbs = tlv(
    0x30,
    tlv(0xa0, tlv(0x02, bytes(0x02))),
    tlv(0x02, bytes(0x01)),
    SHA256_WITH_RSA,
    name("crossborder-callbacks test"),
    validity,
    name("crossborder-callbacks test"),
    spki,
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, key.privateKey, tbs),
  );
  const certificate = tlv(0x30, tbs, SHA256_WITH_RSA, tlv(0x03, bytes(0x00), signature));
  let binary = "";
  for (const byte of certificate) binary += String.fromCharCode(byte);
  const body =
    btoa(binary)
      .match(/.{1,64}/g)
      ?.join("\n") ?? "";
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}
