import { z } from "zod";
import { optionalBoolean, optionalNumber, optionalString, optionalUnknown } from "./common.js";

// NotifyOrderRefund carries a refund as the service's refund resources describe it (service
// document 2.4). Amounts arrive as text with four decimals ("170.1000") and are kept as that
// exact text: convert them with a decimal library, never through a float.

/** `RefundReason`: why the order was refunded. */
export const refundReasonSchema = z.looseObject({
  OrderRefundReasonCode: optionalString,
  Name: optionalString,
});

/** Why an order was refunded. */
export interface RefundReason {
  OrderRefundReasonCode?: string | null | undefined;
  Name?: string | null | undefined;
}

/** One refunded product line; every field is text, amounts included. */
export const refundProductSchema = z.looseObject({
  CartItemId: optionalString,
  RefundQuantity: optionalString,
  RefundAmount: optionalString,
  OriginalRefundAmount: optionalString,
  RefundAmountPercent: optionalString,
  RefundReason: optionalString,
  RefundComments: optionalString,
  Sku: optionalString,
  ProductCode: optionalString,
  productGroupCode: optionalString,
  ProductCodeSecondary: optionalString,
  productGroupCodeSecondary: optionalString,
});

/** A refunded product line (all text, as sent: `RefundAmount: "170.1000"`). */
export interface RefundProduct {
  CartItemId?: string | null | undefined;
  RefundQuantity?: string | null | undefined;
  /** In the refund's currency, as sent ("170.1000"). */
  RefundAmount?: string | null | undefined;
  OriginalRefundAmount?: string | null | undefined;
  RefundAmountPercent?: string | null | undefined;
  RefundReason?: string | null | undefined;
  RefundComments?: string | null | undefined;
  Sku?: string | null | undefined;
  ProductCode?: string | null | undefined;
  productGroupCode?: string | null | undefined;
  ProductCodeSecondary?: string | null | undefined;
  productGroupCodeSecondary?: string | null | undefined;
}

/** One component of the refund (shipping, duties, a service gesture…). */
export const refundComponentSchema = z.looseObject({
  Amount: optionalString,
  OriginalAmount: optionalString,
  IsChargedToMerchant: optionalString,
  ComponentType: optionalString,
});

/** A component of the refund, all text as sent. */
export interface RefundComponent {
  Amount?: string | null | undefined;
  OriginalAmount?: string | null | undefined;
  IsChargedToMerchant?: string | null | undefined;
  ComponentType?: string | null | undefined;
}

/** A document of the refund (a credit note). */
export const refundDocumentSchema = z.looseObject({
  DocumentData: optionalString,
  CreditNoteUrl: optionalString,
  DocumentTypeCode: optionalString,
  DocumentTypeName: optionalString,
  DocumentExtension: optionalString,
});

/** A document of the refund: `DocumentData` is the file in base64. */
export interface RefundDocument {
  DocumentData?: string | null | undefined;
  CreditNoteUrl?: string | null | undefined;
  DocumentTypeCode?: string | null | undefined;
  DocumentTypeName?: string | null | undefined;
  DocumentExtension?: string | null | undefined;
}

/**
 * A gift card a NotifyOrderRefund's refund went to (an entry of `GiftCardsData`): `CardId` (other
 * fields not documented, kept). Not the RefundGiftCard callback's request: that is
 * `refundGiftCardSchema`.
 */
export const refundGiftCardEntrySchema = z.looseObject({
  CardId: z.union([z.number(), z.string()]).nullish(),
});

/** A gift card a NotifyOrderRefund's refund went to (an entry of `GiftCardsData`). */
export interface RefundGiftCardEntry {
  CardId?: number | string | null | undefined;
}

// The fields of one refund (service document 2.4, "Refund entry"): the entries of `Refunds`, and
// the top level of a NotifyOrderRefund body that carries a single refund.
const refundShape = {
  RefundID: optionalString,
  RMANumber: optionalString,
  MerchantRMANumber: optionalString,
  FullRefund: optionalBoolean,
  ProductsDutiesRefund: optionalBoolean,
  ShippingRefund: optionalBoolean,
  // Nullable; its shape is not documented.
  RefundAsGiftCard: optionalUnknown,
  TotalRefundAmount: optionalString,
  OriginalTotalRefundAmount: optionalString,
  ServiceGestureAmount: optionalString,
  TotalMoneyRefundAmount: optionalString,
  DutiesAmount: optionalString,
  ShippingAmount: optionalString,
  CustomerPrepaidRefundAmount: optionalString,
  OriginalCustomerPrepaidRefundAmount: optionalString,
  TotalGiftCardsRefundAmount: optionalString,
  TotalGiftCardsRefundAmountinMerchantCurrency: optionalNumber,
  TotalLoyaltyPointsRefunded: optionalNumber,
  TotalLoyaltyPointsRefundAmount: optionalNumber,
  GiftCardsData: z.array(refundGiftCardEntrySchema).nullish(),
  ExternalReference: optionalString,
  InitiatedBy: optionalString,
  CurrencyCode: optionalString,
  OriginalCurrencyCode: optionalString,
  RefundReason: refundReasonSchema.nullish(),
  RefundProducts: z.array(refundProductSchema).nullish(),
  RefundComponents: z.array(refundComponentSchema).nullish(),
  RefundComments: optionalString,
  RefundDocument: z.array(refundDocumentSchema).nullish(),
};

