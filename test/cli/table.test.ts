import { describe, expect, it } from "vitest";
import { createColors, shouldUseColor } from "../../src/cli/colors.js";
import { printable, renderTable, truncate } from "../../src/cli/table.js";

describe("renderTable", () => {
  it("aligns columns, underlines the header, leaves the last column unpadded", () => {
    const text = renderTable(
      ["callback", "HTTP", "problems"],
      [
        ["SendOrderToMerchant", "200", "ok"],
        ["UpdateOrderStatus", "500", "HTTP 500: a server error"],
      ],
    );
    expect(text).toBe(
      [
        "callback             HTTP  problems",
        "-------------------  ----  ------------------------",
        "SendOrderToMerchant  200   ok",
        "UpdateOrderStatus    500   HTTP 500: a server error",
        "",
      ].join("\n"),
    );
  });

  it("pads before colouring, so colours do not shift the columns", () => {
    const colors = createColors({ isTTY: true, env: {} });
    const text = renderTable(
      ["a", "b"],
      [
        [{ text: "x", color: colors.red }, "y"],
        ["long", "z"],
      ],
      { header: colors.bold },
    );
    const plain = text.split("\n").map(printable).join("\n");
    expect(plain).toBe(["a     b", "----  -", "x     y", "long  z", ""].join("\n"));
    expect(text).toContain(colors.red("x   "));
  });

  it("right-aligns cells that ask for it", () => {
    const text = renderTable(
      [{ text: "ms", align: "right" }, "x"],
      [
        [{ text: "7", align: "right" }, "a"],
        ["1234", "b"],
      ],
    );
    expect(text).toBe(["  ms  x", "----  -", "   7  a", "1234  b", ""].join("\n"));
  });

  it("strips control characters and shortens long text", () => {
    expect(printable("a\u001b[31mred\u001b[0m\nb\u0007")).toBe("ared b ");
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("abc", 4)).toBe("abc");
  });
});

describe("colours", () => {
  it("colour only on a TTY, never with NO_COLOR or TERM=dumb, forced by FORCE_COLOR", () => {
    expect(shouldUseColor({ isTTY: true, env: {} })).toBe(true);
    expect(shouldUseColor({ isTTY: false, env: {} })).toBe(false);
    expect(shouldUseColor({ isTTY: undefined, env: { CI: "true" } })).toBe(false);
    expect(shouldUseColor({ isTTY: true, env: { NO_COLOR: "1" } })).toBe(false);
    expect(shouldUseColor({ isTTY: true, env: { NO_COLOR: "" } })).toBe(true);
    expect(shouldUseColor({ isTTY: true, env: { TERM: "dumb" } })).toBe(false);
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: "1" } })).toBe(true);
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: "0" } })).toBe(false);
    expect(shouldUseColor({ isTTY: false, env: { FORCE_COLOR: "1", NO_COLOR: "1" } })).toBe(false);
  });

  it("createColors gives plain text when disabled and ANSI codes when enabled", () => {
    expect(createColors({ isTTY: false, env: {} }).red("x")).toBe("x");
    expect(createColors({ isTTY: true, env: {} }).red("x")).toBe("\u001b[31mx\u001b[39m");
  });
});
