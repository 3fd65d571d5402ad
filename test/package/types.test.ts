// The types a user installs: dist/index.d.cts (require) and dist/index.d.ts (import), reached
// through the package's exports map from a CommonJS project (moduleResolution node16) and an ES
// module project (nodenext). The misspelt file of test/types/compile.test.ts gives the same errors
// there, naming the same interfaces: bundled declarations could rename them (`Address$1`).
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";
import { CASES, FIRST_LINE, file } from "../types/cases.js";
import { describe as describeDiagnostic } from "../types/program.js";

const DIR = join(ROOT, ".tmp", `dist-types-${process.pid}`);

const PROJECTS = {
  commonjs: { module: ts.ModuleKind.Node16, resolution: ts.ModuleResolutionKind.Node16 },
  module: { module: ts.ModuleKind.NodeNext, resolution: ts.ModuleResolutionKind.NodeNext },
} as const;

interface Compiled {
  /** The declaration file the package's root resolved to. */
  readonly declarations: string | undefined;
  readonly wrong: string[];
  readonly right: string[];
}

/** A project of the given module type with the package installed (a link to this repository). */
function compile(type: keyof typeof PROJECTS): Compiled {
  const dir = join(DIR, type);
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "crossborder-callbacks"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type, private: true }));
  const files = { wrong: join(dir, "wrong.ts"), right: join(dir, "right.ts") };
  writeFileSync(files.wrong, file("wrong"));
  writeFileSync(files.right, file("right"));
  const program = ts.createProgram(Object.values(files), {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: PROJECTS[type].module,
    moduleResolution: PROJECTS[type].resolution,
    target: ts.ScriptTarget.ES2022,
    types: ["node"],
    skipLibCheck: true,
    noEmit: true,
  });
  const diagnostics = (path: string) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(path)).map(describeDiagnostic);
  return {
    declarations: program
      .getSourceFiles()
      .map((source) => source.fileName)
      .find((name) => name.startsWith(join(ROOT, "dist/index.d."))),
    wrong: diagnostics(files.wrong),
    right: diagnostics(files.right),
  };
}

let results: Record<keyof typeof PROJECTS, Compiled>;

beforeAll(() => {
  assertBuilt();
  rmSync(DIR, { recursive: true, force: true });
  results = { commonjs: compile("commonjs"), module: compile("module") };
}, 180_000);

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe.each([
  ["commonjs", "dist/index.d.cts"],
  ["module", "dist/index.d.ts"],
] as const)("a %s project, types from %s", (type, declarations) => {
  it("resolves the package's root to those declarations", () => {
    expect(results[type].declarations).toBe(join(ROOT, declarations));
  });

  it("compiles the file spelt right", () => {
    expect(results[type].right).toStrictEqual([]);
  });

  it("reports each misspelt line once, with the message the sources give", () => {
    const { wrong } = results[type];
    expect(wrong.map((text) => Number(text.split(":")[0]))).toStrictEqual(
      CASES.map((_c, i) => FIRST_LINE + i),
    );
    for (const [i, c] of CASES.entries()) expect(wrong[i]).toContain(c.message);
  });
});

// A CommonJS project whose handlers live in a `.ts` file (typed by dist/index.d.cts) and whose
// server is an `.mts` file (the adapters typed by the .d.ts side), as README's advice for a new
// project leads to: the router from one build must fit the adapter of the other (a brand emitted
// once per build made the two `ParsedBody`s unrelated types).
/**
 * A CommonJS project with the package installed, its files written as given: the diagnostics of
 * those files, once both builds' declarations are seen in the program (the mix is real).
 */
function mixed(name: string, files: Readonly<Record<string, string>>): string[] {
  const dir = join(DIR, name);
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "crossborder-callbacks"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "commonjs", private: true }));
  const paths = Object.entries(files).map(([file, text]) => {
    writeFileSync(join(dir, file), text);
    return join(dir, file);
  });
  const program = ts.createProgram(paths, {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ["node"],
    skipLibCheck: true,
    noEmit: true,
  });
  const seen = program.getSourceFiles().map((source) => source.fileName);
  expect(seen.some((name) => name.startsWith(join(ROOT, "dist/")) && name.endsWith(".d.cts"))).toBe(
    true,
  );
  expect(seen.some((name) => name.startsWith(join(ROOT, "dist/")) && name.endsWith(".d.ts"))).toBe(
    true,
  );
  return paths.flatMap((path) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(path)).map(describeDiagnostic),
  );
}

