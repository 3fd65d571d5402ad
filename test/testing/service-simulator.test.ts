// The service simulator on its own, called with plain fetch: what merchants rely on when they
// test their integration against it.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import {
  createServiceClient,
  type ServiceClientOptions,
  ServiceNetworkError,
  ServiceNotFoundError,
  ServiceTimeoutError,
} from "../../src/service/index.js";
import {
  createServiceSimulator,
  type ServiceSimulator,
  SIMULATED_SUBSCRIPTIONS,
  SIMULATOR_MERCHANT_GUID,
} from "../../src/testing/index.js";
import { ROOT } from "../adapters/support/runtime.js";

const execFileAsync = promisify(execFile);

let simulator: ServiceSimulator | undefined;
afterEach(async () => {
  await simulator?.close();
  simulator = undefined;
});

async function start(options: Parameters<typeof createServiceSimulator>[0] = {}) {
  simulator = await createServiceSimulator(options);
  return simulator;
}

/** A parsed JSON answer, read field by field in the assertions. */
type Json = ReturnType<typeof JSON.parse>;

async function post(
  sim: ServiceSimulator,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await fetch(`${sim.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

async function token(sim: ServiceSimulator): Promise<string> {
  const answer = await post(sim, "/Authentication/GetAuthenticationToken", sim.credentials);
  return answer.body.Token;
}

const billing = {
  subscriptionId: "SUB-PHYSICAL-1",
  merchantGuid: SIMULATOR_MERCHANT_GUID,
  currencyCode: "EUR",
  products: [{ code: "SKU-1", quantity: 1, price: 10 }],
};

describe("createServiceSimulator", () => {
  it("listens on loopback and issues JWTs with TTLInMinutes", async () => {
    const sim = await start();
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const answer = await post(sim, "/Authentication/GetAuthenticationToken", sim.credentials);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ Success: true, TTLInMinutes: 15 });
    const payload = JSON.parse(
      Buffer.from(answer.body.Token.split(".")[1], "base64url").toString(),
    );
    expect(payload.exp - payload.iat).toBe(15 * 60);
    expect(sim.tokensIssued).toBe(1);
  });

  it("refuses wrong credentials with 5.2's validation shape", async () => {
    const sim = await start();
    const wrong = await post(sim, "/Authentication/GetAuthenticationToken", {
      userName: sim.credentials.userName,
      password: "not-the-password",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ status: 400, errors: { Password: [expect.any(String)] } });
    expect(wrong.body.traceId).toEqual(expect.any(String));
    const short = await post(sim, "/Authentication/GetAuthenticationToken", {
      userName: "u",
      password: "short",
    });
    expect(short.body.errors.Password[0]).toMatch(/8 and 50/);
    expect(sim.tokensIssued).toBe(0);
  });

  it("issues a token to a user name outside Latin-1 (its JWT payload is UTF-8), not a 500", async () => {
    const sim = await start({ userName: "Łukasz.Nowak", password: "pw-0123456789" });
    const answer = await post(sim, "/Authentication/GetAuthenticationToken", sim.credentials);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ Success: true, TTLInMinutes: 15 });
    const payload = JSON.parse(
      Buffer.from(answer.body.Token.split(".")[1], "base64url").toString("utf8"),
    );
    expect(payload.sub).toBe("Łukasz.Nowak");
    // The token works: the billing summary reads no UserName header (5.2).
    const summary = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      MerchantGUID: sim.merchantGuid,
      Authorization: `Bearer ${answer.body.Token}`,
      "Idempotency-Key": crypto.randomUUID(),
    });
    expect(summary.status).toBe(200);
  });

  it("expires tokens on its clock, and revokes them on request", async () => {
    const sim = await start();
    const headers = (t: string) => ({
      MerchantGUID: sim.merchantGuid,
      Authorization: `Bearer ${t}`,
      UserName: sim.credentials.userName,
    });
    const first = await token(sim);
    const rates = { amount: 1, currencyCode: "EUR" };
    // 5.2: the GUID in the URL of a token call.
    const shipping = `/ShippingDetails/GetShippingDetailsExtended?merchantGUID=${sim.merchantGuid}`;
    expect((await post(sim, shipping, rates, headers(first))).status).toBe(200);
    sim.advanceClock(15 * 60_000 + 1);
    expect((await post(sim, shipping, rates, headers(first))).status).toBe(401);
    const second = await token(sim);
    expect((await post(sim, shipping, rates, headers(second))).status).toBe(200);
    sim.revokeTokens();
    const revoked = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      ...headers(second),
      "Idempotency-Key": crypto.randomUUID(),
    });
    expect(revoked).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
  });

  it("seeds each simulator with its own copies of the subscriptions, yours to change", async () => {
    const sim = await start();
    const seeded = sim.state.subscriptions.get("SUB-PHYSICAL-1") as { type: string };
    seeded.type = "digital";
    expect(sim.state.subscriptions.get("SUB-PHYSICAL-1")).toStrictEqual({ type: "digital" });
    // The exported table stays as it was, for this simulator's next start and every other.
    expect(SIMULATED_SUBSCRIPTIONS["SUB-PHYSICAL-1"].type).toBe("physical");
  });

  it("wants `Bearer` on the billing summary (5.2), and every product priced (2.1)", async () => {
    const sim = await start();
    const bare = await token(sim);
    const path = "/subscriptions/billing-summary/calculate";
    const headers = (authorization: string) => ({
      MerchantGUID: sim.merchantGuid,
      Authorization: authorization,
      "Idempotency-Key": crypto.randomUUID(),
    });
    expect(await post(sim, path, billing, headers(bare))).toMatchObject({
      status: 401,
      body: { code: "UNAUTHORIZED" },
    });
    // The other token operations take the bare token (5.2 does not show their scheme).
    const rates = await post(
      sim,
      `/ShippingDetails/GetShippingDetailsExtended?merchantGUID=${sim.merchantGuid}`,
      { amount: 1, currencyCode: "EUR" },
      { Authorization: bare, UserName: sim.credentials.userName },
    );
    expect(rates.status).toBe(200);
    // Their token goes with the UserName it was issued to: missing or another one is refused.
    for (const userName of [undefined, `${sim.credentials.userName}-other`]) {
      const refused = await post(
        sim,
        `/ShippingDetails/GetShippingDetailsExtended?merchantGUID=${sim.merchantGuid}`,
        { amount: 1, currencyCode: "EUR" },
        userName === undefined
          ? { Authorization: bare }
          : { Authorization: bare, UserName: userName },
      );
      expect(refused.status).toBe(401);
    }
    for (const body of [
      { ...billing, products: [{ code: "SKU-1", quantity: 1 }] },
      { ...billing, products: [{ code: "SKU-1", price: 10 }] },
      { ...billing, shippingAmount: -1 },
    ]) {
      expect(await post(sim, path, body, headers(`Bearer ${bare}`))).toMatchObject({
        status: 422,
        body: { code: "VALIDATION_FAILED" },
      });
    }
    expect((await post(sim, path, billing, headers(`Bearer ${bare}`))).status).toBe(200);
  });

  it("checks the GUID in the MerchantGUID header or the merchantGUID query parameter", async () => {
    const sim = await start();
    const body = { OrderId: "GE-1001", ParcelCode: "P-1001-1" };
    expect((await post(sim, "/Parcel/VoidParcel", body)).status).toBe(401);
    expect(
      (await post(sim, "/Parcel/VoidParcel", body, { MerchantGUID: "someone-else" })).status,
    ).toBe(401);
    const byQuery = await post(
      sim,
      `/Parcel/VoidParcel?MERCHANTGUID=${sim.merchantGuid.toUpperCase()}`,
      body,
    );
    expect(byQuery).toMatchObject({ status: 200, body: { IsSuccess: true } });
  });

  it("wants the GUID in the URL of a token call (5.2), the billing summary excepted (2.1: in its body)", async () => {
    const sim = await start({ jwtOperations: ["getShippingDetailsExtended", "voidParcel"] });
    const auth = {
      Authorization: `Bearer ${await token(sim)}`,
      UserName: sim.credentials.userName,
    };
    const rates = { amount: 1, currencyCode: "EUR" };
    const shipping = "/ShippingDetails/GetShippingDetailsExtended";
    const inHeader = await post(sim, shipping, rates, { ...auth, MerchantGUID: sim.merchantGuid });
    expect(inHeader.status).toBe(401);
    expect(inHeader.body.Message).toMatch(/URL/);
    const wrongInUrl = await post(sim, `${shipping}?merchantGUID=someone-else`, rates, {
      ...auth,
      MerchantGUID: sim.merchantGuid,
    });
    expect(wrongInUrl.status).toBe(401);
    expect(
      (await post(sim, `${shipping}?merchantGUID=${sim.merchantGuid}`, rates, auth)).status,
    ).toBe(200);
    const voided = { OrderId: "GE-1001", ParcelCode: "P-1001-1" };
    const header = { ...auth, MerchantGUID: sim.merchantGuid };
    expect((await post(sim, "/Parcel/VoidParcel", voided, header)).status).toBe(401);
    const billingAnswer = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      ...header,
      "Idempotency-Key": crypto.randomUUID(),
    });
    expect(billingAnswer.status).toBe(200);
  });

  it("answers the same key and body with the same answer, and another body with 409", async () => {
    const sim = await start();
    const headers = {
      MerchantGUID: sim.merchantGuid,
      Authorization: `Bearer ${await token(sim)}`,
      "Idempotency-Key": crypto.randomUUID(),
    };
    const path = "/subscriptions/billing-summary/calculate";
    const first = await post(sim, path, billing, headers);
    const reordered = Object.fromEntries(Object.entries(billing).reverse());
    const again = await post(sim, path, reordered, headers);
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await post(sim, path, { ...billing, currencyCode: "USD" }, headers);
    expect(other).toMatchObject({ status: 409, body: { code: "IDEMPOTENCY_KEY_CONFLICT" } });
    const { "Idempotency-Key": _, ...withoutKey } = headers;
    const missing = await post(sim, path, billing, withoutKey);
    expect(missing).toMatchObject({ status: 422, body: { code: "VALIDATION_FAILED" } });
  });

  it("sends 429 with Retry-After in seconds or as an HTTP date, and any status with a body", async () => {
    const sim = await start();
    const date = new Date("2030-01-01T00:00:00Z");
    sim.fail(
      "locationByIp",
      { status: 429, retryAfter: 3 },
      { status: 503, retryAfter: date },
      { status: 418, body: { x: 1 } },
    );
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    const seconds = await post(sim, path, undefined);
    expect([seconds.status, seconds.headers.get("retry-after")]).toEqual([429, "3"]);
    const dated = await post(sim, path, undefined);
    expect([dated.status, dated.headers.get("retry-after")]).toEqual([
      503,
      "Tue, 01 Jan 2030 00:00:00 GMT",
    ]);
    expect(await post(sim, path, undefined)).toMatchObject({ status: 418, body: { x: 1 } });
    expect((await post(sim, path, undefined)).status).toBe(200);
  });

  it("sends a Date of another realm (a jsdom or vm test environment) as an HTTP date", async () => {
    const sim = await start();
    const foreign = runInNewContext('new Date("2030-01-01T00:00:00Z")') as Date;
    expect(foreign instanceof Date).toBe(false);
    sim.fail("locationByIp", { status: 503, retryAfter: foreign });
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    const dated = await post(sim, path, undefined);
    expect([dated.status, dated.headers.get("retry-after")]).toEqual([
      503,
      "Tue, 01 Jan 2030 00:00:00 GMT",
    ]);
  });

  it("drops connections, answers malformed JSON, delays, and hangs until closed", async () => {
    const sim = await start();
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    sim.fail("*", { drop: true }, { malformed: true }, { delayMs: 150 }, { hang: true });
    await expect(post(sim, path, undefined)).rejects.toThrow();
    const malformed = await post(sim, path, undefined);
    expect([malformed.status, malformed.body]).toEqual([200, '{"IsSuccess": tru']);
    const started = Date.now();
    expect((await post(sim, path, undefined)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const hanging = post(sim, path, undefined).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.count("locationByIp")).toBe(4);
    await sim.close();
    simulator = undefined;
    expect(await hanging).toBeInstanceOf(Error);
  });

  // Review OPT D8: a failure queued under a name no request has never happened, and the retry
  // test written around it passed without ever seeing one.
  it("fail() refuses an operation it does not simulate, naming those it does", async () => {
    const sim = await start();
    for (const name of ["voidParcl", "VoidParcel", "LocationByIP", "", "__proto__"]) {
      const queue = () => sim.fail(name as never, { status: 503 });
      expect(queue, name).toThrow(TypeError);
      expect(queue, name).toThrow(
        /^createServiceSimulator: fail\(\) has no operation ".*"; known: "\*", getAuthenticationToken, calculateBillingSummary, .*voidParcel.*createOrderRefund$/,
      );
    }
    // Nothing was queued: the next request is answered as usual; a known name still fails it.
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    expect((await post(sim, path, undefined)).status).toBe(200);
    sim.fail("locationByIp", { status: 503 });
    expect((await post(sim, path, undefined)).status).toBe(503);
  });

  // closing-29 (fix-r2a left): a misspelt key of a failure (`{ stauts: 503 }`) matched no kind of
  // failure and the request was answered as usual; one beside a known key (`retyAfter`) was left
  // out of the answer. Both passed the retry test written around them without a word.
  it("fail() refuses a misspelt key of a failure, naming the closest, and queues none of them", async () => {
    const sim = await start();
    const known =
      "status, retryAfter, body, headers, code, description, hang, drop, apply, cutOff, stallBody, malformed, delayMs";
    const refused = (message: string | RegExp, ...failures: unknown[]) => {
      const queue = () => sim.fail("locationByIp", ...(failures as never[]));
      expect(queue, String(message)).toThrow(TypeError);
      expect(queue, String(message)).toThrow(message);
    };
    refused(
      `createServiceSimulator: fail() failures[0] has an unknown option "stauts" (known: ${known}); did you mean "status"?`,
      { stauts: 503 },
    );
    refused('failures[0] has an unknown option "retyAfter"', { status: 429, retyAfter: 2 });
    refused('did you mean "retryAfter"?', { status: 429, retyAfter: 2 });
    refused('fail() failures[1] has an unknown option "delay"', { status: 503 }, { delay: 10 });
    refused('did you mean "cutOff"?', Object.assign(Object.create(null), { cutoff: true }));
    refused("createServiceSimulator: fail() failures[0] must be an object", 503);
    refused("createServiceSimulator: fail() failures[1] must be an object", { hang: true }, null);
    // Nothing was queued, not even the good failure before a refused one.
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    expect((await post(sim, path, undefined)).status).toBe(200);
    // Documented keys, undefined ones, a null prototype and the kinds combined: accepted.
    sim.fail(
      "locationByIp",
      { status: 503, retryAfter: undefined, body: undefined, headers: undefined },
      Object.assign(Object.create(null), { status: 502 }),
      { delayMs: 1, status: 429 },
    );
    expect((await post(sim, path, undefined)).status).toBe(503);
    expect((await post(sim, path, undefined)).status).toBe(502);
    expect((await post(sim, path, undefined)).status).toBe(429);
    expect((await post(sim, path, undefined)).status).toBe(200);
  });

  // second-left-2: `{ credentials: { userName, password } }` (the shape the simulator hands out)
  // was ignored in silence: the simulator kept its own user and password.
  it("refuses an unknown option, naming the closest, before it listens", async () => {
    const credentials = { userName: "shop-user", password: "shop-password-1" };
    await expect(createServiceSimulator({ credentials } as never)).rejects.toThrow(
      /^createServiceSimulator: options has an unknown option "credentials" \(known: merchantGuid, userName, password, .*port\)$/,
    );
    await expect(createServiceSimulator({ pagesize: 5 } as never)).rejects.toThrow(
      'did you mean "pageSize"?',
    );
    // Each documented option (undefined: the default) is taken.
    const sim = await start({
      merchantGuid: undefined,
      userName: "shop-user",
      password: "shop-password-1",
      tokenTtlMinutes: 5,
      tokenLifetimeMs: undefined,
      jwtOperations: undefined,
      clearanceThreshold: 500,
      pageSize: 3,
      port: 0,
    });
    expect(sim.credentials).toEqual({ userName: "shop-user", password: "shop-password-1" });
  });

  // The same false pass as fail()'s: count("voidParcl") was 0, requestsOf() empty, and a
  // misspelt jwtOperations name left that operation without a token check.
  it("count(), requestsOf() and jwtOperations refuse an operation they do not simulate", async () => {
    const known =
      /known: getAuthenticationToken, calculateBillingSummary, .*voidParcel.*createOrderRefund$/;
    for (const name of ["voidParcl", "VoidParcel", "", "__proto__", "*"]) {
      const created = () => createServiceSimulator({ jwtOperations: [name as never] });
      await expect(created(), name).rejects.toThrow(TypeError);
      await expect(created(), name).rejects.toThrow(
        `createServiceSimulator: jwtOperations has no operation ${JSON.stringify(name)}; `,
      );
      await expect(created(), name).rejects.toThrow(known);
    }
    await expect(createServiceSimulator({ jwtOperations: "voidParcel" as never })).rejects.toThrow(
      "createServiceSimulator: jwtOperations must be a list of operation names",
    );
    const sim = await start({ jwtOperations: null as never });
    for (const name of ["voidParcl", "LocationByIP", "", null]) {
      for (const [method, read] of [
        ["count()", () => sim.count(name as never)],
        ["requestsOf()", () => sim.requestsOf(name as never)],
      ] as const) {
        expect(read, `${method} ${name}`).toThrow(TypeError);
        expect(read, `${method} ${name}`).toThrow(
          `createServiceSimulator: ${method} has no operation ${JSON.stringify(String(name))}; `,
        );
        expect(read, `${method} ${name}`).toThrow(known);
      }
    }
    // Known names still count; count() alone counts every request.
    const path = `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;
    expect((await post(sim, path, undefined)).status).toBe(200);
    expect(sim.count("locationByIp")).toBe(1);
    expect(sim.count("voidParcel")).toBe(0);
    expect(sim.count()).toBe(1);
    expect(sim.requestsOf("locationByIp")).toHaveLength(1);
  });

  it("answers any documented code on request, the way each operation reports it", async () => {
    const sim = await start();
    sim.fail("dispatchConsolidatedShipment", { code: "B600" });
    sim.fail("voidParcel", { code: "C103" });
    sim.fail("updateParcelStatus", { code: "B001" });
    sim.fail("calculateBillingSummary", { code: "NO_SHIPPING_OPTION_AVAILABLE" });
    const headers = { MerchantGUID: sim.merchantGuid };
    expect(
      (await post(sim, "/Order/DispatchConsolidatedShipment", { OrderIds: ["GE-1001"] }, headers))
        .body,
    ).toEqual({
      IsSuccess: false,
      ErrorText: "B600: Simulated B600",
    });
    expect((await post(sim, "/Parcel/VoidParcel", {}, headers)).body).toEqual({
      IsSuccess: false,
      Errors: [{ ErrorCode: "C103", ErrorText: "Simulated C103" }],
    });
    expect((await post(sim, "/orders/GE-1001/parcels/P-1/statuses", {}, headers)).body).toEqual({
      Success: false,
      Error: "B001: Simulated B001",
    });
    const billingAnswer = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      ...headers,
      Authorization: `Bearer ${await token(sim)}`,
    });
    expect(billingAnswer).toMatchObject({
      status: 422,
      body: { code: "NO_SHIPPING_OPTION_AVAILABLE" },
    });
  });

  it("records every request with its headers, body and status, and resets", async () => {
    const sim = await start();
    await post(sim, "/Nowhere", { a: 1 }, { "X-Test": "yes" });
    await post(sim, "/Parcel/VoidParcel", "{not json", { MerchantGUID: sim.merchantGuid });
    await post(sim, "/Parcel/VoidParcel", "x".repeat(1024 * 1024 + 1), {
      MerchantGUID: sim.merchantGuid,
    });
    expect(sim.requests.map((r) => [r.operation, r.status])).toEqual([
      [undefined, 404],
      ["voidParcel", 400],
      ["voidParcel", 413],
    ]);
    expect(sim.requests[0]).toMatchObject({ method: "POST", path: "/Nowhere", body: { a: 1 } });
    expect(sim.requests[0]?.headers["x-test"]).toBe("yes");
    expect(sim.count()).toBe(3);
    expect(sim.count("voidParcel")).toBe(2);
    const order = sim.state.orders.get("GE-1001");
    if (order) order.status = "dispatched";
    sim.reset();
    expect(sim.requests).toEqual([]);
    expect(sim.state.orders.get("GE-1001")?.status).toBe("ready");
  });

  it("serves RecentProductCountryS in pages that follow RequestID", async () => {
    const sim = await start({ pageSize: 3 });
    const page = async (id: number) =>
      (
        await post(sim, `/Browsing/RecentProductCountryS?requestId=${id}`, undefined, {
          MerchantGUID: sim.merchantGuid,
        })
      ).body;
    const first = await page(0);
    expect(first.RequestID).toBe(3);
    expect(first.ProductCountry).toHaveLength(3);
    expect((await page(3)).ProductCountry).toHaveLength(2);
    expect(await page(5)).toEqual({ ProductCountry: [], RequestID: 5 });
    sim.state.productCountryChanges.push({
      CountryCode: "CA",
      ProductCode: "SKU-9",
      IsRestricted: true,
    });
    expect((await page(5)).ProductCountry).toEqual([
      { CountryCode: "CA", ProductCode: "SKU-9", IsRestricted: true },
    ]);
  });
});

