import { type CallbackDefinition, type CallbackFunction, handlerFactory } from "../core/engine.js";
import { type MessageResult, type NoResult, parcelDispatchShape } from "../core/responses.js";
import { type UpdateParcelDispatchRequest, updateParcelDispatchSchema } from "../schemas/index.js";
import { DISPATCH_ENCODED_FIELDS } from "./encoded-fields.js";

/**
 * Updated parcel dispatch information: POST, the dispatched parcel, answered with
 * `{ Success, Message, Description }`.
 */
export const updateParcelDispatch: CallbackDefinition<
  UpdateParcelDispatchRequest,
  MessageResult | NoResult
> & { readonly name: "UpdateParcelDispatch" } = {
  name: "UpdateParcelDispatch",
  methods: ["POST"],
  source: { kind: "json" },
  schema: updateParcelDispatchSchema,
  encodedFields: DISPATCH_ENCODED_FIELDS,
  response: parcelDispatchShape,
};

/**
 * The handler of UpdateParcelDispatch (POST): the service calls it when a parcel is dispatched,
 * with the parcel as the payload. Your function returns `{ Message?, Description? }` or nothing.
 * The library answers `{ Success: true, … }`; throw `CallbackError` to refuse.
 */
export const createUpdateParcelDispatchHandler = handlerFactory(updateParcelDispatch);

/** The merchant's function for UpdateParcelDispatch, to type a standalone function. */
export type UpdateParcelDispatchFunction = CallbackFunction<
  UpdateParcelDispatchRequest,
  MessageResult | NoResult
>;
