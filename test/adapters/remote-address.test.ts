// Review DEPLOY-2: behind a proxy on a Unix socket (nginx `proxy_pass http://unix:/run/app.sock`,
// Passenger, a sidecar), `req.socket.remoteAddress` is undefined, so an IP allow-list refused every
// call and the Node adapters had no option to say who the peer is. They now take `toFetch`'s
// `remoteAddress` option, checked by the same code.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { toFetch } from "../../src/adapters/fetch.js";
import { toKoa } from "../../src/adapters/koa.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackRouter, createCallbackRouter } from "../../src/index.js";
import { fixture } from "./support/keys.js";
import { listen } from "./support/servers.js";

const ORDER = fixture("SendOrderToMerchant");
const dir = mkdtempSync(join(tmpdir(), "cb-unix-"));
const servers: Server[] = [];
let router: CallbackRouter;
const reasons: string[] = [];
const seen: (string | undefined)[] = [];

beforeAll(async () => {
  router = createCallbackRouter({
    basePath: "/crossborder",
    auth: await createAuth({
      ipAllowList: { allow: ["203.0.113.0/24"], trustedProxies: ["127.0.0.1"] },
    }),
    onError: (failure) => {
      reasons.push(failure.reason);
    },
    handlers: {
      SendOrderToMerchant: (_order, context) => {
        seen.push(context.request.remoteAddress);
        return { InternalOrderId: "M-1" };
      },
    },
  });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

async function onSocket(listener: Parameters<typeof createServer>[1], name: string) {
  const path = join(dir, name);
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return path;
}

/** A call as the local proxy forwards it, over the Unix socket. */
function forward(socketPath: string, forwardedFor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: "/crossborder/SendOrderToMerchant",
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode as number));
      },
    );
    req.on("error", reject);
    req.end(ORDER);
  });
}

const PROXY = () => "127.0.0.1";

describe("the Node adapters behind a proxy on a Unix socket", () => {
  it("without remoteAddress, every call is refused: the socket has no peer address", async () => {
    const path = await onSocket(toNodeListener(router), "none.sock");
    reasons.length = 0;
    expect(await forward(path, "203.0.113.7")).toBe(401);
    expect(reasons).toEqual(["peer address unknown; the IP allow-list cannot be checked"]);
  });

  for (const [name, listener] of [
    ["toNodeListener", () => toNodeListener(router, { remoteAddress: PROXY })],
    ["toExpress", () => express().use(toExpress(router, { remoteAddress: PROXY }))],
    ["toKoa", () => new Koa().use(toKoa(router, { remoteAddress: PROXY })).callback()],
  ] as const) {
    it(`${name}: remoteAddress names the local proxy, whose X-Forwarded-For is then walked`, async () => {
      const path = await onSocket(listener() as never, `${name}.sock`);
      reasons.length = 0;
      seen.length = 0;
      expect(await forward(path, "203.0.113.7")).toBe(200);
      expect(seen).toEqual(["127.0.0.1"]);
      // The client the proxy names is still checked against `allow`.
      expect(await forward(path, "198.51.100.1")).toBe(401);
      expect(await forward(path, "203.0.113.7, 198.51.100.1")).toBe(401);
      expect(reasons).toEqual([
        "client address not in the IP allow-list",
        "client address not in the IP allow-list",
      ]);
    });
  }

  it("receives the Node request (ctx.req under Koa), and may read the socket itself", async () => {
    const got: unknown[] = [];
    const read = (req: IncomingMessage) => {
      got.push(req.constructor.name, req.socket.remoteAddress);
      return req.socket.remoteAddress ?? "127.0.0.1";
    };
    const node = await onSocket(toNodeListener(router, { remoteAddress: read }), "read-node.sock");
    const koa = await onSocket(
      new Koa().use(toKoa(router, { remoteAddress: read })).callback(),
      "read-koa.sock",
    );
    expect(await forward(node, "203.0.113.7")).toBe(200);
    expect(await forward(koa, "203.0.113.7")).toBe(200);
    expect(got).toEqual(["IncomingMessage", undefined, "IncomingMessage", undefined]);
  });

  it("a remoteAddress that throws or gives nothing leaves the address unknown (401), as toFetch's", async () => {
    for (const [index, read] of [
      () => {
        throw new Error("no address");
      },
      () => undefined,
      () => null,
    ].entries()) {
      const path = await onSocket(
        express().use(toExpress(router, { remoteAddress: read })),
        `unknown-${index}.sock`,
      );
      reasons.length = 0;
      expect(await forward(path, "203.0.113.7")).toBe(401);
      expect(reasons).toEqual(["peer address unknown; the IP allow-list cannot be checked"]);
    }
  });
});

