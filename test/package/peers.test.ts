// Review ranges-1: the "pg" peer range admitted pg 8.0.0–8.0.2, which never connect on any Node
// this package supports (brianc/node-postgres#2180, fixed in 8.0.3): with one of them, every
// delivery through withIdempotency and the PostgreSQL store waited for the store's timeout and
// was answered 500, so no order was ever received. The range starts where pg works, and the
// README's store table says so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
};
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("peer ranges", () => {
  it("pg starts at 8.0.3, the first 8.x that connects on Node 14 and later", () => {
    expect(pkg.peerDependencies.pg).toBe("^8.0.3");
    const row = readme
      .split("\n")
      .find((line) => line.includes("createPostgresIdempotencyStore(pool,"));
    expect(row).toContain("`pg` (v8.0.3 or later)");
  });
});
