// `crossborder-callbacks service <operation>`: in process through runCli, and as the built bin,
// against the simulator over real HTTP.
import { existsSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { exitCodeOf, resolveOperation, SERVICE_ENV } from "../../src/cli/service.js";
import {
  SERVICE_OPERATION_NAMES,
  ServiceRateLimitError,
  ServiceServerError,
  ServiceValidationError,
} from "../../src/service/index.js";
import { createServiceSimulator, type ServiceSimulator } from "../../src/testing/index.js";
import { expectNoSecrets } from "../service/helpers.js";
import { closedPort } from "../testing/helpers.js";
import { captureIo, runCommand } from "./io.js";

let dir: string;
let simulator: ServiceSimulator;
const outputs: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cbc-service-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  simulator = await createServiceSimulator();
});
afterEach(async () => {
  await simulator.close();
});

function env(
  overrides: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    [SERVICE_ENV.merchantGuid]: simulator.merchantGuid,
    [SERVICE_ENV.userName]: simulator.credentials.userName,
    [SERVICE_ENV.password]: simulator.credentials.password,
    ...overrides,
  };
}

async function jsonFile(name: string, content: unknown): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

async function run(args: string[], environment = env()) {
  const capture = captureIo(environment);
  const code = await runCli(["service", ...args], capture.io);
  outputs.push(capture.stdout, capture.stderr);
  return { code, stdout: capture.stdout, stderr: capture.stderr };
}

