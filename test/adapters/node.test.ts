import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { createCallbackRouter, createSendOrderToMerchantHandler } from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { createTestRouter } from "./support/merchant.js";
import { LOOPBACK, listen, type Running } from "./support/servers.js";
import { json, roundTrips } from "./support/suite.js";

let keys: ServiceKeys;
let server: Running;
beforeAll(async () => {
  keys = await createServiceKeys();
  server = await listen(toNodeListener(createTestRouter({ publicKey: keys.publicKeyPem })));
});
afterAll(() => server.close());

describe("node:http", () => {
  roundTrips({ send: () => server.send, keys: () => keys, remoteAddress: LOOPBACK });

  it("answers paths the router does not serve with the router's 404", async () => {
    const response = await server.send("/crossborder/NoSuchCallback", {
      method: "POST",
      body: "{}",
    });
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({
      Success: false,
      ErrorCode: "NOT_FOUND",
      Message: "Not found",
      Description: "",
    });
  });

  it("refuses a compressed body with 415", async () => {
    const response = await server.send("/crossborder/SendOrderToMerchant", {
      method: "POST",
      headers: { authorization: `Bearer ${await keys.sign()}`, "content-encoding": "gzip" },
      body: new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]),
    });
    expect(response.status).toBe(415);
    expect(((await json(response)) as { ErrorCode: string }).ErrorCode).toBe(
      "UNSUPPORTED_MEDIA_TYPE",
    );
  });

  it.each([
    ["401, a forged token", "/crossborder/SendOrderToMerchant", "Bearer forged", 401],
    ["404, no callback at this path", "/crossborder/NoSuchCallback", "Bearer forged", 404],
  ])(
    "answers %s to a 4 MB upload without the client stalling",
    async (_label, path, authorization, status) => {
      const upload = new Uint8Array(4 * 1024 * 1024).fill(0x20);
      const start = performance.now();
      const response = await server.send(path, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: upload,
        signal: AbortSignal.timeout(5000),
      });
      expect(response.status).toBe(status);
      expect(await json(response)).toMatchObject({ Success: false });
      expect(performance.now() - start).toBeLessThan(5000);
      // The server is still there for the next call.
      const next = await server.send("/crossborder/NoSuchCallback", {
        method: "POST",
        body: "{}",
        signal: AbortSignal.timeout(5000),
      });
      expect(next.status).toBe(404);
    },
    10_000,
  );

  it("refuses a request whose socket has no peer address under an allow-list of loopback (401)", async () => {
    // Node's socket.remoteAddress reads undefined once the socket has closed. The listener hides
    // it on a real request's socket: an unknown peer is not loopback, so the list refuses it.
    const seen: string[] = [];
    const router = createCallbackRouter({
      auth: await createAuth({ ipAllowList: { allow: ["127.0.0.1", "::ffff:127.0.0.1"] } }),
      onError: () => undefined,
      handlers: {
        UpdateOrderStatus: (payload) => {
          seen.push(payload.OrderId);
        },
      },
    });
    const listener = toNodeListener(router);
    const served = await listen((req, res) => {
      if (req.headers["x-hide-peer"] === "1") {
        Object.defineProperty(req.socket, "remoteAddress", {
          configurable: true,
          get: () => undefined,
        });
      }
      return listener(req, res);
    });
    try {
      const send = (hide: boolean, orderId: string) =>
        served.send("/UpdateOrderStatus", {
          method: "POST",
          headers: { "content-type": "application/json", ...(hide ? { "x-hide-peer": "1" } : {}) },
          body: JSON.stringify({ OrderId: orderId, StatusCode: "Shipped" }),
        });
      expect((await send(false, "seen")).status).toBe(200);
      const hidden = await send(true, "unknown-peer");
      expect(hidden.status).toBe(401);
      expect(await json(hidden)).toMatchObject({ Success: false });
      expect(seen).toEqual(["seen"]);
    } finally {
      await served.close();
    }
  });

  it("rejects something that is not an endpoint when the listener is built", () => {
    expect(() => toNodeListener({} as never)).toThrow(TypeError);
  });

  it("aborts the merchant's signal when the client goes away", async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let signalAborted!: (aborted: boolean) => void;
    const aborted = new Promise<boolean>((resolve) => {
      signalAborted = resolve;
    });
    const handler = createSendOrderToMerchantHandler(
      async (_order, { signal }) => {
        entered();
        await new Promise((wake) => signal?.addEventListener("abort", wake));
        signalAborted(signal?.aborted === true);
        return { InternalOrderId: "M-1" };
      },
      { auth: false, onError: () => undefined },
    );
    const slow = await listen(toNodeListener(handler));
    try {
      const client = new AbortController();
      const body = fixture("SendOrderToMerchant");
      const request = slow.send("/", { method: "POST", body, signal: client.signal });
      await inHandler;
      client.abort();
      await expect(request).rejects.toThrow();
      expect(await aborted).toBe(true);
    } finally {
      await slow.close();
    }
  });
});
