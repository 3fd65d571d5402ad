import {
  type CallbackDefinition,
  type CallbackFunction,
  DEFAULT_DOCUMENT_MAX_BODY_BYTES,
  handlerFactory,
} from "../core/engine.js";
import { type NoResult, type ResponseInfoResult, responseInfoShape } from "../core/responses.js";
import {
  type SendAdditionalRequiredDocumentsToMerchantRequest,
  sendAdditionalRequiredDocumentsSchema,
} from "../schemas/index.js";

/**
 * The documents an order waited for (AdditionalRequiredDocuments) are ready. The specification
 * does not show the payload: it arrives as an open object, answered with ResponseInfo.
 */
export const sendAdditionalRequiredDocumentsToMerchant: CallbackDefinition<
  SendAdditionalRequiredDocumentsToMerchantRequest,
  ResponseInfoResult | NoResult
> & { readonly name: "SendAdditionalRequiredDocumentsToMerchant" } = {
  name: "SendAdditionalRequiredDocumentsToMerchant",
  methods: ["POST"],
  source: { kind: "json" },
  schema: sendAdditionalRequiredDocumentsSchema,
  encodedFields: [],
  response: responseInfoShape<ResponseInfoResult | NoResult>(),
  // The documents themselves may arrive as base64 in the body.
  defaultMaxBodyBytes: DEFAULT_DOCUMENT_MAX_BODY_BYTES,
};

/**
 * The handler of SendAdditionalRequiredDocumentsToMerchant (POST): the service calls it with
 * documents an order needs (an open object, base64 `DocumentData`; 16 MiB by default). Your
 * function returns `{ InternalOrderId, … }` or nothing, as UpdateOrderStatus's. The library
 * answers ResponseInfo `{ Success: true, … }`; throw `CallbackError` to refuse.
 */
export const createSendAdditionalRequiredDocumentsToMerchantHandler = handlerFactory(
  sendAdditionalRequiredDocumentsToMerchant,
);

/** The merchant's function for SendAdditionalRequiredDocumentsToMerchant, to type a standalone function. */
export type SendAdditionalRequiredDocumentsToMerchantFunction = CallbackFunction<
  SendAdditionalRequiredDocumentsToMerchantRequest,
  ResponseInfoResult | NoResult
>;
