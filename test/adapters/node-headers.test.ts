// The request headers the Node adapters hand the engine (`nodeHeaders`): Node's `req.headers`
// when no name comes twice in `rawHeaders`, else every value of a repeated header (a second
// Authorization is a 401, never the first one alone). Review wire-2 / amp AMP-7: the search for a
// repeated name compared every pair of names, O(h²) before authentication (1,000 to 2,000
// headers: 10 to 50 ms of the main thread per request, no token needed).
import { describe, expect, it } from "vitest";
import { type NodeRequestLike, nodeHeaders } from "../../src/adapters/internal.js";

const CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";

/** `n` distinct three-character names (`aaa`, `baa`, …), each with an empty value. */
function distinctNames(n: number): string[] {
  const raw: string[] = [];
  for (let i = 0; i < n; i++) {
    raw.push(`${CHARS[i % 36]}${CHARS[Math.floor(i / 36) % 36]}${CHARS[Math.floor(i / 1296)]}`, "");
  }
  return raw;
}

function request(rawHeaders: string[]): NodeRequestLike {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    headers[name] ??= rawHeaders[i + 1] as string;
  }
  return { headers, rawHeaders } as unknown as NodeRequestLike;
}

describe("nodeHeaders: a repeated Authorization is seen however many headers come with it", () => {
  it.each([2, 10, 16, 17, 40, 1500])(
    "%i headers, Authorization sent twice in another case: both values kept",
    (n) => {
      const raw = distinctNames(n - 2);
      raw.splice(2, 0, "Authorization", "Bearer good");
      raw.push("aUTHORIZATION", "garbage");
      const headers = nodeHeaders(request(raw)) as Record<string, unknown>;
      expect(headers.authorization).toEqual(["Bearer good", "garbage"]);
    },
  );

  it.each([1, 10, 16, 17, 1500])(
    "%i distinct headers: Node's req.headers itself, nothing rebuilt",
    (n) => {
      const req = request(distinctNames(n));
      expect(nodeHeaders(req)).toBe(req.headers);
    },
  );

  it("names of one length that differ only past the case bit are not a repeat", () => {
    // `@` (0x40) and `` ` `` (0x60) differ only by 0x20: the fast comparison may see a repeat,
    // the answer is the same headers either way.
    const raw = [...distinctNames(30), "x-@", "1", "x-`", "2"];
    const headers = nodeHeaders(request(raw)) as Record<string, unknown>;
    expect(headers["x-@"]).toBe("1");
    expect(headers["x-`"]).toBe("2");
  });
});

/** The least time of `rounds` calls over `req`, per call, in ms. */
function msPerCall(req: NodeRequestLike, rounds: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 5; attempt++) {
    const started = performance.now();
    for (let k = 0; k < rounds; k++) nodeHeaders(req);
    best = Math.min(best, (performance.now() - started) / rounds);
  }
  return best;
}

it("the cost grows linearly with the number of headers (Node's own limit: 2,000)", () => {
  const small = request(distinctNames(200));
  const large = request(distinctNames(2000));
  for (let k = 0; k < 20; k++) {
    nodeHeaders(small);
    nodeHeaders(large);
  }
  const ratio = msPerCall(large, 20) / Math.max(msPerCall(small, 200), 0.001);
  // 10x the headers: ~10x when linear, ~100x when every pair is compared (0.06 ms -> 10 ms).
  expect(ratio).toBeLessThan(35);
});
