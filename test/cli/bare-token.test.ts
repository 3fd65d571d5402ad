// Review final3-3: README (simulate): the bare token goes with "the first redelivery, or the first captured
// form where the run has no redelivery". In a run with the cart first (the default order), it goes
// with the cart's captured GET instead, and a Bearer-only guard on the order callbacks passes.
import { afterAll, beforeAll, expect, it } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { rowProblems, simulate } from "../../src/cli/simulate.js";
import { createCallbackRouter } from "../../src/index.js";
import { createTestKeys, type TestKeys } from "../../src/testing/index.js";
import { cartFixture, listen, MERCHANT_GUID, type RunningServer } from "../testing/helpers.js";

let keys: TestKeys;
let server: RunningServer;
const seen: string[] = [];
beforeAll(async () => {
  keys = await createTestKeys();
  const router = createCallbackRouter({
    basePath: "/cb",
    auth: createAuth({
      jwt: { environment: "test", keys: { test: keys.publicKey } },
      merchantGuid: MERCHANT_GUID,
    }),
    handlers: {
      GetCheckoutCartInfo: () => cartFixture() as never,
      SendOrderToMerchant: (o) => ({ InternalOrderId: `M-${o.OrderId}` }),
    },
    onError: () => {},
  });
  // A guard (express-jwt style) in front of the order callbacks only: it requires "Bearer ".
  server = await listen((req, res) => {
    const header = req.headers.authorization ?? "";
    const form = header.startsWith("Bearer ") ? "Bearer" : header === "" ? "none" : "bare";
    seen.push(`${req.method} ${(req.url ?? "").split("?")[0]} ${form}`);
    if (!(req.url ?? "").includes("GetCheckoutCartInfo") && form !== "Bearer") {
      res.writeHead(401, { "content-type": "application/json" });
      res.end("{}");
      return;
    }
    toNodeListener(router)(req, res);
  });
});
afterAll(async () => {
  await server?.close();
});

it("the first redelivery carries the bare token, so a Bearer-only guard on SendOrderToMerchant fails the run", async () => {
  const rows = await simulate({
    url: `${server.origin}/cb`,
    callbacks: ["GetCheckoutCartInfo", "SendOrderToMerchant"],
    privateKey: keys.privateKey,
    merchantGuid: MERCHANT_GUID,
  });
  expect(seen).toContain("POST /cb/SendOrderToMerchant bare");
  expect(rows.flatMap(rowProblems).some((p) => /bare token/.test(p))).toBe(true);
});
