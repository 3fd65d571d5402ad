import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createServiceKeys, fixture, type ServiceKeys } from "./support/keys.js";
import { BIN, bundle, type ChildServer, removeBundle, startServer } from "./support/runtime.js";
import { roundTrips, signedPost } from "./support/suite.js";

/** Short, so the 408 case takes a second (the library's default is 30 s). */
const BODY_TIMEOUT_MS = 1_000;

let keys: ServiceKeys;
let script: string | undefined;
let server: ChildServer;
beforeAll(async () => {
  keys = await createServiceKeys();
  script = await bundle(new URL("./runtimes/deno-server.ts", import.meta.url).pathname);
  server = await startServer(
    `${BIN}/deno`,
    [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--allow-env=SERVICE_PUBLIC_KEY,BODY_TIMEOUT_MS",
      script,
    ],
    { env: { SERVICE_PUBLIC_KEY: keys.publicKeyPem, BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) } },
  );
});
afterAll(async () => {
  await server?.stop();
  removeBundle(script);
});

describe("fetch adapter on Deno.serve", () => {
  roundTrips({
    send: () => server.send,
    keys: () => keys,
    remoteAddress: /^from 127\.0\.0\.1$/,
    // Deno sends the 408's Connection: close but keeps reading a client that goes on sending
    // (measured by review A, also without the library; README, "Deno").
    bodyTimeout: {
      baseUrl: () => server.baseUrl,
      ms: BODY_TIMEOUT_MS,
      connectionHeader: true,
      closes: false,
    },
  });

  it("prints PaymentDetails masked in Deno's console, alone and inside the order (Deno.customInspect)", async () => {
    const tag = `log-${Date.now()}`;
    const init = signedPost(await keys.sign(), fixture("SendOrderToMerchant"));
    init.headers = { ...(init.headers as Record<string, string>), "x-log-order": tag };
    const response = await server.send("/crossborder/SendOrderToMerchant", init);
    expect(response.status).toBe(200);
    // The merchant logged before answering; the pipe delivers it a moment later.
    const block = await vi.waitFor(
      () => {
        const output = server.output();
        const end = output.indexOf(`END ${tag}`);
        expect(end, output).toBeGreaterThan(-1);
        return output.slice(output.indexOf(`BEGIN ${tag}`), end);
      },
      { timeout: 5_000, interval: 20 },
    );
    const views = new Map(
      block
        .split(/\n(?=(?:DETAILS|ORDER|NESTED|INSPECT|DIR|CUT|SHALLOW|DEEP)\b)/)
        .slice(1)
        .map((view) => [view.slice(0, view.search(/\s/)), view] as const),
    );
    expect([...views.keys()]).toEqual([
      "DETAILS",
      "ORDER",
      "NESTED",
      "INSPECT",
      "DIR",
      "CUT",
      "SHALLOW",
      "DEEP",
    ]);
    for (const label of ["DETAILS", "ORDER", "NESTED", "INSPECT", "DIR", "CUT"]) {
      const view = views.get(label);
      expect(view, label).toMatch(/CardNumber: "\*{12}1111"/);
      expect(view, label).toMatch(/CVVNumber: "\*\*\*"/);
      expect(view, label).toMatch(/ExpirationDate: "2030-03-31"/);
      expect(view, label).not.toContain("[object Object]");
    }
    expect(views.get("ORDER")).toMatch(/PaymentDetails: \{\s+CardNumber: "\*{12}1111"/);
    // Deno's depth, as for a plain object in the same place: the note is cut one level below the
    // details, and details past the depth print as [Object].
    expect(views.get("CUT")).toMatch(/Note: \{ a: \[Object\] \}/);
    expect(views.get("SHALLOW")?.trim()).toBe("SHALLOW { wrap: [Object] }");
    expect(views.get("DEEP")).toMatch(/l4: \{ details: \[Object\] \}/);
    expect(views.get("DEEP")).not.toContain("CardNumber");
    expect(block).not.toContain("4111111111111111");
    expect(block).not.toMatch(/"737"/);
  });
});