describe("createServiceSimulator: state the failures and refunds leave behind", () => {
  const refundPath = (sim: ServiceSimulator) =>
    `/Order/CreateOrderRefund?merchantGUID=${sim.merchantGuid}`;
  const refunds = async (sim: ServiceSimulator, orderId: string): Promise<Json> => {
    const response = await fetch(`${sim.url}/v1/orders/${orderId}/refunds`, {
      headers: { MerchantGUID: sim.merchantGuid },
    });
    return response.json();
  };
  const line = (details: Json, cartItemId: string) =>
    details.RefundableAmount.ProductRefundableAmount.find(
      (entry: Json) => entry.CartItemId === cartItemId,
    );

  it("an injected C102 voids the parcel: voiding it again answers C104, as the data does (7.3)", async () => {
    const sim = await start();
    const headers = { MerchantGUID: sim.merchantGuid };
    const parcel = { OrderId: "GE-1001", ParcelCode: "P-1001-1" };
    sim.fail("voidParcel", { code: "C102" });
    expect((await post(sim, "/Parcel/VoidParcel", parcel, headers)).body).toEqual({
      IsSuccess: true,
      Errors: [{ ErrorCode: "C102", ErrorText: "Simulated C102" }],
    });
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("voided");
    const again = await post(sim, "/Parcel/VoidParcel", parcel, headers);
    expect(again.body).toMatchObject({ IsSuccess: false, Errors: [{ ErrorCode: "C104" }] });
    // A parcel the data cannot void is refused as the data says, injected C102 or not.
    sim.fail("voidParcel", { code: "C102" });
    const inHub = await post(
      sim,
      "/Parcel/VoidParcel",
      { OrderId: "GE-1003", ParcelCode: "P-1003-1" },
      headers,
    );
    expect(inHub.body).toMatchObject({ IsSuccess: false, Errors: [{ ErrorCode: "C100" }] });
    expect(sim.state.parcels.get("P-1003-1")?.status).toBe("received-in-hub");
  });

  // Final reading 2 D3: the README said a merchant id under VoidParcel's OrderId was B001; 7.3's
  // codes for VoidParcel are C codes, and an unknown parcel of the order is C104.
  it("VoidParcel: the merchant's id under OrderId is C104 (7.3); under MerchantOrderId it voids", async () => {
    const sim = await start();
    const headers = { MerchantGUID: sim.merchantGuid };
    const wrongField = { OrderId: "M-1001", ParcelCode: "P-1001-1" };
    const refused = await post(sim, "/Parcel/VoidParcel", wrongField, headers);
    expect(refused.body).toMatchObject({ IsSuccess: false, Errors: [{ ErrorCode: "C104" }] });
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("declared");
    const rightField = { MerchantOrderId: "M-1001", ParcelCode: "P-1001-1" };
    const voided = await post(sim, "/Parcel/VoidParcel", rightField, headers);
    expect(voided.body).toMatchObject({ IsSuccess: true });
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("voided");
  });

  it("CreateOrderRefund refunds at most what remains of each line; GetOrderRefunds counts down", async () => {
    const sim = await start();
    const before = await refunds(sim, "GE-1002");
    expect(line(before, "1")).toMatchObject({ RefundableQuantity: 2, RefundableTotalAmount: 39.8 });
    expect(before.RefundableAmount.TotalCreditAmount).toBe(89.3);

    const one = { OrderId: "GE-1002", RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }] };
    expect((await post(sim, refundPath(sim), one)).body).toMatchObject({ Success: true });
    const after = await refunds(sim, "GE-1002");
    expect(after.Refunds).toHaveLength(1);
    expect(line(after, "1")).toMatchObject({ RefundableQuantity: 1, RefundableTotalAmount: 19.9 });
    expect(line(after, "2")).toMatchObject({ RefundableQuantity: 1, RefundableTotalAmount: 49.5 });
    expect(after.RefundableAmount.TotalCreditAmount).toBe(69.4);

    // Two units of a line with one left, and 999 of a one-unit line: refused, nothing recorded.
    for (const quantity of [2, 999]) {
      const over = {
        OrderId: "GE-1002",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: quantity }],
      };
      const refused = await post(sim, refundPath(sim), over);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        error: {
          code: "INVALID_REFUND",
          message: expect.stringContaining("CartItemId 1"),
          description: expect.stringContaining("1 left"),
        },
      });
    }
    // The same line listed twice counts twice.
    const twice = {
      OrderId: "GE-1002",
      RefundProducts: [
        { CartItemId: "2", RefundQuantity: 1 },
        { CartItemId: "2", RefundQuantity: 1 },
      ],
    };
    expect((await post(sim, refundPath(sim), twice)).status).toBe(400);
    expect((await refunds(sim, "GE-1002")).Refunds).toHaveLength(1);

    // What remains can still be refunded, and then the line is at zero.
    expect((await post(sim, refundPath(sim), one)).body).toMatchObject({ Success: true });
    const done = await refunds(sim, "GE-1002");
    expect(line(done, "1")).toMatchObject({ RefundableQuantity: 0, RefundableTotalAmount: 0 });
    expect((await post(sim, refundPath(sim), one)).status).toBe(400);
  });

  it("counts the seeded refund of GE-1001, and refuses a quantity that is not a positive number", async () => {
    const sim = await start();
    // R-1 refunded one of GE-1001's two units of line 1.
    expect(line(await refunds(sim, "GE-1001"), "1")).toMatchObject({ RefundableQuantity: 1 });
    for (const quantity of [0, -1, "x"]) {
      const bad = {
        OrderId: "GE-1001",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: quantity }],
      };
      expect((await post(sim, refundPath(sim), bad)).status).toBe(400);
    }
    const two = { OrderId: "GE-1001", RefundProducts: [{ CartItemId: "1", RefundQuantity: 2 }] };
    expect((await post(sim, refundPath(sim), two)).status).toBe(400);
  });
});

