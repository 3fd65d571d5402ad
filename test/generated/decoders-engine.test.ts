// The engine decodes with the generated decoder (src/generated/decoders.ts) only for a handler on
// the default plan whose definition lists exactly the fields the decoder was generated from, and
// only for a body it parsed itself that the sealed check accepted; anywhere else with the plan.
// Either way the merchant's function sees the same payload, report and raw view.
import { describe, expect, it } from "vitest";
import { generatedDecoderFor } from "../../src/core/engine.js";
import { checkSealed, PAYLOAD_CHECKERS } from "../../src/generated/checkers.js";
import { PAYLOAD_DECODERS } from "../../src/generated/decoders.js";
import {
  type CallbackFailure,
  type CallbackName,
  createCallbackRouter,
  type DecodingOptions,
} from "../../src/index.js";
import { SAMPLE_BUILDERS } from "../../src/testing/samples.js";
import { DEFINITIONS } from "./definitions.js";

const WITH_DECODER = Object.values(DEFINITIONS).filter((d) => d.encodedFields.length > 0);

describe("which handlers take the generated decoder", () => {
  it("a default handler of every callback with encoded fields", () => {
    expect(WITH_DECODER.length).toBeGreaterThanOrEqual(10);
    for (const definition of WITH_DECODER) {
      const decode = generatedDecoderFor(definition, undefined);
      expect(decode, definition.name).toBeDefined();
      expect(decode).toBe(PAYLOAD_DECODERS[definition.name]?.decode);
      // The lists are compared element by element, not by identity.
      const copy = { ...definition, encodedFields: [...definition.encodedFields] };
      expect(generatedDecoderFor(copy, undefined)).toBe(decode);
    }
  });

  it("none with a decoding option, even one that changes nothing", () => {
    for (const definition of WITH_DECODER) {
      expect(generatedDecoderFor(definition, {}), definition.name).toBeUndefined();
      expect(generatedDecoderFor(definition, { default: "auto" })).toBeUndefined();
      expect(generatedDecoderFor(definition, { fields: { Email: "off" } })).toBeUndefined();
    }
  });

  it("none for a field list other than the one it was generated from", () => {
    for (const definition of WITH_DECODER) {
      const fields = definition.encodedFields;
      const others = [
        [...fields].reverse(),
        fields.slice(1),
        [...fields, "Extra"],
        fields.map((path, i) => (i === fields.length - 1 ? `${path}X` : path)),
      ];
      for (const encodedFields of others) {
        if (encodedFields.join() === fields.join()) continue; // a one-path list reversed
        const changed = { ...definition, encodedFields };
        expect(generatedDecoderFor(changed, undefined), definition.name).toBeUndefined();
      }
    }
    for (const definition of Object.values(DEFINITIONS)) {
      if (definition.encodedFields.length === 0) {
        expect(generatedDecoderFor(definition, undefined), definition.name).toBeUndefined();
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------

const VALUES = ["Jos%C3%A9", "New+York", "a%40b.example", "%E0%A4%A", "plain", "%2B44", "100%"];

/** The sample body of a callback with a value of VALUES in every planned field it has a place for. */
function encodedSample(name: CallbackName, fields: readonly string[]): unknown {
  const body = structuredClone(SAMPLE_BUILDERS[name]()) as unknown;
  let next = 0;
  const put = (at: unknown, segments: readonly string[]): void => {
    if (typeof at !== "object" || at === null) return;
    const [segment, ...rest] = segments as [string, ...string[]];
    if (segment === "*") {
      if (Array.isArray(at)) for (const item of at) put(item, rest);
      return;
    }
    if (Array.isArray(at)) return;
    const container = at as Record<string, unknown>;
    if (rest.length > 0) put(container[segment], rest);
    else container[segment] = VALUES[next++ % VALUES.length];
  };
  for (const path of fields) put(body, path.split("."));
  return body;
}

/** An answer each callback's response shape takes (what it is does not matter here). */
const RESULTS: Partial<Record<CallbackName, unknown>> = {
  SendOrderToMerchant: { InternalOrderId: "M-1" },
  PerformOrderPayment: { PaymentAmount: 1, PaymentCurrencyCode: "USD" },
  ValidateGiftCard: { IsValid: true },
  RedeemGiftCard: { Success: true },
  RefundGiftCard: { Success: true },
  ValidateVoucher: { IsValid: true },
};

interface Seen {
  readonly payload: string;
  readonly raw: string;
  readonly report: unknown;
  readonly same: boolean;
}

async function call(
  name: CallbackName,
  body: string | object,
  decoding: DecodingOptions | undefined,
): Promise<Seen> {
  const seen: Seen[] = [];
  const failures: CallbackFailure[] = [];
  const handler = (payload: unknown, context: { rawPayload: unknown; decoding: unknown }) => {
    seen.push({
      payload: JSON.stringify(payload),
      raw: JSON.stringify(context.rawPayload),
      report: structuredClone(context.decoding),
      same: context.rawPayload === payload,
    });
    return RESULTS[name];
  };
  const router = createCallbackRouter({
    auth: false,
    onError: (failure) => void failures.push(failure),
    decoding,
    handlers: { [name]: handler } as never,
  });
  const response = await router.handle({
    method: "POST",
    url: `/${name}`,
    headers: { "content-type": "application/json" },
    body: body as never,
  });
  expect(response.status, `${name}: ${JSON.stringify(failures)}`).toBe(200);
  expect(seen).toHaveLength(1);
  return seen[0] as Seen;
}

describe("the merchant's function sees the same either way", () => {
  for (const definition of WITH_DECODER) {
    const { name, encodedFields } = definition;
    it(name, async () => {
      const text = JSON.stringify(encodedSample(name, encodedFields));
      // The generated decoder's precondition holds for this body: the sealed check accepts it.
      const checker = PAYLOAD_CHECKERS[name];
      expect(checkSealed(checker, JSON.parse(text), 64)).toBeDefined();

      const generated = await call(name, text, undefined);
      // Something was decoded (and something was malformed), so the raw view was rebuilt.
      const report = generated.report as { decoded: string[]; malformed: string[] };
      expect(report.decoded.length).toBeGreaterThan(0);
      expect(generated.same).toBe(false);
      expect(generated.raw).not.toBe(generated.payload);

      // The plan: with a decoding option, or for a body a framework parsed.
      for (const other of [
        await call(name, text, {}),
        await call(name, text, { default: "auto" }),
        await call(name, JSON.parse(text) as object, undefined),
      ]) {
        expect(other).toStrictEqual(generated);
      }
    });
  }
});
