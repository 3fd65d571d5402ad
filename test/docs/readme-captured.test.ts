// The README's captured-payload line of "Testing your endpoints", run as written against the
// endpoint that section builds (JWT in test mode, its MERCHANT_GUID checked): the README says the
// library's own handlers answer it 2xx. Review newcomer-2: the line had no `privateKey`, so the
// call went out unsigned and got a 401.

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth, createCallbackRouter } from "../../src/index.js";
import {
  capturedPayload,
  createTestKeys,
  type SendCallbackResult,
  sendCallback,
} from "../../src/testing/index.js";
import { ROOT } from "../adapters/support/runtime.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const line =
  /`(sendCallback\(url, "SendOrderToMerchant", \{ payload: capturedPayload[^`]*\))`/.exec(
    readme,
  )?.[1];
const MERCHANT_GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

let server: Server;
let url = "";
let keys: Awaited<ReturnType<typeof createTestKeys>>;

beforeAll(async () => {
  keys = await createTestKeys();
  const auth = await createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: MERCHANT_GUID,
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    handlers: { SendOrderToMerchant: (order) => ({ InternalOrderId: `M-${order.OrderId}` }) },
  });
  server = createServer(toNodeListener(router)).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/crossborder`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("README captured-payload line", () => {
  it("is in the README", () => {
    expect(line).toBeDefined();
  });

  it("is answered 2xx without problems, as the README says", async () => {
    const run = new Function(
      "sendCallback",
      "capturedPayload",
      "url",
      "keys",
      "MERCHANT_GUID",
      `return ${line};`,
    ) as (...args: unknown[]) => Promise<SendCallbackResult>;
    const result = await run(sendCallback, capturedPayload, url, keys, MERCHANT_GUID);
    expect(result.problems).toEqual([]);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ Success: true });
  });
});
