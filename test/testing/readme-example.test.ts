// The example of the README's "Testing your endpoints" section, with the package's imports
// pointed at the sources: it must keep working as written.
import { createServer } from "node:http";
import { expect, test } from "vitest";
import { toNodeListener } from "../../src/adapters/node.js";
import { createAuth } from "../../src/auth/index.js";
import { type CallbackHandlers, createCallbackRouter } from "../../src/index.js";
import { createTestKeys, samplePayload, sendCallback } from "../../src/testing/index.js";

const handlers: CallbackHandlers = {
  SendOrderToMerchant: (order) => ({
    InternalOrderId: `M-${order.OrderId}`,
    OrderId: order.OrderId,
  }),
};

const MERCHANT_GUID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"; // the GUID your endpoint checks

test("SendOrderToMerchant is answered well-formed", async () => {
  const keys = await createTestKeys();
  const auth = createAuth({
    jwt: { environment: "test", keys: { test: keys.publicKey } },
    merchantGuid: MERCHANT_GUID, // as the quick start's: a payload with another GUID is a 401
  });
  const router = createCallbackRouter({
    basePath: "/crossborder",
    auth,
    handlers,
    onError: () => {},
  });
  const server = createServer(toNodeListener(router)).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };

  const result = await sendCallback(`http://127.0.0.1:${port}/crossborder`, "SendOrderToMerchant", {
    privateKey: keys.privateKey,
    merchantGuid: MERCHANT_GUID, // into the payload's MerchantGUID (the sample's would be a 401)
    payload: samplePayload("SendOrderToMerchant", { OrderId: "GE-TEST-1" }),
  });
  expect(result.problems).toEqual([]);
  expect(result.body).toMatchObject({ Success: true, InternalOrderId: "M-GE-TEST-1" });

  // A refusal is a problem (the service counts the call as failed) unless it is expected.
  const unsigned = await sendCallback(
    `http://127.0.0.1:${port}/crossborder`,
    "SendOrderToMerchant",
    { expectStatus: 401 },
  );
  expect(unsigned).toMatchObject({ status: 401, success: false, problems: [] });
  // The sample's own GUID is not this endpoint's: refused (review docs-3).
  const sampleGuid = await sendCallback(
    `http://127.0.0.1:${port}/crossborder`,
    "SendOrderToMerchant",
    { privateKey: keys.privateKey, expectStatus: 401 },
  );
  expect(sampleGuid).toMatchObject({ status: 401, problems: [] });
  server.close();
});