describe("createServiceSimulator: failures after the status line, against the real client", () => {
  function clientOf(sim: ServiceSimulator, options: Partial<ServiceClientOptions> = {}) {
    return createServiceClient({
      baseUrl: sim.url,
      merchantGuid: sim.merchantGuid,
      credentials: sim.credentials,
      retries: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      ...options,
    });
  }
  const refundOne = {
    OrderId: "GE-1002",
    RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
  };
  const voidOne = { OrderId: "GE-1001", ParcelCode: "P-1001-1" };

  it("cutOff: the refund is applied, its 200 is cut off mid-body: INCOMPLETE_RESPONSE, may have been applied", async () => {
    const sim = await start();
    sim.fail("createOrderRefund", { cutOff: true });
    const client = clientOf(sim);
    const error = await client.createOrderRefund(refundOne).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceNetworkError);
    expect(error).toMatchObject({ code: "INCOMPLETE_RESPONSE", status: 200, attempts: 1 });
    expect((error as Error).message).toMatch(/may have been applied/);
    expect(sim.requestsOf("createOrderRefund").map((r) => r.status)).toEqual([200]);
    // What README advises after such an error: the refund is there, and what remains went down.
    const details = await client.getOrderRefunds({ orderId: "GE-1002" });
    expect(details.Refunds).toHaveLength(1);
    expect(details.RefundableAmount?.ProductRefundableAmount?.[0]?.RefundableQuantity).toBe(1);
  });

  it("cutOff on a read: retried like a dropped connection, then answered", async () => {
    const sim = await start();
    sim.fail("locationByIp", { cutOff: true });
    const location = await clientOf(sim).locationByIp({ ip: "203.0.113.7" });
    expect(location.Country?.Code).toBe("US");
    expect(sim.count("locationByIp")).toBe(2);
  });

  it("stallBody: the void is applied, its body stalls past timeoutMs: a TIMEOUT with status 200", async () => {
    const sim = await start();
    sim.fail("voidParcel", { stallBody: true });
    // Long enough for the head (and the second call's whole answer) on a loaded machine.
    const client = clientOf(sim, { timeoutMs: 1_000 });
    const error = await client.voidParcel(voidOne).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect(error).toMatchObject({ code: "TIMEOUT", status: 200, attempts: 1 });
    expect((error as Error).message).toMatch(/may have been applied/);
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("voided");
    const again = await client.voidParcel(voidOne).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ServiceNotFoundError);
    expect(again).toMatchObject({ code: "C104" });
  });

  it("drop with apply: the void is applied, then the connection closes without an answer", async () => {
    const sim = await start();
    sim.fail("voidParcel", { drop: true }, { drop: true, apply: true });
    const client = clientOf(sim);
    const dropped = await client.voidParcel(voidOne).catch((e: unknown) => e);
    expect(dropped).toMatchObject({ code: "NETWORK_ERROR", status: undefined });
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("declared");
    const applied = await client.voidParcel(voidOne).catch((e: unknown) => e);
    expect(applied).toBeInstanceOf(ServiceNetworkError);
    expect(applied).toMatchObject({ code: "NETWORK_ERROR", status: undefined, attempts: 1 });
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("voided");
  });
});

