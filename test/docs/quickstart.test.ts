// The README's quick start, run exactly as a merchant copies it: extracted from the README into a
// file, started with tsx, importing the package by its name (dist/), and sent signed orders.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import {
  capturedPayload,
  createTestKeys,
  samplePayload,
  sendCallback,
} from "../../src/testing/index.js";
import { ROOT, TSCONFIG_WITHOUT_PATHS } from "../adapters/support/runtime.js";
import { captureIo } from "../cli/io.js";
import { assertBuilt } from "../examples/support/flow.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const block = /<!-- quick-start:begin -->\s*```ts\n([\s\S]*?)```\s*<!-- quick-start:end -->/.exec(
  readme,
);
const dir = join(ROOT, ".tmp", `quickstart-${process.pid}`);
const GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(),
      );
    });
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`nothing listens on ${port}`);
}

/** Starts the quick start written in `dir` (a new process: a new instance, nothing remembered). */
async function startQuickStart(publicKey: string) {
  const port = await freePort();
  let output = "";
  const child = spawn(join(ROOT, "node_modules/.bin/tsx"), ["server.mts"], {
    cwd: dir,
    env: {
      ...process.env,
      SERVICE_PUBLIC_KEY: publicKey,
      MERCHANT_GUID: GUID,
      PORT: String(port),
      TSX_TSCONFIG_PATH: TSCONFIG_WITHOUT_PATHS,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  await waitForPort(port, Date.now() + 15_000).catch((error) => {
    child.kill();
    throw new Error(`${error.message}\n${output}`);
  });
  return { base: `http://127.0.0.1:${port}/crossborder`, child };
}

describe("README quick start", () => {
  let keys: Awaited<ReturnType<typeof createTestKeys>>;
  let base: string;
  let child: ReturnType<typeof spawn> | undefined;
  /** A call signed by the test keys, naming the quick start's merchant GUID. */
  const signedSend = (
    at: string,
    callback: Parameters<typeof sendCallback>[1],
    options: Omit<Parameters<typeof sendCallback>[2], "privateKey" | "merchantGuid">,
  ) => sendCallback(at, callback, { ...options, privateKey: keys.privateKey, merchantGuid: GUID });

  beforeAll(async () => {
    assertBuilt();
    expect(block, "the quick-start block between its markers").not.toBeNull();
    const code = block?.[1] ?? "";
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "server.mts"), code);
    keys = await createTestKeys();
    ({ base, child } = await startQuickStart(keys.publicKey));
  });

  afterAll(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A payment of `orderId` whose body states `details` (an order may carry them, 001 §4.4). */
  function paymentStating(orderId: string, details: Record<string, unknown>) {
    const payment = samplePayload("PerformOrderPayment", { OrderId: orderId });
    return { ...payment, InternationalDetails: details };
  }

  it("answers a signed order with the merchant's ids, the same id for the same order twice", async () => {
    const payload = samplePayload("SendOrderToMerchant", { OrderId: "GE-README-1" });
    const first = await sendCallback(base, "SendOrderToMerchant", {
      privateKey: keys.privateKey,
      merchantGuid: GUID,
      payload,
    });
    const again = await sendCallback(base, "SendOrderToMerchant", {
      privateKey: keys.privateKey,
      merchantGuid: GUID,
      payload,
    });
    expect(first.status).toBe(200);
    expect(first.problems).toEqual([]);
    // The sample order carries a card in PaymentDetails: the answer says what was charged, the
    // order's transaction total (001 §4.2), so the simulator has nothing to warn about.
    expect(first.warnings).toEqual([]);
    expect(first.body).toEqual({
      Success: true,
      InternalOrderId: "M-1",
      PaymentAmount: "123.73",
      PaymentCurrencyCode: "USD",
    });
    expect(again.body).toEqual(first.body);
  });

  // Review spec D2: 001 §4.4's PerformOrderPayment carries OrderId, MerchantGUID and
  // PaymentDetails, no amount; the quick start answered every payment 0 USD from the absent
  // InternationalDetails. The amount is the one its SendOrderToMerchant stated.
  it("answers a payment with the amount and currency of the order SendOrderToMerchant sent, and refuses one for an unknown order", async () => {
    const order = samplePayload("SendOrderToMerchant", { OrderId: "GE-README-PAY" });
    order.InternationalDetails = {
      ...order.InternationalDetails,
      TransactionTotalPrice: 87.5,
      TransactionCurrencyCode: "EUR",
    };
    const sent = await signedSend(base, "SendOrderToMerchant", {
      payload: order,
    });
    expect(sent.status).toBe(200);
    const payment = samplePayload("PerformOrderPayment", { OrderId: "GE-README-PAY" });
    expect(payment).not.toHaveProperty("InternationalDetails");
    const paid = await signedSend(base, "PerformOrderPayment", {
      payload: payment,
    });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      Success: true,
      PaymentAmount: "87.5",
      PaymentCurrencyCode: "EUR",
    });
    const unknown = await signedSend(base, "PerformOrderPayment", {
      payload: samplePayload("PerformOrderPayment", { OrderId: "GE-README-NEVER-SENT" }),
    });
    expect(unknown.body).toMatchObject({ Success: false });
    expect(unknown.body).not.toHaveProperty("PaymentAmount");
  });

  // Second reading Q1: the payment body is an order (001 §4.4) and may state the amount; the
  // quick start read it only from its in-memory map, so a restart or another instance refused
  // the payment of an order it had received.
  it("answers a payment whose body states the amount, for an order this server never saw", async () => {
    const paid = await signedSend(base, "PerformOrderPayment", {
      payload: paymentStating("GE-README-ELSEWHERE", {
        TransactionTotalPrice: 87.5,
        TransactionCurrencyCode: "EUR",
      }),
    });
    expect(paid.status).toBe(200);
    expect(paid.problems).toEqual([]);
    expect(paid.body).toMatchObject({
      Success: true,
      PaymentAmount: "87.5",
      PaymentCurrencyCode: "EUR",
    });
  });

  it("after a restart, answers a payment stating its amount and refuses one that states none", async () => {
    const order = samplePayload("SendOrderToMerchant", { OrderId: "GE-README-RESTART" });
    order.InternationalDetails = {
      ...order.InternationalDetails,
      TransactionTotalPrice: 87.5,
      TransactionCurrencyCode: "EUR",
    };
    const sent = await signedSend(base, "SendOrderToMerchant", {
      payload: order,
    });
    expect(sent.status).toBe(200);
    const restarted = await startQuickStart(keys.publicKey);
    try {
      const paid = await signedSend(restarted.base, "PerformOrderPayment", {
        payload: paymentStating("GE-README-RESTART", {
          TransactionTotalPrice: 87.5,
          TransactionCurrencyCode: "EUR",
        }),
      });
      expect(paid.status).toBe(200);
      expect(paid.body).toMatchObject({
        Success: true,
        PaymentAmount: "87.5",
        PaymentCurrencyCode: "EUR",
      });
      // Without the amount in the body, the new instance has nothing to answer: a refusal.
      const unstated = await signedSend(restarted.base, "PerformOrderPayment", {
        payload: samplePayload("PerformOrderPayment", { OrderId: "GE-README-RESTART" }),
      });
      expect(unstated.status).toBe(200);
      expect(unstated.body).toMatchObject({ Success: false, ErrorCode: "UNKNOWN_ORDER" });
      // Open item 3: `simulate PerformOrderPayment` alone gets that refusal, and says to send the
      // order first (as the README says), not to expect a refusal.
      const keyFile = join(dir, "private.pem");
      writeFileSync(keyFile, keys.privateKey);
      const cli = ["--url", restarted.base, "--private-key", keyFile, "--guid", GUID];
      const alone = captureIo();
      expect(await runCli(["simulate", "PerformOrderPayment", ...cli], alone.io)).toBe(1);
      expect(alone.stdout).toContain("Send the order first");
      expect(alone.stdout).not.toContain("A refusal is what you meant to test?");
      const both = captureIo();
      const code = await runCli(
        ["simulate", "SendOrderToMerchant,PerformOrderPayment", ...cli],
        both.io,
      );
      expect(code, both.stdout).toBe(0);
    } finally {
      restarted.child.kill();
    }
  }, 30_000);

  it("takes a blank currency as unknown: refuses rather than answer an empty currency", async () => {
    // In the payment body, for an order it never saw.
    const stated = await signedSend(base, "PerformOrderPayment", {
      payload: paymentStating("GE-README-BLANK-1", {
        TransactionTotalPrice: 87.5,
        TransactionCurrencyCode: " ",
      }),
    });
    expect(stated.status).toBe(200);
    expect(stated.body).toMatchObject({ Success: false, ErrorCode: "UNKNOWN_ORDER" });
    expect(stated.body).not.toHaveProperty("PaymentCurrencyCode");
    // In the order its SendOrderToMerchant sent, with a payment stating nothing.
    const order = samplePayload("SendOrderToMerchant", { OrderId: "GE-README-BLANK-2" });
    order.InternationalDetails = {
      ...order.InternationalDetails,
      TransactionTotalPrice: 87.5,
      TransactionCurrencyCode: " ",
    };
    const sent = await signedSend(base, "SendOrderToMerchant", {
      payload: order,
    });
    expect(sent.status).toBe(200);
    expect(sent.body).not.toHaveProperty("PaymentCurrencyCode");
    const paid = await signedSend(base, "PerformOrderPayment", {
      payload: samplePayload("PerformOrderPayment", { OrderId: "GE-README-BLANK-2" }),
    });
    expect(paid.body).toMatchObject({ Success: false, ErrorCode: "UNKNOWN_ORDER" });
    expect(paid.body).not.toHaveProperty("PaymentCurrencyCode");
  });

  // Review docs-3: the "Testing your endpoints" calls, as the README writes them, got 401 from an
  // endpoint that checks its MerchantGUID (the samples carry SAMPLE_MERCHANT_GUID).
  it('answers the calls of the README\'s "Testing your endpoints" as written (its GUID checked)', async () => {
    const section = readme.slice(readme.indexOf("## Testing your endpoints"));
    const main = /sendCallback\([^,]+,\s*"SendOrderToMerchant",\s*(\{[\s\S]*?\})\);/.exec(
      /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "",
    )?.[1];
    const inline = /`sendCallback\(url, "SendOrderToMerchant", (\{[^`]*\})\)`/.exec(section)?.[1];
    expect(main, "the section's sendCallback options").toBeDefined();
    expect(inline, "the section's capturedPayload line").toBeDefined();
    for (const text of [main, inline]) {
      const options = new Function(
        "keys",
        "samplePayload",
        "capturedPayload",
        "MERCHANT_GUID",
        `return (${text});`,
      )(keys, samplePayload, capturedPayload, GUID);
      const result = await sendCallback(base, "SendOrderToMerchant", {
        privateKey: keys.privateKey,
        ...options,
      });
      expect(result.status, text).toBe(200);
      expect(result.problems, text).toEqual([]);
    }
  });

  it("refuses an unsigned order with a 401 that never reached the function", async () => {
    const result = await sendCallback(base, "SendOrderToMerchant", {
      payload: samplePayload("SendOrderToMerchant", { OrderId: "GE-README-2" }),
    });
    expect(result.status).toBe(401);
    expect(result.body).toMatchObject({ Success: false, ErrorCode: "UNAUTHORIZED" });
  });
});

describe("README quick start without MERCHANT_GUID", () => {
  it("answers every call 500 and logs why, rather than skipping the GUID check", async () => {
    assertBuilt();
    const code = block?.[1] ?? "";
    const here = `${dir}-noguid`;
    mkdirSync(here, { recursive: true });
    writeFileSync(join(here, "server.mts"), code);
    const keys = await createTestKeys();
    const port = await freePort();
    let output = "";
    const child = spawn(join(ROOT, "node_modules/.bin/tsx"), ["server.mts"], {
      cwd: here,
      // MERCHANT_GUID unset, whatever this process has.
      env: {
        ...Object.fromEntries(
          Object.entries(process.env).filter(([name]) => name !== "MERCHANT_GUID"),
        ),
        SERVICE_PUBLIC_KEY: keys.publicKey,
        PORT: String(port),
        TSX_TSCONFIG_PATH: TSCONFIG_WITHOUT_PATHS,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    try {
      await waitForPort(port, Date.now() + 15_000);
      const result = await sendCallback(
        `http://127.0.0.1:${port}/crossborder`,
        "SendOrderToMerchant",
        {
          privateKey: keys.privateKey,
          merchantGuid: "someone-else",
        },
      );
      expect(result.status).toBe(500);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(output).toContain("merchantGuid is undefined");
    } finally {
      child.kill();
      rmSync(here, { recursive: true, force: true });
    }
  }, 30_000);
});
