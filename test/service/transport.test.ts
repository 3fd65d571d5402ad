// The client against plain local HTTP servers that misbehave at the transport level: a redirect to
// another origin (credentials must stay with the configured origins), path parameters that are
// dot segments, per-call limits that make no sense. Real servers, real fetch.
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createServiceClient, isServiceError, type ServiceError } from "../../src/service/index.js";

const GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const PASSWORD = "s3cret-passw0rd";

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const running: Server[] = [];
afterEach(async () => {
  await Promise.all(
    running.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A server on `host` that records each request whole, then lets `answer` write the response. */
async function listen(
  answer: (received: Received, res: ServerResponse) => void,
  host = "127.0.0.1",
): Promise<{ readonly url: string; readonly received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(entry);
      answer(entry, res);
    });
  });
  running.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, received };
}

async function failureOf(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}

/** Another origin (another host name) answering success to anything. */
function elsewhere() {
  return listen((_received, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ IsSuccess: true, Errors: [], AccessToken: "t", ExpiresIn: 3600 }));
  }, "localhost");
}

describe("a redirect is a failure, never followed with the merchant's credentials", () => {
  it.each([301, 302, 303, 307, 308])(
    "%i on an operation: the GUID stays with baseUrl's origin",
    async (status) => {
      const other = await elsewhere();
      const service = await listen((_received, res) => {
        res.writeHead(status, { location: `${other.url}/collect` });
        res.end();
      });
      const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
      const failure = await failureOf(client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" }));
      expect(failure.status).toBe(status);
      expect(failure.code).toBe(`HTTP_${status}`);
      expect(service.received).toHaveLength(1);
      expect(other.received).toEqual([]);
      // Review network-2: only a 307 or 308 asks for the request to be sent elsewhere, unapplied;
      // a 303 is how a service answers a POST it processed, and a 301/302 may be used so too.
      const notApplied = status === 307 || status === 308;
      expect(failure.mayHaveBeenApplied).toBe(!notApplied);
      expect(failure.message).toMatch(/check baseUrl and authUrl/);
      if (!notApplied) expect(failure.message).toMatch(/may have been applied/);
    },
  );

  it("a refund answered 303 See Other after it was created is in doubt, and its repeat's refusal names it", async () => {
    let created = 0;
    const service = await listen((received, res) => {
      if (received.url.startsWith("/Order/CreateOrderRefund") && created === 0) {
        created++;
        res.writeHead(303, { location: "/v1/orders/GE-1/refunds" });
        res.end();
        return;
      }
      // The repeat: the refund already exists, so its quantity exceeds what is left.
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ Success: false, Message: "quantity exceeds the refundable one" }));
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    const refund = () =>
      client.createOrderRefund({
        OrderId: "GE-1",
        RefundProducts: [{ CartItemId: "1", RefundQuantity: 1 }],
      });
    const first = await failureOf(refund());
    expect(first).toMatchObject({ code: "HTTP_303", status: 303, mayHaveBeenApplied: true });
    const repeat = await failureOf(refund());
    expect(repeat).toMatchObject({ status: 400, mayHaveBeenApplied: true });
    expect(repeat.earlierInDoubt).toBe(first);
    expect(service.received).toHaveLength(2);
  });

  it("a status beyond 599 (no class in RFC 9110) is in doubt for a dispatch, and retried for a read", async () => {
    let sent = 0;
    const raw = createNetServer((socket) => {
      socket.once("data", () => {
        sent++;
        socket.end("HTTP/1.1 600 Odd\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
      const client = createServiceClient({
        baseUrl: url,
        merchantGuid: GUID,
        retries: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
      });
      const dispatch = await failureOf(client.dispatchConsolidatedShipment({ OrderIds: ["GE-1"] }));
      expect(dispatch).toMatchObject({ status: 600, mayHaveBeenApplied: true });
      expect(sent).toBe(1);
      await failureOf(client.locationByIp({ ip: "203.0.113.7" }));
      expect(sent).toBe(3);
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  // Found by mutation testing: nothing answered status 0, what a browser's fetch gives for a
  // redirect it was told not to follow (an opaque redirect); it must not pass for an answer.
  it("a browser's opaque answer to a redirect (status 0) is the same failure", async () => {
    const client = createServiceClient({
      baseUrl: "http://service.invalid",
      merchantGuid: GUID,
      fetch: async () => Response.error(),
      retries: false,
    });
    for (const call of [
      () => client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" }),
      () => client.locationByIp({ ip: "203.0.113.7" }),
    ]) {
      const failure = await failureOf(call());
      expect(failure.status).toBe(0);
      expect(failure.code).toBe("HTTP_0");
      expect(failure.message).toMatch(/redirect/);
    }
  });

  it("307 on the token request: the password is not sent again anywhere", async () => {
    const other = await elsewhere();
    const service = await listen((_received, res) => {
      res.writeHead(307, { location: `${other.url}/steal` });
      res.end();
    });
    const client = createServiceClient({
      baseUrl: service.url,
      merchantGuid: GUID,
      credentials: { userName: "merchant-user", password: PASSWORD },
      retries: false,
    });
    const failure = await failureOf(
      client.getShippingDetailsExtended({ amount: 1, currencyCode: "EUR" }),
    );
    expect(failure.status).toBe(307);
    expect(other.received).toEqual([]);
    const seenPassword = service.received.filter((entry) => entry.body.includes(PASSWORD));
    expect(seenPassword).toHaveLength(1);
  });
});

describe("path parameters", () => {
  // `new URL` resolves `.` and `..` segments: such a value would send the request, with the GUID,
  // to another path of the service.
  it.each([".", ".."])("%j is refused before anything is sent", async (value) => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ IsSuccess: true }));
    });
    const client = createServiceClient({ baseUrl: `${service.url}/api/`, merchantGuid: GUID });
    const failures = [
      await failureOf(
        client.updateParcelStatus({
          orderId: value,
          parcelCode: "P-1",
          merchantParcelStatusCode: "SHIPPED",
        }),
      ),
      await failureOf(client.getOrderRefunds({ orderId: value })),
    ];
    for (const failure of failures) {
      expect(failure.code).toBe("INVALID_REQUEST");
      expect((failure as { issues?: { path: string }[] }).issues?.[0]?.path).toBe("orderId");
    }
    expect(service.received).toEqual([]);
  });

  it("a value with dots inside it, or percent-encoded dots, is sent as a segment of its own", async () => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ Refunds: [] }));
    });
    const client = createServiceClient({ baseUrl: `${service.url}/api/`, merchantGuid: GUID });
    await client.getOrderRefunds({ orderId: "GE.1..2" });
    await client.getOrderRefunds({ orderId: "%2e%2E" });
    expect(service.received.map((entry) => new URL(entry.url, "http://x").pathname)).toEqual([
      "/api/v1/orders/GE.1..2/refunds",
      "/api/v1/orders/%252e%252E/refunds",
    ]);
  });
});

