// The request's URL is parsed when first read (authentication's query secret, the cart's query,
// `context.request.url`), not on every call: what a target gives must not change. A target that
// cannot be parsed is still refused before authentication, a path parses as it always did, and
// every reader sees one URL object.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Authenticator, AuthRequest } from "../../src/auth/types.js";
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
