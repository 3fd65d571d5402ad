// The payload types are interfaces written out by hand (so that tsc names them in its messages,
// and a misspelt field is an error); the zod schemas are what runs. Each interface must equal its
// schema's type without the index signatures of the loose objects, at every depth: a field added
// to one and not the other fails to compile here (tsc checks this file in `npm test`).

import type { OmitIndexSignature as TypeFestOmitIndexSignature } from "type-fest";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type {
  GetCheckoutCartInfoRequest,
  getCheckoutCartInfoRequestSchema,
} from "../../src/callbacks/get-checkout-cart-info.js";
import type { DocumentedFields, OmitIndexSignature } from "../../src/schemas/common.js";
import {
  type AdditionalRequiredDocument,
  type Address,
  type AddressBookEntry,
  type additionalRequiredDocumentSchema,
  type addressBookEntrySchema,
  type addressSchema,
  type CardFields,
  type CartDiscount,
  type CartProduct,
  type CartProductAttribute,
  type CheckoutCartInfo,
  type CodeName,
  type Customer,
  type cardFieldsSchema,
  type cartDiscountSchema,
  type cartProductAttributeSchema,
  type cartProductSchema,
  type checkoutCartInfoSchema,
  type codeNameSchema,
  type customerSchema,
  type Discount,
  type discountSchema,
  type GiftCardRequest,
  type giftCardRequestSchema,
  type InternationalDetails,
  type internationalDetailsSchema,
  type KeyValuePair,
  type keyValuePairSchema,
  type NotifyOrderRefundRequest,
  type notifyOrderRefundSchema,
  type OrderBase,
  type OrderPaymentMethod,
  type OrderRefund,
  type OriginalOrder,
  type orderBaseSchema,
  type orderPaymentMethodSchema,
  type orderRefundSchema,
  originalOrderSchema,
  type Parcel,
  type ParcelProduct,
  type ParcelTracking,
  type PaymentDetails,
  type PerformOrderPaymentRequest,
  type Product,
  type ProductAttribute,
  type ProductLine,
  type ProductMetaData,
  type ProductRefundableAmount,
  type parcelProductSchema,
  type parcelSchema,
  type parcelTrackingSchema,
  type paymentDetailsSchema,
  type performOrderPaymentSchema,
  type productAttributeSchema,
  type productLineSchema,
  type productMetaDataSchema,
  type productRefundableAmountSchema,
  type productSchema,
  type RedeemGiftCardRequest,
  type RefundableAmount,
  type RefundComponent,
  type RefundDocument,
  type RefundGiftCardEntry,
  type RefundGiftCardRequest,
  type RefundProduct,
  type RefundReason,
  type RemoveRestrictedProductsRequest,
  type ReturnedProduct,
  type refundableAmountSchema,
  type refundComponentSchema,
  type refundDocumentSchema,
  type refundGiftCardEntrySchema,
  type refundProductSchema,
  type refundReasonSchema,
  type removeRestrictedProductsSchema,
  type returnedProductSchema,
  type SendAdditionalRequiredDocumentsToMerchantRequest,
  type SendOrderToMerchantRequest,
  type SendRMAInfoToMerchantRequest,
  type sendAdditionalRequiredDocumentsSchema,
  type sendOrderToMerchantSchema,
  type sendRMAInfoToMerchantSchema,
  type UpdateOrderShippingInfoRequest,
  type UpdateOrderStatusRequest,
  type UpdateParcelDispatchRequest,
  type UserDetails,
  type UserIdNumberType,
  type updateOrderShippingInfoSchema,
  type updateOrderStatusSchema,
  type updateParcelDispatchSchema,
  type userDetailsSchema,
  type userIdNumberTypeSchema,
  type VATRateType,
  type ValidateGiftCardRequest,
  type ValidateVoucherRequest,
  type vatRateTypeSchema,
} from "../../src/schemas/index.js";

/** What the merchant's function receives: the schema's output, minus index signatures. */
type Received<S extends z.ZodType> = DocumentedFields<z.output<S>>;
/** What the merchant writes (the cart): the schema's input, minus index signatures. */
type Written<S extends z.ZodType> = DocumentedFields<z.input<S>>;