// Review OPS D3: the simulator parsed any body as JSON whatever its Content-Type, so a merchant's
// own HTTP code sending text/plain passed here and not against the service (document 000: every
// request has `Content-Type: application/json`). The status is not shown (7.4): 415.
describe("createServiceSimulator: the request's media type", () => {
  it("answers 415 to a POST whose body is not declared application/json, and applies nothing", async () => {
    const sim = await start();
    const voidBody = { OrderId: "GE-1001", ParcelCode: "P-1001-1" };
    const guid = { MerchantGUID: sim.merchantGuid };
    const plain = await post(sim, "/Parcel/VoidParcel", voidBody, {
      ...guid,
      "Content-Type": "text/plain",
    });
    expect(plain.status).toBe(415);
    expect(plain.body).toEqual({ Message: expect.stringMatching(/application\/json/) });
    const form = await post(sim, "/Parcel/VoidParcel", voidBody, {
      ...guid,
      "Content-Type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(415);
    // A body without any Content-Type (fetch sends a string as text/plain, so use raw bytes).
    const untyped = await fetch(`${sim.url}/Parcel/VoidParcel`, {
      method: "POST",
      headers: guid,
      body: new TextEncoder().encode(JSON.stringify(voidBody)),
    });
    expect(untyped.status).toBe(415);
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("declared");
    // The billing summary answers in 7.1's body, as its other refusals do.
    const summary = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      ...guid,
      Authorization: `Bearer ${await token(sim)}`,
      "Idempotency-Key": crypto.randomUUID(),
      "Content-Type": "text/plain",
    });
    expect(summary.status).toBe(415);
    expect(summary.body).toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
      error: expect.any(String),
    });
  });

  it("takes application/json with parameters and in any case, and a POST without a body", async () => {
    const sim = await start();
    const guid = { MerchantGUID: sim.merchantGuid };
    const voided = await post(
      sim,
      "/Parcel/VoidParcel",
      { OrderId: "GE-1001", ParcelCode: "P-1001-1" },
      { ...guid, "Content-Type": "Application/JSON; charset=utf-8" },
    );
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ IsSuccess: true });
    // 4.7a is query only: no body, no media type to check.
    const located = await fetch(`${sim.url}/Browsing/LocationByIP?IP=203.0.113.7`, {
      method: "POST",
      headers: guid,
    });
    expect(located.status).toBe(200);
  });
});

