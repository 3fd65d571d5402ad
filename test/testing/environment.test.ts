// Review testkit-4: in jest's `jsdom` environment (chosen by mistake) the kit failed one global
// after another (`reading 'generateKey'` of an undefined crypto.subtle, `fetch is not a function`),
// and nothing said that the test environment was at fault. Each function now names the missing
// global and the `node` environment.
import { afterEach, expect, it, vi } from "vitest";
import {
  bodyDigest,
  createTestKeys,
  sendCallback,
  signServiceToken,
} from "../../src/testing/index.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

const advice = /testEnvironment: "node".*@vitest-environment node/s;

it.each([
  ["createTestKeys", () => createTestKeys()],
  ["signServiceToken", () => signServiceToken("not a key")],
  ["bodyDigest", () => bodyDigest("{}")],
  ["sendCallback", () => sendCallback("http://127.0.0.1:9/cb", "SendOrderToMerchant")],
] as const)("%s without crypto.subtle names it and the node environment", async (name, call) => {
  vi.stubGlobal("crypto", {});
  const error = (await call().catch((e: unknown) => e)) as Error;
  expect(error.message).toContain(`${name} needs the global crypto.subtle`);
  expect(error.message).toMatch(advice);
});

it.each(["fetch", "structuredClone", "TextEncoder"])(
  "sendCallback without %s names it",
  async (global) => {
    vi.stubGlobal(global, undefined);
    const error = (await sendCallback("http://127.0.0.1:9/cb", "SendOrderToMerchant").catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain(`sendCallback needs the global ${global}`);
    expect(error.message).toMatch(advice);
  },
);

it("sendCallback with its own fetch does not need the global one", async () => {
  vi.stubGlobal("fetch", undefined);
  const keys = await createTestKeys();
  const result = await sendCallback("http://shop.test/cb", "SendOrderToMerchant", {
    privateKey: keys.privateKey,
    fetch: async () => new Response("{}", { status: 500 }),
  });
  expect(result.status).toBe(500);
});
