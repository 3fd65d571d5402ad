import { base64url } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuthConfig, type AuthRequest, createAuth } from "../../src/auth/index.js";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { bearer, makeRequest, refusal, rsaKey, signToken, type TestKey } from "./helpers.js";

const GUID = "6A1B2C3D-0000-4000-8000-000000000001";
let key: TestKey;

beforeAll(async () => {
  key = await rsaKey();
});

const jwt = (extra: Record<string, unknown> = {}) =>
  ({ environment: "test", keys: { test: key.pem }, ...extra }) as AuthConfig["jwt"];

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

describe("security.md — Other modes: merchant GUID", () => {
  it("31. rejects a MerchantGUID that differs from the configured one (compare is case-insensitive)", async () => {
    const auth = await createAuth({ merchantGuid: [GUID, "other-guid"], allowWeakAuth: true });
    const request = makeRequest({ callback: "UpdateOrderStatus" });
    const result = await auth.authenticateRequest(request);
    const check = (payload: unknown) =>
      auth.authenticatePayload?.(result, payload, undefined, request);
    const passed = { methods: ["merchantGuid"] };

    const differs = await refusal(
      check({ MerchantGUID: "6A1B2C3D-0000-4000-8000-000000000002", OrderId: "1" }),
    );
    expect(differs.message).toBe("MerchantGUID does not match");
    await expect(check({ MerchantGUID: GUID.toLowerCase() })).resolves.toEqual(passed);
    await expect(check({ MerchantGUID: `  ${GUID}\n` })).resolves.toEqual(passed);
    await expect(check({ MerchantGUID: "OTHER-GUID" })).resolves.toEqual(passed);
    expect(result.methods).toEqual([]);

    const missing = await refusal(check({ OrderId: "1" }));
    expect(missing.message).toBe("MerchantGUID missing from the payload");
    await refusal(check(undefined));
    await refusal(check([{ MerchantGUID: GUID }]));
    await refusal(check({ MerchantGUID: 42 }));
    await refusal(check({ MerchantGUID: "" }));
    // Any spelling of the key counts, and every occurrence must match.
    await expect(check({ merchantGuid: GUID })).resolves.toEqual(passed);
    await refusal(check({ MerchantGUID: GUID, merchantguid: "attacker" }));
  });

  it("refuses a null or blank duplicate GUID key beside the right one where the GUID is required", async () => {
    const auth = await createAuth({ merchantGuid: GUID, allowWeakAuth: true });
    const request = makeRequest({ callback: "UpdateOrderStatus" });
    const result = await auth.authenticateRequest(request);
    for (const blank of [null, "", "  "]) {
      const error = await refusal(
        auth.authenticatePayload?.(
          result,
          { MerchantGUID: GUID, merchantGuid: blank },
          undefined,
          request,
        ),
      );
      expect(error.message, JSON.stringify(blank)).toBe("MerchantGUID does not match");
    }
    const alone = await refusal(
      auth.authenticatePayload?.(result, { MerchantGUID: null }, undefined, request),
    );
    expect(alone.message).toBe("MerchantGUID does not match");
  });

  it("skips the GUID on GetCheckoutCartInfo by GET unless a payload carries one", async () => {
    // Other callbacks have no mode (refused at request time), so nothing here is weak.
    const auth = await createAuth({
      cartToken: { verify: () => true },
      callbacks: { GetCheckoutCartInfo: { merchantGuid: GUID } },
    });
    const get = makeRequest({
      callback: "GetCheckoutCartInfo",
      method: "GET",
      url: "https://m.example/cart?merchantCartToken=t",
    });
    const result = await auth.authenticateRequest(get);
    expect(result.methods).toEqual([]);
    const cart = { merchantCartToken: "t" };
    await expect(auth.authenticatePayload?.(result, cart, undefined, get)).resolves.toEqual({
      methods: ["cartToken"],
    });
    await refusal(
      auth.authenticatePayload?.(result, { ...cart, MerchantGUID: "nope" }, undefined, get),
    );
    // By POST the GUID is required.
    const post = makeRequest({
      callback: "GetCheckoutCartInfo",
      method: "POST",
      url: "https://m.example/cart?merchantCartToken=t",
    });
    await refusal(auth.authenticatePayload?.(result, cart, undefined, post));
  });
  it("does not let merchantGuid alone pass a bodiless GET (fail closed)", async () => {
    const auth = await createAuth({ merchantGuid: GUID, allowWeakAuth: true });
    const get = makeRequest({ callback: "GetCheckoutCartInfo", method: "GET" });
    const error = await refusal(auth.authenticateRequest(get));
    expect(error.message).toMatch(/request without a body carries no MerchantGUID/);
    // By POST the request stage passes and the payload decides.
    const post = makeRequest({ callback: "GetCheckoutCartInfo", method: "POST" });
    const result = await auth.authenticateRequest(post);
    expect(result.methods).toEqual([]);
    await refusal(auth.authenticatePayload?.(result, {}, undefined, post));
    const full = await auth.authenticatePayload?.(result, { MerchantGUID: GUID }, undefined, post);
    expect(full?.methods).toEqual(["merchantGuid"]);
  });
});