// Second reading S4: the 415 was stricter than an ASP.NET Core service, whose JSON input formatter
// takes text/json too, and which reads no media type for an action that binds no body; it also
// answered before authentication, which such a service checks first.
describe("createServiceSimulator: the media type, no stricter than the service", () => {
  it("takes text/json and application/*+json, with parameters", async () => {
    const sim = await start();
    const guid = { MerchantGUID: sim.merchantGuid };
    const parcels = ["P-1001-1", "P-1001-2"];
    const types = ["text/json", "application/vnd.api+json; charset=utf-8"];
    for (const [index, type] of types.entries()) {
      const voided = await post(
        sim,
        "/Parcel/VoidParcel",
        { OrderId: "GE-1001", ParcelCode: parcels[index] },
        { ...guid, "Content-Type": type },
      );
      expect(voided.status, type).toBe(200);
      expect(sim.state.parcels.get(parcels[index] ?? "")?.status, type).toBe("voided");
    }
  });

  it("takes a query-only POST with an empty body whatever its Content-Type", async () => {
    const sim = await start();
    // curl -X POST -d '' (or PHP's CURLOPT_POSTFIELDS "") sends a form type and no bytes.
    for (const type of ["application/x-www-form-urlencoded", "text/plain"]) {
      const located = await fetch(`${sim.url}/Browsing/LocationByIP?IP=203.0.113.7`, {
        method: "POST",
        headers: { MerchantGUID: sim.merchantGuid, "Content-Type": type },
        body: "",
      });
      expect(located.status, type).toBe(200);
      expect(await located.json(), type).toMatchObject({ Country: { Code: "US" } });
    }
  });

  it("answers 401 to a missing token or GUID before looking at the media type", async () => {
    const sim = await start();
    const summary = await post(sim, "/subscriptions/billing-summary/calculate", billing, {
      MerchantGUID: sim.merchantGuid,
      "Idempotency-Key": crypto.randomUUID(),
      "Content-Type": "text/plain",
    });
    expect(summary.status).toBe(401);
    expect(summary.body).toMatchObject({ code: "UNAUTHORIZED" });
    const voided = await post(
      sim,
      "/Parcel/VoidParcel",
      { OrderId: "GE-1001", ParcelCode: "P-1001-1" },
      { MerchantGUID: "00000000-0000-0000-0000-000000000000", "Content-Type": "text/plain" },
    );
    expect(voided.status).toBe(401);
    expect(sim.state.parcels.get("P-1001-1")?.status).toBe("declared");
  });
});

