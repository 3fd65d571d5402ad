// jwt.bodyDigest on GetCheckoutCartInfo, through a real handler: a captured token and its body
// replayed with a new query, or as a GET, must not hand the merchant parameters the token never
// bound.
import { base64url } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuthConfig, createAuth, createGetCheckoutCartInfoHandler } from "../../src/index.js";
import { collector } from "../core/helpers.js";
import { rsaKey, signToken, type TestKey } from "./helpers.js";

let key: TestKey;
beforeAll(async () => {
  key = await rsaKey();
});

const jwt = (extra: Record<string, unknown> = {}) =>
  ({ environment: "test", keys: { test: key.pem }, ...extra }) as AuthConfig["jwt"];

async function digestOf(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  return base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

interface Seen {
  status: number;
  payload: Record<string, unknown> | undefined;
  reasons: string[];
}

async function cartHandler(config: AuthConfig) {
  const auth = await createAuth(config);
  return async (request: {
    method: string;
    url: string;
    token: string;
    body?: string;
  }): Promise<Seen> => {
    let payload: Record<string, unknown> | undefined;
    const { failures, onError } = collector();
    const handler = createGetCheckoutCartInfoHandler(
      (query) => {
        payload = { ...query };
        return { productsList: [] };
      },
      { auth, onError },
    );
    const headers: Record<string, string> = { authorization: `Bearer ${request.token}` };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    const response = await handler.handle({
      method: request.method,
      url: request.url,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    return { status: response.status, payload, reasons: failures.map((f) => f.reason) };
  };
}

describe("jwt.bodyDigest on GetCheckoutCartInfo", () => {
  const signed = JSON.stringify({
    MerchantGUID: "g",
    merchantCartToken: "mine",
    countryCode: "GER",
  });

  it("the signed body's parameters win over a query added to a replayed token", async () => {
    const send = await cartHandler({ jwt: jwt({ bodyDigest: { claim: "bd" } }) });
    const token = await signToken(key.privateKey, { bd: await digestOf(signed) });
    const genuine = await send({ method: "POST", url: "/cart", token, body: signed });
    expect(genuine.status).toBe(200);
    expect(genuine.payload?.merchantCartToken).toBe("mine");
    for (const query of [
      "merchantCartToken=victim&countryCode=FR",
      "MERCHANTCARTTOKEN=victim&cartToken=victim&CountryCode=FR",
    ]) {
      const replay = await send({ method: "POST", url: `/cart?${query}`, token, body: signed });
      expect(replay.status, query).toBe(200);
      expect(replay.payload?.merchantCartToken, query).toBe("mine");
      expect(replay.payload?.countryCode, query).toBe("GER");
      // No other name of a parameter keeps the query's value (a store reading cartToken).
      expect(JSON.stringify(replay.payload), query).not.toMatch(/victim|"FR"/);
    }
  });

  it("a body's token under another name, or null, still beats the query's", async () => {
    const send = await cartHandler({ jwt: jwt({ bodyDigest: { claim: "bd" } }) });
    for (const [body, expected] of [
      [JSON.stringify({ cartToken: "mine" }), "mine"],
      [JSON.stringify({ MerchantCartToken: "mine" }), "mine"],
      [JSON.stringify({ merchantCartToken: null }), null],
    ] as const) {
      const token = await signToken(key.privateKey, { bd: await digestOf(body) });
      const replay = await send({
        method: "POST",
        url: "/cart?merchantCartToken=victim&cartToken=victim",
        token,
        body,
      });
      expect(replay.status, body).toBe(200);
      expect(replay.payload?.merchantCartToken, body).toBe(expected);
    }
  });

  it("refuses a token bound to a body replayed as a GET", async () => {
    const send = await cartHandler({ jwt: jwt({ bodyDigest: { claim: "bd" } }) });
    const token = await signToken(key.privateKey, { bd: await digestOf(signed) });
    const replay = await send({ method: "GET", url: "/cart?merchantCartToken=victim", token });
    expect(replay.status).toBe(401);
    expect(replay.payload).toBeUndefined();
    expect(replay.reasons.join(" ")).not.toContain("victim");
  });

  it("still serves a GET whose token carries no digest claim, or the empty body's", async () => {
    const send = await cartHandler({ jwt: jwt({ bodyDigest: { claim: "bd" } }) });
    for (const claims of [{}, { bd: await digestOf("") }]) {
      const token = await signToken(key.privateKey, claims);
      const get = await send({ method: "GET", url: "/cart?cartToken=abc", token });
      expect(get.status, JSON.stringify(claims)).toBe(200);
      expect(get.payload?.merchantCartToken).toBe("abc");
    }
    const bad = await signToken(key.privateKey, { bd: 42 });
    expect((await send({ method: "GET", url: "/cart?cartToken=abc", token: bad })).status).toBe(
      401,
    );
  });

  it("without a body digest the query still comes first (README)", async () => {
    const send = await cartHandler({ jwt: jwt() });
    const token = await signToken(key.privateKey);
    const post = await send({
      method: "POST",
      url: "/cart?merchantCartToken=q",
      token,
      body: signed,
    });
    expect(post.status).toBe(200);
    expect(post.payload?.merchantCartToken).toBe("q");
  });
});
