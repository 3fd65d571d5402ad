/**
 * 4. Bundle size: the Worker entries bundled and minified with esbuild (platform browser, format
 * esm, the conditions wrangler uses for Workers), gzipped with node:zlib at its default level.
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import { ENTRY_FILES } from "./entries.js";
import { PKG_DIR } from "./shared.js";

export const ESBUILD_OPTIONS = {
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  conditions: ["workerd", "worker", "browser"],
  target: "es2022",
} as const;

export interface BundleStats {
  readonly bytes: number;
  readonly gzipBytes: number;
  /** The largest inputs by bytes in the minified output (package-level). */
  readonly top: readonly { readonly input: string; readonly bytes: number }[];
}

export interface BundleResult {
  readonly library: BundleStats;
  readonly baseline: BundleStats;
  readonly ratio: number;
}

function topInputs(metafile: Metafile): { input: string; bytes: number }[] {
  const byPackage = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match
        ? (match[1] as string)
        : input.startsWith("dist/")
          ? "crossborder-callbacks (dist)"
          : input;
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...byPackage]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5);
}

async function bundle(entry: string): Promise<BundleStats> {
  const result = await build({
    ...ESBUILD_OPTIONS,
    conditions: [...ESBUILD_OPTIONS.conditions],
    entryPoints: [join(PKG_DIR, entry)],
    absWorkingDir: PKG_DIR,
    write: false,
    metafile: true,
    logLevel: "error",
  });
  const inputs = Object.keys(result.metafile.inputs);
  if (inputs.some((input) => input.includes("src/"))) {
    throw new Error(`${entry}: bundled the sources instead of the build`);
  }
  const code = (result.outputFiles[0] as { contents: Uint8Array }).contents;
  return {
    bytes: code.byteLength,
    gzipBytes: gzipSync(code).byteLength,
    top: topInputs(result.metafile),
  };
}

export async function runBundle(): Promise<BundleResult> {
  const library = await bundle(ENTRY_FILES.workerLibrary);
  const baseline = await bundle(ENTRY_FILES.workerBaseline);
  return { library, baseline, ratio: library.gzipBytes / baseline.gzipBytes };
}
