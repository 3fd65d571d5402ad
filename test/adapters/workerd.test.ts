import { dirname } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceKeys, type ServiceKeys } from "./support/keys.js";
import { bundle, removeBundle } from "./support/runtime.js";
import { roundTrips, type Send } from "./support/suite.js";

/** Short, so the 408 case takes a second (the library's default is 30 s). */
const BODY_TIMEOUT_MS = 1_000;

let keys: ServiceKeys;
let scriptPath: string | undefined;
let mf: Miniflare;
let baseUrl: string;
beforeAll(async () => {
  keys = await createServiceKeys();
  scriptPath = await bundle(new URL("./runtimes/worker.ts", import.meta.url).pathname);
  mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    // No nodejs_compat: the engine and the adapter must run on Web APIs alone.
    compatibilityDate: "2025-09-01",
    bindings: { SERVICE_PUBLIC_KEY: keys.publicKeyPem, BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) },
    host: "127.0.0.1",
    port: 0,
  });
  baseUrl = (await mf.ready).origin;
});
afterAll(async () => {
  await mf?.dispose();
  removeBundle(scriptPath);
});

const send: Send = async (path, init) =>
  (await mf.dispatchFetch(`http://merchant.example${path}`, {
    ...(init as object),
    headers: { "CF-Connecting-IP": "203.0.113.7", ...(init?.headers as Record<string, string>) },
  })) as unknown as Response;

describe("fetch adapter in workerd (Miniflare)", () => {
  roundTrips({
    send: () => send,
    keys: () => keys,
    remoteAddress: /^from 203\.0\.113\.7$/,
    // Local workerd resets the connection once the body is refused, and the client may still be
    // writing a 2 MiB body then (ECONNRESET on write, now and then). Cloudflare's edge does not
    // expose clients to that; one chunk over the limit still proves the limit holds while reading.
    streamedSize: 1024 * 1024 + 64 * 1024,
    // Over Miniflare's port: workerd leaves out the 408's Connection: close, and closes the
    // connection all the same.
    bodyTimeout: {
      baseUrl: () => baseUrl,
      ms: BODY_TIMEOUT_MS,
      connectionHeader: false,
      closes: true,
    },
  });

  it("answers paths the router does not serve with 404", async () => {
    const response = await send("/crossborder/Nope", { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ ErrorCode: "NOT_FOUND" });
  });
});
