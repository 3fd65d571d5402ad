// Review cli (cli-1 … cli-7) and i18n-6: what `simulate` must catch, warn about and print.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/cli/args.js";
import { runCli } from "../../src/cli/main.js";
import { maskedBody } from "../../src/cli/simulate.js";
import { printable, truncate } from "../../src/cli/table.js";
import { createTestKeys, type TestKeys } from "../../src/testing/index.js";
import {
  type Answer,
  json,
  MERCHANT_GUID,
  type RunningServer,
  startMerchant,
  startRawMerchant,
} from "../testing/helpers.js";
import { captureIo, rowOf } from "./io.js";

let dir: string;
let keys: TestKeys;
let keyFile: string;
let good: Awaited<ReturnType<typeof startMerchant>>;
const servers: RunningServer[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cbc-review-cli-"));
  keys = await createTestKeys();
  keyFile = join(dir, "private.pem");
  await writeFile(keyFile, keys.privateKey);
  good = await startMerchant(keys.publicKey);
});

afterAll(async () => {
  await good?.close();
  for (const server of servers) await server.close();
  await rm(dir, { recursive: true, force: true });
});

function signedAt(url: string): string[] {
  return ["--url", url, "--private-key", keyFile, "--guid", MERCHANT_GUID];
}

/** A SendOrderToMerchant answered with an InternalOrderId of its own order: M-<OrderId>. */
const orderAnsweredById: Answer = (res, request) => {
  const { OrderId } = JSON.parse(request.body);
  json(res, 200, { Success: true, InternalOrderId: `M-${OrderId}` });
};

async function raw(answers: Parameters<typeof startRawMerchant>[0]) {
  const server = await startRawMerchant(answers);
  servers.push(server);
  return server;
}

describe("cli-1: two different orders of one run answered with the same InternalOrderId", () => {
  it("fails the run (exit 1) against an endpoint that keys the order by the cart, naming both orders", async () => {
    // The README quick start with one bug: the merchant order is found by the cart, not by OrderId.
    const byCart = new Map<string, string>();
    const server = await raw({
      SendOrderToMerchant: (res, request) => {
        const order = JSON.parse(request.body);
        const key = String(order.CartToken ?? order.OrderId);
        if (!byCart.has(key)) byCart.set(key, `M-${byCart.size + 1}`);
        json(res, 200, { Success: true, InternalOrderId: byCart.get(key) });
      },
    });
    const cap = captureIo();
    const code = await runCli(["simulate", "all", "--url", server.base], cap.io);
    expect(code).toBe(1);
    const row = rowOf(cap.stdout, "SendOrderToMerchant");
    expect(row).toMatch(
      /GE927127003US answered InternalOrderId "M-1", already the merchant order of GE927127001US: two orders merged into one/,
    );
    expect(row).toMatch(
      /GE927127002US answered InternalOrderId "M-1", already the merchant order of GE927127001US/,
    );
    expect(cap.stdout).toContain("1 of 14 failed.");
    const out = captureIo();
    expect(await runCli(["simulate", "all", "--url", server.base, "--json"], out.io)).toBe(1);
    const result = JSON.parse(out.stdout).results.find(
      (r: { callback: string }) => r.callback === "SendOrderToMerchant",
    );
    expect(result.ok).toBe(false);
    expect(result.problems.join("\n")).toContain("two orders merged into one");
  });

  it("passes an endpoint that gives each OrderId its own InternalOrderId", async () => {
    const cap = captureIo();
    expect(await runCli(["simulate", "all", ...signedAt(good.base)], cap.io)).toBe(0);
    expect(cap.stdout).toContain("14 of 14 passed.");
  });
});

