// Review PIT-1: pino (`logger.info(pd)`, `logger.child(pd)`), winston (`Object.assign(info, meta)`)
// and BSON copy a card object's own enumerable properties, ignoring the masked `toJSON` and inspect
// hook of its prototype: the card number and CVV were written in clear. A card object's card fields
// (`CardNumber` in any case, every key holding a CVV) are now non-enumerable own properties: read by
// name as before, left out of every copy of its own enumerable properties, wherever the card object
// sits (the payload, `context.rawPayload`, an object under `paymentDetails`, one whose key was
// damaged), and still masked by `JSON.stringify` / `util.inspect` and dropped (the CVV) on return.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  type CallbackContext,
  contentDigest,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
  defaultIdempotencyKey,
} from "../../src/index.js";
import { parsed, post } from "./helpers.js";
import { paymentDetails } from "./leaks.js";

const VISA = "4111111111111111";
const MASTERCARD = "5555555555554444";
const AMEX = "378282246310005";
const DISCOVER = "6011111111111117";
const OK = { PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" };

/** Every card secret of the body below: none may come out of a copy. */
const SECRETS = [VISA, MASTERCARD, AMEX, DISCOVER, "737", "1234", "9090", "4321", "5150"];

/**
 * A body with card objects at every place they occur: the PaymentDetails (with a duplicate of
 * its card number in another case and a CVV under a key the spec does not give), one under a
 * `paymentDetails` key inside an array, and one whose `PaymentDetails` key was damaged in transit.
 */
function body(): string {
  return JSON.stringify({
    OrderId: "GE1",
    MerchantGUID: "guid-1",
    Products: [],
    PaymentDetails: { ...paymentDetails(VISA, "737"), cardNumber: MASTERCARD, Cvv2: "1234" },
    Extra: [{ paymentDetails: { CARDNUMBER: AMEX, cvvNumber: "9090", Label: "second" } }],
    "\uFFFD(PaymentDetails": { CardNumber: DISCOVER, CVVNumber: "4321", cardCVV: "5150" },
  });
}

/** The card objects of a payload, by where they sit. */
function cardObjectsOf(payload: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const extra = payload.Extra as { paymentDetails: Record<string, unknown> }[];
  return {
    PaymentDetails: payload.PaymentDetails as Record<string, unknown>,
    "Extra[0].paymentDetails": (extra[0] as { paymentDetails: Record<string, unknown> })
      .paymentDetails,
    damaged: payload["\uFFFD(PaymentDetails"] as Record<string, unknown>,
  };
}

/** pino's merge object: each own enumerable key (`for … in`, own ones), its value stringified. */
function pinoLike(value: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key in value) {
    if (Object.hasOwn(value, key) && value[key] !== undefined) {
      parts.push(`${JSON.stringify(key)}:${JSON.stringify(value[key])}`);
    }
  }
  return `{"level":30,${parts.join(",")},"msg":"payment"}`;
}

/** winston's `logger.info(message, meta)`: `Object.assign(info, meta)`, then `format.json()`. */
function winstonLike(value: Record<string, unknown>): string {
  const info: Record<string, unknown> = { level: "info", message: "payment" };
  Object.assign(info, value);
  return JSON.stringify(info);
}

/** Every copy of a card object's own enumerable properties, as text. */
function copies(details: Record<string, unknown>): Record<string, string> {
  const iterated: Record<string, unknown> = {};
  for (const key in details) iterated[key] = details[key];
  const plain = (value: unknown) => JSON.stringify(value, (_key, item) => item);
  return {
    keys: JSON.stringify(Object.keys(details)),
    entries: JSON.stringify(Object.entries(details)),
    values: JSON.stringify(Object.values(details)),
    spread: plain({ ...details }),
    assign: plain(Object.assign({}, details)),
    structuredClone: plain(structuredClone(details)),
    forIn: plain(iterated),
    pino: pinoLike(details),
    winston: winstonLike(details),
    winstonSpread: JSON.stringify({ message: "payment", ...details }),
  };
}

