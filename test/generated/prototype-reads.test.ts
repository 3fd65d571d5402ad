// Review second-speed2-2: every name a generated check looks up on a body object's prototype (a
// field absent from the body) is one prototypeHoldsNoField tests, so a generator change that
// forgets a name fails here. Recorded through a Proxy prototype, which the checks' own prototype
// test is told is Object.prototype for the duration of the probe.
import { readFileSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { PAYLOAD_CHECKERS } from "../../src/generated/checkers.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";

const realGetPrototypeOf = Object.getPrototypeOf;
afterEach(() => {
  Object.getPrototypeOf = realGetPrototypeOf;
});

function variants(body: unknown): unknown[] {
  const out: unknown[] = [body];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (node === null || typeof node !== "object") return;
    for (const k of Object.keys(node)) {
      const copy = structuredClone(body) as Record<string | number, unknown>;
      let t = copy as Record<string | number, unknown>;
      for (const p of path) t = t[p] as Record<string | number, unknown>;
      if (!Array.isArray(t)) {
        delete t[k];
        out.push(copy);
      }
      walk((node as Record<string, unknown>)[k], [...path, k]);
    }
  };
  walk(body, []);
  return out;
}

it("the prototype guard lists every name the generated checks read", () => {
  const text = readFileSync(new URL("../../src/generated/checkers.ts", import.meta.url), "utf8");
  const guard = text.slice(text.indexOf("function prototypeHoldsNoField"));
  const listed = new Set([...guard.matchAll(/"([^"]+)" in PROTOTYPE/g)].map((m) => m[1]));
  const recorders = new WeakSet<object>();
  const read = new Set<string>();
  const proto = new Proxy(Object.create(null), {
    get(_t, k) {
      if (typeof k === "string") read.add(k);
      return undefined;
    },
    has(_t, k) {
      if (typeof k === "string") read.add(k);
      return false;
    },
  });
  const rebuild = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rebuild);
    if (v === null || typeof v !== "object") return v;
    const o = Object.create(proto);
    recorders.add(o);
    for (const [k, x] of Object.entries(v)) o[k] = rebuild(x);
    return o;
  };
  Object.getPrototypeOf = (o: object) =>
    recorders.has(o) ? Object.prototype : realGetPrototypeOf(o);
  for (const [name, checker] of Object.entries(PAYLOAD_CHECKERS)) {
    const build = (SAMPLE_BUILDERS as Record<string, (() => unknown) | undefined>)[name];
    if (build === undefined) continue;
    for (const body of variants(build())) checker.check(rebuild(body));
  }
  Object.getPrototypeOf = realGetPrototypeOf;
  expect(read.size).toBeGreaterThan(200);
  expect([...read].filter((k) => !listed.has(k))).toStrictEqual([]);
});
