/**
 * The packed tarball installed into new projects outside this repository, one CommonJS (what
 * `npm init -y` writes) and one ES module: every subpath (root, express, koa, fetch, node,
 * service, testing, redis, postgres) loads there by `import` and by `require`, and answers
 * (test/package/smoke.mjs and smoke.cjs), the bin runs, and its declarations type-check there
 * with `skipLibCheck: false` under node16 and nodenext (the compiler of this repository).
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";
import { mustRun, packedTarball, scratchDir, shell, userEnv } from "../support/packed.js";

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

    // review testkit-1: jest's CommonJS mode (ts-jest, babel-jest, NestJS) has no require(esm), and
    // jose 6 is ES-module-only: a CommonJS file that require()d jose made every entry point fail to
    // load there. `--no-experimental-require-module` turns require(esm) off in Node as jest does.
    it("requires every subpath with require(esm) turned off (as jest's CommonJS mode loads it)", async () => {
      const names = SUBPATHS.map((subpath) => `crossborder-callbacks${subpath}`);
      const script = `
        const loaded = {};
        for (const name of ${JSON.stringify(names)}) loaded[name] = Object.keys(require(name)).length;
        console.log(JSON.stringify(loaded));`;
      const run = await shell(
        `node --no-experimental-require-module -e '${script}'`,
        scratch.dir,
        env,
      );
      expect(run.stderr).toBe("");
      const loaded = JSON.parse(run.stdout) as Record<string, number>;
      expect(Object.keys(loaded)).toEqual(names);
      for (const [name, count] of Object.entries(loaded)) expect(count, name).toBeGreaterThan(0);
    });

    it("answers through the installed package (ESM and CommonJS entry points)", async () => {
      expect((await mustRun("node smoke.mjs", scratch.dir, env)).stdout).toContain(
        "smoke: ESM entry points import and answer",
      );
      expect((await mustRun("node smoke.cjs", scratch.dir, env)).stdout).toContain(
        "smoke: CJS entry points require",
      );
    }, 60_000);

    // A declaration the package ships that imports an ES-module-only package (type-fest) is
    // TS1479 in a CommonJS project under node16 (and nodenext before TypeScript 5.8), even though
    // the types themselves resolve; only `skipLibCheck: false` shows it.
    it.each(["node16", "nodenext"])(
      "its types compile with skipLibCheck false under module %s",
      async (module) => {
        writeFileSync(
          join(scratch.dir, "types.ts"),
          [
            'import * as root from "crossborder-callbacks";',
            'import * as fetch from "crossborder-callbacks/fetch";',
            'import type { ServiceClient } from "crossborder-callbacks/service";',
            'import * as testing from "crossborder-callbacks/testing";',
            "export const loaded = [root.createAuth, fetch.toFetch, testing.createServiceSimulator];",
            'export const right: Parameters<ServiceClient["voidParcel"]>[0] = {',
            '  OrderId: "GE-1001",',
            '  ParcelCode: "P-1001-2",',
            "};",
            'export const wrong: Parameters<ServiceClient["voidParcel"]>[0] = {',
            "  // @ts-expect-error a misspelt field is still an error: the types are not any",
            '  OrderID: "GE-1001",',
            '  ParcelCode: "P-1001-2",',
            "};",
            "",
          ].join("\n"),
        );
        const compilerOptions = {
          module,
          moduleResolution: module,
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          types: [],
        };
        writeFileSync(
          join(scratch.dir, "tsconfig.json"),
          JSON.stringify({ compilerOptions, files: ["types.ts"] }),
        );
        const tsc = await shell(`${join(ROOT, "node_modules/.bin/tsc")} -p .`, scratch.dir, env);
        expect(tsc.stdout + tsc.stderr).toBe("");
        expect(tsc.code).toBe(0);
      },
      60_000,
    );

    it("runs the bin", async () => {
      const help = await mustRun("npx crossborder-callbacks --help", scratch.dir, env);
      expect(help.stdout).toMatch(/simulate <callback\|all>[\s\S]*service <operation\|list>/);
      expect(help.stderr).toBe("");
    });
  });
}

// Review deps-1: zod was a dependency (^4.6.7), so a merchant on an older zod got a second copy
// under the package, and composing the exported schemas with their own zod (z.object({ x:
// addressSchema }), z.array) failed to type-check ("'_zod.version.minor' are incompatible"), or
// threw at run time with zod 3. zod is a peer now: next to the merchant's own zod at the peer's
// lower bound there is one copy, and the schemas compose with it.
describe("a project with its own zod at the peer's lower bound", () => {
  const lowest = (
    JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      peerDependencies: Record<string, string>;
    }
  ).peerDependencies.zod?.replace(/^\^/, "");
  let scratch: ReturnType<typeof scratchDir>;
  const env = userEnv({ npm_config_prefer_offline: "true", npm_config_loglevel: "error" });
  beforeAll(async () => {
    scratch = scratchDir("install-zod-peer");
    await mustRun("npm init -y", scratch.dir, env);
    await mustRun("npm pkg set type=module", scratch.dir, env);
    await mustRun(`npm install --omit=dev zod@${lowest} ${tarball}`, scratch.dir, env);
  }, 120_000);
  afterAll(() => scratch?.remove());

  it("installs one zod, the merchant's", async () => {
    const ls = await mustRun("npm ls zod --all --parseable --long", scratch.dir, env);
    const copies = ls.stdout.split("\n").filter((line) => /[/\\]zod:zod@/.test(line));
    expect(copies).toStrictEqual([`${join(scratch.dir, "node_modules/zod")}:zod@${lowest}`]);
  });

  it("composes the exported schemas with the merchant's z, at run time and under tsc", async () => {
    const merchant = [
      'import { z, ZodError } from "zod";',
      'import { addressSchema, type Address } from "crossborder-callbacks";',
      "const Wrapped = z.object({ x: addressSchema });",
      "const Extended = addressSchema.extend({ LoyaltyId: z.string() });",
      "const wrapped: z.infer<typeof Wrapped> = { x: { City: 'Paris' } };",
      "const extended: z.infer<typeof Extended> = { LoyaltyId: 'L1', City: 'Paris' };",
      "const address: Address = extended;",
      "const bad = Wrapped.safeParse({ x: { City: 5 } });",
      "const many = z.array(addressSchema).parse([wrapped.x, address]).length;",
      "console.log(JSON.stringify([Extended.parse(extended), bad.error instanceof ZodError,",
      "  bad.error?.issues[0]?.path, many]));",
      "",
    ].join("\n");
    writeFileSync(join(scratch.dir, "merchant.ts"), merchant);
    writeFileSync(
      join(scratch.dir, "merchant.mjs"),
      merchant.replace(/: z\.infer<[^>]+>|, type Address|: Address/g, ""),
    );
    const run = await mustRun("node merchant.mjs", scratch.dir, env);
    expect(JSON.parse(run.stdout)).toStrictEqual([
      { LoyaltyId: "L1", City: "Paris" },
      true,
      ["x", "City"],
      2,
    ]);
    const compilerOptions = {
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: [],
    };
    writeFileSync(
      join(scratch.dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["merchant.ts"] }),
    );
    const tsc = await shell(`${join(ROOT, "node_modules/.bin/tsc")} -p .`, scratch.dir, env);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
  }, 60_000);
});
