/**
 * Builds the package with the project's own tsup configuration into bench/.tmp/pkg/dist (declaration
 * files left out), so the benchmarks run the built JavaScript users run, without touching dist/
 * while other work may be reading it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build, type Options } from "tsup";
import config from "../tsup.config.js";
import { PKG_DIR, PKG_DIST, ROOT } from "./shared.js";

export async function buildPackage(): Promise<void> {
  mkdirSync(PKG_DIR, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  // The same name, type and exports map, so the build resolves as the published package does.
  const { name, version, type, exports, sideEffects } = manifest;
  writeFileSync(
    join(PKG_DIR, "package.json"),
    `${JSON.stringify({ name, version, type, sideEffects, exports }, null, 2)}\n`,
  );
  // tsup.config.ts is a list (the library, then the CLI bin): the benchmarks need the library's
  // entries only. Each entry is built as configured, declarations left out.
  const configs = (Array.isArray(config) ? config : [config]) as Options[];
  const library = configs.find((c) => {
    const entry = c.entry as Record<string, string> | undefined;
    return entry !== undefined && !Array.isArray(entry) && "index" in entry;
  });
  if (!library) throw new Error("tsup.config.ts has no configuration with an `index` entry");
  rmSync(PKG_DIST, { recursive: true, force: true });
  await build({ ...library, config: false, outDir: PKG_DIST, dts: false, silent: true });
}

if (import.meta.url === `file://${process.argv[1]}`) await buildPackage();
