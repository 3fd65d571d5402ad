import { dirname } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceKeys } from "../adapters/support/keys.js";
import { bundle, ROOT, removeBundle } from "../adapters/support/runtime.js";
import type { Send } from "../adapters/support/suite.js";
import {
  assertBuilt,
  captureExampleLog,
  exampleEnv,
  exampleKeys,
  FLOW_LOG,
  merchantFlow,
} from "./support/flow.js";

/** What the example logged on the console (it runs in this process). */
const logged = captureExampleLog();

let keys: ServiceKeys;
let scriptPath: string | undefined;
let mf: Miniflare;
beforeAll(async () => {
  assertBuilt();
  keys = await exampleKeys();
  // What wrangler does: bundle src/index.ts, resolving `crossborder-callbacks` to the package.
  scriptPath = await bundle(`${ROOT}examples/cloudflare-worker/src/index.ts`);
  const { PORT: _port, HOST: _host, ...vars } = exampleEnv(keys);
  mf = new Miniflare({
    modules: true,
    scriptPath,
    modulesRoot: dirname(scriptPath),
    compatibilityDate: "2025-09-01",
    bindings: vars,
    host: "127.0.0.1",
    port: 0,
  });
  await mf.ready;
});
afterAll(async () => {
  await mf?.dispose();
  removeBundle(scriptPath);
});

const send: Send = async (path, init) =>
  (await mf.dispatchFetch(
    `https://merchant.example${path}`,
    init as object,
  )) as unknown as Response;

describe("examples/cloudflare-worker (workerd via Miniflare)", () => {
  merchantFlow(
    () => send,
    () => keys,
  );

  it("logged each refusal once through the default onError, and nothing else", () => {
    expect(logged).toStrictEqual(FLOW_LOG);
  });
});
