// How a GetCheckoutCartInfo call becomes the payload the merchant's function receives: the token
// under its documented name whatever the store calls it, the query flags as booleans, every
// parameter kept, and nothing refused that a store really sends.
import { describe, expect, it } from "vitest";
import type { ParsedBody } from "../../src/core/types.js";
import {
  type CallbackRequest,
  createGetCheckoutCartInfoHandler,
  type GetCheckoutCartInfoOptions,
  type GetCheckoutCartInfoRequest,
} from "../../src/index.js";
import { collector, json } from "./helpers.js";

async function received(
  request: Omit<CallbackRequest, "headers"> & { headers?: CallbackRequest["headers"] },
  options: Partial<GetCheckoutCartInfoOptions> = {},
): Promise<{ status: number; payload: GetCheckoutCartInfoRequest | undefined }> {
  let payload: GetCheckoutCartInfoRequest | undefined;
  const { failures, onError } = collector();
  const handler = createGetCheckoutCartInfoHandler(
    (query) => {
      payload = structuredClone(query);
      return { productsList: [] };
    },
    { auth: false, onError, ...options },
  );
  const response = await handler.handle({ headers: {}, ...request });
  if (response.status !== 200) expect(failures.length, JSON.stringify(json(response))).toBe(1);
  return { status: response.status, payload };
}

const get = (query: string) => ({ method: "GET", url: `/GetCheckoutCartInfo?${query}` });

