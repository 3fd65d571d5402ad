/**
 * How much of a route's server CPU is garbage collection: the HTTP benchmark's server for one
 * framework (bench/http-server.ts, which counts its GC pauses with a PerformanceObserver), driven
 * by autocannon on the bare route and the library's route in turn (alternating which goes first),
 * ROUNDS rounds of SECONDS each.
 *
 *   node --import tsx bench/http-gc.ts [express|koa|hono|node]     (default node; ROUNDS=6, SECONDS=2)
 *
 * Prints per run: req/s, the server's CPU per request, GC pause time per request and collections
 * per 1,000 requests. The server serves the build (dist/), built first (BUILD=0 skips it). For
 * bench/ANALYSIS.md; not part of `npm run bench`.
 */
import { buildPackage } from "./build.js";
import { alternateRoutes, frameworkArgument, startServer } from "./http.js";
import { makeSecrets } from "./shared.js";

const framework = frameworkArgument("http-gc.ts");
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const SECONDS = Number(process.env.SECONDS ?? 2);
if (process.env.BUILD !== "0") await buildPackage();
process.env.BENCH_GC = "1"; // the server counts its GC pauses (its environment is ours)
const secrets = await makeSecrets();
const server = await startServer(framework, secrets);
try {
  await alternateRoutes(server.port, secrets, ROUNDS, SECONDS, async (route, load) => {
    const cpu0 = await server.cpuUs();
    const gc0 = await server.gc();
    const result = await load();
    const cpu1 = await server.cpuUs();
    const gc1 = await server.gc();
    const n = result.requests.total;
    console.log(
      `${route.padEnd(8)} ${String(Math.round(n / result.duration)).padStart(6)} req/s` +
        `  cpu ${((cpu1 - cpu0) / n).toFixed(1).padStart(6)} µs/req` +
        `  gc ${((gc1.gcUs - gc0.gcUs) / n).toFixed(2).padStart(5)} µs/req` +
        `  ${(((gc1.gcCount - gc0.gcCount) * 1000) / n).toFixed(2)} collections / 1000 req`,
    );
  });
} finally {
  await server.stop();
}
