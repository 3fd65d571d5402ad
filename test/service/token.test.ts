// The token of 5.2: shared, refreshed once for many callers, replayed once after a refusal,
// never remembered when the refresh failed, shared between instances through a cache.
import { describe, expect, it, vi } from "vitest";
import {
  type CachedToken,
  memoryTokenCache,
  ServiceAuthenticationError,
  ServiceRateLimitError,
  ServiceServerError,
  ServiceTimeoutError,
  type TokenCache,
} from "../../src/service/index.js";
import { TOKEN_CACHE_TIMEOUT_MS, usableUntil } from "../../src/service/token.js";
import {
  clientFor,
  expectNoSecrets,
  recorder,
  rejectionOf,
  renderings,
  startSimulator,
} from "./helpers.js";

const rates = { amount: 10, currencyCode: "EUR", destinationCountry: "US" } as const;

function jwtWith(exp: number, iat?: number): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256" })}.${part({ exp, iat })}.sig`;
}

describe("token provider", () => {
  it("fetches one token for 50 concurrent calls", async () => {
    const simulator = await startSimulator();
    const client = clientFor(simulator);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => client.getShippingDetailsExtended(rates)),
    );
    expect(results).toHaveLength(50);
    expect(simulator.tokensIssued).toBe(1);
    expect(simulator.count("getAuthenticationToken")).toBe(1);
    const sent = new Set(
      simulator.requestsOf("getShippingDetailsExtended").map((r) => r.headers.authorization),
    );
    expect(sent.size).toBe(1);
  });

  it("refreshes once and replays the call once after the service refuses the token", async () => {
    const simulator = await startSimulator();
    const { hooks, events } = recorder();
    const client = clientFor(simulator, { hooks });
    await client.calculateBillingSummary({
      subscriptionId: "SUB-PHYSICAL-1",
      currencyCode: "EUR",
      products: [{ code: "SKU-1", quantity: 1, price: 10 }],
    });
    simulator.revokeTokens();
    const result = await client.calculateBillingSummary({
      subscriptionId: "SUB-DIGITAL-1",
      currencyCode: "EUR",
      products: [{ code: "SKU-1", quantity: 1, price: 10 }],
    });
    expect(result.calculated).toBe(true);
    expect(simulator.tokensIssued).toBe(2);
    const second = simulator.requestsOf("calculateBillingSummary").slice(1);
    expect(second.map((r) => r.status)).toEqual([401, 200]);
    expect(second[0]?.headers.authorization).not.toBe(second[1]?.headers.authorization);
    // The replay is the same operation: the same Idempotency-Key.
    expect(second[1]?.headers["idempotency-key"]).toBe(second[0]?.headers["idempotency-key"]);
    expect(events.retries.map((e) => [e.reason, e.code])).toEqual([
      ["token-refresh", "UNAUTHORIZED"],
    ]);
  });

  it("replays only once: a second refusal is a ServiceAuthenticationError", async () => {
    const simulator = await startSimulator();
    simulator.fail("getShippingDetailsExtended", { status: 401 }, { status: 401 });
    const error = await rejectionOf(clientFor(simulator).getShippingDetailsExtended(rates));
    expect(error).toBeInstanceOf(ServiceAuthenticationError);
    expect(error).toMatchObject({ status: 401, attempts: 2 });
    expect(simulator.count("getShippingDetailsExtended")).toBe(2);
    expect(simulator.tokensIssued).toBe(2);
  });

  it("shares one refresh among 50 calls refused at once", async () => {
    const simulator = await startSimulator();
    const client = clientFor(simulator);
    await client.getShippingDetailsExtended(rates);
    simulator.revokeTokens();
    await Promise.all(Array.from({ length: 50 }, () => client.getShippingDetailsExtended(rates)));
    expect(simulator.tokensIssued).toBe(2);
  });

  it("does not keep a failed refresh: the next call asks again", async () => {
    const simulator = await startSimulator();
    simulator.fail("getAuthenticationToken", { status: 503 }, { status: 503 }, { status: 503 });
    const client = clientFor(simulator);
    const error = await rejectionOf(client.getShippingDetailsExtended(rates));
    expect(error).toBeInstanceOf(ServiceServerError);
    // The call's own error, counting the token request's attempts; that request's error is its cause.
    expect(error).toMatchObject({
      operation: "getShippingDetailsExtended",
      status: 503,
      attempts: 3,
    });
    expect((error as Error).cause).toMatchObject({
      operation: "getAuthenticationToken",
      attempts: 3,
    });
    expect(simulator.count("getShippingDetailsExtended")).toBe(0);
    await client.getShippingDetailsExtended(rates);
    expect(simulator.count("getAuthenticationToken")).toBe(4);
    expect(simulator.tokensIssued).toBe(1);
  });

  it("a refused password is TOKEN_REFUSED, is not retried, and is asked again on the next call", async () => {
    const simulator = await startSimulator();
    const client = clientFor(simulator, {
      credentials: { userName: simulator.credentials.userName, password: "wrong-password-9" },
    });
    for (let call = 1; call <= 2; call++) {
      const error = await rejectionOf(client.getShippingDetailsExtended(rates));
      expect(error).toBeInstanceOf(ServiceAuthenticationError);
      expect(error).toMatchObject({ code: "TOKEN_REFUSED", status: 400, attempts: 1 });
      expect((error as Error).message).toContain("Password");
      expect((error as Error).message).not.toContain("wrong-password-9");
      expect(simulator.count("getAuthenticationToken")).toBe(call);
    }
  });

  // Review amp AMP-8: the field names of a refused token request were all joined, uncut: 10,000
  // names made a description of 108,930 characters (README: cut to 1,000).
  it("a token refusal naming 10,000 fields is described by its first few, cut to 1,000 characters", async () => {
    const simulator = await startSimulator();
    const errors: Record<string, string[]> = {};
    for (let i = 0; i < 10_000; i++) errors[`Field${i}`] = ["bad"];
    const title = "One or more validation errors occurred.";
    simulator.fail("getAuthenticationToken", { status: 400, body: { title, errors } });
    const client = clientFor(simulator);
    const error = (await rejectionOf(client.getShippingDetailsExtended(rates))) as Error & {
      code: string;
      description: string;
    };
    expect(error.code).toBe("TOKEN_REFUSED");
    expect(error.description.length).toBeLessThanOrEqual(1_001);
    expect(error.description).toBe(
      `${title} (${Array.from({ length: 10 }, (_, i) => `Field${i}`).join(", ")}, …)`,
    );
    expect(error.message.length).toBeLessThan(2_000);
  });

  // Review C C6: every waiter of a failed refresh got one shared error object, naming
  // getAuthenticationToken: what one caller wrote on it, every other one saw.
  it("gives each call waiting on a failed refresh an error of its own, the refresh's as cause", async () => {
    const simulator = await startSimulator();
    const body = { title: "bad", errors: { Password: ["x"] } };
    simulator.fail("getAuthenticationToken", { status: 400, body });
    const client = clientFor(simulator);
    const billing = {
      subscriptionId: "SUB-PHYSICAL-1",
      currencyCode: "EUR",
      products: [{ code: "SKU-1", quantity: 1, price: 10 }],
    };
    const settled = await Promise.allSettled([
      ...Array.from({ length: 4 }, () => client.getShippingDetailsExtended(rates)),
      client.calculateBillingSummary(billing),
    ]);
    const errors = settled.map((result) => (result as PromiseRejectedResult).reason as Error);
    expect(simulator.count("getAuthenticationToken")).toBe(1);
    expect(new Set(errors).size).toBe(5);
    errors.forEach((error, index) => {
      expect(error).toBeInstanceOf(ServiceAuthenticationError);
      expect(error).toMatchObject({
        code: "TOKEN_REFUSED",
        status: 400,
        attempts: 1,
        operation: index < 4 ? "getShippingDetailsExtended" : "calculateBillingSummary",
      });
      expect(error.message).toContain("Password");
      expect(error.cause).toBe(errors[0]?.cause);
    });
    expect(errors[0]?.cause).toMatchObject({
      operation: "getAuthenticationToken",
      code: "TOKEN_REFUSED",
    });
    expectNoSecrets(errors.flatMap(renderings), [simulator.credentials.password]);
    // What one caller writes on its error, the others do not see.
    (errors[0] as Error).message += " [seen by caller 1]";
    expect(errors[1]?.message).not.toContain("caller 1");
  });

  it("refreshes before the JWT's exp, so the service never sees an expired token", async () => {
    const simulator = await startSimulator({ tokenLifetimeMs: 2000 });
    const client = clientFor(simulator);
    await client.getShippingDetailsExtended(rates);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(2);
    expect(simulator.requests.filter((r) => r.status === 401)).toEqual([]);
  });

  // Review C C1: the lifetime was `exp` read against this machine's clock. With this clock 20 min
  // ahead of the service's, a fresh token looked expired: a token request per call, none cached.
  it("counts a token's lifetime from when it came, whatever the service's clock says", async () => {
    const simulator = await startSimulator();
    simulator.advanceClock(-20 * 60_000); // the service's clock is 20 min behind this one
    const tokenCache = memoryTokenCache();
    const first = clientFor(simulator, { tokenCache });
    for (let call = 0; call < 5; call++) await first.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    // Another instance takes it from the shared cache rather than asking for its own.
    await clientFor(simulator, { tokenCache }).getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    const statuses = simulator.requestsOf("getShippingDetailsExtended").map((r) => r.status);
    expect(statuses).toEqual(Array(6).fill(200));
  });

  // Second read S1: with `exp - iat` taken as the lifetime whatever its sign, a JWT whose `iat`
  // is in ms (exp in s) or not before its `exp` got a lifetime of 0: a token request per call.
  it("a JWT whose exp is not after its iat (iat in ms, say) lives TTLInMinutes, not 0", async () => {
    const s = Math.floor(Date.now() / 1000);
    const odd = {
      "iat in ms": { iat: Date.now(), exp: s + 900 },
      "iat = exp": { iat: s + 900, exp: s + 900 },
      "iat after exp": { iat: s + 901, exp: s + 900 },
    };
    for (const [label, claims] of Object.entries(odd)) {
      const simulator = await startSimulator();
      // The service's token, handed to the client with these claims, and swapped back on the way out.
      const real = new Map<string, string>();
      const oddClaims = async (input: string, init: RequestInit) => {
        const headers = new Headers(init.headers);
        const sent = headers.get("authorization")?.replace(/^Bearer /, "");
        const original = sent === undefined ? undefined : real.get(sent);
        if (original !== undefined) headers.set("authorization", `Bearer ${original}`);
        const response = await fetch(input, { ...init, headers });
        if (!input.includes("GetAuthenticationToken") || !response.ok) return response;
        const body = (await response.json()) as { Token: string };
        const token = jwtWith(claims.exp, claims.iat);
        real.set(token, body.Token);
        return Response.json({ ...body, Token: token }, { status: response.status });
      };
      const client = clientFor(simulator, { fetch: oddClaims });
      for (let call = 0; call < 5; call++) await client.getShippingDetailsExtended(rates);
      expect(simulator.tokensIssued, label).toBe(1);
      expect(real.size, label).toBe(1);
      const statuses = simulator.requestsOf("getShippingDetailsExtended").map((r) => r.status);
      expect(statuses, label).toEqual(Array(5).fill(200));
    }
  });

  it("shares a token between two clients through a cache, and keeps working when the cache fails", async () => {
    const simulator = await startSimulator();
    const tokenCache = memoryTokenCache();
    await clientFor(simulator, { tokenCache }).getShippingDetailsExtended(rates);
    await clientFor(simulator, { tokenCache }).getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);

    const broken: TokenCache = {
      get: () => Promise.reject(new Error("cache down")),
      set: () => {
        throw new Error("cache down");
      },
    };
    await clientFor(simulator, { tokenCache: broken }).getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(2);
  });

  it("instances sharing a cache: one revocation costs one new token in all, not one each", async () => {
    const simulator = await startSimulator();
    const tokenCache = memoryTokenCache();
    const clients = Array.from({ length: 5 }, () => clientFor(simulator, { tokenCache }));
    for (const client of clients) await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    simulator.revokeTokens();
    // The first gets a 401 and stores T2; each next one gets a 401 for T1 and must not delete T2.
    for (const client of clients) await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(2);
    const after = simulator.requestsOf("getShippingDetailsExtended").slice(5);
    const answered = after.filter((r) => r.status === 200).map((r) => r.headers.authorization);
    expect(answered).toHaveLength(5);
    expect(new Set(answered).size).toBe(1);
  });

  // Review C C5: refused at the same moment, instances read the cache between the first one's
  // delete and its set, and each may fetch its own token. The README says so; this is the bound.
  it("instances refused at the same moment: at most one new token each, and every call succeeds", async () => {
    const simulator = await startSimulator();
    const tokenCache = memoryTokenCache();
    const clients = Array.from({ length: 5 }, () => clientFor(simulator, { tokenCache }));
    for (const client of clients) await client.getShippingDetailsExtended(rates);
    simulator.revokeTokens();
    const calls = clients.flatMap((client) => [
      client.getShippingDetailsExtended(rates),
      client.getShippingDetailsExtended(rates),
    ]);
    await expect(Promise.all(calls)).resolves.toHaveLength(10);
    expect(simulator.tokensIssued - 1).toBeGreaterThanOrEqual(1);
    expect(simulator.tokensIssued - 1).toBeLessThanOrEqual(clients.length);
  });

  it("still forgets the refused token in a shared cache, so a new instance does not try it", async () => {
    const simulator = await startSimulator();
    const tokenCache = memoryTokenCache();
    const key = "shared-token";
    const first = clientFor(simulator, { tokenCache, tokenCacheKey: key });
    await first.getShippingDetailsExtended(rates);
    expect(await tokenCache.get(key)).toMatchObject({ token: expect.any(String) });
    simulator.fail("getShippingDetailsExtended", { status: 401 });
    simulator.fail("getAuthenticationToken", { status: 503 }, { status: 503 }, { status: 503 });
    await rejectionOf(first.getShippingDetailsExtended(rates));
    expect(await tokenCache.get(key)).toBeUndefined();
  });

  it("does not take a refused token back from the shared cache", async () => {
    const simulator = await startSimulator();
    const entries = new Map<string, CachedToken>();
    const tokenCache: TokenCache = {
      get: async (key) => entries.get(key),
      set: async (key, value) => void entries.set(key, value),
      // No delete: a cache that cannot forget must not hand the refused token back either.
    };
    const first = clientFor(simulator, { tokenCache });
    await first.getShippingDetailsExtended(rates);
    simulator.revokeTokens();
    await first.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(2);
    const statuses = simulator.requestsOf("getShippingDetailsExtended").map((r) => r.status);
    expect(statuses).toEqual([200, 401, 200]);
  });

  it("treats what a cache should not hold (null, text, no token, no expiresAt) as empty", async () => {
    const simulator = await startSimulator();
    const garbage: unknown[] = [
      null,
      JSON.stringify({ token: "abc", expiresAt: Date.now() + 60_000 }),
      { token: 42, expiresAt: Number.POSITIVE_INFINITY },
      { token: "", expiresAt: Date.now() + 60_000 },
      { token: "opaque", expiresAt: "tomorrow" },
    ];
    for (const entry of garbage) {
      const tokenCache: TokenCache = { get: () => entry as CachedToken, set: () => undefined };
      await clientFor(simulator, { tokenCache }).getShippingDetailsExtended(rates);
    }
    expect(simulator.tokensIssued).toBe(garbage.length);
    // Not one request went out with the cache's junk, to be refused and replayed.
    const statuses = simulator.requestsOf("getShippingDetailsExtended").map((r) => r.status);
    expect(statuses).toEqual(garbage.map(() => 200));
  });

  // Review C C1: an entry was capped at the JWT's exp read on this clock, so an instance whose clock
  // is ahead of the service's threw away every shared token. The service's 401 is what counts.
  it("uses a cached entry until its expiresAt; one the service no longer takes is refused once and replaced", async () => {
    const simulator = await startSimulator();
    const stale = jwtWith(Date.now() / 1000 - 60, Date.now() / 1000 - 960);
    let held: CachedToken | undefined = { token: stale, expiresAt: Date.now() + 3_600_000 };
    const tokenCache: TokenCache = {
      get: () => held,
      set: (_key, value) => {
        held = value;
      },
      delete: () => {
        held = undefined;
      },
    };
    const client = clientFor(simulator, { tokenCache });
    await client.getShippingDetailsExtended(rates);
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    const statuses = simulator.requestsOf("getShippingDetailsExtended").map((r) => r.status);
    expect(statuses).toEqual([401, 200, 200]);
    expect(held?.token).not.toBe(stale);
  });

  it("does not wait on a cache that never answers (the shared refresh would hold up every call)", async () => {
    const simulator = await startSimulator();
    const never = () => new Promise<never>(() => undefined);
    const tokenCache: TokenCache = { get: never, set: never };
    const client = clientFor(simulator, { tokenCache });
    const started = Date.now();
    await client.getShippingDetailsExtended(rates);
    // One bounded wait for the get, one for the set; then the cached token serves the next call.
    expect(Date.now() - started).toBeLessThan(2 * TOKEN_CACHE_TIMEOUT_MS + 1000);
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
  });

  it("stops waiting for a token at the call's deadline, and the shared refresh goes on", async () => {
    const simulator = await startSimulator();
    simulator.fail("getAuthenticationToken", { delayMs: 1500 });
    const client = clientFor(simulator, { timeoutMs: 5000 });
    const started = Date.now();
    const impatient = client.getShippingDetailsExtended(rates, { deadlineMs: 200 });
    const patient = client.getShippingDetailsExtended(rates);
    const error = await rejectionOf(impatient);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect(error).toMatchObject({ code: "DEADLINE_EXCEEDED", attempts: 0 });
    await expect(patient).resolves.toHaveLength(1);
    expect(simulator.tokensIssued).toBe(1);
    expect(simulator.count("getShippingDetailsExtended")).toBe(1);
  });

  it("lets one waiter give up without failing the others' shared refresh", async () => {
    const simulator = await startSimulator();
    simulator.fail("getAuthenticationToken", { delayMs: 200 });
    const client = clientFor(simulator);
    const controller = new AbortController();
    const aborted = client.getShippingDetailsExtended(rates, { signal: controller.signal });
    const waiting = client.getShippingDetailsExtended(rates);
    controller.abort(new Error("caller gave up"));
    await expect(aborted).rejects.toThrow("caller gave up");
    await expect(waiting).resolves.toHaveLength(1);
    expect(simulator.tokensIssued).toBe(1);
  });
});