describe("cli-2: a payment or status answer that does not match its order", () => {
  it("warns (not fails) about another amount, another currency and another order's id", async () => {
    const server = await raw({
      SendOrderToMerchant: orderAnsweredById,
      PerformOrderPayment: (res) =>
        json(res, 200, {
          Success: true,
          InternalOrderId: "M-999",
          PaymentAmount: 12373,
          PaymentCurrencyCode: "JPY",
        }),
      UpdateOrderStatus: (res) => json(res, 200, { Success: true, InternalOrderId: "M-999" }),
    });
    const callbacks = "SendOrderToMerchant,PerformOrderPayment,UpdateOrderStatus";
    const cap = captureIo();
    expect(await runCli(["simulate", callbacks, "--url", server.base], cap.io)).toBe(0);
    const payment = rowOf(cap.stdout, "PerformOrderPayment");
    expect(payment).toMatch(/← 200 .* ok\n/);
    expect(payment).toContain("warning: PaymentAmount 12373 JPY, the order stated 123.73 USD");
    expect(payment).toContain(
      'warning: InternalOrderId "M-999", but the order GE927127001US was answered "M-GE927127001US"',
    );
    expect(rowOf(cap.stdout, "UpdateOrderStatus")).toContain(
      'warning: InternalOrderId "M-999", but the order GE927127001US was answered "M-GE927127001US"',
    );
    const out = captureIo();
    await runCli(["simulate", callbacks, "--url", server.base, "--json"], out.io);
    const results = JSON.parse(out.stdout).results;
    const paid = results.find((r: { callback: string }) => r.callback === "PerformOrderPayment");
    expect(paid).toMatchObject({ ok: true, problems: [] });
    expect(paid.warnings.join("\n")).toContain("PaymentAmount 12373 JPY");
  });

  it("no warning when the payment answers the order's amount and id", async () => {
    const server = await raw({
      SendOrderToMerchant: orderAnsweredById,
      PerformOrderPayment: (res) =>
        json(res, 200, {
          Success: true,
          InternalOrderId: "M-GE927127001US",
          PaymentAmount: "123.73",
          PaymentCurrencyCode: "usd",
        }),
    });
    const cap = captureIo();
    const args = ["simulate", "SendOrderToMerchant,PerformOrderPayment", "--url", server.base];
    expect(await runCli(args, cap.io)).toBe(0);
    expect(rowOf(cap.stdout, "PerformOrderPayment")).not.toContain("warning");
  });
});

describe("cli-3: --header-file: header secrets off the command line", () => {
  it("sends each Name: value line of the file, never prints a value, names a bad line by number", async () => {
    const server = await raw({});
    const file = join(dir, "headers.txt");
    await writeFile(
      file,
      "# the shop's secret\nX-Shop-Secret: hunter2secretvalue\r\n\nX-Other:  two words \n",
    );
    const cap = captureIo();
    const args = ["simulate", "ValidateVoucher", "--url", server.base, "--header-file", file];
    expect(await runCli(args, cap.io)).toBe(0);
    const seen = server.seen.at(-1);
    expect(seen?.headers["x-shop-secret"]).toBe("hunter2secretvalue");
    expect(seen?.headers["x-other"]).toBe("two words");
    expect(cap.stdout + cap.stderr).not.toContain("hunter2");
    // Masked like --header where the answer quotes it.
    const echo = await raw({
      ValidateVoucher: (res, request) =>
        json(res, 400, { Message: `bad ${request.headers["x-shop-secret"]}` }),
    });
    const shown = captureIo();
    await runCli(
      ["simulate", "ValidateVoucher", "--url", echo.base, "--header-file", file, "--show-body"],
      shown.io,
    );
    expect(shown.stdout).toContain("bad ***");
    expect(shown.stdout).not.toContain("hunter2");

    const bad = join(dir, "bad-headers.txt");
    await writeFile(bad, "X-Ok: 1\nX-Shop-Secret=hunter2secretvalue\n");
    const err = captureIo();
    expect(
      await runCli(
        ["simulate", "ValidateVoucher", "--url", server.base, "--header-file", bad],
        err.io,
      ),
    ).toBe(2);
    expect(err.stderr).toMatch(/--header-file .*line 2/);
    expect(err.stderr).not.toContain("hunter2");
    const missing = captureIo();
    expect(
      await runCli(
        ["simulate", "ValidateVoucher", "--url", server.base, "--header-file", join(dir, "nope")],
        missing.io,
      ),
    ).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --header-file/);
  });

  it("is listed in simulate --help", async () => {
    const cap = captureIo();
    await runCli(["simulate", "--help"], cap.io);
    expect(cap.stdout).toMatch(/--header-file <file>/);
  });
});

