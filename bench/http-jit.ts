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
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPackage } from "./build.js";
import { alternateRoutes, frameworkArgument, startServer } from "./http.js";
import { makeSecrets } from "./shared.js";

const framework = frameworkArgument("http-jit.ts");
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const SECONDS = Number(process.env.SECONDS ?? 2);
if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();
// The trace goes to the server's standard output, with its port line: both to this file.
const tracePath = join(tmpdir(), `http-jit-${process.pid}.log`);
const server = await startServer(framework, secrets, ["--trace-opt", "--trace-deopt"], tracePath);
const text = () => readFileSync(tracePath, "utf8");

/** What the trace says between two offsets: optimisations done, deoptimisations and whose. */
function summary(part: string) {
  const optimised = part.match(/^\[completed optimizing /gm)?.length ?? 0;
  const deopts = [...part.matchAll(/^\[bailout \(kind: ([^,]+).*?<JSFunction (\S+)/gm)];
  const names = [...new Set(deopts.map((match) => `${match[2]} (${match[1]})`))];
  return { optimised, deopts: deopts.length, names };
}

try {
  await alternateRoutes(server.port, secrets, ROUNDS, SECONDS, async (route, load, round) => {
    const from = text().length;
    const result = await load();
    const { optimised, deopts, names } = summary(text().slice(from));
    console.log(
      `round ${round + 1} ${route.padEnd(8)}` +
        ` ${String(Math.round(result.requests.total / result.duration)).padStart(6)} req/s` +
        `  optimised ${String(optimised).padStart(3)}  deoptimised ${String(deopts).padStart(3)}` +
        (names.length > 0 ? `: ${names.join(", ")}` : ""),
    );
  });
} finally {
  await server.stop();
  rmSync(tracePath, { force: true });
}