// Review misbehave-1: an async `remoteAddress` (a lookup in a proxy table) gave a promise; a
// rejected one was never handled, an unhandled rejection on every call, which under Node's default
// ends the process (even with `auth: false`). The option gives a string: anything else, a promise
// included (not awaited; its rejection handled), leaves the address unknown.
describe("a remoteAddress that gives a promise or another non-string (review misbehave-1)", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeAll(() => void process.on("unhandledRejection", onUnhandled));
  afterAll(() => void process.off("unhandledRejection", onUnhandled));
  const reads = [
    async () => {
      throw new Error("proxy table unavailable");
    },
    () => Promise.reject(new Error("proxy table unavailable")),
    async () => "127.0.0.1",
    // A thenable that is not a Promise, its `then` calling the rejection handler.
    () =>
      // biome-ignore lint/suspicious/noThenProperty: a thenable is what is tested
      Object.defineProperty({}, "then", {
        value: (_ok: unknown, fail: (e: unknown) => void) => fail(new Error("no")),
      }),
    () => 2130706433,
    () => ({ toString: () => "127.0.0.1" }),
  ] as unknown as ((req: IncomingMessage) => string)[];
  const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

  for (const [name, adapt] of [
    ["toNodeListener", (read: never) => toNodeListener(router, { remoteAddress: read })],
    ["toExpress", (read: never) => express().use(toExpress(router, { remoteAddress: read }))],
    ["toKoa", (read: never) => new Koa().use(toKoa(router, { remoteAddress: read })).callback()],
  ] as const) {
    it(`${name}: the address is unknown (401), the call answered, no unhandled rejection`, async () => {
      for (const [index, read] of reads.entries()) {
        const path = await onSocket(
          adapt(read as never) as never,
          `${name}-nonstring-${index}.sock`,
        );
        reasons.length = 0;
        expect(await forward(path, "203.0.113.7")).toBe(401);
        expect(reasons).toEqual(["peer address unknown; the IP allow-list cannot be checked"]);
      }
      await settle();
      expect(unhandled.splice(0).map(String)).toEqual([]);
    });
  }

  it("toFetch: the same, and with auth: false the call succeeds", async () => {
    const open = createCallbackRouter({
      auth: false,
      handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
    });
    const call = () =>
      new Request("http://x/SendOrderToMerchant", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.7" },
        body: ORDER,
      });
    for (const read of reads) {
      reasons.length = 0;
      const refused = await toFetch(router, { remoteAddress: read as never })(
        new Request("http://x/crossborder/SendOrderToMerchant", call()),
      );
      expect(refused.status).toBe(401);
      expect(reasons).toEqual(["peer address unknown; the IP allow-list cannot be checked"]);
      const answered = await toFetch(open, { remoteAddress: read as never })(call());
      expect(answered.status).toBe(200);
    }
    await settle();
    expect(unhandled.splice(0).map(String)).toEqual([]);
  });
});

describe("the Node adapters' options, checked as toFetch's", () => {
  const adapters = [
    ["toNodeListener", (options: unknown) => toNodeListener(router, options as never)],
    ["toExpress", (options: unknown) => toExpress(router, options as never)],
    ["toKoa", (options: unknown) => toKoa(router, options as never)],
  ] as const;

  for (const [name, adapt] of adapters) {
    it(`${name} refuses a misspelt name, a remoteAddress that is not a function, and non-objects`, () => {
      const misspelt = () => adapt({ remotAddress: PROXY });
      expect(misspelt).toThrow(TypeError);
      expect(misspelt).toThrow(
        `${name}: options has an unknown option "remotAddress" (known: remoteAddress, waitUntil); did you mean "remoteAddress"?`,
      );
      for (const value of ["X-Real-IP", { header: "X-Real-IP" }]) {
        const adapted = () => adapt({ remoteAddress: value });
        expect(adapted).toThrow(TypeError);
        expect(adapted).toThrow(`${name}: remoteAddress must be a function`);
      }
      for (const value of [null, "remoteAddress"]) {
        expect(() => adapt(value)).toThrow(`${name}: options must be an object`);
      }
      for (const value of [undefined, {}, { remoteAddress: null }, { remoteAddress: undefined }]) {
        expect(() => adapt(value)).not.toThrow();
      }
    });
  }

  it("reads the option once, when the adapter is made", () => {
    let reads = 0;
    const options = {
      get remoteAddress() {
        reads++;
        return PROXY;
      },
    };
    toNodeListener(router, options);
    toExpress(router, options);
    toKoa(router, options);
    expect(reads).toBe(3);
  });
});

// Review DEPLOY-1 on a real server: a trusted proxy's X-Forwarded-For naming an IPv4-compatible
// address (`::203.0.113.5`, in ::/96) passed an IPv4 allow-list; only the ::ffff:-mapped form is IPv4.
describe("X-Forwarded-For through toNodeListener, IPv4-compatible and IPv4-mapped forms", () => {
  it("walks to the client and checks it as the address it is", async () => {
    const server = await listen(
      toNodeListener(
        createCallbackRouter({
          basePath: "/crossborder",
          auth: await createAuth({
            ipAllowList: {
              allow: ["203.0.113.0/24"],
              trustedProxies: ["127.0.0.1", "::1"],
            },
          }),
          onError: () => undefined,
          handlers: { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) },
        }),
      ),
    );
    const status = async (forwardedFor: string | string[]) =>
      await new Promise<number>((resolve, reject) => {
        const url = new URL(`${server.baseUrl}/crossborder/SendOrderToMerchant`);
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode as number));
          },
        );
        req.on("error", reject);
        req.end(ORDER);
      });
    try {
      for (const refused of [
        "::203.0.113.5",
        "::cb00:7105",
        "[::203.0.113.5]:443",
        "0:0:0:0:0:0:203.0.113.5",
        "::203.0.113.5%eth0",
        "::ffff:203.000.113.5",
        "64:ff9b::203.0.113.5",
        "203.0.113.5, ::203.0.113.5",
        ["203.0.113.5", "::203.0.113.5"],
      ]) {
        expect(await status(refused), String(refused)).toBe(401);
      }
      for (const allowed of [
        "203.0.113.5",
        "::ffff:203.0.113.5",
        "::FFFF:CB00:7105",
        "[::ffff:203.0.113.5]:443",
        "0:0:0:0:0:ffff:203.0.113.5",
        "::203.0.113.5, 203.0.113.5",
        ["::1", "203.0.113.5"],
      ]) {
        expect(await status(allowed), String(allowed)).toBe(200);
      }
    } finally {
      await server.close();
    }
  });
});
