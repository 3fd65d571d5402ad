import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig, type Options } from "tsup";

/** One entry per subpath of the exports map, built as an ES module and as CommonJS. */
const library: Options = {
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
  dts: false,
  // No `clean`: the builds run at the same time, and a clean at the start of one could
  // delete what another has written. `npm run build` empties dist/ before tsup starts.
  clean: false,
  target: "node20",
  platform: "neutral",
  splitting: true,
  treeshake: true,
  external: ["express", "koa", "redis", "ioredis", "pg"],
};

export default defineConfig([
  // The declarations of both formats (.d.ts and .d.cts) from one pass of the type-checker: a
  // declaration build per format was two passes over the same program, the build's longest step.
  { ...library, format: ["esm", "cjs"], dts: { only: true } },
  { ...library, format: ["esm"] },
  {
    ...library,
    format: ["cjs"],
    // jose 6 is an ES module only. The CommonJS build carries its own copy, so that no CommonJS
    // file require()s an ES module: a loader without require(esm) (jest's CommonJS mode, Node
    // with --no-experimental-require-module) loads every entry point (review testkit-1).
    noExternal: ["jose"],
    // jose's MIT licence goes with the copy (review second-kit-1): beside the files, and named
    // at the top of each CommonJS file.
    banner: {
      js: "/*! The CommonJS build of crossborder-callbacks contains jose (https://github.com/panva/jose), MIT licence, (c) Filip Skokan: see dist/jose.LICENSE.md */",
    },
    onSuccess: async () => {
      copyFileSync(join("node_modules", "jose", "LICENSE.md"), join("dist", "jose.LICENSE.md"));
    },
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