describe("cli-4: a passing run says authentication was not checked", () => {
  it("points to the forged-call check with the exact command, unless --expect was given", async () => {
    const cap = captureIo();
    expect(await runCli(["simulate", "all", ...signedAt(good.base)], cap.io)).toBe(0);
    expect(cap.stdout).toContain("14 of 14 passed.");
    expect(cap.stdout).toContain(
      `crossborder-callbacks simulate all --url ${good.base} --private-key <another key> --expect 401`,
    );
    expect(cap.stdout).toMatch(/authentication not checked/);
    const forged = captureIo();
    const strangerFile = join(dir, "stranger.pem");
    await writeFile(strangerFile, (await createTestKeys()).privateKey);
    const args = ["simulate", "all", "--url", good.base, "--private-key", strangerFile];
    expect(await runCli([...args, "--expect", "401"], forged.io)).toBe(0);
    expect(forged.stdout).not.toMatch(/authentication not checked/);
  });
});

describe("cli-5: the wrong-GUID forged check and the cart GET, which carries no GUID", () => {
  it("marks GetCheckoutCartInfo not applicable instead of failing a correct endpoint", async () => {
    const cap = captureIo();
    const args = [
      "simulate",
      "all",
      "--url",
      good.base,
      "--private-key",
      keyFile,
      "--guid",
      "00000000-0000-0000-0000-000000000000",
      "--expect",
      "401",
    ];
    expect(await runCli(args, cap.io)).toBe(0);
    const cart = rowOf(cap.stdout, "GetCheckoutCartInfo");
    expect(cart).toMatch(/not applicable/);
    expect(cart).toMatch(/carries no MerchantGUID/);
    expect(cap.stdout).toContain("13 of 14 passed, 1 not applicable.");
    const out = captureIo();
    expect(await runCli([...args, "--json"], out.io)).toBe(0);
    const result = JSON.parse(out.stdout).results[0];
    expect(result).toMatchObject({ callback: "GetCheckoutCartInfo", ok: true });
    expect(result.notApplicable).toMatch(/carries no MerchantGUID/);
  });

  it("a failed run counts the not-applicable row in its summary too", async () => {
    // The endpoint's own GUID with --expect 401: every POST is answered (a failure each), the
    // cart GET is not applicable; the closing line says both, as a passing run would.
    const cap = captureIo();
    const args = ["simulate", "all", "--url", good.base, "--private-key", keyFile];
    const guid = ["--guid", MERCHANT_GUID, "--expect", "401"];
    expect(await runCli([...args, ...guid], cap.io)).toBe(1);
    expect(cap.stdout).toContain("13 of 14 failed, 1 not applicable.");
  });

  it("still fails the cart of an endpoint that checks no token on it (a stranger key and --guid)", async () => {
    const lax = await raw({
      SendOrderToMerchant: (res) => json(res, 401, {}),
    });
    const cap = captureIo();
    const args = ["simulate", "GetCheckoutCartInfo", ...signedAt(lax.base), "--expect", "401"];
    expect(await runCli(args, cap.io)).toBe(1);
    expect(rowOf(cap.stdout, "GetCheckoutCartInfo")).toMatch(/it verifies no token on the cart/);
    expect(cap.stdout).not.toMatch(/not applicable/);
  });

  it("still fails the cart when the token is expired (the GET carries the token)", async () => {
    const lax = await raw({});
    const cap = captureIo();
    const args = [
      "simulate",
      "GetCheckoutCartInfo",
      ...signedAt(lax.base),
      "--expires-in",
      "-3600",
      "--expect",
      "401",
    ];
    expect(await runCli(args, cap.io)).toBe(1);
  });
});

describe("cli-6: FORCE_COLOR=0 and FORCE_COLOR=false mean no colour", () => {
  it("on a TTY too", async () => {
    for (const value of ["0", "false"]) {
      const cap = captureIo({ FORCE_COLOR: value }, true);
      await runCli(["simulate", "RemoveRestrictedProducts", ...signedAt(good.base)], cap.io);
      expect(cap.stdout).toContain("1 of 1 passed.");
      expect(cap.stdout).not.toContain("\u001b[");
    }
  });
});

