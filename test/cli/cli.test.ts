import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UsageError } from "../../src/cli/errors.js";
import { baseUrl, positiveInteger, rawOptionValue, runCli } from "../../src/cli/main.js";
import { ALL_CALLBACKS, resolveCallbacks } from "../../src/cli/simulate.js";
import { CALLBACK_NAMES } from "../../src/index.js";
import { createTestKeys, signServiceToken, type TestKeys } from "../../src/testing/index.js";
import {
  closedPort,
  MERCHANT_GUID,
  startMerchant,
  startRawMerchant,
  WRONG_ANSWERS,
} from "../testing/helpers.js";
import { captureIo } from "./io.js";

let dir: string;
let keys: TestKeys;
let keyFile: string;
let good: Awaited<ReturnType<typeof startMerchant>>;
let bad: Awaited<ReturnType<typeof startRawMerchant>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cbc-cli-"));
  keys = await createTestKeys();
  keyFile = join(dir, "private.pem");
  await writeFile(keyFile, keys.privateKey);
  good = await startMerchant(keys.publicKey);
  bad = await startRawMerchant(WRONG_ANSWERS);
});

afterAll(async () => {
  await good?.close();
  await bad?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The table row of a callback, and its continuation lines (further problems). */
function rowOf(stdout: string, callback: string): string {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`${callback} `));
  if (start < 0) throw new Error(`no row for ${callback} in:\n${stdout}`);
  const block = [lines[start] ?? ""];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(" ") || line.trim() === "") break;
    block.push(line);
  }
  return block.join("\n");
}

describe("argument handling", () => {
  it("resolves all, single names in any case, and comma lists", () => {
    expect(resolveCallbacks("all")).toEqual(ALL_CALLBACKS);
    // Every callback, each once.
    expect([...ALL_CALLBACKS].sort()).toEqual([...CALLBACK_NAMES].sort());
    expect(resolveCallbacks("ALL,SendAdditionalRequiredDocumentsToMerchant")).toEqual(
      ALL_CALLBACKS,
    );
    expect(resolveCallbacks("updateorderstatus, SendOrderToMerchant,UpdateOrderStatus")).toEqual([
      "UpdateOrderStatus",
      "SendOrderToMerchant",
    ]);
    expect(() => resolveCallbacks("SendOrder")).toThrow(UsageError);
    expect(() => resolveCallbacks(" , ")).toThrow(/name a callback/);
    for (const name of CALLBACK_NAMES) expect(resolveCallbacks(name)).toEqual([name]);
  });

  it("reads text options as typed (the parser would turn 000123 into 123)", () => {
    const args = [
      "simulate",
      "all",
      "--guid",
      "0012",
      "--cart-token=000123",
      "--guid",
      "007",
      "--",
      "--url",
      "x",
    ];
    expect(rawOptionValue(args, "--guid")).toBe("007");
    expect(rawOptionValue(args, "--cart-token")).toBe("000123");
    expect(rawOptionValue(args, "--url")).toBeUndefined();
  });

  it("checks numbers and the URL", () => {
    expect(positiveInteger(undefined, "--slow-ms", 5000)).toBe(5000);
    expect(positiveInteger(250, "--slow-ms", 5000)).toBe(250);
    expect(positiveInteger("250", "--slow-ms", 5000)).toBe(250);
    for (const wrong of ["0", "-1", "1.5", "abc", true]) {
      expect(() => positiveInteger(wrong, "--slow-ms", 1)).toThrow(UsageError);
    }
    expect(baseUrl("http://127.0.0.1:3000/crossborder")).toBe("http://127.0.0.1:3000/crossborder");
    expect(() => baseUrl(undefined)).toThrow(/--url is required/);
    expect(() => baseUrl("ftp://x")).toThrow(/http or https/);
    expect(() => baseUrl("not a url")).toThrow(/not a URL/);
  });
});

