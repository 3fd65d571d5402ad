import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import express5 from "express";
import express4 from "express4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toExpress } from "../../src/adapters/express.js";
import { createAuth } from "../../src/auth/index.js";
import { createCallbackRouter, createPerformOrderPaymentHandler } from "../../src/index.js";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { createTestRouter } from "./support/merchant.js";
import { LOOPBACK, listen, type Running } from "./support/servers.js";
import {
  json,
  MALFORMED_JSON,
  orderResult,
  PAYLOAD_TOO_LARGE,
  parserFirst,
  roundTrips,
  signedPost,
} from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant");

let keys: ServiceKeys;
beforeAll(async () => {
  keys = await createServiceKeys();
});

type Express = typeof express5;
type App = ReturnType<Express>;

/** An app that records what reaches the handlers after ours. */
function appWith(express: Express, setup: (app: App) => void) {
  const app = express();
  const seen = { next: [] as string[], errors: [] as unknown[] };
  setup(app);
  app.use((req, res) => {
    seen.next.push(req.originalUrl);
    res.status(404).type("text/plain").send("app 404");
  });
  app.use((error: unknown, _req: unknown, res: express5.Response, _next: unknown) => {
    seen.errors.push(error);
    res.status(599).type("text/plain").send("app error");
  });
  return { app, seen };
}