describe("cli-7: polish", () => {
  it("root --help: -v, --version on a line of its own", async () => {
    const cap = captureIo();
    await runCli(["--help"], cap.io);
    expect(cap.stdout).toMatch(/\n {2}-v, --version +the version\n/);
    expect(cap.stdout).not.toMatch(/options\. +-v/);
  });

  it("--timeout-ms below --slow-ms is a usage error", async () => {
    const cap = captureIo();
    const args = [
      "simulate",
      "all",
      "--url",
      good.base,
      "--timeout-ms",
      "800",
      "--slow-ms",
      "5000",
    ];
    expect(await runCli(args, cap.io)).toBe(2);
    expect(cap.stderr).toMatch(/--timeout-ms 800 is below --slow-ms 5000/);
  });

  it("an option that takes one value given twice is a usage error naming it; --header repeats", async () => {
    for (const [option, a, b] of [
      ["--url", good.base, good.base],
      ["--guid", MERCHANT_GUID, "x"],
    ] as const) {
      const args = ["simulate", "all", "--url", good.base, option, a, option, b];
      const cap = captureIo();
      expect(await runCli(args, cap.io)).toBe(2);
      expect(cap.stderr).toContain(`${option} given twice`);
    }
    const parsed = parseCommand(["simulate", "all", "--header", "A: 1", "--header", "B: 2"]);
    expect(parsed.kind === "run" && parsed.command.list("header")).toEqual(["A: 1", "B: 2"]);
  });

  it("a self-signed TLS certificate: the problem hints at NODE_EXTRA_CA_CERTS", async () => {
    const keyPath = join(dir, "tls.key");
    const certPath = join(dir, "tls.crt");
    await promisify(execFile)("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
    ]);
    const server = createHttpsServer(
      { key: await readFile(keyPath), cert: await readFile(certPath) },
      (req, res) => {
        req.resume();
        req.on("end", () => json(res, 200, { Success: true }));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const cap = captureIo();
      const url = `https://127.0.0.1:${port}/cb`;
      expect(await runCli(["simulate", "ValidateVoucher", "--url", url], cap.io)).toBe(1);
      expect(cap.stdout).toMatch(/self-signed certificate/);
      expect(cap.stdout).toMatch(/NODE_EXTRA_CA_CERTS=<ca\.pem>/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** No lone surrogate (a half emoji, printed as U+FFFD). */
function wellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe("i18n-6: bidi controls escaped, cuts on whole characters", () => {
  it("printable shows bidi controls as \\u escapes", () => {
    expect(printable("\u202Eeurt\u202C")).toBe("\\u202Eeurt\\u202C");
    for (const char of ["\u202A", "\u202B", "\u202D", "\u2066", "\u2067", "\u2068", "\u2069"]) {
      expect(printable(`a${char}b`)).toBe(`a\\u${char.charCodeAt(0).toString(16).toUpperCase()}b`);
    }
    expect(printable("a\u200Eb\u200Fc\u061Cd")).toBe("a\\u200Eb\\u200Fc\\u061Cd");
    expect(printable("Zürich 東京 😀")).toBe("Zürich 東京 😀");
  });

  it("truncate and maskedBody never split a surrogate pair or a grapheme", () => {
    const emoji = "😀".repeat(20);
    const cut = truncate(emoji, 24);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(wellFormed(cut)).toBe(true);
    const family = "👨‍👩‍👧".repeat(5);
    const short = truncate(`"${family}"`, 12);
    expect(short.slice(0, -1).replace(/^"/, "").split("👨‍👩‍👧").join("")).toBe("");
    const body = maskedBody((text) => String(text), `${"x".repeat(1999)}😀😀`);
    expect(wellFormed(body)).toBe(true);
    expect(body).toMatch(/^x{1999}… \(4 more characters\)$/);
  });

  it("simulate prints an answer's bidi controls escaped, in the row, the problems and --show-body", async () => {
    const server = await raw({
      UpdateOrderStatus: (res) =>
        json(res, 500, {
          Success: "\u202Eeurt\u202C 👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧",
          Message: "\u202Edenifed OK\u202C ok",
        }),
    });
    const cap = captureIo();
    await runCli(["simulate", "UpdateOrderStatus", "--url", server.base, "--show-body"], cap.io);
    expect(cap.stdout).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/);
    expect(cap.stdout).toContain("\\u202Eeurt\\u202C");
    expect(cap.stdout).toContain("\\u202Edenifed OK\\u202C");
    expect(cap.stdout).not.toContain("\uFFFD");
    expect(wellFormed(cap.stdout)).toBe(true);
  });
});
