import { describe, expect, it } from "vitest";
import { createColors, shouldUseColor } from "../../src/cli/colors.js";

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
