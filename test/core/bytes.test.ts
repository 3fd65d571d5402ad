// Review testkit-2: bytes are told from other values whatever their realm (a test environment such
// as `jsdom` hands the library a Uint8Array of another realm), and nothing else passes for bytes.
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { isBytes } from "../../src/core/bytes.js";
import { foreignBytes } from "../support/foreign-realm.js";

it("takes bytes of this realm and of another, Buffers included", () => {
  expect(isBytes(new Uint8Array(2))).toBe(true);
  expect(isBytes(Buffer.from("x"))).toBe(true);
  expect(isBytes(foreignBytes("{}"))).toBe(true);
  expect(isBytes(runInNewContext("new Uint8Array(new SharedArrayBuffer(4))"))).toBe(true);
});

it("takes nothing else: other views, array buffers, look-alikes", () => {
  const spoofed = Object.defineProperty(new DataView(new ArrayBuffer(2)), Symbol.toStringTag, {
    value: "Uint8Array",
  });
  for (const value of [
    new Uint16Array(2),
    new Uint8ClampedArray(2),
    runInNewContext("new Int8Array(2)"),
    new DataView(new ArrayBuffer(2)),
    spoofed,
    new ArrayBuffer(2),
    { [Symbol.toStringTag]: "Uint8Array", byteLength: 2 },
    [1, 2],
    "{}",
    null,
    undefined,
  ]) {
    expect(isBytes(value), Object.prototype.toString.call(value)).toBe(false);
  }
});
