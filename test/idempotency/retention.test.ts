/**
 * Card data is never kept on any path: once a delivery is answered, its PaymentDetails (card number,
 * CVV) is unreachable, even while withIdempotency retries a record the store refused in the
 * background. Checked with a WeakRef and `gc()` in a child process (`--expose-gc`).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";

describe("withIdempotency keeps no card data after the answer", () => {
  it("lets the delivery's PaymentDetails go, whether its record was written or is retried in the background", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--import", "tsx", join(ROOT, "test/idempotency/support/retained-card.mts")],
      { cwd: ROOT, timeout: 30_000 },
    );
    const reachable = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    // The first proves the check sees a release; the second is the background retry's path.
    expect(reachable).toEqual({ written: false, unwritten: false });
  });
});
