// A body the schema refuses costs what its description names, not its size (review AMP-4): zod
// built every issue of a refused body (three per empty product: a million for a 1 MiB order),
// about 10 s and 850 MB of heap, to describe ten.
import { describe, expect, it } from "vitest";
import { type CallbackFailure, createCallbackRouter } from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { encoder } from "./helpers.js";

function router(failures: CallbackFailure[]) {
  return createCallbackRouter({
    basePath: "/cb",
    auth: false,
    handlers: {
      SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }),
      UpdateOrderStatus: () => ({}),
    },
    onError: (failure) => void failures.push(failure),
  });
}

function send(r: ReturnType<typeof router>, name: string, bytes: Uint8Array) {
  return r.handle({
    method: "POST",
    url: `/cb/${name}`,
    headers: { "content-type": "application/json" },
    body: bytes,
  });
}

const order = samplePayload("SendOrderToMerchant") as unknown as Record<string, unknown>;

/** An order whose `n` products are all empty, so each lacks Sku, Price and Quantity. */
function emptyProducts(n: number): string {
  return JSON.stringify({ ...order, Products: Array.from({ length: n }, () => ({})) });
}

/** The best of three handlings of the body, in milliseconds (after one run to warm up). */
async function best(name: string, body: string): Promise<number> {
  const failures: CallbackFailure[] = [];
  const r = router(failures);
  const bytes = encoder.encode(body);
  const first = await send(r, name, bytes);
  expect(first.status).toBe(400);
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await send(r, name, bytes);
    min = Math.min(min, performance.now() - start);
  }
  return min;
}

describe("a refused body costs what its description names (AMP-4)", () => {
  it("8 times the empty products take less than 24 times as long", async () => {
    const small = await best("SendOrderToMerchant", emptyProducts(20_000));
    const large = await best("SendOrderToMerchant", emptyProducts(160_000));
    // Before: about 0.4 s and 3.5 s (zod builds 60,000 and 480,000 issues); the growth is the
    // JSON parsing and the walk up to the eleventh failure.
    expect(large / small, `${small} ms, ${large} ms`).toBeLessThan(24);
    expect(large).toBeLessThan(2_000);
  }, 120_000);

  it("a 1 MiB order of 340,000 empty products is refused in under 2 s, naming 10 issues", async () => {
    const body = emptyProducts(340_000);
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    const failures: CallbackFailure[] = [];
    const r = router(failures);
    const start = performance.now();
    const response = await send(r, "SendOrderToMerchant", encoder.encode(body));
    const elapsed = performance.now() - start;
    // Before: 9 to 12 s and 850 MB of heap.
    expect(elapsed).toBeLessThan(2_000);
    expect(response.status).toBe(400);
    const description = (JSON.parse(response.body) as { Description: string }).Description;
    // zod's own issues for the first failing products, in its order, then that there are more.
    expect(description).toBe(
      [
        "Products.0.Price: Invalid input: expected number, received undefined",
        "Products.0.Quantity: Invalid input: expected number, received undefined",
        "Products.0.Sku: Invalid input: expected string, received undefined",
        "Products.1.Price: Invalid input: expected number, received undefined",
        "Products.1.Quantity: Invalid input: expected number, received undefined",
        "Products.1.Sku: Invalid input: expected string, received undefined",
        "Products.2.Price: Invalid input: expected number, received undefined",
        "Products.2.Quantity: Invalid input: expected number, received undefined",
        "Products.2.Sku: Invalid input: expected string, received undefined",
        "Products.3.Price: Invalid input: expected number, received undefined",
        "… and more",
      ].join("; "),
    );
    expect(failures[0]?.reason).toBe(`schema: ${description}`);
  }, 60_000);

  it("a failure before a long list of failing items does not make zod walk the list", async () => {
    // OrderId is refused first: the whole order is the failing object, but its products are
    // described item by item, never by zod on the whole order.
    const body = JSON.stringify({
      ...order,
      OrderId: 5,
      Products: Array.from({ length: 300_000 }, () => ({})),
    });
    const failures: CallbackFailure[] = [];
    const start = performance.now();
    const response = await send(router(failures), "SendOrderToMerchant", encoder.encode(body));
    expect(performance.now() - start).toBeLessThan(2_000);
    expect(response.status).toBe(400);
    expect(failures[0]?.reason).toMatch(
      /^schema: OrderId: Invalid input: expected string, received number; Products\.0\.Price: .*… and more$/,
    );
  }, 60_000);

  it("valid items before the failing one are walked once, linearly", async () => {
    // The body the checker accepts up to the last product, which has no price: the walk checks
    // every product before it (no issue), then zod runs on that product alone.
    const product = { Sku: "S", Price: 1, Quantity: 1 };
    const body = (n: number) =>
      JSON.stringify({
        ...order,
        Products: [...Array.from({ length: n }, () => product), { Sku: "S", Quantity: 1 }],
      });
    const small = await best("SendOrderToMerchant", body(3_000));
    const large = await best("SendOrderToMerchant", body(24_000));
    expect(large / small, `${small} ms, ${large} ms`).toBeLessThan(24);
    expect(large).toBeLessThan(2_000);
  }, 60_000);
});