describe("merchant GUID on the callbacks whose documented payload carries none", () => {
  // 000 §2.4's refund details (OrderId, MerchantOrderId, …, Refunds, RefundableAmount) have no
  // MerchantGUID, and SendAdditionalRequiredDocumentsToMerchant's payload is not documented.
  const refund = {
    OrderId: "GE1184040US",
    MerchantOrderId: "100004290",
    Refunds: [{ RefundID: "RF-30112", TotalRefundAmount: "170.1000" }],
    RefundableAmount: { CurrencyCode: "EUR", TotalCreditAmount: 0 },
  };
  const documents = {
    OrderId: "GE1184040US",
    Documents: [{ DocumentTypeCode: "CommercialInvoice" }],
  };

  async function router() {
    const failures: CallbackFailure[] = [];
    const auth = await createAuth({ jwt: jwt(), merchantGuid: GUID });
    const handlers = {
      NotifyOrderRefund: () => undefined,
      SendAdditionalRequiredDocumentsToMerchant: () => undefined,
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
    };
    const routed = createCallbackRouter({ auth, handlers, onError: (f) => failures.push(f) });
    const send = async (callback: string, body: unknown) =>
      routed.handle({
        method: "POST",
        url: `/${callback}`,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${await signToken(key.privateKey)}`,
        },
        body: JSON.stringify(body),
      });
    return { send, failures };
  }

  it("NotifyOrderRefund and SendAdditionalRequiredDocumentsToMerchant: 200 without MerchantGUID, 401 with a wrong one", async () => {
    const { send, failures } = await router();
    const without = [
      (await send("NotifyOrderRefund", refund)).status,
      (await send("SendAdditionalRequiredDocumentsToMerchant", documents)).status,
    ];
    expect([without, failures.map((f) => f.reason)]).toEqual([[200, 200], []]);
    const wrong = "6A1B2C3D-0000-4000-8000-000000000002";
    const withWrong = [
      (await send("NotifyOrderRefund", { ...refund, MerchantGUID: wrong })).status,
      (
        await send("SendAdditionalRequiredDocumentsToMerchant", {
          ...documents,
          MerchantGUID: wrong,
        })
      ).status,
    ];
    expect(withWrong).toEqual([401, 401]);
    expect(failures.map((f) => f.reason)).toEqual([
      "MerchantGUID does not match",
      "MerchantGUID does not match",
    ]);
    const withRight = await send("NotifyOrderRefund", { ...refund, MerchantGUID: GUID });
    expect(withRight.status).toBe(200);
  });

  it("a MerchantGUID sent as null or blank there is one not sent (a serializer writes every key)", async () => {
    const { send, failures } = await router();
    const statuses = [
      (await send("NotifyOrderRefund", { ...refund, MerchantGUID: null })).status,
      (await send("NotifyOrderRefund", { ...refund, MerchantGUID: "" })).status,
      (await send("NotifyOrderRefund", { ...refund, merchantGuid: "  " })).status,
      (
        await send("SendAdditionalRequiredDocumentsToMerchant", {
          ...documents,
          MerchantGUID: null,
        })
      ).status,
    ];
    expect([statuses, failures.map((f) => f.reason)]).toEqual([[200, 200, 200, 200], []]);
    // Next to a wrong one it changes nothing; on SendOrderToMerchant a null GUID is still refused.
    const wrong = { ...refund, MerchantGUID: null, merchantguid: "wrong" };
    expect((await send("NotifyOrderRefund", wrong)).status).toBe(401);
    const order = { OrderId: "GE1", Products: [{ Sku: "A", Price: 1, Quantity: 1 }] };
    expect((await send("SendOrderToMerchant", { ...order, MerchantGUID: null })).status).toBe(401);
  });

  // Review spec D1: 000 §4.10 shows neither request nor answer of these four (only the gift-card
  // *validation* request, 000 §5.4, lists MerchantGUID), so requiring it would refuse calls the
  // service may make: a gift card redeemed or refunded wrongly, a shipping change lost.
  it.each([
    "RedeemGiftCard",
    "RefundGiftCard",
    "ValidateVoucher",
    "UpdateOrderShippingInfo",
  ] as const)(
    "%s (payload not shown, 000 §4.10): 200 without MerchantGUID, 401 with a wrong one",
    async (callback) => {
      const failures: CallbackFailure[] = [];
      const auth = await createAuth({ jwt: jwt(), merchantGuid: GUID });
      const routed = createCallbackRouter({
        auth,
        handlers: {
          [callback]: () => (callback === "ValidateVoucher" ? { IsValid: true } : undefined),
        },
        onError: (f) => failures.push(f),
      });
      const send = async (body: unknown) =>
        routed.handle({
          method: "POST",
          url: `/${callback}`,
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${await signToken(key.privateKey)}`,
          },
          body: JSON.stringify(body),
        });
      const payload = samplePayload(callback) as unknown as Record<string, unknown>;
      delete payload.MerchantGUID;
      expect([(await send(payload)).status, failures.map((f) => f.reason)]).toEqual([200, []]);
      const wrong = "6A1B2C3D-0000-4000-8000-000000000002";
      expect((await send({ ...payload, MerchantGUID: wrong })).status).toBe(401);
      expect(failures.map((f) => f.reason)).toEqual(["MerchantGUID does not match"]);
      expect((await send({ ...payload, MerchantGUID: GUID })).status).toBe(200);
    },
  );

  it("ValidateGiftCard, whose request 000 §5.4 lists with MerchantGUID, still requires it", async () => {
    const auth = await createAuth({ jwt: jwt(), merchantGuid: GUID });
    const failures: CallbackFailure[] = [];
    const routed = createCallbackRouter({
      auth,
      onError: (failure) => void failures.push(failure),
      handlers: { ValidateGiftCard: () => ({ IsValid: true }) },
    });
    const payload = samplePayload("ValidateGiftCard") as unknown as Record<string, unknown>;
    delete payload.MerchantGUID;
    const response = await routed.handle({
      method: "POST",
      url: "/ValidateGiftCard",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${await signToken(key.privateKey)}`,
      },
      body: JSON.stringify(payload),
    });
    expect(response.status).toBe(401);
    expect(failures.map((f) => f.reason)).toEqual(["MerchantGUID missing from the payload"]);
  });

  it("SendOrderToMerchant still requires it", async () => {
    const { send, failures } = await router();
    const order = { OrderId: "GE1", Products: [{ Sku: "A", Price: 1, Quantity: 1 }] };
    expect((await send("SendOrderToMerchant", order)).status).toBe(401);
    expect(failures.map((f) => f.reason)).toEqual(["MerchantGUID missing from the payload"]);
    expect((await send("SendOrderToMerchant", { ...order, MerchantGUID: GUID })).status).toBe(200);
  });

  it("with merchantGuid the only mode (allowWeakAuth), a payload without it is still refused", async () => {
    const auth = await createAuth({ merchantGuid: GUID, allowWeakAuth: true });
    for (const callback of [
      "NotifyOrderRefund",
      "SendAdditionalRequiredDocumentsToMerchant",
    ] as const) {
      const request = makeRequest({ callback });
      const result = await auth.authenticateRequest(request);
      const error = await refusal(auth.authenticatePayload?.(result, refund, undefined, request));
      expect(error.message).toBe("MerchantGUID missing from the payload");
      const passed = await auth.authenticatePayload?.(
        result,
        { ...refund, MerchantGUID: GUID },
        undefined,
        request,
      );
      expect(passed?.methods).toEqual(["merchantGuid"]);
    }
  });

  it("with a cart token that verifies nothing (allowWeakAuth), the GUID is still required: nothing proved the caller", async () => {
    const auth = await createAuth({
      merchantGuid: GUID,
      allowWeakAuth: true,
      callbacks: { NotifyOrderRefund: { cartToken: {} } },
    });
    const request = makeRequest({
      callback: "NotifyOrderRefund",
      url: "https://merchant.example/crossborder/NotifyOrderRefund?merchantCartToken=anything",
    });
    const result = await auth.authenticateRequest(request);
    expect(result.methods).toEqual(["cartToken"]);
    const error = await refusal(auth.authenticatePayload?.(result, refund, undefined, request));
    expect(error.message).toBe("MerchantGUID missing from the payload");
  });

  // Review OPT D9: an allow-list that admits everyone vouches for no caller either.
  it("with an ipAllowList that admits every address (allowWeakAuth), the GUID is still required", async () => {
    const auth = await createAuth({
      merchantGuid: GUID,
      ipAllowList: { allow: ["0.0.0.0/0", "::/0"] },
      allowWeakAuth: true,
    });
    const request = makeRequest({ callback: "NotifyOrderRefund", remoteAddress: "198.51.100.9" });
    const result = await auth.authenticateRequest(request);
    expect(result.methods).toEqual(["ip"]);
    const error = await refusal(auth.authenticatePayload?.(result, refund, undefined, request));
    expect(error.message).toBe("MerchantGUID missing from the payload");
    // An allow-list of your networks does vouch: no GUID needed where the payload has none
    // (nothing to add to the request's result: undefined, not a refusal).
    const narrow = await createAuth({
      merchantGuid: GUID,
      ipAllowList: { allow: ["198.51.100.0/24"] },
    });
    const vouched = await narrow.authenticateRequest(request);
    await expect(
      narrow.authenticatePayload?.(vouched, refund, undefined, request),
    ).resolves.toBeUndefined();
  });
});

describe("body digest binding", () => {
  const body = new TextEncoder().encode('{"OrderId":"123","MerchantGUID":"x"}');

  it("is off by default and then needs no raw body", async () => {
    const auth = await createAuth({ jwt: jwt() });
    expect(auth.needsRawBody("SendOrderToMerchant")).toBe(false);
  });

  it("accepts a token whose claim is the SHA-256 of the raw body, refuses any other body", async () => {
    const auth = await createAuth({ jwt: jwt({ bodyDigest: { claim: "bdh" } }) });
    expect(auth.needsRawBody("SendOrderToMerchant")).toBe(true);
    const token = await signToken(key.privateKey, { bdh: base64url.encode(await sha256(body)) });
    const request = bearer(token);
    const result = await auth.authenticateRequest(request);
    const full = await auth.authenticatePayload?.(result, {}, body, request);
    expect(full?.methods).toEqual(["jwt", "bodyDigest"]);
    expect(full?.claims).toEqual(result.claims);

    const tampered = body.slice();
    tampered[5] = (tampered[5] as number) ^ 1;
    const error = await refusal(auth.authenticatePayload?.(result, {}, tampered, request));
    expect(error.message).toBe("JWT body digest does not match the body");
  });

  it("refuses a claim of another length: empty, or a prefix of the right digest", async () => {
    const digest = await sha256(body);
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    for (const [encoding, full] of [
      ["base64url", base64url.encode(digest)],
      ["hex", hex],
    ] as const) {
      const auth = await createAuth({ jwt: jwt({ bodyDigest: { claim: "bdh", encoding } }) });
      for (const claimed of ["", full.slice(0, 1), full.slice(0, -1)]) {
        const request = bearer(await signToken(key.privateKey, { bdh: claimed }));
        const error = await refusal(
          (async () => {
            const result = await auth.authenticateRequest(request);
            return auth.authenticatePayload?.(result, {}, body, request);
          })(),
        );
        expect(error.message, `${encoding} ${JSON.stringify(claimed)}`).toBe(
          "JWT body digest does not match the body",
        );
      }
    }
  });

  it("refuses when the raw body is unavailable, saying so", async () => {
    const auth = await createAuth({ jwt: jwt({ bodyDigest: { claim: "bdh" } }) });
    const token = await signToken(key.privateKey, { bdh: base64url.encode(await sha256(body)) });
    const request = bearer(token);
    const result = await auth.authenticateRequest(request);
    const error = await refusal(
      auth.authenticatePayload?.(result, { OrderId: "123" }, undefined, request),
    );
    expect(error.message).toMatch(/raw body unavailable/);
  });

  it("refuses a token without the claim before the body is read", async () => {
    const auth = await createAuth({ jwt: jwt({ bodyDigest: { claim: "bdh" } }) });
    const error = await refusal(auth.authenticateRequest(bearer(await signToken(key.privateKey))));
    expect(error.message).toBe("JWT body digest claim missing or not a string");
  });

  it("supports hex (any case) and skips bodiless GET requests", async () => {
    const auth = await createAuth({ jwt: jwt({ bodyDigest: { claim: "bdh", encoding: "hex" } }) });
    const hex = Array.from(await sha256(body), (b) => b.toString(16).padStart(2, "0")).join("");
    const request = bearer(await signToken(key.privateKey, { bdh: hex.toUpperCase() }));
    const result = await auth.authenticateRequest(request);
    await expect(auth.authenticatePayload?.(result, {}, body, request)).resolves.toMatchObject({
      methods: ["jwt", "bodyDigest"],
    });
    await refusal(auth.authenticatePayload?.(result, {}, new Uint8Array(), request));

    const get: AuthRequest = bearer(await signToken(key.privateKey), {
      callback: "GetCheckoutCartInfo",
      method: "GET",
    });
    const getResult = await auth.authenticateRequest(get);
    await expect(
      auth.authenticatePayload?.(getResult, undefined, undefined, get),
    ).resolves.toBeUndefined();
    expect(getResult.methods).toEqual(["jwt"]);
  });
});

describe("cart token, URL secret and header secret", () => {
  const cartUrl = (query: string) => `https://m.example/crossborder/cart${query}`;
  const cart = (query: string, headers: Record<string, string> = {}) =>
    makeRequest({ callback: "GetCheckoutCartInfo", method: "GET", url: cartUrl(query), headers });

  it("requires the cart token on the payload, and lets the merchant verify it once", async () => {
    const seen: string[] = [];
    const auth = await createAuth({
      cartToken: {
        verify: (token) => {
          seen.push(token);
          if (token === "boom") throw new Error("db down: token=boom");
          return token === "good-cart";
        },
      },
    });
    // The token is read from the built payload (the merchant's value), not the URL.
    const request = cart("?merchantCartToken=bad");
    const result = await auth.authenticateRequest(request);
    expect(result).toEqual({ methods: [] });
    expect(seen).toEqual([]);
    const check = (payload: unknown) =>
      auth.authenticatePayload?.(result, payload, undefined, request);
    await expect(check({ merchantCartToken: "good-cart" })).resolves.toEqual({
      methods: ["cartToken"],
    });
    expect(seen).toEqual(["good-cart"]);
    const missing = "cart token (the payload's merchantCartToken) missing";
    expect((await refusal(check({}))).message).toBe(missing);
    expect((await refusal(check({ merchantCartToken: "" }))).message).toBe(missing);
    expect((await refusal(check({ merchantCartToken: null }))).message).toBe(missing);
    expect((await refusal(check({ cartToken: "good-cart" }))).message).toBe(missing);
    await refusal(check(undefined));
    expect((await refusal(check({ merchantCartToken: "bad" }))).message).toBe(
      "cart token rejected by verify function",
    );
    // A verify that throws refuses nothing: an outage, carrying what it threw (the engine's 500).
    const threw = (await Promise.resolve(check({ merchantCartToken: "boom" })).catch(
      (error: unknown) => error,
    )) as {
      name: string;
      message: string;
      thrown: unknown;
    };
    expect(threw.name).toBe("AuthenticationOutage");
    expect(threw.message).toBe("the cart token's verify function threw");
    expect(threw.thrown).toBeInstanceOf(Error);
    expect(seen).toEqual(["good-cart", "bad", "boom"]);
  });

  it("accepts only a literal true from verify; parameter names the URL parameter elsewhere", async () => {
    const auth = await createAuth({
      cartToken: { parameter: "cartToken", verify: async () => "yes" as unknown as boolean },
    });
    const request = cart("?cartToken=abc");
    const result = await auth.authenticateRequest(request);
    await refusal(
      auth.authenticatePayload?.(result, { merchantCartToken: "abc" }, undefined, request),
    );
    // On another callback (set under callbacks) the token is the URL parameter's, read at once.
    const plain = await createAuth({
      callbacks: {
        SendOrderToMerchant: { cartToken: { parameter: "CartId", verify: () => true } },
      },
    });
    const order = (query: string) =>
      makeRequest({ url: `https://m.example/crossborder/SendOrderToMerchant${query}` });
    await expect(plain.authenticateRequest(order("?CartId=42"))).resolves.toEqual({
      methods: ["cartToken"],
    });
    expect((await refusal(plain.authenticateRequest(order("?merchantCartToken=42")))).message).toBe(
      "cart token URL parameter missing",
    );
    await refusal(plain.authenticateRequest(order("?CartId=42&CartId=43")));
  });

  it("checks a secret URL parameter and a secret header", async () => {
    const auth = await createAuth({
      urlSecret: { parameter: "sig", value: "päss/word~1" },
      headerSecret: { name: "X-Merchant-Secret", value: "h3ader" },
    });
    const request = (query: string, header?: string) =>
      makeRequest({
        url: `https://m.example/orders${query}`,
        headers: { "x-merchant-secret": header },
      });
    const sig = `?sig=${encodeURIComponent("päss/word~1")}`;
    await expect(auth.authenticateRequest(request(sig, " h3ader "))).resolves.toEqual({
      methods: ["headerSecret", "urlSecret"],
    });
    await refusal(auth.authenticateRequest(request(sig, "h3adeR")));
    await refusal(auth.authenticateRequest(request(sig, undefined)));
    await refusal(auth.authenticateRequest(request(sig, "h3ader, h3ader")));
    await refusal(auth.authenticateRequest(request(sig, "x".repeat(17_000))), "header_too_large");
    await refusal(auth.authenticateRequest(request("?sig=päss/word 1", "h3ader")));
    await refusal(auth.authenticateRequest(request("", "h3ader")));
    await refusal(auth.authenticateRequest(request(`${sig}&sig=x`, "h3ader")));
  });
});

describe("the payload stage per callback", () => {
  it("needs the raw body only for callbacks whose plan has a body digest", async () => {
    const auth = await createAuth({
      jwt: jwt(),
      callbacks: { SendOrderToMerchant: { jwt: jwt({ bodyDigest: { claim: "bdh" } }) } },
    });
    expect(auth.needsRawBody("SendOrderToMerchant")).toBe(true);
    expect(auth.needsRawBody("UpdateOrderStatus")).toBe(false);
    expect(auth.needsRawBody("GetCheckoutCartInfo")).toBe(false);
  });

  it("returns a new result with the modes it added, and undefined when it added none", async () => {
    const auth = await createAuth({ jwt: jwt(), merchantGuid: GUID });
    const request = bearer(await signToken(key.privateKey, { sub: "svc" }));
    const result = await auth.authenticateRequest(request);
    const full = await auth.authenticatePayload?.(
      result,
      { MerchantGUID: GUID },
      undefined,
      request,
    );
    expect(full).not.toBe(result);
    expect(full?.methods).toEqual(["jwt", "merchantGuid"]);
    expect(full?.claims).toMatchObject({ sub: "svc" });
    expect(result.methods).toEqual(["jwt"]);

    const get = bearer(await signToken(key.privateKey), {
      callback: "GetCheckoutCartInfo",
      method: "GET",
    });
    const getResult = await auth.authenticateRequest(get);
    await expect(
      auth.authenticatePayload?.(getResult, { merchantCartToken: "t" }, undefined, get),
    ).resolves.toBeUndefined();
  });

  it("checks the MerchantGUID a GetCheckoutCartInfo POST carries in its fields (any key case)", async () => {
    const auth = await createAuth({ jwt: jwt(), merchantGuid: GUID });
    const post = bearer(await signToken(key.privateKey), {
      callback: "GetCheckoutCartInfo",
      method: "POST",
      url: "https://m.example/crossborder/GetCheckoutCartInfo?merchantCartToken=t",
    });
    const result = await auth.authenticateRequest(post);
    // The cart payload as the handler builds it: every query and body field kept.
    const cart = { merchantCartToken: "t", countryCode: "FR", currencyCode: "EUR" };
    for (const field of ["MerchantGUID", "merchantGuid", "MERCHANTGUID"]) {
      await expect(
        auth.authenticatePayload?.(
          result,
          { ...cart, [field]: GUID.toLowerCase() },
          undefined,
          post,
        ),
      ).resolves.toMatchObject({ methods: ["jwt", "merchantGuid"] });
    }
    const wrong = await refusal(
      auth.authenticatePayload?.(result, { ...cart, MerchantGUID: "nope" }, undefined, post),
    );
    expect(wrong.message).toBe("MerchantGUID does not match");
    const missing = await refusal(auth.authenticatePayload?.(result, cart, undefined, post));
    expect(missing.message).toBe("MerchantGUID missing from the payload");

    // By GET the GUID is not required, but one that is sent must match.
    const get = bearer(await signToken(key.privateKey), {
      callback: "GetCheckoutCartInfo",
      method: "GET",
    });
    const getResult = await auth.authenticateRequest(get);
    await expect(
      auth.authenticatePayload?.(getResult, cart, undefined, get),
    ).resolves.toBeUndefined();
    await expect(
      auth.authenticatePayload?.(getResult, { ...cart, MerchantGUID: GUID }, undefined, get),
    ).resolves.toMatchObject({ methods: ["jwt", "merchantGuid"] });
    await refusal(
      auth.authenticatePayload?.(getResult, { ...cart, MerchantGUID: "x" }, undefined, get),
    );
  });
});

describe("secret header reads the credential header like Authorization", () => {
  const auth = () => createAuth({ headerSecret: { name: "X-Merchant-Secret", value: "h3ader" } });
  const request = (header: string | undefined) =>
    makeRequest({ headers: { "x-merchant-secret": header } });

  it("refuses a repeated header (joined with a comma) as such", async () => {
    const error = await refusal((await auth()).authenticateRequest(request("h3ader, h3ader")));
    expect(error.message).toBe("secret header repeated or contains a comma");
  });

  it("checks the length before the blank test: 17,000 spaces is a 431", async () => {
    await refusal(
      (await auth()).authenticateRequest(request(" ".repeat(17_000))),
      "header_too_large",
    );
    const blank = await refusal((await auth()).authenticateRequest(request("   ")));
    expect(blank.message).toBe("secret header empty");
    const missing = await refusal((await auth()).authenticateRequest(request(undefined)));
    expect(missing.message).toBe("secret header missing");
  });

  it("refuses a configured secret with a comma, which could never be told from a repeat", async () => {
    const attempt = createAuth({ headerSecret: { name: "X-Secret", value: "a,b" } });
    await expect(attempt).rejects.toThrow(/headerSecret\.value cannot contain a comma/);
  });
});
