/**
 * What this machine charges for a hop to the thread pool and back, the cost that the floor's (and
 * the library's) WebCrypto RS256 verification pays on every call: the same RSA-2048 verification
 * done synchronously on the main thread, through WebCrypto one at a time, and through WebCrypto 4
 * in flight; plus one `setImmediate` turn. When the one-at-a-time figure is several times the
 * synchronous one, the machine's cross-thread wake-ups are slow, and the pipeline's ratios with
 * 4 in flight move for every version alike (bench/ANALYSIS.md, thirteenth session).
 *
 *   node --import tsx bench/wakeup.ts
 *
 * Not part of `npm run bench`.
 */
import { generateKeyPairSync, sign, verify, webcrypto } from "node:crypto";

const CALLS = 2_000;
const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const data = Buffer.from("x".repeat(300));
const signature = sign("sha256", data, privateKey);
const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
const key = await webcrypto.subtle.importKey(
  "spki",
  publicKey.export({ type: "spki", format: "der" }),
  algorithm,
  false,
  ["verify"],
);
const webVerify = () => webcrypto.subtle.verify(algorithm.name, key, signature, data);

/** Microseconds per call of `run(calls)`. */
async function perCall(run: (calls: number) => Promise<void> | void): Promise<string> {
  await run(CALLS / 10);
  const start = performance.now();
  await run(CALLS);
  return (((performance.now() - start) / CALLS) * 1000).toFixed(1);
}

const sync = await perCall((calls) => {
  for (let i = 0; i < calls; i++) verify("sha256", data, publicKey, signature);
});
const sequential = await perCall(async (calls) => {
  for (let i = 0; i < calls; i++) await webVerify();
});
const inFlight = await perCall(async (calls) => {
  let started = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (started < calls) {
        started++;
        await webVerify();
      }
    }),
  );
});
const hop = await perCall(async (calls) => {
  for (let i = 0; i < calls; i++) await new Promise((resolve) => setImmediate(resolve));
});
console.log(
  `RSA-2048 verify, µs per call: synchronous ${sync}, WebCrypto one at a time ${sequential}, WebCrypto 4 in flight ${inFlight}; setImmediate turn ${hop} µs`,
);
