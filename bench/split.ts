/**
 * Where the library's added time per call goes, authentication apart: SendOrderToMerchant (30
 * products), one process, three functions in ABBA batches:
 * - floor: the floor of bench/pipeline.ts (jose `jwtVerify`, JSON.parse, JSON.stringify);
 * - verify+noauth: the floor's own `jwtVerify`, then the library's handler built with
 *   `auth: false` (everything the library does after the JWT);
 * - lib: the library's handler with `createAuth` (JWT mode, RS256), as a merchant mounts it.
 *
 *   INFLIGHT=4 node --import tsx bench/split.ts     (INFLIGHT=1: one call at a time; ROUNDS=16)
 *
 * Prints the median per-round ratio of each against the floor, and the median µs per call.
 * Uses the library's src/ directly (no build). For the analysis in bench/ANALYSIS.md; not part
 * of `npm run bench`.
 */
import { importSPKI, jwtVerify } from "jose";
import { createAuth, createSendOrderToMerchantHandler } from "../src/index.js";
import { batch } from "./pipeline.js";
import {
  authConfig,
  FLOOR_VERIFY_OPTIONS,
  floorPost,
  makeSecrets,
  ORDER_RESULT,
  orderWithProducts,
  quiet,
} from "./shared.js";
import { median } from "./stats.js";

const IN_FLIGHT = Number(process.env.INFLIGHT ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 16);
const BATCH_MS = 80;

const { publicPem, token } = await makeSecrets();
const key = await importSPKI(publicPem, "RS256");
const bytes = Buffer.from(JSON.stringify(orderWithProducts(30)));
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const request = { method: "POST", url: "/crossborder/SendOrderToMerchant", headers, body: bytes };
const auth = await createAuth(authConfig(publicPem));
const withAuth = createSendOrderToMerchantHandler(() => ORDER_RESULT, { auth, ...quiet });
const withoutAuth = createSendOrderToMerchantHandler(() => ORDER_RESULT, {
  auth: false,
  ...quiet,
});

type Call = () => Promise<unknown>;
const floor: Call = floorPost(token, key, bytes);
const lib: Call = () => withAuth.handle(request);
const verifyThenNoAuth: Call = async () => {
  await jwtVerify(token, key, FLOOR_VERIFY_OPTIONS);
  return withoutAuth.handle(request);
};

/** µs per call of `fn`, IN_FLIGHT at a time, over a batch of at least `ms` (pipeline.ts's batch). */
async function us(fn: Call, ms: number): Promise<number> {
  return (await batch(fn, IN_FLIGHT, ms)).us;
}

for (const fn of [floor, lib, verifyThenNoAuth]) await us(fn, 600);
const ratios = { lib: [] as number[], "verify+noauth": [] as number[] };
const perCall = { floor: [] as number[], lib: [] as number[], "verify+noauth": [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const f1 = await us(floor, BATCH_MS);
  const a1 = await us(lib, BATCH_MS);
  const b1 = await us(verifyThenNoAuth, BATCH_MS);
  const b2 = await us(verifyThenNoAuth, BATCH_MS);
  const a2 = await us(lib, BATCH_MS);
  const f2 = await us(floor, BATCH_MS);
  ratios.lib.push((a1 + a2) / (f1 + f2));
  ratios["verify+noauth"].push((b1 + b2) / (f1 + f2));
  perCall.floor.push((f1 + f2) / 2);
  perCall.lib.push((a1 + a2) / 2);
  perCall["verify+noauth"].push((b1 + b2) / 2);
}
console.log(`${IN_FLIGHT} in flight, ${ROUNDS} rounds`);
for (const [name, list] of Object.entries(ratios)) {
  console.log(`${name}: ${median(list).toFixed(3)}x the floor`);
}
for (const [name, list] of Object.entries(perCall)) {
  console.log(`${name}: ${median(list).toFixed(1)} µs per call`);
}
