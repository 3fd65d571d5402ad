export { type Address, addressSchema } from "./address.js";
export {
  type AddressBookEntry,
  addressBookEntrySchema,
  type CartDiscount,
  type CartProduct,
  type CheckoutCartInfo,
  cartDiscountSchema,
  cartProductSchema,
  checkoutCartInfoSchema,
  type UserDetails,
  userDetailsSchema,
  type VATRateType,
  vatRateTypeSchema,
} from "./cart.js";
export {
  type KeyValuePair,
  keyValuePairSchema,
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
} from "./documents.js";
export { type InternationalDetails, internationalDetailsSchema } from "./international.js";
export {
  type AdditionalRequiredDocument,
  additionalRequiredDocumentSchema,
  type Customer,
  customerSchema,
  type Order,
  orderBaseSchema,
  type PerformOrderPaymentRequest,
  performOrderPaymentSchema,
  type SendOrderToMerchantRequest,
  sendOrderToMerchantSchema,
  type UpdateOrderStatusRequest,
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
  type OrderPaymentMethod,
  orderPaymentMethodSchema,
  type PaymentDetails,
  paymentDetailsSchema,
} from "./payment.js";
export { type Product, productSchema } from "./product.js";
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