describe("every payload interface equals its schema (without index signatures)", () => {
  it("the callbacks' payloads", () => {
    expectTypeOf<SendOrderToMerchantRequest>().toEqualTypeOf<
      Received<typeof sendOrderToMerchantSchema>
    >();
    expectTypeOf<UpdateOrderStatusRequest>().toEqualTypeOf<
      Received<typeof updateOrderStatusSchema>
    >();
    expectTypeOf<PerformOrderPaymentRequest>().toEqualTypeOf<
      Received<typeof performOrderPaymentSchema>
    >();
    expectTypeOf<UpdateOrderShippingInfoRequest>().toEqualTypeOf<
      Received<typeof updateOrderShippingInfoSchema>
    >();
    expectTypeOf<OrderBase>().toEqualTypeOf<Received<typeof orderBaseSchema>>();
    expectTypeOf<SendRMAInfoToMerchantRequest>().toEqualTypeOf<
      Received<typeof sendRMAInfoToMerchantSchema>
    >();
    expectTypeOf<UpdateParcelDispatchRequest>().toEqualTypeOf<
      Received<typeof updateParcelDispatchSchema>
    >();
    expectTypeOf<RemoveRestrictedProductsRequest>().toEqualTypeOf<
      Received<typeof removeRestrictedProductsSchema>
    >();
    expectTypeOf<SendAdditionalRequiredDocumentsToMerchantRequest>().toEqualTypeOf<
      Received<typeof sendAdditionalRequiredDocumentsSchema>
    >();
    expectTypeOf<GetCheckoutCartInfoRequest>().toEqualTypeOf<
      Received<typeof getCheckoutCartInfoRequestSchema>
    >();
    expectTypeOf<NotifyOrderRefundRequest>().toEqualTypeOf<
      Received<typeof notifyOrderRefundSchema>
    >();
    expectTypeOf<GiftCardRequest>().toEqualTypeOf<Received<typeof giftCardRequestSchema>>();
    expectTypeOf<ValidateGiftCardRequest>().toEqualTypeOf<Received<typeof giftCardRequestSchema>>();
    expectTypeOf<RedeemGiftCardRequest>().toEqualTypeOf<Received<typeof giftCardRequestSchema>>();
    expectTypeOf<RefundGiftCardRequest>().toEqualTypeOf<Received<typeof giftCardRequestSchema>>();
    expectTypeOf<ValidateVoucherRequest>().toEqualTypeOf<Received<typeof giftCardRequestSchema>>();
  });

  it("the resources they carry", () => {
    expectTypeOf<Address>().toEqualTypeOf<Received<typeof addressSchema>>();
    expectTypeOf<Customer>().toEqualTypeOf<Received<typeof customerSchema>>();
    expectTypeOf<Product>().toEqualTypeOf<Received<typeof productSchema>>();
    expectTypeOf<ProductLine>().toEqualTypeOf<Received<typeof productLineSchema>>();
    expectTypeOf<CodeName>().toEqualTypeOf<Received<typeof codeNameSchema>>();
    expectTypeOf<ProductMetaData>().toEqualTypeOf<Received<typeof productMetaDataSchema>>();
    expectTypeOf<ProductAttribute>().toEqualTypeOf<Received<typeof productAttributeSchema>>();
    expectTypeOf<KeyValuePair>().toEqualTypeOf<Received<typeof keyValuePairSchema>>();
    expectTypeOf<Discount>().toEqualTypeOf<Received<typeof discountSchema>>();
    expectTypeOf<InternationalDetails>().toEqualTypeOf<
      Received<typeof internationalDetailsSchema>
    >();
    expectTypeOf<PaymentDetails>().toEqualTypeOf<Received<typeof paymentDetailsSchema>>();
    expectTypeOf<OrderPaymentMethod>().toEqualTypeOf<Received<typeof orderPaymentMethodSchema>>();
    expectTypeOf<AdditionalRequiredDocument>().toEqualTypeOf<
      Received<typeof additionalRequiredDocumentSchema>
    >();
    expectTypeOf<OriginalOrder>().toEqualTypeOf<Received<typeof originalOrderSchema>>();
    expectTypeOf<Parcel>().toEqualTypeOf<Received<typeof parcelSchema>>();
    expectTypeOf<ParcelProduct>().toEqualTypeOf<Received<typeof parcelProductSchema>>();
    expectTypeOf<ParcelTracking>().toEqualTypeOf<Received<typeof parcelTrackingSchema>>();
    expectTypeOf<ReturnedProduct>().toEqualTypeOf<Received<typeof returnedProductSchema>>();
    expectTypeOf<CardFields>().toEqualTypeOf<Received<typeof cardFieldsSchema>>();
    expectTypeOf<RefundReason>().toEqualTypeOf<Received<typeof refundReasonSchema>>();
    expectTypeOf<RefundProduct>().toEqualTypeOf<Received<typeof refundProductSchema>>();
    expectTypeOf<RefundComponent>().toEqualTypeOf<Received<typeof refundComponentSchema>>();
    expectTypeOf<RefundDocument>().toEqualTypeOf<Received<typeof refundDocumentSchema>>();
    expectTypeOf<RefundGiftCardEntry>().toEqualTypeOf<Received<typeof refundGiftCardEntrySchema>>();
    expectTypeOf<OrderRefund>().toEqualTypeOf<Received<typeof orderRefundSchema>>();
    expectTypeOf<RefundableAmount>().toEqualTypeOf<Received<typeof refundableAmountSchema>>();
    expectTypeOf<ProductRefundableAmount>().toEqualTypeOf<
      Received<typeof productRefundableAmountSchema>
    >();
  });

  it("the cart the merchant writes (the schema's input side)", () => {
    expectTypeOf<CheckoutCartInfo>().toEqualTypeOf<Written<typeof checkoutCartInfoSchema>>();
    expectTypeOf<CartProduct>().toEqualTypeOf<Written<typeof cartProductSchema>>();
    expectTypeOf<CartProductAttribute>().toEqualTypeOf<
      Written<typeof cartProductAttributeSchema>
    >();
    expectTypeOf<CartDiscount>().toEqualTypeOf<Written<typeof cartDiscountSchema>>();
    expectTypeOf<UserDetails>().toEqualTypeOf<Written<typeof userDetailsSchema>>();
    expectTypeOf<AddressBookEntry>().toEqualTypeOf<Written<typeof addressBookEntrySchema>>();
    expectTypeOf<UserIdNumberType>().toEqualTypeOf<Written<typeof userIdNumberTypeSchema>>();
    expectTypeOf<VATRateType>().toEqualTypeOf<Written<typeof vatRateTypeSchema>>();
  });

  it("the check is strict: an extra field, a missing one, or another type fails it", () => {
    type Schema = Received<typeof originalOrderSchema>;
    interface Same {
      OrderId?: string | null | undefined;
    }
    interface Extra extends Same {
      Extra?: string;
    }
    interface Dropped {
      Other?: string;
    }
    interface Narrower {
      OrderId?: string | undefined;
    }
    expectTypeOf<Same>().toEqualTypeOf<Schema>();
    // @ts-expect-error an interface with a field the schema does not have
    expectTypeOf<Extra>().toEqualTypeOf<Schema>();
    // @ts-expect-error an interface without the schema's field (and with another)
    expectTypeOf<Dropped>().toEqualTypeOf<Schema>();
    // @ts-expect-error an interface typing a field otherwise (no null)
    expectTypeOf<Narrower>().toEqualTypeOf<Schema>();
    expect(Object.keys(originalOrderSchema.shape)).toStrictEqual(["OrderId"]);
  });
});