describe("simulate", () => {
  it("passes a correct merchant built from the library: exit 0, one row per callback", async () => {
    const cap = captureIo();
    const code = await runCli(
      [
        "simulate",
        "all",
        "--url",
        good.base,
        "--private-key",
        keyFile,
        "--guid",
        MERCHANT_GUID,
        "--cart-token",
        "cart-7",
      ],
      cap.io,
    );
    expect(cap.stderr).toBe("");
    const cart = good.calls.find((call) => call.callback === "GetCheckoutCartInfo");
    expect(cart?.payload).toMatchObject({ merchantCartToken: "cart-7", countryCode: "US" });
    expect(code).toBe(0);
    expect(cap.stdout).toContain(`Simulating 14 callbacks against ${good.base}`);
    expect(cap.stdout).toMatch(/^callback\s+HTTP\s+Success\s+ms\s+problems$/m);
    for (const callback of ALL_CALLBACKS)
      expect(rowOf(cap.stdout, callback)).toMatch(/\s200\s.*\sok$/);
    expect(rowOf(cap.stdout, "GetCheckoutCartInfo")).toMatch(/\s200\s+3 products\s+\d+\s+ok$/);
    expect(rowOf(cap.stdout, "SendRMAInfoToMerchant")).toContain('"True"');
    expect(rowOf(cap.stdout, "SendOrderToMerchant")).toMatch(/\s200\s+true\s/);
    expect(rowOf(cap.stdout, "ValidateGiftCard")).toMatch(/\s200\s+true\s/);
    expect(cap.stdout).toContain("14 of 14 answers well-formed.");
    expect(cap.stdout).not.toContain("\u001b[");
    expect(good.calls.filter((call) => call.auth?.includes("jwt")).length).toBeGreaterThanOrEqual(
      14,
    );
  });

  it("flags every malformed answer of a wrong merchant and exits 1", async () => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "all", "--url", bad.base, "--private-key", keyFile, "--slow-ms", "150"],
      cap.io,
    );
    expect(code).toBe(1);
    const out = cap.stdout;
    expect(rowOf(out, "SendOrderToMerchant")).toMatch(
      /\s200\s+"yes"\s.*"Success" is the text "yes": the service cannot parse it/,
    );
    expect(rowOf(out, "UpdateOrderStatus")).toMatch(/\s200\s+-\s.*missing "Success"/);
    expect(rowOf(out, "SendRMAInfoToMerchant")).toContain(
      '"Success" is the boolean true: SendRMAInfoToMerchant answers the text "True" or "False"',
    );
    expect(rowOf(out, "RemoveRestrictedProducts")).toMatch(/\s200\s+-\s.*missing "IsSuccess"/);
    expect(rowOf(out, "PerformOrderPayment")).toMatch(/\s500\s+false\s.*HTTP 500: a server error/);
    const dispatch = rowOf(out, "UpdateParcelDispatch");
    expect(dispatch).toContain("HTTP 502: a server error");
    expect(dispatch).toContain(
      "an HTML page instead of JSON (content-type text/html): an error page?",
    );
    expect(rowOf(out, "GetCheckoutCartInfo")).toMatch(
      /\s200\s+3 products\s.*slow: answered in \d+ ms \(limit 150 ms\)/,
    );
    expect(rowOf(out, "ValidateGiftCard")).toContain(
      '"IsValid" is missing: ValidateGiftCard answers whether the card is valid (true or false)',
    );
    expect(rowOf(out, "ValidateGiftCard")).toContain(
      '"Balance" is number 25: the service reads the balance as text ("25.00")',
    );
    expect(rowOf(out, "ValidateVoucher")).toContain('"IsValid" is the text "true"');
    expect(rowOf(out, "RedeemGiftCard")).toContain('"Balance" is number 50.5');
    expect(rowOf(out, "RefundGiftCard")).toContain("HTTP 404: no RefundGiftCard endpoint");
    expect(rowOf(out, "NotifyOrderRefund")).toContain('missing "Success" (found "IsSuccess"');
    expect(rowOf(out, "UpdateOrderShippingInfo")).toContain("empty body: expected a JSON object");
    expect(rowOf(out, "SendAdditionalRequiredDocumentsToMerchant")).toMatch(/ok$/);
    expect(out).toContain("13 of 14 answers malformed.");
  });

  it("without --private-key sends no Authorization header and says so", async () => {
    const cap = captureIo();
    const before = bad.seen.length;
    const code = await runCli(["simulate", "SendRMAInfoToMerchant", "--url", bad.base], cap.io);
    expect(code).toBe(1);
    expect(cap.stderr).toContain("No --private-key: requests carry no Authorization header");
    const seen = bad.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.url).toBe("/crossborder/SendRMAInfoToMerchant");
  });

  it("signs with --issuer and --audience, writes --guid into the payloads", async () => {
    const cap = captureIo();
    const before = bad.seen.length;
    const code = await runCli(
      [
        "simulate",
        "UpdateOrderStatus,SendAdditionalRequiredDocumentsToMerchant",
        `--url=${bad.base}`,
        `--private-key=${keyFile}`,
        "--guid",
        "0012",
        "--cart-token=000123",
        "--issuer",
        "https://service.example",
        "--audience",
        "shop",
      ],
      cap.io,
    );
    expect(code).toBe(1); // UpdateOrderStatus answers without Success
    const seen = bad.seen.slice(before);
    expect(seen.map((request) => request.url)).toEqual([
      "/crossborder/UpdateOrderStatus",
      "/crossborder/SendAdditionalRequiredDocumentsToMerchant",
    ]);
    expect(JSON.parse(seen[0]?.body ?? "")).toMatchObject({ MerchantGUID: "0012" });
    expect(JSON.parse(seen[0]?.body ?? "")).not.toHaveProperty("CartToken");
    const token = seen[0]?.headers.authorization?.slice("Bearer ".length) ?? "";
    const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
    expect(claims).toMatchObject({ iss: "https://service.example", aud: "shop" });
    expect(rowOf(cap.stdout, "SendAdditionalRequiredDocumentsToMerchant")).toMatch(/ok$/);
    expect(cap.stdout).toContain("1 of 2 answers malformed.");

    await runCli(
      ["simulate", "RemoveRestrictedProducts", "--url", bad.base, "--cart-token", "000123"],
      captureIo().io,
    );
    expect(JSON.parse(bad.seen.at(-1)?.body ?? "")).toMatchObject({ CartToken: "000123" });

    await runCli(
      [
        "simulate",
        "ValidateGiftCard",
        `--url=${bad.base}`,
        "--cart-token=000123",
        "--auth-token",
        "0042",
        "--session-id=007",
      ],
      captureIo().io,
    );
    expect(JSON.parse(bad.seen.at(-1)?.body ?? "")).toMatchObject({
      MerchantCartToken: "000123",
      AuthToken: "0042",
      SessionId: "007",
    });
  });

  it("reports a request that fails (nothing listening, timeout) and exits 1", async () => {
    const port = await closedPort();
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "UpdateOrderStatus", "--url", `http://127.0.0.1:${port}/cb`],
      cap.io,
    );
    expect(code).toBe(1);
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toMatch(
      /-\s+-\s+-\s+request failed: .*ECONNREFUSED/,
    );
    expect(cap.stdout).toContain("1 of 1 requests failed.");

    const slow = captureIo();
    const timedOut = await runCli(
      ["simulate", "GetCheckoutCartInfo", "--url", bad.base, "--timeout-ms", "100"],
      slow.io,
    );
    expect(timedOut).toBe(1);
    expect(rowOf(slow.stdout, "GetCheckoutCartInfo")).toMatch(
      / request failed: no answer within 100 ms$/,
    );
  });

  it("reports refusals (401 without a token) as problems: the service counts them as failed", async () => {
    const cap = captureIo();
    const code = await runCli(["simulate", "all", "--url", good.base], cap.io);
    expect(code).toBe(1);
    for (const callback of ALL_CALLBACKS)
      expect(rowOf(cap.stdout, callback)).toMatch(
        /\s401\s+(false|"False")\s+\d+\s+HTTP 401: not a 2xx answer, the service counts the call as failed$/,
      );
  });

  it("colours on a TTY, not with NO_COLOR", async () => {
    const tty = captureIo({}, true);
    await runCli(
      [
        "simulate",
        "RemoveRestrictedProducts",
        "--url",
        good.base,
        "--private-key",
        keyFile,
        "--guid",
        MERCHANT_GUID,
      ],
      tty.io,
    );
    expect(tty.stdout).toContain("\u001b[32mok\u001b[39m");
    const noColor = captureIo({ NO_COLOR: "1" }, true);
    await runCli(["simulate", "RemoveRestrictedProducts", "--url", good.base], noColor.io);
    expect(noColor.stdout).not.toContain("\u001b[");
    expect(noColor.stderr).not.toContain("\u001b[");
  });

  it("answers usage errors with exit 2 and a message", async () => {
    const cases: [string[], RegExp][] = [
      [["simulate", "all"], /--url is required/],
      [["simulate", "Nope", "--url", good.base], /unknown callback "Nope"/],
      [
        ["simulate", "all", "--url", good.base, "--slow-ms", "soon"],
        /--slow-ms must be a positive whole number/,
      ],
      [["simulate", "all", "--url", good.base, "--bogus"], /Unknown option `--bogus`/],
      [
        ["simulate", "all", "--url", good.base, "--private-key", join(dir, "missing.pem")],
        /cannot read --private-key .*ENOENT/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--private-key", join(dir, "public.pem")],
        /is not an RSA private key/,
      ],
      [["simulate", "--url", good.base], /missing required args/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [[], /no command given/],
    ];
    await writeFile(join(dir, "public.pem"), keys.publicKey);
    for (const [args, message] of cases) {
      const cap = captureIo();
      expect(await runCli(args, cap.io), args.join(" ")).toBe(2);
      expect(cap.stderr).toMatch(message);
      expect(cap.stdout).toBe("");
    }
  });

  it("accepts a PKCS#1 RSA key as --private-key", async () => {
    const { createPrivateKey } = await import("node:crypto");
    const pkcs1 = createPrivateKey(keys.privateKey)
      .export({ type: "pkcs1", format: "pem" })
      .toString();
    const file = join(dir, "pkcs1.pem");
    await writeFile(file, pkcs1);
    const cap = captureIo();
    const code = await runCli(
      [
        "simulate",
        "UpdateOrderStatus",
        "--url",
        good.base,
        "--private-key",
        file,
        "--guid",
        MERCHANT_GUID,
      ],
      cap.io,
    );
    expect(code).toBe(0);
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toMatch(/\s200\s+true\s/);
  });

  it("prints help and the version with exit 0", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      expect(await runCli(["--help"], captureIo().io)).toBe(0);
      expect(log.mock.calls.flat().join("\n")).toMatch(/simulate <callback>[\s\S]*keys/);
      log.mockClear();
      expect(await runCli(["simulate", "--help"], captureIo().io)).toBe(0);
      expect(log.mock.calls.flat().join("\n")).toContain("--private-key <file>");
      log.mockClear();
      expect(await runCli(["--version"], captureIo().io)).toBe(0);
      expect(log.mock.calls.flat().join("\n")).toMatch(/^crossborder-callbacks\/\d+\.\d+\.\d+/);
    } finally {
      log.mockRestore();
    }
  });
});

