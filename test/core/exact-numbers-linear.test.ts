// Review SECOND-ENC-1: recovering the exact digits of many ids beyond 2^53 rescanned the body's
// text once per id (each walk skipping the list's first `index` entries): 5,000 `{"CardId":1e300}`
// entries in a NotifyOrderRefund (85 KB) cost 4.8 s, 30,000 cost minutes, and the scan ran before
// the MerchantGUID check. The literals of all the paths are now found in one pass over the text,
// after the authentication that reads the payload. Each growth test times the handler at n and 8n
// (best of five, CPU time): linear is ~8, the defect gave ~64; the bounds are loose enough for a
// shared 2-core machine.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { numberLiteralsAt } from "../../src/core/exact-numbers.js";
import { createAuth, createNotifyOrderRefundHandler } from "../../src/index.js";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

const enc = new TextEncoder();
const post = (text: string) =>
  ({
    method: "POST",
    url: "/callback",
    headers: { "content-type": "application/json" },
    body: enc.encode(text),
  }) as never;

/** A NotifyOrderRefund of `n` unsafe CardIds (`1e300`, and a 19-digit one every other entry). */
function refund(n: number, guid?: string): string {
  const entries = Array.from({ length: n }, (_, i) =>
    i % 2 === 0 ? '{"CardId":1e300}' : `{"CardId":${9007199254740993n + BigInt(i)}}`,
  ).join(",");
  const guidField = guid === undefined ? "" : `"MerchantGUID":"${guid}",`;
  return `{"OrderId":"1",${guidField}"GiftCardsData":[${entries}]}`;
}

/** The best of `reps` CPU and wall times (ms) of `run` on inputs made (untimed) by `make`. */
async function best<T>(make: () => T, run: (input: T) => Promise<void>, reps: number) {
  let cpu = Infinity;
  let wall = Infinity;
  for (let i = 0; i < reps; i++) {
    const input = make();
    collect();
    const start = performance.now();
    const used = process.cpuUsage();
    await run(input);
    const { user, system } = process.cpuUsage(used);
    wall = Math.min(wall, performance.now() - start);
    cpu = Math.min(cpu, (user + system) / 1000);
    if (wall > 3_000) break; // the defect is shown
  }
  return { cpu, wall };
}

async function growth<T>(make: (n: number) => T, run: (input: T) => Promise<void>, n: number) {
  await best(() => make(n), run, 3);
  const small = await best(() => make(n), run, 5);
  const large = await best(() => make(8 * n), run, 5);
  const ratio = large.cpu / Math.max(small.cpu, 0.05);
  return { ratio, large, text: `CPU ${small.cpu.toFixed(2)} ms → ${large.cpu.toFixed(2)} ms` };
}

describe("exact digits of many ids beyond 2^53 (SECOND-ENC-1)", () => {
  it("NotifyOrderRefund: 5,000 then 40,000 unsafe CardIds cost linear time", async () => {
    let seen: unknown[] = [];
    const handler = createNotifyOrderRefundHandler(
      (payload) => {
        seen = (payload.GiftCardsData ?? []).map((entry) => entry.CardId);
      },
      { auth: false, onError: () => undefined },
    );
    const run = async (text: string) => {
      const answer = await handler.handle(post(text));
      expect(answer.status).toBe(200);
    };
    const { ratio, large, text } = await growth(refund, run, 5_000);
    expect(ratio, text).toBeLessThan(24);
    // 40,000 ids (680 KB): the defect took minutes.
    expect(large.wall, text).toBeLessThan(2_000);
    expect(seen).toHaveLength(40_000);
    expect(seen[0]).toBe(`1${"0".repeat(300)}`);
    expect(seen[1]).toBe(String(9007199254740993n + 1n));
    expect(seen[39_999]).toBe(String(9007199254740993n + 39_999n));
  }, 120_000);

  it("a wrong MerchantGUID is refused before the body's text is scanned", async () => {
    const auth = createAuth({
      merchantGuid: "11111111-1111-1111-1111-111111111111",
      allowWeakAuth: true,
    });
    let called = false;
    const handler = createNotifyOrderRefundHandler(
      () => {
        called = true;
      },
      { auth, onError: () => undefined },
    );
    const text = refund(40_000, "00000000-0000-0000-0000-000000000000");
    const start = performance.now();
    const answer = await handler.handle(post(text));
    const ms = performance.now() - start;
    expect(answer.status).toBe(401);
    expect(called).toBe(false);
    expect(ms).toBeLessThan(2_000);
  }, 60_000);

  it("numberLiteralsAt: every path's literal in one pass, shared prefixes, last member wins", () => {
    const text =
      '{"A":[{"CardId":1},{"CardId":2,"CardId":3}],"B":{"C":[4,5e1]},"A":[{"CardId":7},{"x":"]"},{"Card\\u0049d":-9}]}';
    expect(
      numberLiteralsAt(text, [
        ["A", 0, "CardId"],
        ["A", 2, "CardId"],
        ["B", "C", 1],
        ["B", "C", 0],
        ["A", 1, "CardId"],
        ["A", 0, "CardId"],
        ["Z"],
      ]),
    ).toEqual(["7", "-9", "5e1", "4", undefined, "7", undefined]);
  });
});
