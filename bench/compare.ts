/**
 * Two (or more) versions of the library side by side in one process, each against the same floor:
 * to tell whether a change moved a pipeline figure, when the machine's noise is as large as the
 * change. Check each version out somewhere (a git worktree with node_modules), then
 *
 *   DIRS=/path/to/old,/path/to/new BODY=order node --import tsx bench/compare.ts
 *
 * BODY: `order` (SendOrderToMerchant, 30 products) or `status` (UpdateOrderStatus, the default);
 * INFLIGHT (4), ROUNDS (12). Each round: the floor, every version in order, every version in
 * reverse order, the floor again (80 ms batches); each version's figure is the median over rounds
 * of its time per call over the floor's, with p10–p90. Run it a second time with DIRS reversed.
 * Each version's src/ is loaded directly (no build).
 */
import { importSPKI } from "jose";
import { batch } from "./pipeline.js";
import {
  authConfig,
  floorPost,
  makeSecrets,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
  updateOrderStatusBody,
} from "./shared.js";
import { median, spread } from "./stats.js";

type Call = () => Promise<unknown>;

const dirs = (process.env.DIRS ?? "").split(",").filter((dir) => dir !== "");
if (dirs.length === 0) throw new Error("DIRS: the versions' directories, comma-separated");
const order = process.env.BODY === "order";
const IN_FLIGHT = Number(process.env.INFLIGHT ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const BATCH_MS = 80;

const { publicPem, token } = await makeSecrets();
const key = await importSPKI(publicPem, "RS256");
const bytes = Buffer.from(JSON.stringify(order ? orderWithProducts(30) : updateOrderStatusBody()));
const request = {
  method: "POST",
  url: order ? "/crossborder/SendOrderToMerchant" : "/crossborder/UpdateOrderStatus",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: bytes,
};

const versions: Call[] = [];
for (const dir of dirs) {
  const lib = (await import(`${dir}/src/index.ts`)) as typeof import("../src/index.js");
  const auth = await lib.createAuth(authConfig(publicPem));
  const options = { auth, ...quiet };
  const handler = order
    ? lib.createSendOrderToMerchantHandler(() => ORDER_RESULT, options)
    : lib.createUpdateOrderStatusHandler(() => ORDER_RESULT, options);
  versions.push(() => handler.handle(request));
}
const floor: Call = floorPost(token, key, bytes);

const us = async (fn: Call, ms: number) => (await batch(fn, IN_FLIGHT, ms)).us;
for (const fn of [...versions, floor]) await us(fn, 800);
const ratios = versions.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) {
  const f1 = await us(floor, BATCH_MS);
  const forward: number[] = [];
  for (const fn of versions) forward.push(await us(fn, BATCH_MS));
  const backward: number[] = [];
  for (const fn of [...versions].reverse()) backward.unshift(await us(fn, BATCH_MS));
  const f2 = await us(floor, BATCH_MS);
  forward.forEach((t, i) => {
    ratios[i]?.push((t + (backward[i] as number)) / (f1 + f2));
  });
}
console.log(
  `${order ? "SendOrderToMerchant 30 products" : "UpdateOrderStatus"}, ${IN_FLIGHT} in flight, ${ROUNDS} rounds`,
);
ratios.forEach((list, i) => {
  const { p10, p90 } = spread(list);
  console.log(
    `${dirs[i]}: ${median(list).toFixed(3)}x the floor (p10–p90 ${p10.toFixed(2)}–${p90.toFixed(2)})`,
  );
});
