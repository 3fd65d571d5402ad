import { z } from "zod";
import { isRecord } from "../core/objects.js";
import {
  optionalBoolean,
  optionalNumber,
  optionalString,
  type ProductAttribute,
  productAttributeSchema,
} from "./common.js";

/** Brand and category entries: the spec writes {code, name}; PascalCase is accepted as well. */
export const codeNameSchema = z.looseObject({
  code: optionalString,
  name: optionalString,
  Code: optionalString,
  Name: optionalString,
});

/** A brand or a category: the spec writes `{code, name}`; `{Code, Name}` is seen as well. */
export interface CodeName {
  code?: string | null | undefined;
  name?: string | null | undefined;
  Code?: string | null | undefined;
  Name?: string | null | undefined;
}

/** Product MetaData: {Attributes}. */
export const productMetaDataSchema = z.looseObject({
  Attributes: z.array(productAttributeSchema).nullish(),
});

/** A product's `MetaData`. */
export interface ProductMetaData {
  Attributes?: ProductAttribute[] | null | undefined;
}

/**
 * At least one of `Sku` and `SKU` is a string: a line without a SKU cannot be booked. A named
 * check, so that the generated checker (scripts/generate-checkers.ts) knows it and emits the same
 * rule instead of leaving every order to zod.
 */
export const productSkuRule = z.superRefine<{ Sku?: unknown; SKU?: unknown }>(
  (product, ctx) => {
    if (typeof product.Sku !== "string" && typeof product.SKU !== "string") {
      // Reported like a missing required field so callers see the usual message and path.
      ctx.addIssue({
        code: "invalid_type",
        expected: "string",
        input: product.Sku,
        path: ["Sku"],
      });
    }
  },
  // Runs beside other field issues (one report lists everything), but not on a non-object.
  { when: (payload) => isRecord(payload.value) && !hasSkuIssue(payload.issues) },
);

/**
 * A product line of an order (spec 2.3, Merchant.Product) as the callbacks that update an order
 * carry it (UpdateOrderStatus, UpdateOrderShippingInfo, PerformOrderPayment): every field may be
 * missing or `null`, a SKU included. Those callbacks act on the order by its `OrderId`; refusing
 * a line without a price would lose a cancellation or a payment the service does not resend.
 */
export const productLineSchema = z.looseObject({
  Sku: optionalString,
  // Some integrations see the upper-case spelling.
  SKU: optionalString,
  ProductName: optionalString,
  Price: optionalNumber,
  InternationalPrice: optionalNumber,
  DiscountedPrice: optionalNumber,
  InternationalDiscountedPrice: optionalNumber,
  Quantity: optionalNumber,
  VATRate: optionalNumber,
  CartItemId: optionalString,
  ParentCartItemId: optionalString,
  ChildCartItemId: optionalString,
  RoundingRate: optionalNumber,
  IsBackOrdered: optionalBoolean,
  BackOrderDate: optionalString,
  GenericHSCode: optionalString,
  GiftMessage: optionalString,
  Brand: codeNameSchema.nullish(),
  Categories: z.array(codeNameSchema).nullish(),
  Attributes: z.array(productAttributeSchema).nullish(),
  MetaData: productMetaDataSchema.nullish(),
  PriceBeforeRoundingRate: optionalNumber,
  HandlingCode: optionalString,
  ListPrice: optionalNumber,
  InternationalListPrice: optionalNumber,
  DiscountedPriceForCustoms: optionalNumber,
  CustomerVATRate: optionalNumber,
});

/**
 * Order product of SendOrderToMerchant (spec 2.3, Merchant.Product). `Sku` or `SKU`, `Price` and
 * `Quantity` must be present: a line without them cannot be booked. Everything else may be
 * missing or `null` (`VATRate` included: the order is usable without it).
 */
export const productSchema = productLineSchema
  .extend({
    Price: z.number(),
    Quantity: z.number(),
  })
  .check(productSkuRule);

function hasSkuIssue(issues: readonly { readonly path?: readonly PropertyKey[] | undefined }[]) {
  return issues.some((issue) => issue.path?.[0] === "Sku" || issue.path?.[0] === "SKU");
}

/**
 * A line of an order as UpdateOrderStatus, UpdateOrderShippingInfo and PerformOrderPayment carry
 * it (spec 2.3): every field may be missing or `null`.
 */
export interface ProductLine {
  /** The merchant's SKU; some payloads spell it `SKU`. */
  Sku?: string | null | undefined;
  SKU?: string | null | undefined;
  ProductName?: string | null | undefined;
  /** Line price in the merchant's currency. */
  Price?: number | null | undefined;
  /** Line price in the shopper's currency. */
  InternationalPrice?: number | null | undefined;
  DiscountedPrice?: number | null | undefined;
  InternationalDiscountedPrice?: number | null | undefined;
  Quantity?: number | null | undefined;
  VATRate?: number | null | undefined;
  CartItemId?: string | null | undefined;
  ParentCartItemId?: string | null | undefined;
  ChildCartItemId?: string | null | undefined;
  RoundingRate?: number | null | undefined;
  IsBackOrdered?: boolean | null | undefined;
  BackOrderDate?: string | null | undefined;
  GenericHSCode?: string | null | undefined;
  /** Free text of the shopper, as sent (not decoded). */
  GiftMessage?: string | null | undefined;
  Brand?: CodeName | null | undefined;
  Categories?: CodeName[] | null | undefined;
  Attributes?: ProductAttribute[] | null | undefined;
  MetaData?: ProductMetaData | null | undefined;
  PriceBeforeRoundingRate?: number | null | undefined;
  HandlingCode?: string | null | undefined;
  ListPrice?: number | null | undefined;
  InternationalListPrice?: number | null | undefined;
  DiscountedPriceForCustoms?: number | null | undefined;
  CustomerVATRate?: number | null | undefined;
}

/**
 * A line of a new order (SendOrderToMerchant, spec 2.3): `Price` and `Quantity` are required,
 * and at least one of `Sku` and `SKU` is a string.
 */
export interface Product extends ProductLine {
  /** Line price in the merchant's currency. */
  Price: number;
  Quantity: number;
}
