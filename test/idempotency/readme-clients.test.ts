/**
 * The README's database clients as a merchant copies them: the Redis snippet of "Redelivery", run
 * as it is written (its imports pointed at the sources) against a real redis-server that then goes
 * down, must keep the process alive; and every client or pool a snippet creates has an `error`
 * listener (node-redis and `pg` emit `error` when a connection drops: with no listener, Node
 * throws it and the process exits, dropping every delivery in flight).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../adapters/support/runtime.js";
import { type RedisServer, startRedis, stopChild } from "../support/databases.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");

describe("the README's Redis and PostgreSQL clients", () => {
  it("every client or pool a snippet creates has an error listener", () => {
    const creating = snippets.filter((code) => /createClient\(|new (?:pg\.)?Pool\(/.test(code));
    expect(creating.length).toBeGreaterThanOrEqual(2);
    for (const code of creating) {
      for (const [, name] of code.matchAll(/const (\w+) = (?:createClient|new (?:pg\.)?Pool)\(/g)) {
        expect(code, `${name} has no error listener`).toContain(`${name}.on("error"`);
      }
    }
  });

  describe("the Redelivery snippet, run", () => {
    let server: RedisServer;
    let child: ChildProcess | undefined;
    let dir: string;
    beforeAll(async () => {
      server = await startRedis();
      mkdirSync(join(ROOT, ".tmp"), { recursive: true });
      dir = mkdtempSync(join(ROOT, ".tmp", "readme-redis-"));
    });
    afterAll(async () => {
      if (child) await stopChild(child, "SIGKILL");
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("keeps the process alive when Redis goes down", async () => {
      const snippet = snippets.find((code) => code.includes("createRedisIdempotencyStore(redis)"));
      expect(snippet).toBeDefined();
      const code = (snippet ?? "")
        .replace(
          '"crossborder-callbacks/redis"',
          JSON.stringify(join(ROOT, "src/idempotency/redis.ts")),
        )
        .replace('"crossborder-callbacks"', JSON.stringify(join(ROOT, "src/index.ts")));
      const file = join(dir, "snippet.mts");
      // `auth` is given in the README; a router without authentication stands in for it.
      writeFileSync(file, `const auth = false as const;\n${code}\nconsole.log("ready");\n`);
      const started = spawn(process.execPath, ["--import", "tsx", file], {
        cwd: ROOT,
        env: { ...process.env, REDIS_URL: server.url },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = started;
      let output = "";
      started.stdout?.on("data", (chunk) => {
        output += chunk;
      });
      started.stderr?.on("data", (chunk) => {
        output += chunk;
      });
      await expect.poll(() => output, { timeout: 15_000 }).toContain("ready");
      await server.stop();
      // node-redis notices the closed socket at once, then retries to connect.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(output).not.toContain("Unhandled 'error' event");
      expect(started.exitCode, output).toBeNull();
    });
  });
});
