// Koa with a middleware that read the body before the callbacks, and a JWT that signs the body's
// SHA-256 (`jwt.bodyDigest`): the digest is checked against what the middleware kept of the body
// (`ctx.request.rawBody`, bytes or text), a body whose digest does not match is never accepted,
// and a middleware that kept no raw body is a well-formed 500 naming the cause, never a 200.
import { createServer } from "node:http";
import { bodyParser } from "@koa/bodyparser";
import { base64url } from "jose";
import Koa3 from "koa";
import Koa2 from "koa2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toKoa } from "../../src/adapters/koa.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { rsaKey, signToken, type TestKey } from "../auth/helpers.js";
import { fixture } from "./support/keys.js";
import { MERCHANT_GUID } from "./support/merchant.js";
import { listen, type Running } from "./support/servers.js";
import { json, UNAUTHORIZED } from "./support/suite.js";

const ORDER = fixture("SendOrderToMerchant");
/** The same order for another parcel: what a replayed token would carry. */
const OTHER_ORDER = ORDER.replace("GE927127001US", "GE927127002US");
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const INTERNAL_ERROR = {
  Success: false,
  ErrorCode: "INTERNAL_ERROR",
  Message: "Internal error",
  Description: "",
};

let key: TestKey;
beforeAll(async () => {
  key = await rsaKey();
});

const utf8 = (text: string) => new TextEncoder().encode(text);

