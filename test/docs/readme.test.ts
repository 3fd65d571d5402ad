import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import { FAILURE_STATUS } from "../../src/index.js";
import * as service from "../../src/service/index.js";
import * as testing from "../../src/testing/index.js";

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

  // Review second-truth SECOND-TRUTH-4: "Card data" still said a key quoting the CVV is refused,
  // which "The key of a delivery" (and the code, since SECOND-PITA-2) says it is not.
  it("says in every place that a key's card number is refused and a CVV is not looked for", () => {
    const text = readme.replace(/\s+/g, " ");
    expect(text).not.toContain("card number or CVV is refused");
    expect(text).toContain(
      "a `key` option whose key quotes the delivery's card number (12 digits or more, in any spelling) is refused; a CVV is not looked for",
    );
  });

  // Review copy COPY-2: the forged-call lines of "The simulator" read `--guid "$MERCHANT_GUID"`,
  // which in the second terminal (where the quick start's server command set it for itself only)
  // is `--guid ""`: a usage error (exit 2), not the promised exit 0.
  it("expands MERCHANT_GUID in its shell lines only where the shell stops when it is unset", () => {
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
    const unguarded = blocks.flatMap((block) =>
      block
        .replace(/\\\n\s*/g, " ")
        .split("\n")
        .filter((line) => /\$MERCHANT_GUID\b|\$\{MERCHANT_GUID(?!:\?)/.test(line)),
    );
    expect(unguarded).toEqual([]);
  });

  // Review SECOND-CD-2: without --guid the forged lines sent the samples' GUID, so the server of
  // step 4 answered 401 for the GUID whatever the token: an endpoint accepting expired tokens or
  // any key still passed them. They carry step 4's GUID, so the token is the only wrong thing.
  it("gives the forged-call lines the GUID of step 4's server, so only the token is wrong", () => {
    const guid = /MERCHANT_GUID=([0-9a-f-]{36}) npx tsx server\.mts/.exec(readme)?.[1];
    expect(guid).toBeDefined();
    const forged = between("<!-- forged:begin -->", "<!-- forged:end -->")
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .filter((line) => line.includes(" simulate "));
    expect(forged).toHaveLength(2);
    for (const line of forged) expect(line).toContain(` --guid ${guid}`);
    expect(readme.replace(/\s+/g, " ")).not.toContain("need no `--guid`");
  });

  it("opens with what it is, the install command, and a clone's demo and test commands", () => {
    const lines = readme.split("\n");
    expect(lines[0]).toBe("# crossborder-callbacks");
    const top = lines.slice(0, 12).join("\n");
    const install = top.indexOf("npm install crossborder-callbacks");
    expect(install).toBeGreaterThan(top.indexOf("Typed, verified handlers"));
    expect(top.indexOf("npm ci && npm start")).toBeGreaterThan(install);
    expect(top).toContain("npm test");
  });

  it("links what the registry page cannot resolve with absolute URLs", () => {
    const relative = [...readme.matchAll(/\]\(([^)#]+)\)/g)]
      .map((match) => match[1] ?? "")
      .filter((target) => !/^https?:\/\//.test(target));
    expect(relative).toEqual([]);
    for (const path of [
      "tree/main/examples",
      "blob/main/CONTRIBUTING.md",
      "blob/main/bench/RESULTS.md",
    ]) {
      expect(readme).toContain(
        `https://github.com/crossborder-callbacks/crossborder-callbacks/${path}`,
      );
    }
  });

  it("says, by the router's example, which router options a handler built with a factory does not take", () => {
    const section = readme.slice(
      readme.indexOf("## The callbacks"),
      readme.indexOf("### GetCheckoutCartInfo's parameters"),
    );
    const example = section.indexOf("const router = createCallbackRouter({");
    expect(example).toBeGreaterThan(-1);
    const paragraph = section
      .slice(example)
      .split("\n\n")
      .find((text) => text.includes("built with a factory"));
    expect(paragraph, "a paragraph after the router's example on built handlers").toBeDefined();
    for (const option of [
      "auth",
      "maxBodyBytes",
      "maxDepth",
      "bodyTimeoutMs",
      "decoding",
      "onError",
    ]) {
      expect(paragraph).toContain(`\`${option}\``);
    }
    // The router's onError still hears of its own 404s.
    expect(paragraph).toMatch(/404/);
  });
});

// Found by review (surface-6): exports no README line named. The internal ones are gone (the
// library and the CLI import them from their modules); the useful ones have their line.
describe("the exports and the README", () => {
  it("exports none of the internals the review listed", () => {
    const exported = (module: object, names: readonly string[]) =>
      names.filter((name) => name in module);
    expect(exported(root, ["maskCardNumber", "normalizePem"])).toEqual([]);
    expect(exported(testing, ["mergeDeep", "answerSuccess", "successFieldOf"])).toEqual([]);
    expect(exported(service, ["OPERATIONS"])).toEqual([]);
  });

  it.each([
    ["encodeFormValue", root],
    ["decodeFormValue", root],
    ["contentDigest", root],
    ["defaultIdempotencyKey", root],
    ["memoryTokenCache", service],
    ["SendCallbackError", testing],
  ] as const)("names %s, an export", (name, module) => {
    expect(name in module).toBe(true);
    expect(readme).toContain(`\`${name}`);
  });

  // Found by review (surface-7h): the root's RefundProduct (NotifyOrderRefund, amounts as text) and
  // the service's (GetOrderRefunds, text or number) had one name and two incompatible types.
  it("a name two entries export is one and the same thing", () => {
    const entries = { root, service, testing } as Record<string, Record<string, unknown>>;
    const clashes: string[] = [];
    for (const [a, first] of Object.entries(entries)) {
      for (const [b, second] of Object.entries(entries)) {
        if (a >= b) continue;
        for (const name of Object.keys(first)) {
          if (name in second && first[name] !== second[name]) clashes.push(`${a}/${b} ${name}`);
        }
      }
    }
    expect(clashes).toEqual([]);
    expect(service.serviceRefundProductSchema).toBeDefined();
    expect(service.serviceRefundableAmountSchema).toBeDefined();
  });

  it("names the router's `routes`", () => {
    expect(Object.keys(root.createCallbackRouter({ auth: false, handlers: {} }))).toContain(
      "routes",
    );
    expect(readme).toMatch(/`router\.routes`|`routes`/);
  });
});
