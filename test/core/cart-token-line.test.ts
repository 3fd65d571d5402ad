// Review last3-1: the default onError line still prints the cart token: RemoveRestrictedProducts' CartId,
// which this library (README simulate --cart-token, testing/send.ts) treats as the merchant cart
// token that GetCheckoutCartInfo's createAuth cartToken verifies.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { type CallbackFailure, createAuth, createCallbackRouter } from "../../src/index.js";

const TOKEN = "cart-SECRET-TOKEN-77";
const SECRET = "s3cr3t-header-value-0123456789abcdef";
let spy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterEach(() => spy.mockRestore());

async function router(onError?: (f: CallbackFailure) => void) {
  const auth = await createAuth({
    headerSecret: { name: "x-cb-secret", value: SECRET },
    cartToken: { verify: (given: string) => given === TOKEN },
  });
  return createCallbackRouter({
    basePath: "/cb",
    auth,
    ...(onError === undefined ? {} : { onError }),
    handlers: {
      GetCheckoutCartInfo: () => ({ productsList: [] }) as never,
      RemoveRestrictedProducts: () => {
        throw new Error("db down");
      },
    },
  });
}

it("the token is GetCheckoutCartInfo's credential (sanity: 200 with it, 401 without)", async () => {
  const r = await router();
  const get = (t: string) =>
    r.handle({
      method: "GET",
      url: `/cb/GetCheckoutCartInfo?merchantCartToken=${t}`,
      headers: { "x-cb-secret": SECRET },
    } as never);
  expect((await get(TOKEN)).status).toBe(200);
  expect((await get("other")).status).toBe(401);
});

it("a RemoveRestrictedProducts failure: the default line does not print the cart token", async () => {
  const r = await router();
  const res = await r.handle({
    method: "POST",
    url: "/cb/RemoveRestrictedProducts",
    headers: { "x-cb-secret": SECRET, "content-type": "application/json" },
    body: JSON.stringify({
      MerchantGUID: "g",
      CartToken: "service-sendcart-token",
      CartId: TOKEN, // what `--cart-token` writes here (README, simulate options)
      RemovedProductCodes: ["SKU-1"],
    }),
  } as never);
  expect(res.status).toBe(500);
  const lines = spy.mock.calls.map((call: unknown[]) => String(call[0]));
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toContain(TOKEN);
});
