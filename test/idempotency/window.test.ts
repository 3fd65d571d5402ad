import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;

describe("the memory store's window and cost", () => {
  // 30,000 orders, three times the 10,000 the store before this one kept; the README's figures
  // are the bench's default 100,000 (`node --expose-gc --import tsx bench/idempotency-memory.ts`).
  it("still knows the first of 30,000 distinct orders (a repeat does not run again), keeps them in bounded memory, and lets them go when their 24 hours pass", async () => {
    // A fresh process with --expose-gc: heap figures after full collections, nothing else loaded.
    const { stdout } = await run(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "bench/idempotency-memory.ts", "30000"],
      { cwd: ROOT },
    );
    const figures = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(figures).toMatchObject({
      orders: 30_000,
      firstOrderRanAgainAfterAllOrders: false,
      firstOrderRunsAgainAfter24h: true,
    });
    // ~320 bytes a record here (the store it replaces kept ~1,840 bytes an entry).
    expect(figures.bytesPerRecord).toBeLessThan(600);
    expect(figures.heapAfter24hMB - figures.heapBeforeMB).toBeLessThan(3);
  }, 120_000);

  // Review second-soak-1: a key that left the store (released, forgotten, read expired) kept its
  // item in the store's order of ends until its old end came up, uncounted by maxEntries: 100,000
  // released 15-minute leases held 14 MB with maxEntries 1,000, where the store before held none.
  it("keeps nothing of the keys that left it (released, forgotten, read once expired): memory stays within maxEntries records", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "test/idempotency/support/released-memory.mts"],
      { cwd: ROOT },
    );
    const grown = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    // 1,000 live records at ~320 bytes would be 0.3 MB; nothing is live at the end of any.
    for (const scenario of ["released", "sameKey", "forgotten", "readExpired"]) {
      expect(grown[scenario], scenario).toBeLessThan(2);
    }
  }, 120_000);
});
