import { importSPKI, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TIMEOUT_MS } from "../../src/core/timers.js";
import {
  CALLBACK_NAMES,
  type CallbackName,
  type SendOrderToMerchantRequest,
} from "../../src/index.js";
import {
  callbackUrl,
  createTestKeys,
  SAMPLE_MERCHANT_GUID,
  SendCallbackError,
  samplePayload,
  sendCallback,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";
import {
  closedPort,
  delay,
  json,
  MERCHANT_GUID,
  type ReceivedCall,
  startMerchant,
  startRawMerchant,
} from "./helpers.js";

let keys: TestKeys;
let raw: Awaited<ReturnType<typeof startRawMerchant>>;
let merchant: Awaited<ReturnType<typeof startMerchant>>;

beforeAll(async () => {
  keys = await createTestKeys();
  raw = await startRawMerchant({
    SendAdditionalRequiredDocumentsToMerchant: async (res) => {
      await delay(300);
      json(res, 200, { Success: true });
    },
  });
  merchant = await startMerchant(keys.publicKey);
});

afterAll(async () => {
  await raw?.close();
  await merchant?.close();
});

function lastSeen() {
  const request = raw.seen.at(-1);
  if (!request) throw new Error("the raw merchant saw no request");
  return request;
}

describe("callbackUrl", () => {
  it("appends the callback name to a base, keeps a full URL and the base's query", () => {
    expect(callbackUrl("http://h/crossborder", "SendOrderToMerchant").href).toBe(
      "http://h/crossborder/SendOrderToMerchant",
    );
    expect(callbackUrl("http://h/crossborder/", "UpdateOrderStatus").href).toBe(
      "http://h/crossborder/UpdateOrderStatus",
    );
    expect(callbackUrl("http://h/x/sendordertomerchant", "SendOrderToMerchant").href).toBe(
      "http://h/x/sendordertomerchant",
    );
    expect(callbackUrl("http://h/api?key=s", "UpdateOrderStatus").href).toBe(
      "http://h/api/UpdateOrderStatus?key=s",
    );
    expect(callbackUrl("http://h/api", "SendOrderToMerchant", "/orders/new").href).toBe(
      "http://h/api/orders/new",
    );
    expect(callbackUrl("http://h/hook", "SendOrderToMerchant", "").href).toBe("http://h/hook");
  });
});

describe("sendCallback (as the service sends)", () => {
  it("POSTs the JSON sample with a Bearer token signed by the private key", async () => {
    const result = await sendCallback(raw.base, "SendOrderToMerchant", {
      privateKey: keys.privateKey,
    });
    const seen = lastSeen();
    expect(seen.method).toBe("POST");
    expect(seen.url).toBe("/crossborder/SendOrderToMerchant");
    expect(seen.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(seen.body)).toEqual(samplePayload("SendOrderToMerchant"));
    const token = seen.headers.authorization?.replace(/^Bearer /, "") ?? "";
    const { payload } = await jwtVerify(token, await importSPKI(keys.publicKey, "RS256"));
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    expect(result).toMatchObject({
      callback: "SendOrderToMerchant",
      method: "POST",
      url: `${raw.base}/SendOrderToMerchant`,
      status: 200,
      contentType: "application/json; charset=utf-8",
      body: { Success: true, InternalOrderId: "M-1" },
      text: '{"Success":true,"InternalOrderId":"M-1"}',
      success: true,
      problems: [],
    });
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it("sends GetCheckoutCartInfo as GET with its parameters in the query, or as a POST form", async () => {
    const get = await sendCallback(raw.base, "GetCheckoutCartInfo", {
      privateKey: keys.privateKey,
    });
    let seen = lastSeen();
    expect(seen.method).toBe("GET");
    const url = new URL(seen.url, raw.origin);
    expect(url.pathname).toBe("/crossborder/GetCheckoutCartInfo");
    expect(Object.fromEntries(url.searchParams)).toEqual(samplePayload("GetCheckoutCartInfo"));
    expect(seen.body).toBe("");
    expect(seen.headers.authorization).toMatch(/^Bearer ey/);
    expect(get).toMatchObject({ method: "GET", status: 200, success: true, problems: [] });

    await sendCallback(raw.base, "GetCheckoutCartInfo", {
      method: "POST",
      payload: { merchantCartToken: "tok en", countryCode: "FR", currencyCode: null },
    });
    seen = lastSeen();
    expect(seen.method).toBe("POST");
    // A POST carries MerchantGUID in a JSON body (the spec requires it; the sample GUID by
    // default), and the cart token in the URL too (required there for GET and POST).
    expect(seen.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(seen.body)).toStrictEqual({
      merchantCartToken: "tok en",
      countryCode: "FR",
      MerchantGUID: SAMPLE_MERCHANT_GUID,
    });
    expect(new URL(seen.url, raw.origin).searchParams.get("merchantCartToken")).toBe("tok en");
  });

  it("sends no Authorization header without a key; a given token and headers as they are", async () => {
    await sendCallback(raw.base, "UpdateOrderStatus");
    expect(lastSeen().headers.authorization).toBeUndefined();
    await sendCallback(raw.base, "UpdateOrderStatus", {
      token: "abc.def.ghi",
      privateKey: keys.privateKey,
      headers: { "X-Shared-Secret": "s3cret" },
    });
    expect(lastSeen().headers.authorization).toBe("Bearer abc.def.ghi");
    expect(lastSeen().headers["x-shared-secret"]).toBe("s3cret");
    await sendCallback(raw.base, "UpdateOrderStatus", { headers: { Authorization: "Basic dTpw" } });
    expect(lastSeen().headers.authorization).toBe("Basic dTpw");
  });

  it("writes cartToken where the payload carries a cart token", async () => {
    await sendCallback(raw.base, "GetCheckoutCartInfo", { cartToken: "demo-cart" });
    expect(new URL(lastSeen().url, raw.origin).searchParams.get("merchantCartToken")).toBe(
      "demo-cart",
    );
    await sendCallback(raw.base, "SendOrderToMerchant", { cartToken: "demo-cart" });
    expect(JSON.parse(lastSeen().body)).toMatchObject({ CartToken: "demo-cart", CartId: "58211" });
    await sendCallback(raw.base, "UpdateOrderStatus", { cartToken: "demo-cart" });
    expect(JSON.parse(lastSeen().body)).not.toHaveProperty("CartToken");
    // RemoveRestrictedProducts (001 §4.7): CartId is the merchant's cart, CartToken the
    // service's own SendCart token, which the merchant's cart token is not.
    await sendCallback(raw.base, "RemoveRestrictedProducts", { cartToken: "demo-cart" });
    const removal = JSON.parse(lastSeen().body);
    expect(removal).toMatchObject({ CartId: "demo-cart" });
    expect(removal.CartToken).toBe(samplePayload("RemoveRestrictedProducts").CartToken);
    expect(removal.CartToken).not.toBe(samplePayload("GetCheckoutCartInfo").merchantCartToken);
  });

  it("writes merchantGuid into the payload, sends a custom payload and a custom path", async () => {
    await sendCallback(raw.base, "RemoveRestrictedProducts", { merchantGuid: "my-guid" });
    expect(JSON.parse(lastSeen().body)).toMatchObject({ MerchantGUID: "my-guid", CartId: "58211" });
    await sendCallback(raw.base, "UpdateOrderStatus", {
      payload: { OrderId: "GE2", StatusCode: "CANCELLED" },
      merchantGuid: "g",
      path: "/UpdateOrderStatus",
    });
    expect(JSON.parse(lastSeen().body)).toEqual({
      OrderId: "GE2",
      StatusCode: "CANCELLED",
      MerchantGUID: "g",
    });
    await sendCallback(`${raw.base}/UpdateOrderStatus`, "UpdateOrderStatus", {
      payload: "{not json",
    });
    expect(lastSeen().url).toBe("/crossborder/UpdateOrderStatus");
    expect(lastSeen().body).toBe("{not json");
  });

  it("reports a slow answer beyond slowMs, and rejects when the timeout passes", async () => {
    const slow = await sendCallback(raw.base, "SendAdditionalRequiredDocumentsToMerchant", {
      slowMs: 100,
    });
    expect(slow.durationMs).toBeGreaterThanOrEqual(290);
    expect(slow.problems).toEqual([
      expect.stringMatching(/^slow: answered in \d+ ms \(limit 100 ms\)$/),
    ]);
    const error = await sendCallback(raw.base, "SendAdditionalRequiredDocumentsToMerchant", {
      timeoutMs: 50,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendCallbackError);
    expect((error as SendCallbackError).message).toMatch(/no answer within 50 ms/);
    expect((error as SendCallbackError).reason).toBe("no answer within 50 ms");
    expect((error as SendCallbackError).callback).toBe("SendAdditionalRequiredDocumentsToMerchant");
  });

  // Open item 1: the reason of a call without an answer quoted the fetch's error as written, and
  // so the card data, header values or token it quoted.
  it("a call without an answer: its reason and message mask what the call sent", async () => {
    const error = await sendCallback(raw.base, "PerformOrderPayment", {
      payload: samplePayload("PerformOrderPayment", { PaymentDetails: { CVVNumber: "0737" } }),
      headers: { "x-shop-secret": "s3cr3t-value" },
      fetch: (request) => {
        const header = request.headers.get("x-shop-secret");
        return request.text().then((body) => {
          throw new TypeError("fetch failed", { cause: new Error(`refused ${header} ${body}`) });
        });
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendCallbackError);
    const { reason, message } = error as SendCallbackError;
    expect(reason).toMatch(/^refused \*\*\* \{/);
    for (const text of [reason, message]) {
      expect(text).not.toContain("4111111111111111");
      expect(text).not.toMatch(/(?<!\d)0737(?!\d)/);
      expect(text).not.toContain("s3cr3t-value");
    }
  });

  // Review observe-7: a header secret was masked in the error, the urlSecret in the URL's query
  // was printed in clear, in the message and the url (a CI log of a failing connectivity test).
  it("a call without an answer: its message and url mask the query values of the URL given", async () => {
    const port = await closedPort();
    const error = await sendCallback(
      `http://127.0.0.1:${port}/cb?key=Sup3rS3cretValue_abc&shop=eu`,
      "GetCheckoutCartInfo",
      {
        method: "GET",
        headers: { "x-secret": "HEADER-SECRET-1" },
        fetch: (request) =>
          Promise.reject(
            new TypeError("fetch failed", { cause: new Error(`refused ${request.url}`) }),
          ),
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendCallbackError);
    const { message, url, reason } = error as SendCallbackError;
    for (const text of [message, url, reason]) {
      expect(text).not.toContain("Sup3rS3cretValue_abc");
      expect(text).not.toContain("eu&");
      expect(text).not.toContain("HEADER-SECRET-1");
    }
    expect(url).toMatch(/\/cb\/GetCheckoutCartInfo\?key=\*\*\*&shop=\*\*\*&/);
    // The query the kit sets itself (the cart's parameters) is kept: it says what was asked.
    expect(url).toContain("merchantCartToken=");
    expect(message).toContain(`: GET ${url} failed: `);
  });

  // Review second-obs-5: a URL with user:pass@ rejected with fetch's raw TypeError quoting the password.
  it("refuses a URL carrying a user name or password before sending, naming neither", async () => {
    let sent = 0;
    const error = await sendCallback(
      "http://admin:Sup3rS3cretValue_abc@127.0.0.1:9/cb",
      "UpdateOrderStatus",
      {
        fetch: async () => {
          sent += 1;
          return new Response("{}");
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      "sendCallback: the URL must not carry a user name or password (fetch refuses it): the service authenticates with its token",
    );
    expect(String(error)).not.toContain("Sup3rS3cretValue_abc");
    expect(String(error)).not.toContain("admin");
    expect(sent).toBe(0);
  });

  // Review second-obs-2: the result's url (the CLI's --json rows) still quoted the urlSecret.
  it("an answered call: the result's url masks the query values of the URL given, the request got them", async () => {
    let sentUrl = "";
    const result = await sendCallback(
      "http://shop.example/cb?key=Sup3rS3cretValue_abc&shop=eu",
      "GetCheckoutCartInfo",
      {
        method: "GET",
        fetch: async (request) => {
          sentUrl = request.url;
          return new Response('{"productsList":[]}', {
            headers: { "content-type": "application/json" },
          });
        },
      },
    );
    expect(sentUrl).toContain("key=Sup3rS3cretValue_abc&shop=eu&");
    expect(result.url).not.toContain("Sup3rS3cretValue_abc");
    expect(result.url).toMatch(/\/cb\/GetCheckoutCartInfo\?key=\*\*\*&shop=\*\*\*&/);
    expect(result.url).toContain("merchantCartToken=");
    const plain = await sendCallback("http://shop.example/cb", "UpdateOrderStatus", {
      fetch: async () => new Response('{"Success":true}'),
    });
    expect(plain.url).toBe("http://shop.example/cb/UpdateOrderStatus");
  });

  it("refuses a timeoutMs no timer keeps (over 2^31-1 ms, which would abort at once), sending nothing", async () => {
    const sent = raw.seen.length;
    for (const timeoutMs of [MAX_TIMEOUT_MS + 1, 3e9, 0, -1, 1.5, Number.NaN]) {
      const error = await sendCallback(raw.base, "SendAdditionalRequiredDocumentsToMerchant", {
        timeoutMs,
      }).catch((e: unknown) => e);
      expect(error, String(timeoutMs)).toBeInstanceOf(RangeError);
      expect((error as Error).message).toMatch(
        /^sendCallback: timeoutMs must be a positive integer of milliseconds \(at most 2147483647\)/,
      );
    }
    expect(raw.seen.length).toBe(sent);
    // The bound itself waits for the answer (about 300 ms here).
    const answered = await sendCallback(raw.base, "SendAdditionalRequiredDocumentsToMerchant", {
      timeoutMs: MAX_TIMEOUT_MS,
    });
    expect(answered.status).toBe(200);
  });

  // Review OPT D7: as timeoutMs, refused before anything is sent.
  it("refuses a slowMs or an expect the check cannot use, sending nothing", async () => {
    const sent = raw.seen.length;
    for (const options of [{ slowMs: Number.NaN }, { slowMs: -1 }, { expect: "succes" as never }]) {
      const error = await sendCallback(raw.base, "UpdateOrderStatus", options).catch(
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(options)).toBeInstanceOf(
        "slowMs" in options ? RangeError : TypeError,
      );
      expect((error as Error).message).toMatch(/^sendCallback: (slowMs|expect) must be/);
    }
    expect(raw.seen.length).toBe(sent);
  });

  // second-left-2: `expectedStatus: [401]` (the option is expectStatus) was ignored, so a test
  // of a refusal checked for a success instead; a misspelt token claim signed a token without it.
  it("refuses an unknown option or token option, naming the closest, sending nothing", async () => {
    const sent = raw.seen.length;
    await expect(
      sendCallback(raw.base, "UpdateOrderStatus", { expectedStatus: [401] } as never),
    ).rejects.toThrow(
      /^sendCallback: options has an unknown option "expectedStatus" \(known: privateKey, token, .*\); did you mean "expectStatus"\?$/,
    );
    await expect(
      sendCallback(raw.base, "UpdateOrderStatus", {
        privateKey: keys.privateKey,
        tokenOptions: { expiresIn: -3600 } as never,
      }),
    ).rejects.toThrow(
      /^sendCallback: tokenOptions has an unknown option "expiresIn" \(known: issuer, audience, expiresInSeconds, .*\)$/,
    );
    await expect(
      sendCallback(raw.base, "UpdateOrderStatus", { tokenOptions: { keyID: "k" } as never }),
    ).rejects.toThrow('did you mean "keyId"?');
    // `body` is the call's own: sendCallback fills it in.
    await expect(
      sendCallback(raw.base, "UpdateOrderStatus", { tokenOptions: { body: "{}" } as never }),
    ).rejects.toThrow('sendCallback: tokenOptions has an unknown option "body"');
    expect(raw.seen.length).toBe(sent);
    // Every documented option is taken.
    const answered = await sendCallback("http://merchant.test/cb", "UpdateOrderStatus", {
      privateKey: keys.privateKey,
      token: undefined,
      tokenOptions: {
        issuer: "i",
        audience: ["a"],
        expiresInSeconds: 60,
        issuedAt: undefined,
        keyId: "k",
        claims: {},
        bodyDigestClaim: "bd",
        bodyDigestEncoding: "hex",
      },
      payload: undefined,
      merchantGuid: MERCHANT_GUID,
      cartToken: "c",
      authToken: undefined,
      sessionId: undefined,
      method: "POST",
      escapeSlashes: true,
      headers: { "x-secret": "s" },
      timeoutMs: 5_000,
      slowMs: 5_000,
      expectStatus: 200,
      expect: "success",
      path: "",
      fetch: () => Response.json({ Success: true }),
    });
    expect(answered.problems).toEqual([]);
  });

  it("rejects with SendCallbackError when nothing listens", async () => {
    const port = await closedPort();
    await expect(sendCallback(`http://127.0.0.1:${port}/cb`, "UpdateOrderStatus")).rejects.toThrow(
      /UpdateOrderStatus: POST http:\/\/127\.0\.0\.1:\d+\/cb\/UpdateOrderStatus failed: .*ECONNREFUSED/,
    );
  });

  it("reports a redirect instead of following it, and reports shape problems", async () => {
    const redirecting = await startRawMerchant({
      SendOrderToMerchant: (res) => {
        res.writeHead(301, { location: "https://elsewhere.example/" });
        res.end();
      },
      UpdateOrderStatus: (res) => json(res, 200, { Success: "yes" }),
    });
    try {
      const moved = await sendCallback(redirecting.base, "SendOrderToMerchant");
      expect(moved.status).toBe(301);
      expect(moved.problems[0]).toMatch(/^HTTP 301: a redirect/);
      const yes = await sendCallback(redirecting.base, "UpdateOrderStatus");
      expect(yes).toMatchObject({ success: undefined, body: { Success: "yes" } });
      expect(yes.problems).toEqual([expect.stringContaining('"Success" is the text "yes"')]);
    } finally {
      await redirecting.close();
    }
  });

  // Review-kit K1: a hand-written endpoint that echoes the card (or the whole request) passed.
  it("reports an answer that sends back the card number and CVV, naming the field, never the value", async () => {
    const echoing = await startRawMerchant({
      SendOrderToMerchant: (res, request) =>
        json(res, 200, {
          Success: true,
          InternalOrderId: "M-1",
          Request: JSON.parse(request.body),
        }),
      PerformOrderPayment: (res, request) => {
        const { CardNumber, CVVNumber } = JSON.parse(request.body).PaymentDetails;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          `{"Success":true,"PaymentAmount":"129.90","PaymentCurrencyCode":"USD","Message":"Charged card ${CardNumber} (cvv ${CVVNumber})"}`,
        );
      },
    });
    try {
      const paid = await sendCallback(echoing.base, "PerformOrderPayment");
      expect(paid.problems).toEqual([
        'the answer sends back the card number this call carried, at "Message": card data must never be echoed',
        'the answer sends back the CVV this call carried, at "Message": card data must never be echoed',
      ]);
      const order = await sendCallback(echoing.base, "SendOrderToMerchant");
      expect(order.problems).toEqual([
        'the answer sends back the card number this call carried, at "Request.PaymentDetails.CardNumber": card data must never be echoed',
        'the answer sends back the CVV this call carried, at "Request.PaymentDetails.CVVNumber": card data must never be echoed',
      ]);
      for (const result of [paid, order]) {
        expect(result.problems.join("\n")).not.toMatch(/4111|737/);
      }
    } finally {
      await echoing.close();
    }
  });

  // Review-kit K2: a correct endpoint refusing a forged call in its own shape failed the test.
  it("expectStatus 401: checks the status alone, whatever body the refusal has", async () => {
    const bodies: [string, string | undefined, string][] = [
      [
        "html",
        "text/html; charset=utf-8",
        "<!DOCTYPE html><html><body><pre>UnauthorizedError: invalid signature</pre></body></html>",
      ],
      ["text", "text/plain; charset=utf-8", "Unauthorized"],
      ["empty", undefined, ""],
      ["gateway", "application/json", '{"message":"Unauthorized"}'],
    ];
    const refusing = await startRawMerchant(
      Object.fromEntries(
        CALLBACK_NAMES.map((name) => [
          name,
          (res: import("node:http").ServerResponse, request: { url: string }) => {
            const kind = new URL(request.url, "http://x").searchParams.get("kind") ?? "html";
            const [, type, text] =
              bodies.find(([name]) => name === kind) ?? (bodies[0] as (typeof bodies)[number]);
            res.writeHead(401, type === undefined ? {} : { "content-type": type });
            res.end(text);
          },
        ]),
      ),
    );
    try {
      const stranger = await createTestKeys();
      for (const [kind] of bodies) {
        for (const callback of CALLBACK_NAMES) {
          const result = await sendCallback(`${refusing.base}?kind=${kind}`, callback, {
            privateKey: stranger.privateKey,
            expectStatus: 401,
          });
          expect([kind, callback, result.status, result.problems]).toEqual([
            kind,
            callback,
            401,
            [],
          ]);
        }
      }
    } finally {
      await refusing.close();
    }
  });

  it("masks the card number and CVV it sent where a refusal quoted in problems repeats them", async () => {
    const quoting = await startRawMerchant({
      PerformOrderPayment: (res, request) => {
        const { CardNumber, CVVNumber } = JSON.parse(request.body).PaymentDetails;
        json(res, 200, {
          Success: false,
          ErrorCode: `CVV_${CVVNumber}`,
          Message: `card ${CardNumber} declined, CVV ${CVVNumber}`,
        });
      },
    });
    try {
      const result = await sendCallback(quoting.base, "PerformOrderPayment");
      // Review-kit K1: the card data sent back is itself a problem, named by its field.
      expect(result.problems).toEqual([
        'the answer sends back the card number this call carried, at "Message": card data must never be echoed',
        'the answer sends back the CVV this call carried, at "ErrorCode", "Message": card data must never be echoed',
        'a refusal: "Success" is false (ErrorCode "CVV_***", Message "card ************1111 declined, CVV ***"): the endpoint turned the call down',
      ]);
      expect(result.problems.join("\n")).not.toMatch(/737|4111111111111111/);
    } finally {
      await quoting.close();
    }
  });

  it("masks a card number and CVV the payload gave as JSON numbers, where a refusal quotes them", async () => {
    const sample = samplePayload("PerformOrderPayment");
    const payload = {
      ...sample,
      PaymentDetails: { ...sample.PaymentDetails, CardNumber: 4111111111111111, CVVNumber: 737 },
    };
    const result = await sendCallback("https://shop.example/cb", "PerformOrderPayment", {
      payload,
      fetch: async (request) => {
        const { CardNumber, CVVNumber } = (await request.json()).PaymentDetails;
        return Response.json({
          Success: false,
          Message: `card ${CardNumber} declined, CVV ${CVVNumber}`,
        });
      },
    });
    // Review-kit K1: the card data sent back is itself a problem, named by its field.
    expect(result.problems).toEqual([
      'the answer sends back the card number this call carried, at "Message": card data must never be echoed',
      'the answer sends back the CVV this call carried, at "Message": card data must never be echoed',
      'a refusal: "Success" is false (Message "card ************1111 declined, CVV ***"): the endpoint turned the call down',
    ]);
  });

  // Fix cardcase: the card keys are matched in any letter case.
  it("masks a card number and CVV the payload gave under keys in another case, where a refusal quotes them", async () => {
    const payload = {
      ...samplePayload("PerformOrderPayment"),
      paymentDetails: { cardNumber: "1234 5678  1234 5678", cvvNumber: "4821" },
    };
    const result = await sendCallback("https://shop.example/cb", "PerformOrderPayment", {
      payload,
      fetch: async (request) => {
        const { cardNumber, cvvNumber } = (await request.json()).paymentDetails;
        return Response.json({
          Success: false,
          Message: `card ${cardNumber} declined, CVV ${cvvNumber}`,
        });
      },
    });
    // Review-kit K1: the card data sent back is itself a problem, named by its field.
    expect(result.problems).toHaveLength(3);
    expect(result.problems.slice(0, 2)).toEqual([
      'the answer sends back the card number this call carried, at "Message": card data must never be echoed',
      'the answer sends back the CVV this call carried, at "Message": card data must never be echoed',
    ]);
    expect(result.problems[2]).toContain("declined, CVV ***");
    expect(result.problems.join("\n").replace(/\D/g, "")).not.toContain("1234567812345678");
  });

  // Fix s23 (review finding 5): a card object anywhere in the payload, as the engine finds them.
  it("masks the card numbers and CVVs of card objects below the top level, where a refusal quotes them", async () => {
    // Not Luhn-valid: only where they sit says they are card numbers.
    const onProduct = "1234 5678 1234 5678";
    const inNestedDetails = "8765 4321 8765 4321";
    const inArray = "9999 8888 7777 6666";
    const sample = samplePayload("SendOrderToMerchant");
    const [product, ...products] = sample.Products ?? [];
    const payload = {
      ...sample,
      Products: [
        {
          ...product,
          cardNumber: onProduct,
          CVVNumber: "4821",
          Paymentdetails: { CARDNUMBER: inNestedDetails, cvvnumber: "9137" },
        },
        ...products,
      ],
      Extras: [{ note: "kept" }, { CardNumber: inArray, Cvv2: 5519 }],
    };
    const result = await sendCallback("https://shop.example/cb", "SendOrderToMerchant", {
      payload,
      fetch: async (request) => {
        const sent = await request.json();
        const [first] = sent.Products;
        const quoted = sent.Extras[1];
        return Response.json({
          Success: false,
          // Under the 80 characters a problem quotes of a field.
          Message: [
            `${first.cardNumber}/${first.CVVNumber}`,
            `${first.Paymentdetails.CARDNUMBER}/${first.Paymentdetails.cvvnumber}`,
            `${quoted.CardNumber}/${quoted.Cvv2}`,
          ].join(", "),
        });
      },
    });
    // Review-kit K1: the card numbers sent back are a problem (the CVVs here are not named as
    // such in the text, and a lone "4821" beside a slash is not taken for one).
    expect(result.problems).toEqual([
      'the answer sends back the card number this call carried, at "Message": card data must never be echoed',
      'a refusal: "Success" is false (Message "***/***, ***/***, ***/***"): the endpoint turned the call down',
    ]);
  });

  // Review c3 D4: what the call sent in its headers is as secret as its card.
  it("masks the header values, Basic credentials and token it sent where an answer quotes them", async () => {
    const secret = 'shop"secret-7f3a9c1e5b';
    const echo = (message: (request: Request) => string, success: unknown = false) => ({
      fetch: async (request: Request) =>
        Response.json({ Success: success, ErrorCode: "E1", Message: message(request) }),
    });
    // A header given in `headers`, and the token sent; the secret where the 80-character quote
    // of a Message is cut.
    const headerAndToken = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      token: "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJlLTAxMjM0",
      headers: { "X-Shop-Secret": secret },
      ...echo(
        (request) =>
          `${"x".repeat(60)} ${request.headers.get("x-shop-secret")} ${request.headers.get("authorization")}`,
      ),
    });
    expect(headerAndToken.problems).toEqual([
      `a refusal: "Success" is false (ErrorCode "E1", Message "${"x".repeat(60)} *** ***"): the endpoint turned the call down`,
    ]);
    // Basic credentials: the header, and the password decoded (UTF-8) wherever quoted.
    const basic = Buffer.from("shop:pässwort-0042", "utf8").toString("base64");
    const credentials = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      headers: { Authorization: `Basic ${basic}` },
      ...echo((request) => {
        const sent = request.headers.get("authorization")?.slice("Basic ".length) ?? "";
        return `${sent} = ${Buffer.from(sent, "base64").toString("utf8").split(":")[1]}`;
      }),
    });
    expect(credentials.problems[0]).toContain('Message "*** = ***"');
    // Quoted as JSON where the checks quote a whole value (the quote escaped).
    const asSuccess = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      headers: { "X-Shop-Secret": secret },
      ...echo(() => "", secret),
    });
    expect(asSuccess.problems[0]).toMatch(/^"Success" is the text "\*\*\*": /);
    const problems = [headerAndToken, credentials, asSuccess].flatMap((r) => r.problems).join("\n");
    for (const sent of ["secret-7f3a", "c2lnbmF0dXJlLTAxMjM0", basic, "pässwort-0042"]) {
      expect(problems).not.toContain(sent);
    }
  });

  // Review c3 D7: fetch refuses such values with a TypeError of its own (one quoting the value).
  it("refuses a header value fetch cannot send (outside Latin-1, a line break) before sending, without quoting it", async () => {
    let sent = 0;
    for (const value of ["clé€-s3cret-42", "s3cret\r\nX-Injected: 1"]) {
      const error = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
        headers: { "X-Shop-Secret": value },
        fetch: () => {
          sent++;
          return Response.json({ Success: true });
        },
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect(String((error as Error).message)).toMatch(/header "X-Shop-Secret"/);
      expect(String((error as Error).message)).not.toContain("s3cret");
    }
    expect(sent).toBe(0);
  });

  // Review r4 R4-5: the engine never quotes the shopper's session; nor does the kit.
  it("masks the shopper session it sent (AuthToken, SessionId) where a gift-card endpoint quotes it", async () => {
    const result = await sendCallback("https://shop.example/cb", "ValidateGiftCard", {
      authToken: "shopper-tok-5c1d9e",
      sessionId: "sess-88aa77bb",
      fetch: async (request) => {
        const body = (await request.json()) as { AuthToken: string; SessionId: string };
        return Response.json({
          Success: false,
          Message: `session ${body.AuthToken}/${body.SessionId} expired`,
        });
      },
    });
    expect(result.problems).toEqual([
      'a refusal: "Success" is false (Message "session ***/*** expired"): the endpoint turned the call down',
    ]);
  });

  // Review privacy-3: a gift card's PIN (any CardFields member but CardId) was quoted in clear.
  it("masks a gift card's security codes it sent where the endpoint quotes them, as the session", async () => {
    const payload = samplePayload("ValidateGiftCard", {
      CardFields: { CardId: "GC-7342-1109-5561", Pin: "98761", Extra: { SecurityCode: "a/b c+9" } },
    } as never);
    const result = await sendCallback("https://shop.example/cb", "ValidateGiftCard", {
      payload,
      sessionId: "sess-88aa77bb",
      fetch: async (request) => {
        const body = (await request.json()) as {
          SessionId: string;
          CardFields: { Pin: string; Extra: { SecurityCode: string } };
        };
        const code = body.CardFields.Extra.SecurityCode;
        return Response.json({
          Success: false,
          Message: `pin ${body.CardFields.Pin} code ${code} ${JSON.stringify(code).slice(1, -1).replace(/\//g, "\\/")} session ${body.SessionId}`,
        });
      },
    });
    expect(result.problems).toEqual([
      'a refusal: "Success" is false (Message "pin *** code *** *** session ***"): the endpoint turned the call down',
    ]);
  });

  // Review r4 R4-6, R4-7: what fetch (undici) refuses to send is a TypeError before sending,
  // naming what was given and not quoting it.
  it("refuses a token or a header value with a control character before sending, without quoting it", async () => {
    let sent = 0;
    const fetch = () => {
      sent++;
      return Response.json({ Success: true });
    };
    for (const token of [
      "eyJ.part\r\nsig-s3cret-77",
      "eyJ.part€.sig-s3cret-77",
      "eyJ\u0001sig-s3cret",
    ]) {
      const error = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
        token,
        fetch,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect(String((error as Error).message)).toMatch(/token/);
      expect(String((error as Error).message)).not.toContain("s3cret");
    }
    // Review r8 R8-2: an object from a JavaScript caller is sent as its text, and checked so.
    const objectValue = { toString: () => "s3cret\r\nX-Injected: 1" } as unknown as string;
    for (const value of [
      "abc\u0001def-s3cret",
      "abc\u007fdef-s3cret",
      "abc\u001bdef-s3cret",
      objectValue,
    ]) {
      const error = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
        headers: { "X-Shop-Secret": value },
        fetch,
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect(String((error as Error).message)).toMatch(/header "X-Shop-Secret"/);
      expect(String((error as Error).message)).not.toContain("s3cret");
    }
    expect(sent).toBe(0);
    // A tab and Latin-1 letters are sent.
    const fine = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      headers: { "X-Shop-Secret": "clé\ts3cret" },
      fetch,
    });
    expect(fine.status).toBe(200);
  });

  // Review r4 R4-8: fetch sends a number given as a header value (a JavaScript caller).
  it("masks a header value given as a number where the answer quotes it", async () => {
    const result = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      headers: { "X-Shop-Secret": 918273645 as unknown as string },
      fetch: async (request) =>
        Response.json({
          Success: false,
          Message: `bad key ${request.headers.get("x-shop-secret")}`,
        }),
    });
    expect(result.problems).toEqual([
      'a refusal: "Success" is false (Message "bad key ***"): the endpoint turned the call down',
    ]);
  });

  it("calls a fetch handler without a server", async () => {
    const result = await sendCallback("https://shop.example/cb", "RemoveRestrictedProducts", {
      fetch: async (request) => {
        expect(request.url).toBe("https://shop.example/cb/RemoveRestrictedProducts");
        expect(await request.json()).toMatchObject({
          RemovedProductCodes: ["KNIFE-CHEF-20CM", "PERFUME-EDP-50ML"],
        });
        return Response.json({ IsSuccess: true });
      },
    });
    expect(result).toMatchObject({ status: 200, success: true, problems: [] });
  });

  // Found by review (newcomer-2): a README line without `privateKey` got a 401 and nothing said
  // the call had gone out unsigned.
  it("warns that a 401 answered a call without an Authorization header; not when signed or expected", async () => {
    const refuse = async () => Response.json({ Success: false }, { status: 401 });
    const unsigned = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      fetch: refuse,
    });
    expect(unsigned.problems).toHaveLength(1);
    expect(unsigned.warnings).toEqual([
      expect.stringMatching(/no Authorization header \(neither privateKey nor token was given\)/),
    ]);
    const signed = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      privateKey: keys.privateKey,
      fetch: refuse,
    });
    expect(signed.warnings).toEqual([]);
    const header = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      headers: { Authorization: "Basic dTpw" },
      fetch: refuse,
    });
    expect(header.warnings).toEqual([]);
    const expected = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      expectStatus: 401,
      fetch: refuse,
    });
    expect(expected).toMatchObject({ problems: [], warnings: [] });
    // As a list too (simulate's --expect 401 passes one: review second-pit-2).
    const listed = await sendCallback("https://shop.example/cb", "UpdateOrderStatus", {
      expectStatus: [401, 403],
      fetch: refuse,
    });
    expect(listed).toMatchObject({ problems: [], warnings: [] });
  });

  it("returns warnings apart from problems: a paid order answered without what was charged", async () => {
    const answer = (body: unknown) => async () => Response.json(body);
    const unpaid = await sendCallback("https://shop.example/cb", "SendOrderToMerchant", {
      fetch: answer({ Success: true, InternalOrderId: "M-1" }),
    });
    // The sample order carries PaymentDetails: the merchant performed the payment (001 §4.2).
    expect(unpaid.problems).toEqual([]);
    expect(unpaid.warnings).toEqual([
      expect.stringContaining('"PaymentAmount" is missing'),
      expect.stringContaining('"PaymentCurrencyCode" is missing'),
    ]);
    const charged = await sendCallback("https://shop.example/cb", "SendOrderToMerchant", {
      fetch: answer({
        Success: true,
        InternalOrderId: "M-1",
        PaymentAmount: "129.90",
        PaymentCurrencyCode: "USD",
      }),
    });
    expect(charged).toMatchObject({ problems: [], warnings: [] });
    const payment = await sendCallback("https://shop.example/cb", "PerformOrderPayment", {
      fetch: answer({ Success: true }),
    });
    expect(payment.problems).toHaveLength(2);
    expect(payment.warnings).toEqual([]);
  });

  it("refuses an unknown callback or method", async () => {
    await expect(sendCallback(raw.base, "Nope" as CallbackName)).rejects.toThrow(TypeError);
    await expect(
      sendCallback(raw.base, "UpdateOrderStatus", { method: "PUT" as "POST" }),
    ).rejects.toThrow(/GET or POST/);
  });
});

