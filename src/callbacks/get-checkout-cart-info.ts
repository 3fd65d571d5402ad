import { z } from "zod";
import {
  type CallbackDefinition,
  type CallbackFunction,
  type CallbackHandler,
  createCallbackHandler,
  describeIssues,
  type HandlerOptions,
} from "../core/engine.js";
import { type ResponseShape, responseInfoShape } from "../core/responses.js";
import { type CheckoutCartInfo, checkoutCartInfoSchema } from "../schemas/index.js";

/** The parameters of a GetCheckoutCartInfo call, under their documented names. */
export const getCheckoutCartInfoRequestSchema = z.looseObject({
  merchantCartToken: z.string().optional(),
  countryCode: z.string().optional(),
  currencyCode: z.string().optional(),
});

export type GetCheckoutCartInfoRequest = z.output<typeof getCheckoutCartInfoRequestSchema>;

/** The merchant's function for GetCheckoutCartInfo, to type a standalone function. */
export type GetCheckoutCartInfoFunction = CallbackFunction<
  GetCheckoutCartInfoRequest,
  CheckoutCartInfo
>;

export interface GetCheckoutCartInfoOptions extends HandlerOptions {
  /** Methods answered. Default both: the service calls with GET unless the operator set POST. */
  methods?: ReadonlyArray<"GET" | "POST">;
  /**
   * The names the service uses for the parameters, when the operator configured others
   * (`cartToken`, `CartId`). The payload keeps the documented names.
   */
  parameterNames?: {
    merchantCartToken?: string;
    countryCode?: string;
    currencyCode?: string;
  };
}

const PARAMETERS = ["merchantCartToken", "countryCode", "currencyCode"] as const;

/** The cart as the merchant returns it, validated before it is sent: a wrong cart is a 500. */
const cartShape: ResponseShape<CheckoutCartInfo> = {
  success(result) {
    const checked = checkoutCartInfoSchema.safeParse(result);
    if (checked.success) return { body: result as object };
    return { invalid: `not a CheckoutCartInfo: ${describeIssues(checked.error, 5)}` };
  },
  failure: responseInfoShape().failure,
};

function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  // An own data property even for a key named `__proto__`.
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * The cart during checkout: GET (or POST) with `merchantCartToken`, `countryCode` and
 * `currencyCode`, answered with the CheckoutCartInfo object. Called on every cart page load, so
 * keep it fast; a failure means checkout does not open.
 */
export function createGetCheckoutCartInfoHandler(
  fn: GetCheckoutCartInfoFunction,
  options: GetCheckoutCartInfoOptions,
): CallbackHandler<"GetCheckoutCartInfo"> {
  const names = PARAMETERS.map((key) => [key, options?.parameterNames?.[key] ?? key] as const);
  const methods = options?.methods ?? ["GET", "POST"];
  if (methods.length === 0 || methods.some((method) => method !== "GET" && method !== "POST")) {
    throw new TypeError("GetCheckoutCartInfo: methods must be GET and/or POST");
  }
  const definition: CallbackDefinition<GetCheckoutCartInfoRequest, CheckoutCartInfo> & {
    readonly name: "GetCheckoutCartInfo";
  } = {
    name: "GetCheckoutCartInfo",
    methods,
    source: {
      kind: "query",
      // Every parameter is kept (a POST's MerchantGUID is checked by the authentication); the
      // query wins over the body; the documented names are filled from the configured ones.
      build(url, body) {
        const payload: Record<string, unknown> = {};
        const fields = body !== null && typeof body === "object" ? body : {};
        for (const key of Object.keys(fields))
          setField(payload, key, (fields as Record<string, unknown>)[key]);
        for (const key of new Set(url.searchParams.keys()))
          setField(payload, key, url.searchParams.get(key));
        for (const [key, wire] of names) {
          const value = payload[wire];
          if (value !== undefined && value !== null) setField(payload, key, value);
        }
        return payload;
      },
    },
    schema: getCheckoutCartInfoRequestSchema,
    encodedFields: [],
    response: cartShape,
  };
  return createCallbackHandler(definition, fn, options);
}