// The library's own OmitIndexSignature (the shipped declarations import no ESM-only package) is
// type-fest's: the same type for every kind of index signature, optional and readonly fields, and
// the loose objects of the schemas.
describe("OmitIndexSignature", () => {
  it("equals type-fest's", () => {
    interface Example {
      [x: string]: unknown;
      [x: number]: unknown;
      [x: symbol]: unknown;
      [x: `head-${string}`]: string;
      [x: `embedded-${number}`]: string;
      foo: "bar";
      qux?: "baz";
      readonly kept: number | null;
    }
    expectTypeOf<OmitIndexSignature<Example>>().toEqualTypeOf<
      TypeFestOmitIndexSignature<Example>
    >();
    expectTypeOf<OmitIndexSignature<Example>>().toEqualTypeOf<{
      foo: "bar";
      qux?: "baz";
      readonly kept: number | null;
    }>();
    expectTypeOf<keyof OmitIndexSignature<Record<string, unknown>>>().toEqualTypeOf<never>();
    type Loose = z.output<typeof originalOrderSchema>;
    expectTypeOf<OmitIndexSignature<Loose>>().toEqualTypeOf<TypeFestOmitIndexSignature<Loose>>();
    // @ts-expect-error a type that kept the index signature would differ
    expectTypeOf<Example>().toEqualTypeOf<TypeFestOmitIndexSignature<Example>>();
    expect(Object.keys(originalOrderSchema.shape)).toStrictEqual(["OrderId"]);
  });
});
