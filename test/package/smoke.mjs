// Imports every subpath of the installed package through its ESM entry points.
import assert from "node:assert/strict";
import * as root from "crossborder-callbacks";
import * as express from "crossborder-callbacks/express";
import * as fetchAdapter from "crossborder-callbacks/fetch";
import * as koa from "crossborder-callbacks/koa";
import * as node from "crossborder-callbacks/node";
import * as postgres from "crossborder-callbacks/postgres";
import * as redis from "crossborder-callbacks/redis";
import * as service from "crossborder-callbacks/service";
import * as testing from "crossborder-callbacks/testing";

// The namespace as a plain object: one factory per callback.
const exported = { ...root };
for (const name of root.CALLBACK_NAMES) {
  assert.equal(typeof exported[`create${name}Handler`], "function", `create${name}Handler`);
}
assert.equal(root.CALLBACK_NAMES.length, 14);
assert.equal(typeof root.createCallbackRouter, "function");
assert.equal(typeof root.createAuth, "function");
assert.equal(typeof express.toExpress, "function");
assert.equal(typeof koa.toKoa, "function");
assert.equal(typeof fetchAdapter.toFetch, "function");
assert.equal(typeof node.toNodeListener, "function");
assert.equal(typeof testing.createTestKeys, "function");
assert.equal(typeof service.createServiceClient, "function");
assert.equal(typeof testing.createServiceSimulator, "function");
assert.equal(typeof testing.idempotencyStoreConformance, "function");

// The database subpaths import without their clients installed (they are optional peers, not
// installed here): nothing loads `redis`, `ioredis` or `pg`; the merchant passes their client.
assert.equal(typeof redis.createRedisIdempotencyStore, "function");
assert.equal(typeof postgres.createPostgresIdempotencyStore, "function");
for (const [name, create] of [
  ["redis", redis.createRedisIdempotencyStore],
  ["postgres", postgres.createPostgresIdempotencyStore],
]) {
  assert.throws(() => create({}), TypeError, `${name}: a non-client is refused clearly`);
}
for (const peer of ["redis", "ioredis", "pg"]) {
  await assert.rejects(import(peer), /Cannot find (package|module)/, `${peer} is not installed`);
}

// The default store, through the installed package: the second delivery does not run again.
let runs = 0;
const createOrder = root.withIdempotency(async () => {
  runs++;
  return { InternalOrderId: "M-1" };
});
const once = root.createSendOrderToMerchantHandler(createOrder, { auth: false });
const order = JSON.stringify(testing.samplePayload("SendOrderToMerchant"));
for (let i = 0; i < 2; i++) {
  const answer = await once.handle({ method: "POST", url: "/", headers: {}, body: order });
  assert.equal(answer.status, 200);
}
assert.equal(runs, 1);

// One real call through the installed package: a signed order, answered by the engine.
const keys = await testing.createTestKeys();
const auth = await root.createAuth({
  jwt: { environment: "test", keys: { test: keys.publicKey } },
});
const handler = root.createSendOrderToMerchantHandler(
  (order) => ({ InternalOrderId: `M-${order.OrderId}` }),
  { auth, onError: () => {} },
);
const body = JSON.stringify(testing.samplePayload("SendOrderToMerchant"));
const token = await testing.signServiceToken(keys.privateKey);
const response = await handler.handle({
  method: "POST",
  url: "/SendOrderToMerchant",
  headers: { authorization: `Bearer ${token}` },
  body,
});
assert.equal(response.status, 200);
assert.equal(JSON.parse(response.body).Success, true);
const refused = await handler.handle({ method: "POST", url: "/", headers: {}, body });
assert.equal(refused.status, 401);

// And the other half: the service client against the service simulator, over HTTP.
const simulator = await testing.createServiceSimulator();
try {
  const client = service.createServiceClient({
    baseUrl: simulator.url,
    merchantGuid: simulator.merchantGuid,
    credentials: simulator.credentials,
  });
  const voided = await client.voidParcel({ OrderId: "GE-1001", ParcelCode: "P-1001-2" });
  assert.deepEqual(
    voided.warnings.map((warning) => warning.code),
    ["C102"],
  );
  const rates = await client.getShippingDetailsExtended({ amount: 10, currencyCode: "EUR" });
  assert.ok(rates.length > 0);
  await assert.rejects(
    client.dispatchConsolidatedShipment({ OrderIds: ["GE-1003"] }),
    (error) => error instanceof service.ServiceConflictError && error.code === "B002",
  );
} finally {
  await simulator.close();
}
console.log("smoke: ESM entry points import and answer");