describe("GetCheckoutCartInfo parameters", () => {
  it("fills merchantCartToken from cartToken, keeping cartToken as sent", async () => {
    const { payload } = await received(get("cartToken=abc&countryCode=DE"));
    expect(payload).toStrictEqual({
      cartToken: "abc",
      merchantCartToken: "abc",
      countryCode: "DE",
    });
  });

  it("prefers merchantCartToken when both are sent", async () => {
    const { payload } = await received(get("cartToken=other&merchantCartToken=abc"));
    expect(payload?.merchantCartToken).toBe("abc");
    // One token on the payload: the other name carries the one chosen (and checked), never a
    // second token a store reading `cartToken` would act on unchecked.
    expect(payload?.cartToken).toBe("abc");
  });

  it("reads the documented names in another letter case", async () => {
    const { payload } = await received(
      get("MerchantCartToken=abc&CountryCode=GER&CURRENCYCODE=EUR"),
    );
    expect(payload).toMatchObject({
      merchantCartToken: "abc",
      countryCode: "GER",
      currencyCode: "EUR",
    });
  });

  it("a configured name wins, and then cartToken is not read", async () => {
    const { payload } = await received(get("CartId=58211&cartToken=abc&country=FR"), {
      parameterNames: { merchantCartToken: "CartId", countryCode: "country" },
    });
    expect(payload).toMatchObject({
      merchantCartToken: "58211",
      countryCode: "FR",
      // Not read for the token; it carries the chosen one, so no unchecked token stays.
      cartToken: "58211",
    });
  });

  it.each([
    ["1", true],
    ["0", false],
    ["true", true],
    ["FALSE", false],
    [" True ", true],
  ])("types the flag text %j as %s", async (text, flag) => {
    const query = `merchantCartToken=a&IsStockValidation=${encodeURIComponent(text)}&isFixedPriceSupported=${encodeURIComponent(text)}`;
    const { payload } = await received(get(query));
    expect(payload?.IsStockValidation).toBe(flag);
    expect(payload?.isFixedPriceSupported).toBe(flag);
  });

  it("an unreadable flag is left out, never a 400 (the query keeps it)", async () => {
    let url: URL | undefined;
    const handler = createGetCheckoutCartInfoHandler(
      (query, context) => {
        url = context.request.url;
        expect(Object.hasOwn(query, "IsStockValidation")).toBe(false);
        return { productsList: [] };
      },
      { auth: false },
    );
    const response = await handler.handle({
      method: "GET",
      url: "/x?merchantCartToken=a&IsStockValidation=yes",
      headers: {},
    });
    expect(response.status).toBe(200);
    expect(url?.searchParams.get("IsStockValidation")).toBe("yes");
  });

  it("reads a flag in another letter case under its documented name", async () => {
    const { payload } = await received(get("merchantCartToken=a&isstockvalidation=1"));
    expect(payload?.IsStockValidation).toBe(true);
  });

  it("POST with a JSON body: MerchantGUID kept, JSON booleans and 1/0 flags, nulls accepted", async () => {
    const { status, payload } = await received({
      method: "POST",
      url: "/GetCheckoutCartInfo",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        MerchantGUID: "guid-1",
        cartToken: "abc",
        countryCode: "GER",
        currencyCode: null,
        IsStockValidation: 1,
        isFixedPriceSupported: false,
      }),
    });
    expect(status).toBe(200);
    expect(payload).toStrictEqual({
      MerchantGUID: "guid-1",
      cartToken: "abc",
      merchantCartToken: "abc",
      countryCode: "GER",
      currencyCode: null,
      IsStockValidation: true,
      isFixedPriceSupported: false,
    });
  });

  it("a repeated parameter keeps its first value, in the query and in a form body alike", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const text = "merchantCartToken=first&merchantCartToken=second&countryCode=DE&countryCode=FR";
    const fromQuery = await received(get(text));
    const fromForm = await received({
      method: "POST",
      url: "/GetCheckoutCartInfo",
      headers: form,
      body: text,
    });
    const expected = { merchantCartToken: "first", countryCode: "DE" };
    expect(fromQuery.payload).toStrictEqual(expected);
    expect(fromForm.payload).toStrictEqual(expected);
    // What a framework's form parser leaves for it (express.urlencoded, either `extended`): a list.
    const fromParser = await received({
      method: "POST",
      url: "/GetCheckoutCartInfo",
      headers: form,
      body: { merchantCartToken: ["first", "second"], countryCode: ["DE", "FR"] } as ParsedBody,
    });
    expect(fromParser).toStrictEqual({ status: 200, payload: expected });
  });

  it("an empty merchantCartToken does not hide a cartToken, in the query or a form body", async () => {
    const text = "merchantCartToken=&cartToken=abc";
    const fromQuery = await received(get(text));
    const fromForm = await received({
      method: "POST",
      url: "/GetCheckoutCartInfo",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: text,
    });
    for (const { status, payload } of [fromQuery, fromForm]) {
      expect(status).toBe(200);
      expect(payload).toStrictEqual({ merchantCartToken: "abc", cartToken: "abc" });
    }
  });

  it("an empty configured name does not hide the token sent under the documented one", async () => {
    const { payload } = await received(get("CartId=&merchantCartToken=58211"), {
      parameterNames: { merchantCartToken: "CartId" },
    });
    // Every name of the parameter carries the chosen token (one token on the payload).
    expect(payload).toStrictEqual({ CartId: "58211", merchantCartToken: "58211" });
  });

  it("keeps an empty token as sent when no name carries a value", async () => {
    const { status, payload } = await received(get("merchantCartToken=&cartToken="));
    expect(status).toBe(200);
    expect(payload).toStrictEqual({ merchantCartToken: "", cartToken: "" });
  });

  it("a parameter of the wrong kind in a JSON body is still a 400", async () => {
    const { status } = await received({
      method: "POST",
      url: "/GetCheckoutCartInfo",
      body: JSON.stringify({ merchantCartToken: { token: "abc" } }),
    });
    expect(status).toBe(400);
  });
});

