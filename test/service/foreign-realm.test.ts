// Review testkit-2: under vitest's `jsdom` environment the chunks of an answer's body are a
// Uint8Array of another realm than the library's, and the client read every answer of the
// simulator as empty (`INVALID_RESPONSE … received undefined`). The bytes come here from a
// node:vm context; the client must read them as the bytes they are.
import { expect, it } from "vitest";
import { foreignBytes } from "../support/foreign-realm.js";
import { clientFor, startSimulator } from "./helpers.js";

/** `fetch`, its answers' bodies streamed in chunks of another realm. */
async function foreignFetch(input: string, init: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const body = new ReadableStream({
    start(controller) {
      // Two pieces, so the reader joins them.
      const half = Math.floor(bytes.length / 2);
      controller.enqueue(foreignBytes(bytes.subarray(0, half)));
      controller.enqueue(foreignBytes(bytes.subarray(half)));
      controller.close();
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

it("reads an answer whose body comes in bytes of another realm", async () => {
  const simulator = await startSimulator();
  const client = clientFor(simulator, { fetch: foreignFetch });
  // The token's answer, then the operation's.
  const result = await client.calculateBillingSummary({
    subscriptionId: "SUB-PHYSICAL-1",
    currencyCode: "EUR",
    products: [{ code: "SKU-1", quantity: 2, price: 19.9 }],
  });
  expect(result.calculated).toBe(true);
  expect(simulator.requests.map((request) => request.operation)).toEqual([
    "getAuthenticationToken",
    "calculateBillingSummary",
  ]);
});