describe("sendCallback against a merchant built with the library", () => {
  function lastCall(callback: CallbackName): ReceivedCall {
    const call = merchant.calls.filter((c) => c.callback === callback).at(-1);
    if (!call) throw new Error(`${callback} did not reach the merchant`);
    return call;
  }

  it("GetCheckoutCartInfo by POST is accepted by a merchant with JWT + merchant GUID", async () => {
    const result = await sendCallback(merchant.base, "GetCheckoutCartInfo", {
      method: "POST",
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(result).toMatchObject({ method: "POST", status: 200, success: true, problems: [] });
    const call = lastCall("GetCheckoutCartInfo");
    expect(call.auth).toEqual(["jwt", "merchantGuid"]);
    expect(call.payload).toMatchObject({
      MerchantGUID: MERCHANT_GUID,
      merchantCartToken: samplePayload("GetCheckoutCartInfo").merchantCartToken,
    });
  });

  it.each(CALLBACK_NAMES)("%s: verified, decoded, answered well-formed", async (name) => {
    const result = await sendCallback(merchant.base, name, {
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    expect(result.problems).toEqual([]);
    expect(result.status).toBe(200);
    expect(result.success).toBe(true);
    const call = lastCall(name);
    expect(call.auth).toContain("jwt");
  });

  it("delivers the sample decoded, the operator's plain address intact", async () => {
    await sendCallback(merchant.base, "SendOrderToMerchant", {
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    type Order = SendOrderToMerchantRequest;
    const { payload, raw: wire } = lastCall("SendOrderToMerchant") as {
      payload: Order;
      raw: Order;
    };
    expect(payload.PrimaryShipping).toMatchObject({
      Address1: "548 Market St.",
      Email: "jane.doe@example.com",
      Phone1: "+1 415 555 0100",
      CountryName: "United States",
    });
    expect(payload.SecondaryShipping).toMatchObject({
      Phone1: "+ 44 (0)808 258 0300",
      Email: "info@example.com",
    });
    expect(payload.InternationalDetails?.OrderTrackingUrl).toBe(
      "http://www.example.com/track?id=1",
    );
    expect(wire.PrimaryShipping?.Email).toBe("jane.doe%40example.com");
  });

  it("delivers decoded values a second decode breaks: a % in an address line, a + in an e-mail (review PIT-7)", async () => {
    await sendCallback(merchant.base, "SendOrderToMerchant", {
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
    });
    type Order = SendOrderToMerchantRequest;
    const { payload, raw: wire } = lastCall("SendOrderToMerchant") as {
      payload: Order;
      raw: Order;
    };
    expect(payload.PrimaryShipping?.Address2).toBe("Unit 5, 100% Cotton Mill");
    expect(wire.PrimaryShipping?.Address2).toBe("Unit+5%2c+100%25+Cotton+Mill");
    expect(payload.PrimaryBilling?.Email).toBe("jane.doe+shop@example.com");
    expect(wire.PrimaryBilling?.Email).toBe("jane.doe%2bshop%40example.com");
    // What a merchant decoding them again gets: a URIError, and an e-mail with a space.
    const again = (value: string) => decodeURIComponent(value.replace(/\+/g, " "));
    expect(() => again(payload.PrimaryShipping?.Address2 ?? "")).toThrow(URIError);
    expect(again(payload.PrimaryBilling?.Email ?? "")).toBe("jane.doe shop@example.com");
  });

  it("RMA answers the text True, RemoveRestrictedProducts IsSuccess, the order its ids", async () => {
    const options = { privateKey: keys.privateKey, merchantGuid: MERCHANT_GUID };
    expect((await sendCallback(merchant.base, "SendRMAInfoToMerchant", options)).body).toEqual({
      Success: "True",
    });
    expect((await sendCallback(merchant.base, "RemoveRestrictedProducts", options)).body).toEqual({
      IsSuccess: true,
    });
    expect((await sendCallback(merchant.base, "SendOrderToMerchant", options)).body).toMatchObject({
      Success: true,
      InternalOrderId: "100004217",
    });
  });

  it("is refused (well-formed 401) without a token, with a foreign key, or with another GUID", async () => {
    const other = await createTestKeys();
    const cases = [
      await sendCallback(merchant.base, "UpdateOrderStatus", { merchantGuid: MERCHANT_GUID }),
      await sendCallback(merchant.base, "UpdateOrderStatus", {
        privateKey: other.privateKey,
        merchantGuid: MERCHANT_GUID,
      }),
      await sendCallback(merchant.base, "UpdateOrderStatus", { privateKey: keys.privateKey }),
    ];
    for (const result of cases) {
      expect(result.status).toBe(401);
      expect(result.success).toBe(false);
      // A refusal is a problem unless it is the answer expected.
      expect(result.problems).toEqual([
        "HTTP 401: not a 2xx answer, the service counts the call as failed",
      ]);
    }
    const expected = await sendCallback(merchant.base, "UpdateOrderStatus", {
      merchantGuid: MERCHANT_GUID,
      expectStatus: 401,
    });
    expect(expected).toMatchObject({ status: 401, problems: [] });
    const unexpected = await sendCallback(merchant.base, "UpdateOrderStatus", {
      privateKey: keys.privateKey,
      merchantGuid: MERCHANT_GUID,
      expectStatus: [401, 403],
    });
    expect(unexpected).toMatchObject({ status: 200, problems: ["HTTP 200: expected 401 or 403"] });
  });

  it("signs the body digest the merchant's createAuth checks", async () => {
    const bound = await startMerchant(keys.publicKey, { bodyDigestClaim: "bodyHash" });
    try {
      const options = { privateKey: keys.privateKey, merchantGuid: MERCHANT_GUID };
      const ok = await sendCallback(bound.base, "SendOrderToMerchant", {
        ...options,
        tokenOptions: { bodyDigestClaim: "bodyHash" },
      });
      expect(ok).toMatchObject({ status: 200, success: true });
      const wrongBody = await signServiceToken(keys.privateKey, {
        body: "{}",
        bodyDigestClaim: "bodyHash",
      });
      const refused = await sendCallback(bound.base, "SendOrderToMerchant", {
        ...options,
        token: wrongBody,
      });
      expect(refused).toMatchObject({ status: 401, success: false });
    } finally {
      await bound.close();
    }
  });
});
