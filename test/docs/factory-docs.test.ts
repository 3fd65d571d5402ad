/**
 * Every handler factory the package exports carries a doc comment in the emitted types, so that
 * an editor's hover says when the service calls it, what the function returns and what is
 * answered (review dx-3: 13 of the 14 showed only `CallbackFactory<…>`). Reads dist/: build first.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const entry = fileURLToPath(new URL("../../dist/index.d.ts", import.meta.url));

describe("the emitted types document every handler factory (review dx-3)", () => {
  it("each create…Handler export of dist/index.d.ts has a doc comment", () => {
    if (!existsSync(entry)) {
      throw new Error("dist/ is missing: run `npm run build` before this test (npm test does)");
    }
    const program = ts.createProgram([entry], { noEmit: true, skipLibCheck: true });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(entry);
    if (source === undefined) throw new Error("dist/index.d.ts not read");
    const module = checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error("dist/index.d.ts has no exports");
    const factories = checker
      .getExportsOfModule(module)
      .filter((symbol) => /^create\w+Handler$/.test(symbol.name));
    expect(factories.length).toBe(14);
    const undocumented = factories
      .filter((symbol) => {
        const target =
          symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === "";
      })
      .map((symbol) => symbol.name);
    expect(undocumented).toStrictEqual([]);
  });
});
