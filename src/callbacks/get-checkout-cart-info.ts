import { z } from "zod";
import {
  type CallbackDefinition,
  type CallbackFunction,
  type CallbackHandler,
  createCallbackHandler,
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
    const paths = checked.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
    return { invalid: `not a CheckoutCartInfo: ${paths.join("; ")}` };
  },
  failure: responseInfoShape.failure,
};

/**
 * The cart during checkout: GET (or POST) with `merchantCartToken`, `countryCode` and
 * `currencyCode`, answered with the CheckoutCartInfo object. Called on every cart page load, so
 * keep it fast; a failure means checkout does not open.
 */
export function createGetCheckoutCartInfoHandler(
  fn: CallbackFunction<GetCheckoutCartInfoRequest, CheckoutCartInfo>,
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
      // The query wins; a POST body (JSON object or form fields) fills what the query lacks.
      build(url, body) {
        const fields = (body ?? {}) as Record<string, unknown>;
        const payload: Record<string, unknown> = {};
        for (const [key, wire] of names) {
          const value =
            url.searchParams.get(wire) ?? (Object.hasOwn(fields, wire) ? fields[wire] : undefined);
          if (value !== undefined && value !== null) payload[key] = value;
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
