/**
 * One framework's server for the HTTP benchmark, run as a child process:
 * `node --import tsx bench/http-server.ts <express|koa|hono|node>`.
 *
 * It serves two routes on one port, so both run in the same process, equally warm:
 * - `/crossborder/SendOrderToMerchant`: the library's router through the framework's adapter, as
 *   the README mounts it;
 * - `/bare/SendOrderToMerchant`: the floor in the same framework: read the body, verify the token
 *   (key imported once), JSON.parse, JSON.stringify the same ResponseInfo, same headers.
 * The node:http server also serves the routes of bench/http-split.ts (`SPLIT_PATHS`).
 * Prints `{"port":…,"control":…}` once listening (the control port answers the process's CPU time
 * in µs); exits when stdin closes.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PerformanceObserver } from "node:perf_hooks";
import { serve } from "@hono/node-server";
import type * as ExpressAdapter from "crossborder-callbacks/express";
import type * as KoaAdapter from "crossborder-callbacks/koa";
import type * as NodeAdapter from "crossborder-callbacks/node";
import express from "express";
import { Hono } from "hono";
import { importSPKI, jwtVerify } from "jose";
import Koa from "koa";
import {
  authConfig,
  BARE_PATH,
  distUrl,
  type FetchModule,
  FLOOR_VERIFY_OPTIONS,
  FRAMEWORKS,
  type Framework,
  loadLib,
  ORDER_RESPONSE,
  ORDER_RESULT,
  quiet,
  SPLIT_PATHS,
  secretsFromEnv,
} from "./shared.js";

const framework = process.argv[2] as Framework;
if (!FRAMEWORKS.includes(framework)) throw new Error(`unknown framework ${framework}`);

const lib = await loadLib();
const { publicPem } = secretsFromEnv();
const auth = await lib.createAuth(authConfig(publicPem));
const router = lib.createCallbackRouter({
  basePath: "/crossborder",
  auth,
  ...quiet,
  handlers: { SendOrderToMerchant: () => ORDER_RESULT },
});

// --- The floor: what no correct receiver can skip.
const key = await importSPKI(publicPem, "RS256");
const HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

function bearer(value: string | undefined | null): string {
  return (value ?? "").slice("Bearer ".length);
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    );
    req.on("error", reject);
  });
}

/** verify + parse + stringify; a failed verification answers 401 like the library would. */
async function floor(authorization: string | undefined | null, body: Buffer): Promise<string> {
  await jwtVerify(bearer(authorization), key, FLOOR_VERIFY_OPTIONS);
  return answerOf(body);
}

/** JSON.parse of the body, JSON.stringify of the answer. */
function answerOf(body: Buffer): string {
  const order = JSON.parse(body.toString("utf8"));
  if (typeof order !== "object" || order === null) throw new Error("not an object");
  return JSON.stringify(ORDER_RESPONSE);
}

/** Writes a route's answer, or the 401 a failed verification gets. */
function answer(res: ServerResponse, json: Promise<string>): void {
  json.then(
    (text) => {
      res.writeHead(200, HEADERS);
      res.end(text);
    },
    () => {
      res.writeHead(401, HEADERS);
      res.end("{}");
    },
  );
}

function nodeBare(req: IncomingMessage, res: ServerResponse): void {
  answer(
    res,
    readAll(req).then((body) => floor(req.headers.authorization, body)),
  );
}

// --- bench/http-split.ts's routes (node:http only).
const SPLIT_URL = new URL(`http://127.0.0.1${SPLIT_PATHS.libraryAuth}`);
const noAuthHandler = lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, {
  auth: false,
  ...quiet,
});
const noAuthListener = async () => {
  const { toNodeListener } = (await import(distUrl("node"))) as typeof NodeAdapter;
  return toNodeListener(
    lib.createCallbackRouter({
      basePath: "/split/no-auth",
      auth: false,
      ...quiet,
      handlers: { SendOrderToMerchant: () => ORDER_RESULT },
    }),
  );
};

