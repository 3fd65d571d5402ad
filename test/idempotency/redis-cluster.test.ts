/**
 * The Redis store on a real Redis Cluster (three masters started by the test): the setup check
 * reads every master, naming the node in each problem (review infra-1); a client of one node
 * pointed at a Cluster is refused with what to do (review infra-2); both Cluster clients serve
 * deliveries.
 */
import { Cluster, Redis as IoRedis } from "ioredis";
import { createClient, createCluster } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisIdempotencyStore } from "../../src/idempotency/redis.js";
import {
  createPerformOrderPaymentHandler,
  type PerformOrderPaymentRequest,
  withIdempotency,
} from "../../src/index.js";
import { collector, post } from "../core/helpers.js";
import { type RedisServer, startRedisCluster } from "../support/databases.js";
import { paymentFor } from "./support/payment.js";

let sequence = 0;
function payment(): string {
  return paymentFor(`GE-CL-${Date.now()}-${++sequence}`);
}

describe("Redis Cluster (three masters)", () => {
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  let nodes: RedisServer[];
  let io: Cluster;
  let nodeRedis: ReturnType<typeof createCluster>;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    nodes = cluster.nodes;
    io = new Cluster(nodes.map((node) => ({ host: "127.0.0.1", port: node.port })));
    io.on("error", () => undefined);
    nodeRedis = createCluster({ rootNodes: nodes.map((node) => ({ url: node.url })) });
    nodeRedis.on("error", () => undefined);
    await nodeRedis.connect();
    await new Promise<void>((resolve) => {
      if (io.status === "ready") resolve();
      else io.once("ready", () => resolve());
    });
  }, 60_000);
  afterAll(async () => {
    io?.disconnect();
    // Not close(): it waits for the master the last test stopped.
    nodeRedis?.destroy();
    await cluster?.close();
  });

  it("serves deliveries through both Cluster clients: one run per order, repeats from the record", async () => {
    for (const client of [io, nodeRedis]) {
      let runs = 0;
      const pay = async (order: PerformOrderPaymentRequest) => {
        runs++;
        return {
          InternalOrderId: `M-${order.OrderId}`,
          PaymentAmount: 10,
          PaymentCurrencyCode: "EUR",
        };
      };
      const { failures, onError } = collector();
      const handler = createPerformOrderPaymentHandler(
        withIdempotency(pay, { store: createRedisIdempotencyStore(client) }),
        { auth: false, onError },
      );
      const bodies = Array.from({ length: 12 }, payment);
      for (const body of [...bodies, ...bodies]) {
        expect((await handler.handle(post(body))).status).toBe(200);
      }
      expect(runs).toBe(12);
      expect(failures).toEqual([]);
    }
  });

  it("review infra-1: checkSetup reads every master and names the misconfigured one, every time", async () => {
    const bad = nodes[1] as RedisServer;
    const direct = new IoRedis(bad.port, "127.0.0.1");
    direct.on("error", () => undefined);
    try {
      await direct.config("SET", "maxmemory-policy", "allkeys-lru");
      await direct.config("SET", "appendonly", "no");
      for (const client of [io, nodeRedis]) {
        for (let i = 0; i < 6; i++) {
          const problem = await createRedisIdempotencyStore(client).checkSetup();
          expect(problem).toMatch(
            new RegExp(
              `maxmemory-policy of the Redis Cluster master 127\\.0\\.0\\.1:${bad.port} is allkeys-lru.*; and the Redis Cluster master 127\\.0\\.0\\.1:${bad.port} keeps no append-only file`,
            ),
          );
          for (const good of nodes.filter((node) => node !== bad)) {
            expect(problem).not.toContain(`:${good.port}`);
          }
        }
      }
    } finally {
      await direct.config("SET", "maxmemory-policy", "noeviction");
      await direct.config("SET", "appendonly", "yes");
      direct.disconnect();
    }
    expect(await createRedisIdempotencyStore(io).checkSetup()).toBeUndefined();
    expect(await createRedisIdempotencyStore(nodeRedis).checkSetup()).toBeUndefined();
  });

  it("review infra-2: a client of one node pointed at a Cluster is refused MOVED with what to do", async () => {
    const plain = createClient({ url: (nodes[0] as RedisServer).url });
    plain.on("error", () => undefined);
    await plain.connect();
    try {
      const store = createRedisIdempotencyStore(plain);
      const errors: string[] = [];
      for (let i = 0; i < 20; i++) {
        await Promise.resolve(store.get(`moved-${i}`)).catch((error: Error) => {
          errors.push(error.message);
        });
      }
      expect(errors.length).toBeGreaterThan(0);
      for (const message of errors) {
        expect(message).toMatch(
          /^MOVED \d+ 127\.0\.0\.1:\d+: this Redis is a Cluster, and the client given to createRedisIdempotencyStore is a client of one node: pass a Cluster client \(createCluster\(\) of `redis`, new Cluster\(\) of `ioredis`\)/,
        );
      }
    } finally {
      await plain.close().catch(() => undefined);
    }
  });
  // Last: it stops a master for good.
  it("review second-idem2-2: with one master down, the check still answers and names the misconfigured live master", async () => {
    const bad = nodes[1] as RedisServer;
    const direct = new IoRedis(bad.port, "127.0.0.1");
    direct.on("error", () => undefined);
    try {
      await direct.config("SET", "maxmemory-policy", "allkeys-lru");
      await (nodes[2] as RedisServer).close();
      for (const client of [io, nodeRedis]) {
        const answer = await Promise.race([
          createRedisIdempotencyStore(client).checkSetup(),
          new Promise((resolve) => setTimeout(() => resolve("no answer within 10 s"), 10_000)),
        ]);
        expect(answer).toMatch(
          new RegExp(
            `maxmemory-policy of the Redis Cluster master 127\\.0\\.0\\.1:${bad.port} is allkeys-lru`,
          ),
        );
      }
    } finally {
      direct.disconnect();
    }
  }, 30_000);
});
