/**
 * The packed tarball installed into new projects outside this repository, one CommonJS (what
 * `npm init -y` writes) and one ES module: every subpath (root, express, koa, fetch, node,
 * service, testing, redis, postgres) loads there by `import` and by `require`, and answers
 * (test/package/smoke.mjs and smoke.cjs), and the bin runs.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";
import { mustRun, packedTarball, scratchDir, userEnv } from "../support/packed.js";

const SUBPATHS = [
  "",
  "/express",
  "/koa",
  "/fetch",
  "/node",
  "/service",
  "/testing",
  "/redis",
  "/postgres",
];
const exportsMap = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<
  string,
  unknown
>;

let tarball: string;
beforeAll(() => {
  assertBuilt();
  tarball = packedTarball();
});

it("names every subpath of the exports map", () => {
  expect(Object.keys(exportsMap).filter((key) => key !== "./package.json")).toEqual(
    SUBPATHS.map((subpath) => `.${subpath}`),
  );
});

for (const type of ["commonjs", "module"] as const) {
  describe(`a new "type": "${type}" project with the tarball installed`, () => {
    let scratch: ReturnType<typeof scratchDir>;
    const env = userEnv({ npm_config_prefer_offline: "true", npm_config_loglevel: "error" });
    beforeAll(async () => {
      scratch = scratchDir(`install-${type}`);
      await mustRun("npm init -y", scratch.dir, env);
      await mustRun(`npm pkg set type=${type}`, scratch.dir, env);
      await mustRun(`npm install --omit=dev ${tarball}`, scratch.dir, env);
      for (const file of ["smoke.mjs", "smoke.cjs"]) {
        copyFileSync(join(ROOT, "test/package", file), join(scratch.dir, file));
      }
    }, 120_000);
    afterAll(() => scratch?.remove());

    it("imports and requires every subpath", async () => {
      const names = SUBPATHS.map((subpath) => `crossborder-callbacks${subpath}`);
      const script = `
        const { createRequire } = await import("node:module");
        const require = createRequire(process.cwd() + "/");
        const loaded = {};
        for (const name of ${JSON.stringify(names)}) {
          const esm = await import(name);
          const cjs = require(name);
          loaded[name] = [Object.keys(esm).length, Object.keys(cjs).length];
        }
        console.log(JSON.stringify(loaded));`;
      const run = await mustRun(`node --input-type=module -e '${script}'`, scratch.dir, env);
      const loaded = JSON.parse(run.stdout) as Record<string, [number, number]>;
      expect(Object.keys(loaded)).toEqual(names);
      for (const [name, [esm, cjs]] of Object.entries(loaded)) {
        expect(esm, name).toBeGreaterThan(0);
        expect(cjs, name).toBe(esm);
      }
    });

    it("answers through the installed package (ESM and CommonJS entry points)", async () => {
      expect((await mustRun("node smoke.mjs", scratch.dir, env)).stdout).toContain(
        "smoke: ESM entry points import and answer",
      );
      expect((await mustRun("node smoke.cjs", scratch.dir, env)).stdout).toContain(
        "smoke: CJS entry points require",
      );
    }, 60_000);

    it("runs the bin", async () => {
      const help = await mustRun("npx crossborder-callbacks --help", scratch.dir, env);
      expect(help.stdout).toMatch(/simulate <callback\|all>[\s\S]*service <operation\|list>/);
      expect(help.stderr).toBe("");
    });
  });
}
