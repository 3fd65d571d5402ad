// Found by the lead: card data was recognised by its keys' exact spelling only. A PaymentDetails,
// CardNumber or CVVNumber key in another letter case (`paymentDetails`, `CARDNUMBER`, `cvvNumber`:
// the service binds names case-insensitively on the cart side) reached the merchant unprotected:
// JSON.stringify, String() and util.inspect printed the card number and CVV in clear, the CVV was
// kept after the function, and a report quoting a card number that is neither Luhn-valid nor a
// plain run of digits went out as it was. Every request here is a real payload through a real
// handler, as text (the generated checker's way) and as a framework's parsed body (the walk's).
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  type CallbackFailure,
  type CallbackResponse,
  createPerformOrderPaymentHandler,
  createSendOrderToMerchantHandler,
  type HandlerOptions,
} from "../../src/index.js";
import { captureConsole, parsed, post } from "./helpers.js";
import { luhnValid, quotesStandalone, stringsOf } from "./leaks.js";

type Path = readonly (string | number)[];

/** A card object planted in the body: where it is, its keys, and its card number and CVV. */
interface Planted {
  readonly label: string;
  /** The path to the card object itself. */
  readonly path: Path;
  readonly panKey: string;
  readonly cvvKey: string;
  readonly pan: string;
  readonly cvv: string;
}

// None Luhn-valid, one with irregular separators: nothing but where they sit says they are cards.
const PLANTED: readonly Planted[] = [
  {
    label: "a camelCase paymentDetails at the top level",
    path: ["paymentDetails"],
    panKey: "cardNumber",
    cvvKey: "cvvNumber",
    pan: "1234567812345678",
    cvv: "4821",
  },
  {
    label: "an upper-case PAYMENTDETAILS at the top level",
    path: ["PAYMENTDETAILS"],
    panKey: "CARDNUMBER",
    cvvKey: "CVVNUMBER",
    pan: "8765 4321  8765 4321",
    cvv: "9137",
  },
  {
    label: "card fields on a product itself",
    path: ["Products", 0],
    panKey: "cardnumber",
    cvvKey: "CvvNumber",
    pan: "601100099999",
    cvv: "6054",
  },
  {
    label: "a Paymentdetails key inside a product",
    path: ["Products", 0, "Paymentdetails"],
    panKey: "cardNUMBER",
    cvvKey: "CVVnumber",
    pan: "3782 8224 6310 0051",
    cvv: "3390",
  },
  {
    label: "card fields on an object in an array",
    path: ["Wallet", 1],
    panKey: "CardNUMBER",
    cvvKey: "cvvnumber",
    pan: "5019-7170-1010-3743",
    cvv: "5502",
  },
];

const ORDER = JSON.parse(
  readFileSync(new URL("../fixtures/SendOrderToMerchant.json", import.meta.url), "utf8"),
) as Record<string, unknown>;
const PAYMENT = JSON.parse(
  readFileSync(new URL("../fixtures/PerformOrderPayment.json", import.meta.url), "utf8"),
) as Record<string, unknown>;

function at(root: unknown, path: Path): Record<string, unknown> {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node as Record<string, unknown>;
}

/** The callback's fixture with every planted card object added (its real PaymentDetails kept). */
function body(callback: "SendOrderToMerchant" | "PerformOrderPayment"): Record<string, unknown> {
  const sent = structuredClone(callback === "SendOrderToMerchant" ? ORDER : PAYMENT);
  sent.Products ??= structuredClone(ORDER.Products);
  sent.Wallet = [{ Kind: "voucher" }, { Kind: "card" }];
  for (const plant of PLANTED) {
    const parent = at(sent, plant.path.slice(0, -1));
    const key = plant.path.at(-1) as string | number;
    const target = (parent[key] ?? {}) as Record<string, unknown>;
    target[plant.panKey] = plant.pan;
    target[plant.cvvKey] = plant.cvv;
    target.expirationDate = "2030-01-31";
    parent[key] = target;
  }
  return sent;
}

/** Whether a text carries one of the planted card numbers, in any spelling. */
function carriesPan(text: string): boolean {
  const digits = text.replace(/\D/g, "");
  return PLANTED.some((plant) => digits.includes(plant.pan.replace(/\D/g, "")));
}

