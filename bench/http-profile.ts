/**
 * Where one framework's server spends its CPU under load, route by route: the server of the HTTP
 * benchmark (bench/http-server.ts) runs with `--cpu-prof` while autocannon drives one route.
 *
 *   node --import tsx bench/http-profile.ts node lib     (framework: express|koa|hono|node;
 *   node --import tsx bench/http-profile.ts node bare     route: lib|bare|diff; BUILD=0 skips the build;
 *                                                         ROUTE_PATH=/split/… drives another path
 *                                                         of the server instead, see http-split.ts)
 *
 * Prints the route's requests per second, the server's CPU per request (from the profile: busy
 * time ÷ requests, over the whole profile, warm-up and start included) and the functions with the
 * most self time, as a share of the profile and in µs per request. `diff` profiles the bare route
 * (or ROUTE_PATH) and then the library's, and lists per function the library's self time per
 * request minus the bare route's, largest differences first.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { buildPackage } from "./build.js";
import { startServer } from "./http.js";
import {
  BARE_PATH,
  FRAMEWORKS,
  type Framework,
  LIB_PATH,
  makeSecrets,
  orderWithProducts,
} from "./shared.js";

const framework = (process.argv[2] ?? "node") as Framework;
const route = process.argv[3] ?? "lib";
/** How many functions to list (TOP=80 for more). */
const TOP = Number(process.env.TOP ?? 30);
if (!FRAMEWORKS.includes(framework) || !["lib", "bare", "diff"].includes(route)) {
  throw new Error("usage: bench/http-profile.ts <express|koa|hono|node> <lib|bare|diff>");
}
if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}
interface RouteProfile {
  readonly rps: number;
  readonly non2xx: number;
  readonly requests: number;
  /** Busy (not idle) µs of the whole profile. */
  readonly busy: number;
  readonly total: number;
  /** Self time per function (name, file and line), µs over the whole profile. */
  readonly byFunction: ReadonlyMap<string, number>;
}

/** One server run under `--cpu-prof`, driven on `path`: warm-up 2 s, measured 6 s. */
async function profileRoute(path: string): Promise<RouteProfile> {
  const dir = mkdtempSync(join(tmpdir(), "http-profile-"));
  const server = await startServer(framework, secrets, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
  const body = JSON.stringify(orderWithProducts(30));
  const load = (seconds: number) =>
    autocannon({
      url: `http://127.0.0.1:${server.port}${path}`,
      method: "POST",
      connections: 10,
      duration: seconds,
      body,
      headers: { authorization: `Bearer ${secrets.token}`, "content-type": "application/json" },
    });
  const warm = await load(2);
  const measured = await load(6);
  // The profile is written when the process exits.
  await server.stop();
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no profile written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const timeById = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    timeById.set(id, (timeById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const time = timeById.get(node.id) ?? 0;
    total += time;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") idle += time;
    // The bundle's chunk names change with every build: "chunk" alone, so two builds compare.
    const file = url
      .split("/")
      .slice(-2)
      .join("/")
      .replace(/chunk-[\w-]+\.js/, "chunk.js");
    const name = `${functionName || "(anonymous)"} ${file}:${lineNumber}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + time);
  }
  return {
    rps: measured.requests.average,
    non2xx: measured.non2xx,
    requests: warm.requests.total + measured.requests.total,
    busy: total - idle,
    total,
    byFunction,
  };
}

function perRequest(profile: RouteProfile, name: string): number {
  return (profile.byFunction.get(name) ?? 0) / profile.requests;
}

function headline(label: string, profile: RouteProfile): string {
  return (
    `${framework} ${label}: ${Math.round(profile.rps)} req/s, ${profile.non2xx} non-2xx; ` +
    `server CPU ${(profile.busy / profile.requests).toFixed(0)} µs per request (${profile.requests} requests)`
  );
}

if (route === "diff") {
  // Both routes, one server run each (bare first), and per function the self time per request
  // of the library's route minus the bare route's: where the library's extra CPU goes.
  const bare = await profileRoute(process.env.ROUTE_PATH ?? BARE_PATH);
  const lib = await profileRoute(LIB_PATH);
  console.log(headline("bare", bare));
  console.log(headline("lib", lib));
  const names = new Set([...bare.byFunction.keys(), ...lib.byFunction.keys()]);
  const rows = [...names]
    .filter((name) => !name.startsWith("(idle)"))
    .map((name) => ({ name, lib: perRequest(lib, name), bare: perRequest(bare, name) }))
    .sort((a, b) => Math.abs(b.lib - b.bare) - Math.abs(a.lib - a.bare));
  console.log("    lib     bare     diff  µs per request");
  for (const row of rows.slice(0, TOP)) {
    console.log(
      `${row.lib.toFixed(1).padStart(7)}  ${row.bare.toFixed(1).padStart(7)}  ${(row.lib - row.bare >= 0 ? "+" : "") + (row.lib - row.bare).toFixed(1).padStart(6)}  ${row.name}`,
    );
  }
  // The library's own functions (its bundle in dist/), whatever their rank.
  const own = rows.filter((row) => row.name.includes(" dist/"));
  const sum = own.reduce((total, row) => total + row.lib, 0);
  console.log(`library's own functions (dist/): ${sum.toFixed(1)} µs per request of self time`);
} else {
  const path = process.env.ROUTE_PATH ?? (route === "lib" ? LIB_PATH : BARE_PATH);
  const profile = await profileRoute(path);
  console.log(headline(route, profile));
  const rows = [...profile.byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [name, time] of rows) {
    console.log(
      `${((time / profile.total) * 100).toFixed(1).padStart(5)}%  ${(time / profile.requests).toFixed(1).padStart(6)} µs  ${name}`,
    );
  }
}
