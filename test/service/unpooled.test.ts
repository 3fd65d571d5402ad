// Review bunodeno-1: the fetch of the operations that are never retried, when the merchant passed
// none. On Deno, a Deno HttpClient keeping no idle connection, made once; elsewhere, and where
// Deno.createHttpClient is missing or throws, the global fetch.
import { afterEach, expect, it, vi } from "vitest";
import { unpooledFetch } from "../../src/service/unpooled.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A global fetch that records each init it is given. */
function recordingFetch(): RequestInit[] {
  const inits: RequestInit[] = [];
  vi.stubGlobal("fetch", async (_input: string, init: RequestInit) => {
    inits.push(init);
    return new Response("{}");
  });
  return inits;
}

it("passes one client keeping no idle connection on Deno, made on the first call only", async () => {
  const inits = recordingFetch();
  const made: unknown[] = [];
  const client = { name: "HttpClient" };
  vi.stubGlobal("Deno", {
    createHttpClient(options: unknown) {
      made.push(options);
      return client;
    },
  });
  const send = unpooledFetch();
  expect(made).toEqual([]);
  await send("http://service.test/a", { method: "POST", body: "{}" });
  await send("http://service.test/b", { method: "POST", body: "{}" });
  expect(made).toEqual([{ poolMaxIdlePerHost: 0 }]);
  expect(inits).toEqual([
    { method: "POST", body: "{}", client },
    { method: "POST", body: "{}", client },
  ]);
});

it("uses the global fetch where Deno.createHttpClient throws (a host that leaves it out)", async () => {
  const inits = recordingFetch();
  let tries = 0;
  vi.stubGlobal("Deno", {
    createHttpClient() {
      tries += 1;
      throw new Error("not implemented");
    },
  });
  const send = unpooledFetch();
  await send("http://service.test/a", { method: "POST" });
  await send("http://service.test/b", { method: "POST" });
  expect(inits).toEqual([{ method: "POST" }, { method: "POST" }]);
  expect(tries).toBe(1);
});

it("uses the global fetch where there is no Deno.createHttpClient (Node, Bun, Deno 1.x)", async () => {
  const inits = recordingFetch();
  vi.stubGlobal("Deno", {});
  await unpooledFetch()("http://service.test/a", { method: "POST" });
  vi.unstubAllGlobals();
  const again = recordingFetch();
  await unpooledFetch()("http://service.test/a", { method: "POST" });
  expect([...inits, ...again]).toEqual([{ method: "POST" }, { method: "POST" }]);
});