/** Whether a text quotes one of the planted CVVs as a standalone value (stack frames left out). */
function carriesCvv(text: string): boolean {
  const lines = text.replace(/\n\s+at .*/g, "");
  return PLANTED.some((plant) => quotesStandalone(lines, plant.cvv));
}

function expectClean(texts: readonly string[]): void {
  for (const text of texts) {
    expect(carriesPan(text), text).toBe(false);
    expect(carriesCvv(text), text).toBe(false);
  }
}

const logs = captureConsole();

type Fn = (payload: Record<string, unknown>, context: { rawPayload: unknown }) => unknown;
type Make = (
  fn: Fn,
  options: HandlerOptions,
) => { handle: (r: never) => Promise<CallbackResponse> };

const CALLBACKS = {
  SendOrderToMerchant: createSendOrderToMerchantHandler as unknown as Make,
  PerformOrderPayment: createPerformOrderPaymentHandler as unknown as Make,
} as const;

const OK = { InternalOrderId: "M-1", PaymentAmount: "10.00", PaymentCurrencyCode: "EUR" };

function send(
  callback: keyof typeof CALLBACKS,
  transport: "text" | "parsed",
  sent: Record<string, unknown>,
  fn: Fn,
  options: HandlerOptions = { auth: false },
): Promise<CallbackResponse> {
  const request = post(transport === "text" ? JSON.stringify(sent) : parsed(sent));
  return CALLBACKS[callback](fn, options).handle(request as never);
}

describe("card keys in any letter case are card data", () => {
  for (const callback of Object.keys(CALLBACKS) as (keyof typeof CALLBACKS)[]) {
    for (const transport of ["text", "parsed"] as const) {
      it(`${callback} (${transport}): masked views inside the handler and after it, CVV gone`, async () => {
        const sent = body(callback);
        const kept: { payload: Record<string, unknown>; raw: unknown }[] = [];
        const printed: string[] = [];
        const print = (payload: Record<string, unknown>, raw: unknown) => {
          printed.push(JSON.stringify(payload), inspect(payload, { depth: 10 }));
          printed.push(JSON.stringify(raw), inspect(raw, { depth: 10 }));
          for (const plant of PLANTED) {
            for (const root of [payload, raw]) {
              const card = at(root, plant.path);
              printed.push(JSON.stringify(card), String(card), `${card}`);
              printed.push(inspect(card), inspect(card, { showHidden: true, depth: 10 }));
            }
          }
        };
        const response = await send(callback, transport, sent, (payload, context) => {
          // The real values are there to pay with.
          for (const plant of PLANTED) {
            const card = at(payload, plant.path);
            expect(card[plant.panKey], plant.label).toBe(plant.pan);
            expect(card[plant.cvvKey], plant.label).toBe(plant.cvv);
          }
          print(payload, context.rawPayload);
          kept.push({ payload, raw: context.rawPayload });
          return OK;
        });
        expect(response.status).toBe(200);
        expect(kept).toHaveLength(1);
        const { payload, raw } = kept[0] as (typeof kept)[number];
        // The merchant keeps the objects and logs them later.
        print(payload, raw);
        expect(printed.length).toBeGreaterThan(40);
        expectClean(printed);
        // The masked view keeps what is not card data, and the last four digits.
        const shown = JSON.parse(JSON.stringify(at(payload, ["paymentDetails"])));
        expect(shown).toEqual({ cardNumber: "************5678", expirationDate: "2030-01-31" });
        // No CVV outlives the function: not in the payload, the raw payload or the body given.
        const roots = transport === "parsed" ? [payload, raw, sent] : [payload, raw];
        for (const root of roots) {
          for (const plant of PLANTED) {
            const card = at(root, plant.path);
            expect(Object.hasOwn(card, plant.cvvKey), plant.label).toBe(false);
            expect(card[plant.panKey], plant.label).toBe(plant.pan);
          }
        }
        expectClean([response.body, ...logs]);
      });

      for (const mode of ["custom", "default"] as const) {
        it(`${callback} (${transport}): a merchant's exception quoting them is redacted (${mode} onError)`, async () => {
          const failures: CallbackFailure[] = [];
          const options: HandlerOptions = {
            auth: false,
            ...(mode === "custom"
              ? { onError: (f: CallbackFailure) => void failures.push(f) }
              : {}),
          };
          const response = await send(
            callback,
            transport,
            body(callback),
            (payload) => {
              const quoted = PLANTED.map((plant) => {
                const card = at(payload, plant.path);
                return `${String(card[plant.panKey])} cvv ${String(card[plant.cvvKey])}`;
              }).join(" / ");
              throw new Error(`charge refused: ${quoted}`);
            },
            options,
          );
          expect(response.status).toBe(500);
          if (mode === "custom") {
            expect(failures.map((f) => f.kind)).toStrictEqual(["internal_error"]);
            const message = (failures[0]?.error as Error | undefined)?.message ?? "";
            expect(message).toMatch(/^charge refused: /);
            expect(message).toContain("cvv ***");
          } else {
            expect(logs).toHaveLength(1);
            expect(logs[0]).toContain("internal_error");
          }
          expectClean([response.body, ...logs, ...stringsOf(failures)]);
        });
      }
    }
  }

  it("the planted card numbers are not Luhn-valid (only their keys say they are cards)", () => {
    for (const plant of PLANTED) expect(luhnValid(plant.pan.replace(/\D/g, ""))).toBe(false);
  });
});

