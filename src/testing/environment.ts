/**
 * The globals the testing kit needs, checked where it needs them (never on a handler's path): a
 * test run in jest's or vitest's `jsdom` (or `happy-dom`) environment lacks some of them, and the
 * errors that followed (`Cannot read properties of undefined (reading 'generateKey')`,
 * `fetch is not a function`) did not say that the environment was at fault (review testkit-4).
 */
export type KitGlobal = "crypto.subtle" | "TextEncoder" | "structuredClone" | "fetch";

const PRESENT: Record<KitGlobal, () => boolean> = {
  "crypto.subtle": () => typeof globalThis.crypto?.subtle?.digest === "function",
  TextEncoder: () => typeof globalThis.TextEncoder === "function",
  structuredClone: () => typeof globalThis.structuredClone === "function",
  fetch: () => typeof globalThis.fetch === "function",
};

/** Throws an error naming the first of `globals` this environment lacks, and what to do. */
export function assertKitGlobals(owner: string, globals: readonly KitGlobal[]): void {
  const missing = globals.find((name) => !PRESENT[name]());
  if (missing === undefined) return;
  throw new TypeError(
    `${owner} needs the global ${missing}, which this test environment does not have (jest's or ` +
      `vitest's "jsdom" or "happy-dom" environment?): run the tests that use ` +
      `crossborder-callbacks/testing in the "node" environment (jest: testEnvironment: "node", or ` +
      `/** @jest-environment node */ atop the file; vitest: environment: "node", or ` +
      "// @vitest-environment node).",
  );
}