// Review OPS D4: the simulator looked every order id up as the service's or the merchant's, so a
// merchant sending its own id where the document wants the service's passed here and failed in
// production (B001, 4.5 and 7.2).
describe("createServiceSimulator: the service's order id where the document asks for it", () => {
  const client = (sim: ServiceSimulator) =>
    createServiceClient({ baseUrl: sim.url, merchantGuid: sim.merchantGuid, retries: false });

  it("UpdateParcelStatus (4.5: orderId is the service order identifier) answers B001 to a merchant id", async () => {
    const sim = await start();
    const status = { parcelCode: "P-1001-1", merchantParcelStatusCode: "Delivered" };
    const error = await client(sim)
      .updateParcelStatus({ orderId: "M-1001", ...status })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceNotFoundError);
    expect(error).toMatchObject({ code: "B001" });
    expect(sim.requestsOf("updateParcelStatus")[0]?.status).toBe(200);
    expect(sim.state.parcels.get("P-1001-1")?.merchantStatusCodes).toEqual([]);
    const done = await client(sim).updateParcelStatus({ orderId: "GE-1001", ...status });
    expect(done.Success).toBe(true);
    expect(sim.state.parcels.get("P-1001-1")?.merchantStatusCodes).toEqual(["Delivered"]);
  });

  it("DispatchConsolidatedShipment looks OrderIds up as the service's ids and MerchantOrderIds as the merchant's", async () => {
    const sim = await start();
    for (const body of [{ OrderIds: ["M-1001", "M-1002"] }, { MerchantOrderIds: ["GE-1001"] }]) {
      const error = await client(sim)
        .dispatchConsolidatedShipment(body)
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(body)).toMatchObject({ code: "B001" });
    }
    expect(sim.state.orders.get("GE-1001")?.status).toBe("ready");
    const done = await client(sim).dispatchConsolidatedShipment({
      OrderIds: ["GE-1001"],
      MerchantOrderIds: ["M-1001", "M-1002"],
    });
    expect(done.IsSuccess).toBe(true);
    // GE-1001 named twice (by both ids) is one order: its two parcels and GE-1002's one.
    expect(done.ParcelsTracking).toHaveLength(3);
    expect(sim.state.orders.get("GE-1002")?.status).toBe("dispatched");
  });

  it("CreateOrderRefund's OrderId is the service's: a merchant id is ORDER_NOT_FOUND and nothing is refunded", async () => {
    const sim = await start();
    const error = await client(sim)
      .createOrderRefund({
        OrderId: "M-1002",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceNotFoundError);
    expect(error).toMatchObject({ code: "ORDER_NOT_FOUND", status: 404 });
    expect(sim.state.refunds.get("GE-1002")).toBeUndefined();
  });
});

