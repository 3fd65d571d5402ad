/**
 * Whether V8 keeps re-optimising or deoptimising code while a route is served: the HTTP
 * benchmark's node:http server (bench/http-server.ts) run with `--trace-opt --trace-deopt`, its
 * trace written to a file, driven by autocannon on the bare route and the library's route in turn
 * (alternating which goes first), ROUNDS rounds of SECONDS each.
 *
 *   node --import tsx bench/http-jit.ts [express|koa|hono|node]     (default node; ROUNDS=4, SECONDS=2)
 *
 * Prints per run: req/s, the functions optimised (TurboFan jobs completed) and the deoptimisations
 * during it, with the deoptimised functions' names. A route whose code kept deoptimising in steady
 * state would show it in the later rounds. The server serves the build (dist/), built first
 * (BUILD=0 skips it). For bench/ANALYSIS.md; not part of `npm run bench`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { buildPackage } from "./build.js";
import {
  BARE_PATH,
  FRAMEWORKS,
  type Framework,
  LIB_PATH,
  makeSecrets,
  orderWithProducts,
  ROOT,
  secretsEnv,
} from "./shared.js";

const framework = (process.argv[2] ?? "node") as Framework;
if (!FRAMEWORKS.includes(framework)) {
  throw new Error(`usage: bench/http-jit.ts <${FRAMEWORKS.join("|")}>`);
}
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const SECONDS = Number(process.env.SECONDS ?? 2);
if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();
const tracePath = join(tmpdir(), `http-jit-${process.pid}.log`);
const trace = openSync(tracePath, "w");
// The trace goes to the server's stdout, where the port line is too: both to the file.
const child: ChildProcess = spawn(
  process.execPath,
  ["--trace-opt", "--trace-deopt", "--import", "tsx", "bench/http-server.ts", framework],
  {
    cwd: ROOT,
    env: { ...process.env, ...secretsEnv(secrets) },
    stdio: ["pipe", trace, "inherit"],
  },
);
const text = () => readFileSync(tracePath, "utf8");

async function port(): Promise<number> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const found = /\{"port":(\d+)/.exec(text());
    if (found !== null) return Number(found[1]);
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${framework} server did not start`);
}

/** What the trace says between two offsets: optimisations done, deoptimisations and whose. */
function summary(part: string) {
  const optimised = part.match(/^\[completed optimizing /gm)?.length ?? 0;
  const deopts = [...part.matchAll(/^\[bailout \(kind: ([^,]+).*?<JSFunction (\S+)/gm)];
  const names = [...new Set(deopts.map((match) => `${match[2]} (${match[1]})`))];
  return { optimised, deopts: deopts.length, names };
}

try {
  const base = `http://127.0.0.1:${await port()}`;
  const body = Buffer.from(JSON.stringify(orderWithProducts(30)));
  const headers = { authorization: `Bearer ${secrets.token}`, "content-type": "application/json" };
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of round % 2 === 0 ? [BARE_PATH, LIB_PATH] : [LIB_PATH, BARE_PATH]) {
      const from = text().length;
      const result = await autocannon({
        url: base + path,
        method: "POST",
        headers,
        body,
        connections: 10,
        duration: SECONDS,
      });
      if (result.non2xx + result.errors > 0) throw new Error(`${path}: failed requests`);
      const { optimised, deopts, names } = summary(text().slice(from));
      console.log(
        `round ${round + 1} ${(path === BARE_PATH ? "bare" : "library").padEnd(8)}` +
          ` ${String(Math.round(result.requests.total / result.duration)).padStart(6)} req/s` +
          `  optimised ${String(optimised).padStart(3)}  deoptimised ${String(deopts).padStart(3)}` +
          (names.length > 0 ? `: ${names.join(", ")}` : ""),
      );
    }
  }
} finally {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await exited;
  clearTimeout(timer);
  closeSync(trace);
  rmSync(tracePath, { force: true });
}
