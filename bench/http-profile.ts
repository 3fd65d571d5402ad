/**
 * Where one framework's server spends its CPU under load, route by route: the server of the HTTP
 * benchmark (bench/http-server.ts) runs with `--cpu-prof` while autocannon drives one route.
 *
 *   node --import tsx bench/http-profile.ts node lib     (framework: express|koa|hono|node;
 *   node --import tsx bench/http-profile.ts node bare     route: lib|bare; BUILD=0 skips the build;
 *                                                         ROUTE_PATH=/split/… drives another path
 *                                                         of the server instead, see http-split.ts)
 *
 * Prints the route's requests per second, the server's CPU per request (from the profile: busy
 * time ÷ requests, over the whole profile, warm-up and start included) and the functions with the
 * most self time, as a share of the profile and in µs per request.
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
if (!FRAMEWORKS.includes(framework) || (route !== "lib" && route !== "bare")) {
  throw new Error("usage: bench/http-profile.ts <express|koa|hono|node> <lib|bare>");
}
if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();
const dir = mkdtempSync(join(tmpdir(), "http-profile-"));
const server = await startServer(framework, secrets, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
const { port } = server;
const body = JSON.stringify(orderWithProducts(30));
const load = (seconds: number) =>
  autocannon({
    url: `http://127.0.0.1:${port}${process.env.ROUTE_PATH ?? (route === "lib" ? LIB_PATH : BARE_PATH)}`,
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
  const name = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + time);
}
const requests = warm.requests.total + measured.requests.total;
console.log(
  `${framework} ${route}: ${Math.round(measured.requests.average)} req/s, ${measured.non2xx} non-2xx; ` +
    `server CPU ${((total - idle) / requests).toFixed(0)} µs per request (${requests} requests)`,
);
for (const [name, time] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
  console.log(
    `${((time / total) * 100).toFixed(1).padStart(5)}%  ${(time / requests).toFixed(1).padStart(6)} µs  ${name}`,
  );
}