async function digestOf(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** A token whose `bd` claim is the digest of `signed` (or no claim at all). */
async function tokenFor(signed: Uint8Array<ArrayBuffer> | undefined): Promise<string> {
  return signToken(key.privateKey, signed === undefined ? {} : { bd: await digestOf(signed) });
}

type Middleware = (ctx: Koa3.Context, next: () => Promise<unknown>) => Promise<unknown>;

/** Reads the request stream to its end, as a raw-body middleware (a logger, a signature check) does. */
async function readStream(ctx: Koa3.Context): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const keepBytes: Middleware = async (ctx, next) => {
  (ctx.request as { rawBody?: unknown }).rawBody = await readStream(ctx);
  return next();
};
const keepText: Middleware = async (ctx, next) => {
  (ctx.request as { rawBody?: unknown }).rawBody = (await readStream(ctx)).toString("utf8");
  return next();
};
/** Keeps only the parsed body: nothing to check a digest against. */
const keepParsed: Middleware = async (ctx, next) => {
  const text = (await readStream(ctx)).toString("utf8").replace(/^\uFEFF/, "");
  (ctx.request as { body?: unknown }).body = JSON.parse(text);
  return next();
};
const keepNothing: Middleware = async (ctx, next) => {
  await readStream(ctx);
  return next();
};

interface App {
  readonly server: Running;
  readonly failures: CallbackFailure[];
  /** The OrderIds the merchant's function was called with. */
  readonly orders: string[];
}

async function appWith(Koa: typeof Koa3, first: Middleware): Promise<App> {
  const failures: CallbackFailure[] = [];
  const orders: string[] = [];
  const app = new Koa();
  app.on("error", () => undefined);
  app.use(first);
  app.use(
    toKoa(
      createCallbackRouter({
        basePath: "/crossborder",
        auth: createAuth({
          jwt: { environment: "test", keys: { test: key.pem }, bodyDigest: { claim: "bd" } },
          merchantGuid: MERCHANT_GUID,
        }),
        onError: (failure) => void failures.push(failure),
        handlers: {
          SendOrderToMerchant: (order) => {
            orders.push(order.OrderId);
            return { InternalOrderId: `M-${order.OrderId}` };
          },
        },
      }),
    ),
  );
  return { server: await listen(createServer(app.callback())), failures, orders };
}

function post(app: App, token: string, body: Uint8Array<ArrayBuffer>): Promise<Response> {
  return app.server.send("/crossborder/SendOrderToMerchant", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
}

/** Refused 401 for the digest, the merchant's function not called. */
async function expectRefused(app: App, response: Response, reason: RegExp): Promise<void> {
  expect(response.status).toBe(401);
  expect(await json(response)).toStrictEqual(UNAUTHORIZED);
  expect(app.failures.map((f) => `${f.kind}: ${f.reason}`)).toEqual([
    expect.stringMatching(new RegExp(`^unauthorized: .*${reason.source}`)),
  ]);
  expect(app.orders).toEqual([]);
}

const KEEPING: [string, Middleware][] = [
  ["@koa/bodyparser (rawBody: its text)", bodyParser() as unknown as Middleware],
  ["a raw-body middleware keeping the bytes (rawBody: a Buffer)", keepBytes],
  ["a raw-body middleware keeping the text (rawBody: a string)", keepText],
];

for (const [version, Koa] of [
  ["2", Koa2 as unknown as typeof Koa3],
  ["3", Koa3],
] as const) {
  describe(`Koa ${version}, jwt.bodyDigest behind a middleware that read the body`, () => {
    for (const [label, first] of KEEPING) {
      describe(label, () => {
        let app: App;
        beforeAll(async () => {
          app = await appWith(Koa, first);
        });
        afterAll(() => app.server.close());
        const reset = () => {
          app.failures.length = 0;
          app.orders.length = 0;
        };

        it("accepts the body the token signed", async () => {
          reset();
          const body = utf8(ORDER);
          const response = await post(app, await tokenFor(body), body);
          expect(response.status).toBe(200);
          expect(await json(response)).toMatchObject({
            Success: true,
            InternalOrderId: "M-GE927127001US",
          });
          expect(app.orders).toEqual(["GE927127001US"]);
        });

        it("refuses another body under the token (a replay): 401, the merchant not called", async () => {
          reset();
          const token = await tokenFor(utf8(OTHER_ORDER));
          await expectRefused(app, await post(app, token, utf8(ORDER)), /does not match/);
        });

        it("refuses a token without the digest claim: 401", async () => {
          reset();
          await expectRefused(
            app,
            await post(app, await tokenFor(undefined), utf8(ORDER)),
            /claim missing/,
          );
        });
      });
    }

    it("the bytes kept (a Buffer): a body sent with a UTF-8 BOM matches the digest of its bytes", async () => {
      const app = await appWith(Koa, keepBytes);
      try {
        const body = new Uint8Array([...BOM, ...utf8(ORDER)]);
        const response = await post(app, await tokenFor(body), body);
        expect(response.status).toBe(200);
        expect(app.orders).toEqual(["GE927127001US"]);
      } finally {
        await app.server.close();
      }
    });

    it("@koa/bodyparser drops a UTF-8 BOM from its text: such a body no longer matches, a 401 (README: mount the callbacks first)", async () => {
      const app = await appWith(Koa, bodyParser() as unknown as Middleware);
      try {
        const body = new Uint8Array([...BOM, ...utf8(ORDER)]);
        await expectRefused(app, await post(app, await tokenFor(body), body), /does not match/);
      } finally {
        await app.server.close();
      }
    });

    for (const [label, first, reason] of [
      ["only the parsed body", keepParsed, /needs the raw body \(body digest\)/],
      ["nothing", keepNothing, /already read before the callbacks/],
    ] as const) {
      it(`a middleware that kept ${label}: 500 INTERNAL_ERROR naming the cause, whatever the digest`, async () => {
        const app = await appWith(Koa, first);
        try {
          const body = utf8(ORDER);
          for (const signed of [body, utf8(OTHER_ORDER)]) {
            const response = await post(app, await tokenFor(signed), body);
            expect(response.status).toBe(500);
            expect(await json(response)).toStrictEqual(INTERNAL_ERROR);
          }
          expect(app.failures.map((f) => f.kind)).toEqual(["internal_error", "internal_error"]);
          for (const failure of app.failures) expect(failure.reason).toMatch(reason);
          expect(app.orders).toEqual([]);
        } finally {
          await app.server.close();
        }
      });
    }
  });
}
