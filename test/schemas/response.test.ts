import { describe, expect, it } from "vitest";
import { isOrderStatus, parseSuccessValue } from "../../src/schemas/index.js";

describe("parseSuccessValue", () => {
  it.each([
    [true, true],
    [false, false],
    ["true", true],
    ["false", false],
    ["True", true],
    ["False", false],
    ["TRUE", true],
    ["FALSE", false],
    ["tRuE", true],
    [" true ", true],
    ["\tFalse\n", false],
    ["\u00a0true\u00a0", true],
  ])("reads %j as %j", (value, expected) => {
    expect(parseSuccessValue(value)).toBe(expected);
  });

  it.each([
    undefined,
    null,
    "",
    "   ",
    "yes",
    "no",
    "1",
    "0",
    "t",
    "truee",
    "true false",
    "tr ue",
    "'true'",
    '"true"',
    1,
    0,
    Number.NaN,
    {},
    [],
    [true],
    { Success: true },
  ])("treats %j as unparseable", (value) => {
    expect(parseSuccessValue(value)).toBeUndefined();
  });

  it("does not unwrap boxed values or objects with a toString", () => {
    expect(parseSuccessValue(Object(true))).toBeUndefined();
    expect(parseSuccessValue(Object("true"))).toBeUndefined();
    expect(parseSuccessValue({ toString: () => "true" })).toBeUndefined();
  });
});

describe("isOrderStatus", () => {
  it.each([
    ["canceled", "canceled"],
    ["CANCELLED", "canceled"],
    ["cancelled", "canceled"],
    ["Canceled", "CANCELLED"],
    [" canceled\t", "Cancelled"],
    ["CANCELED", "cancelled"],
    ["shipped", "SHIPPED"],
    ["  Shipped ", "shipped"],
    ["N/A", "n/a"],
    ["pending", " pending "],
  ])("%j is %j", (actual, expected) => {
    expect(isOrderStatus(actual, expected)).toBe(true);
  });

  it.each([
    [null, "canceled"],
    [undefined, "canceled"],
    ["", "canceled"],
    ["cancel", "canceled"],
    ["canceld", "canceled"],
    ["cancelledd", "canceled"],
    ["canceled", "shipped"],
    ["not canceled", "canceled"],
    ["order_cancelled", "order_canceled"],
    ["can celed", "canceled"],
    ["N/A", "NA"],
  ])("%j is not %j", (actual, expected) => {
    expect(isOrderStatus(actual, expected)).toBe(false);
  });

  it("is symmetric in its spellings", () => {
    const spellings = ["canceled", "cancelled", "CANCELED", "CANCELLED", " Cancelled "];
    for (const a of spellings) {
      for (const b of spellings) expect(isOrderStatus(a, b)).toBe(true);
    }
  });
});