function splitRoute(
  req: IncomingMessage,
  res: ServerResponse,
  noAuth: (req: IncomingMessage, res: ServerResponse) => void,
): boolean {
  const verify = () => jwtVerify(bearer(req.headers.authorization), key, FLOOR_VERIFY_OPTIONS);
  switch (req.url) {
    case SPLIT_PATHS.verifyFirst:
      answer(
        res,
        verify().then(() => readAll(req).then(answerOf)),
      );
      return true;
    case SPLIT_PATHS.libraryAuth: {
      const headers = {
        get: (name: string) => {
          const value = req.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
      };
      const authRequest = {
        callback: "SendOrderToMerchant" as const,
        method: "POST",
        url: SPLIT_URL,
        headers,
        remoteAddress: undefined,
      };
      answer(
        res,
        Promise.resolve(auth.authenticateRequest(authRequest)).then(() =>
          readAll(req).then(answerOf),
        ),
      );
      return true;
    }
    case SPLIT_PATHS.handlerBytes:
      verify().then(
        () =>
          readAll(req)
            .then((body) =>
              noAuthHandler.handle({
                method: "POST",
                url: req.url ?? "/",
                headers: req.headers,
                body,
              }),
            )
            .then((response) => {
              res.writeHead(response.status, response.headers);
              res.end(response.body);
            }),
        () => answer(res, Promise.reject(new Error("unauthorized"))),
      );
      return true;
    case SPLIT_PATHS.noAuth:
      verify().then(
        () => noAuth(req, res),
        () => answer(res, Promise.reject(new Error("unauthorized"))),
      );
      return true;
    default:
      return false;
  }
}

async function start(): Promise<number> {
  switch (framework) {
    case "express": {
      const { toExpress } = (await import(distUrl("express"))) as typeof ExpressAdapter;
      const app = express();
      app.set("etag", false);
      app.set("x-powered-by", false);
      app.post(BARE_PATH, (req, res) => nodeBare(req, res));
      app.use(toExpress(router));
      return listen(createServer(app));
    }
    case "koa": {
      const { toKoa } = (await import(distUrl("koa"))) as typeof KoaAdapter;
      const app = new Koa();
      app.use(async (ctx, next) => {
        if (ctx.method !== "POST" || ctx.path !== BARE_PATH) return next();
        try {
          const body = await readAll(ctx.req);
          ctx.body = await floor(ctx.get("authorization"), body);
          ctx.status = 200;
        } catch {
          ctx.status = 401;
          ctx.body = "{}";
        }
        ctx.set(HEADERS);
      });
      app.use(toKoa(router));
      return listen(createServer(app.callback()));
    }
    case "hono": {
      const { toFetch } = (await import(distUrl("fetch"))) as FetchModule;
      const callbacks = toFetch(router);
      const app = new Hono();
      app.post(BARE_PATH, async (c) => {
        try {
          const body = Buffer.from(await c.req.arrayBuffer());
          return c.body(await floor(c.req.header("authorization"), body), 200, HEADERS);
        } catch {
          return c.body("{}", 401, HEADERS);
        }
      });
      app.all("/crossborder/*", (c) => callbacks(c.req.raw));
      return new Promise((resolve) => {
        const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) =>
          resolve(info.port),
        );
        server.on("error", (error) => {
          throw error;
        });
      });
    }
    case "node": {
      const { toNodeListener } = (await import(distUrl("node"))) as typeof NodeAdapter;
      const listener = toNodeListener(router);
      const noAuth = await noAuthListener();
      return listen(
        createServer((req, res) => {
          if (req.url === BARE_PATH) nodeBare(req, res);
          else if (!splitRoute(req, res, noAuth)) listener(req, res);
        }),
      );
    }
  }
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

const port = await start();
// GC pauses, counted only for bench/http-gc.ts (BENCH_GC=1): the benchmark's own runs observe none.
const gcTotals = { us: 0, count: 0 };
if (process.env.BENCH_GC === "1") {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcTotals.us += entry.duration * 1000;
      gcTotals.count++;
    }
  }).observe({ entryTypes: ["gc"] });
}
// A second port, outside the framework, where the parent reads this process's CPU time (every
// thread: the RSA verifications in libuv's pool count) before and after each load run.
const control = await listen(
  createServer((_req, res) => {
    const { user, system } = process.cpuUsage();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ cpuUs: user + system, gcUs: gcTotals.us, gcCount: gcTotals.count }));
  }),
);
process.stdout.write(`${JSON.stringify({ port, control, pid: process.pid })}\n`);
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
