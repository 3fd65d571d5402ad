// The cart-token mode through a real GetCheckoutCartInfo handler: the token `verify` checks is the
// payload's `merchantCartToken`, the very value the merchant's function receives, whether the
// service sends it in the query (GET) or in a JSON body (POST, wire-facts §6).
import { describe, expect, it, vi } from "vitest";
import {
  AuthenticationError,
  type CallbackFailure,
  type CallbackRequest,
  type CartTokenOptions,
  createAuth,
  createGetCheckoutCartInfoHandler,
  createSendOrderToMerchantHandler,
} from "../../src/index.js";
import { collector } from "../core/helpers.js";

const VALID = "valid-cart";
const VICTIM = "victim-cart";
const GUID = "6A1B2C3D-0000-4000-8000-000000000001";

interface Outcome {
  status: number;
  /** The token the merchant's function received; undefined when it did not run. */
  seen: string | null | undefined;
  /** The payload's `cartToken` field, as the merchant's function received it. */
  alias?: string | null | undefined;
  /** The whole payload the merchant's function received, as JSON. */
  payloadText?: string;
  called: boolean;
  methods: readonly string[] | undefined;
  /** Every token `verify` was called with. */
  verified: string[];
  reasons: string[];
}

async function call(
  request: Omit<CallbackRequest, "headers"> & { headers?: CallbackRequest["headers"] },
  options: { cartToken?: Omit<CartTokenOptions, "verify">; merchantGuid?: string } = {},
): Promise<Outcome> {
  const verified: string[] = [];
  const auth = await createAuth({
    cartToken: {
      ...options.cartToken,
      verify: (token) => {
        verified.push(token);
        if (token === "boom") throw new Error("store down");
        return token === VALID;
      },
    },
    // Other callbacks keep no mode (refused at request time), so nothing here is weak.
    ...(options.merchantGuid === undefined
      ? {}
      : { callbacks: { GetCheckoutCartInfo: { merchantGuid: options.merchantGuid } } }),
  });
  const { failures, onError } = collector();
  const outcome: Outcome = {
    status: 0,
    seen: undefined,
    called: false,
    methods: undefined,
    verified,
    reasons: [],
  };
  const handler = createGetCheckoutCartInfoHandler(
    (query, context) => {
      outcome.called = true;
      outcome.seen = query.merchantCartToken;
      outcome.alias = query.cartToken;
      outcome.payloadText = JSON.stringify(query);
      outcome.methods = context.auth?.methods;
      return { productsList: [] };
    },
    { auth, onError },
  );
  const response = await handler.handle({ headers: {}, ...request });
  outcome.status = response.status;
  outcome.reasons = failures.map((failure) => failure.reason);
  return outcome;
}

