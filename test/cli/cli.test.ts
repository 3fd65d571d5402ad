import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { parseCommand } from "../../src/cli/args.js";
import { UsageError } from "../../src/cli/errors.js";
import { baseUrl, positiveInteger, runCli, shellWord } from "../../src/cli/main.js";
import {
  ALL_CALLBACKS,
  applySet,
  type Expectation,
  parseExpectation,
  renderHints,
  resolveCallbacks,
  type SimulationRow,
} from "../../src/cli/simulate.js";
import { MAX_TIMEOUT_MS } from "../../src/core/timers.js";
import {
  CALLBACK_NAMES,
  createCallbackRouter,
  createGetCheckoutCartInfoHandler,
} from "../../src/index.js";
import {
  createTestKeys,
  SAMPLE_MERCHANT_GUID,
  signServiceToken,
  type TestKeys,
} from "../../src/testing/index.js";
import {
  cartFixture,
  closedPort,
  json,
  listen,
  MERCHANT_GUID,
  ownOrderId,
  type RunningServer,
  startMerchant,
  startRawMerchant,
  WRONG_ANSWERS,
} from "../testing/helpers.js";
import { captureIo, rowOf, runCommand } from "./io.js";

let dir: string;
let keys: TestKeys;
let keyFile: string;
let good: Awaited<ReturnType<typeof startMerchant>>;
let bad: Awaited<ReturnType<typeof startRawMerchant>>;
/** A merchant that knows no cart: its cart callback answers a refusal. */
let refusing: Awaited<ReturnType<typeof startRawMerchant>>;
/** A merchant whose failures quote the card it was sent. */
let echoing: Awaited<ReturnType<typeof startRawMerchant>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cbc-cli-"));
  keys = await createTestKeys();
  keyFile = join(dir, "private.pem");
  await writeFile(keyFile, keys.privateKey);
  good = await startMerchant(keys.publicKey);
  bad = await startRawMerchant(WRONG_ANSWERS);
  refusing = await startRawMerchant({
    GetCheckoutCartInfo: (res) =>
      json(res, 200, { Success: false, ErrorCode: "CART_NOT_FOUND", Message: "Unknown cart" }),
  });
  echoing = await startRawMerchant({
    PerformOrderPayment: (res, request) => {
      const { CardNumber, CVVNumber } = JSON.parse(request.body).PaymentDetails;
      json(res, 500, { Success: false, Message: `card ${CardNumber} declined, CVV ${CVVNumber}` });
    },
    // Review privacy-3: a debug-friendly refusal echoing the gift card's PIN and the session.
    ValidateGiftCard: (res, request) => {
      const body = JSON.parse(request.body);
      json(res, 200, {
        Success: false,
        IsValid: false,
        Message: `pin ${body.CardFields?.Pin} session ${body.AuthToken} ${body.SessionId}`,
      });
    },
  });
});

afterAll(async () => {
  await good?.close();
  await bad?.close();
  await refusing?.close();
  await echoing?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The options of a simulation the good merchant accepts: its URL, the key, its GUID. */
function signedAt(url: string, key = keyFile): string[] {
  return ["--url", url, "--private-key", key, "--guid", MERCHANT_GUID];
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

  it("keeps values as typed: digit-only values stay text; an option of one value given twice is refused (review cli-7)", () => {
    const parsed = parseCommand([
      "simulate",
      "all",
      "--cart-token=000123",
      "--guid",
      "007",
      "--url",
      "http://x",
    ]);
    if (parsed.kind !== "run") throw new Error("not a command");
    expect(parsed.command.text("guid")).toBe("007");
    expect(() =>
      parseCommand(["simulate", "all", "--guid", "0012", "--guid=007", "--url", "http://x"]),
    ).toThrow(/--guid given twice/);
    expect(parsed.command.text("cart-token")).toBe("000123");
    expect(parsed.command.positionals).toEqual(["all"]);
  });

  it("checks numbers, the URL and --expect", () => {
    expect(positiveInteger(undefined, "--slow-ms", 5000)).toBe(5000);
    expect(positiveInteger("250", "--slow-ms", 5000)).toBe(250);
    for (const wrong of ["0", "-1", "1.5", "abc", ""]) {
      expect(() => positiveInteger(wrong, "--slow-ms", 1)).toThrow(UsageError);
    }
    // A timer's delay: above 2^31-1 ms Node fires it at once.
    expect(positiveInteger("2147483647", "--timeout-ms", 1, MAX_TIMEOUT_MS)).toBe(MAX_TIMEOUT_MS);
    for (const wrong of ["2147483648", "3000000000"]) {
      expect(() => positiveInteger(wrong, "--timeout-ms", 1, MAX_TIMEOUT_MS)).toThrow(
        /^--timeout-ms must be a positive whole number of milliseconds \(at most 2147483647\), got "\d+"$/,
      );
    }
    expect(baseUrl("http://127.0.0.1:3000/crossborder")).toBe("http://127.0.0.1:3000/crossborder");
    expect(() => baseUrl(undefined)).toThrow(/--url is required/);
    expect(() => baseUrl("ftp://x")).toThrow(/http or https/);
    expect(() => baseUrl("not a url")).toThrow(/not a URL/);
    // Review final2: a URL refused as malformed quoted its query (a urlSecret) in clear.
    expect(() => baseUrl("http://shop example.com/cb?key=s3cr3t-value")).toThrow(
      '--url is not a URL: "http://shop example.com/cb?***"',
    );
    expect(parseExpectation(["401", "refusal"])).toEqual({ statuses: [401], outcome: "refusal" });
    expect(parseExpectation(["401,403"])).toEqual({ statuses: [401, 403], outcome: undefined });
    expect(() => parseExpectation(["ok"])).toThrow(/an HTTP status \(401\) or "refusal"/);
    expect(() => parseExpectation(["refusal", "success"])).toThrow(/exclude each other/);
  });

  it("--set: text with =, JSON with :=, paths through objects and lists, no prototype keys", () => {
    const base = { OrderId: "A", Products: [{ Quantity: 1 }], Customer: null };
    expect(applySet(base, "OrderId=007")).toMatchObject({ OrderId: "007" });
    expect(applySet(base, "Products.0.Quantity:=2")).toMatchObject({ Products: [{ Quantity: 2 }] });
    expect(applySet(base, "Customer.Email=a@b.example")).toMatchObject({
      Customer: { Email: "a@b.example" },
    });
    expect(applySet(base, "Note=x=y")).toMatchObject({ Note: "x=y" });
    expect(base).toEqual({ OrderId: "A", Products: [{ Quantity: 1 }], Customer: null });
    expect(() => applySet(base, "OrderId")).toThrow(/Path=text or Path:=json/);
    expect(() => applySet(base, "Total:=1,5")).toThrow(/needs JSON/);
    expect(() => applySet(base, "__proto__.polluted=1")).toThrow(/not a usable path/);
    expect(() => applySet(base, "a.constructor.prototype.x=1")).toThrow(/not a usable path/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("simulate against a merchant set up as README's router snippet (cart by POST only, a callback under paths, a secret header)", () => {
  let merchant: RunningServer & { readonly base: string };
  const seen: { method: string; path: string; secret: string | undefined }[] = [];
  beforeAll(async () => {
    const auth = await createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKey } },
      headerSecret: { name: "X-Shop-Secret", value: "s3cret-value" },
    });
    const router = createCallbackRouter({
      basePath: "/crossborder",
      auth,
      onError: () => {},
      paths: { UpdateParcelDispatch: "/parcels" },
      handlers: {
        GetCheckoutCartInfo: createGetCheckoutCartInfoHandler(() => cartFixture(), {
          auth,
          methods: ["POST"],
          onError: () => {},
        }),
        UpdateParcelDispatch: () => undefined,
        UpdateOrderStatus: () => undefined,
      },
    });
    const listener = toNodeListener(router);
    const server = await listen((req, res) => {
      const secret = req.headers["x-shop-secret"];
      seen.push({
        method: req.method ?? "",
        path: new URL(req.url ?? "/", "http://x").pathname,
        secret: typeof secret === "string" ? secret : undefined,
      });
      listener(req, res);
    });
    merchant = { ...server, base: `${server.origin}/crossborder` };
  });
  afterAll(async () => {
    await merchant?.close();
  });

  it("--cart-method POST, --path Callback=/sub and --header Name:value reach it: exit 0, the secret never printed", async () => {
    const cap = captureIo();
    const code = await runCli(
      [
        "simulate",
        "GetCheckoutCartInfo,UpdateParcelDispatch,UpdateOrderStatus",
        "--url",
        merchant.base,
        "--private-key",
        keyFile,
        "--cart-method",
        "post",
        "--path",
        "updateparceldispatch=/parcels",
        "--header",
        "X-Shop-Secret: s3cret-value",
        "--cart-token",
        "cart-1",
      ],
      cap.io,
    );
    expect(cap.stdout).toContain("3 of 3 passed.");
    expect(code).toBe(0);
    // The cart twice: its sample, then its captured form (wire-facts §6), both by POST; the
    // dispatch and the status twice: the sample, then its redelivery (review sequence-3); the
    // status then as captured (review fidelity-3).
    expect(seen.map(({ method, path }) => `${method} ${path}`)).toStrictEqual([
      "POST /crossborder/GetCheckoutCartInfo",
      "POST /crossborder/GetCheckoutCartInfo",
      "POST /crossborder/parcels",
      "POST /crossborder/parcels",
      "POST /crossborder/UpdateOrderStatus",
      "POST /crossborder/UpdateOrderStatus",
      "POST /crossborder/UpdateOrderStatus",
    ]);
    expect(seen.every((request) => request.secret === "s3cret-value")).toBe(true);
    expect(cap.stdout + cap.stderr).not.toContain("s3cret-value");
    // --json prints no header either.
    const asJson = captureIo();
    await runCli(
      [
        "simulate",
        "UpdateOrderStatus",
        "--url",
        merchant.base,
        "--private-key",
        keyFile,
        "--header",
        "X-Shop-Secret: s3cret-value",
        "--json",
      ],
      asJson.io,
    );
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ok: true, passed: 1 });
    expect(asJson.stdout + asJson.stderr).not.toContain("s3cret-value");
  });

  it("without them, the same run fails (405 for the cart by GET, 404 off the path, 401 without the header)", async () => {
    const cap = captureIo();
    const code = await runCli(
      [
        "simulate",
        "GetCheckoutCartInfo,UpdateParcelDispatch,UpdateOrderStatus",
        "--url",
        merchant.base,
        "--private-key",
        keyFile,
      ],
      cap.io,
    );
    expect(code).toBe(1);
    expect(rowOf(cap.stdout, "GetCheckoutCartInfo")).toContain("← 405");
    expect(rowOf(cap.stdout, "UpdateParcelDispatch")).toContain("← 404");
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toContain("← 401");
  });

  it("refuses malformed values as usage errors (exit 2), naming the option", async () => {
    for (const [option, value, message] of [
      ["--cart-method", "PUT", /--cart-method takes GET or POST/],
      ["--path", "parcels", /--path takes <Callback>=<path>/],
      ["--path", "NoSuchCallback=/x", /unknown callback "NoSuchCallback"/],
      ["--header", "X-Shop-Secret", /--header takes "Name: value"/],
      ["--header", "Bad Name: v", /--header: the text before ":" is not a header name/],
      // A value typed with "=" (as --path takes) or a forgotten colon: nothing of it is printed.
      ["--header", "X-Shop-Secret=s3cr:et-value-123", /--header: the text before ":" is not/],
      ["--header", "X-A: line\r\nInjected: 1", /--header: the value of "X-A"/],
      // Review c3 D7: fetch sends header values as bytes (Latin-1): it threw, and the CLI
      // printed its stack with exit 1.
      ["--header", "X-Shop-Secret: clé€-s3cret-42", /--header: the value of "X-Shop-Secret"/],
    ] as const) {
      const cap = captureIo();
      const code = await runCli(
        ["simulate", "UpdateOrderStatus", "--url", merchant.base, option, value],
        cap.io,
      );
      expect(code, `${option} ${value}`).toBe(2);
      expect(cap.stderr, `${option} ${value}`).toMatch(message);
      expect(cap.stderr).not.toContain("    at ");
      expect(cap.stderr).not.toContain("s3cr");
    }
  });
});

