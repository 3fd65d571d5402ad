// Review PIT-5: `auth: false` left on in production accepted forged calls without a word. Creating
// a handler or router with it now says so once per process on console.warn, only when
// NODE_ENV is "production"; the calls themselves do no more work than before.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

type Lib = typeof import("../../src/index.js");

/** A fresh copy of the library: the warning is once per process (per module instance). */
async function freshLibrary(): Promise<Lib> {
  vi.resetModules();
  return import("../../src/index.js");
}

const handlers = { SendOrderToMerchant: () => ({ InternalOrderId: "M-1" }) };
let warn: ReturnType<typeof vi.spyOn>;
const saved = process.env.NODE_ENV;

beforeEach(() => {
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(() => {
  warn.mockRestore();
  process.env.NODE_ENV = saved;
});

describe("auth: false in production (review PIT-5)", () => {
  it("warns once per process on console.warn, naming the option, at creation", async () => {
    process.env.NODE_ENV = "production";
    const lib = await freshLibrary();
    const router = lib.createCallbackRouter({ auth: false, handlers, onError: () => {} });
    lib.createCallbackRouter({ auth: false, handlers, onError: () => {} });
    expect(warn).toHaveBeenCalledTimes(1);
    const [line] = warn.mock.calls[0] as [string];
    expect(line).toMatch(/auth: false/);
    expect(line).toMatch(/NODE_ENV is "production"/);
    expect(line).toMatch(/any caller/);
    // The calls add nothing: a forged one is still answered (the option says so), silently.
    const { toFetch } = await import("../../src/adapters/fetch.js");
    const response = await toFetch(router)(
      new Request("http://merchant.test/SendOrderToMerchant", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ OrderId: "FORGED-1", MerchantGUID: "x", Products: [] }),
      }),
    );
    expect(response.status).toBeLessThan(500);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("says nothing outside production, or with an authenticator", async () => {
    process.env.NODE_ENV = "development";
    let lib = await freshLibrary();
    lib.createCallbackRouter({ auth: false, handlers });
    delete process.env.NODE_ENV;
    lib = await freshLibrary();
    lib.createCallbackRouter({ auth: false, handlers });
    process.env.NODE_ENV = "production";
    lib = await freshLibrary();
    lib.createCallbackRouter({
      auth: lib.createAuth({ basic: { username: "u", password: "a-long-enough-password-1" } }),
      handlers,
    });
    expect(warn).not.toHaveBeenCalled();
  });
});