describe("token expiry", () => {
  const now = 1_000_000_000_000;
  const at = (ms: number) => ms / 1000;

  it("uses the lifetime the service states, TTLInMinutes or exp - iat, counted from receipt, minus the margin", () => {
    // Issued 10 minutes ago on the service's clock, good for 10 minutes: what counts is the 10.
    const tenMinutes = jwtWith(at(now - 600_000 + 600_000), at(now - 600_000));
    expect(usableUntil({ token: tenMinutes, ttlMinutes: 15 }, now, 60_000)).toBe(now + 540_000);
    expect(usableUntil({ token: tenMinutes, ttlMinutes: 5 }, now, 60_000)).toBe(now + 240_000);
    // No iat: exp is a time on the service's clock, not a lifetime; TTLInMinutes, 15 by default.
    const expOnly = jwtWith(at(now - 60_000));
    expect(usableUntil({ token: expOnly, ttlMinutes: 15 }, now, 60_000)).toBe(now + 840_000);
    expect(usableUntil({ token: "opaque", ttlMinutes: undefined }, now, 60_000)).toBe(
      now + 840_000,
    );
    expect(usableUntil({ token: "a.%%%.c", ttlMinutes: 1 }, now, 60_000)).toBe(now + 30_000);
  });

  it("keeps at most half a short lifetime as margin", () => {
    const fourSeconds = jwtWith(at(now + 4000), at(now));
    expect(usableUntil({ token: fourSeconds, ttlMinutes: 15 }, now, 60_000)).toBe(now + 2000);
  });

  it("reads exp - iat only when it is positive and both are in seconds, else TTLInMinutes", () => {
    const ttl = now + 840_000;
    const claims = {
      "exp before iat": jwtWith(at(now - 1000), at(now)),
      "exp = iat": jwtWith(at(now), at(now)),
      "iat in ms": jwtWith(at(now + 600_000), now),
      "exp in ms": jwtWith(now + 600_000, at(now)),
      "both in ms": jwtWith(now + 600_000, now),
    };
    for (const [label, token] of Object.entries(claims)) {
      expect(usableUntil({ token, ttlMinutes: 15 }, now, 60_000), label).toBe(ttl);
    }
  });
});

