import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type MessageResult, type NoResult, rmaShape } from "../core/responses.js";
import {
  type SendRMAInfoToMerchantRequest,
  sendRMAInfoToMerchantSchema,
} from "../schemas/index.js";
import { RMA_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * A return with an RMA number: POST, the return information, answered with
 * `{ Success: "True" | "False", Message, Description }`: Success as text, as the service reads it.
 */
export const sendRMAInfoToMerchant: CallbackDefinition<
  SendRMAInfoToMerchantRequest,
  MessageResult | NoResult
> & { readonly name: "SendRMAInfoToMerchant" } = {
  name: "SendRMAInfoToMerchant",
  methods: ["POST"],
  source: { kind: "json" },
  schema: sendRMAInfoToMerchantSchema,
  encodedFields: RMA_ENCODED_FIELDS,
  response: rmaShape,
};

/**
 * The handler of SendRMAInfoToMerchant (POST): the service calls it when a shopper returns
 * goods, with the return (RMA) as the payload. Your function returns `{ Message?, Description? }`
 * or nothing. The library answers `{ Success: "True", … }` (as text); throw `CallbackError` to
 * refuse (`{ Success: "False", Message, Description }`).
 */
export const createSendRMAInfoToMerchantHandler = handlerFactory(sendRMAInfoToMerchant);

/** The merchant's function for SendRMAInfoToMerchant, to type a standalone function. */
export type SendRMAInfoToMerchantFunction = CallbackFunction<
  SendRMAInfoToMerchantRequest,
  MessageResult | NoResult
>;
