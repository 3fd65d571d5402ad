// Requires every subpath of the installed package through its CJS entry points.
const assert = require("node:assert/strict");

const root = require("crossborder-callbacks");
const subpaths = {
  express: ["toExpress"],
  koa: ["toKoa"],
  fetch: ["toFetch"],
  node: ["toNodeListener"],
  testing: [
    "createTestKeys",
    "signServiceToken",
    "samplePayload",
    "sendCallback",
    "createServiceSimulator",
    "idempotencyStoreConformance",
  ],
  redis: ["createRedisIdempotencyStore"],
  postgres: ["createPostgresIdempotencyStore", "postgresIdempotencySchema"],
  service: ["createServiceClient", "ServiceError", "ServiceConflictError", "isServiceError"],
};
assert.equal(root.CALLBACK_NAMES.length, 14);
for (const name of root.CALLBACK_NAMES) {
  assert.equal(typeof root[`create${name}Handler`], "function", `create${name}Handler`);
}
assert.equal(typeof root.createCallbackRouter, "function");
assert.equal(typeof root.createAuth, "function");
assert.equal(typeof root.CallbackError, "function");
assert.equal(typeof root.withIdempotency, "function");
assert.equal(typeof root.createMemoryIdempotencyStore, "function");
for (const [subpath, names] of Object.entries(subpaths)) {
  const mod = require(`crossborder-callbacks/${subpath}`);
  for (const name of names) assert.equal(typeof mod[name], "function", `${subpath}.${name}`);
}
console.log("smoke: CJS entry points require");