describe("the token request itself", () => {
  it("never waits for a token, even when a JavaScript caller lists it in `jwt`", async () => {
    const simulator = await startSimulator();
    const client = clientFor(simulator, {
      jwt: { getAuthenticationToken: true } as never,
      deadlineMs: 5_000,
    });
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    expect(
      simulator.requestsOf("getAuthenticationToken")[0]?.headers.authorization,
    ).toBeUndefined();
  });
});

// Review c3 D2, the value left unchecked at creation: fetch's TypeError quoted the token.
describe("a token a header cannot carry", () => {
  it("is a ServiceError that does not quote it, nothing is sent, and it is not used again", async () => {
    const simulator = await startSimulator();
    const bad = `${jwtWith(Date.now() / 1000 + 3600)}\nX-Injected: 1`;
    const cache: TokenCache = {
      get: () => ({ token: bad, expiresAt: Date.now() + 3_600_000 }),
      set: () => undefined,
    };
    const client = clientFor(simulator, { tokenCache: cache });
    const error = await rejectionOf(client.getShippingDetailsExtended(rates));
    expect(error).toBeInstanceOf(ServiceServerError);
    expect(error).toMatchObject({ code: "INVALID_RESPONSE", attempts: 0 });
    expectNoSecrets(renderings(error), [bad.split(".")[1] ?? bad, "X-Injected"]);
    expect(simulator.requestsOf("getShippingDetailsExtended")).toEqual([]);
    // The next call does not take it back: it asks the service for a token of its own.
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
  });

  // Review r3 R2: Headers accepts these, undici's dispatcher refuses them ("invalid header"): a
  // NETWORK_ERROR retried three times, and the token kept, so every call did the same.
  it.each([
    ["\\x01", "\u0001"],
    ["a vertical tab", "\u000b"],
    ["DEL", "\u007f"],
  ])("one with %s: the same, not a network error", async (_label, character) => {
    const simulator = await startSimulator();
    const jwt = jwtWith(Date.now() / 1000 + 3600);
    const bad = `${jwt.slice(0, -4)}${character}${jwt.slice(-4)}`;
    const deleted: string[] = [];
    let held: CachedToken | undefined = { token: bad, expiresAt: Date.now() + 3_600_000 };
    const cache: TokenCache = {
      get: () => held,
      set: (_key, value) => {
        held = value;
      },
      delete: (key) => {
        deleted.push(key);
        held = undefined;
      },
    };
    const client = clientFor(simulator, { tokenCache: cache });
    const error = await rejectionOf(client.getShippingDetailsExtended(rates));
    expect(error).toBeInstanceOf(ServiceServerError);
    expect(error).toMatchObject({ code: "INVALID_RESPONSE", attempts: 0 });
    expectNoSecrets(renderings(error), [jwt.split(".")[1] ?? jwt]);
    expect(simulator.requestsOf("getShippingDetailsExtended")).toEqual([]);
    // Dropped from the shared cache (invalidate deletes in the background), so no instance takes
    // it again.
    await vi.waitFor(() => expect(deleted).toHaveLength(1));
    await client.getShippingDetailsExtended(rates);
    expect(simulator.tokensIssued).toBe(1);
    expect(held?.token).not.toBe(bad);
  });
});

