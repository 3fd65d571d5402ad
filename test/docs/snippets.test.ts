// Every ```ts snippet of the README compiles as a merchant copies it: under the tsconfig.json that
// `tsc --init` writes, against the package's sources, with its imports as written. The only names
// supplied from outside are the ones the README says you already have: `router` (a router built
// as shown), `auth` (the result of `await createAuth(…)`), the `Bun` and `Deno` globals, and the
// merchant's own `../src/callbacks.js` of the testing example.
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, describe as describeDiagnostic, type Project } from "../types/program.js";
import { CALLBACKS, GIVEN, snippets } from "./snippets.js";

let project: Project;
let results: Map<string, ts.Diagnostic[]>;

beforeAll(() => {
  project = createProject("readme-snippets");
  const files: Record<string, string> = { "given.d.ts": GIVEN, "src/callbacks.ts": CALLBACKS };
  for (const snippet of snippets) files[`test/${snippet.name}`] = snippet.code;
  results = project.diagnostics(files);
}, 180_000);

afterAll(() => project?.remove());

describe("README snippets", () => {
  it("are many, and checked under what tsc --init writes", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(15);
    const options = project.initOptions;
    expect(options.strict).toBe(true);
    expect(options.exactOptionalPropertyTypes).toBe(true);
    expect(options.noUncheckedIndexedAccess).toBe(true);
    expect(options.module).toBe(ts.ModuleKind.NodeNext);
    expect(options.verbatimModuleSyntax).toBe(true);
  });

  it.each(snippets.map((snippet) => [snippet.name, snippet] as const))(
    "%s compiles as copied",
    (_name, snippet) => {
      const diagnostics = results.get(`test/${snippet.name}`) ?? [];
      const where = `README.md line ${snippet.line}`;
      expect(diagnostics.map(describeDiagnostic), where).toStrictEqual([]);
    },
  );

  it("a broken snippet would be reported (the check itself works)", () => {
    const check = createProject("readme-snippets-broken");
    try {
      const broken = check.diagnostics({
        "given.d.ts": GIVEN,
        "test/broken.ts": `import { createAuth } from "crossborder-callbacks";
const auth = await createAuth({ merchantGuid: process.env.MERCHANT_GUID, jwt: { environmnt: "test" } });
cancel(auth);
`,
      });
      const lines = (broken.get("test/broken.ts") ?? []).map(describeDiagnostic);
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^2:\d+ TS2561 .*'environmnt'/);
      expect(lines[1]).toMatch(/^3:1 TS\d+ Cannot find name 'cancel'\./);
    } finally {
      check.remove();
    }
  }, 180_000);
});