describe("per-call limits are checked like the client's", () => {
  it.each([
    ["timeoutMs", 0],
    ["timeoutMs", Number.NaN],
    ["timeoutMs", -5],
    ["deadlineMs", 0],
    ["deadlineMs", Number.NaN],
    ["deadlineMs", Number.POSITIVE_INFINITY],
    // Above 2^31 - 1 ms, timers fire at once (Node clamps them to 1 ms): every call would fail.
    ["timeoutMs", 2 ** 31],
    ["deadlineMs", 2 ** 31],
    ["timeoutMs", Number.MAX_SAFE_INTEGER],
    ["deadlineMs", Number.MAX_SAFE_INTEGER],
  ])("%s: %d is refused before anything is sent", async (option, value) => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ IsSuccess: true, Errors: [] }));
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    const call = client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" }, { [option]: value });
    await expect(call).rejects.toThrow(TypeError);
    await expect(call).rejects.toThrow(`${option} must be a positive number`);
    expect(service.received).toEqual([]);
  });

  it("2^31 - 1 ms, the largest timer, is accepted per call and by the client", async () => {
    const service = await listen((_received, res) => {
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ IsSuccess: true, Errors: [] }));
      }, 30);
    });
    const largest = 2 ** 31 - 1;
    const options = { timeoutMs: largest, deadlineMs: largest };
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID, ...options });
    const request = { OrderId: "GE-1", ParcelCode: "P-1" };
    expect((await client.voidParcel(request)).warnings).toEqual([]);
    expect((await client.voidParcel(request, options)).warnings).toEqual([]);
  });
});

