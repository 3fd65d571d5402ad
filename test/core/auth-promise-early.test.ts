// last3-2: a factory that throws on its own options before createCallbackHandler runs leaves the
// auth promise's rejection unhandled (final3-2's fix is in createCallbackHandler and the router only).
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  createGetCheckoutCartInfoHandler,
  createSendOrderToMerchantHandler,
  createValidateGiftCardHandler,
} from "../../src/index.js";

const unhandled = vi.fn();
beforeEach(() => {
  unhandled.mockReset();
  process.on("unhandledRejection", unhandled);
});
afterEach(() => {
  process.off("unhandledRejection", unhandled);
});
const refused = () => Promise.reject(new Error("createAuth: jwt.keys.test is undefined"));
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

it("cart factory, misspelt parameterNames member", async () => {
  expect(() =>
    createGetCheckoutCartInfoHandler(() => ({ productsList: [] }) as never, {
      auth: refused(),
      parameterNames: { merchantCartTokn: "CartId" },
    } as never),
  ).toThrow();
  await settle();
  expect(unhandled).not.toHaveBeenCalled();
});

it("cart factory, bad methods", async () => {
  expect(() =>
    createGetCheckoutCartInfoHandler(() => ({ productsList: [] }) as never, {
      auth: refused(),
      methods: ["get"],
    } as never),
  ).toThrow();
  await settle();
  expect(unhandled).not.toHaveBeenCalled();
});

it("gift-card factory, verifySession not a function", async () => {
  expect(() =>
    createValidateGiftCardHandler(() => ({ IsValid: true }) as never, {
      auth: refused(),
      verifySession: "yes",
    } as never),
  ).toThrow();
  await settle();
  expect(unhandled).not.toHaveBeenCalled();
});

it("any factory, the function undefined (a handler map's misspelt entry)", async () => {
  expect(() => createSendOrderToMerchantHandler(undefined as never, { auth: refused() })).toThrow(
    /must be a function/,
  );
  await settle();
  expect(unhandled).not.toHaveBeenCalled();
});

it("control: valid options, the same promise: reported, not unhandled", async () => {
  const told: unknown[] = [];
  createSendOrderToMerchantHandler(() => ({ InternalOrderId: "M-1" }), {
    auth: refused(),
    onError: (failure) => void told.push(failure),
  });
  await settle();
  expect(unhandled).not.toHaveBeenCalled();
  expect(told).toHaveLength(1);
});
