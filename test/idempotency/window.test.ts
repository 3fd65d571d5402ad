import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;

describe("the memory store's window and cost", () => {
  it("still knows the first of 100,000 distinct orders (a repeat does not run again), keeps them in bounded memory, and lets them go when their 24 hours pass", async () => {
    // A fresh process with --expose-gc: heap figures after full collections, nothing else loaded.
    const { stdout } = await run(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "bench/idempotency-memory.ts", "100000"],
      { cwd: ROOT },
    );
    const figures = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(figures).toMatchObject({
      orders: 100_000,
      firstOrderRanAgainAfterAllOrders: false,
      firstOrderRunsAgainAfter24h: true,
    });
    // ~320 bytes a record here (the store it replaces kept ~1,840 bytes an entry).
    expect(figures.bytesPerRecord).toBeLessThan(600);
    expect(figures.heapAfter24hMB - figures.heapBeforeMB).toBeLessThan(3);
  }, 120_000);
});
