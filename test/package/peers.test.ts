// Review ranges-1: the "pg" peer range admitted pg 8.0.0–8.0.2, which never connect on any Node
// this package supports (brianc/node-postgres#2180, fixed in 8.0.3): with one of them, every
// delivery through withIdempotency and the PostgreSQL store waited for the store's timeout and
// was answered 500, so no order was ever received. The range starts where pg works, and the
// README's store table says so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";

// Review deps-4: the optional peers started above versions that work (ioredis 4.31 passes the
// store conformance against a real Redis; Koa 2.0/2.12 and Express 4.0/4.16 answer through the
// adapters, which import neither), and npm refuses such an install (ERESOLVE), not just warns.

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
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

  it("express, koa and ioredis admit every major that works, as the README lists them", () => {
    expect(pkg.peerDependencies).toMatchObject({
      express: "^4.0.0 || ^5.0.0",
      koa: "^2.0.0 || ^3.0.0",
      ioredis: "^4.0.0 || ^5.0.0 || ^6.0.0",
      redis: "^4.0.0 || ^5.0.0 || ^6.0.0",
    });
    expect(readme).toContain("Adapters: Express 4/5, Koa 2/3");
    expect(readme).toContain("`redis` (v4, v5, v6) or `ioredis` (v4, v5, v6)");
    expect(readme.replace(/\s+/g, " ")).toContain(
      "Express (4, 5), Koa (2, 3), `redis` (4 to 6), `ioredis` (4 to 6) and `pg` (8.0.3 or later) are optional peer dependencies",
    );
  });

  // Review deps-1: zod was a dependency, so a merchant's own zod made a second copy and the
  // exported schemas did not compose with it (test/package/install.test.ts installs it).
  it("zod is a required peer from 4.5 (the lowest whose checks agree), a devDependency here", () => {
    expect(pkg.dependencies.zod).toBeUndefined();
    expect(pkg.peerDependencies.zod).toBe("^4.5.0");
    expect(pkg.peerDependenciesMeta.zod).toBeUndefined();
    expect(pkg.devDependencies.zod).toBe("^4.6.7");
    expect(readme).toContain("zod (4.5 or later) is a peer dependency");
    expect(readme).toContain("(`yarn add zod`)");
  });
});