describe("a CommonJS project mixing .ts (require) and .mts (import) files", () => {
  it("passes a router built in the .ts file to the adapters imported in the .mts file", () => {
    const diagnostics = mixed("mixed", {
      "merchant.ts": [
        'import { createCallbackRouter, createSendOrderToMerchantHandler } from "crossborder-callbacks";',
        "export const router = createCallbackRouter({",
        "  auth: false,",
        '  handlers: { SendOrderToMerchant: (order) => ({ InternalOrderId: "M-" + order.OrderId }) },',
        "});",
        'export const handler = createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {',
        "  auth: false,",
        "});",
      ].join("\n"),
      "server.mts": [
        'import { toNodeListener } from "crossborder-callbacks/node";',
        'import { toFetch } from "crossborder-callbacks/fetch";',
        'import { handler, router } from "./merchant.js";',
        "export const listeners = [toNodeListener(router), toNodeListener(handler)];",
        "export const fetchHandlers = [toFetch(router), toFetch(handler)];",
      ].join("\n"),
    });
    expect(diagnostics).toStrictEqual([]);
  });

  // Found by review (surface-1): the result types were branded by a `unique symbol`, declared once
  // per build, so a result typed by the CommonJS declarations did not fit the ES module factory
  // (TS2375 or TS2322: "Types of property '[refusedFields]' are incompatible").
  it("passes results typed in a .cts file to the factories imported in an .mts file", () => {
    const diagnostics = mixed("mixed-results", {
      "results.cts": [
        'import type { GiftCardTransactionResult, PerformOrderPaymentResult } from "crossborder-callbacks";',
        "export function pay(): PerformOrderPaymentResult {",
        '  return { PaymentAmount: "1.00", PaymentCurrencyCode: "EUR" };',
        "}",
        "export function redeem(): GiftCardTransactionResult {",
        '  return { Balance: "1.00" };',
        "}",
      ].join("\n"),
      "server.mts": [
        "import {",
        "  createCallbackRouter,",
        "  createPerformOrderPaymentHandler,",
        "  createRedeemGiftCardHandler,",
        "  createRefundGiftCardHandler,",
        '} from "crossborder-callbacks";',
        'import { pay, redeem } from "./results.cjs";',
        "export const handlers = [",
        "  createPerformOrderPaymentHandler(() => pay(), { auth: false }),",
        "  createRedeemGiftCardHandler(() => redeem(), { auth: false }),",
        "  createRefundGiftCardHandler(async () => redeem(), { auth: false }),",
        "];",
        "export const router = createCallbackRouter({",
        "  auth: false,",
        "  handlers: { PerformOrderPayment: pay, RedeemGiftCard: redeem },",
        "});",
      ].join("\n"),
    });
    expect(diagnostics).toStrictEqual([]);
  });

  // Second reading (second-surface-1): `CardToCharge`, the mark `hasCardToCharge` narrows to, was
  // still a `unique symbol`: a .cts helper taking the narrowed details refused them from an .mts file.
  it("passes details narrowed by hasCardToCharge in an .mts file to a .cts helper typed CardToCharge", () => {
    const diagnostics = mixed("mixed-card", {
      "card.cts": [
        'import type { CardToCharge, PaymentDetails } from "crossborder-callbacks";',
        "export function charge(details: PaymentDetails & CardToCharge): string {",
        "  return String(details.CardNumber);",
        "}",
      ].join("\n"),
      "server.mts": [
        'import { createPerformOrderPaymentHandler, hasCardToCharge } from "crossborder-callbacks";',
        'import { charge } from "./card.cjs";',
        "export const handler = createPerformOrderPaymentHandler((payment) => {",
        "  if (hasCardToCharge(payment.PaymentDetails)) charge(payment.PaymentDetails);",
        '  return { PaymentAmount: "1.00", PaymentCurrencyCode: "EUR" };',
        "}, { auth: false });",
      ].join("\n"),
    });
    expect(diagnostics).toStrictEqual([]);
  });
  // Review dual-2: `SimulatorState` was a class with `#private` fields in the declarations, so
  // the CommonJS declarations' `ServiceSimulator` and the ES module ones' were unrelated types: a
  // .cts test helper typed `ServiceSimulator` refused the simulator an .mts suite created.
  it("passes a service simulator between a .cts helper and an .mts suite, both ways", () => {
    const diagnostics = mixed("mixed-simulator", {
      "helper.cts": [
        'import { createServiceSimulator, type ServiceSimulator } from "crossborder-callbacks/testing";',
        "export function seeded(simulator: ServiceSimulator): number {",
        "  simulator.state.billingSummaries = 1;",
        '  return simulator.state.findOrder("GE-1001") === undefined ? 0 : simulator.state.orders.size;',
        "}",
        "export const made: Promise<ServiceSimulator> = createServiceSimulator();",
      ].join("\n"),
      "suite.mts": [
        'import { createServiceSimulator, type ServiceSimulator } from "crossborder-callbacks/testing";',
        'import { made, seeded } from "./helper.cjs";',
        "const simulator = await createServiceSimulator();",
        "export const orders = seeded(simulator);",
        "export const theirs: ServiceSimulator = await made;",
        'export const state: ServiceSimulator["state"] = theirs.state;',
      ].join("\n"),
    });
    expect(diagnostics).toStrictEqual([]);
  });
});
