/**
 * Does main-thread work cost more when RSA verifications run beside it (4 in flight)? The floor
 * (jwtVerify + JSON.parse + JSON.stringify) against the floor plus a fixed busy loop of SPIN µs on
 * the main thread, one and four calls in flight, ABBA batches of 80 ms, 15 rounds kept.
 *
 *   node --import tsx bench/spin.ts      (SPIN=25 by default)
 *
 * See bench/ANALYSIS.md: the loop adds its own duration either way; with 4 in flight the floor per
 * call is smaller (the verification overlaps other calls' main-thread work), so the ratio grows.
 */
import { importSPKI } from "jose";
import { floorPost, makeSecrets, orderWithProducts } from "./shared.js";

const SPIN = Number(process.env.SPIN ?? 25);
const { publicPem, token } = await makeSecrets();
const key = await importSPKI(publicPem, "RS256");
const bytes = Buffer.from(JSON.stringify(orderWithProducts(30)));
const floor = floorPost(token, key, bytes);
const spin = () => {
  const until = performance.now() + SPIN / 1000;
  let x = 0;
  while (performance.now() < until) x++;
  return x;
};
/** The floor plus a fixed busy loop on the main thread. */
const spun = async () => {
  const answer = await floor();
  spin();
  return answer;
};
async function batch(f: () => Promise<unknown>, inflight: number) {
  const t = performance.now();
  let c = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (performance.now() - t < 80) {
        await f();
        c++;
      }
    }),
  );
  return ((performance.now() - t) * 1000) / c;
}
for (const inflight of [1, 4]) {
  const added: number[] = [];
  const base: number[] = [];
  for (let r = 0; r < 18; r++) {
    const a1 = await batch(floor, inflight),
      b1 = await batch(spun, inflight),
      b2 = await batch(spun, inflight),
      a2 = await batch(floor, inflight);
    if (r < 3) continue;
    base.push((a1 + a2) / 2);
    added.push((b1 + b2) / 2 - (a1 + a2) / 2);
  }
  const med = (v: number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1] ?? Number.NaN;
  console.log(
    `${inflight} in flight: floor ${med(base).toFixed(1)} µs/call, + a ${SPIN} µs spin adds ${med(added).toFixed(1)} µs/call (ratio ${(1 + med(added) / med(base)).toFixed(2)}x)`,
  );
}