for (const [version, express] of [
  ["4", express4 as unknown as Express],
  ["5", express5],
] as const) {
  describe(`Express ${version}`, () => {
    describe('mounted with app.use("/crossborder", …), router without basePath', () => {
      let server: Running;
      let seen: ReturnType<typeof appWith>["seen"];
      beforeAll(async () => {
        const built = appWith(express, (app) => {
          app.use(
            "/crossborder",
            toExpress(createTestRouter({ publicKey: keys.publicKeyPem, basePath: "" })),
          );
          app.use(express.json());
        });
        seen = built.seen;
        server = await listen(built.app);
      });
      afterAll(() => server.close());

      roundTrips({ send: () => server.send, keys: () => keys, remoteAddress: LOOPBACK });

      it("passes paths the router does not serve to next(), and never calls next(err)", async () => {
        const response = await server.send("/crossborder/NoSuchCallback", {
          method: "POST",
          body: "{}",
        });
        expect(response.status).toBe(404);
        expect(await response.text()).toBe("app 404");
        expect(seen.next).toEqual(["/crossborder/NoSuchCallback"]);
        expect(seen.errors).toEqual([]);
      });
    });

    describe('router with basePath "/crossborder" mounted at the root', () => {
      let server: Running;
      let seen: ReturnType<typeof appWith>["seen"];
      beforeAll(async () => {
        const built = appWith(express, (app) => {
          app.use(toExpress(createTestRouter({ publicKey: keys.publicKeyPem })));
        });
        seen = built.seen;
        server = await listen(built.app);
      });
      afterAll(() => server.close());

      it("answers its callbacks, case-insensitively and with a trailing slash", async () => {
        for (const path of [
          "/crossborder/SendOrderToMerchant",
          "/CrossBorder/sendordertomerchant/",
        ]) {
          const response = await server.send(path, signedPost(await keys.sign(), ORDER));
          expect(response.status).toBe(200);
          expect(await json(response)).toEqual(orderResult(LOOPBACK));
        }
      });

      it("passes the app's other paths to next()", async () => {
        const response = await server.send("/health?x=1");
        expect(response.status).toBe(404);
        expect(seen.next).toEqual(["/health?x=1"]);
      });
    });

    describe("behind express.json() (parser first)", () => {
      let server: Running;
      beforeAll(async () => {
        const built = appWith(express, (app) => {
          app.use(express.json({ limit: "5mb" }));
          app.use(toExpress(createTestRouter({ publicKey: keys.publicKeyPem })));
        });
        server = await listen(built.app);
      });
      afterAll(() => server.close());

      parserFirst({
        send: () => server.send,
        keys: () => keys,
        parsedFrom: "the parsed req.body",
        skippedContentType: "text/plain",
      });
    });

    describe("behind a middleware that consumed the stream without setting req.body", () => {
      let server: Running;
      beforeAll(async () => {
        const built = appWith(express, (app) => {
          app.use(async (req, _res, next) => {
            for await (const _chunk of req) {
              // read and dropped
            }
            next();
          });
          app.use(toExpress(createTestRouter({ publicKey: keys.publicKeyPem })));
        });
        server = await listen(built.app);
      });
      afterAll(() => server.close());

      // A 400 told the service its valid order was malformed (dropped): the setup is at fault.
      it("answers 500 (the body was read before us) instead of waiting for a stream that ended", async () => {
        const response = await server.send(
          "/crossborder/SendOrderToMerchant",
          signedPost(await keys.sign(), ORDER),
        );
        expect(response.status).toBe(500);
        expect(await json(response)).toEqual({
          Success: false,
          ErrorCode: "INTERNAL_ERROR",
          Message: "Internal error",
          Description: "",
        });
      });
    });

    describe("behind express.json(): a refused body keeps no card data for the app's later middleware", () => {
      let server: Running;
      /** req.body as a logger after the route sees it, once the answer is sent. */
      const logged: string[] = [];
      beforeAll(async () => {
        const handler = createPerformOrderPaymentHandler(
          () => ({ PaymentAmount: "1", PaymentCurrencyCode: "EUR" }),
          { auth: false, onError: () => undefined },
        );
        const built = appWith(express, (app) => {
          app.use(express.json());
          app.use((req, res, next) => {
            res.on("finish", () => logged.push(JSON.stringify(req.body)));
            next();
          });
          app.use(toExpress(handler));
        });
        server = await listen(built.app);
      });
      afterAll(() => server.close());

      const card = { CardNumber: "4111111111111111", CVVNumber: "737" };
      for (const [refusal, body] of [
        ["the schema (OrderId a number)", { OrderId: 5, PaymentDetails: card }],
        [
          "a second PaymentDetails that is not an object",
          { OrderId: "GE1", PaymentDetails: card, OrderPaymentMethods: [{ PaymentDetails: "x" }] },
        ],
        [
          "a card number sent as a JSON number",
          { OrderId: "GE1", PaymentDetails: { ...card, CardNumber: 4111111111111111 } },
        ],
        [
          "a body nested too deep",
          {
            OrderId: "GE1",
            PaymentDetails: card,
            Deep: JSON.parse(`${"[".repeat(70)}${"]".repeat(70)}`),
          },
        ],
      ] as const) {
        it(`refused by ${refusal}: 400, req.body prints masked and has no CVV`, async () => {
          logged.length = 0;
          const response = await server.send("/", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          expect(response.status).toBe(400);
          await expect.poll(() => logged.length).toBe(1);
          expect(logged[0]).not.toMatch(/737|4111111111111111/);
          expect(logged[0]).toContain("1111");
        });
      }
    });

    describe('security.md 30: an IP allow-list behind app.set("trust proxy", true)', () => {
      let server: Running;
      const seen: string[] = [];
      beforeAll(async () => {
        // Express's req.ip would believe the left-most X-Forwarded-For entry here; the library
        // must read the socket and count only the hops its trusted proxies added.
        const router = createCallbackRouter({
          auth: await createAuth({
            ipAllowList: {
              allow: ["203.0.113.7"],
              trustedProxies: ["127.0.0.1", "::ffff:127.0.0.1"],
            },
          }),
          onError: () => undefined,
          handlers: {
            UpdateOrderStatus: (payload) => {
              seen.push(payload.OrderId);
            },
          },
        });
        server = await listen(
          appWith(express, (app) => {
            app.set("trust proxy", true);
            app.use(toExpress(router));
          }).app,
        );
      });
      afterAll(() => server.close());

      const send = (forwardedFor: string | undefined, orderId: string) =>
        server.send("/UpdateOrderStatus", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }),
          },
          body: JSON.stringify({ OrderId: orderId, StatusCode: "Shipped" }),
        });

      it("refuses a spoofed left-most entry and a direct call; passes the hop our proxy added", async () => {
        for (const [forwardedFor, status] of [
          ["203.0.113.7, 198.51.100.9", 401],
          ["203.0.113.7, 198.51.100.9, 127.0.0.1", 401],
          [undefined, 401],
          ["198.51.100.9", 401],
          ["203.0.113.7", 200],
          ["6.6.6.6, 203.0.113.7", 200],
        ] as const) {
          const response = await send(forwardedFor, `GE-${forwardedFor ?? "direct"}`);
          expect(response.status, forwardedFor).toBe(status);
        }
        expect(seen).toStrictEqual(["GE-203.0.113.7", "GE-6.6.6.6, 203.0.113.7"]);
      });
    });

    it("refuses a request whose socket has no peer address under an allow-list of loopback (401)", async () => {
      // A middleware hides the address on the real socket, as Node reads it once a socket closes.
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
      const served = await listen(
        appWith(express, (app) => {
          app.use((req, _res, next) => {
            if (req.headers["x-hide-peer"] === "1") {
              Object.defineProperty(req.socket, "remoteAddress", {
                configurable: true,
                get: () => undefined,
              });
            }
            next();
          });
          app.use(toExpress(router));
        }).app,
      );
      try {
        const send = (hide: boolean, orderId: string) =>
          served.send("/UpdateOrderStatus", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(hide ? { "x-hide-peer": "1" } : {}),
            },
            body: JSON.stringify({ OrderId: orderId, StatusCode: "Shipped" }),
          });
        expect((await send(false, "seen")).status).toBe(200);
        expect((await send(true, "unknown-peer")).status).toBe(401);
        expect(seen).toEqual(["seen"]);
      } finally {
        await served.close();
      }
    });

    describe('behind express.raw({ type: "*/*" }) and express.text({ type: "*/*" })', () => {
      let raw: Running;
      let text: Running;
      beforeAll(async () => {
        const router = createTestRouter({ publicKey: keys.publicKeyPem });
        raw = await listen(
          appWith(express, (app) => {
            app.use(express.raw({ type: "*/*", limit: "5mb" }));
            app.use(toExpress(router));
          }).app,
        );
        text = await listen(
          appWith(express, (app) => {
            app.use(express.text({ type: "*/*", limit: "5mb" }));
            app.use(toExpress(router));
          }).app,
        );
      });
      afterAll(async () => {
        await raw.close();
        await text.close();
      });

      it("answers from the Buffer and from the string", async () => {
        for (const server of [raw, text]) {
          const response = await server.send(
            "/crossborder/SendOrderToMerchant",
            signedPost(await keys.sign(), ORDER),
          );
          expect(response.status).toBe(200);
          expect(await json(response)).toEqual(orderResult(LOOPBACK));
        }
      });

      it("answers from what the parser inflated (Content-Encoding: gzip)", async () => {
        for (const server of [raw, text]) {
          const init = signedPost(await keys.sign(), gzipSync(ORDER));
          init.headers = {
            ...(init.headers as Record<string, string>),
            "content-encoding": "gzip",
          };
          const response = await server.send("/crossborder/SendOrderToMerchant", init);
          expect(response.status).toBe(200);
          expect(await json(response)).toEqual(orderResult(LOOPBACK));
        }
      });

      it("refuses a body gzipped by Transfer-Encoding, which the parser leaves as it is: 415", async () => {
        for (const server of [raw, text]) {
          const token = await keys.sign();
          const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
            const request = httpRequest(`${server.baseUrl}/crossborder/SendOrderToMerchant`, {
              method: "POST",
              headers: {
                authorization: `Bearer ${token}`,
                "content-type": "application/json",
                // Node's client writes the body chunked, as the last coding says.
                "transfer-encoding": "gzip, chunked",
              },
            });
            request.on("error", reject);
            request.on("response", (response) => {
              let body = "";
              response.setEncoding("utf8");
              response.on("data", (chunk: string) => {
                body += chunk;
              });
              response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
            });
            request.end(gzipSync(ORDER));
          });
          expect(answer.status).toBe(415);
          expect(JSON.parse(answer.body)).toMatchObject({ ErrorCode: "UNSUPPORTED_MEDIA_TYPE" });
        }
      });

      it("a gzip body behind a raw-body middleware that does not inflate: 415, the status of a compressed body (review-left D4)", async () => {
        const kept = await listen(
          appWith(express, (app) => {
            // What raw-body (without inflate) does: the bytes as sent, in req.body.
            app.use((req, _res, next) => {
              const chunks: Buffer[] = [];
              req.on("data", (chunk: Buffer) => chunks.push(chunk));
              req.on("end", () => {
                req.body = Buffer.concat(chunks);
                next();
              });
              req.on("error", next);
            });
            app.use(toExpress(createTestRouter({ publicKey: keys.publicKeyPem })));
          }).app,
        );
        try {
          const init = signedPost(await keys.sign(), gzipSync(ORDER));
          init.headers = {
            ...(init.headers as Record<string, string>),
            "content-encoding": "gzip",
          };
          const response = await kept.send("/crossborder/SendOrderToMerchant", init);
          expect(response.status).toBe(415);
          expect(await json(response)).toMatchObject({ ErrorCode: "UNSUPPORTED_MEDIA_TYPE" });
        } finally {
          await kept.close();
        }
      });

      it("applies the engine's limit to what the parser read: 413", async () => {
        const oversized = `{"OrderId":"${"x".repeat(1024 * 1024)}"}`;
        for (const server of [raw, text]) {
          const response = await server.send(
            "/crossborder/SendOrderToMerchant",
            signedPost(await keys.sign(), oversized),
          );
          expect(response.status).toBe(413);
          expect(await json(response)).toEqual(PAYLOAD_TOO_LARGE);
        }
      });

      it("answers malformed JSON with the engine's 400", async () => {
        for (const server of [raw, text]) {
          const response = await server.send(
            "/crossborder/SendOrderToMerchant",
            signedPost(await keys.sign(), "{"),
          );
          expect(response.status).toBe(400);
          expect(await json(response)).toEqual(MALFORMED_JSON);
        }
      });
    });
  });
}

