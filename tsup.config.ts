import { defineConfig } from "tsup";

export default defineConfig([
  {
    // One entry per subpath of the exports map: ESM and CommonJS, with declarations.
    entry: {
      index: "src/index.ts",
      express: "src/adapters/express.ts",
      koa: "src/adapters/koa.ts",
      fetch: "src/adapters/fetch.ts",
      node: "src/adapters/node.ts",
      service: "src/service/index.ts",
      testing: "src/testing/index.ts",
      redis: "src/idempotency/redis.ts",
      postgres: "src/idempotency/postgres.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    // No `clean`: the two builds run at the same time, and a clean at the start of one could
    // delete what the other has written. `npm run build` empties dist/ before tsup starts.
    clean: false,
    target: "node20",
    platform: "neutral",
    splitting: true,
    treeshake: true,
    external: ["express", "koa", "redis", "ioredis", "pg"],
  },
  {
    // The bin: one ES module file, no declarations (nothing imports it).
    entry: { cli: "src/cli/index.ts" },
    format: ["esm"],
    dts: false,
    clean: false,
    target: "node20",
    platform: "node",
    splitting: false,
    treeshake: true,
  },
]);
