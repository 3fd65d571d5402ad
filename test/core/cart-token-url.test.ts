// Review last3-1b: RemoveRestrictedProducts authenticated by a cart token in the URL (createAuth
// `callbacks: { RemoveRestrictedProducts: { cartToken } }`): the body's CartId holding the same
// token becomes the report's orderId and is printed by the default line.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  type CallbackFailure,
  createAuth,
  createRemoveRestrictedProductsHandler,
} from "../../src/index.js";

const TOKEN = "cart-SECRET-TOKEN-77";
const SECRET = "s3cr3t-header-value-0123456789abcdef";
let spy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterEach(() => spy.mockRestore());

it("the token that authenticated the call is neither printed nor the report's orderId", async () => {
  const auth = await createAuth({
    headerSecret: { name: "x-cb-secret", value: SECRET },
    callbacks: { RemoveRestrictedProducts: { cartToken: { verify: (t: string) => t === TOKEN } } },
  } as never);
  const told: CallbackFailure[] = [];
  const request = {
    method: "POST",
    url: `/cb?merchantCartToken=${TOKEN}`,
    headers: { "x-cb-secret": SECRET, "content-type": "application/json" },
    body: JSON.stringify({
      MerchantGUID: "g",
      CartToken: "svc",
      CartId: TOKEN,
      RemovedProductCodes: ["A"],
    }),
  };
  const make = (onError?: (f: CallbackFailure) => void) =>
    createRemoveRestrictedProductsHandler(
      () => {
        throw new Error("db down");
      },
      { auth, ...(onError ? { onError } : {}) },
    );
  // sanity: a wrong token is refused, so the token is this call's credential
  expect(
    (await make().handle({ ...request, url: "/cb?merchantCartToken=nope" } as never)).status,
  ).toBe(401);
  spy.mockClear();
  expect((await make().handle(request as never)).status).toBe(500);
  expect(String(spy.mock.calls[0]?.[0])).not.toContain(TOKEN);
  await make((f) => void told.push(f)).handle(request as never);
  expect(told[0]?.orderId).toBeUndefined();
});
