import { z } from "zod";
import { isRecord } from "../core/objects.js";
import {
  optionalBoolean,
  optionalNumber,
  optionalString,
  productAttributeSchema,
} from "./common.js";

/** Brand and category entries: the spec writes {code, name}; PascalCase is accepted as well. */
export const codeNameSchema = z.looseObject({
  code: optionalString,
  name: optionalString,
  Code: optionalString,
  Name: optionalString,
});

/** Product MetaData: {Attributes}. */
export const productMetaDataSchema = z.looseObject({
  Attributes: z.array(productAttributeSchema).nullish(),
});

/** Order product (spec 2.3, Merchant.Product). `Sku` or `SKU` must be present. */
export const productSchema = z
  .looseObject({
    Sku: optionalString,
    // Some integrations see the upper-case spelling.
    SKU: optionalString,
    ProductName: optionalString,
    Price: z.number(),
    InternationalPrice: optionalNumber,
    DiscountedPrice: optionalNumber,
    InternationalDiscountedPrice: optionalNumber,
    Quantity: z.number(),
    VATRate: z.number(),
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
  })
  .superRefine(
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

function hasSkuIssue(issues: readonly { readonly path?: readonly PropertyKey[] }[]): boolean {
  return issues.some((issue) => issue.path?.[0] === "Sku" || issue.path?.[0] === "SKU");
}

export type Product = z.output<typeof productSchema>;
export type CodeName = z.output<typeof codeNameSchema>;
