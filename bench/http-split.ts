/**
 * Where the library's cost over HTTP goes, on node:http: the server of the HTTP benchmark
 * (bench/http-server.ts) and autocannon, as there, against five routes of the same process in
 * alternating 1 s runs (ROUNDS of them, 6 by default; each round's order reversed from the last):
 * - bare: the floor (read the body, `jwtVerify`, JSON.parse, JSON.stringify);
 * - verify first: the same, verifying before reading the body (the library's order);
 * - library auth: the floor with the library's `createAuth` instead of `jwtVerify`;
 * - no auth: the floor's `jwtVerify`, then the library's handler built with `auth: false`;
 * - library: the library's router, as in the benchmark.
 *
 *   node --import tsx bench/http-split.ts          (BUILD=0 skips the build)
 *
 * Prints each route's mean req/s over the rounds and its ratio to the bare route, and the main
 * thread's time per request each route adds to the bare route's (1 / req/s, the server being the
 * bottleneck). For the analysis in bench/ANALYSIS.md; not part of `npm run bench`.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { buildPackage } from "./build.js";
import {
  BARE_PATH,
  LIB_PATH,
  makeSecrets,
  orderWithProducts,
  ROOT,
  SPLIT_PATHS,
  secretsEnv,
} from "./shared.js";

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const ROUTES: readonly (readonly [string, string])[] = [
  ["bare", BARE_PATH],
  ["verify first", SPLIT_PATHS.verifyFirst],
  ["library auth", SPLIT_PATHS.libraryAuth],
  ["no auth", SPLIT_PATHS.noAuth],
  ["library", LIB_PATH],
];

if (process.env.BUILD !== "0") await buildPackage();
const secrets = await makeSecrets();
const server = spawn(process.execPath, ["--import", "tsx", "bench/http-server.ts", "node"], {
  cwd: ROOT,
  env: { ...process.env, ...secretsEnv(secrets) },
  stdio: ["pipe", "pipe", "inherit"],
});
const stdout = server.stdout;
if (stdout === null) throw new Error("no stdout from the server");
const ready: string = await new Promise((resolve) =>
  createInterface({ input: stdout }).once("line", resolve),
);
const { port } = JSON.parse(ready) as { port: number };
const body = JSON.stringify(orderWithProducts(30));

async function rate(path: string, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: "POST",
    connections: 10,
    duration: seconds,
    body,
    headers: { authorization: `Bearer ${secrets.token}`, "content-type": "application/json" },
  });
  if (result.non2xx > 0) throw new Error(`${path}: ${result.non2xx} answers were not 2xx`);
  return result.requests.average;
}

for (const [, path] of ROUTES) await rate(path, 1);
const rates = new Map<string, number[]>(ROUTES.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, path] of round % 2 === 0 ? ROUTES : [...ROUTES].reverse()) {
    rates.get(name)?.push(await rate(path, 1));
  }
}
server.stdin?.end();

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const bare = mean(rates.get("bare") ?? []);
console.log(
  `node:http, 30-product order, 10 connections, ${ROUNDS} alternating 1 s runs per route`,
);
for (const [name, values] of rates) {
  const rps = mean(values);
  const added = 1e6 / rps - 1e6 / bare;
  console.log(
    `${name.padEnd(13)} ${Math.round(rps).toString().padStart(6)} req/s  ${(rps / bare).toFixed(2)}x  ` +
      `${added >= 0 ? "+" : ""}${added.toFixed(1)} µs per request  (${values.map(Math.round).join(" ")})`,
  );
}
