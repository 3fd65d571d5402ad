// The compiler itself, on a merchant's file with misspelt fields, under the tsconfig.json of
// `tsc --init`: each misspelling is an error on its own line, and the messages name the payload
// types (`SendOrderToMerchantRequest`), not an expansion of a zod type. The same file without the
// misspellings compiles. (test/core/types.test.ts checks the same points with @ts-expect-error.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES, FIRST_LINE, file, STRICT, SYNC } from "./cases.js";
import { createProject, describe as describeDiagnostic, type Project } from "./program.js";

let project: Project;
let wrong: string[];
let right: string[];
let sync: string[];
let strict: string[];

beforeAll(() => {
  project = createProject("compile-fail");
  const results = project.diagnostics({
    "wrong.ts": file("wrong"),
    "right.ts": file("right"),
    "sync.ts": SYNC,
    "strict.ts": STRICT,
  });
  wrong = (results.get("wrong.ts") ?? []).map(describeDiagnostic);
  right = (results.get("right.ts") ?? []).map(describeDiagnostic);
  sync = (results.get("sync.ts") ?? []).map(describeDiagnostic);
  strict = (results.get("strict.ts") ?? []).map(describeDiagnostic);
}, 180_000);

afterAll(() => project?.remove());

describe("misspelt fields under tsc --init's configuration", () => {
  it("the correct file compiles", () => {
    expect(right).toStrictEqual([]);
  });

  it("each misspelt line is exactly one error, on its own line", () => {
    const lines = wrong.map((text) => Number(text.split(":")[0]));
    expect(lines).toStrictEqual(CASES.map((_c, i) => FIRST_LINE + i));
  });

  it.each(CASES.map((c, i) => [c.wrong, c, i] as const))("%s", (_label, c, i) => {
    const diagnostic = wrong.find((text) => text.startsWith(`${FIRST_LINE + i}:`)) ?? "";
    expect(diagnostic).toContain(c.message);
    if ("at" in c) {
      // The error points at the misspelt field itself.
      const column = Number(/^\d+:(\d+) /.exec(diagnostic)?.[1]);
      expect(c.wrong.slice(column - 1)).toMatch(new RegExp(`^${c.at}\\b`));
    }
  });

  it("messages name the interfaces and stay short (no 700-character expansion)", () => {
    const reads = wrong.slice(0, 3);
    for (const text of reads) expect(text.length).toBeLessThan(160);
    expect(reads[0]).toContain("'SendOrderToMerchantRequest'");
    expect(reads[1]).toContain("'UpdateOrderStatusRequest'");
    expect(reads[2]).toContain("'Address'");
  });
});

describe("a product-country sync under tsc --init's configuration", () => {
  it("compiles: a delete's keys are strings", () => {
    expect(sync).toStrictEqual([]);
  });
});

describe("what the run time takes, under tsc --init's configuration (review-types T2-T5)", () => {
  it("compiles: readonly lists, null and undefined for not set, kind narrowing", () => {
    expect(strict).toStrictEqual([]);
  });
});
