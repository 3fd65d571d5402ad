// Review bunodeno-1: the fetch of the operations that are never retried, when the merchant passed
// none. On Deno, a Deno HttpClient keeping no idle connection per request, closed with its answer
// (review second-deno-1/2); elsewhere, and where
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

/** A stand-in for Deno.createHttpClient, recording what it made and what was closed. */
function denoClients() {
  const made: unknown[] = [];
  const clients: { closed: number }[] = [];
  vi.stubGlobal("Deno", {
    createHttpClient(options: unknown) {
      made.push(options);
      const client = {
        closed: 0,
        close() {
          client.closed += 1;
        },
      };
      clients.push(client);
      return client;
    },
  });
  return { made, clients };
}

it("passes a client keeping no idle connection per request on Deno, closed once its body is read", async () => {
  const inits = recordingFetch();
  const { made, clients } = denoClients();
  const send = unpooledFetch();
  expect(made).toEqual([]);
  const first = await send("http://service.test/a", { method: "POST", body: "{}" });
  expect(clients.map((c) => c.closed)).toEqual([0]);
  expect(await first.text()).toBe("{}");
  await send("http://service.test/b", { method: "POST", body: "{}" }).then((r) => r.text());
  expect(made).toEqual([{ poolMaxIdlePerHost: 0 }, { poolMaxIdlePerHost: 0 }]);
  expect(clients.map((c) => c.closed)).toEqual([1, 1]);
  expect(inits).toEqual([
    { method: "POST", body: "{}", client: clients[0] },
    { method: "POST", body: "{}", client: clients[1] },
  ]);
});

it("closes the request's client when its body is cancelled, fails, or fetch rejects", async () => {
  const { clients } = denoClients();
  const send = unpooledFetch();
  vi.stubGlobal("fetch", async () => new Response("{}", { status: 201, statusText: "Made" }));
  const cancelled = await send("http://service.test/a", { method: "POST" });
  expect([cancelled.status, cancelled.statusText]).toEqual([201, "Made"]);
  await cancelled.body?.cancel();
  vi.stubGlobal("fetch", async () => {
    const broken = new ReadableStream({
      pull(controller) {
        controller.error(new Error("reset"));
      },
    });
    return new Response(broken);
  });
  const failed = await send("http://service.test/b", { method: "POST" });
  await expect(failed.text()).rejects.toThrow("reset");
  vi.stubGlobal("fetch", async () => {
    throw new DOMException("aborted", "AbortError");
  });
  await expect(send("http://service.test/c", { method: "POST" })).rejects.toThrow("aborted");
  vi.stubGlobal("fetch", async () => new Response(null, { status: 204 }));
  await send("http://service.test/d", { method: "POST" });
  expect(clients.map((c) => c.closed)).toEqual([1, 1, 1, 1]);
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
