// The request's URL is parsed when first read (authentication's query secret, the cart's query,
// `context.request.url`), not on every call: what a target gives must not change. A target that
// cannot be parsed is still refused before authentication, a path parses as it always did, and
// every reader sees one URL object.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Authenticator, AuthRequest } from "../../src/auth/types.js";
import { SELF_DISCARD, SELF_READ } from "../../src/core/body.js";
import { isPathTarget, requestUrl } from "../../src/core/paths.js";
import { createUpdateOrderStatusHandler } from "../../src/index.js";

const BODY = JSON.stringify({ OrderId: "GE1", StatusCode: "canceled" });

/** An authenticator that lets every call in and keeps the request it was given. */
function recorder(seen: AuthRequest[]): Authenticator {
  return {
    authenticateRequest: async (request: AuthRequest) => {
      seen.push(request);
      return { methods: ["test"] };
    },
    needsRawBody: () => false,
  } as unknown as Authenticator;
}

describe("the request target", () => {
  it("a target the URL parser refuses is a 400 before authentication, as before", async () => {
    for (const url of ["//[", "http://[::1", "/\t/[", "//exa mple.com/x", "\\\\[x"]) {
      expect(() => requestUrl(url)).toThrow();
      const seen: AuthRequest[] = [];
      const reports: string[] = [];
      const handler = createUpdateOrderStatusHandler(() => ({ OrderId: "GE1" }), {
        auth: recorder(seen),
        onError: (report) => reports.push(`${report.kind}: ${report.reason}`),
      });
      const response = await handler.handle({ method: "POST", url, headers: {}, body: BODY });
      expect(response.status).toBe(400);
      expect(seen).toHaveLength(0);
      expect(reports).toEqual(["malformed_body: the request target is not a URL"]);
    }
  });

  it("a path never throws in the parser (so its URL can wait until read)", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.string({ unit: fc.constantFrom(..."/\\\t\n\r\0 []@:%?#.a\u00e9\ud800") }),
        ),
        fc.string({ unit: "binary" }),
        (rest, more) => {
          const target = `/${rest}${more}`;
          if (isPathTarget(target)) expect(() => requestUrl(target)).not.toThrow();
        },
      ),
      { numRuns: 1000 },
    );
    for (const target of ["//x", "/\\x", "/\t/x", "/\n/x", "/\r/x", "x", "", " /x"]) {
      expect(isPathTarget(target)).toBe(false);
    }
  });

  it("authentication and the merchant read one URL, the one the target always gave", async () => {
    for (const url of [
      "/UpdateOrderStatus?trace=1&a=%zz#frag",
      "http://shop.example:8080/cb/UpdateOrderStatus?x=1",
      "/cb/Update Order\u00e9\ud800?q= 1",
    ]) {
      const seen: AuthRequest[] = [];
      let merchant: URL | undefined;
      const handler = createUpdateOrderStatusHandler(
        (_payload, context) => {
          merchant = context.request.url;
          return { OrderId: "GE1" };
        },
        { auth: recorder(seen), onError: () => undefined },
      );
      const response = await handler.handle({ method: "POST", url, headers: {}, body: BODY });
      expect(response.status).toBe(200);
      const expected = new URL(url, "http://localhost");
      expect(merchant?.href).toBe(expected.href);
      expect(seen[0]?.url).toBe(merchant);
      expect(merchant).toBeInstanceOf(URL);
    }
  });
});

describe("a self-reading body's read (review second-speed-4)", () => {
  // What the Node adapters hand the engine: a body that reads itself, now answered without a
  // promise when all of it is here. A read given as any thenable is still awaited, and a read that
  // cannot even be looked at is a failed read, as a rejection is.
  const bytes = () => ({ kind: "bytes", bytes: new TextEncoder().encode(BODY), owned: true });
  const body = (read: () => unknown) =>
    ({ [SELF_READ]: read, [SELF_DISCARD]: () => undefined }) as never;
  const handler = createUpdateOrderStatusHandler(() => ({ OrderId: "GE1" }), {
    auth: false,
    onError: () => undefined,
  });
  const run = (read: () => unknown) =>
    handler.handle({ method: "POST", url: "/UpdateOrderStatus", headers: {}, body: body(read) });

  it("a read given at once, or as a promise, is the body", async () => {
    expect((await run(bytes)).status).toBe(200);
    expect((await run(() => Promise.resolve(bytes()))).status).toBe(200);
  });

  it("a read given as a function with a `then` is awaited, as a promise is", async () => {
    const thenable = Object.assign(() => undefined, {
      // biome-ignore lint/suspicious/noThenProperty: a thenable is what is tested
      then: (resolve: (value: unknown) => void) => resolve(bytes()),
    });
    expect((await run(() => thenable)).status).toBe(200);
  });

  it("a read whose `then` cannot be read fails as a rejected read does", async () => {
    const rejected = await run(() => Promise.reject(new Error("gone")));
    const thrown = await run(() => {
      throw new Error("gone");
    });
    const unreadable = await run(() => ({
      // biome-ignore lint/suspicious/noThenProperty: a thenable is what is tested
      get then() {
        throw new Error("gone");
      },
    }));
    expect(thrown.status).toBe(rejected.status);
    expect(unreadable.status).toBe(rejected.status);
  });
});