// Review r3 R1: since the 5xx rule of c3 D5, a token request refused in a 5xx was a retried
// ServiceServerError TOKEN_REFUSED: the password sent three times, the class against the table.
describe("a refused token request is TOKEN_REFUSED, an authentication failure, at any status", () => {
  const refusal = { IsSuccess: false, Reason: "Invalid user name or password" };
  it.each([200, 400, 500, 503])("at %i: ServiceAuthenticationError, asked once", async (status) => {
    const simulator = await startSimulator();
    simulator.fail("getAuthenticationToken", ...Array(3).fill({ status, body: refusal }));
    const error = await rejectionOf(clientFor(simulator).getShippingDetailsExtended(rates));
    expect(error).toBeInstanceOf(ServiceAuthenticationError);
    expect(error).toMatchObject({
      kind: "authentication",
      code: "TOKEN_REFUSED",
      status,
      attempts: 1,
      mayHaveBeenApplied: false,
    });
    // The password is not sent again, and nothing was sent with a token.
    expect(simulator.count("getAuthenticationToken")).toBe(1);
    expect(simulator.requestsOf("getShippingDetailsExtended")).toEqual([]);
  });

  it("a 5xx that names the service failing (4.9's INTERNAL_ERROR) is still retried", async () => {
    const simulator = await startSimulator();
    const failing = { error: { code: "INTERNAL_ERROR", message: "unexpected error" } };
    simulator.fail("getAuthenticationToken", ...Array(2).fill({ status: 500, body: failing }));
    await clientFor(simulator).getShippingDetailsExtended(rates);
    expect(simulator.count("getAuthenticationToken")).toBe(3);
  });
});