const get = (query: string) => ({ method: "GET", url: `/cart?${query}` });
const postJson = (body: unknown, query = "") => ({
  method: "POST",
  url: `/cart${query}`,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
/** The service's own POST (wire-facts §6). */
const servicePost = (token: unknown) =>
  postJson({ MerchantGUID: GUID, merchantCartToken: token, countryCode: "GER" });

describe("cart token: verify sees the token the merchant receives", () => {
  it("refuses ?cartToken=valid&merchantCartToken=victim under README's parameter: cartToken", async () => {
    const outcome = await call(get(`cartToken=${VALID}&merchantCartToken=${VICTIM}`), {
      cartToken: { parameter: "cartToken" },
    });
    expect(outcome.status).toBe(401);
    expect(outcome.called).toBe(false);
    expect(outcome.verified).toEqual([VICTIM]);
  });

  it("refuses a valid query token with another token in the body, or in another letter case", async () => {
    const options = { cartToken: { parameter: "cartToken" } };
    const mixed = await call(
      postJson({ merchantCartToken: VICTIM }, `?cartToken=${VALID}`),
      options,
    );
    expect(mixed.status).toBe(401);
    expect(mixed.verified).toEqual([VICTIM]);
    // The payload reads the documented name in any letter case.
    const cased = await call(get(`MERCHANTCARTTOKEN=${VICTIM}&cartToken=${VALID}`), options);
    expect(cased.status).toBe(401);
    expect(cased.verified).toEqual([VICTIM]);
  });

  it("hands the merchant exactly the token verify accepted, query first", async () => {
    const outcome = await call(
      postJson({ merchantCartToken: VICTIM }, `?merchantCartToken=${VALID}`),
    );
    expect(outcome.status).toBe(200);
    expect(outcome.verified).toEqual([VALID]);
    expect(outcome.seen).toBe(VALID);
  });
});

describe("cart token: no other name on the payload carries an unchecked token", () => {
  // Found by the final reader: `?merchantCartToken=valid&cartToken=victim` passed with the checked
  // token under one name and the victim's under the other, which a store reading `cartToken` used.
  it("the payload's cartToken holds the checked token, whatever was sent under it", async () => {
    for (const request of [
      get(`merchantCartToken=${VALID}&cartToken=${VICTIM}`),
      postJson({ merchantCartToken: VALID, cartToken: VICTIM }),
      postJson({ merchantCartToken: VALID }, `?CartToken=${VICTIM}`),
    ]) {
      const outcome = await call(request);
      expect(outcome.status).toBe(200);
      expect(outcome.verified).toEqual([VALID]);
      expect(outcome.seen).toBe(VALID);
      expect(outcome.payloadText).toContain(VALID);
      expect(outcome.payloadText).not.toContain(VICTIM);
    }
    expect((await call(get(`merchantCartToken=${VALID}&cartToken=${VICTIM}`))).alias).toBe(VALID);
  });
});

describe("cart token: both of the service's forms are accepted", () => {
  for (const parameter of [undefined, "merchantCartToken", "cartToken"]) {
    it(`GET ?cartToken= and POST with the token in the JSON body (parameter ${parameter})`, async () => {
      const options = { cartToken: parameter === undefined ? {} : { parameter } };
      const byGet = await call(get(`cartToken=${VALID}&IsStockValidation=1`), options);
      const byPost = await call(servicePost(VALID), options);
      expect(
        [byGet.status, byPost.status],
        [...byGet.reasons, ...byPost.reasons].join("; "),
      ).toEqual([200, 200]);
      expect([byGet.seen, byPost.seen]).toEqual([VALID, VALID]);
      expect([byGet.verified, byPost.verified]).toEqual([[VALID], [VALID]]);
      expect([byGet.methods, byPost.methods]).toEqual([["cartToken"], ["cartToken"]]);
    });
  }

  it("checks the POST's MerchantGUID too, before the cart token", async () => {
    const good = await call(servicePost(VALID), { merchantGuid: GUID });
    expect(good.status).toBe(200);
    expect(good.methods).toEqual(["merchantGuid", "cartToken"]);
    const wrong = await call(postJson({ MerchantGUID: "other", merchantCartToken: VALID }), {
      merchantGuid: GUID,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.verified).toEqual([]);
  });
});

describe("cart token: refused on both methods, verify called at most once", () => {
  const cases: [string, { method: string; url: string }, ReturnType<typeof postJson>][] = [
    [
      "no token at all",
      get("countryCode=DE"),
      postJson({ MerchantGUID: GUID, countryCode: "GER" }),
    ],
    ["an empty token", get("merchantCartToken=&cartToken="), servicePost("")],
    ["a null token", get("countryCode=DE"), servicePost(null)],
    ["a token verify refuses", get(`merchantCartToken=${VICTIM}`), servicePost(VICTIM)],
  ];
  for (const [label, byGet, byPost] of cases) {
    it(label, async () => {
      for (const request of [byGet, byPost]) {
        const outcome = await call(request);
        expect(outcome.status, request.method).toBe(401);
        expect(outcome.called, request.method).toBe(false);
        expect(outcome.verified.length, request.method).toBeLessThanOrEqual(1);
        expect(outcome.reasons.join(" "), request.method).not.toMatch(/victim|boom|store down/);
      }
    });
  }

  it("a verify that throws (the cart store down) is a 500 carrying its error, not a 401 (review ops-4)", async () => {
    for (const request of [get("cartToken=boom"), servicePost("boom")]) {
      const failures: CallbackFailure[] = [];
      const auth = await createAuth({
        cartToken: {
          verify: async () => {
            throw new Error("connect ECONNREFUSED 10.0.0.5:6379 (carts)");
          },
        },
      });
      const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
        auth,
        onError: (failure) => void failures.push(failure),
      });
      const response = await handler.handle({ headers: {}, ...request });
      expect(response.status, request.method).toBe(500);
      expect(JSON.parse(response.body).ErrorCode).toBe("INTERNAL_ERROR");
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ kind: "internal_error", status: 500 });
      expect(failures[0]?.reason).toMatch(/cart token's verify function threw/);
      const error = failures[0]?.error as Error;
      expect(error.message).toBe("connect ECONNREFUSED 10.0.0.5:6379 (carts)");
    }
    // A refusal stays a 401.
    const refused = await call(get(`merchantCartToken=${VICTIM}`));
    expect(refused.status).toBe(401);
  });

  it("a verify's error is scrubbed: a card number it quotes is masked", async () => {
    const failures: CallbackFailure[] = [];
    const auth = await createAuth({
      cartToken: {
        verify: () => {
          throw new Error("cart lookup failed for 4111 1111 1111 1111");
        },
      },
    });
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
      auth,
      onError: (failure) => void failures.push(failure),
    });
    const response = await handler.handle({ headers: {}, ...get("merchantCartToken=boom") });
    expect(response.status).toBe(500);
    expect(String((failures[0]?.error as Error | undefined)?.message)).not.toMatch(
      /4111 1111 1111 1111/,
    );
  });

  it("calls verify exactly once for an accepted request", async () => {
    const outcome = await call(get(`merchantCartToken=${VALID}&cartToken=${VALID}`));
    expect(outcome.status).toBe(200);
    expect(outcome.verified).toEqual([VALID]);
  });
});

