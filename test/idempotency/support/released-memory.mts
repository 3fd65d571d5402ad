// Run by window.test.ts as `node --expose-gc --import tsx`: the memory the memory store keeps
// after keys leave it (released, forgotten, read once expired), with `maxEntries: 1000`, after a
// full GC. Prints one JSON line: megabytes grown per scenario (nothing is live at the end of any).
import { createMemoryIdempotencyStore } from "../../../src/index.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");
const collected = gc;
const COUNT = 100_000;

function heapMB(): number {
  collected();
  collected();
  return process.memoryUsage().heapUsed / 1e6;
}

function key(i: number): string {
  return `SendOrderToMerchant:order-${String(i).padStart(12, "0")}`;
}

type Store = ReturnType<typeof createMemoryIdempotencyStore>;
const kept: Store[] = [];

function grown(run: (store: Store, clock: { now: number }) => void): number {
  const clock = { now: 1_000_000 };
  const store = createMemoryIdempotencyStore({ maxEntries: 1_000, now: () => clock.now });
  const before = heapMB();
  run(store, clock);
  const after = heapMB();
  kept.push(store);
  return Number((after - before).toFixed(2));
}

function claimed(claim: unknown): boolean {
  return (claim as { claimed?: unknown }).claimed === true;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

const result = {
  // A function that throws at every delivery (withIdempotency claims, then releases), 200 a
  // second for 500 s, with a 15-minute lease: every lease is released long before its end.
  released: grown((store, clock) => {
    for (let i = 0; i < COUNT; i++) {
      check(claimed(store.claim(key(i), `owner-${i}`, 15 * 60_000)), "claim refused");
      check(store.release(key(i), `owner-${i}`) === true, "release refused");
      clock.now += 5;
    }
  }),
  // One key claimed and released again and again.
  sameKey: grown((store, clock) => {
    for (let i = 0; i < COUNT; i++) {
      check(
        claimed(store.claim("UpdateOrderStatus:o-1:SHIPPED", `owner-${i}`, 30_000)),
        "claim refused",
      );
      check(
        store.release("UpdateOrderStatus:o-1:SHIPPED", `owner-${i}`) === true,
        "release refused",
      );
      clock.now += 0.25;
    }
  }),
  // Records written and forgotten (an earlier version's refusal, deleted at the next delivery).
  forgotten: grown((store, clock) => {
    for (let i = 0; i < COUNT; i++) {
      check(claimed(store.claim(key(i), "o", 15 * 60_000)), "claim refused");
      check(store.complete(key(i), "o", "jr", 24 * 3_600_000) === true, "complete refused");
      check(store.forget(key(i), "jr") === true, "forget refused");
      clock.now += 5;
    }
  }),
  // Leases read once they expired (and so deleted) by get, a shorter renewal ending them first.
  readExpired: grown((store, clock) => {
    for (let i = 0; i < COUNT; i++) {
      check(claimed(store.claim(key(i), "o", 15 * 60_000)), "claim refused");
      check(store.renew(key(i), "o", 1) === true, "renew refused");
      clock.now += 1;
      check(store.get(key(i)) === undefined, "an expired lease was read");
    }
  }),
};
console.log(JSON.stringify(result));
