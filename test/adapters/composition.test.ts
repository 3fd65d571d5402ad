// Review tenancy-3: two routers (two shops) behind one fetch handler or one node:http server. A
// router's 404 for a path it does not serve cancelled the request's body, so "try A, then B on a
// 404" answered B's call 500 ("the request body was already read").
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toFetch } from "../../src/adapters/fetch.js";
import { toNodeListener } from "../../src/adapters/node.js";
import { type CallbackFailure, createAuth, createCallbackRouter } from "../../src/index.js";
import { createTestKeys, samplePayload, signServiceToken } from "../../src/testing/index.js";

let keys: Awaited<ReturnType<typeof createTestKeys>>;
const reports: string[] = [];

async function shop(name: string) {
  return createCallbackRouter({
    basePath: `/${name}`,
    onError: (failure: CallbackFailure) => void reports.push(`${name} ${failure.status}`),
    auth: await createAuth({ jwt: { environment: "test", keys: { test: keys.publicKey } } }),
    handlers: { UpdateOrderStatus: () => ({ InternalOrderId: `${name}-1` }) },
  });
}

async function signed(url: string): Promise<Request> {
  const body = JSON.stringify(samplePayload("UpdateOrderStatus"));
  const token = await signServiceToken(keys.privateKey, { body });
  return new Request(url, {
    method: "POST",
    body,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
}

beforeAll(async () => {
  keys = await createTestKeys();
});

describe("two routers behind one fetch handler", () => {
  it("A's 404 leaves the body untouched, so B answers the call on its path (try A, then B)", async () => {
    reports.length = 0;
    const a = toFetch(await shop("a"));
    const b = toFetch(await shop("b"));
    const request = await signed("http://shop.test/b/UpdateOrderStatus");
    const first = await a(request);
    expect(first.status).toBe(404);
    expect(request.bodyUsed).toBe(false);
    const second = await b(request);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ Success: true, InternalOrderId: "b-1" });
    expect(reports).toEqual(["a 404"]);
  });

  it("composed with matches, as the README shows: each shop answers its own path, others 404", async () => {
    reports.length = 0;
    const routerA = await shop("a");
    const routerB = await shop("b");
    const a = toFetch(routerA);
    const b = toFetch(routerB);
    const app = (request: Request) =>
      routerA.matches(new URL(request.url).pathname) ? a(request) : b(request);
    const answerA = await app(await signed("http://shop.test/a/UpdateOrderStatus"));
    const answerB = await app(await signed("http://shop.test/B/updateorderstatus/?x=1"));
    const none = await app(await signed("http://shop.test/c/UpdateOrderStatus"));
    expect([answerA.status, answerB.status, none.status]).toEqual([200, 200, 404]);
    expect(await answerA.json()).toMatchObject({ InternalOrderId: "a-1" });
    expect(await answerB.json()).toMatchObject({ InternalOrderId: "b-1" });
    expect(reports).toEqual(["b 404"]);
  });
});

describe("two routers on one node:http server, composed with matches", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    const routerA = await shop("a");
    const routerB = await shop("b");
    const a = toNodeListener(routerA);
    const b = toNodeListener(routerB);
    server = createServer((req, res) => {
      const { pathname } = new URL(req.url ?? "/", "http://localhost");
      return routerA.matches(pathname) ? a(req, res) : b(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

  it("each shop answers its own path; another path is B's 404", async () => {
    reports.length = 0;
    const send = async (path: string) => {
      const request = await signed(`${base}${path}`);
      return fetch(request.url, {
        method: "POST",
        body: await request.text(),
        headers: request.headers,
      });
    };
    const answers = await Promise.all(
      ["/a/UpdateOrderStatus", "/b/UpdateOrderStatus", "/c/UpdateOrderStatus"].map(send),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404]);
    expect(await answers[0]?.json()).toMatchObject({ InternalOrderId: "a-1" });
    expect(await answers[1]?.json()).toMatchObject({ InternalOrderId: "b-1" });
    expect(reports).toEqual(["b 404"]);
  });
});
