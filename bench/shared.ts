/**
 * What every benchmark shares: where the built package is, the key pair and token, the
 * 30-product order and cart, and the merchant functions. The library is always loaded from the
 * build in bench/.tmp/pkg/dist (the same tsup configuration as `npm run build`), never from src.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type * as Lib from "crossborder-callbacks";
import type * as Fetch from "crossborder-callbacks/fetch";
import { exportSPKI, generateKeyPair, jwtVerify, SignJWT } from "jose";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const TMP = join(ROOT, "bench", ".tmp");
export const PKG_DIR = join(TMP, "pkg");
export const PKG_DIST = join(PKG_DIR, "dist");

export type LibModule = typeof Lib;
export type FetchModule = typeof Fetch;

/** File URL of one built entry (`index`, `fetch`, `express`, `koa`, `node`). */
export function distUrl(entry: string): string {
  return pathToFileURL(join(PKG_DIST, `${entry}.js`)).href;
}

export async function loadLib(): Promise<LibModule> {
  return (await import(distUrl("index"))) as LibModule;
}

export const PRODUCTS = 30;

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(ROOT, "test", "fixtures", `${name}.json`), "utf8"));
}

/**
 * The SendOrderToMerchant fixture with `count` products: the fixture's products repeated, each
 * copy with its own Sku and cart item ids (parent/child links kept within each copy). The
 * form-encoded fields of the fixture (addresses, e-mail, …) stay encoded.
 */
export function orderWithProducts(count = PRODUCTS): Record<string, unknown> {
  const order = fixture("SendOrderToMerchant");
  const templates = order.Products as Record<string, unknown>[];
  const shift = (id: unknown, group: number) =>
    typeof id === "string" ? String(Number(id) + group * templates.length) : id;
  order.Products = Array.from({ length: count }, (_, i) => {
    const group = Math.floor(i / templates.length);
    const product = structuredClone(templates[i % templates.length]) as Record<string, unknown>;
    product.Sku = `${String(product.Sku)}-${group + 1}`;
    product.CartItemId = shift(product.CartItemId, group);
    product.ParentCartItemId = shift(product.ParentCartItemId, group);
    product.ChildCartItemId = shift(product.ChildCartItemId, group);
    return product;
  });
  return order;
}

/** The GetCheckoutCartInfo fixture (a merchant's cart) with `count` products. */
export function cartWithProducts(count = PRODUCTS): Lib.CheckoutCartInfo {
  const cart = fixture("GetCheckoutCartInfo");
  const templates = cart.productsList as Record<string, unknown>[];
  cart.productsList = Array.from({ length: count }, (_, i) => {
    const group = Math.floor(i / templates.length);
    const product = structuredClone(templates[i % templates.length]) as Record<string, unknown>;
    product.ProductCode = `${String(product.ProductCode)}-${group + 1}`;
    product.CartItemId = String(i + 1);
    if (typeof product.ParentCartItemId === "string") {
      product.ParentCartItemId = String(Number(product.ParentCartItemId) + group * 3);
    }
    return product;
  });
  return cart as unknown as Lib.CheckoutCartInfo;
}

export function updateOrderStatusBody(): Record<string, unknown> {
  return fixture("UpdateOrderStatus");
}

/** What the order callbacks' merchant function returns, and the floor writes. */
export const ORDER_RESULT = { InternalOrderId: "100004217", OrderId: "100004217" } as const;
/** The ResponseInfo body the library writes for ORDER_RESULT (the floor stringifies this). */
export const ORDER_RESPONSE = { Success: true, ...ORDER_RESULT } as const;

/** The floor's verification: RS256 only, nothing else checked (what a hand-written receiver does). */
export const FLOOR_VERIFY_OPTIONS = { algorithms: ["RS256"] };
const floorDecoder = new TextDecoder();

/**
 * The floor for a POST, the hand-written receiver every in-process benchmark compares with:
 * `jwtVerify` with the key imported beforehand, JSON.parse of the body, JSON.stringify of the answer.
 */
export function floorPost(token: string, key: CryptoKey, bytes: Uint8Array): () => Promise<string> {
  return async () => {
    await jwtVerify(token, key, FLOOR_VERIFY_OPTIONS);
    const payload: unknown = JSON.parse(floorDecoder.decode(bytes));
    if (typeof payload !== "object" || payload === null) throw new Error("not an object");
    return JSON.stringify(ORDER_RESPONSE);
  };
}

/** The HTTP benchmark's frameworks, and its two routes on each server. */
export const FRAMEWORKS = ["express", "koa", "hono", "node"] as const;
export type Framework = (typeof FRAMEWORKS)[number];
export const LIB_PATH = "/crossborder/SendOrderToMerchant";
export const BARE_PATH = "/bare/SendOrderToMerchant";
/**
 * The node:http server's routes between the two (bench/http-split.ts): the floor verifying before
 * it reads the body; the floor with the library's `createAuth` instead of `jwtVerify`; the floor's
 * `jwtVerify`, then the library's handler without authentication, through the router and
 * `toNodeListener` or on the bytes the floor read.
 */
export const SPLIT_PATHS = {
  verifyFirst: "/split/verify-first",
  libraryAuth: "/split/library-auth",
  noAuth: "/split/no-auth/SendOrderToMerchant",
  handlerBytes: "/split/handler-bytes",
} as const;

export const CART_QUERY =
  "merchantCartToken=b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f&countryCode=US&currencyCode=USD";

export interface Secrets {
  readonly publicPem: string;
  readonly token: string;
}

/** A fresh RSA-2048 pair; the token is RS256 with iat/exp (1 hour), as the service signs it. */
export async function makeSecrets(): Promise<Secrets> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", {
    modulusLength: 2048,
    extractable: true,
  });
  const token = await new SignJWT({ sub: "bench" })
    .setProtectedHeader({ alg: "RS256", typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey);
  return { publicPem: await exportSPKI(publicKey), token };
}

/** Secrets handed to child processes through the environment. */
export function secretsFromEnv(): Secrets {
  const publicPem = process.env.BENCH_PUBLIC_PEM;
  const token = process.env.BENCH_TOKEN;
  if (!publicPem || !token) throw new Error("BENCH_PUBLIC_PEM / BENCH_TOKEN not set");
  return { publicPem, token };
}

export function secretsEnv(secrets: Secrets): Record<string, string> {
  return { BENCH_PUBLIC_PEM: secrets.publicPem, BENCH_TOKEN: secrets.token };
}

/** The authentication every benchmark configures: the documented JWT mode, RS256, test keys. */
export function authConfig(publicPem: string): Parameters<LibModule["createAuth"]>[0] {
  return { jwt: { environment: "test", keys: { test: publicPem } } };
}

/** Silences the library's failure log: a benchmark that fails is caught by its status check. */
export const quiet = { onError: () => undefined } as const;

export { median } from "./stats.js";

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function formatNs(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(0)} ns`;
}