const SHIPPING = { amount: 10, currencyCode: "EUR" } as const;

/** A service whose token answer is `token(n)` (the n-th token request) and operations `answer`. */
function withTokens(
  token: (n: number) => unknown,
  answer: (received: Received, res: ServerResponse, n: number) => void,
) {
  let tokens = 0;
  let operations = 0;
  return listen((received, res) => {
    if (received.url.startsWith("/Authentication/")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(token(++tokens)));
    } else answer(received, res, ++operations);
  });
}

function tokenClient(url: string, extra: Partial<Parameters<typeof createServiceClient>[0]> = {}) {
  return createServiceClient({
    baseUrl: url,
    merchantGuid: GUID,
    credentials: { userName: "merchant-user", password: PASSWORD },
    retries: false,
    ...extra,
  });
}

const answerJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

// Review HOSTILE-3: the redactor kept the last 8 tokens only, so a slow call's own token, echoed in
// its 500 after 8 newer tokens were issued (short lifetimes, a 401 storm), was in its error whole.
describe("a call's own token is redacted from its error however many tokens came after it", () => {
  it("a slow call's echoed token, after 9 newer tokens were issued", async () => {
    let answerSlowCall = () => {};
    let arrived = () => {};
    const slowCallArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const service = await withTokens(
      (n) => ({ Token: `eyJhbGciOiJIUzI1NiJ9.secret-token-number-${n}`, TTLInMinutes: 0.00001 }),
      (received, res, n) => {
        const echo = () =>
          answerJson(res, 500, { Message: `refused with ${received.headers.authorization}` });
        // The first call is answered only once the 9 after it are done.
        if (n === 1) {
          answerSlowCall = echo;
          arrived();
        } else answerJson(res, 200, []);
      },
    );
    const events: string[] = [];
    const client = tokenClient(service.url, {
      hooks: { includeBodies: true, onResponse: (event) => events.push(JSON.stringify(event)) },
    });
    const slow = client.getShippingDetailsExtended(SHIPPING).catch((error: unknown) => error);
    await slowCallArrived;
    for (let i = 0; i < 9; i++) await client.getShippingDetailsExtended(SHIPPING);
    answerSlowCall();
    const error = (await slow) as ServiceError;
    expect(service.received.filter((r) => r.url.startsWith("/Authentication/"))).toHaveLength(10);
    expect(error.message).toContain("refused with Bearer [REDACTED]");
    const texts = [error.message, String(error.description), JSON.stringify(error), ...events];
    for (const text of [...texts, inspect(error, { depth: 10 })]) {
      expect(text).not.toContain("secret-token-number-1");
    }
  });

  // Review SECOND-HOSTILE-2: the hold ended when the call returned its body, before
  // calculateBillingSummary built its result from it (a delivery's error), so the token echoed
  // there was let go first, and was in the result in clear.
  /** A service answering the first operation with `slow(authorization)` once 9 others are done. */
  async function slowEcho(slow: (authorization: string | undefined) => unknown) {
    let answerSlowCall = () => {};
    let arrived = () => {};
    const slowCallArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const service = await withTokens(
      (n) => ({ Token: `eyJhbGciOiJIUzI1NiJ9.secret-token-number-${n}`, TTLInMinutes: 0.00001 }),
      (received, res, n) => {
        if (n === 1) {
          answerSlowCall = () => answerJson(res, 200, slow(received.headers.authorization));
          arrived();
        } else answerJson(res, 200, []);
      },
    );
    const client = tokenClient(service.url);
    return {
      client,
      /** Awaits `call` started on `client`, answered after 9 calls with newer tokens. */
      async after<T>(call: Promise<T>): Promise<T> {
        await slowCallArrived;
        for (let i = 0; i < 9; i++) await client.getShippingDetailsExtended(SHIPPING);
        answerSlowCall();
        const result = await call;
        const tokens = service.received.filter((r) => r.url.startsWith("/Authentication/"));
        expect(tokens).toHaveLength(10);
        return result;
      },
    };
  }

  it("a slow billing call's delivery error echoing its token, after 9 newer tokens", async () => {
    const { client, after } = await slowEcho((authorization) => ({
      externalReference: "R-1",
      dtResults: [
        {
          deliveryId: `D1 ${authorization}`,
          status: {
            isSuccessful: false,
            error: { code: 1, description: `not calculated for ${authorization}` },
          },
          // A product code that is an EAN-13 and also passes the Luhn check (review final-1):
          // the merchant's id, kept as sent, while the echoed token is masked.
          lineItems: [
            {
              index: "0",
              code: "4006381334013",
              hsCode: "610910",
              dutyLines: [],
              taxLines: [{ name: "VAT", price: 1.9, rate: 0.19 }],
            },
          ],
          additionalFees: [],
          totals: { taxes: 0, duties: 0, additionalFees: 0 },
        },
      ],
    }));
    const result = await after(
      client.calculateBillingSummary({
        subscriptionId: "SUB-1",
        currencyCode: "EUR",
        products: [{ code: "SKU-1", quantity: 1, price: 10 }],
      }),
    );
    expect(result.calculated).toBe(false);
    if (result.calculated) return;
    expect(result.error.description).toBe("not calculated for Bearer [REDACTED]");
    expect(JSON.stringify(result.error)).not.toContain("secret-token-number-1");
    // Review third-3: the whole result, as an app logs it; the summary's texts echoed the token.
    expect(JSON.stringify(result)).not.toContain("secret-token-number-1");
    expect(inspect(result, { depth: 10 })).not.toContain("secret-token-number-1");
    expect(result.summary.dtResults[0]?.deliveryId).toBe("D1 Bearer [REDACTED]");
    expect(result.summary.dtResults[0]?.lineItems[0]?.code).toBe("4006381334013");
  });
});

