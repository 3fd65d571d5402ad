// The package root exports a factory per callback in both module formats, and the README's
// callback table lists each with its factory: dist/ as a user loads it (npm test builds first).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CALLBACK_NAMES } from "../../src/index.js";
import { ROOT } from "../adapters/support/runtime.js";
import { assertBuilt } from "../examples/support/flow.js";

const FACTORIES = CALLBACK_NAMES.map((name) => `create${name}Handler`);

beforeAll(() => assertBuilt());

describe("a factory per callback", () => {
  it("fourteen callbacks", () => {
    expect(CALLBACK_NAMES).toHaveLength(14);
  });

  it("from the ESM build", async () => {
    const esm = (await import(pathToFileURL(join(ROOT, "dist/index.js")).href)) as Record<
      string,
      unknown
    >;
    for (const factory of FACTORIES) expect(typeof esm[factory], factory).toBe("function");
    expect(esm.CALLBACK_NAMES).toStrictEqual(CALLBACK_NAMES);
  });

  it("from the CommonJS build", () => {
    const cjs = createRequire(import.meta.url)(join(ROOT, "dist/index.cjs")) as Record<
      string,
      unknown
    >;
    for (const factory of FACTORIES) expect(typeof cjs[factory], factory).toBe("function");
  });

  it("in the README's callback table", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const [i, name] of CALLBACK_NAMES.entries()) {
      expect(readme).toMatch(new RegExp(`^\\| ${name} \\| \`${FACTORIES[i]}\` \\|`, "m"));
    }
  });
});

// Found by review (newcomer-1): `npm pack` shipped whatever dist/ was last built (one built before
// the latest card-masking fixes leaked card digits). Packing or publishing builds it first.
describe("the tarball is built from the sources it ships with", () => {
  it("npm pack and npm publish run the build first (prepack)", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.prepack).toBe("npm run build");
    expect(manifest.scripts.build).toMatch(/rmSync\('dist'.*&& tsup$/);
  });
});

// Found by review (second-kit-1): the CommonJS build carries jose's code (jose 6 is an ES module
// only: review testkit-1), and jose's MIT licence asks that its notice go with every copy.
describe("the copy of jose in the CommonJS build comes with its licence", () => {
  it("dist/ holds jose's LICENSE.md as jose ships it, and no CommonJS file requires jose", () => {
    const licence = readFileSync(join(ROOT, "node_modules/jose/LICENSE.md"), "utf8");
    expect(licence).toContain("Permission is hereby granted");
    expect(readFileSync(join(ROOT, "dist/jose.LICENSE.md"), "utf8")).toBe(licence);
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      files: string[];
    };
    expect(manifest.files).toContain("dist");
    const cjs = readFileSync(join(ROOT, "dist/index.cjs"), "utf8");
    expect(cjs).not.toMatch(/require\(["']jose["']\)/);
    expect(cjs).toContain("dist/jose.LICENSE.md");
  });
});
