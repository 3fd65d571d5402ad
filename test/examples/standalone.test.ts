/**
 * Every example is a project of its own: copied to a temporary directory outside this repository,
 * its package.json pointed at the packed tarball (the one change; everything else it depends on
 * comes from the npm registry), then its README's commands run there as written — `npm install`,
 * `npx crossborder-callbacks keys`, the start line (with a free port for 3000) — and the README's
 * `simulate` line must report all fourteen callbacks passed. Next.js runs as a real `next` server
 * (build, then start). The Worker runs in workerd (Miniflare) from a bundle of the copy, as
 * `wrangler dev` does: wrangler itself is not installed here (see the note in the README).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COPIES, SOURCE, staleCopies } from "../../scripts/sync-examples.js";
import { bundle, ROOT, removeBundle } from "../adapters/support/runtime.js";
import {
  background,
  commandsBetween,
  copyFolder,
  freePort,
  mustRun,
  packedTarball,
  scratchDir,
  userEnv,
  waitForHttp,
} from "../support/packed.js";
import { assertBuilt } from "./support/flow.js";

const EXAMPLES = ["express", "koa", "hono", "bun", "deno", "next-app-router", "cloudflare-worker"];

let tarball: string;
beforeAll(() => {
  assertBuilt();
  tarball = packedTarball();
});

describe("the examples' copies of the merchant code", () => {
  it(`are each the same as ${SOURCE} (npm run sync-examples writes them)`, () => {
    expect(COPIES).toHaveLength(EXAMPLES.length - 1);
    expect(staleCopies()).toEqual([]);
  });

  it("import nothing from outside their own folder", () => {
    const sources = [
      "express/server.ts",
      "express/app.ts",
      "koa/server.ts",
      "hono/server.ts",
      "bun/server.ts",
      "deno/main.ts",
      "cloudflare-worker/src/index.ts",
      "next-app-router/app/crossborder/[callback]/route.ts",
    ];
    for (const file of sources) {
      const text = readFileSync(join(ROOT, "examples", file), "utf8");
      expect(text, file).not.toMatch(/from "\.\.\/(\.\.\/)*shared/);
      expect(text, file).not.toMatch(/from "\.\.\/\.\.\/\.\.\/\.\.\//);
    }
  });
});

/** The example's package.json, its crossborder-callbacks taken from the tarball. */
function pointAtTarball(dir: string): void {
  const path = join(dir, "package.json");
  const pkg = JSON.parse(readFileSync(path, "utf8"));
  expect(pkg.dependencies["crossborder-callbacks"]).toMatch(/^\^0\./);
  pkg.dependencies["crossborder-callbacks"] = `file:${tarball}`;
  writeFileSync(path, `${JSON.stringify(pkg, null, 2)}\n`);
}

/** The example's own files in its copy (not package.json, which points at the tarball) and their text. */
function shippedFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path);
    if (!entry.isFile() || /^(node_modules|\.next|keys)\//.test(name)) continue;
    if (name === "package.json") continue;
    files[name] = readFileSync(path, "utf8");
  }
  return files;
}

const INSTALL_ENV = { npm_config_prefer_offline: "true", npm_config_loglevel: "error" };

