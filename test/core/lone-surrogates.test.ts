// ENC-2: an answer never carries a lone surrogate (a merchant's text cut inside an emoji), which
// JSON.stringify writes as the escape "\ud83d" and strict JSON readers (System.Text.Json, I-JSON)
// refuse: it is answered as U+FFFD, in every answer (a success, a refusal, the cart as returned, a
// gift card), over node:http and fetch alike; an escaped backslash before "ud83d" is text, kept.
import { describe, expect, it } from "vitest";
import { wellFormedJson } from "../../src/core/responses.js";
import { CallbackError, type CallbackHandlers } from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { GUID, signedServer } from "../support/signed-server.js";

const cut = "Zoë 😀 Müller".slice(0, 5); // "Zoë \ud83d"
const LONE = /(?<!\\)(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/i;

describe("wellFormedJson", () => {
  it("replaces lone surrogate escapes only", () => {
    const text = JSON.stringify({ a: `${cut}|\udc00x|😀|\\ud83d|\\\ud83d`, [`k\udbff`]: 1 });
    expect(LONE.test(text)).toBe(true);
    const fixed = wellFormedJson(text);
    expect(LONE.test(fixed)).toBe(false);
    expect(JSON.parse(fixed)).toEqual({
      a: "Zoë \ufffd|\ufffdx|😀|\\ud83d|\\\ufffd",
      "k\ufffd": 1,
    });
    const plain = JSON.stringify({ a: "Zoë 😀" });
    expect(wellFormedJson(plain)).toBe(plain);
  });
});

const cases: [string, keyof CallbackHandlers, () => unknown][] = [
  [
    "a success Message",
    "SendOrderToMerchant",
    () => ({ InternalOrderId: "M-1", Message: `Order for ${cut}` }),
  ],
  [
    "a CallbackError's message",
    "SendOrderToMerchant",
    () => {
      throw new CallbackError("REFUSED", `Refused: ${cut}`);
    },
  ],
  [
    "a cart product's Name",
    "GetCheckoutCartInfo",
    () => ({ productsList: [{ ProductCode: "A", Name: cut, ListPrice: 1, OrderedQuantity: 1 }] }),
  ],
  [
    "a gift card's Message",
    "ValidateGiftCard",
    () => ({ IsValid: true, Balance: "1.00", Message: cut }),
  ],
];

describe("answers over HTTP", () => {
  it.each(cases)("%s: no lone surrogate, U+FFFD in its place", async (_label, callback, fn) => {
    const s = await signedServer({ [callback]: fn } as CallbackHandlers);
    try {
      const body =
        callback === "GetCheckoutCartInfo"
          ? undefined
          : JSON.stringify({
              ...samplePayload(callback as "ValidateGiftCard"),
              MerchantGUID: GUID,
            });
      const options =
        callback === "GetCheckoutCartInfo"
          ? { method: "GET", query: "?merchantCartToken=abc" }
          : {};
      for (const answer of [
        await s.node(callback, body, options),
        await s.viaFetch(callback, body, options),
      ]) {
        expect(answer.text).not.toMatch(LONE);
        expect(JSON.stringify(JSON.parse(answer.text))).toContain("Zo\u00eb \ufffd");
      }
    } finally {
      s.close();
    }
  });
});
