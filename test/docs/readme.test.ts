import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FAILURE_STATUS } from "../../src/index.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function between(begin: string, end: string): string {
  const start = readme.indexOf(begin);
  const stop = readme.indexOf(end);
  expect(start, `README marker ${begin}`).toBeGreaterThan(-1);
  expect(stop, `README marker ${end}`).toBeGreaterThan(start);
  return readme.slice(start + begin.length, stop);
}

describe("README", () => {
  it("prints the failure table that the code uses", () => {
    const rows = between("<!-- status-table:begin -->", "<!-- status-table:end -->")
      .split("\n")
      .filter((line) => /^\| .+ \| \d{3} \|/.test(line));
    const statuses = rows.map((row) => Number(row.split("|")[2]?.trim()));
    expect(statuses.sort()).toEqual(Object.values(FAILURE_STATUS).sort());
    const codes = rows.map((row) => row.split("|")[3]?.trim().replaceAll("`", ""));
    expect(codes).toContain("MALFORMED_BODY");
    expect(codes).toContain("UNAUTHORIZED");
  });

  it("opens with the install-and-demo command and the test command", () => {
    const firstLines = readme.split("\n").slice(0, 8).join("\n");
    expect(firstLines).toContain("npm ci && npm start");
    expect(firstLines).toContain("npm test");
  });
});
