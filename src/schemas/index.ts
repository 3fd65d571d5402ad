export { type Address, addressSchema } from "./address.js";
export {
  type AddressBookEntry,
  addressBookEntrySchema,
  type CartDiscount,
  type CartProduct,
  type CartProductAttribute,
  type CheckoutCartInfo,
  cartDiscountSchema,
  cartProductAttributeSchema,
  cartProductSchema,
  checkoutCartInfoSchema,
  type UserDetails,
  type UserFields,
  type UserIdNumberType,
  userDetailsSchema,
  userIdNumberTypeSchema,
  type VATRateType,
  vatRateTypeSchema,
} from "./cart.js";
export { getCheckoutCartInfoRequestSchema, getCheckoutCartInfoSchema } from "./checkout-request.js";
export {
  type KeyValuePair,
  keyValuePairSchema,
  type OpenObject,
  type ProductAttribute,
  productAttributeSchema,
  type UrlParameters,
  urlParametersSchema,
} from "./common.js";
export { type Discount, discountSchema } from "./discount.js";
export {
  type DispatchedParcel,
  type UpdateParcelDispatchRequest,
  updateParcelDispatchSchema,
} from "./dispatch.js";
export {
  type SendAdditionalRequiredDocumentsToMerchantRequest,
  sendAdditionalRequiredDocumentsSchema,
  sendAdditionalRequiredDocumentsToMerchantSchema,
} from "./documents.js";
export {
  type CartTokenParts,
  extraField,
  splitCartToken,
  type UrlParameter,
  urlParameters,
} from "./fields.js";
export {
  type CardFields,
  cardFieldsSchema,
  type GiftCardRequest,
  giftCardRequestSchema,
  type RedeemGiftCardRequest,
  type RefundGiftCardRequest,
  redeemGiftCardSchema,
  refundGiftCardSchema,
  type ValidateGiftCardRequest,
  type ValidateVoucherRequest,
  validateGiftCardSchema,
  validateVoucherSchema,
} from "./gift-card.js";
export { type InternationalDetails, internationalDetailsSchema } from "./international.js";
export {
  type AdditionalRequiredDocument,
  additionalRequiredDocumentSchema,
  type Customer,
  customerSchema,
  type Order,
  type OrderBase,
  type OriginalOrder,
  orderBaseSchema,
  originalOrderSchema,
  type PerformOrderPaymentRequest,
  performOrderPaymentSchema,
  type SendOrderToMerchantRequest,
  type SubOrder,
  sendOrderToMerchantSchema,
  type UpdateOrderShippingInfoRequest,
  type UpdateOrderStatusRequest,
  updateOrderShippingInfoSchema,
  updateOrderStatusSchema,
} from "./order.js";
export {
  type Parcel,
  type ParcelProduct,
  type ParcelTracking,
  parcelProductSchema,
  parcelSchema,
  parcelTrackingSchema,
} from "./parcel.js";
export {
  type CardToCharge,
  hasCardToCharge,
  type OrderPaymentMethod,
  orderPaymentMethodSchema,
  type PaymentDetails,
  paymentDetailsOf,
  paymentDetailsSchema,
} from "./payment.js";
export {
  type CodeName,
  codeNameSchema,
  type Product,
  type ProductLine,
  type ProductMetaData,
  productLineSchema,
  productMetaDataSchema,
  productSchema,
} from "./product.js";
export {
  type NotifyOrderRefundRequest,
  notifyOrderRefundSchema,
  type OrderRefund,
  orderRefundSchema,
  type ProductRefundableAmount,
  productRefundableAmountSchema,
  type RefundableAmount,
  type RefundComponent,
  type RefundDocument,
  type RefundGiftCardEntry,
  type RefundProduct,
  type RefundReason,
  refundableAmountSchema,
  refundComponentSchema,
  refundDocumentSchema,
  refundGiftCardEntrySchema,
  refundProductSchema,
  refundReasonSchema,
} from "./refund.js";
export { isOrderStatus, parseSuccessValue } from "./response.js";
export {
  type RemoveRestrictedProductsRequest,
  removeRestrictedProductsSchema,
} from "./restricted.js";
export {
  type ReturnedProduct,
  returnedProductSchema,
  type SendRMAInfoToMerchantRequest,
  sendRMAInfoToMerchantSchema,
} from "./rma.js";