/** Everything of a failure a log would show: its reason, and its error's text, stack and JSON. */
function shown(failure: CallbackFailure | undefined): string {
  const error = failure?.error as (Error & { code?: unknown }) | undefined;
  return [
    failure?.reason,
    error?.name,
    error?.message,
    error?.stack,
    error?.code,
    String(error),
    JSON.stringify(error),
  ].join("\n");
}

describe("cart token: what a verify throws never carries the request's credentials (review second-ops-3, -4)", () => {
  const TOKEN = "attacker-chosen-9f3c2a71d0";

  async function cart(verify: NonNullable<CartTokenOptions["verify"]>, request: CallbackRequest) {
    const failures: CallbackFailure[] = [];
    const auth = await createAuth({ cartToken: { verify } });
    const handler = createGetCheckoutCartInfoHandler(() => ({ productsList: [] }), {
      auth,
      onError: (failure) => void failures.push(failure),
    });
    const response = await handler.handle(request);
    return { status: response.status, failures };
  }

  const byGet = { method: "GET", url: `/cart?merchantCartToken=${TOKEN}`, headers: {} };
  const byPost = {
    ...servicePost(TOKEN),
    headers: { "content-type": "application/json" },
  };

  it("the token a verify's error quotes (pg's uuid cast) is masked in onError's copy", async () => {
    for (const request of [byGet, byPost]) {
      const { status, failures } = await cart(async (token) => {
        // What pg rejects with for `… WHERE id = $1::uuid` given a token that is no UUID.
        throw Object.assign(new Error(`invalid input syntax for type uuid: "${token}"`), {
          code: `22P02 ${token}`,
        });
      }, request);
      expect(status, request.method).toBe(500);
      expect(failures).toHaveLength(1);
      const text = shown(failures[0]);
      expect(text, request.method).toMatch(/invalid input syntax for type uuid/);
      expect(text, request.method).not.toContain(TOKEN);
    }
  });

  it("so is the token quoted URL-encoded or JSON-escaped (the request's URL, a JSON log line)", async () => {
    const token = 'cart "7" /é+ab';
    const request = {
      method: "GET",
      url: `/cart?merchantCartToken=${encodeURIComponent(token)}`,
      headers: {},
    };
    const { status, failures } = await cart((_token, req) => {
      throw new Error(`lookup ${req.url.href} ${JSON.stringify({ token: _token })}`);
    }, request);
    expect(status).toBe(500);
    const text = shown(failures[0]);
    expect(text).toMatch(/lookup/);
    expect(text).not.toContain(encodeURIComponent(token));
    expect(text).not.toContain(JSON.stringify(token).slice(1, -1));
  });

  it("and form-encoded or JSON-escaped with \\/ (the spellings the session values share, review privacy-1)", async () => {
    const token = "Kq9t 7/é+ab==";
    const request = {
      method: "GET",
      url: `/cart?merchantCartToken=${encodeURIComponent(token)}`,
      headers: {},
    };
    const { status, failures } = await cart((given) => {
      const form = encodeURIComponent(given).replace(/%20/g, "+");
      const slashed = JSON.stringify(given).slice(1, -1).replace(/\//g, "\\/");
      throw new Error(`lookup token=${form} body {"token":"${slashed}"}`);
    }, request);
    expect(status).toBe(500);
    const text = shown(failures[0]);
    expect(text).toMatch(/lookup token=\*\*\* body/);
    expect(text).not.toContain("Kq9t");
  });

  it("the URL-parameter token and the request's other credentials (header secret, URL secret, Basic) are masked too", async () => {
    const failures: CallbackFailure[] = [];
    const basic = { username: "svc-user", password: "b4sic-Pa55word" };
    const auth = await createAuth({
      callbacks: {
        SendOrderToMerchant: {
          cartToken: {
            parameter: "t",
            verify: (token, request) => {
              throw new Error(
                `down: token=${token} url=${request.url.href} auth=${request.headers.get("authorization")} secret=${request.headers.get("x-callback-secret")} basic=${atob(String(request.headers.get("authorization")).slice(6))}`,
              );
            },
          },
          headerSecret: { name: "x-callback-secret", value: "h3ader-secret-value" },
          urlSecret: { parameter: "key", value: "url-secret-value-77" },
          basic,
        },
      },
    });
    const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "1" }), {
      auth,
      onError: (failure) => void failures.push(failure),
    });
    const authorization = `Basic ${btoa(`${basic.username}:${basic.password}`)}`;
    const response = await handler.handle({
      method: "POST",
      url: `/x?t=${TOKEN}&key=url-secret-value-77`,
      headers: {
        "content-type": "application/json",
        authorization,
        "x-callback-secret": "h3ader-secret-value",
      },
      body: "{}",
    });
    expect(response.status).toBe(500);
    const text = shown(failures[0]);
    expect(text).toMatch(/down: token=/);
    for (const secret of [
      TOKEN,
      "url-secret-value-77",
      "h3ader-secret-value",
      authorization.slice(6),
      basic.password,
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it("a verify that refuses by throwing the library's AuthenticationError is a 401, its text masked", async () => {
    for (const request of [byGet, byPost]) {
      const { status, failures } = await cart((token) => {
        throw new AuthenticationError(`unknown cart ${token}`);
      }, request);
      expect([status, failures.map((failure) => failure.kind)], request.method).toEqual([
        401,
        ["unauthorized"],
      ]);
      const text = shown(failures[0]);
      expect(text, request.method).toMatch(/unknown cart/);
      expect(text, request.method).not.toContain(TOKEN);
    }
  });
});

// Review amp AMP-6: the cart's query was read with `searchParams.get(key)` once per distinct key,
// O(k²) before `verify` runs (no credentials needed). One pass now, the first value winning.
describe("the cart query, read in one pass", () => {
  it("keeps the first value of a repeated parameter", async () => {
    const outcome = await call(get(`merchantCartToken=${VALID}&a=1&merchantCartToken=x&a=2&b=3`));
    expect(outcome.status).toBe(200);
    expect(outcome.seen).toBe(VALID);
    expect(JSON.parse(outcome.payloadText ?? "{}")).toMatchObject({ a: "1", b: "3" });
  });

  it("does not look each parameter up again (a lookup is a scan of the whole query)", async () => {
    const params = Array.from({ length: 1000 }, (_, i) => `p${i.toString(36)}=`).join("&");
    const lookups = vi.spyOn(URLSearchParams.prototype, "get");
    try {
      const outcome = await call(get(`merchantCartToken=nope&${params}`));
      expect(outcome.status).toBe(401);
      // Once per parameter before (1,001 scans of 1,001 pairs); none is needed.
      expect(lookups.mock.calls.length).toBeLessThan(20);
    } finally {
      lookups.mockRestore();
    }
  });
});
