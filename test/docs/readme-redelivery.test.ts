// The README's "Redelivery" snippet, run as written: its `orders` map and its SendOrderToMerchant
// function, taken from the README, wrapped in `withIdempotency` over a memory store instead of
// Redis (the store changes no answer here), and sent an order, an update of it and a second order.
// (test/docs/snippets.test.ts checks that the whole snippet compiles.)
// Review life-3: the snippet gave the update of an order (new content, so its function runs
// again) a new merchant id, and the next order that same id.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createSendOrderToMerchantHandler,
  type SendOrderToMerchantFunction,
} from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { ROOT } from "../adapters/support/runtime.js";
import { json, post } from "../core/helpers.js";
import { snippets } from "./snippets.js";

const snippet = snippets.find(
  (candidate) =>
    candidate.code.includes("createRedisIdempotencyStore(redis)") &&
    candidate.code.includes("SendOrderToMerchant: withIdempotency("),
);
const code = snippet?.code ?? "";
/** The snippet's `orders` (its stand-in for the merchant's database), as written. */
const ordersLine = /^const orders = .*$/m.exec(code)?.[0];
/** Its SendOrderToMerchant entry, from `withIdempotency(` to its `once)`, as written. */
const wrapped = /SendOrderToMerchant: (withIdempotency\([\s\S]*?\}, once\)),\n/.exec(code)?.[1];
const dir = join(ROOT, ".tmp", `readme-redelivery-${process.pid}`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The snippet's function, in a module of its own: its code as written, a memory store as `once`. */
async function snippetFunction(): Promise<SendOrderToMerchantFunction> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "redelivery.ts");
  writeFileSync(
    file,
    [
      `import { createMemoryIdempotencyStore, withIdempotency } from ${JSON.stringify(join(ROOT, "src/index.js"))};`,
      "const once = { store: createMemoryIdempotencyStore() };",
      ordersLine,
      `export const sendOrderToMerchant = ${wrapped};`,
    ].join("\n"),
  );
  const module = (await import(file)) as { sendOrderToMerchant: SendOrderToMerchantFunction };
  return module.sendOrderToMerchant;
}

describe("README Redelivery snippet", () => {
  it("is found, with its orders map and its SendOrderToMerchant function in withIdempotency", () => {
    expect(snippet, "the Redelivery snippet").toBeDefined();
    expect(ordersLine).toBeDefined();
    expect(wrapped).toBeDefined();
  });

  it("keeps one merchant id per order: an order, an update of it (its function runs again), and a second order get M-1, M-1, M-2", async () => {
    const handler = createSendOrderToMerchantHandler(await snippetFunction(), { auth: false });
    const send = async (payload: object) => {
      const answer = await handler.handle(post(JSON.stringify(payload)));
      expect(answer.status).toBe(200);
      return (json(answer) as { InternalOrderId?: unknown }).InternalOrderId;
    };
    const order = samplePayload("SendOrderToMerchant", { OrderId: "GE-A" });
    const update = { ...order, ShippingMethodCode: "express" }; // new content: not a repeat
    const ids = [
      await send(order),
      await send(update),
      await send(samplePayload("SendOrderToMerchant", { OrderId: "GE-B" })),
      await send(update), // a redelivery of the update: answered from its record
    ];
    expect(ids).toEqual(["M-1", "M-1", "M-2", "M-1"]);
  });
});