describe("a refused body still has its card objects in any case protected", () => {
  const deep = (levels: number): unknown => {
    let value: unknown = "leaf";
    for (let i = 0; i < levels; i++) value = { Deeper: value };
    return value;
  };

  const refusals: ReadonlyArray<[string, (sent: Record<string, unknown>) => void, string]> = [
    [
      "too deep",
      (sent) => {
        sent.Deep = deep(80);
      },
      "MALFORMED_BODY",
    ],
    [
      "a PaymentDetails card number that is a number",
      (sent) => {
        (sent.PaymentDetails as Record<string, unknown>).CardNumber = 4111111111111111;
      },
      "INVALID_PAYLOAD",
    ],
  ];

  for (const [label, spoil, code] of refusals) {
    it(`${label}: the framework's body prints masked and keeps no CVV`, async () => {
      const sent = body("PerformOrderPayment");
      spoil(sent);
      const failures: CallbackFailure[] = [];
      const response = await send(
        "PerformOrderPayment",
        "parsed",
        sent,
        () => {
          throw new Error("never called");
        },
        { auth: false, onError: (f) => void failures.push(f) },
      );
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({ ErrorCode: code });
      const printed: string[] = [];
      for (const plant of PLANTED) {
        const card = at(sent, plant.path);
        printed.push(JSON.stringify(card), String(card), inspect(card, { depth: 10 }));
        expect(Object.hasOwn(card, plant.cvvKey), plant.label).toBe(false);
      }
      printed.push(JSON.stringify(sent.Products), inspect(sent, { depth: 4 }));
      expectClean([...printed, response.body, ...logs, ...stringsOf(failures)]);
    });
  }
});

describe("a key in another case is protected, never checked: no new refusal", () => {
  const values: ReadonlyArray<[string, unknown]> = [
    ["a number", 4111111111111111],
    ["a string", "4111111111111111"],
    ["an array", [{ cardNumber: 4111111111111111 }]],
    ["an object with card fields of any type", { cardNumber: 1234567812345678, cvvNumber: 737 }],
  ];
  for (const [label, value] of values) {
    for (const transport of ["text", "parsed"] as const) {
      it(`paymentDetails holding ${label} (${transport}): answered by the merchant`, async () => {
        const sent = { ...structuredClone(PAYMENT), paymentDetails: structuredClone(value) };
        let called = false;
        const response = await send("PerformOrderPayment", transport, sent, () => {
          called = true;
          return OK;
        });
        expect(response.status).toBe(200);
        expect(called).toBe(true);
      });
    }
  }

  it("an object with card fields of another type prints masked and loses its CVV", async () => {
    const sent = {
      ...structuredClone(PAYMENT),
      paymentDetails: { cardNumber: 1234567812345678, cvvNumber: 4821 },
    };
    let kept: Record<string, unknown> | undefined;
    let printed = "";
    const response = await send("PerformOrderPayment", "text", sent, (payload) => {
      kept = payload.paymentDetails as Record<string, unknown>;
      printed = `${JSON.stringify(kept)} ${inspect(kept)} ${String(kept)}`;
      return OK;
    });
    expect(response.status).toBe(200);
    expectClean([printed]);
    expect(Object.hasOwn(kept ?? {}, "cvvNumber")).toBe(false);
  });
});
