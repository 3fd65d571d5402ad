// Review AMP-3: a request's redactor searched every text once per secret (one Knuth–Morris–Pratt
// pass per card number and CVV of every card object of the body, and `includes` per card number
// for the digits), so its cost was the text's length times the number of secrets. A body of n card
// objects whose handler quotes a long payload field (the README quick start's PerformOrderPayment
// refusal and SendRMAInfoToMerchant message do) took 12 s at 210 KB. The secrets are now searched
// together (one automaton per redactor, built on its first text): n and 8n cost about 8 times as
// much, not 64 times.
import { describe, expect, it } from "vitest";
import { cardNumbersMasker, createRedactor } from "../../src/core/redact.js";
import { CallbackError, createAuth, createCallbackRouter } from "../../src/index.js";
import { createTestKeys, samplePayload, signServiceToken } from "../../src/testing/index.js";

const GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
type Name = "PerformOrderPayment" | "SendRMAInfoToMerchant";

/** The quick start's two handlers that quote a payload field, behind a real JWT. */
async function quickStart() {
  const keys = await createTestKeys();
  const auth = createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: GUID,
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    handlers: {
      PerformOrderPayment: ({ OrderId }) => {
        throw new CallbackError("UNKNOWN_ORDER", `No amount known for order ${OrderId}`);
      },
      SendRMAInfoToMerchant: (rma) => ({ Message: `Return ${rma.RMANumber} recorded` }),
    },
    onError: () => {},
  });
  const token = await signServiceToken(keys.privateKey);
  return (name: Name, body: string) =>
    router.handle({
      method: "POST",
      url: `/crossborder/${name}`,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: new TextEncoder().encode(body),
    });
}

/** n card objects (a card number and a CVV each, all different) and a quoted id of 10·n characters. */
function bodyOf(name: Name, n: number): string {
  return JSON.stringify({
    ...(samplePayload(name) as object),
    MerchantGUID: GUID,
    [name === "PerformOrderPayment" ? "OrderId" : "RMANumber"]: "x".repeat(10 * n),
    Extra: Array.from({ length: n }, (_, i) => ({ CardNumber: `c${i}`, CVVNumber: `v${i}` })),
  });
}

/** How many times a unit timing runs its work (fewer to watch the search per secret fail sooner). */
const RUNS_EACH = Number(process.env.REDACT_COST_RUNS ?? 20);

/** The best of three timings of `run`, in milliseconds. */
async function bestOf3(run: () => unknown): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    await run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

describe("a request's redactor costs the text plus the secrets, not their product", () => {
  for (const name of ["PerformOrderPayment", "SendRMAInfoToMerchant"] as const) {
    it(`${name} of the quick start: n and 8n card objects quoted (best of 3)`, async () => {
      const send = await quickStart();
      const n = 300;
      const small = bodyOf(name, n);
      const large = bodyOf(name, 8 * n);
      await send(name, small); // warm: the first request compiles the code
      const first = await send(name, large);
      expect(first.status).toBe(name === "PerformOrderPayment" ? 200 : 200);
      expect(first.body).toContain(name === "PerformOrderPayment" ? "UNKNOWN_ORDER" : "recorded");
      const smallTime = await bestOf3(() => send(name, small));
      const largeTime = await bestOf3(() => send(name, large));
      // Linear: about 8; quadratic: about 64. A 240 KB body took seconds before.
      expect(largeTime / Math.max(smallTime, 1)).toBeLessThan(24);
      expect(largeTime).toBeLessThan(1_500);
    }, 120_000);
  }

  it("createRedactor: n and 8n secrets over a text of 10·n characters (best of 3, 20 runs each)", async () => {
    const timing = async (n: number) => {
      const secrets = Array.from({ length: n }, (_, i) => [`c${i}x`, `v${i}y`]).flat();
      const cards = Array.from({ length: n / 10 }, (_, i) =>
        String(4_000_000_000_000_000 + i * 104_729_000_007),
      );
      // Quoting one card number with dots, and one CVV: every digit masked.
      const text = `id ${"x1 ".repeat(3 * n)} ${cards[1]?.replace(/(\d{4})(?=\d)/g, "$1.")} v7y`;
      return bestOf3(() => {
        for (let round = 0; round < RUNS_EACH; round++) {
          const redact = createRedactor([...secrets, ...cards]);
          expect(redact(text)).toMatch(/ \*{4}\.\*{4}\.\*{4}\.\*{4} \*\*\*$/);
        }
      });
    };
    await timing(400); // warm: the first runs compile the code
    const small = await timing(400);
    const large = await timing(3200);
    expect(large / Math.max(small, 1)).toBeLessThan(24);
    expect(large).toBeLessThan(10_000);
  }, 120_000);

  it("cardNumbersMasker: n and 8n card numbers, a text quoting each of them (best of 3, 20 runs each)", async () => {
    const timing = async (n: number) => {
      const numbers = Array.from({ length: n }, (_, i) =>
        String(4_000_000_000_000_000 + i * 104_729_000_007),
      );
      const cards = numbers.map((CardNumber) => ({ CardNumber }));
      const text = `refs ${numbers.join(", ")} end`;
      return bestOf3(() => {
        for (let round = 0; round < RUNS_EACH; round++) {
          const masked = cardNumbersMasker(cards)(text);
          expect(masked).not.toContain(numbers[n - 1]);
        }
      });
    };
    await timing(300); // warm: the first runs compile the code
    const small = await timing(300);
    const large = await timing(2400);
    expect(large / Math.max(small, 1)).toBeLessThan(24);
    expect(large).toBeLessThan(10_000);
  }, 120_000);
});