/** One refund of an order (an entry of `Refunds`). */
export const orderRefundSchema = z.looseObject(refundShape);

/** One refund of an order. Amounts are the exact text sent (`"170.1000"`). */
export interface OrderRefund {
  RefundID?: string | null | undefined;
  RMANumber?: string | null | undefined;
  MerchantRMANumber?: string | null | undefined;
  FullRefund?: boolean | null | undefined;
  ProductsDutiesRefund?: boolean | null | undefined;
  ShippingRefund?: boolean | null | undefined;
  /** Shape not documented. */
  RefundAsGiftCard?: unknown;
  /** The amount refunded, as sent ("170.1000"). */
  TotalRefundAmount?: string | null | undefined;
  OriginalTotalRefundAmount?: string | null | undefined;
  ServiceGestureAmount?: string | null | undefined;
  TotalMoneyRefundAmount?: string | null | undefined;
  DutiesAmount?: string | null | undefined;
  ShippingAmount?: string | null | undefined;
  CustomerPrepaidRefundAmount?: string | null | undefined;
  OriginalCustomerPrepaidRefundAmount?: string | null | undefined;
  TotalGiftCardsRefundAmount?: string | null | undefined;
  TotalGiftCardsRefundAmountinMerchantCurrency?: number | null | undefined;
  TotalLoyaltyPointsRefunded?: number | null | undefined;
  TotalLoyaltyPointsRefundAmount?: number | null | undefined;
  GiftCardsData?: RefundGiftCardEntry[] | null | undefined;
  ExternalReference?: string | null | undefined;
  InitiatedBy?: string | null | undefined;
  CurrencyCode?: string | null | undefined;
  OriginalCurrencyCode?: string | null | undefined;
  RefundReason?: RefundReason | null | undefined;
  RefundProducts?: RefundProduct[] | null | undefined;
  RefundComponents?: RefundComponent[] | null | undefined;
  /** Free text, as sent (not decoded). */
  RefundComments?: string | null | undefined;
  RefundDocument?: RefundDocument[] | null | undefined;
}

/** What is left to refund of one product line. */
export const productRefundableAmountSchema = z.looseObject({
  CartItemId: optionalString,
  Sku: optionalString,
  ProductCode: optionalString,
  productGroupCode: optionalString,
  ProductCodeSecondary: optionalString,
  productGroupCodeSecondary: optionalString,
  RefundableTotalAmount: optionalNumber,
  // An integer per the document; a decimal quantity is not refused.
  RefundableQuantity: optionalNumber,
});

/** What is left to refund of one product line. */
export interface ProductRefundableAmount {
  CartItemId?: string | null | undefined;
  Sku?: string | null | undefined;
  ProductCode?: string | null | undefined;
  productGroupCode?: string | null | undefined;
  ProductCodeSecondary?: string | null | undefined;
  productGroupCodeSecondary?: string | null | undefined;
  RefundableTotalAmount?: number | null | undefined;
  RefundableQuantity?: number | null | undefined;
}

/** `RefundableAmount`: what is left to refund of the order. */
export const refundableAmountSchema = z.looseObject({
  CurrencyCode: optionalString,
  TotalCreditAmount: optionalNumber,
  RefundableShippingAmount: optionalNumber,
  RefundableDutiesAmount: optionalNumber,
  ProductRefundableAmount: z.array(productRefundableAmountSchema).nullish(),
});

/** What is left to refund of the order (numbers, as the document states). */
export interface RefundableAmount {
  CurrencyCode?: string | null | undefined;
  TotalCreditAmount?: number | null | undefined;
  RefundableShippingAmount?: number | null | undefined;
  RefundableDutiesAmount?: number | null | undefined;
  ProductRefundableAmount?: ProductRefundableAmount[] | null | undefined;
}

/**
 * NotifyOrderRefund body: the refund details of an order (service document 2.4) — its ids, its
 * `Refunds` and `RefundableAmount` — and, as integrations see it, the refund's own fields at the
 * top level. Only `OrderId` is required.
 */
export const notifyOrderRefundSchema = z.looseObject({
  OrderId: z.string(),
  MerchantGUID: optionalString,
  MerchantOrderId: optionalString,
  MerchantInternalOrderId: optionalString,
  WebStoreCode: optionalString,
  WebStoreInstanceCode: optionalString,
  ...refundShape,
  Refunds: z.array(orderRefundSchema).nullish(),
  RefundableAmount: refundableAmountSchema.nullish(),
});

/**
 * NotifyOrderRefund: an order was refunded. The refund is at the top level (one refund) or in
 * `Refunds` (the document's refund details); amounts are the exact text sent (`"170.1000"`).
 */
export interface NotifyOrderRefundRequest extends OrderRefund {
  OrderId: string;
  MerchantGUID?: string | null | undefined;
  MerchantOrderId?: string | null | undefined;
  MerchantInternalOrderId?: string | null | undefined;
  WebStoreCode?: string | null | undefined;
  WebStoreInstanceCode?: string | null | undefined;
  /** The order's refunds, when the body carries the document's refund details. */
  Refunds?: OrderRefund[] | null | undefined;
  /** What is left to refund of the order. */
  RefundableAmount?: RefundableAmount | null | undefined;
}