// Review HOSTILE-4: `TTLInMinutes: 0` (a .NET int left unset) or `"15"` (a gateway's text) refused
// the whole token answer: every token operation failed, each spending a token request on it.
describe("a token answer's TTLInMinutes as a service may send it", () => {
  it.each([
    ["0", 0],
    ["-1", -1],
    ['"15"', "15"],
    ['" 15 "', " 15 "],
    ['"soon"', "soon"],
    ["true", true],
  ])("%s: the token is used, and one token request serves every call", async (_label, ttl) => {
    const service = await withTokens(
      (n) => ({ Token: `tok-abcdefgh-${n}`, TTLInMinutes: ttl }),
      (_received, res) => answerJson(res, 200, []),
    );
    const client = tokenClient(service.url);
    for (let i = 0; i < 3; i++) await client.getShippingDetailsExtended(SHIPPING);
    const tokens = service.received.filter((r) => r.url.startsWith("/Authentication/"));
    expect(tokens).toHaveLength(1);
    expect(service.received).toHaveLength(4);
  });
});

// Review HOSTILE-5: the per-attempt timer, the deadline and the caller's signal only aborted the
// signal given to `fetch`: a `fetch` option that dropped `init.signal` (a wrapper that rebuilds
// init) left the call pending for ever.
describe("timeouts and the caller's signal hold whatever the fetch option does with init.signal", () => {
  const dropsSignal = (url: string, init: RequestInit) =>
    fetch(url, {
      method: init.method ?? "GET",
      headers: init.headers ?? {},
      body: init.body ?? null,
      redirect: init.redirect ?? "follow",
    });
  const pending = (ms: number) =>
    new Promise<string>((resolve) => setTimeout(() => resolve("still pending"), ms));

  it("no answer at all: TIMEOUT after timeoutMs, may have been applied", async () => {
    const service = await listen(() => {});
    const client = createServiceClient({
      baseUrl: service.url,
      merchantGuid: GUID,
      fetch: dropsSignal,
      timeoutMs: 300,
      deadlineMs: 5000,
      retries: false,
    });
    const started = Date.now();
    const outcome = await Promise.race([
      failureOf(client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" })),
      pending(3000),
    ]);
    expect(outcome).toMatchObject({ code: "TIMEOUT", mayHaveBeenApplied: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a deadline shorter than the attempt: DEADLINE_EXCEEDED", async () => {
    const service = await listen(() => {});
    const client = createServiceClient({
      baseUrl: service.url,
      merchantGuid: GUID,
      fetch: dropsSignal,
      timeoutMs: 5000,
      deadlineMs: 300,
      retries: false,
    });
    const outcome = await Promise.race([
      failureOf(client.locationByIp({ ip: "203.0.113.7" })),
      pending(3000),
    ]);
    expect(outcome).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });

  it("a body that stalls after its headers: TIMEOUT keeping the status", async () => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"IsSuccess":');
    });
    const client = createServiceClient({
      baseUrl: service.url,
      merchantGuid: GUID,
      fetch: dropsSignal,
      timeoutMs: 300,
      retries: false,
    });
    const outcome = await Promise.race([
      failureOf(client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" })),
      pending(3000),
    ]);
    expect(outcome).toMatchObject({ code: "TIMEOUT", status: 200, mayHaveBeenApplied: true });
  });

  it("the caller's signal rejects the call with its reason, before the answer or during its body", async () => {
    const reason = new Error("shutdown");
    for (const stall of [false, true]) {
      const service = await listen((_received, res) => {
        if (!stall) return;
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"IsSuccess":');
      });
      const client = createServiceClient({
        baseUrl: service.url,
        merchantGuid: GUID,
        fetch: dropsSignal,
        retries: false,
      });
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 200);
      const call = client.voidParcel(
        { OrderId: "GE-1", ParcelCode: "P-1" },
        { signal: controller.signal },
      );
      const outcome = await Promise.race([call.catch((error: unknown) => error), pending(3000)]);
      expect(outcome, `stall ${stall}`).toBe(reason);
    }
  });

  it("an answer that comes after the timeout is dropped, and no rejection is left unhandled", async () => {
    const service = await listen((_received, res) => {
      setTimeout(() => answerJson(res, 200, { IsSuccess: true, Errors: [] }), 400);
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (error: unknown) => unhandled.push(error);
    process.on("unhandledRejection", onUnhandled);
    try {
      const client = createServiceClient({
        baseUrl: service.url,
        merchantGuid: GUID,
        fetch: dropsSignal,
        timeoutMs: 100,
        retries: false,
      });
      const failure = await failureOf(client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" }));
      expect(failure.code).toBe("TIMEOUT");
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  // Review SECOND-HOSTILE-3: the late answer's clean-up read `late.body.cancel()`, so a fetch
  // option resolving something else after the timeout (a "log and go on" wrapper's undefined, a
  // Node stream body, a body whose cancel throws) threw in a promise nobody awaited.
  it.each([
    ["undefined", () => undefined],
    ["null", () => null],
    ["a body without cancel (a Node stream)", () => ({ body: { pipe() {} } })],
    [
      "a body whose cancel throws",
      () => ({
        body: {
          cancel() {
            throw new Error("cancel threw");
          },
        },
      }),
    ],
    [
      "a body whose cancel rejects",
      () => ({ body: { cancel: () => Promise.reject(new Error("cancel rejected")) } }),
    ],
    [
      "a body that throws when read",
      () => ({
        get body() {
          throw new Error("body threw");
        },
      }),
    ],
  ])(
    "a fetch option resolving %s after the timeout: TIMEOUT, and no rejection is left unhandled",
    async (_label, late) => {
      const unhandled: unknown[] = [];
      const onUnhandled = (error: unknown) => unhandled.push(error);
      process.on("unhandledRejection", onUnhandled);
      try {
        const client = createServiceClient({
          baseUrl: "http://127.0.0.1:9",
          merchantGuid: GUID,
          fetch: (() =>
            new Promise((resolve) =>
              setTimeout(() => resolve(late()), 250),
            )) as unknown as typeof fetch,
          timeoutMs: 100,
          retries: false,
        });
        const failure = await failureOf(client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" }));
        expect(failure.code).toBe("TIMEOUT");
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(unhandled.map(String)).toEqual([]);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    },
  );
});

// Review network-5: what an answer declares about its encoding was misreported or ignored.
describe("what the answer declares about its encoding", () => {
  const refunds = { orderId: "GE-1", refunds: [] };

  it.each(["gzip", "br"])(
    "a body labelled Content-Encoding: %s that is not: INVALID_RESPONSE, not 'cut off', not retried",
    async (encoding) => {
      const service = await listen((_received, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
        res.end(JSON.stringify(refunds));
      });
      const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
      const read = await failureOf(client.getOrderRefunds({ orderId: "GE-1" }));
      expect(read).toMatchObject({ code: "INVALID_RESPONSE", status: 200 });
      expect(read.message).toContain(`could not be decoded as its Content-Encoding: ${encoding}`);
      expect(service.received).toHaveLength(1);
      // A dispatch whose 2xx cannot be read may have been applied, as any unreadable 2xx.
      const dispatch = await failureOf(client.dispatchConsolidatedShipment({ OrderIds: ["GE-1"] }));
      expect(dispatch).toMatchObject({ code: "INVALID_RESPONSE", mayHaveBeenApplied: true });
    },
  );

  const voided = {
    IsSuccess: true,
    Errors: [{ ErrorCode: "C102", ErrorText: "Annulé: transporteur" }],
  };
  it.each([
    ["Latin-1 bytes declared iso-8859-1", "latin1"],
    ["UTF-8 bytes declared iso-8859-1 (a proxy's label)", "utf8"],
  ] as const)("%s read as they are", async (_label, bytes) => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=iso-8859-1" });
      res.end(Buffer.from(JSON.stringify(voided), bytes));
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    const result = await client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" });
    expect(result.warnings[0]?.description).toBe("Annulé: transporteur");
  });

  // Review second-client-2: a label makes unreadable bytes readable, never readable ones unreadable
  // or garbled. UTF-8 with one stray byte stays UTF-8 (one U+FFFD) whatever the label says.
  it("UTF-8 JSON with one stray byte labelled utf-16: read as UTF-8, a success", async () => {
    // The stray byte inside a string: outside one, U+FFFD is no JSON in any reading.
    const bytes = Buffer.concat([
      Buffer.from('{"orderId":"GE-1 é'),
      Buffer.from([0xff]),
      Buffer.from('","refunds":[]}'),
    ]);
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-16" });
      res.end(bytes);
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    await expect(client.getOrderRefunds({ orderId: "GE-1" })).resolves.toMatchObject({
      orderId: "GE-1 é\uFFFD",
    });
  });

  it("UTF-8 text with one stray byte labelled iso-8859-1: its letters kept, the stray byte U+FFFD", async () => {
    const body = Buffer.concat([
      Buffer.from(
        '{"IsSuccess":true,"Errors":[{"ErrorCode":"C102","ErrorText":"Annul\\u00e9 transporteur é',
      ),
      Buffer.from([0xff]),
      Buffer.from('"}]}'),
    ]);
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=iso-8859-1" });
      res.end(body);
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    const result = await client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" });
    expect(result.warnings[0]?.description).toBe("Annulé transporteur é\uFFFD");
  });

  it.each(["utf-16", "utf-16be", "shift_jis"])(
    "Latin-1 bytes labelled %s (not a single-byte charset): read as UTF-8, as before",
    async (label) => {
      const service = await listen((_received, res) => {
        res.writeHead(200, { "content-type": `application/json; charset=${label}` });
        res.end(Buffer.from(JSON.stringify(voided), "latin1"));
      });
      const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
      const result = await client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" });
      expect(result.warnings[0]?.description).toBe("Annul\uFFFD: transporteur");
    },
  );

  it("Latin-1 bytes labelled windows-1252: read in that charset", async () => {
    const service = await listen((_received, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=windows-1252" });
      res.end(Buffer.from(JSON.stringify(voided), "latin1"));
    });
    const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
    const result = await client.voidParcel({ OrderId: "GE-1", ParcelCode: "P-1" });
    expect(result.warnings[0]?.description).toBe("Annulé: transporteur");
  });

  it.each(["x".repeat(6000), "replacement", "iso-2022-kr", '"utf-8"'])(
    "a UTF-8 answer with an odd or unknown charset name (%#) reads as UTF-8, nothing thrown",
    async (label) => {
      const service = await listen((_received, res) => {
        res.writeHead(200, { "content-type": `application/json; charset=${label}` });
        res.end(JSON.stringify(refunds));
      });
      const client = createServiceClient({ baseUrl: service.url, merchantGuid: GUID });
      await expect(client.getOrderRefunds({ orderId: "GE-1" })).resolves.toMatchObject({
        orderId: "GE-1",
      });
    },
  );
});
