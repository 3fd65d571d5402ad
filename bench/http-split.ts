/**
 * Where the library's cost over HTTP goes, on node:http: the server of the HTTP benchmark
 * (bench/http-server.ts) and autocannon, as there, against six routes of the same process in
 * alternating 1 s runs (ROUNDS of them, 6 by default; each round's order reversed from the last):
 * - bare: the floor (read the body, `jwtVerify`, JSON.parse, JSON.stringify);
 * - verify first: the same, verifying before reading the body (the library's order);
 * - library auth: the floor with the library's `createAuth` instead of `jwtVerify`;
 * - no auth: the floor's `jwtVerify`, then the library's router with a handler built with
 *   `auth: false`, through `toNodeListener`;
 * - handler bytes: the floor's `jwtVerify` and body reading, then that handler's `handle` on the
 *   bytes, its answer written with `writeHead` and `end` (no adapter, no router);
 * - library: the library's router, as in the benchmark.
 *
 *   node --import tsx bench/http-split.ts          (BUILD=0 skips the build)
 *
 * Prints each route's mean req/s over the rounds and its ratio to the bare route, the main
 * thread's time per request each route adds to the bare route's (1 / req/s, the server being the
 * bottleneck), and the server process's CPU time per request (every thread: the RSA work in
 * libuv's pool too) with its difference from the bare route's. For the analysis in
 * bench/ANALYSIS.md; not part of `npm run bench`.
 */
import autocannon from "autocannon";
import { buildPackage } from "./build.js";
import { startServer } from "./http.js";
import { BARE_PATH, LIB_PATH, makeSecrets, orderWithProducts, SPLIT_PATHS } from "./shared.js";

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const ROUTES: readonly (readonly [string, string])[] = [
  ["bare", BARE_PATH],
  ["verify first", SPLIT_PATHS.verifyFirst],
  ["library auth", SPLIT_PATHS.libraryAuth],
  ["no auth", SPLIT_PATHS.noAuth],
  ["handler bytes", SPLIT_PATHS.handlerBytes],
  ["library", LIB_PATH],
];

if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();
const server = await startServer("node", secrets);
const { port } = server;
const body = JSON.stringify(orderWithProducts(30));

const cpu = new Map<string, number[]>();
async function rate(path: string, seconds: number): Promise<number> {
  const before = await server.cpuUs();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: "POST",
    connections: 10,
    duration: seconds,
    body,
    headers: { authorization: `Bearer ${secrets.token}`, "content-type": "application/json" },
  });
  if (result.non2xx > 0) throw new Error(`${path}: ${result.non2xx} answers were not 2xx`);
  const used = (await server.cpuUs()) - before;
  cpu.set(path, [...(cpu.get(path) ?? []), used / result.requests.total]);
  return result.requests.average;
}

for (const [, path] of ROUTES) await rate(path, 1);
cpu.clear();
const rates = new Map<string, number[]>(ROUTES.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, path] of round % 2 === 0 ? ROUTES : [...ROUTES].reverse()) {
    rates.get(name)?.push(await rate(path, 1));
  }
}
await server.stop();

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const bare = mean(rates.get("bare") ?? []);
const bareCpu = mean(cpu.get(BARE_PATH) ?? []);
console.log(
  `node:http, 30-product order, 10 connections, ${ROUNDS} alternating 1 s runs per route`,
);
const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
for (const [name, path] of ROUTES) {
  const values = rates.get(name) ?? [];
  const rps = mean(values);
  const added = 1e6 / rps - 1e6 / bare;
  const serverCpuUs = mean(cpu.get(path) ?? []);
  console.log(
    `${name.padEnd(14)} ${Math.round(rps).toString().padStart(6)} req/s  ${(rps / bare).toFixed(2)}x  ` +
      `${signed(added)} µs per request; server CPU ${serverCpuUs.toFixed(1)} µs per request ` +
      `(${signed(serverCpuUs - bareCpu)})  (${values.map(Math.round).join(" ")})`,
  );
}