// Review DEPLOY-6: behind express.urlencoded(), a repeated form parameter reached the cart payload
// as a list (`webStoreCode: ["a", "b"]`), where the library's own parse keeps its first value, as
// the README says. Only the documented names were reduced.
describe("GetCheckoutCartInfo behind express.urlencoded()", () => {
  for (const [version, express] of [
    ["4", express4],
    ["5", express5],
  ] as const) {
    it(`Express ${version}: a repeated form parameter keeps its first value, as without the parser`, async () => {
      const seen: Record<string, unknown>[] = [];
      const router = createCallbackRouter({
        basePath: "/cb",
        auth: false,
        handlers: {
          GetCheckoutCartInfo: (payload) => {
            seen.push({ ...payload });
            return { productsList: [] };
          },
        },
      });
      const body = "merchantCartToken=t1&webStoreCode=a&webStoreCode=b&merchantCartToken=t2";
      const post = async (server: Running, type: string, text = body) =>
        (
          await server.send("/cb/GetCheckoutCartInfo", {
            method: "POST",
            headers: { "content-type": type },
            body: text,
          })
        ).status;
      const parsed = await listen(
        (express as typeof express5)()
          .use(express.urlencoded({ extended: false }))
          .use(express.json())
          .use(toExpress(router)),
      );
      const plain = await listen((express as typeof express5)().use(toExpress(router)));
      try {
        expect(await post(parsed, "application/x-www-form-urlencoded")).toBe(200);
        expect(await post(plain, "application/x-www-form-urlencoded")).toBe(200);
        expect(seen[0]).toMatchObject({ merchantCartToken: "t1", webStoreCode: "a" });
        expect(seen[1]).toMatchObject({ merchantCartToken: "t1", webStoreCode: "a" });
        // A JSON body's lists are the payload's: only a form parser's lists are reduced.
        const json = JSON.stringify({ merchantCartToken: "t1", webStoreCode: ["a", "b"] });
        expect(await post(parsed, "application/json", json)).toBe(200);
        expect(seen[2]).toMatchObject({ webStoreCode: ["a", "b"] });
      } finally {
        await parsed.close();
        await plain.close();
      }
    });
  }
});