function expectNoCardData(where: string, views: Record<string, string>): void {
  for (const [how, text] of Object.entries(views)) {
    for (const secret of SECRETS) {
      expect(text.includes(secret), `${where} ${how}: ${text}`).toBe(false);
    }
    // A spread of the payload holds the card objects themselves: they print masked, keys and all.
    if (where === "payload spread") continue;
    expect(/cardnumber|cvv/i.test(text), `${where} ${how} names a card field: ${text}`).toBe(false);
  }
}

describe("card fields are not own enumerable data (review PIT-1)", () => {
  it("spread, assign, structuredClone, for…in, pino and winston merges leave them out, at every depth", async () => {
    const seen: Record<string, Record<string, string>> = {};
    const read: Record<string, unknown> = {};
    const masked: string[] = [];
    let kept: Record<string, Record<string, unknown>> = {};
    const response = await createPerformOrderPaymentHandler(
      (payload, context) => {
        const views = {
          payload: cardObjectsOf(payload as unknown as Record<string, unknown>),
          raw: cardObjectsOf(context.rawPayload as unknown as Record<string, unknown>),
        };
        for (const [which, cards] of Object.entries(views)) {
          for (const [where, details] of Object.entries(cards)) {
            seen[`${which} ${where}`] = copies(details);
            masked.push(JSON.stringify(details), inspect(details), String(details));
          }
        }
        // The whole payload as the merchant copies it too.
        seen["payload spread"] = { spread: JSON.stringify({ ...payload }, (_k, v) => v) };
        seen["payload structuredClone"] = {
          clone: JSON.stringify(structuredClone(payload), (_k, v) => v),
        };
        // Read by name, in the payload and the raw payload alike.
        for (const [which, cards] of Object.entries(views)) {
          const { PaymentDetails: pd, "Extra[0].paymentDetails": nested, damaged } = cards;
          read[which] = [
            pd?.CardNumber,
            pd?.CVVNumber,
            pd?.cardNumber,
            pd?.Cvv2,
            nested?.CARDNUMBER,
            nested?.cvvNumber,
            damaged?.CardNumber,
            damaged?.CVVNumber,
            damaged?.cardCVV,
          ];
        }
        kept = { ...views.payload, ...prefixed(views.raw) };
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(response.status).toBe(200);
    const expected = [VISA, "737", MASTERCARD, "1234", AMEX, "9090", DISCOVER, "4321", "5150"];
    expect(read).toStrictEqual({ payload: expected, raw: expected });
    expect(Object.keys(seen)).toHaveLength(8);
    for (const [where, views] of Object.entries(seen)) expectNoCardData(where, views);
    // The masked views still show the card (its last four digits), never in clear.
    for (const text of masked) {
      for (const secret of SECRETS) expect(text).not.toMatch(new RegExp(`(?<![0-9*])${secret}`));
    }
    expect(masked[0]).toContain('"CardNumber":"************1111"');
    expect(masked[0]).toContain('"CVVNumber":"***"');
    // The CVVs are gone once the function returned, wherever they were.
    for (const [where, details] of Object.entries(kept)) {
      for (const key of Object.getOwnPropertyNames(details)) {
        expect(/cvv/i.test(key), `${where} keeps ${key}`).toBe(false);
      }
    }
    expect(kept.PaymentDetails?.CardNumber).toBe(VISA);
  });

  it("the card fields keep their places and attributes but enumerability", async () => {
    let details: Record<string, unknown> = {};
    await createPerformOrderPaymentHandler(
      (payload) => {
        details = payload.PaymentDetails as unknown as Record<string, unknown>;
        const descriptor = Object.getOwnPropertyDescriptor(details, "CardNumber");
        expect(descriptor).toStrictEqual({
          value: VISA,
          writable: true,
          enumerable: false,
          configurable: true,
        });
        expect(Object.hasOwn(details, "CVVNumber")).toBe(true);
        expect(Object.getOwnPropertyNames(details).slice(0, 3)).toStrictEqual([
          "CardNumber",
          "CVVNumber",
          "ExpirationDate",
        ]);
        // The merchant clears the card once charged: the field stays hidden.
        details.CardNumber = null;
        expect(Object.keys(details)).not.toContain("CardNumber");
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(body()));
    expect(details.CardNumber).toBeNull();
  });
});

describe("the idempotency key of a payload whose card fields are hidden", () => {
  it("is the key of the payload as sent: card objects are left out of the digest whole, as before", async () => {
    // A card object under an ordinary key too: left out of the digest as a card object, which it
    // is only by its (now hidden) CardNumber.
    const text = JSON.stringify({
      ...JSON.parse(body()),
      Wallet: { CardNumber: VISA, Label: "kept card" },
    });
    const keys: (string | undefined)[] = [];
    const digests: string[] = [];
    const response = await createSendOrderToMerchantHandler(
      async (payload, context) => {
        keys.push(await defaultIdempotencyKey(payload, context));
        digests.push(await contentDigest(context.rawPayload));
        return { InternalOrderId: "M-1" };
      },
      { auth: false, onError: () => undefined },
    ).handle(post(text));
    expect(response.status).toBe(200);
    // The same payload never protected: a plain JSON.parse, its card fields enumerable.
    const plain = JSON.parse(text) as Record<string, unknown>;
    const own = { callback: "SendOrderToMerchant", rawPayload: plain } as CallbackContext<unknown>;
    expect(keys[0]).toBe(await defaultIdempotencyKey(plain, own));
    expect(digests[0]).toBe(await contentDigest(plain));
  });
});

// Review SECOND-PITA-3: a card number under a key damaged in transit (`"\uFFFD(CardNumber"`, the
// README's own example) stayed enumerable, so pino, winston and BSON wrote it in clear, while the
// damaged CVV key next to it was hidden. Every key the library calls a card field is hidden now:
// `CardNumber` in any case, any key ending with it, and any key naming a CVV (one rule, shared by
// the hiding, the masked views and the idempotency digest's card objects).
describe("a card number under a key damaged in transit is hidden too (review SECOND-PITA-3)", () => {
  const DAMAGED = "\uFFFD(CardNumber";
  const PREFIXED = "Card_cardnumber";

  function damagedBody(): string {
    const details = paymentDetails(null, "737");
    delete details.CardNumber;
    return JSON.stringify({
      OrderId: "GE1",
      MerchantGUID: "guid-1",
      PaymentDetails: {
        [DAMAGED]: VISA,
        "\uFFFD(CVVNumber": "4321",
        ...details,
        [PREFIXED]: MASTERCARD,
      },
    });
  }

  it("left out of every copy of the payload's and the raw payload's, read by name, masked in the views", async () => {
    const seen: Record<string, Record<string, string>> = {};
    const read: unknown[] = [];
    const masked: string[] = [];
    let kept: Record<string, unknown> = {};
    const response = await createPerformOrderPaymentHandler(
      (payload, context) => {
        const views = {
          payload: payload.PaymentDetails as unknown as Record<string, unknown>,
          raw: context.rawPayload.PaymentDetails as unknown as Record<string, unknown>,
        };
        for (const [which, details] of Object.entries(views)) {
          seen[which] = copies(details);
          masked.push(JSON.stringify(details), inspect(details));
          read.push(details[DAMAGED], details[PREFIXED]);
        }
        kept = views.payload;
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(damagedBody()));
    expect(response.status).toBe(200);
    expect(read).toStrictEqual([VISA, MASTERCARD, VISA, MASTERCARD]);
    for (const [where, views] of Object.entries(seen)) expectNoCardData(where, views);
    for (const text of masked) {
      expect(text).not.toContain(VISA);
      expect(text).not.toContain(MASTERCARD);
    }
    // The masked views show it as a card number: its last four digits.
    expect(masked[0]).toContain(`${JSON.stringify(DAMAGED)}:"************1111"`);
    expect(masked[0]).toContain(`${JSON.stringify(PREFIXED)}:"************4444"`);
    // Kept (hidden) after the function returned, the CVVs gone.
    expect(kept[DAMAGED]).toBe(VISA);
    expect(Object.getOwnPropertyNames(kept).filter((key) => /cvv/i.test(key))).toStrictEqual([]);
  });

  it("a key option quoting the card number under the damaged key is refused", async () => {
    const { withIdempotency, createMemoryIdempotencyStore } = await import("../../src/index.js");
    let runs = 0;
    const reasons: string[] = [];
    const response = await createPerformOrderPaymentHandler(
      withIdempotency(
        async () => {
          runs++;
          return OK;
        },
        {
          store: createMemoryIdempotencyStore(),
          key: (payload) => `${payload.OrderId}:${VISA.replace(/(\d{4})(?=\d)/g, "$1.")}`,
        },
      ),
      { auth: false, onError: (failure) => void reasons.push(String(failure.reason)) },
    ).handle(post(damagedBody()));
    expect(response.status).toBe(500);
    expect(runs).toBe(0);
    expect(reasons.join(" ")).toContain("card number");
    expect(reasons.join(" ")).not.toContain(VISA.slice(0, 12));
  });
});

// Review SECOND-PITA-4: the CVV drop read the names recorded when the card fields were hidden, and
// trusted them while the object's visible keys were unchanged: a CVV the merchant kept under a
// non-enumerable key (`Object.defineProperty(pd, "Cvv2", { enumerable: false, … })`, as the
// library hides it) outlived the function, and so did a framework body's non-enumerable `Cvv2`
// made before protection. The drop reads every own name now (once per request).
describe("a CVV under a non-enumerable key is deleted on return too (review SECOND-PITA-4)", () => {
  /** A payment whose card object holds no other key naming a CVV. */
  const plainBody = () =>
    JSON.stringify({
      OrderId: "GE1",
      MerchantGUID: "guid-1",
      PaymentDetails: paymentDetails(VISA, "737"),
    });
  const keep = (details: Record<string, unknown>) =>
    Object.defineProperty(details, "Cvv2", {
      value: details.CVVNumber,
      writable: true,
      configurable: true,
      enumerable: false,
    });

  it("one the merchant adds, with no visible change to the object", async () => {
    let payload: Record<string, unknown> = {};
    let raw: Record<string, unknown> = {};
    const response = await createPerformOrderPaymentHandler(
      (sent, context) => {
        payload = sent.PaymentDetails as unknown as Record<string, unknown>;
        raw = context.rawPayload.PaymentDetails as unknown as Record<string, unknown>;
        keep(payload);
        keep(raw);
        expect(payload.Cvv2).toBe("737");
        return OK;
      },
      { auth: false, onError: () => undefined },
    ).handle(post(plainBody()));
    expect(response.status).toBe(200);
    for (const details of [payload, raw]) {
      expect(Object.hasOwn(details, "Cvv2")).toBe(false);
      expect(Object.hasOwn(details, "CVVNumber")).toBe(false);
      expect(details.CardNumber).toBe(VISA);
    }
  });

  it("one a framework's parsed body held before protection", async () => {
    const sent = JSON.parse(plainBody()) as { PaymentDetails: Record<string, unknown> };
    keep(sent.PaymentDetails);
    const response = await createPerformOrderPaymentHandler(() => OK, {
      auth: false,
      onError: () => undefined,
    }).handle(post(parsed(sent)));
    expect(response.status).toBe(200);
    expect(
      Object.getOwnPropertyNames(sent.PaymentDetails).filter((k) => /cvv/i.test(k)),
    ).toStrictEqual([]);
  });
});

function prefixed(
  cards: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(cards).map(([key, value]) => [`raw ${key}`, value]));
}