// Review OPS D6: every LocationByIP answer carried 203.0.113.0-255 as its IPRange, whatever the IP
// asked, while 4.7a says the caching policy applies to the whole range returned: a merchant who
// cached by range served 203.0.113.7 (US) as Germany.
describe("createServiceSimulator: LocationByIP's IPRange contains the IP asked (4.7a)", () => {
  const ipv4 = (ip: string) => ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);

  it("IPv4: the address's /24, for a known address and for the default location", async () => {
    const sim = await start();
    const client = createServiceClient({ baseUrl: sim.url, merchantGuid: sim.merchantGuid });
    const ranges = new Map<string, unknown>();
    for (const ip of ["203.0.113.7", "198.51.100.20", "10.0.0.1"]) {
      const { IPRange } = await client.locationByIp({ ip });
      const n = ipv4(ip);
      expect(IPRange?.Type, ip).toBe("IPV4");
      expect(IPRange?.From, ip).toBe(n - (n % 256));
      expect(IPRange?.To, ip).toBe(n - (n % 256) + 255);
      ranges.set(ip, IPRange);
    }
    // Germany's range does not hold the US address: a cache by range keeps them apart.
    expect(ranges.get("198.51.100.20")).not.toEqual(ranges.get("203.0.113.7"));
  });

  it("IPv6: Type IPV6 and a range holding the address; an IPv4-mapped address is its IPv4", async () => {
    const sim = await start();
    const client = createServiceClient({ baseUrl: sim.url, merchantGuid: sim.merchantGuid });
    const v6 = await client.locationByIp({ ip: "2001:db8::1" });
    expect(v6.IPRange?.Type).toBe("IPV6");
    // The bounds are beyond a JavaScript number: read them exactly from the JSON text.
    const answer = await fetch(`${sim.url}/Browsing/LocationByIP?IP=2001:db8::1`, {
      method: "POST",
      headers: { MerchantGUID: sim.merchantGuid, "Content-Type": "application/json" },
    });
    const text = await answer.text();
    const bound = (name: string) => BigInt(new RegExp(`"${name}":(\\d+)`).exec(text)?.[1] ?? -1);
    expect(bound("From")).toBe(BigInt("0x20010db8000000000000000000000000"));
    expect(bound("To")).toBe(BigInt("0x20010db800000000ffffffffffffffff"));
    const mapped = await client.locationByIp({ ip: "::ffff:203.0.113.7" });
    expect(mapped.Country?.Code).toBe("US");
    expect(mapped.IPRange).toEqual({
      From: ipv4("203.0.113.0"),
      To: ipv4("203.0.113.255"),
      Type: "IPV4",
    });
  });
});

// Second reading S1: the default location's /24 overlapped the known addresses' /24s, so a
// merchant caching by range (4.7a) served 203.0.113.7 as GB after asking 203.0.113.8 first, or
// 203.0.113.8 as US the other way round. Every answer's range must hold only addresses the
// simulator answers with the same country, IPv4-mapped addresses read as IPv6 integers included.
describe("createServiceSimulator: no LocationByIP range holds an address answered otherwise (4.7a)", () => {
  const ipv4 = (ip: string) => BigInt(ip.split(".").reduce((n, part) => n * 256 + Number(part), 0));
  // Each address as the integers a merchant may key its cache with: [Type, value].
  const views: Record<string, [string, bigint][]> = {
    "::1": [["IPV6", 1n]],
    "::ffff:203.0.113.7": [
      ["IPV4", ipv4("203.0.113.7")],
      ["IPV6", 0xffffcb007107n],
    ],
    "::ffff:198.51.100.21": [
      ["IPV4", ipv4("198.51.100.21")],
      ["IPV6", 0xffffc6336415n],
    ],
    "2001:db8::1": [["IPV6", 0x20010db8000000000000000000000001n]],
  };
  const v4 = ["203.0.113.7", "198.51.100.20", "10.0.0.1", "192.0.2.1"];
  for (const near of ["203.0.113.", "198.51.100."]) {
    for (const last of ["0", "1", "8", "21", "255"]) v4.push(`${near}${last}`);
  }
  v4.push("203.0.112.255", "203.0.114.0", "198.51.99.255", "198.51.101.0");
  for (const ip of v4) views[ip] = [["IPV4", ipv4(ip)]];

  it("every address of every answered range is answered with that range's country", async () => {
    const sim = await start();
    const answers = new Map<string, { country: string; type: string; from: bigint; to: bigint }>();
    for (const ip of Object.keys(views)) {
      const response = await fetch(`${sim.url}/Browsing/LocationByIP?IP=${ip}`, {
        method: "POST",
        headers: { MerchantGUID: sim.merchantGuid, "Content-Type": "application/json" },
      });
      const text = await response.text();
      // The bounds read exactly from the text (an IPv6 bound is beyond a JavaScript number).
      const bound = (name: string) => BigInt(new RegExp(`"${name}":(\\d+)`).exec(text)?.[1] ?? -1);
      const parsed = JSON.parse(text);
      answers.set(ip, {
        country: parsed.Country.Code,
        type: parsed.IPRange.Type,
        from: bound("From"),
        to: bound("To"),
      });
    }
    expect(answers.get("203.0.113.7")?.country).toBe("US");
    expect(answers.get("198.51.100.20")?.country).toBe("DE");
    expect(answers.get("10.0.0.1")?.country).toBe("GB");
    const clashes: string[] = [];
    for (const [ip, range] of answers) {
      for (const [other, otherViews] of Object.entries(views)) {
        const inside = otherViews.some(
          ([type, value]) => type === range.type && value >= range.from && value <= range.to,
        );
        const country = answers.get(other)?.country;
        if (inside && country !== range.country) {
          clashes.push(`${other} (${country}) in the range of ${ip} (${range.country})`);
        }
      }
    }
    expect(clashes).toEqual([]);
  });
});

// Second reading S5: LOCATIONS was a plain object, so IP=constructor found Object's own function
// and the answer crashed as a 500; 4.7a gives an unresolvable address the default location.
describe("createServiceSimulator: LocationByIP with a name Object.prototype has", () => {
  it("answers the merchant's default location, not a 500", async () => {
    const sim = await start();
    for (const ip of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const response = await fetch(`${sim.url}/Browsing/LocationByIP?IP=${ip}`, {
        method: "POST",
        headers: { MerchantGUID: sim.merchantGuid, "Content-Type": "application/json" },
      });
      expect(response.status, ip).toBe(200);
      expect(await response.json(), ip).toMatchObject({
        Country: { Code: "GB" },
        IPRange: null,
      });
    }
  });
});

// Review OPS D7: the key was checked with /^[0-9a-f-]{36}$/i, so 36 hyphens passed for a UUID
// (4.1 and Part 8: the key is a uuid).
describe("createServiceSimulator: the billing summary's Idempotency-Key is a UUID (4.1, Part 8)", () => {
  it("refuses 36 hyphens, hex without hyphens, and hyphens in the wrong places; takes a UUID", async () => {
    const sim = await start();
    const bearer = `Bearer ${await token(sim)}`;
    const ask = (key: string) =>
      post(sim, "/subscriptions/billing-summary/calculate", billing, {
        MerchantGUID: sim.merchantGuid,
        Authorization: bearer,
        "Idempotency-Key": key,
      });
    for (const key of [
      "-".repeat(36),
      "0123456789abcdef0123456789abcdef0123",
      "0123456789ab-cdef-0123-4567-89abcdef0123",
      "01234567-89ab-cdef-0123-456789abcdeg",
    ]) {
      const answer = await ask(key);
      expect(answer.status, key).toBe(422);
      expect(answer.body, key).toMatchObject({ code: "VALIDATION_FAILED" });
    }
    expect(sim.state.billingSummaries).toBe(0);
    const good = await ask(crypto.randomUUID().toUpperCase());
    expect(good.status).toBe(200);
  });
});

