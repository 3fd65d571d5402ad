// README "Callbacks out of order" and the simulator's advice for UpdateOrderStatus say what the
// spec says of retries (review second-seq-5): 001 §4.3 "No automatic retries; a manual retry is
// done by the operator's support team", §6 "Retry behaviour of the other callbacks: not shown".
// No automatic redelivery of SendOrderToMerchant, no "never sent again". Also its advice on the
// answer to an order cancelled before it arrived (second-seq-6) and on retention (second-seq-7).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const section = /### Callbacks out of order\n([\s\S]*?)\n### /.exec(readme)?.[1] ?? "";
const prose = section.replace(/\s+/g, " ");
const simulate = readFileSync(join(ROOT, "src/cli/simulate.ts"), "utf8");

describe('README "Callbacks out of order" (review second-seq-5, -6, -7)', () => {
  it("is found", () => {
    expect(section.length).toBeGreaterThan(500);
  });

  it("claims no automatic redelivery of SendOrderToMerchant, and no refusal as final", () => {
    expect(prose).not.toMatch(/is sent again later/);
    expect(prose).not.toMatch(/ORDER_NOT_FOUND`\) is final/);
    expect(prose).not.toMatch(/never sent again/);
    // What the spec says, with its sections.
    expect(prose).toMatch(/no automatic retries/i);
    expect(prose).toContain("001 §4.3");
    expect(prose).toContain("§6");
    expect(prose).toMatch(/manual retry/);
  });

  it("says how to answer an order cancelled before it arrived", () => {
    expect(prose).toMatch(/`PaymentAmount` `0`/);
  });

  it("says how long to keep statuses for orders not arrived yet", () => {
    expect(prose).toMatch(/drop|expire/);
    expect(prose).toMatch(/1,000|1000/);
  });

  it("says a cancellation stays one whatever arrives after it", () => {
    expect(prose).toMatch(/cancellation is final/);
  });
});

describe("the simulator's advice for UpdateOrderStatus (review second-seq-5)", () => {
  it('does not say a refused status is "never sent again"', () => {
    expect(simulate).not.toContain("never sent again");
    expect(simulate).toMatch(/no automatic retries.*001 §4\.3/);
  });
});
