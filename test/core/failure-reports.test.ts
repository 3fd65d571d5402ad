// What onError and the default console line receive in the corners of the failure reporting
// (review ops: 5, 6, 8, 10).
import vm from "node:vm";
import { describe, expect, it, vi } from "vitest";
import {
  CallbackError,
  type CallbackFailure,
  createCallbackRouter,
  createUpdateOrderStatusHandler,
} from "../../src/index.js";

const body = '{"OrderId":"1","StatusCode":"x"}';
const post = { method: "POST", url: "/x", headers: {}, body };

describe("onError", () => {
  it("an async onError from another realm that rejects leaves no unhandled rejection (ops-5)", async () => {
    const unhandled: unknown[] = [];
    const listener = (error: unknown) => void unhandled.push(error);
    process.on("unhandledRejection", listener);
    const onError = vm.runInNewContext("(async () => { throw new Error('log shipper down') })");
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw new Error("boom");
      },
      { auth: false, onError },
    );
    const response = await handler.handle(post);
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.off("unhandledRejection", listener);
    expect(response.status).toBe(500);
    expect(unhandled.map(String)).toEqual([]);
  });

  it.each([
    [
      "throw undefined",
      () => {
        throw undefined;
      },
    ],
    ["Promise.reject()", () => Promise.reject()],
  ])("%s reaches onError as a NonError (ops-6)", async (_label, fn) => {
    const failures: CallbackFailure[] = [];
    const handler = createUpdateOrderStatusHandler(fn as never, {
      auth: false,
      onError: (failure) => void failures.push(failure),
    });
    const response = await handler.handle(post);
    expect(response.status).toBe(500);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.error).toBeInstanceOf(Error);
    expect(failures[0]?.error).toMatchObject({ name: "NonError", message: "undefined" });
  });

  it("the default console line says undefined was thrown (ops-6)", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw undefined;
      },
      { auth: false },
    );
    await handler.handle(post);
    const line = String(spy.mock.calls[0]?.[0]);
    spy.mockRestore();
    expect(line).toMatch(/the handler threw \(NonError: undefined\)/);
  });

  it("a CallbackError whose message getter throws is answered with its code as the message (ops-8)", async () => {
    const failures: CallbackFailure[] = [];
    const error = new CallbackError("OUT_OF_STOCK", "x");
    Object.defineProperty(error, "message", {
      get() {
        throw new Error("getter");
      },
    });
    const handler = createUpdateOrderStatusHandler(
      () => {
        throw error;
      },
      { auth: false, onError: (failure) => void failures.push(failure) },
    );
    const response = await handler.handle(post);
    const answer = JSON.parse(response.body);
    expect(answer.ErrorCode).toBe("OUT_OF_STOCK");
    expect(answer.Message).not.toBe("undefined");
    expect(answer.Message).toBe("OUT_OF_STOCK");
    expect(failures[0]?.reason).toBe("OUT_OF_STOCK: (its message could not be read)");
  });
});

describe("the router's 404 (ops-10)", () => {
  it("names the method and the path asked for, never the query", async () => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      basePath: "/crossborder",
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    const response = await router.handle({
      method: "POST",
      url: "/api/crossborder/UpdateOrderStatus?secret=s3cr3t",
      headers: {},
      body: "{}",
    });
    expect(response.status).toBe(404);
    expect(failures[0]?.reason).toBe(
      "no callback at this path: POST /api/crossborder/UpdateOrderStatus",
    );
    expect(failures[0]?.reason).not.toContain("s3cr3t");
  });

  // Review adversary (ADVERSARY-2): the path was quoted with its escapes as sent, so a card number
  // written `%34%31…` (or with one digit escaped) was masked nowhere.
  it.each([
    ["every digit escaped", "/x/%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"],
    ["one digit escaped", "/x/411111111111111%31"],
  ])("names a path by its decoded text, masked: %s", async (_label, path) => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    const response = await router.handle({ method: "POST", url: path, headers: {}, body: "{}" });
    expect(response.status).toBe(404);
    expect(failures[0]?.reason).toBe("no callback at this path: POST /x/************1111");
  });

  // Review second-doubt (SECOND-DOUBT-5): every ASCII escape was decoded (`%2F` and `%3F` read as
  // another path with a query), and a card number escaped twice was quoted as sent.
  it.each([
    ["other escapes kept", "/a%2Fb%3Fx=/%34111111111111111", "/a%2Fb%3Fx=/************1111"],
    [
      "escaped twice",
      `/x/${[..."4111111111111111"].map((d) => `%25${(0x30 + Number(d)).toString(16)}`).join("")}`,
      "/x/************1111",
    ],
  ])("decodes only what spells a card number: %s", async (_label, path, shown) => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    await router.handle({ method: "POST", url: path, headers: {}, body: "{}" });
    expect(failures[0]?.reason).toBe(`no callback at this path: POST ${shown}`);
  });

  it("names a path whose escapes are not UTF-8 as sent", async () => {
    const failures: CallbackFailure[] = [];
    const router = createCallbackRouter({
      auth: false,
      onError: (failure) => void failures.push(failure),
      handlers: { UpdateOrderStatus: () => {} },
    });
    await router.handle({ method: "POST", url: "/x/%E0%A4%A/%zz", headers: {}, body: "{}" });
    expect(failures[0]?.reason).toBe("no callback at this path: POST /x/%E0%A4%A/%zz");
  });
});