// Review ENC-4: a query value whose `%xx` does not decode (not UTF-8, cut short) was U+FFFD, so two
// tokens became one; it is kept raw, as sent, and listed in context.decoding.malformed, as the
// body's values are, over node:http and fetch alike, and the cart token's `verify` sees it so.
// Review SECOND-ENC-3: a POST form body was still read with URLSearchParams: `cart%ff1` and
// `cart%fe1` both became "cart\uFFFD1", and nothing was reported. It is now read as the query is.
describe("GetCheckoutCartInfo form body values that do not decode", () => {
  it("are kept raw and reported, as the query's; well-formed ones decode as before", async () => {
    const { createGetCheckoutCartInfoHandler } = await import("../../src/index.js");
    const seen: unknown[] = [];
    const handler = createGetCheckoutCartInfoHandler(
      (p, context) => {
        seen.push([p.merchantCartToken, p.countryCode, [...context.decoding.malformed]]);
        return { productsList: [] };
      },
      { auth: false, onError: () => undefined },
    );
    const form = (body: string, url = "/callback") =>
      handler.handle({
        method: "POST",
        url,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new TextEncoder().encode(body),
      } as never);
    for (const body of [
      "merchantCartToken=cart%ff1&countryCode=D%45",
      "merchantCartToken=cart%fe1",
      "merchant%43artToken=cart%E0%A4%A&merchantCartToken=2",
      "merchantCartToken=a+b%2B%C3%A9&countryCode=%zz",
      "merchantCartToken=a+b&countryCode=DE",
    ]) {
      expect((await form(body)).status, body).toBe(200);
    }
    // The query's and the body's kept-raw names are both reported.
    expect((await form("countryCode=%ff", "/callback?merchantCartToken=t%zz")).status).toBe(200);
    expect(seen).toEqual([
      ["cart%ff1", "DE", ["merchantCartToken"]],
      ["cart%fe1", undefined, ["merchantCartToken"]],
      ["cart%E0%A4%A", undefined, ["merchantCartToken"]],
      ["a b+é", "%zz", ["countryCode"]],
      ["a b", "DE", []],
      ["t%zz", "%ff", ["countryCode", "merchantCartToken"]],
    ]);
  });
});

describe("GetCheckoutCartInfo query values that do not decode", () => {
  it("are kept raw and reported, over HTTP; well-formed ones decode as before", async () => {
    const { signedServer } = await import("../support/signed-server.js");
    const seen: unknown[] = [];
    const s = await signedServer({
      GetCheckoutCartInfo: (p, context) => {
        seen.push([p.merchantCartToken, p.countryCode, [...context.decoding.malformed]]);
        return { productsList: [] };
      },
    });
    try {
      const get = { method: "GET" };
      await s.node("GetCheckoutCartInfo", undefined, {
        ...get,
        query: "?merchantCartToken=cart%ff1&countryCode=D%45",
      });
      await s.node("GetCheckoutCartInfo", undefined, {
        ...get,
        query: "?merchantCartToken=cart%fe1",
      });
      await s.viaFetch("GetCheckoutCartInfo", undefined, {
        ...get,
        query: "?merchant%43artToken=cart%E0%A4%A&x=1&merchantCartToken=2",
      });
      await s.viaFetch("GetCheckoutCartInfo", undefined, {
        ...get,
        query: "?merchantCartToken=a+b%2B%C3%A9&countryCode=%zz",
      });
      await s.node("GetCheckoutCartInfo", undefined, {
        ...get,
        query: "?merchantCartToken=a+b&countryCode=DE",
      });
      expect(seen).toEqual([
        ["cart%ff1", "DE", ["merchantCartToken"]],
        ["cart%fe1", undefined, ["merchantCartToken"]],
        ["cart%E0%A4%A", undefined, ["merchantCartToken"]],
        ["a b+é", "%zz", ["countryCode"]],
        ["a b", "DE", []],
      ]);
    } finally {
      s.close();
    }
  });

  it("reach the cart token's verify raw", async () => {
    const { createAuth } = await import("../../src/index.js");
    const verified: string[] = [];
    const auth = await createAuth({
      cartToken: {
        verify: (token) => {
          verified.push(token);
          return true;
        },
      },
    });
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), { auth });
    const answer = await handler.handle({ ...get("merchantCartToken=cart%ff1"), headers: {} });
    expect(answer.status).toBe(200);
    expect(verified).toEqual(["cart%ff1"]);
  });
});
