// The client against plain local HTTP servers that misbehave at the transport level: a redirect to
// another origin (credentials must stay with the configured origins), path parameters that are
// dot segments, per-call limits that make no sense. Real servers, real fetch.
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
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
    },
  );

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
