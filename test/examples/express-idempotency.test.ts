/**
 * The Express example with IDEMPOTENCY_STORE=redis: two instances (`npx tsx
 * examples/express/server.ts`) answer the same order, delivered to both at once, with one run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, type ServiceKeys } from "../adapters/support/keys.js";
import {
  BIN,
  type ChildServer,
  startServer,
  TSCONFIG_WITHOUT_PATHS,
} from "../adapters/support/runtime.js";
import { signedPost } from "../adapters/support/suite.js";
import { type RedisServer, startRedis } from "../support/databases.js";
import { assertBuilt, exampleEnv, exampleKeys } from "./support/flow.js";

describe("examples/express with IDEMPOTENCY_STORE=redis, two instances", () => {
  let keys: ServiceKeys;
  let redis: RedisServer;
  const servers: ChildServer[] = [];
  beforeAll(async () => {
    assertBuilt();
    [keys, redis] = await Promise.all([exampleKeys(), startRedis()]);
    const env = { ...exampleEnv(keys), IDEMPOTENCY_STORE: "redis", REDIS_URL: redis.url };
    for (let i = 0; i < 2; i++) {
      servers.push(
        await startServer(
          `${BIN}/tsx`,
          ["--tsconfig", TSCONFIG_WITHOUT_PATHS, "examples/express/server.ts"],
          { env },
        ),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await redis?.close();
  });

  const order = (orderId: string) =>
    JSON.stringify({ ...JSON.parse(fixture("SendOrderToMerchant")), OrderId: orderId });
  const deliver = async (server: ChildServer, body: string) => {
    const response = await server.send(
      "/crossborder/SendOrderToMerchant",
      signedPost(await keys.sign(), body),
    );
    return { status: response.status, body: await response.json() };
  };

  it("runs an order delivered to both instances at once once: both answer the same merchant order id", async () => {
    const [a, b] = servers as [ChildServer, ChildServer];
    // B has already created another order, so a run of its own would answer another id.
    const other = await deliver(b, order(`OTHER-${Date.now()}`));
    expect(other).toMatchObject({ status: 200, body: { Success: true } });
    const same = order(`SAME-${Date.now()}`);
    const [fromA, fromB] = await Promise.all([deliver(a, same), deliver(b, same)]);
    expect(fromA).toMatchObject({ status: 200, body: { Success: true } });
    expect(fromB).toEqual(fromA);
    // A redelivery later gets the same answer again.
    expect(await deliver(b, same)).toEqual(fromA);
  });

  it("refuses an unknown IDEMPOTENCY_STORE at start-up", async () => {
    await expect(
      startServer(
        `${BIN}/tsx`,
        ["--tsconfig", TSCONFIG_WITHOUT_PATHS, "examples/express/server.ts"],
        {
          env: { ...exampleEnv(keys), IDEMPOTENCY_STORE: "mongo" },
          timeoutMs: 15_000,
        },
      ),
    ).rejects.toThrow('IDEMPOTENCY_STORE must be "memory", "redis" or "postgres"');
  });
});