for (const example of EXAMPLES) {
  describe(`examples/${example}, copied outside the repository`, () => {
    const readme = readFileSync(join(ROOT, "examples", example, "README.md"), "utf8");
    const run = commandsBetween(readme, "run");
    const [simulateLine] = commandsBetween(readme, "simulate");
    let scratch: ReturnType<typeof scratchDir>;
    const stops: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const stop of stops) await stop();
      scratch?.remove();
    });

    it("its README's commands start a server that `simulate all` passes; a second run is refused its cart, as the README says", async () => {
      scratch = scratchDir(`example-${example}`);
      const dir = join(scratch.dir, example);
      copyFolder(`examples/${example}`, dir);
      const shipped = shippedFiles(dir);
      pointAtTarball(dir);
      // Bun and Deno are not npm dependencies of their examples: the README says to install the
      // runtime, so the test has it, and only it, on the PATH (as a user who followed the README).
      const runtime = example === "bun" || example === "deno" ? example : undefined;
      if (runtime) {
        expect(readme).toMatch(
          runtime === "bun"
            ? /You need \[Bun\]\(https:\/\/bun\.sh\) 1\.4\.5 or later/
            : /You need \[Deno\]\(https:\/\/deno\.com\) 2\.9\.6 or later/,
        );
      }
      const env = userEnv(INSTALL_ENV, runtime ? [runtime] : []);
      const port = await freePort();
      expect(run[0]).toBe("npm install");
      expect(run[1]).toBe("npx crossborder-callbacks keys --out keys");
      expect(simulateLine).toContain("--url http://127.0.0.1:3000/crossborder");
      // The Worker's dev server is wrangler's; its dependencies here are the runtime's only.
      await mustRun(
        example === "cloudflare-worker" ? "npm install --omit=dev" : (run[0] ?? ""),
        dir,
        env,
      );
      await mustRun(run[1] ?? "", dir, env);
      if (example === "bun") {
        // The README's tsconfig.json and @types/bun: `Bun` is known to the type-checker (this
        // repository's tsc, which the example does not install).
        await mustRun(`${join(ROOT, "node_modules/.bin/tsc")} --noEmit -p .`, dir, env);
      }
      for (const line of run.slice(2, -1)) await mustRun(line, dir, env, 400_000);
      const start = (run.at(-1) ?? "").replaceAll("3000", String(port));

      let base = `http://127.0.0.1:${port}`;
      /** What the server has printed (the worker's console included). */
      let output: () => string;
      if (example === "cloudflare-worker") {
        expect(start).toMatch(
          /^npx wrangler dev --port \d+ --var "SERVICE_PUBLIC_KEY:\$\(cat keys\/service-test-public\.pem\)" --var MERCHANT_GUID:/,
        );
        // What `wrangler dev` does: bundle src/index.ts (resolving the package from this folder's
        // node_modules) and run it in workerd with the vars.
        const script = await bundle(join(dir, "src/index.ts"));
        const workerLog: string[] = [];
        const mf = new Miniflare({
          modules: true,
          scriptPath: script,
          modulesRoot: dirname(script),
          compatibilityDate: "2025-09-01",
          bindings: {
            SERVICE_PUBLIC_KEY: readFileSync(join(dir, "keys/service-test-public.pem"), "utf8"),
            SERVICE_ENVIRONMENT: "test",
            MERCHANT_GUID: /MERCHANT_GUID:(\S+)/.exec(start)?.[1] ?? "",
          },
          host: "127.0.0.1",
          port,
          // The worker's console, kept for the test rather than printed.
          handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
            for (const stream of [stdout, stderr]) {
              stream.on("data", (chunk: Buffer) => workerLog.push(chunk.toString("utf8")));
            }
          },
        });
        output = () => workerLog.join("");
        stops.push(async () => {
          await mf.dispose();
          removeBundle(script);
        });
        base = (await mf.ready).origin;
      } else {
        const server = background(start, dir, env);
        stops.push(() => server.stop());
        output = () => server.output();
        await waitForHttp(`${base}/crossborder/nope`, server, 120_000);
      }

      const simulate = simulateLine?.replace("http://127.0.0.1:3000", base) ?? "";
      const result = await mustRun(simulate, dir, env).catch((error: Error) => error);
      if (result instanceof Error) throw result;
      expect(result.stdout).toContain("14 of 14 passed.");
      expect(result.stdout).not.toContain("warning:");
      expect(result.stderr).toBe("");

      // The run placed an order that took the demo cart out, as the README says before anyone
      // runs the line twice: the second run reports the refusal (exit 1) and names it.
      expect(readme).toMatch(/second run[\s\S]*`CART_NOT_FOUND`[\s\S]*restart the server/i);
      await expect(mustRun(simulate, dir, env)).rejects.toThrow(
        /exited 1[\s\S]*GetCheckoutCartInfo[\s\S]*CART_NOT_FOUND[\s\S]*1 of 14 failed/,
      );
      await expect
        .poll(output)
        .toContain("GetCheckoutCartInfo 200 handler_failure: CART_NOT_FOUND: Unknown cart");

      // Review copy COPY-4: `next build` rewrote the shipped tsconfig.json. What the README's
      // commands ran (install, keys, build, start, simulate) leaves the shipped files as they were
      // (files they add, such as next-env.d.ts or a lock file, are the user's).
      const after = shippedFiles(dir);
      expect(Object.fromEntries(Object.keys(shipped).map((name) => [name, after[name]]))).toEqual(
        shipped,
      );
    }, 600_000);
  });
}
