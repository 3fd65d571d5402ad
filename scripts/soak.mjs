/**
 * `npm run soak`: the multi-process test (three instances of the Express example sharing Redis,
 * then PostgreSQL) with 1,000 orders rather than the 400 of `npm test`; `MULTI_PROCESS_ORDERS`
 * sets another count. Needs a build (`npm run build`) first, as `npm test` makes.
 */
import { spawnSync } from "node:child_process";

const result = spawnSync(
  process.platform === "win32" ? "npx.cmd" : "npx",
  ["vitest", "run", "--project", "under-load"],
  {
    stdio: "inherit",
    shell: process.platform === "win32",
    env: { ...process.env, MULTI_PROCESS_ORDERS: process.env.MULTI_PROCESS_ORDERS ?? "1000" },
  },
);
process.exitCode = result.status ?? 1;