// Review network-1: a 5xx naming UNAUTHORIZED (7.1's body, "carrier API refused our credentials")
// was read as the service refusing the token: the client fetched a new one and sent the dispatch,
// the refund or the void a second time, and the call resolved as a plain success. A 5xx is the
// service failing midway; only a refusal that proves nothing was applied (a 401, or UNAUTHORIZED
// in a 4xx or inside a 2xx) is replayed for an operation that is never retried.
describe("a 5xx naming UNAUTHORIZED on an operation that is never retried", () => {
  const jwtOperations = [
    "dispatchConsolidatedShipment",
    "voidParcel",
    "createOrderRefund",
  ] as const;
  const jwt = { dispatchConsolidatedShipment: true, voidParcel: true, createOrderRefund: true };
  const refund = {
    OrderId: "GE-1001",
    RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
  } as const;
  const answers = [
    [
      "500, 7.1's body",
      500,
      {
        error: "Internal",
        code: "UNAUTHORIZED",
        description: "carrier API refused our credentials",
      },
    ],
    ["502, a code alone", 502, { code: "UNAUTHORIZED" }],
    ["500, 4.9's body", 500, { error: { code: "UNAUTHORIZED", message: "downstream refused" } }],
  ] as const;

  it.each(answers)(
    "dispatch answered %s: sent once, in doubt, no replay",
    async (_l, status, body) => {
      const simulator = await startSimulator({ jwtOperations: [...jwtOperations] });
      simulator.fail("dispatchConsolidatedShipment", { status, body });
      const { hooks, events } = recorder();
      const client = clientFor(simulator, { jwt, hooks });
      const error = await rejectionOf(
        client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001", "GE-1002"] }),
      );
      expect(simulator.count("dispatchConsolidatedShipment")).toBe(1);
      expect(error).toBeInstanceOf(ServiceAuthenticationError);
      expect(error).toMatchObject({
        code: "UNAUTHORIZED",
        status,
        mayHaveBeenApplied: true,
        attempts: 1,
      });
      expect((error as Error).message).toMatch(/never retried and may have been applied/);
      expect(events.retries).toEqual([]);
      // The token is not used again: the next call gets a new one (the refusal may have been ours).
      await client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001", "GE-1002"] });
      expect(simulator.tokensIssued).toBe(2);
    },
  );

  it("refund answered 500 UNAUTHORIZED: sent once, in doubt", async () => {
    const simulator = await startSimulator({ jwtOperations: [...jwtOperations] });
    simulator.fail("createOrderRefund", { status: 500, body: { code: "UNAUTHORIZED" } });
    const client = clientFor(simulator, { jwt });
    const error = await rejectionOf(client.createOrderRefund(refund));
    expect(simulator.count("createOrderRefund")).toBe(1);
    expect(error).toMatchObject({ code: "UNAUTHORIZED", status: 500, mayHaveBeenApplied: true });
  });

  it("void answered 500 UNAUTHORIZED, then C104 on the caller's repeat: that names the call in doubt", async () => {
    const simulator = await startSimulator({ jwtOperations: [...jwtOperations] });
    simulator.fail("voidParcel", { status: 500, body: { code: "UNAUTHORIZED" } }, { code: "C104" });
    const client = clientFor(simulator, { jwt });
    const parcel = { OrderId: "GE-1001", ParcelCode: "P-1001-1" } as const;
    const first = await rejectionOf(client.voidParcel(parcel));
    expect(simulator.count("voidParcel")).toBe(1);
    expect(first).toMatchObject({ code: "UNAUTHORIZED", mayHaveBeenApplied: true });
    const again = (await rejectionOf(client.voidParcel(parcel))) as ServiceAuthenticationError;
    expect(again).toMatchObject({ code: "C104", mayHaveBeenApplied: true });
    expect(again.earlierInDoubt).toBe(first);
  });

  it("a 401, UNAUTHORIZED in a 403 or inside a 200 proves nothing was done: refreshed and replayed once", async () => {
    for (const failure of [
      { status: 401 },
      { status: 403, body: { code: "UNAUTHORIZED", error: "Unauthorized" } },
      { status: 200, body: { IsSuccess: false, ErrorCode: "UNAUTHORIZED" } },
    ]) {
      const simulator = await startSimulator({ jwtOperations: [...jwtOperations] });
      simulator.fail("dispatchConsolidatedShipment", failure);
      const client = clientFor(simulator, { jwt });
      await client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001", "GE-1002"] });
      expect(simulator.count("dispatchConsolidatedShipment")).toBe(2);
      expect(simulator.tokensIssued).toBe(2);
    }
  });

  // Review second-client-3: the README says so ("in another 4xx but a 429").
  it("a 429 naming UNAUTHORIZED is a rate limit: a dispatch is sent once, not refreshed nor replayed", async () => {
    const simulator = await startSimulator({ jwtOperations: [...jwtOperations] });
    simulator.fail("dispatchConsolidatedShipment", { status: 429, body: { code: "UNAUTHORIZED" } });
    const client = clientFor(simulator, { jwt });
    const error = await rejectionOf(client.dispatchConsolidatedShipment({ OrderIds: ["GE-1001"] }));
    expect(error).toBeInstanceOf(ServiceRateLimitError);
    expect(error).toMatchObject({ status: 429 });
    expect(simulator.count("dispatchConsolidatedShipment")).toBe(1);
    expect(simulator.tokensIssued).toBe(1);
  });

  it("an operation that is retried is still refreshed and replayed after a 5xx naming UNAUTHORIZED", async () => {
    const simulator = await startSimulator();
    simulator.fail("getShippingDetailsExtended", { status: 500, body: { code: "UNAUTHORIZED" } });
    await clientFor(simulator).getShippingDetailsExtended(rates);
    expect(simulator.count("getShippingDetailsExtended")).toBe(2);
    expect(simulator.tokensIssued).toBe(2);
  });
});