// Review PAN D1: a --set usage error quoted the value, and the CLI printed it to stderr: a CVV
// typed with its leading zero (not JSON) or a spaced card number went out in clear.
describe("usage errors and unexpected errors print no card data", () => {
  const PAN = "4111111111111111";
  const holdsPan = (text: string) => text.replace(/[^0-9]/g, "").includes(PAN);

  it.each([
    ["PaymentDetails.CVVNumber:=0737", /--set PaymentDetails\.CVVNumber:= needs JSON/],
    ["PaymentDetails.CardNumber:=4111 1111 1111 1111", /--set PaymentDetails\.CardNumber:= needs/],
    [`:=${PAN}`, /--set takes Path=text or Path:=json/],
    [`${PAN}`, /--set takes Path=text or Path:=json/],
  ])("--set %s: exit 2, the flag and path named, the value never", async (assignment, message) => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "PerformOrderPayment", "--url", "http://127.0.0.1:9", "--set", assignment],
      cap.io,
    );
    expect(code).toBe(2);
    expect(cap.stderr).toMatch(message);
    expect(cap.stdout + cap.stderr).not.toMatch(/(?<!\d)0737(?!\d)/);
    expect(holdsPan(cap.stdout + cap.stderr), cap.stderr).toBe(false);
  });

  it("an unexpected error: its message with card numbers masked, no stack text beyond its frames", async () => {
    let err = "";
    const failure = new Error(`write failed near {"CardNumber":"4111 1111 1111 1111"}`);
    failure.stack = `Error: write failed near {"CardNumber":"${PAN}","CVVNumber":"0737"}\n    at write (x.js:1:1)`;
    const io = {
      stdout: {
        write: (): boolean => {
          throw failure;
        },
      },
      stderr: { write: (text: string) => (err += text) },
      env: {},
    };
    expect(await runCli(["--version"], io)).toBe(1);
    expect(err).toContain("write failed near");
    expect(err).toContain("    at write (x.js:1:1)");
    expect(holdsPan(err), err).toBe(false);
    expect(err).not.toContain("0737");
  });

  // Open item 1: an unexpected error of `simulate` was masked for card numbers only, so a CVV it
  // quoted (a failure quoting the body sent) went out in clear; and a request without an answer
  // printed its reason (the fetch's error) unmasked in the row, its problems and --json.
  it("simulate: an unexpected error quoting the body sent prints neither its card nor its CVV", async () => {
    let err = "";
    const io = {
      stdout: {
        write: (text: string): boolean => {
          if (text.startsWith("←")) {
            throw new Error(
              `report failed for {"CardNumber":"${PAN}","CVVNumber":"0737","Expiry":"12/30"}`,
            );
          }
          return true;
        },
      },
      stderr: { write: (text: string) => (err += text) },
      env: {},
    };
    const code = await runCli(
      [
        "simulate",
        "PerformOrderPayment",
        "--url",
        good.base,
        "--set",
        "PaymentDetails.CVVNumber=0737",
      ],
      io,
    );
    expect(code).toBe(1);
    expect(err).toContain("report failed for");
    expect(holdsPan(err), err).toBe(false);
    expect(err, err).not.toMatch(/(?<!\d)0737(?!\d)/);
  });

  it("simulate: a request without an answer prints its reason masked by the card data it sent", async () => {
    const reason = `socket hang up after {"CardNumber":"${PAN}","CVVNumber":"0737"}`;
    const fetchStub = async (): Promise<Response> => {
      throw new TypeError("fetch failed", { cause: new Error(reason) });
    };
    const saved = globalThis.fetch;
    globalThis.fetch = fetchStub as typeof fetch;
    try {
      for (const extra of [[], ["--json"]]) {
        const cap = captureIo();
        const code = await runCli(
          [
            "simulate",
            "PerformOrderPayment",
            "--url",
            "http://127.0.0.1:9",
            "--set",
            "PaymentDetails.CVVNumber=0737",
            ...extra,
          ],
          cap.io,
        );
        const out = cap.stdout + cap.stderr;
        expect(code).toBe(1);
        expect(out).toContain("socket hang up after");
        expect(holdsPan(out), out).toBe(false);
        expect(out, out).not.toMatch(/(?<!\d)0737(?!\d)/);
      }
    } finally {
      globalThis.fetch = saved;
    }
  });
});