describe("keys", () => {
  it("writes the pair (private 0600), prints the paths, refuses to overwrite without --force", async () => {
    const out = join(dir, "keys", "nested");
    const cap = captureIo();
    expect(await runCli(["keys", "--out", out], cap.io)).toBe(0);
    const publicPath = join(out, "service-test-public.pem");
    const privatePath = join(out, "service-test-private.pem");
    expect(cap.stdout).toContain(`Wrote ${publicPath}\n`);
    expect(cap.stdout).toContain(`Wrote ${privatePath} (mode 0600)`);
    const publicPem = await readFile(publicPath, "utf8");
    const privatePem = await readFile(privatePath, "utf8");
    expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    if (process.platform !== "win32") {
      expect((await stat(privatePath)).mode & 0o777).toBe(0o600);
      expect((await stat(publicPath)).mode & 0o077).toBe((await stat(publicPath)).mode & 0o044);
    }
    // The pair matches: a token signed with the private file verifies with the public file.
    const { importSPKI, jwtVerify } = await import("jose");
    await jwtVerify(await signServiceToken(privatePem), await importSPKI(publicPem, "RS256"));

    const again = captureIo();
    expect(await runCli(["keys", "--out", out], again.io)).toBe(2);
    expect(again.stderr).toMatch(/service-test-private\.pem already exists \(pass --force/);
    expect(await readFile(privatePath, "utf8")).toBe(privatePem);

    const forced = captureIo();
    expect(await runCli(["keys", "--out", out, "--force"], forced.io)).toBe(0);
    expect(await readFile(privatePath, "utf8")).not.toBe(privatePem);
    expect((await stat(privatePath)).mode & 0o777).toBe(0o600);
  });

  it("never leaves half a pair when only the public file exists", async () => {
    const out = join(dir, "half");
    await runCli(["keys", "--out", out], captureIo().io);
    await rm(join(out, "service-test-private.pem"));
    const cap = captureIo();
    expect(await runCli(["keys", "--out", out], cap.io)).toBe(2);
    expect(cap.stderr).toContain("service-test-public.pem already exists");
    await expect(stat(join(out, "service-test-private.pem"))).rejects.toThrow(/ENOENT/);
  });
});