describe("a shared refresh that never settles (review serverless-3)", () => {
  it("is dropped once pending past refreshLostAfterMs: the next get starts another, and later calls get a token", async () => {
    const { TokenProvider } = await import("../../src/service/token.js");
    let issued = 0;
    const provider = new TokenProvider({
      cacheKey: "k",
      refreshLostAfterMs: 100,
      // The first refresh's I/O was dropped with the request that started it (a Worker's):
      // it never settles. The next one answers.
      issue: () =>
        ++issued === 1
          ? new Promise<never>(() => undefined)
          : Promise.resolve({ token: `token-${issued}`, ttlMinutes: 15 }),
    });
    const gaveUp = new AbortController();
    const first = provider.get(gaveUp.signal);
    gaveUp.abort(new Error("deadline"));
    await expect(first).rejects.toThrow("deadline");
    // Within the bound, a caller shares the pending refresh (one token request).
    const sharing = provider.get(AbortSignal.timeout(30));
    await expect(sharing).rejects.toThrow();
    expect(issued).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Before: every later get waited on the first refresh, forever.
    await expect(provider.get()).resolves.toBe("token-2");
    await expect(provider.get()).resolves.toBe("token-2");
    expect(issued).toBe(2);
  });
  it("a dropped refresh that settles after all does not replace the newer token, in memory or in the cache (review second-sls-2)", async () => {
    const { TokenProvider } = await import("../../src/service/token.js");
    const stored: string[] = [];
    const cache = memoryTokenCache();
    const sharing: TokenCache = {
      get: (key) => cache.get(key),
      set: (key, value, ttlMs) => {
        stored.push(value.token);
        return cache.set(key, value, ttlMs);
      },
    };
    const adopted: string[] = [];
    let issued = 0;
    let answerFirst!: () => void;
    const provider = new TokenProvider({
      cacheKey: "k",
      cache: sharing,
      refreshLostAfterMs: 100,
      onToken: (token) => adopted.push(token),
      issue: () => {
        const n = ++issued;
        if (n > 1) return Promise.resolve({ token: `token-${n}`, ttlMinutes: 15 });
        // Slow past the bound (a loop stall, say), yet it answers.
        return new Promise((resolve) => {
          answerFirst = () => resolve({ token: "token-1", ttlMinutes: 15 });
        });
      },
    });
    const first = provider.get();
    await new Promise((resolve) => setTimeout(resolve, 120));
    await expect(provider.get()).resolves.toBe("token-2");
    answerFirst();
    // Its own waiters get what it fetched.
    await expect(first).resolves.toBe("token-1");
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Before: token-1 was adopted last, and written over token-2 in the cache.
    expect(adopted).toEqual(["token-2"]);
    expect(stored).toEqual(["token-2"]);
    expect((await cache.get("k"))?.token).toBe("token-2");
    await expect(provider.get()).resolves.toBe("token-2");
    expect(issued).toBe(2);
  });
});