describe("createServiceSimulator: JSON member names bound in any letter case, as ASP.NET Core does (review fidelity-4)", () => {
  it("reads the token request's UserName and Password, and VoidParcel's orderId and parcelCode", async () => {
    const sim = await start();
    const tokenAnswer = await post(sim, "/Authentication/GetAuthenticationToken", {
      UserName: sim.credentials.userName,
      Password: sim.credentials.password,
    });
    expect(tokenAnswer.status, JSON.stringify(tokenAnswer.body)).toBe(200);
    expect(typeof tokenAnswer.body.Token).toBe("string");
    const voided = await post(
      sim,
      "/Parcel/VoidParcel",
      { orderId: "GE-1001", parcelCode: "P-1001-1" },
      { MerchantGUID: sim.merchantGuid },
    );
    expect(voided).toMatchObject({ status: 200, body: { IsSuccess: true, Errors: [] } });
    // Nested members too: the billing summary's products.
    const summary = await post(
      sim,
      "/subscriptions/billing-summary/calculate",
      {
        SubscriptionId: billing.subscriptionId,
        MerchantGuid: billing.merchantGuid,
        CurrencyCode: "EUR",
        Products: [{ Code: "SKU-1", Quantity: 1, Price: 10 }],
      },
      {
        MerchantGUID: sim.merchantGuid,
        Authorization: `Bearer ${tokenAnswer.body.Token}`,
        "Idempotency-Key": crypto.randomUUID(),
      },
    );
    expect(summary.status, JSON.stringify(summary.body)).toBe(200);
    // What was sent is recorded as it was sent.
    expect(sim.requests[0]?.body).toStrictEqual({
      UserName: sim.credentials.userName,
      Password: sim.credentials.password,
    });
  });
});

describe("createServiceSimulator: GetShippingDetailsExtended's request rules (000 §4.3, review fidelity-5)", () => {
  async function rates(body: unknown) {
    const sim = simulator ?? (await start());
    const bearer = await token(sim);
    return post(
      sim,
      `/ShippingDetails/GetShippingDetailsExtended?merchantGUID=${sim.merchantGuid}`,
      body,
      { Authorization: `Bearer ${bearer}`, UserName: sim.credentials.userName },
    );
  }

  it.each([
    ["amount with three decimals", { amount: 12.345, currencyCode: "EUR" }, /amount/],
    ["serviceLevel 42", { amount: 12, currencyCode: "EUR", serviceLevel: 42 }, /serviceLevel/],
    ["serviceLevel 0", { amount: 12, currencyCode: "EUR", serviceLevel: 0 }, /serviceLevel/],
    ["serviceLevel 1.5", { amount: 12, currencyCode: "EUR", serviceLevel: 1.5 }, /serviceLevel/],
    ["currencyCode euro", { amount: 12, currencyCode: "euro" }, /currencyCode/],
    ["currencyCode E1R", { amount: 12, currencyCode: "E1R" }, /currencyCode/],
    [
      "destinationCountry Germany",
      { amount: 12, currencyCode: "EUR", destinationCountry: "Germany" },
      /destinationCountry/,
    ],
    [
      "destinationCountry D",
      { amount: 12, currencyCode: "EUR", destinationCountry: "D" },
      /destinationCountry/,
    ],
  ])("refuses %s with 400 { Message }", async (_name, body, field) => {
    const answer = await rates(body);
    expect(answer.status).toBe(400);
    expect(answer.body.Message).toMatch(field);
  });

  it.each([
    ["two decimals", { amount: 12.34, currencyCode: "EUR" }],
    ["no decimals, serviceLevel 19", { amount: 0, currencyCode: "EUR", serviceLevel: 19 }],
    [
      "serviceLevel 1, alpha-3 country",
      { amount: 1.1, currencyCode: "usd", destinationCountry: "USA", serviceLevel: 1 },
    ],
    [
      "an empty country (all countries)",
      { amount: 5, currencyCode: "GBP", destinationCountry: "" },
    ],
  ])("answers %s 200", async (_name, body) => {
    expect((await rates(body)).status).toBe(200);
  });
});

// Review testkit-3: a `{ delayMs }` timer outlived `close()` and `reset()`: the test process stayed
// alive for the whole delay (20 s after a 0.6 s test), and the delayed request then ran against
// the closed simulator.
describe("createServiceSimulator: a delayed answer ends with close() and reset()", () => {
  const path = (sim: ServiceSimulator) =>
    `/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=${sim.merchantGuid}`;

  it("the process exits at once after close(), not when a long delay would have ended", async () => {
    const script = `
      import { createServiceSimulator } from "./src/testing/index.ts";
      const sim = await createServiceSimulator();
      sim.fail("*", { delayMs: 30000 });
      const url = sim.url + "/Browsing/LocationByIP?IP=1.2.3.4&merchantGUID=" + sim.merchantGuid;
      const pending = fetch(url, { method: "POST" }).catch(() => undefined);
      while (sim.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await sim.close();
      await pending;
      console.log("closed", sim.requests.length);`;
    const started = Date.now();
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: ROOT, timeout: 25_000 },
    );
    expect(stdout.trim()).toBe("closed 1");
    // tsx's start included; the delay was 30 s.
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it("reset() lets a delayed request go at once, and its handler does not run on the new state", async () => {
    const sim = await start();
    sim.fail("*", { delayMs: 30_000 });
    const started = Date.now();
    const delayed = post(sim, path(sim), undefined).catch((error: unknown) => error);
    while (sim.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    sim.reset();
    expect(await delayed).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sim.requests).toEqual([]);
    // The simulator still answers after the reset.
    expect((await post(sim, path(sim), undefined)).status).toBe(200);
  });
});

// Review testkit-5: the dispatch documents' CreationDateTime was the wall clock while the tokens
// followed `advanceClock`: snapshots of the answers differed from run to run.
describe("createServiceSimulator: the times in its answers follow its clock", () => {
  it("DispatchConsolidatedShipment's documents are created at the simulator's time", async () => {
    const sim = await start();
    const ahead = 48 * 3_600_000;
    sim.advanceClock(ahead);
    const before = Date.now() + ahead;
    const done = await createServiceClient({
      baseUrl: sim.url,
      merchantGuid: sim.merchantGuid,
      retries: false,
    }).dispatchConsolidatedShipment({ OrderIds: ["GE-1001", "GE-1002"] });
    const after = Date.now() + ahead;
    const times = JSON.stringify(done).match(/"CreationDateTime":"[^"]*"/g) ?? [];
    expect(times.length).toBeGreaterThan(0);
    for (const time of times) {
      const at = Date.parse(time.slice('"CreationDateTime":"'.length, -1));
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(after + 1000);
    }
  });
});
