// ENC-1: ids typed text or number (a gift card's CardId, CustomerId, a refund's GiftCardsData
// CardId, the cart's numeric merchantCartToken) sent as integers beyond 2^53 reach the merchant as
// their exact digits (text) taken from the body, never as the number JSON.parse rounded; without
// the body's text (a framework parsed it), a 400 names the field.
import { describe, expect, it } from "vitest";
import {
  EACH,
  integerDigits,
  numberLiteralAt,
  unsafeNumberPaths,
} from "../../src/core/exact-numbers.js";
import {
  createGetCheckoutCartInfoHandler,
  createMemoryIdempotencyStore,
  createNotifyOrderRefundHandler,
  createRedeemGiftCardHandler,
  withIdempotency,
} from "../../src/index.js";
import { samplePayload } from "../../src/testing/index.js";
import { GUID, signedServer } from "../support/signed-server.js";
import { json, parsed, post } from "./helpers.js";

const card = (id: string) =>
  JSON.stringify({
    ...samplePayload("RedeemGiftCard"),
    MerchantGUID: GUID,
    CardFields: { CardId: 0 },
  }).replace('"CardId":0', `"CardId":${id}`);

describe("numberLiteralAt", () => {
  it("finds the literal JSON.parse read: the last of a repeated member, strings skipped", () => {
    const text =
      ' { "a\\"}{[": "x\\\\", "CardFields" : {"CardId": 1}, "CardFields": {"Pin":"]}", "Card\\u0049d" : 6035710000000000123 } } ';
    expect(numberLiteralAt(text, ["CardFields", "CardId"])).toBe("6035710000000000123");
    expect(numberLiteralAt('{"L":[1,{"x":[2,3]},[],{"Id":-1.5e30}]}', ["L", 3, "Id"])).toBe(
      "-1.5e30",
    );
    expect(numberLiteralAt('{"L":[1]}', ["L", 2])).toBeUndefined();
    expect(numberLiteralAt('{"L":"1"}', ["L"])).toBeUndefined();
  });

  it("is linear in the text", () => {
    const filler = JSON.stringify(
      Array.from({ length: 200_000 }, (_, i) => ({ [`k${i}`]: ['\\"', i] })),
    );
    const text = `{"F":${filler},"CardId":12345678901234567890}`;
    const started = performance.now();
    expect(numberLiteralAt(text, ["CardId"])).toBe("12345678901234567890");
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("finds unsafe numbers only where described, allocating nothing when there is none", () => {
    const fields = [["GiftCardsData", EACH, "CardId"]] as const;
    expect(
      unsafeNumberPaths({ GiftCardsData: [{ CardId: 1 }, { CardId: "2" }] }, fields),
    ).toBeUndefined();
    expect(
      unsafeNumberPaths({ GiftCardsData: [{ CardId: 1 }, { CardId: 2 ** 60 }] }, fields),
    ).toEqual([["GiftCardsData", 1, "CardId"]]);
  });
});

describe("ids beyond 2^53 over HTTP", () => {
  it("RedeemGiftCard: a 19-digit CardId and CustomerId are handed over exactly, as text", async () => {
    const seen: unknown[] = [];
    const s = await signedServer({
      RedeemGiftCard: (p) => {
        seen.push(p.CardFields?.CardId, p.CustomerId);
        return { Balance: "0.00" };
      },
    });
    try {
      const body = card("6035710000000000123").replace(
        /"CustomerId":[^,}]*/,
        '"CustomerId":-90071992547409931',
      );
      expect(body).toContain("-90071992547409931");
      expect((await s.node("RedeemGiftCard", body)).status).toBe(200);
      expect((await s.viaFetch("RedeemGiftCard", body)).status).toBe(200);
      expect(seen).toEqual([
        "6035710000000000123",
        "-90071992547409931",
        "6035710000000000123",
        "-90071992547409931",
      ]);
      // A safe integer stays the number sent.
      expect((await s.node("RedeemGiftCard", card("9007199254740991"))).status).toBe(200);
      expect(seen.at(-2)).toBe(9007199254740991);
    } finally {
      s.close();
    }
  });

  it("NotifyOrderRefund: GiftCardsData CardIds (top level and in Refunds) exactly", async () => {
    let seen: unknown;
    const s = await signedServer({
      NotifyOrderRefund: (p) => {
        seen = [
          p.GiftCardsData?.map((g) => g.CardId),
          p.Refunds?.[0]?.GiftCardsData?.map((g) => g.CardId),
        ];
      },
    });
    try {
      const text = JSON.stringify({
        ...samplePayload("NotifyOrderRefund"),
        MerchantGUID: GUID,
        GiftCardsData: [],
        Refunds: [],
      })
        .replace(
          '"GiftCardsData":[]',
          '"GiftCardsData":[{"CardId":"a"},{"CardId":9007199254740993}]',
        )
        .replace('"Refunds":[]', '"Refunds":[{"GiftCardsData":[{"CardId":12345678901234567891}]}]');
      const a = await s.node("NotifyOrderRefund", text);
      expect(a.status, a.text).toBe(200);
      expect(seen).toEqual([["a", "9007199254740993"], ["12345678901234567891"]]);
    } finally {
      s.close();
    }
  });

  it("withIdempotency: two cards whose numbers round alike are two redemptions", async () => {
    const debited: unknown[] = [];
    const s = await signedServer({
      RedeemGiftCard: withIdempotency(
        (p) => {
          debited.push(p.CardFields?.CardId);
          return { Balance: "0.00" };
        },
        { store: createMemoryIdempotencyStore() },
      ),
    });
    try {
      expect((await s.node("RedeemGiftCard", card("6035710000000000123"))).status).toBe(200);
      expect((await s.node("RedeemGiftCard", card("6035710000000000124"))).status).toBe(200);
      // The same card again is the same redemption.
      expect((await s.node("RedeemGiftCard", card("6035710000000000124"))).status).toBe(200);
      expect(debited).toEqual(["6035710000000000123", "6035710000000000124"]);
    } finally {
      s.close();
    }
  });

  it("GetCheckoutCartInfo POST: a numeric merchantCartToken beyond 2^53 is the text sent", async () => {
    const seen: unknown[] = [];
    const s = await signedServer({
      GetCheckoutCartInfo: (p) => {
        seen.push(p.merchantCartToken, p.cartToken);
        return { productsList: [] };
      },
    });
    try {
      const a = await s.node(
        "GetCheckoutCartInfo",
        `{"cartToken":1234567890123456789,"MerchantGUID":"${GUID}"}`,
      );
      expect(a.status, a.text).toBe(200);
      const b = await s.viaFetch(
        "GetCheckoutCartInfo",
        `{"MerchantCartToken":1.5e300,"MerchantGUID":"${GUID}"}`,
      );
      expect(b.status, b.text).toBe(200);
      expect(seen).toEqual(["1234567890123456789", "1234567890123456789", "1.5e300", undefined]);
    } finally {
      s.close();
    }
  });
});

// Review SECOND-ENC-2: an id written in exponent form (`1.2e20`, a .NET double's `4.25E+37`) was
// handed over as that text, where the README promises its digits (and `BigInt(CardId)` threw).
describe("ids beyond 2^53 written in exponent or fraction form", () => {
  it("integerDigits expands an integral literal exactly, and refuses a fraction or a huge one", () => {
    expect(integerDigits("1.2e20")).toBe("120000000000000000000");
    expect(integerDigits("4.2540766411282593E+37")).toBe("42540766411282593000000000000000000000");
    expect(integerDigits("-9.007199254740993e15")).toBe("-9007199254740993");
    expect(integerDigits("12345678901234567890.000")).toBe("12345678901234567890");
    expect(integerDigits("1.500e3")).toBe("1500");
    expect(integerDigits("6035710000000000123")).toBe("6035710000000000123");
    expect(integerDigits("1e300")).toBe(`1${"0".repeat(300)}`);
    expect(integerDigits("9007199254740993.5")).toBeUndefined();
    expect(integerDigits("1.25e1")).toBeUndefined();
    expect(integerDigits("1e400")).toBeUndefined();
    expect(integerDigits("1e99999999999")).toBeUndefined();
  });

  it("RedeemGiftCard: a CardId of 1.2e20 arrives as its digits; a fraction is a 400 naming it", async () => {
    const seen: unknown[] = [];
    const redeem = createRedeemGiftCardHandler(
      (payload) => {
        seen.push(payload.CardFields?.CardId, payload.CustomerId);
        return { Balance: "0.00" };
      },
      { auth: false, onError: () => undefined },
    );
    const ok = await redeem.handle(post('{"CardFields":{"CardId":1.2e20},"CustomerId":-4.25E+37}'));
    expect(ok.status).toBe(200);
    expect(seen).toEqual(["120000000000000000000", `-425${"0".repeat(35)}`]);
    expect(BigInt(seen[0] as string)).toBe(120000000000000000000n);

    // (a finite double has at most 309 integer digits: the 400-digit cap is never reached here;
    // `1e400` is Infinity, which the schema refuses)
    for (const literal of ["9007199254740993.5", "12345678901234567890.25"]) {
      const refused = await redeem.handle(post(`{"CardFields":{"CardId":${literal}}}`));
      expect(refused.status, literal).toBe(400);
      const text = JSON.stringify(json(refused));
      expect(text).toContain("CardFields.CardId: a number beyond 2^53 not written as an integer");
      expect(text).not.toContain(literal);
    }
    expect(seen).toHaveLength(2);
  });
});

describe("ids beyond 2^53 in a body a framework parsed", () => {
  it("are refused with a 400 naming the field, never handed over rounded", async () => {
    let called = 0;
    const redeem = createRedeemGiftCardHandler(
      () => {
        called++;
        return { Balance: "0.00" };
      },
      { auth: false, onError: () => undefined },
    );
    const a = await redeem.handle(post(parsed({ CardFields: { CardId: 2 ** 62 + 123 } })));
    expect(a.status).toBe(400);
    expect(JSON.stringify(json(a))).toContain("CardFields.CardId: an integer beyond 2^53");

    const refund = createNotifyOrderRefundHandler(() => void called++, {
      auth: false,
      onError: () => undefined,
    });
    const b = await refund.handle(
      post(parsed({ OrderId: "1", GiftCardsData: [{ CardId: 2 ** 60 }] })),
    );
    expect(b.status).toBe(400);
    expect(JSON.stringify(json(b))).toContain("GiftCardsData.0.CardId");

    const cart = createGetCheckoutCartInfoHandler(
      () => {
        called++;
        return { productsList: [] };
      },
      { auth: false, onError: () => undefined },
    );
    const c = await cart.handle(post(parsed({ merchantCartToken: 2 ** 61 })));
    expect(c.status).toBe(400);
    expect(JSON.stringify(json(c))).toContain("merchantCartToken");
    expect(called).toBe(0);
  });
});
