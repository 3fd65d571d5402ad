// The README's service example, run exactly as a merchant copies it: extracted into the file its
// first line names, in a project of the README's step 1 (`npm init -y`: CommonJS, no "type":
// "module"), run with the command that line gives, importing the package by its name (dist/),
// against the simulator it starts itself.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, TSCONFIG_WITHOUT_PATHS } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const block =
  /<!-- service-example:begin -->\s*```ts\n([\s\S]*?)```\s*<!-- service-example:end -->/.exec(
    readme,
  );
const dir = join(ROOT, ".tmp", `service-example-${process.pid}`);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("README: Calling the service", () => {
  it("runs as copied and prints what the README says", async () => {
    assertBuilt();
    expect(block, "the example between its markers").not.toBeNull();
    const source = block?.[1] ?? "";
    const run = /^\/\/ (\S+) — run with: npx tsx (\S+) /.exec(source);
    expect(run, "the example's first line names its file and how to run it").not.toBeNull();
    const [, file = "", argument = ""] = run ?? [];
    expect(argument).toBe(file);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), '{ "name": "billing", "version": "1.0.0" }\n');
    writeFileSync(join(dir, file), source);
    const { code, output } = await new Promise<{ code: number | null; output: string }>(
      (resolve, reject) => {
        const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [file], {
          cwd: dir,
          env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG_WITHOUT_PATHS },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.on("data", (chunk) => (output += chunk));
        child.stderr.on("data", (chunk) => (output += chunk));
        child.on("error", reject);
        child.on("close", (exit) => resolve({ code: exit, output }));
      },
    );
    expect(output.trim().split("\n")).toEqual(["taxes 9.95", "warning C102", "conflict B002"]);
    expect(code).toBe(0);
    expect(readme).toContain("It prints `taxes 9.95`, `warning C102` and `conflict B002`");
  });
});

// Review PIT-6: a client created per request fetched a token per request; the README never said
// to create it once. It says so now, with why, and what it says holds.
describe("README: Calling the service says to create the client once", () => {
  const section = readme.slice(
    readme.indexOf("## Calling the service"),
    readme.indexOf("### Operations"),
  );

  it("names start-up (a Worker: the first request, like the router) and why (a token per client)", () => {
    expect(section).toMatch(/create the client \*\*once\*\*, at start-up/i);
    expect(section).toMatch(/Worker[^.]*first request[^.]*like the router/);
    expect(section).toMatch(/each client (fetches|keeps) its own token/);
  });

  it("holds: a client per call fetches a token per call, one client one token", async () => {
    const { createServiceClient } = await import("../../src/service/index.js");
    const { createServiceSimulator } = await import("../../src/testing/index.js");
    const service = await createServiceSimulator();
    try {
      const options = {
        baseUrl: service.url,
        merchantGuid: service.merchantGuid,
        credentials: service.credentials,
      };
      const request = {
        subscriptionId: "SUB-PHYSICAL-1",
        currencyCode: "EUR",
        products: [{ code: "SKU-1", quantity: 2, price: 19.9 }],
      };
      for (let i = 0; i < 3; i++)
        await createServiceClient(options).calculateBillingSummary(request);
      const perCall = service.tokensIssued;
      const once = createServiceClient(options);
      for (let i = 0; i < 3; i++) await once.calculateBillingSummary(request);
      expect([perCall, service.tokensIssued - perCall]).toEqual([3, 1]);
    } finally {
      await service.close();
    }
  });
});