describe("service (in process)", () => {
  it("lists the operations", async () => {
    const { code, stdout } = await run(["list"]);
    expect(code).toBe(0);
    for (const name of SERVICE_OPERATION_NAMES) expect(stdout).toContain(name);
    expect(stdout).toMatch(
      /dispatchConsolidatedShipment\s+DispatchConsolidatedShipment\s+POST \/Order\/DispatchConsolidatedShipment\s+GUID\s+never/,
    );
  });

  it("accepts the method name or the document's name, in any case", () => {
    expect(resolveOperation("VoidParcel")).toBe("voidParcel");
    expect(resolveOperation("recentproductcountrys")).toBe("recentProductCountries");
    expect(resolveOperation("getShippingDetailsExtended")).toBe("getShippingDetailsExtended");
  });

  it("prints the typed result: VoidParcel's C102 as a warning, exit 0", async () => {
    const file = await jsonFile("void.json", { OrderId: "GE-1001", ParcelCode: "P-1001-2" });
    const { code, stdout, stderr } = await run([
      "VoidParcel",
      "--json",
      file,
      "--base-url",
      simulator.url,
    ]);
    expect([code, stderr]).toEqual([0, ""]);
    expect(JSON.parse(stdout)).toMatchObject({
      operation: "voidParcel",
      result: { response: { IsSuccess: true }, warnings: [{ code: "C102" }] },
    });
  });

  it("calls an operation with a token, the base URL from the environment, and the caller's Idempotency-Key", async () => {
    const file = await jsonFile("billing.json", {
      subscriptionId: "SUB-PHYSICAL-1",
      currencyCode: "EUR",
      products: [{ code: "SKU-1", quantity: 1, price: 10 }],
    });
    const key = "8c0e7b7e-1f5a-4d0b-9a0e-4b7b7f1d2c3e";
    const { code, stdout } = await run(
      ["calculateBillingSummary", "--json", file, "--idempotency-key", key],
      env({ [SERVICE_ENV.baseUrl]: simulator.url }),
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout).result).toMatchObject({ calculated: true, idempotencyKey: key });
    expect(simulator.requestsOf("calculateBillingSummary")[0]?.headers["idempotency-key"]).toBe(
      key,
    );
    expect(simulator.tokensIssued).toBe(1);
  });

  it("pages RecentProductCountryS to the end", async () => {
    const file = await jsonFile("recent.json", { requestId: 0, defaultVatRates: { DE: 0.19 } });
    const { code, stdout } = await run([
      "RecentProductCountryS",
      "--json",
      file,
      "--base-url",
      simulator.url,
    ]);
    expect(code).toBe(0);
    const { result } = JSON.parse(stdout);
    expect(result.changes.map((c: { action: string }) => c.action)).toEqual([
      "upsert",
      "upsert",
      "delete",
      "upsert",
      "delete",
    ]);
    expect(result.requestId).toBe(5);
  });

  // Final reading F1-1: the printed success result went through the wide card rule, so a
  // Luhn-valid resume RequestID came out as the string "*********0004", which cannot be sent
  // back, and a dotted tracking number was masked. The merchant's data is printed as the service
  // sent it, only the secrets hidden; the verbose log and the errors keep the wide rule.
  it("prints a success result's numbers and dotted numbers as the service sent them", async () => {
    const requestId = 1764170000004; // 13 digits, passes the Luhn check
    const dotted = "1Z.9999.9999.9999.9995"; // passes it too, in its digits
    simulator.fail(
      "recentProductCountries",
      {
        status: 200,
        body: {
          ProductCountry: [{ ProductCode: dotted, CountryCode: "DE", IsForbidden: false }],
          RequestID: requestId,
        },
      },
      { status: 200, body: { ProductCountry: [], RequestID: requestId } },
    );
    const file = await jsonFile("recent-exact.json", { requestId: 0 });
    const { code, stdout, stderr } = await run([
      "RecentProductCountryS",
      "--json",
      file,
      "--base-url",
      simulator.url,
      "--verbose",
    ]);
    expect(code).toBe(0);
    const { result } = JSON.parse(stdout);
    expect(result.requestId).toBe(requestId);
    expect(result.changes[0]).toMatchObject({ requestId, record: { ProductCode: dotted } });
    // The hook events keep the wide rule (the CLI logs no bodies: the next page's URL shows it).
    expect(stderr).toContain("RecentProductCountryS?requestId=*********0004");
  });

  it("still hides the secrets and a spaced card number in a printed success result", async () => {
    const card = "4111 1111 1111 1111";
    simulator.fail("getShippingDetailsExtended", {
      status: 200,
      body: [
        {
          destinationCountry: `${simulator.merchantGuid} ${card}`,
          status: "active",
          shippingRates: [],
        },
      ],
    });
    const file = await jsonFile("rates-card.json", { amount: 10, currencyCode: "EUR" });
    const { code, stdout } = await run([
      "getShippingDetailsExtended",
      "--json",
      file,
      "--base-url",
      simulator.url,
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain("[REDACTED] **** **** **** 1111");
    expect(stdout).not.toContain(card);
  });

  it("prints a refusal as the typed error on stderr, exit 1", async () => {
    const file = await jsonFile("dispatch.json", { OrderIds: ["GE-1003"] });
    const { code, stdout, stderr } = await run([
      "dispatchConsolidatedShipment",
      "--json",
      file,
      "--base-url",
      simulator.url,
    ]);
    expect([code, stdout]).toEqual([1, ""]);
    expect(JSON.parse(stderr).error).toMatchObject({
      name: "ServiceConflictError",
      kind: "conflict",
      code: "B002",
      status: 200,
      operation: "dispatchConsolidatedShipment",
    });
  });

  it("exit 3 when there is no usable answer", async () => {
    const file = await jsonFile("location.json", { ip: "203.0.113.7" });
    const port = await closedPort();
    const { code, stderr } = await run([
      "locationByIp",
      "--json",
      file,
      "--base-url",
      `http://127.0.0.1:${port}`,
    ]);
    expect(code).toBe(3);
    expect(JSON.parse(stderr).error).toMatchObject({
      kind: "network",
      code: "NETWORK_ERROR",
      attempts: 3,
    });
  });

  it("exit 2 for usage errors and for a request refused before sending", async () => {
    const file = await jsonFile("bad-location.json", { ip: "nowhere" });
    const broken = await jsonFile("broken.json", "{ nope");
    const key = "8c0e7b7e-1f5a-4d0b-9a0e-4b7b7f1d2c3e";
    const cases: [string[], Record<string, string | undefined>, RegExp][] = [
      [["locationByIp", "--json", file, "--base-url", simulator.url], env(), /INVALID_REQUEST/],
      [["locationByIp", "--json", file], env(), /--base-url/],
      [
        ["locationByIp", "--json", file, "--base-url", simulator.url],
        env({ [SERVICE_ENV.merchantGuid]: undefined }),
        /CROSSBORDER_MERCHANT_GUID/,
      ],
      [["locationByIp", "--base-url", simulator.url], env(), /--json <file> is required/],
      [["locationByIp", "--json", broken, "--base-url", simulator.url], env(), /not valid JSON/],
      [
        ["locationByIp", "--json", join(dir, "missing.json"), "--base-url", simulator.url],
        env(),
        /ENOENT/,
      ],
      [["Nope", "--json", file, "--base-url", simulator.url], env(), /unknown operation "Nope"/],
      [["locationByIp", "--json", file, "--base-url", "ftp://x"], env(), /http or https/],
      [
        ["locationByIp", "--json", file, "--base-url", simulator.url, "--timeout-ms", "soon"],
        env(),
        /--timeout-ms/,
      ],
      [
        ["locationByIp", "--json", file, "--base-url", simulator.url],
        env({ [SERVICE_ENV.password]: undefined }),
        /both/,
      ],
      [
        ["locationByIp", "--json", file, "--base-url", `${simulator.url}/?merchantGUID=x`],
        env(),
        /^error --base-url must not carry credentials, a query or a fragment/,
      ],
      // The billing summary's only: on another operation it would be ignored (second-left-2).
      [
        ["locationByIp", "--json", file, "--base-url", simulator.url, "--idempotency-key", key],
        env(),
        /^error --idempotency-key is calculateBillingSummary's only \(locationByIp sends none\)/,
      ],
    ];
    for (const [args, environment, message] of cases) {
      const { code, stderr } = await run(args, environment);
      expect([code, stderr], args.join(" ")).toEqual([2, expect.stringMatching(message)]);
    }
    expect(simulator.requests).toEqual([]);
  });

  // Review OPT D11: the client's refusals named its options (baseUrl, timeoutMs, merchantGuid),
  // which the user of the command never wrote.
  it("a value the client refuses is reported under the flag or variable it came from", async () => {
    const file = await jsonFile("location-names.json", { ip: "203.0.113.7" });
    const query = `${simulator.url}/?x=1`;
    const cases: [string[], Record<string, string | undefined>, string][] = [
      [["--base-url", query], env(), "--base-url must not carry"],
      [[], env({ [SERVICE_ENV.baseUrl]: query }), "CROSSBORDER_BASE_URL must not carry"],
      [["--base-url", simulator.url, "--auth-url", query], env(), "--auth-url must not carry"],
      [
        ["--base-url", simulator.url],
        env({ [SERVICE_ENV.authUrl]: query }),
        "CROSSBORDER_AUTH_URL must not carry",
      ],
      // Second read S3: the CLI's own URL check named the flag for a value from the variable.
      [["--base-url", "ftp://x"], env(), "--base-url must be http or https, got ftp:"],
      [[], env({ [SERVICE_ENV.baseUrl]: "ftp://x" }), "CROSSBORDER_BASE_URL must be http or https"],
      [[], env({ [SERVICE_ENV.baseUrl]: "not a url" }), "CROSSBORDER_BASE_URL is not a URL"],
      [
        ["--base-url", simulator.url],
        env({ [SERVICE_ENV.authUrl]: "ftp://x" }),
        "CROSSBORDER_AUTH_URL must be http or https",
      ],
      [
        ["--base-url", simulator.url, "--auth-url", "not a url"],
        env({ [SERVICE_ENV.authUrl]: "ftp://x" }),
        "--auth-url is not a URL",
      ],
      [
        ["--base-url", simulator.url, "--timeout-ms", "3000000000"],
        env(),
        "--timeout-ms must be a positive number of at most 2147483647",
      ],
      [
        ["--base-url", simulator.url],
        env({ [SERVICE_ENV.merchantGuid]: "G\u0001x" }),
        "CROSSBORDER_MERCHANT_GUID must be a value an HTTP header can carry",
      ],
      [
        ["--base-url", simulator.url],
        env({ [SERVICE_ENV.userName]: "\u0141ukasz" }),
        "CROSSBORDER_USER_NAME must be a value an HTTP header can carry",
      ],
    ];
    for (const [args, environment, message] of cases) {
      const { code, stderr } = await run(["locationByIp", "--json", file, ...args], environment);
      expect(code, message).toBe(2);
      expect(stderr.slice(0, `error ${message}`.length)).toBe(`error ${message}`);
      expect(stderr, message).not.toMatch(/\b(baseUrl|authUrl|timeoutMs|merchantGuid|userName)\b/);
    }
    expect(simulator.requests).toEqual([]);
  });

  // Review c3 D2: fetch's TypeError (quoting the GUID) reached main, which printed its stack, exit 1.
  it("exit 2, one line and no stack for a GUID or user name a header cannot carry", async () => {
    const file = await jsonFile("rates-header.json", {
      amount: 50.3,
      currencyCode: "EUR",
      destinationCountry: "USA",
      serviceLevel: 2,
    });
    for (const [variable, value] of [
      [SERVICE_ENV.merchantGuid, "0e6f7a1c-3b2d-4c5e-\n9f80-112233445566"],
      [SERVICE_ENV.merchantGuid, "0e6f7a1c-3b2d-4c5e-9f80-11223344556\u0416"],
      [SERVICE_ENV.userName, "\u0141ukasz.Nowak"],
      // Review r3 R2: accepted, then refused by undici at dispatch: a retried NETWORK_ERROR, exit 3.
      [SERVICE_ENV.merchantGuid, "0e6f7a1c-3b2d-4c5e-9f80-112233445566\u0001"],
      [SERVICE_ENV.userName, "shop\u000bukasz"],
    ] as const) {
      const { code, stdout, stderr } = await run(
        ["getShippingDetailsExtended", "--json", file, "--base-url", simulator.url],
        env({ [variable]: value }),
      );
      expect([code, stdout], variable).toEqual([2, ""]);
      expect(stderr, variable).toMatch(
        /^error (CROSSBORDER_MERCHANT_GUID|CROSSBORDER_USER_NAME) must be [^\n]*\n$/,
      );
      expect(stderr, variable).toContain(variable);
      expect(stderr, variable).not.toMatch(/\bat \S+ \(|TypeError/);
      for (const part of ["9f80", "112233445566", "ukasz"]) expect(stderr).not.toContain(part);
    }
    expect(simulator.requests).toEqual([]);
  });

  // Review r3 R3: the GUID of a CRLF .env was sent trimmed, a form neither redactor knew.
  it("a GUID with a CR at its end (a CRLF .env) is sent trimmed, and its echo is redacted", async () => {
    const guid = simulator.merchantGuid;
    simulator.fail("voidParcel", {
      status: 403,
      body: { Message: `MerchantGUID ${guid} may not void this parcel` },
    });
    const file = await jsonFile("void-crlf.json", { OrderId: "GE-1001", ParcelCode: "P-1001-2" });
    const { code, stdout, stderr } = await run(
      ["voidParcel", "--json", file, "--base-url", simulator.url],
      env({ [SERVICE_ENV.merchantGuid]: `${guid}\r` }),
    );
    expect(code).toBe(1);
    expect(JSON.parse(stderr).error).toMatchObject({ name: "ServicePermissionError" });
    expectNoSecrets([stdout, stderr], [guid]);
    expect(simulator.requestsOf("voidParcel")[0]?.headers.merchantguid).toBe(guid);
  });

  // Review r3 R1: the token endpoint's refusal in a 500 exited 3 (a server failure), asked 3 times.
  it("exit 1 for a token request refused in a 5xx, asked once", async () => {
    const refusal = { IsSuccess: false, Reason: "Invalid user name or password" };
    simulator.fail("getAuthenticationToken", ...Array(3).fill({ status: 500, body: refusal }));
    const file = await jsonFile("rates-refused.json", {
      amount: 50.3,
      currencyCode: "EUR",
      destinationCountry: "USA",
      serviceLevel: 2,
    });
    const { code, stderr } = await run([
      "getShippingDetailsExtended",
      "--json",
      file,
      "--base-url",
      simulator.url,
    ]);
    expect(code).toBe(1);
    expect(JSON.parse(stderr).error).toMatchObject({
      name: "ServiceAuthenticationError",
      code: "TOKEN_REFUSED",
      status: 500,
    });
    expect(simulator.count("getAuthenticationToken")).toBe(1);
  });

  it("--verbose logs every attempt on stderr, redacted", async () => {
    simulator.fail("getShippingDetailsExtended", { status: 503 });
    const file = await jsonFile("rates.json", { amount: 10, currencyCode: "EUR" });
    const { code, stderr } = await run([
      "getShippingDetailsExtended",
      "--json",
      file,
      "--base-url",
      simulator.url,
      "--verbose",
    ]);
    expect(code).toBe(0);
    const events = stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).event);
    expect(events).toEqual([
      "request",
      "response",
      "request",
      "response",
      "retry",
      "request",
      "response",
    ]);
  });

  it("never prints the GUID, password or token, even when the service echoes them", async () => {
    const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlY2hvIn0.c2lnbmF0dXJlLW9mLXRoZS1lY2hv";
    simulator.fail("getAuthenticationToken", {
      status: 200,
      body: { Success: true, Token: token, TTLInMinutes: 15 },
    });
    const echo = `${simulator.merchantGuid.toUpperCase()} ${simulator.credentials.password} ${token}`;
    simulator.fail("getShippingDetailsExtended", {
      status: 200,
      body: [{ destinationCountry: echo, status: "active", shippingRates: [] }],
    });
    // A run that never got a token has only the GUID and password to keep out.
    simulator.fail("locationByIp", {
      status: 400,
      body: { Message: `${simulator.merchantGuid} ${simulator.credentials.password}` },
    });
    const rates = await jsonFile("rates2.json", { amount: 10, currencyCode: "EUR" });
    const location = await jsonFile("l.json", { ip: "203.0.113.7" });
    const first = await run([
      "getShippingDetailsExtended",
      "--json",
      rates,
      "--base-url",
      simulator.url,
      "--verbose",
    ]);
    const second = await run(["locationByIp", "--json", location, "--base-url", simulator.url]);
    expect([first.code, second.code]).toEqual([0, 1]);
    expect(first.stdout).toContain("[REDACTED] [REDACTED] [REDACTED]");
    expect(second.stderr).toContain("[REDACTED] [REDACTED]");
    expectNoSecrets(outputs, [simulator.merchantGuid, simulator.credentials.password, token]);
  });

  it("maps errors to exit codes", () => {
    const init = { operation: "locationByIp", message: "m" } as const;
    expect(exitCodeOf(new ServiceValidationError({ ...init, code: "INVALID_REQUEST" }))).toBe(2);
    expect(exitCodeOf(new ServiceValidationError({ ...init, code: "HTTP_400", status: 400 }))).toBe(
      1,
    );
    expect(exitCodeOf(new ServiceServerError({ ...init, code: "B700", status: 200 }))).toBe(1);
    expect(exitCodeOf(new ServiceServerError({ ...init, code: "HTTP_503", status: 503 }))).toBe(3);
    expect(exitCodeOf(new ServiceServerError({ ...init, code: "HTTP_500", status: 500 }))).toBe(3);
    expect(exitCodeOf(new ServiceRateLimitError({ ...init, code: "HTTP_429", status: 429 }))).toBe(
      3,
    );
    expect(
      exitCodeOf(new ServiceServerError({ ...init, code: "INVALID_RESPONSE", status: 200 })),
    ).toBe(3);
  });
});