describe("simulate", () => {
  it("passes a correct merchant built from the library: exit 0, one line per callback as it answers", async () => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "all", ...signedAt(good.base), "--cart-token", "cart-7"],
      cap.io,
    );
    expect(cap.stderr).toBe("");
    const cart = good.calls.find((call) => call.callback === "GetCheckoutCartInfo");
    expect(cart?.payload).toMatchObject({ merchantCartToken: "cart-7", countryCode: "US" });
    expect(code).toBe(0);
    expect(cap.stdout).toContain(`Simulating 14 callbacks against ${good.base}`);
    for (const callback of ALL_CALLBACKS) {
      expect(rowOf(cap.stdout, callback)).toMatch(/ … ← 200 .*\d+ ms {2}ok$/);
    }
    expect(rowOf(cap.stdout, "GetCheckoutCartInfo")).toMatch(/← 200 {2}3 products +\d+ ms {2}ok$/);
    expect(rowOf(cap.stdout, "SendRMAInfoToMerchant")).toContain('"True"');
    expect(rowOf(cap.stdout, "SendOrderToMerchant")).toMatch(/← 200 {2}true +\d+ ms {2}ok$/);
    expect(cap.stdout).toContain("14 of 14 passed.");
    expect(cap.stdout).not.toContain("\u001b[");
    expect(good.calls.filter((call) => call.auth?.includes("jwt")).length).toBeGreaterThanOrEqual(
      14,
    );
  });

  it("writes each line's start before the answer arrives, so a slow endpoint is visible", async () => {
    const writes: { text: string; at: number }[] = [];
    const started = performance.now();
    const io = {
      stdout: { write: (text: string) => writes.push({ text, at: performance.now() - started }) },
      stderr: { write: () => true },
      env: {},
    };
    // The wrong merchant's cart answers after 400 ms.
    expect(await runCli(["simulate", "GetCheckoutCartInfo", "--url", bad.base], io)).toBe(0);
    const sending = writes.find((write) => write.text.startsWith("→ GetCheckoutCartInfo"));
    const answered = writes.find((write) => write.text.startsWith("← 200"));
    expect(sending?.text).toBe("→ GetCheckoutCartInfo … ");
    expect((answered?.at ?? 0) - (sending?.at ?? 0)).toBeGreaterThanOrEqual(350);
  });

  it("flags every malformed answer of a wrong merchant and exits 1", async () => {
    const cap = captureIo();
    // The cart answers after 400 ms; every other answer must stay under the limit, or its row
    // gets one more problem ("slow"): 300 ms, not 150, leaves room for a loaded machine.
    const code = await runCli(
      ["simulate", "all", "--url", bad.base, "--private-key", keyFile, "--slow-ms", "300"],
      cap.io,
    );
    expect(code).toBe(1);
    const out = cap.stdout;
    expect(rowOf(out, "SendOrderToMerchant")).toMatch(
      /← 200 {2}"yes" .*1 problem\n {4}"Success" is the text "yes": the service cannot parse it/,
    );
    expect(rowOf(out, "UpdateOrderStatus")).toMatch(/← 200 {2}- .*\n {4}missing "Success"/);
    expect(rowOf(out, "SendRMAInfoToMerchant")).toContain(
      'a refusal: "Success" is the text "False" (Message "Unknown RMA"): the endpoint turned the call down',
    );
    expect(rowOf(out, "RemoveRestrictedProducts")).toContain('missing "IsSuccess"');
    expect(rowOf(out, "PerformOrderPayment")).toMatch(
      /← 500 {2}false .*\n {4}HTTP 500: a server error/,
    );
    const dispatch = rowOf(out, "UpdateParcelDispatch");
    expect(dispatch).toContain("HTTP 502: a server error");
    expect(dispatch).toContain(
      "an HTML page instead of JSON (content-type text/html): an error page?",
    );
    expect(rowOf(out, "GetCheckoutCartInfo")).toMatch(
      /← 200 {2}3 products .*\n {4}slow: answered in \d+ ms \(limit 300 ms\)/,
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
    expect(out).toContain("13 of 14 failed.");
    expect(out).toContain("A refusal is what you meant to test? Pass --expect refusal");
  });

  it("exits 1 against a merchant whose key, GUID or cart is wrong; no answer reads as ok", async () => {
    const stranger = await createTestKeys();
    const strangerFile = join(dir, "stranger.pem");
    await writeFile(strangerFile, stranger.privateKey);
    const runs: [string, string[], RegExp][] = [
      // Signed with a key the merchant does not know.
      ["wrong key", ["simulate", "all", ...signedAt(good.base, strangerFile)], /← 401 /],
      // No key at all.
      ["no key", ["simulate", "all", "--url", good.base], /← 401 /],
    ];
    for (const [what, args, line] of runs) {
      const cap = captureIo();
      expect(await runCli(args, cap.io), what).toBe(1);
      for (const callback of ALL_CALLBACKS) {
        expect(rowOf(cap.stdout, callback), `${what}: ${callback}`).toMatch(line);
        expect(rowOf(cap.stdout, callback)).toContain(
          "HTTP 401: not a 2xx answer, the service counts the call as failed",
        );
      }
      expect(cap.stdout, what).toContain("14 of 14 failed.");
      expect(cap.stdout).toContain("401: the endpoint refused the call's authentication");
      expect(cap.stdout).not.toMatch(/ok$/m);
    }

    // The GUID of another merchant: every POST is refused (a GET cart carries no GUID).
    const guid = captureIo();
    expect(
      await runCli(
        ["simulate", "all", "--url", good.base, "--private-key", keyFile, "--guid", "0000"],
        guid.io,
      ),
    ).toBe(1);
    for (const callback of ALL_CALLBACKS.filter((name) => name !== "GetCheckoutCartInfo")) {
      expect(rowOf(guid.stdout, callback)).toMatch(/← 401 .*\n {4}HTTP 401: not a 2xx answer/);
    }
    expect(guid.stdout).toContain("13 of 14 failed.");

    // A cart the merchant does not know: a well-formed refusal, still a failure.
    const cart = captureIo();
    expect(
      await runCli(
        ["simulate", "GetCheckoutCartInfo", ...signedAt(refusing.base), "--cart-token", "nope"],
        cart.io,
      ),
    ).toBe(1);
    expect(rowOf(cart.stdout, "GetCheckoutCartInfo")).toContain(
      'a refusal: "Success" is false (ErrorCode "CART_NOT_FOUND", Message "Unknown cart"): the endpoint turned the call down',
    );
    expect(cart.stdout).toContain("1 of 1 failed.");
  });

  it("--expect 401: a forged token refused everywhere exits 0; accepted anywhere exits 1", async () => {
    const stranger = await createTestKeys();
    const strangerFile = join(dir, "stranger-2.pem");
    await writeFile(strangerFile, stranger.privateKey);
    const forged = captureIo();
    const code = await runCli(
      ["simulate", "all", ...signedAt(good.base, strangerFile), "--expect", "401"],
      forged.io,
    );
    expect(forged.stdout).toContain("14 of 14 passed.");
    expect(code).toBe(0);
    for (const callback of ALL_CALLBACKS) {
      expect(rowOf(forged.stdout, callback)).toMatch(/← 401 .* {2}ok$/);
    }
    // The right key with --expect 401: every 200 is now the problem.
    const accepted = captureIo();
    expect(
      await runCli(
        ["simulate", "UpdateOrderStatus", ...signedAt(good.base), "--expect", "401"],
        accepted.io,
      ),
    ).toBe(1);
    expect(rowOf(accepted.stdout, "UpdateOrderStatus")).toContain("HTTP 200: expected 401");
    // --expect refusal: the unknown cart passes, a cart fails.
    const refusal = captureIo();
    expect(
      await runCli(
        ["simulate", "GetCheckoutCartInfo", ...signedAt(refusing.base), "--expect", "refusal"],
        refusal.io,
      ),
    ).toBe(0);
    const notRefused = captureIo();
    expect(
      await runCli(
        ["simulate", "GetCheckoutCartInfo", ...signedAt(good.base), "--expect", "refusal"],
        notRefused.io,
      ),
    ).toBe(1);
    expect(rowOf(notRefused.stdout, "GetCheckoutCartInfo")).toContain("a cart: expected a refusal");
  });

  it("--json prints machine-readable results on stdout only", async () => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "SendOrderToMerchant,PerformOrderPayment", "--url", bad.base, "--json"],
      cap.io,
    );
    expect(code).toBe(1);
    const output = JSON.parse(cap.stdout);
    expect(output).toMatchObject({ url: bad.base, ok: false, passed: 0, failed: 2 });
    expect(output.results).toEqual([
      {
        callback: "SendOrderToMerchant",
        ok: false,
        method: "POST",
        url: `${bad.base}/SendOrderToMerchant`,
        status: 200,
        success: null,
        durationMs: expect.any(Number),
        problems: [expect.stringContaining('"Success" is the text "yes"')],
      },
      expect.objectContaining({ callback: "PerformOrderPayment", status: 500, success: false }),
    ]);
    // Progress goes to a terminal only; into a pipe stderr carries only the key warning.
    expect(cap.stderr).toBe(
      "No --private-key: requests carry no Authorization header, so a merchant that verifies tokens answers 401.\n",
    );
    const good14 = captureIo();
    expect(await runCli(["simulate", "all", ...signedAt(good.base), "--json"], good14.io)).toBe(0);
    expect(JSON.parse(good14.stdout)).toMatchObject({ ok: true, passed: 14, failed: 0 });
  });

  it("--show-body prints a failed answer's body with card numbers masked", async () => {
    const cap = captureIo();
    await runCli(
      [
        "simulate",
        "PerformOrderPayment,UpdateParcelDispatch",
        "--url",
        echoing.base,
        "--show-body",
      ],
      cap.io,
    );
    const payment = rowOf(cap.stdout, "PerformOrderPayment");
    expect(payment).toContain("    | ");
    expect(payment).toContain('"Message":"card ************1111 declined, CVV ***"');
    expect(cap.stdout).not.toContain("4111111111111111");
    expect(cap.stdout).not.toMatch(/CVV 737/);
    // A passing answer's body is not printed.
    expect(rowOf(cap.stdout, "UpdateParcelDispatch")).not.toContain("|");
    const json = captureIo();
    await runCli(
      ["simulate", "PerformOrderPayment", "--url", echoing.base, "--show-body", "--json"],
      json.io,
    );
    const [row] = JSON.parse(json.stdout).results;
    expect(row.body).toContain("************1111");
    expect(row.body).not.toContain("4111111111111111");
  });

  // Review privacy-3: a gift card's PIN an answer echoes was printed in clear (the default output,
  // --json's problems, --show-body) while the session values beside it were masked.
  it("masks a gift card's PIN an answer echoes, as the session values (default, --json, --show-body)", async () => {
    const base = [
      "simulate",
      "ValidateGiftCard",
      "--url",
      echoing.base,
      "--set",
      "CardFields.Pin=98761",
    ];
    const session = ["--auth-token", "tok-5c1d9e77", "--session-id", "sess-88aa77bb"];
    for (const extra of [[], ["--json"], ["--show-body"], ["--show-body", "--json"]]) {
      const cap = captureIo();
      await runCli([...base, ...session, ...extra], cap.io);
      expect(cap.stdout, extra.join(" ")).toMatch(/pin \*\*\* session \*\*\* \*\*\*/);
      expect(cap.stdout + cap.stderr, extra.join(" ")).not.toContain("98761");
      expect(cap.stdout + cap.stderr, extra.join(" ")).not.toContain("5c1d9e77");
    }
  });

  // Fix s23 (review finding 5): card objects below the top level are masked too.
  it("--show-body masks the card numbers and CVVs of card objects below the top level", async () => {
    // Not Luhn-valid: only where they sit says they are card numbers.
    const nested = await startRawMerchant({
      SendOrderToMerchant: (res, request) => {
        const sent = JSON.parse(request.body);
        const [product] = sent.Products;
        const { CARDNUMBER, cvvnumber } = product.Paymentdetails;
        const [card] = sent.Extras;
        json(res, 500, {
          Success: false,
          Message: `${product.cardNumber}/${product.CVVNumber}, ${CARDNUMBER}/${cvvnumber}, ${card.CardNumber}/${card.Cvv2}`,
        });
      },
    });
    try {
      const setCards = [
        "--set",
        "Products.0.cardNumber=1234 5678 1234 5678",
        "--set",
        "Products.0.CVVNumber=4821",
        "--set",
        'Products.0.Paymentdetails:={"CARDNUMBER":"8765 4321 8765 4321","cvvnumber":"9137"}',
        "--set",
        'Extras:=[{"CardNumber":"9999 8888 7777 6666","Cvv2":5519}]',
      ];
      const cap = captureIo();
      await runCli(
        ["simulate", "SendOrderToMerchant", "--url", nested.base, ...setCards, "--show-body"],
        cap.io,
      );
      expect(rowOf(cap.stdout, "SendOrderToMerchant")).toContain(
        '    | {"Success":false,"Message":"***/***, ***/***, ***/***"}',
      );
      const machine = captureIo();
      await runCli(
        [
          "simulate",
          "SendOrderToMerchant",
          "--url",
          nested.base,
          ...setCards,
          "--show-body",
          "--json",
        ],
        machine.io,
      );
      const [row] = JSON.parse(machine.stdout).results;
      expect(row.body).toBe('{"Success":false,"Message":"***/***, ***/***, ***/***"}');
    } finally {
      await nested.close();
    }
  });

  // Review c3 D4: an endpoint that quotes what it got (a framework's debug page listing the
  // request headers, a refusal naming the key) must not make the run print the secrets it sent.
  it("never prints the --header values, Basic credentials or token it sent, where the answer quotes them", async () => {
    const secret = "shop-secret-7f3a9c1e5b";
    const password = "pässwort-0042";
    const basic = Buffer.from(`shop:${password}`, "utf8").toString("base64");
    const quoting = await startRawMerchant({
      // A debug page: the request's headers and the credentials they carry, answered 401.
      UpdateOrderStatus: (res, request) => {
        const authorization = String(request.headers.authorization ?? "");
        const decoded = authorization.startsWith("Basic ")
          ? Buffer.from(authorization.slice(6), "base64").toString("utf8")
          : "";
        json(res, 401, {
          Success: false,
          Message: `header secret ${String(request.headers["x-shop-secret"])} does not match`,
          credentials: decoded,
          request: { headers: request.headers },
        });
      },
      // A 200 refusal quoting the key it got: a problem line, even without --show-body. The
      // secret sits where the quote of a Message is cut (80 characters).
      UpdateParcelDispatch: (res, request) =>
        json(res, 200, {
          Success: false,
          ErrorCode: String(request.headers["x-shop-secret"]),
          Message: `${"x".repeat(70)} ${String(request.headers["x-shop-secret"])}`,
        }),
    });
    try {
      const header = ["--header", `X-Shop-Secret: ${secret}`];
      const signed = ["--private-key", keyFile];
      const printed: string[] = [];
      for (const args of [
        ["UpdateOrderStatus", ...signed, ...header, "--show-body"],
        ["UpdateOrderStatus", ...signed, ...header, "--show-body", "--json"],
        [
          "UpdateOrderStatus",
          ...header,
          "--header",
          `Authorization: Basic ${basic}`,
          "--show-body",
        ],
        [
          "UpdateOrderStatus",
          ...header,
          "--header",
          `Authorization: Basic ${basic}`,
          "--show-body",
          "--json",
        ],
        ["UpdateParcelDispatch", ...signed, ...header],
        ["UpdateParcelDispatch", ...signed, ...header, "--json"],
      ]) {
        const cap = captureIo();
        const [callback = "", ...rest] = args;
        expect(await runCli(["simulate", callback, "--url", quoting.base, ...rest], cap.io)).toBe(
          1,
        );
        printed.push(cap.stdout + cap.stderr);
      }
      const tokens = quoting.seen
        .map((request) => String(request.headers.authorization ?? ""))
        .filter((value) => value.startsWith("Bearer "))
        .map((value) => value.slice("Bearer ".length));
      expect(tokens.length).toBe(4);
      // What was printed: the body and the problem, masked.
      expect(printed[0]).toContain(
        '    | {"Success":false,"Message":"header secret *** does not match"',
      );
      expect(JSON.parse(printed[1] ?? "").results[0].body).toContain('"x-shop-secret":"***"');
      expect(printed[2]).toContain('"credentials":"***"');
      expect(printed[4]).toContain('(ErrorCode "***", Message "');
      expect(JSON.parse(printed[5] ?? "").results[0].problems[0]).toMatch(/x{70} \*\*\*"/);
      for (const [i, text] of printed.entries()) {
        expect(text, `run ${i}`).not.toContain(secret);
        // Nor a part of it where a quote is cut.
        expect(text, `run ${i}`).not.toContain("7f3a9c");
        expect(text, `run ${i}`).not.toContain(password);
        expect(text, `run ${i}`).not.toContain(basic);
        for (const token of tokens) {
          expect(text, `run ${i}`).not.toContain(token);
          expect(text, `run ${i}`).not.toContain(token.split(".")[2]);
        }
      }
    } finally {
      await quoting.close();
    }
  });

  it("masks the Success column as it masks the problems: a card number or a --header secret quoted there (review-r4 R4-1)", async () => {
    const secret = "shop-secret-7f3a9c1e5b";
    const quoting = await startRawMerchant({
      UpdateOrderStatus: (res, request) =>
        json(res, 200, { Success: String(request.headers["x-shop-secret"]) }),
      UpdateParcelDispatch: (res) => json(res, 200, { Success: "4111111111111111" }),
    });
    try {
      const header = ["--header", `X-Shop-Secret: ${secret}`];
      const withSecret = captureIo();
      expect(
        await runCli(
          ["simulate", "UpdateOrderStatus", "--url", quoting.base, ...header],
          withSecret.io,
        ),
      ).toBe(1);
      const withCard = captureIo();
      expect(
        await runCli(["simulate", "UpdateParcelDispatch", "--url", quoting.base], withCard.io),
      ).toBe(1);
      expect(withSecret.stdout).toMatch(/← 200 {2}"\*\*\*" /);
      expect(withCard.stdout).toContain('"************1111"');
      for (const text of [
        withSecret.stdout + withSecret.stderr,
        withCard.stdout + withCard.stderr,
      ]) {
        expect(text).not.toContain("4111111111111111");
        expect(text).not.toContain("shop-sec");
        expect(text).not.toContain("7f3a9c");
      }
    } finally {
      await quoting.close();
    }
  });

  it("masks a --header secret in the JSON spellings an endpoint may echo it in: PHP's \\/ and \\u escapes (review-r4 R4-2)", async () => {
    const secret = "q8Zk/3vR+Tn0wXb1Lm==";
    const password = "pässwort-0042";
    const basic = Buffer.from(`shop:${password}`, "utf8").toString("base64");
    const escaping = await startRawMerchant({
      // PHP's json_encode writes "/" as "\/"; Python's json.dumps writes "ä" as "\u00e4"
      // (here in upper case as well, which other encoders write).
      UpdateOrderStatus: (res, request) => {
        const authorization = String(request.headers.authorization ?? "");
        const decoded = Buffer.from(authorization.slice(6), "base64").toString("utf8");
        const escaped = JSON.stringify({
          Success: false,
          headers: { "x-shop-secret": String(request.headers["x-shop-secret"]) },
          user: decoded,
          password: decoded.slice(5),
        }).replace(/\//g, "\\/");
        const lower = escaped.replace(
          /[\u0080-\uffff]/g,
          (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
        );
        const upper = escaped.replace(
          /[\u0080-\uffff]/g,
          (char) => `\\u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
        );
        res.writeHead(401, { "content-type": "application/json" });
        res.end(request.url?.includes("upper") ? upper : lower);
      },
    });
    try {
      for (const base of [escaping.base, `${escaping.base}/upper`]) {
        for (const json of [[], ["--json"]]) {
          const cap = captureIo();
          const args = ["UpdateOrderStatus", "--url", base, "--show-body", ...json];
          const headers = [
            "--header",
            `X-Shop-Secret: ${secret}`,
            "--header",
            `Authorization: Basic ${basic}`,
          ];
          expect(await runCli(["simulate", ...args, ...headers], cap.io)).toBe(1);
          const text = cap.stdout + cap.stderr;
          expect(text).toContain("x-shop-secret");
          expect(text).not.toContain("3vR+Tn0wXb1Lm");
          expect(text).not.toContain("sswort-0042");
        }
      }
    } finally {
      await escaping.close();
    }
  });

  it("masks a --header secret as .NET, Symfony, Java's Gson and Go escape it in JSON (\\u002B, \\u0022, \\u003d, \\u0026) (review-r8 R8-1)", async () => {
    const secret = 'q8Zk/3vR+Tn0&w"X<\u00e4-b1Lm==';
    const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(4, "0");
    const quote = (text: string) => text.replace(/\\"/g, "\\u0022");
    // Each encoder's default: .NET's System.Text.Json writes + & < > ' " ` and non-ASCII as upper
    // case \u escapes; Symfony's JsonResponse & < > ' " in upper case, non-ASCII in lower case and
    // / as \/; Gson writes = & < > ' in lower case; Go writes & < > in lower case.
    const encoders: Record<string, (text: string) => string> = {
      dotnet: (text) =>
        quote(text).replace(/[+&<>'`\u0080-\uffff]/g, (c) => `\\u${hex(c).toUpperCase()}`),
      symfony: (text) =>
        quote(text)
          .replace(/[&<>']/g, (c) => `\\u${hex(c).toUpperCase()}`)
          .replace(/[\u0080-\uffff]/g, (c) => `\\u${hex(c)}`)
          .replace(/\//g, "\\/"),
      gson: (text) => text.replace(/[=&<>']/g, (c) => `\\u${hex(c)}`),
      go: (text) => text.replace(/[&<>]/g, (c) => `\\u${hex(c)}`),
    };
    const escaping = await startRawMerchant({
      UpdateOrderStatus: (res, request) => {
        const encoder = encoders[request.url.split("/")[2] ?? ""] ?? ((text: string) => text);
        const json = JSON.stringify({
          Success: false,
          headers: { "x-shop-secret": String(request.headers["x-shop-secret"]) },
        });
        res.writeHead(401, { "content-type": "application/json" });
        res.end(encoder(json));
      },
    });
    try {
      for (const name of Object.keys(encoders)) {
        for (const json of [[], ["--json"]]) {
          const cap = captureIo();
          const args = [
            "UpdateOrderStatus",
            "--url",
            `${escaping.base}/${name}`,
            "--show-body",
            ...json,
          ];
          expect(
            await runCli(["simulate", ...args, "--header", `X-Shop-Secret: ${secret}`], cap.io),
          ).toBe(1);
          const text = cap.stdout + cap.stderr;
          expect(text, name).toContain("x-shop-secret");
          expect(text, name).not.toContain("b1Lm");
        }
      }
    } finally {
      await escaping.close();
    }
  });

  it("masks --header secrets only in what it quotes from the answer; standard content headers are no secret (review-r4 R4-3)", async () => {
    const plain = await startRawMerchant({
      UpdateOrderStatus: (res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(
          JSON.stringify({ Success: false, Message: "Unknown order false, send application/json" }),
        );
      },
    });
    try {
      const cap = captureIo();
      const args = ["simulate", "UpdateOrderStatus", "--url", plain.base, "--show-body"];
      const headers = [
        "--header",
        "Content-Type: application/json",
        "--header",
        "Accept-Language: en-GB",
        "--header",
        "X-Debug: false",
        "--header",
        "X-Shop-Secret: order",
      ];
      expect(await runCli([...args, ...headers], cap.io)).toBe(1);
      // The library's own advice keeps its words; a secret quoted from the answer is masked.
      expect(cap.stdout).toContain('content-type is "text/plain": answer with application/json');
      expect(cap.stdout).toContain(
        'a refusal: "Success" is false (Message "Unknown *** false, send application/json")',
      );
      expect(cap.stdout).toContain(
        '| {"Success":false,"Message":"Unknown *** false, send application/json"}',
      );
      // A boolean quotes no secret: the Success column shows it as it arrived.
      expect(cap.stdout).toMatch(/← 200 {2}false /);
    } finally {
      await plain.close();
    }
  });

  it("prints warnings under a passing row, and lists them in --json, without failing the run", async () => {
    const plain = await startRawMerchant({
      SendOrderToMerchant: (res, request) =>
        json(res, 200, { Success: true, InternalOrderId: ownOrderId(request.body) }),
    });
    try {
      const cap = captureIo();
      expect(await runCli(["simulate", "SendOrderToMerchant", "--url", plain.base], cap.io)).toBe(
        0,
      );
      const row = rowOf(cap.stdout, "SendOrderToMerchant");
      expect(row).toContain("ok");
      expect(row).toContain('warning: "PaymentAmount" is missing');
      expect(row).toContain('warning: "PaymentCurrencyCode" is missing');
      const out = captureIo();
      await runCli(["simulate", "SendOrderToMerchant", "--url", plain.base, "--json"], out.io);
      const [result] = JSON.parse(out.stdout).results;
      expect(result).toMatchObject({ ok: true, problems: [] });
      expect(result.warnings).toHaveLength(2);
    } finally {
      await plain.close();
    }
  });

  it("--payload and --set change what is sent", async () => {
    const file = join(dir, "order.json");
    await writeFile(file, JSON.stringify({ OrderId: "FROM-FILE", StatusCode: "canceled" }));
    const before = bad.seen.length;
    await runCli(
      [
        "simulate",
        "UpdateOrderStatus",
        "--url",
        bad.base,
        "--payload",
        file,
        "--set",
        "OrderStatusReason.Name=Fraud suspected",
        "--set",
        "Flags:=[1,2]",
      ],
      captureIo().io,
    );
    expect(JSON.parse(bad.seen[before]?.body ?? "")).toEqual({
      OrderId: "FROM-FILE",
      StatusCode: "canceled",
      OrderStatusReason: { Name: "Fraud suspected" },
      Flags: [1, 2],
    });
    // --set on every callback of the run, over the sample.
    const at = bad.seen.length;
    await runCli(
      [
        "simulate",
        "UpdateOrderStatus,SendAdditionalRequiredDocumentsToMerchant",
        "--url",
        bad.base,
        "--set",
        "OrderId=000123",
      ],
      captureIo().io,
    );
    for (const request of bad.seen.slice(at)) {
      expect(JSON.parse(request.body)).toMatchObject({ OrderId: "000123" });
    }
    const usage = captureIo();
    expect(await runCli(["simulate", "all", "--url", bad.base, "--payload", file], usage.io)).toBe(
      2,
    );
    expect(usage.stderr).toContain("--payload replaces the payload of one callback");
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

  // Second read S1: `--guid "$MERCHANT_GUID"` in a terminal where the variable is unset sent 14
  // calls with an empty MerchantGUID, all refused with 401. No merchant GUID is empty (createAuth
  // refuses a blank one), so an empty or blank --guid is a usage error and nothing is sent; an
  // absent --guid still sends the sample GUID.
  it("an empty or blank --guid is a usage error (exit 2), nothing sent; absent, the sample's", async () => {
    for (const args of [["--guid", ""], ["--guid="], ["--guid", "   "], ["--guid", "\t"]]) {
      const cap = captureIo();
      const before = bad.seen.length;
      const code = await runCli(
        ["simulate", "UpdateOrderStatus", "--url", bad.base, "--private-key", keyFile, ...args],
        cap.io,
      );
      expect(code, JSON.stringify(args)).toBe(2);
      expect(cap.stderr).toMatch(/--guid is empty/);
      expect(cap.stderr).toMatch(/MERCHANT_GUID/);
      expect(cap.stdout).toBe("");
      expect(bad.seen.length).toBe(before);
    }
    await runCli(
      ["simulate", "UpdateOrderStatus", "--url", bad.base, "--private-key", keyFile],
      captureIo().io,
    );
    expect(JSON.parse(bad.seen.at(-1)?.body ?? "")).toMatchObject({
      MerchantGUID: SAMPLE_MERCHANT_GUID,
    });
  });

  it("signs with --issuer and --audience, writes --guid, --cart-token and the session as typed", async () => {
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
    expect(cap.stdout).toContain("1 of 2 failed.");

    await runCli(
      ["simulate", "RemoveRestrictedProducts", "--url", bad.base, "--cart-token", "000123"],
      captureIo().io,
    );
    // 001 §4.7: the merchant's cart is CartId; CartToken is the service's SendCart token.
    expect(JSON.parse(bad.seen.at(-1)?.body ?? "")).toMatchObject({ CartId: "000123" });
    expect(JSON.parse(bad.seen.at(-1)?.body ?? "").CartToken).not.toBe("000123");

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

  it("reports a request that gets no answer (nothing listening, timeout) and exits 1", async () => {
    const port = await closedPort();
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "UpdateOrderStatus", "--url", `http://127.0.0.1:${port}/cb`],
      cap.io,
    );
    expect(code).toBe(1);
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toMatch(
      /← no answer\n {4}no answer: .*ECONNREFUSED/,
    );
    expect(cap.stdout).toContain("1 of 1 got no answer.");

    const slow = captureIo();
    const timedOut = await runCli(
      ["simulate", "GetCheckoutCartInfo", "--url", bad.base, "--timeout-ms", "100"],
      slow.io,
    );
    expect(timedOut).toBe(1);
    expect(rowOf(slow.stdout, "GetCheckoutCartInfo")).toMatch(
      /no answer: no answer within 100 ms$/,
    );
  });

  it("colours on a TTY, not with NO_COLOR", async () => {
    const tty = captureIo({}, true);
    await runCli(["simulate", "RemoveRestrictedProducts", ...signedAt(good.base)], tty.io);
    expect(tty.stdout).toContain("\u001b[32mok\u001b[39m");
    const noColor = captureIo({ NO_COLOR: "1" }, true);
    await runCli(["simulate", "RemoveRestrictedProducts", "--url", good.base], noColor.io);
    expect(noColor.stdout).not.toContain("\u001b[");
    expect(noColor.stderr).not.toContain("\u001b[");
  });

  it("answers usage errors with exit 2 and a message naming what was typed", async () => {
    const cases: [string[], RegExp][] = [
      [["simulate", "all"], /--url is required/],
      [["simulate", "Nope", "--url", good.base], /unknown callback "Nope"/],
      [
        ["simulate", "all", "--url", good.base, "--slow-ms", "soon"],
        /--slow-ms must be a positive whole number/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--timeout-ms", "2147483648"],
        /--timeout-ms must be a positive whole number of milliseconds \(at most 2147483647\)/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--privat-key", "k.pem"],
        /^error unknown option --privat-key for simulate; did you mean --private-key\?\n$/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--privateKey=k.pem"],
        /unknown option --privateKey for simulate; did you mean --private-key\?/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--bogus"],
        /unknown option --bogus for simulate; run/,
      ],
      [
        ["simulate", "all", "--out", "x"],
        /unknown option --out for simulate \(--out is an option of keys\)/,
      ],
      [["simulate", "all", "--url"], /--url needs a value \(--url <base>\)/],
      [["simulate", "all", "--url", good.base, "--json=yes"], /--json takes no value/],
      [["simulate", "all", "--url", good.base, "--expect", "ok"], /--expect takes an HTTP status/],
      [
        ["simulate", "all", "--url", good.base, "--private-key", join(dir, "missing.pem")],
        /cannot read --private-key .*ENOENT/,
      ],
      [
        ["simulate", "all", "--url", good.base, "--private-key", join(dir, "public.pem")],
        /is not an RSA private key/,
      ],
      [["simulate", "--url", good.base], /simulate needs <callback\|all>/],
      [
        ["simulate", "SendOrderToMerchant", "UpdateOrderStatus", "--url", good.base],
        /separate several callbacks with commas/,
      ],
      [["keys", "extra"], /keys takes no argument/],
      [["simulat"], /unknown command "simulat"; did you mean simulate\?/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [[], /no command given/],
    ];
    await writeFile(join(dir, "public.pem"), keys.publicKey);
    for (const [args, message] of cases) {
      const cap = captureIo();
      expect(await runCli(args, cap.io), args.join(" ")).toBe(2);
      expect(cap.stderr, args.join(" ")).toMatch(message);
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
      ["simulate", "UpdateOrderStatus", ...signedAt(good.base, file)],
      cap.io,
    );
    expect(code).toBe(0);
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toMatch(/← 200 {2}true /);
  });

  it("prints help and the version on stdout with exit 0", async () => {
    const help = captureIo();
    expect(await runCli(["--help"], help.io)).toBe(0);
    expect(help.stdout).toMatch(
      /keys \[--out <dir>\][\s\S]*simulate <callback\|all>[\s\S]*service <operation\|list>/,
    );
    const simulateHelp = captureIo();
    expect(await runCli(["simulate", "--help"], simulateHelp.io)).toBe(0);
    for (const option of [
      "--private-key <file>",
      "--expect <what>",
      "--json",
      "--show-body",
      "--payload <file>",
      "--set <path=value>",
    ]) {
      expect(simulateHelp.stdout).toContain(option);
    }
    const serviceHelp = captureIo();
    expect(await runCli(["help", "service"], serviceHelp.io)).toBe(0);
    expect(serviceHelp.stdout).toContain("--idempotency-key <uuid>");
    const version = captureIo();
    expect(await runCli(["--version"], version.io)).toBe(0);
    expect(version.stdout).toMatch(/^crossborder-callbacks \d+\.\d+\.\d+\n$/);
  });
});

describe("hints", () => {
  const row = (status: number, success: boolean): SimulationRow =>
    ({
      callback: "UpdateOrderStatus",
      payload: {},
      result: { status, success, problems: ["a problem"] },
    }) as unknown as SimulationRow;
  const refusalHint = (rows: SimulationRow[], expect: Expectation) =>
    renderHints(rows, expect).some((hint) => hint.startsWith("A refusal is what you meant"));

  it("suggests --expect only for a 2xx refusal when nothing was expected", () => {
    expect(refusalHint([row(200, false)], {})).toBe(true);
    // Already expecting: the user did pass --expect.
    expect(refusalHint([row(200, false)], { statuses: [401] })).toBe(false);
    expect(refusalHint([row(200, false)], { outcome: "success" })).toBe(false);
    // Nothing at that URL is no refusal to expect.
    expect(refusalHint([row(404, false)], {})).toBe(false);
    expect(refusalHint([row(405, false)], {})).toBe(false);
  });

  // second-left-4: an order that got no answer (or failed) is no order the endpoint holds: its
  // payment's refusal is not one the user meant to test.
  it("a payment refused after an order that got no answer or failed: the order hint, not --expect", () => {
    const refused = { status: 200, success: false, problems: ["a refusal: UNKNOWN_ORDER"] };
    const payment = { callback: "PerformOrderPayment", payload: {}, result: refused };
    for (const order of [
      { callback: "SendOrderToMerchant", payload: {}, error: "ECONNRESET: socket hang up" },
      {
        callback: "SendOrderToMerchant",
        payload: {},
        result: { status: 500, problems: ["HTTP 500"] },
      },
    ]) {
      const hints = renderHints([order, payment] as unknown as SimulationRow[], {});
      expect(hints.join("\n")).not.toContain("--expect refusal");
      expect(hints.join("\n")).toContain("PerformOrderPayment refused without its order");
    }
    // An order that passed: the payment's refusal may be the one meant.
    const passed = {
      callback: "SendOrderToMerchant",
      payload: {},
      result: { status: 200, problems: [] },
    };
    expect(refusalHint([passed, payment] as unknown as SimulationRow[], {})).toBe(true);
  });
});

// Open item 3: `simulate PerformOrderPayment` alone against a freshly started quick start is
// refused (the payment states no amount, 001 §4.4, and the server never received its order), a
// refusal the quick start is right to answer; the hint told the user to pass --expect refusal.
describe("simulate PerformOrderPayment without its order", () => {
  let merchant: Awaited<ReturnType<typeof startRawMerchant>>;
  const orders = new Set<string>();
  beforeAll(async () => {
    // As the quick start: a payment for an order it received is paid, any other refused.
    merchant = await startRawMerchant({
      SendOrderToMerchant: (res, request) => {
        const order = JSON.parse(request.body);
        orders.add(order.OrderId);
        json(res, 200, {
          Success: true,
          InternalOrderId: ownOrderId(request.body),
          PaymentAmount: "123.73",
          PaymentCurrencyCode: "USD",
        });
      },
      PerformOrderPayment: (res, request) => {
        const { OrderId } = JSON.parse(request.body);
        if (orders.has(OrderId)) {
          json(res, 200, {
            Success: true,
            InternalOrderId: ownOrderId(request.body),
            PaymentAmount: "123.73",
            PaymentCurrencyCode: "USD",
          });
        } else {
          json(res, 200, {
            Success: false,
            ErrorCode: "UNKNOWN_ORDER",
            Message: `No amount known for order ${OrderId}`,
          });
        }
      },
    });
  });
  afterAll(() => merchant.close());

  it("says the payment needs its order first, not that a refusal was meant", async () => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "PerformOrderPayment", ...signedAt(merchant.base)],
      cap.io,
    );
    expect(code).toBe(1);
    expect(cap.stdout).toContain("simulate SendOrderToMerchant,PerformOrderPayment");
    expect(cap.stdout).not.toContain("A refusal is what you meant to test?");
    // With its order sent first in the run, the same merchant passes.
    const both = captureIo();
    expect(
      await runCli(
        ["simulate", "SendOrderToMerchant,PerformOrderPayment", ...signedAt(merchant.base)],
        both.io,
      ),
    ).toBe(0);
  });
});

describe("--url with credentials", () => {
  it("is a usage error (exit 2) that does not echo the password", async () => {
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "UpdateOrderStatus", "--url", "http://svc:s3cret@127.0.0.1:9/cb"],
      cap.io,
    );
    expect(code).toBe(2);
    expect(cap.stderr).toContain("--url must not carry a user name or password");
    expect(`${cap.stdout}${cap.stderr}`).not.toContain("s3cret");
    expect(cap.stderr).not.toMatch(/\n\s+at /);
  });
});

// Review second-obs-2: the banner and --json printed the --url's query (a urlSecret) in clear.
describe("--url with a query (a urlSecret)", () => {
  it("prints its values as *** in the banner, the rows and --json", async () => {
    const port = await closedPort();
    const secret = "Sup3rS3cretValue_abc";
    const given = `http://127.0.0.1:${port}/cb?key=${secret}`;
    const table = captureIo();
    expect(await runCli(["simulate", "UpdateOrderStatus", "--url", given], table.io)).toBe(1);
    expect(table.stdout).toContain(
      `Simulating 1 callback against http://127.0.0.1:${port}/cb?key=***`,
    );
    expect(table.stdout).toContain("no answer");
    expect(`${table.stdout}${table.stderr}`).not.toContain(secret);

    const json = captureIo();
    expect(await runCli(["simulate", "UpdateOrderStatus", "--url", given, "--json"], json.io)).toBe(
      1,
    );
    expect(`${json.stdout}${json.stderr}`).not.toContain(secret);
    expect(JSON.parse(json.stdout).url).toBe(`http://127.0.0.1:${port}/cb?key=***`);

    const answered = captureIo();
    const goodGiven = `${good.base}?key=${secret}`;
    expect(
      await runCli(
        ["simulate", "UpdateOrderStatus", ...signedAt(goodGiven), "--json"],
        answered.io,
      ),
    ).toBe(0);
    expect(answered.stdout).not.toContain(secret);
    const output = JSON.parse(answered.stdout);
    expect(output.url).toBe(`${good.base}?key=***`);
    expect(output.results[0].url).toBe(`${good.base}/UpdateOrderStatus?key=***`);
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

  // Every server the README shows refuses a call without its merchant GUID (401), so the next
  // step `keys` prints must name --guid. README step 4 sets MERCHANT_GUID only for the server's
  // command, and step 5 runs the simulator in a second terminal (second read S1): there the
  // variable is unset, and the printed line must stop with a message, not send 14 calls with an
  // empty GUID. A real shell expands the printed line (printf in place of npx): unset, it stops;
  // set, its words run as printed (the README's URL swapped for the test merchant's) and all pass.
  it.skipIf(process.platform === "win32")(
    "prints the whole simulate line to run next: unset MERCHANT_GUID stops it, set it passes",
    async () => {
      const out = join(dir, "keys-next");
      const cap = captureIo();
      expect(await runCli(["keys", "--out", out], cap.io)).toBe(0);
      const line = /^ {2}npx crossborder-callbacks (simulate all .*)$/m.exec(cap.stdout)?.[1] ?? "";
      expect(line).toBe(
        `simulate all --url http://127.0.0.1:3000/crossborder --private-key ${shellWord(join(out, "service-test-private.pem"))} --guid "\${MERCHANT_GUID:?set MERCHANT_GUID to the GUID your endpoint checks}"`,
      );
      expect(cap.stdout).toMatch(/MERCHANT_GUID/);
      const words = `printf '%s\\n' ${line}`;
      for (const shell of ["sh", "bash"]) {
        const unset = await runCommand(shell, ["-c", words], { MERCHANT_GUID: undefined }, dir);
        expect(unset.code, shell).not.toBe(0);
        expect(unset.stdout, shell).toBe("");
        expect(unset.stderr, shell).toContain(
          "MERCHANT_GUID: set MERCHANT_GUID to the GUID your endpoint checks",
        );
        const empty = await runCommand(shell, ["-c", words], { MERCHANT_GUID: "" }, dir);
        expect(empty.code, shell).not.toBe(0);
        expect(empty.stdout, shell).toBe("");
      }
      const set = await runCommand("sh", ["-c", words], { MERCHANT_GUID }, dir);
      expect(set.code).toBe(0);
      const args = set.stdout.replace(/\n$/, "").split("\n");
      expect(args.slice(-2)).toEqual(["--guid", MERCHANT_GUID]);
      expect(args[args.indexOf("--private-key") + 1]).toBe(join(out, "service-test-private.pem"));
      const merchant = await startMerchant(
        await readFile(join(out, "service-test-public.pem"), "utf8"),
      );
      try {
        const run = captureIo();
        const url = args.indexOf("--url") + 1;
        args[url] = merchant.base;
        expect(await runCli(args, run.io)).toBe(0);
        expect(run.stdout).toContain("14 of 14 passed.");
        expect(run.stderr).toBe("");
      } finally {
        await merchant.close();
      }
    },
  );

  it("quotes a key path a shell would split, by the rule of the platform's shell", async () => {
    const out = join(dir, "my keys");
    const cap = captureIo();
    expect(await runCli(["keys", "--out", out], cap.io)).toBe(0);
    const key = join(out, "service-test-private.pem");
    expect(cap.stdout).toContain(` --private-key ${shellWord(key)} --guid "\${MERCHANT_GUID:?`);
    expect(shellWord(key)).not.toBe(key);
  });

  // Second read S2: on Windows the path was put in POSIX single quotes, which cmd.exe passes on
  // as part of the file name. There a path is quoted only when needed, and with double quotes.
  it("shellWord: POSIX single quotes elsewhere, double quotes only when needed on Windows", () => {
    for (const platform of ["linux", "darwin"] as const) {
      expect(shellWord("/home/me/keys/k.pem", platform)).toBe("/home/me/keys/k.pem");
      expect(shellWord("/home/me/my keys/k.pem", platform)).toBe("'/home/me/my keys/k.pem'");
      expect(shellWord("/tmp/it's/$HOME", platform)).toBe("'/tmp/it'\\''s/$HOME'");
      expect(shellWord("C:\\keys\\k.pem", platform)).toBe("'C:\\keys\\k.pem'");
    }
    expect(shellWord("C:\\Users\\me\\keys\\service-test-private.pem", "win32")).toBe(
      "C:\\Users\\me\\keys\\service-test-private.pem",
    );
    expect(shellWord("C:\\Users\\Jane Doe\\keys\\k.pem", "win32")).toBe(
      '"C:\\Users\\Jane Doe\\keys\\k.pem"',
    );
    expect(shellWord("D:\\R&D\\keys\\k.pem", "win32")).toBe('"D:\\R&D\\keys\\k.pem"');
    expect(shellWord("C:\\it's\\k.pem", "win32")).toBe('"C:\\it\'s\\k.pem"');
    expect(shellWord("\\\\server\\share\\k.pem", "win32")).toBe("\\\\server\\share\\k.pem");
  });

  it("a directory that cannot be made is a usage error (exit 2, one line), not a stack trace", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "x");
    for (const out of [file, join(file, "below")]) {
      const cap = captureIo();
      expect(await runCli(["keys", "--out", out], cap.io)).toBe(2);
      expect(cap.stderr).toContain(`cannot create the directory ${out}`);
      expect(cap.stderr).not.toMatch(/\n\s+at /);
    }
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

// Review-kit K2 through the CLI (the same check as sendCallback).
describe("simulate --expect 401: the status alone", () => {
  it("--expect 401 passes a 401 answered as plain text, an HTML page or an empty body", async () => {
    const refusing401 = await startRawMerchant(
      Object.fromEntries(
        CALLBACK_NAMES.map((name, index) => [
          name,
          (res: import("node:http").ServerResponse) => {
            if (index % 3 === 0) {
              res.writeHead(401, { "content-type": "text/plain" });
              res.end("Unauthorized");
            } else if (index % 3 === 1) {
              res.writeHead(401, { "content-type": "text/html" });
              res.end("<!DOCTYPE html><html><body>Unauthorized</body></html>");
            } else {
              res.writeHead(401);
              res.end();
            }
          },
        ]),
      ),
    );
    try {
      const cap = captureIo();
      const code = await runCli(
        ["simulate", "all", "--url", refusing401.base, "--expect", "401"],
        cap.io,
      );
      expect(cap.stdout).toContain("14 of 14 passed.");
      expect(code).toBe(0);
    } finally {
      await refusing401.close();
    }
  });
});

// Review-kit K1 through the CLI (the same check as sendCallback).
describe("simulate: card data sent back", () => {
  it("fails an answer that echoes the card number and CVV, naming the field, printing neither", async () => {
    const leaking = await startRawMerchant({
      PerformOrderPayment: (res, request) => {
        const { CardNumber, CVVNumber } = JSON.parse(request.body).PaymentDetails;
        json(res, 200, {
          Success: true,
          PaymentAmount: "129.90",
          PaymentCurrencyCode: "USD",
          Message: `Charged card ${CardNumber} (cvv ${CVVNumber})`,
        });
      },
    });
    try {
      for (const extra of [["--show-body"], ["--json"]]) {
        const cap = captureIo();
        const code = await runCli(
          ["simulate", "PerformOrderPayment", "--url", leaking.base, ...extra],
          cap.io,
        );
        expect(code).toBe(1);
        const problem =
          'the answer sends back the card number this call carried, at "Message": card data must never be echoed';
        if (extra[0] === "--json") expect(cap.stdout).toContain(JSON.stringify(problem));
        else expect(rowOf(cap.stdout, "PerformOrderPayment")).toContain(problem);
        expect(cap.stdout + cap.stderr).not.toContain("4111111111111111");
        expect(cap.stdout + cap.stderr).not.toMatch(/cvv 737/i);
      }
    } finally {
      await leaking.close();
    }
  });

  // Second-kita S1: the masked card and an auth code, whose digits joined hold the card number,
  // failed a correct merchant.
  it("passes an answer quoting the masked card and an auth code (separate numbers)", async () => {
    const masking = await startRawMerchant({
      PerformOrderPayment: (res) => {
        json(res, 200, {
          Success: true,
          PaymentAmount: "129.90",
          PaymentCurrencyCode: "USD",
          CardBin: "411111",
          CardLastFour: "1111",
          Message: "Visa 411111******1111 approved, auth code 111111",
        });
      },
    });
    try {
      const cap = captureIo();
      const code = await runCli(
        ["simulate", "PerformOrderPayment", "--url", masking.base, "--show-body"],
        cap.io,
      );
      expect(cap.stdout).not.toContain("sends back");
      expect(code).toBe(0);
    } finally {
      await masking.close();
    }
  });
});

// Review-kit K6: the CLI could not send an expired token, so a verifier ignoring exp passed.
describe("simulate --expires-in: the tokens' lifetime, negative for an expired token", () => {
  /** The claims of the token of the last call `bad` saw. */
  const lastClaims = (): { iat: number; exp: number } => {
    const token = bad.seen.at(-1)?.headers.authorization?.slice("Bearer ".length) ?? "";
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
  };

  it("signs tokens with exp = iat + the seconds given, a negative value as typed or after =", async () => {
    for (const [args, lifetime] of [
      [["--expires-in", "60"], 60],
      [["--expires-in", "-3600"], -3600],
      [["--expires-in=-3600"], -3600],
      [["--expires-in", "+30"], 30],
    ] as const) {
      await runCli(
        ["simulate", "UpdateOrderStatus", "--url", bad.base, "--private-key", keyFile, ...args],
        captureIo().io,
      );
      const claims = lastClaims();
      expect(claims.exp - claims.iat, args.join(" ")).toBe(lifetime);
    }
    await runCli(
      ["simulate", "UpdateOrderStatus", "--url", bad.base, "--private-key", keyFile],
      captureIo().io,
    );
    expect(lastClaims().exp - lastClaims().iat).toBe(300);
  });

  it("--expires-in -3600 --expect 401: an endpoint that checks exp refuses every call, exits 0", async () => {
    const expired = captureIo();
    const code = await runCli(
      ["simulate", "all", ...signedAt(good.base), "--expires-in", "-3600", "--expect", "401"],
      expired.io,
    );
    expect(expired.stdout).toContain("14 of 14 passed.");
    expect(code).toBe(0);
    // Expecting a success, the same expired token is the failure.
    const cap = captureIo();
    expect(
      await runCli(
        ["simulate", "UpdateOrderStatus", ...signedAt(good.base), "--expires-in=-3600"],
        cap.io,
      ),
    ).toBe(1);
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toMatch(/← 401 /);
  });

  it("an endpoint that ignores exp fails the expired-token check", async () => {
    const cap = captureIo();
    // `bad` accepts any token: its well-formed answers are 200s.
    const code = await runCli(
      [
        "simulate",
        "SendAdditionalRequiredDocumentsToMerchant",
        "--url",
        bad.base,
        "--private-key",
        keyFile,
        "--expires-in",
        "-3600",
        "--expect",
        "401",
      ],
      cap.io,
    );
    expect(code).toBe(1);
    expect(rowOf(cap.stdout, "SendAdditionalRequiredDocumentsToMerchant")).toContain(
      "HTTP 200: expected 401",
    );
  });

  it("refuses a value that is not a whole number of seconds, or without --private-key, naming the flag", async () => {
    const cases: [string[], RegExp][] = [
      [["--expires-in", "soon"], /--expires-in must be a whole number of seconds.*got "soon"/],
      [["--expires-in", "1.5"], /--expires-in must be a whole number of seconds.*got "1\.5"/],
      [["--expires-in="], /--expires-in must be a whole number of seconds.*got ""/],
      [["--expires-in", "-1e3"], /--expires-in must be a whole number of seconds/],
      [["--expires-in", "99999999999"], /--expires-in must be a whole number of seconds \(at most/],
      [["--expires-in"], /--expires-in needs a value \(--expires-in <seconds>\)/],
      [
        ["--expire-in", "60"],
        /unknown option --expire-in for simulate; did you mean --expires-in\?/,
      ],
    ];
    for (const [extra, message] of cases) {
      const args = ["simulate", "all", "--url", good.base, "--private-key", keyFile, ...extra];
      const cap = captureIo();
      expect(await runCli(args, cap.io), args.join(" ")).toBe(2);
      expect(cap.stderr, args.join(" ")).toMatch(message);
      expect(cap.stdout).toBe("");
    }
    const unsigned = captureIo();
    expect(
      await runCli(["simulate", "all", "--url", good.base, "--expires-in", "-3600"], unsigned.io),
    ).toBe(2);
    expect(unsigned.stderr).toMatch(/--expires-in needs --private-key/);
  });

  // Second-kita S3: a token expired by less than a verifier's clock tolerance (the library
  // allows 60 s) is still accepted, so `--expires-in -30 --expect 401` failed a correct endpoint.
  it("refuses 0 and a negative value within a verifier's clock tolerance (above -300), saying why", async () => {
    for (const value of ["0", "-0", "-1", "-30", "-60", "-299"]) {
      const args = ["simulate", "all", "--url", good.base, "--private-key", keyFile];
      const cap = captureIo();
      expect(await runCli([...args, "--expires-in", value], cap.io), value).toBe(2);
      expect(cap.stderr, value).toMatch(
        /--expires-in .*clock tolerance.*60 s.*-300 or less.*--expires-in -3600/,
      );
      expect(cap.stdout).toBe("");
    }
    const past = captureIo();
    expect(
      await runCli(
        ["simulate", "all", ...signedAt(good.base), "--expires-in=-300", "--expect", "401"],
        past.io,
      ),
    ).toBe(0);
  });

  it("is listed in simulate --help, with the expired-token example", async () => {
    const cap = captureIo();
    expect(await runCli(["simulate", "--help"], cap.io)).toBe(0);
    expect(cap.stdout).toContain("--expires-in <seconds>");
    expect(cap.stdout).toContain("--expires-in -3600 --expect 401");
    expect(cap.stdout).toMatch(/clock tolerance/);
  });
});

// Final reading 2: the redelivery and captured-form findings of a row.
describe("simulate: what the redelivery and the captured form find", () => {
  const paid = {
    Success: true,
    InternalOrderId: "M-1",
    PaymentAmount: "123.73",
    PaymentCurrencyCode: "USD",
  };
  /** A merchant paying once, then refusing the repeat with `status`, quoting the card it got. */
  async function refusingRepeat(status: number) {
    let payments = 0;
    const server = await startRawMerchant({
      SendOrderToMerchant: (res, request) =>
        json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) }),
      PerformOrderPayment: (res, request) => {
        const card = JSON.parse(request.body).PaymentDetails?.CardNumber;
        if (card && payments++ > 0) {
          json(res, status, {
            Success: false,
            ErrorCode: "ALREADY_PAID",
            ErrorText: `card ${card} already charged`,
          });
        } else json(res, 200, paid);
      },
    });
    servers.push(server);
    return server;
  }
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
  });
  const ORDER_AND_PAYMENT = "SendOrderToMerchant,PerformOrderPayment";

  it("fails a refused repeated payment that sends the card back: only the refusal is a warning", async () => {
    const server = await refusingRepeat(200);
    const cap = captureIo();
    const code = await runCli(["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base)], cap.io);
    const payment = rowOf(cap.stdout, "PerformOrderPayment");
    expect(payment).toMatch(/\n {4}redelivered .*card number.*never be echoed/);
    expect(payment).toMatch(/warning: redelivered .*a refusal: .*ALREADY_PAID/);
    expect(payment).not.toMatch(/warning: .*card number/);
    expect(cap.stdout).not.toContain("4111111111111111");
    expect(code).toBe(1);
  });

  it("fails a repeated payment answered 404 (--json: ok false), refusal or not", async () => {
    const server = await refusingRepeat(404);
    const cap = captureIo();
    const code = await runCli(
      ["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base), "--json"],
      cap.io,
    );
    const output = JSON.parse(cap.stdout);
    expect(output.ok).toBe(false);
    const payment = output.results[1];
    expect(payment).toMatchObject({ callback: "PerformOrderPayment", ok: false });
    expect(payment.problems).toContainEqual(expect.stringMatching(/^redelivered .*HTTP 404/));
    // Review docs-6: a payment's advice spoke of "the same InternalOrderId", an order's field.
    for (const problem of payment.problems) {
      expect(problem).not.toContain("InternalOrderId");
      expect(problem).toContain("the same answer, no second charge");
    }
    expect(code).toBe(1);
  });

  it("--show-body and --json show the failing answer of the captured form, not the passing sample's", async () => {
    const server = await startRawMerchant({
      SendOrderToMerchant: (res, request) => {
        if (JSON.parse(request.body).PaymentDetails === null) {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("TypeError: Cannot read properties of null (reading 'CardNumber')");
        } else json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) });
      },
    });
    servers.push(server);
    const text = captureIo();
    expect(
      await runCli(
        ["simulate", "SendOrderToMerchant", ...signedAt(server.base), "--show-body"],
        text.io,
      ),
    ).toBe(1);
    const row = rowOf(text.stdout, "SendOrderToMerchant");
    expect(row).toMatch(/\n {4}as captured: ← 500 +- *\n {4}\| TypeError: Cannot read/);
    expect(row).not.toContain('| {"Success":true');
    const cap = captureIo();
    await runCli(
      ["simulate", "SendOrderToMerchant", ...signedAt(server.base), "--show-body", "--json"],
      cap.io,
    );
    const [result] = JSON.parse(cap.stdout).results;
    expect(result).toMatchObject({ ok: false, status: 200, success: true });
    expect(result.body).toBeUndefined();
    expect(result.failedAnswers).toEqual([
      {
        send: "as captured",
        status: 500,
        success: null,
        body: "TypeError: Cannot read properties of null (reading 'CardNumber')",
      },
    ]);
    // Without --show-body: the failing answer's status and success, not its body.
    const bare = captureIo();
    await runCli(["simulate", "SendOrderToMerchant", ...signedAt(server.base), "--json"], bare.io);
    expect(JSON.parse(bare.stdout).results[0].failedAnswers).toEqual([
      { send: "as captured", status: 500, success: null },
    ]);
  });

  it("--show-body shows a failing redelivery's answer, masked", async () => {
    const server = await refusingRepeat(500);
    const cap = captureIo();
    await runCli(
      ["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base), "--show-body", "--json"],
      cap.io,
    );
    const payment = JSON.parse(cap.stdout).results[1];
    expect(payment).toMatchObject({ ok: false, status: 200, success: true });
    expect(payment.failedAnswers).toEqual([
      {
        send: "redelivered",
        status: 500,
        success: false,
        body: expect.stringContaining("card ************1111 already charged"),
      },
    ]);
    expect(cap.stdout).not.toContain("4111111111111111");
  });

  it("masks, in the captured payment's failing answer, the CVV and card the row's first payment sent (the captured form carries none)", async () => {
    let first: unknown;
    const server = await startRawMerchant({
      SendOrderToMerchant: (res, request) =>
        json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) }),
      PerformOrderPayment: (res, request) => {
        const details = JSON.parse(request.body).PaymentDetails;
        if (details?.CardNumber) {
          first ??= details;
          json(res, 200, paid);
        } else json(res, 500, { Success: false, Message: "stale", Last: JSON.stringify(first) });
      },
    });
    servers.push(server);
    for (const extra of [["--show-body"], ["--show-body", "--json"]]) {
      first = undefined;
      const cap = captureIo();
      const code = await runCli(
        ["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base), ...extra],
        cap.io,
      );
      expect(code).toBe(1);
      expect(cap.stdout).toMatch(/as captured/);
      expect(cap.stdout).not.toContain("4111111111111111");
      expect(cap.stdout).not.toMatch(/CVVNumber\\?":\\?"737/);
    }
  });

  it("--show-body does not show the first, passing answer as the failure when the repeat got no answer", async () => {
    let payments = 0;
    const server = await startRawMerchant({
      SendOrderToMerchant: (res, request) =>
        json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) }),
      PerformOrderPayment: (res, request) => {
        if (JSON.parse(request.body).PaymentDetails?.CardNumber && payments++ > 0) {
          res.socket?.destroy();
        } else json(res, 200, { ...paid, InternalOrderId: ownOrderId(request.body) });
      },
    });
    servers.push(server);
    const text = captureIo();
    await runCli(["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base), "--show-body"], text.io);
    const row = rowOf(text.stdout, "PerformOrderPayment");
    expect(row).toMatch(/redelivered .*no answer/);
    expect(row).not.toContain('| {"Success":true');
    payments = 0;
    const cap = captureIo();
    await runCli(
      ["simulate", ORDER_AND_PAYMENT, ...signedAt(server.base), "--show-body", "--json"],
      cap.io,
    );
    const payment = JSON.parse(cap.stdout).results[1];
    expect(payment).toMatchObject({ ok: false, failedAnswers: [] });
    expect(payment.body).toBeUndefined();
  });

  it("--expect 200 still redelivers the order: a merchant doubling it fails", async () => {
    let orders = 0;
    const server = await startRawMerchant({
      SendOrderToMerchant: (res) => json(res, 200, { ...paid, InternalOrderId: `M-${++orders}` }),
    });
    servers.push(server);
    const cap = captureIo();
    const code = await runCli(
      ["simulate", "SendOrderToMerchant", ...signedAt(server.base), "--expect", "200"],
      cap.io,
    );
    expect(rowOf(cap.stdout, "SendOrderToMerchant")).toMatch(
      /redelivered .*InternalOrderId "M-1" then "M-2": a duplicate order/,
    );
    expect(code).toBe(1);
    // A non-2xx expectation still skips them: one call only.
    const refused = captureIo();
    const before = server.seen.length;
    await runCli(
      ["simulate", "SendOrderToMerchant", ...signedAt(server.base), "--expect", "401"],
      refused.io,
    );
    expect(server.seen.length - before).toBe(1);
  });
});
