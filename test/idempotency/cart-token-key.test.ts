// Review privacy-2: RedeemGiftCard or RefundGiftCard without an OrderId (a redemption at checkout)
// has a default key holding the shopper's CartToken in clear, and each reason quoting the key (a
// store_failure on onError and on the default line, the engine's report of a store error) printed
// it. The key itself is kept (a key change would make a redelivery that straddles a deploy redeem
// the card twice, README "Upgrading and rolling deploys"): the cart token is masked wherever a key
// is printed, in every spelling, also by reports after the answer.
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  type CallbackFailure,
  createMemoryIdempotencyStore,
  createRedeemGiftCardHandler,
  createRefundGiftCardHandler,
  type IdempotencyStore,
  withIdempotency,
} from "../../src/index.js";

const TOKEN = "8f2d6e1a-93b4-4c57-a0e2-5b9d7c3f1e84";
const HEAD = "8f2d6e1a";

function payload(callback: "RedeemGiftCard" | "RefundGiftCard") {
  const fixture = JSON.parse(
    readFileSync(new URL(`../fixtures/${callback}.json`, import.meta.url), "utf8"),
  );
  delete fixture.OrderId;
  return { ...fixture, CartToken: TOKEN };
}

/** A memory store whose `complete` fails, and whose other operations fail as asked. */
function failingStore(failing: { claim?: boolean; complete?: boolean }): {
  store: IdempotencyStore;
  keys: string[];
} {
  const memory = createMemoryIdempotencyStore();
  const keys: string[] = [];
  return {
    keys,
    store: {
      claim: (key, owner, lease) => {
        keys.push(key);
        if (failing.claim) throw new Error(`ECONNRESET while claiming "${key}"`);
        return memory.claim(key, owner, lease);
      },
      get: (key) => memory.get(key),
      complete: (key) => {
        throw new Error(`ECONNRESET writing ${JSON.stringify(key)}`);
      },
      renew: (key, owner, lease) => memory.renew(key, owner, lease),
      release: (key, owner) => memory.release(key, owner),
    },
  };
}

let printed: string[];
const spies: ReturnType<typeof vi.spyOn>[] = [];
beforeEach(() => {
  printed = [];
  for (const method of ["error", "warn"] as const) {
    spies.push(
      vi.spyOn(console, method).mockImplementation((...args) => void printed.push(args.join(" "))),
    );
  }
});
afterEach(() => {
  for (const spy of spies.splice(0)) spy.mockRestore();
});

const factories = {
  RedeemGiftCard: createRedeemGiftCardHandler,
  RefundGiftCard: createRefundGiftCardHandler,
} as const;

function shown(reports: readonly CallbackFailure[]): string {
  return [
    JSON.stringify(reports),
    ...reports.map((r) => {
      const error = r.error as Error | undefined;
      return `${r.reason} ${error?.message} ${error?.stack} ${String((error as { cause?: Error })?.cause?.message)}`;
    }),
    ...printed,
  ].join("\n");
}

it.each(["RedeemGiftCard", "RefundGiftCard"] as const)(
  "privacy-2: %s without an OrderId: the key keeps the cart token (compatibility), no report or line prints it",
  async (callback) => {
    for (const withOnError of [true, false]) {
      const reports: CallbackFailure[] = [];
      const { store, keys } = failingStore({ complete: true });
      const handler = factories[callback](
        withIdempotency(() => ({ Success: true, IsValid: true, Balance: "0.00" }) as never, {
          store,
          storeTimeoutMs: 50,
        }),
        { auth: false, ...(withOnError ? { onError: (f) => void reports.push(f) } : {}) },
      );
      const response = await handler.handle({
        method: "POST",
        url: "/cb",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload(callback)),
      });
      expect(response.status).toBe(200);
      // Unchanged: the key a redelivery across a deploy finds its record under.
      expect(keys[0]).toMatch(new RegExp(`^${callback}:${TOKEN}:[A-Za-z0-9_-]{43}$`));
      // The record retried in the background, then given up: reported after the answer.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const text = shown(reports);
      if (withOnError) {
        expect(reports.map((r) => r.kind)).toContain("store_failure");
        expect(text).toMatch(new RegExp(`could not record the result of ${callback}:\\*\\*\\*:`));
      } else expect(printed.join("\n")).toMatch(/store_failure: withIdempotency: could not record/);
      expect(text).not.toContain(HEAD);
    }
  },
);

it("privacy-2: a store failing to claim a key holding the cart token: the 500's report masks it", async () => {
  const reports: CallbackFailure[] = [];
  const { store } = failingStore({ claim: true });
  const handler = createRedeemGiftCardHandler(
    withIdempotency(() => ({ Success: true, IsValid: true, Balance: "0.00" }) as never, { store }),
    { auth: false, onError: (f) => void reports.push(f) },
  );
  const response = await handler.handle({
    method: "POST",
    url: "/cb",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payload("RedeemGiftCard")),
  });
  expect(response.status).toBe(500);
  expect(reports).toHaveLength(1);
  expect(shown(reports)).toContain("ECONNRESET while claiming");
  expect(shown(reports)).not.toContain(HEAD);
  expect(String(response.body)).not.toContain(HEAD);
});