describe("service (the built bin)", () => {
  const bin = new URL("../../dist/cli.js", import.meta.url).pathname;

  const runBin = (args: string[], environment: Record<string, string | undefined>) =>
    runCommand(process.execPath, [bin, "service", ...args], environment, dir);

  beforeAll(() => {
    const source = new URL("../../src/cli/service.ts", import.meta.url).pathname;
    if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(source).mtimeMs) {
      throw new Error(
        "dist/cli.js is missing or older than src/cli/service.ts: run `npm run build` (npm test does)",
      );
    }
  });

  it("prints the result (exit 0), the typed error (exit 1) and usage errors (exit 2)", async () => {
    const rates = await jsonFile("bin-rates.json", {
      amount: 10,
      currencyCode: "EUR",
      destinationCountry: "DE",
    });
    const ok = await runBin(
      ["GetShippingDetailsExtended", "--json", rates, "--base-url", simulator.url],
      env(),
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).result).toEqual([
      expect.objectContaining({ destinationCountry: "DE", status: "active" }),
    ]);

    const missing = await jsonFile("bin-refunds.json", { orderId: "GE-404" });
    const refused = await runBin(
      ["getOrderRefunds", "--json", missing, "--base-url", simulator.url],
      env(),
    );
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error).toMatchObject({
      name: "ServiceNotFoundError",
      code: "ORDER_NOT_FOUND",
      status: 404,
    });

    const usage = await runBin(["getOrderRefunds", "--json", missing], env());
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--base-url");
    const token = (
      simulator.requestsOf("getShippingDetailsExtended")[0]?.headers.authorization ?? ""
    ).replace("Bearer ", "");
    expectNoSecrets(
      [ok.stdout, ok.stderr, refused.stdout, refused.stderr, usage.stdout, usage.stderr],
      [simulator.merchantGuid, simulator.credentials.password, token],
    );
  });
});
