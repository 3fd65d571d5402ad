/**
 * Realistic payloads of every callback, as the service sends them. Values the service
 * form-URL-encodes (names, address lines, e-mails, phones, URLs, free text of the shopper) are
 * produced by `encodeFormValue` from their plain text; the operator's own address (the Secondary*
 * pair when the shopper is primary) arrives plain, as on the wire.
 */
import type { GetCheckoutCartInfoRequest } from "../callbacks/get-checkout-cart-info.js";
import { encodeFormValue as enc } from "../decode/form.js";
import type {
  Address,
  GiftCardRequest,
  NotifyOrderRefundRequest,
  PaymentDetails,
  PerformOrderPaymentRequest,
  RedeemGiftCardRequest,
  RefundGiftCardRequest,
  RemoveRestrictedProductsRequest,
  SendAdditionalRequiredDocumentsToMerchantRequest,
  SendOrderToMerchantRequest,
  SendRMAInfoToMerchantRequest,
  UpdateOrderShippingInfoRequest,
  UpdateOrderStatusRequest,
  UpdateParcelDispatchRequest,
  ValidateGiftCardRequest,
  ValidateVoucherRequest,
} from "../schemas/index.js";

/** The merchant GUID every sample payload carries (override it with `merchantGuid`). */
export const SAMPLE_MERCHANT_GUID = "3f0e2c9a-5b1d-4c8e-9a7f-1d2e3f4a5b6c";
/** The service order id of the samples. */
export const SAMPLE_ORDER_ID = "GE927127001US";
/** The merchant order id of the samples that follow an earlier SendOrderToMerchant. */
export const SAMPLE_MERCHANT_ORDER_ID = "100004217";
/** The cart token of the samples (GetCheckoutCartInfo's `merchantCartToken`). */
export const SAMPLE_CART_TOKEN = "b7c1e0d4-2f6a-4e3b-8c9d-0a1b2c3d4e5f";
/**
 * The service's own cart token (from its SendCart, kept in the shopper's session): the `CartToken`
 * of RemoveRestrictedProducts (spec 4.7) and of the gift-card requests, never the merchant's.
 */
const SERVICE_CART_TOKEN = "8f2d6e1a-93b4-4c57-a0e2-5b9d7c3f1e84";
/** The shopper's session of the gift-card and voucher samples (`AuthToken`; override with `authToken`). */
export const SAMPLE_AUTH_TOKEN = "c2hvcHBlci1zZXNzaW9uLXRva2VuLTEwNDQy";
/** The shopper's session id of the gift-card and voucher samples (`SessionId`). */
export const SAMPLE_SESSION_ID = "sess-5f2c81d0";
/** The gift card of the gift-card samples (`CardFields.CardId`). */
export const SAMPLE_GIFT_CARD_ID = "GC-7342-1109-5561";

/** The payload type of each callback, as the samples build it. */
export interface SamplePayloads {
  GetCheckoutCartInfo: GetCheckoutCartInfoRequest;
  SendOrderToMerchant: SendOrderToMerchantRequest;
  UpdateOrderStatus: UpdateOrderStatusRequest;
  PerformOrderPayment: PerformOrderPaymentRequest;
  SendRMAInfoToMerchant: SendRMAInfoToMerchantRequest;
  UpdateParcelDispatch: UpdateParcelDispatchRequest;
  RemoveRestrictedProducts: RemoveRestrictedProductsRequest;
  SendAdditionalRequiredDocumentsToMerchant: SendAdditionalRequiredDocumentsToMerchantRequest;
  ValidateGiftCard: ValidateGiftCardRequest;
  RedeemGiftCard: RedeemGiftCardRequest;
  RefundGiftCard: RefundGiftCardRequest;
  ValidateVoucher: ValidateVoucherRequest;
  NotifyOrderRefund: NotifyOrderRefundRequest;
  UpdateOrderShippingInfo: UpdateOrderShippingInfoRequest;
}

/**
 * GetCheckoutCartInfo's query parameters as the service writes them in the URL: every value text
 * (`IsStockValidation: "1"`), the token under the name it comes by (`cartToken`). What
 * `capturedPayload("GetCheckoutCartInfo")` gives, to send with `sendCallback`; not what your cart
 * function receives: the handler reads it into a `GetCheckoutCartInfoRequest` (`merchantCartToken`
 * from `cartToken`, `IsStockValidation: true`).
 */
export interface GetCheckoutCartInfoQuery {
  merchantCartToken?: string;
  cartToken?: string;
  countryCode?: string;
  currencyCode?: string;
  IsStockValidation?: string;
  isFixedPriceSupported?: string;
  MerchantGUID?: string;
  [parameter: string]: string | undefined;
}

/**
 * The type of each captured payload (`capturedPayload`), as the service sends it: the request
 * types for the JSON bodies, the query's text for GetCheckoutCartInfo.
 */
export interface CapturedPayloads {
  GetCheckoutCartInfo: GetCheckoutCartInfoQuery;
  SendOrderToMerchant: SendOrderToMerchantRequest;
  PerformOrderPayment: PerformOrderPaymentRequest;
  UpdateOrderStatus: UpdateOrderStatusRequest;
}

/**
 * Fields the service sends beyond the documented ones ("requests may contain more parameters than
 * listed"): kept in the samples, outside the payload types.
 */
function unlisted(fields: Record<string, unknown>): object {
  return fields;
}

/** The shopper's address: every listed field encoded as the service encodes it. */
function shopperAddress(): Address {
  return {
    FirstName: enc("Jane"),
    LastName: enc("Doe"),
    MiddleName: null,
    Salutation: null,
    Company: null,
    Address1: enc("548 Market St."),
    Address2: enc("Suite 200"),
    City: enc("San Francisco"),
    StateCode: "CA",
    StateOrProvince: enc("California"),
    Zip: enc("94104"),
    Email: enc("jane.doe@example.com"),
    Phone1: enc("+1 415 555 0100"),
    Phone2: null,
    Fax: null,
    CountryCode: "US",
    CountryCode3: "USA",
    CountryName: enc("United States"),
    CollectionPointId: null,
    AddressBookId: null,
    AddressBookName: null,
    CustomerTaxId: null,
  };
}

/** The operator's own address: sent plain, even in fields that are usually encoded. */
function operatorAddress(): Address {
  return {
    FirstName: "Returns",
    LastName: "Desk",
    Company: "Example Cross-Border Logistics Ltd",
    Address1: "45 Leather Lane",
    Address2: null,
    City: "London",
    StateCode: null,
    StateOrProvince: null,
    Zip: "EC1N 7TJ",
    Email: "info@example.com",
    Phone1: "+ 44 (0)808 258 0300",
    Phone2: null,
    Fax: null,
    CountryCode: "GB",
    CountryCode3: "GBR",
    CountryName: "United Kingdom",
  };
}

/** A test card (the well-known Visa test number), as PerformOrderPayment carries it. */
function paymentDetails(extra: Partial<PaymentDetails> = {}): PaymentDetails {
  return {
    CardNumber: "4111111111111111",
    CVVNumber: "737",
    ExpirationDate: "2030-03-31",
    OwnerFirstName: enc("Jane"),
    OwnerLastName: enc("Doe"),
    OwnerName: null,
    PaymentMethodCode: "1",
    PaymentMethodName: "Visa",
    PaymentMethodTypeCode: "CreditCard",
    CountryCode: "US",
    CountryName: enc("United States"),
    CountryCode3: "USA",
    Address1: enc("548 Market St."),
    Address2: null,
    City: enc("San Francisco"),
    StateCode: "CA",
    StateOrProvince: enc("California"),
    Zip: enc("94104"),
    Phone1: enc("+1 415 555 0100"),
    Phone2: null,
    Fax: null,
    Email: enc("jane.doe@example.com"),
    ...extra,
  };
}

function sendOrderToMerchant(): SendOrderToMerchantRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    MerchantOrderId: null,
    CartId: "58211",
    CartToken: SAMPLE_CART_TOKEN,
    CartHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    UserId: "10442",
    CurrencyCode: "EUR",
    StatusCode: "N/A",
    ClearCart: true,
    Products: [
      {
        Sku: "TSHIRT-BLK-M",
        ProductName: "Organic Cotton T-Shirt",
        Price: 29.0,
        InternationalPrice: 34.5,
        DiscountedPrice: 26.1,
        InternationalDiscountedPrice: 31.05,
        Quantity: 2,
        VATRate: 20.0,
        CartItemId: "1",
        ParentCartItemId: null,
        ChildCartItemId: null,
        RoundingRate: 0.7697801068639539,
        IsBackOrdered: false,
        BackOrderDate: null,
        GenericHSCode: "610910",
        GiftMessage: null,
        Brand: { Code: "ACME", Name: "Acme Apparel" },
        Categories: [
          { Code: "TOPS", Name: "Tops" },
          { Code: "TSHIRTS", Name: "T-Shirts" },
        ],
        Attributes: [
          { AttributeKey: "color", AttributeValue: "black" },
          { AttributeKey: "size", AttributeValue: "M" },
        ],
        MetaData: { Attributes: [{ AttributeKey: "warehouse", AttributeValue: "DE-01" }] },
        PriceBeforeRoundingRate: 28.9961,
        HandlingCode: null,
        ListPrice: 29.0,
        InternationalListPrice: 34.5,
        DiscountedPriceForCustoms: 26.1,
        CustomerVATRate: 0,
        ...unlisted({ InternationalPriceBeforeRounding: 34.49612345678901 }),
      },
      {
        Sku: "HOODIE-GRY-L",
        ProductName: "Fleece Hoodie",
        Price: 59.9,
        InternationalPrice: 71.25,
        DiscountedPrice: 53.91,
        InternationalDiscountedPrice: 64.13,
        Quantity: 1,
        VATRate: 20,
        CartItemId: "2",
        ParentCartItemId: null,
        ChildCartItemId: "3",
        RoundingRate: 0.7697801068639539,
        IsBackOrdered: true,
        BackOrderDate: "2025-04-02T00:00:00",
        GenericHSCode: "611030",
        // .NET's UrlEncode keeps `!` as it is.
        GiftMessage: enc("Happy birthday!"),
        // The spec's spelling (001 §2.3), where the first line has the {Code, Name} also seen: code
        // that reads one spelling only finds an empty brand in a test (review fidelity-2).
        Brand: { code: "ACME", name: "Acme Apparel" },
        Categories: [{ code: "HOODIES", name: "Hoodies" }],
        Attributes: [],
        MetaData: null,
        ListPrice: 64.9,
        InternationalListPrice: 77.2,
        DiscountedPriceForCustoms: 53.91,
      },
      {
        Sku: "GIFTWRAP",
        ProductName: "Gift wrapping",
        Price: 3.5,
        InternationalPrice: 4.16,
        DiscountedPrice: 3.5,
        InternationalDiscountedPrice: 4.16,
        Quantity: 1,
        VATRate: 20,
        CartItemId: "3",
        ParentCartItemId: "2",
        ChildCartItemId: null,
        RoundingRate: 1,
        IsBackOrdered: false,
        GenericHSCode: null,
        Brand: null,
        Categories: null,
        Attributes: null,
      },
    ],
    Customer: {
      EmailAddress: enc("jane.doe@example.com"),
      IsEndCustomerPrimary: true,
      SendConfirmation: false,
    },
    // A `%` and a `+` in decoded values (review PIT-7): a merchant decoding the address lines or
    // e-mails again fails on the sample (URIError), as it would on a real order.
    PrimaryShipping: { ...shopperAddress(), Address2: enc("Unit 5, 100% Cotton Mill") },
    SecondaryShipping: operatorAddress(),
    PrimaryBilling: {
      FirstName: enc("Jane"),
      LastName: enc("Doe"),
      Company: null,
      Address1: enc("548 Market St."),
      Address2: enc("Suite 200"),
      City: enc("San Francisco"),
      StateCode: "CA",
      StateOrProvince: enc("California"),
      Zip: enc("94104"),
      Email: enc("jane.doe+shop@example.com"),
      Phone1: enc("+1 415 555 0100"),
      CountryCode: "US",
      CountryCode3: "USA",
      CountryName: enc("United States"),
      CustomerTaxId: enc("123/45-678"),
    },
    // The operator's addresses arrive plain, and with fewer fields.
    SecondaryBilling: {
      FirstName: "Accounts",
      LastName: "Receivable",
      Company: "Example Cross-Border Logistics Ltd",
      Address1: "45 Leather Lane",
      City: "London",
      Zip: "EC1N 7TJ",
      Email: "info@example.com",
      Phone1: "+ 44 (0)808 258 0300",
      CountryCode: "GB",
      CountryCode3: "GBR",
      CountryName: "United Kingdom",
    },
    ShippingMethodCode: "standard_eu_hub",
    Discounts: [
      {
        Name: "SPRING10",
        Description: enc("10% off everything"),
        Price: 8.9,
        InternationalPrice: 10.59,
        DiscountType: 1,
        VATRate: 20,
        LocalVATRate: 0,
        CouponCode: "SPRING10",
        DiscountCode: "D-SPRING10",
        ProductCartItemId: null,
        LoyaltyVoucherCode: null,
        MetaData: null,
        CalculationMode: 1,
      },
      {
        Name: "Shipping discount",
        Description: null,
        Price: 5.0,
        InternationalPrice: 5.95,
        DiscountType: 2,
        VATRate: 0,
        CouponCode: null,
        DiscountCode: "SHIP5",
        ProductCartItemId: "",
        CalculationMode: 2,
      },
    ],
    InternationalDetails: {
      CurrencyCode: "USD",
      TotalPrice: 123.73,
      TransactionCurrencyCode: "USD",
      TransactionTotalPrice: 123.73,
      TotalShippingPrice: 12.5,
      DiscountedShippingPrice: 6.55,
      TotalDutiesPrice: 7.32,
      TotalCCFPrice: 1.2,
      TotalVATAmount: 0,
      ConsignmentFee: 0,
      RemoteAreaSurcharge: 0,
      SameDayDispatchCost: 0,
      SizeOverchargeValue: 0,
      CashOnDeliveryFee: 0,
      ShippingVATRate: 0,
      DutiesGuaranteed: true,
      PaymentMethodCode: "1",
      PaymentMethodName: "Visa",
      PaymentTransactionReference: null,
      ShippingMethodCode: "2",
      ShippingMethodName: "Express Courier",
      ShippingMethodTypeCode: "Express",
      ShippingMethodTypeName: "Express Courier (Air)",
      ShippingMethodStatusCode: "Undefined",
      ShippingMethodStatusName: "undefined",
      DeliveryDaysFrom: 2,
      DeliveryDaysTo: 4,
      DeliveryDateFrom: "2025-03-12T00:00:00",
      DeliveryDateTo: "2025-03-14T00:00:00",
      OrderTrackingNumber: "1Z999AA10123456784",
      OrderTrackingUrl: enc("http://www.example.com/track?id=1"),
      OrderWaybillNumber: "1Z999AA10123456784",
      OrderWaybillUrl: enc("https://www.example.com/waybill/1Z999AA10123456784.pdf"),
      CardNumberLastFourDigits: "1111",
      ExpirationDate: "2030-03-31",
      ParcelsTracking: null,
      CustomerDTBreakdown: { Duties: 5.12, OtherFees: 0.98, SalesTaxes: 1.22 },
      MerchantDTBreakdown: null,
      ShipmentLocation: null,
      ShipmentStatusUpdateTime: null,
      ...unlisted({ TotalPriceBeforeRounding: 123.72619047619048 }),
    },
    PaymentDetails: paymentDetails({ OwnerName: enc("Jane Doe"), Address2: enc("Suite 200") }),
    OrderPaymentMethods: [
      {
        PaymentMethodId: 1,
        PaymentMethodGuid: null,
        PaymentMethodName: "Visa",
        IsGiftCard: false,
        GiftCardFields: null,
        PaidAmountInCustomerCurrency: 123.73,
        PaidAmountInMerchantCurrency: 104.0326537419,
        PaymentMethodTypeCode: "CreditCard",
        PaymentMethodTypeName: "Credit Card",
      },
    ],
    AdditionalRequiredDocuments: null,
    PriceCoefficientRate: 1.0,
    RoundingRate: 0.7697801068639539,
    EffectiveFXRate: 1.1893456732159,
    OrderCreationDate: "2025-03-10T14:22:31.317",
    OrderCreationSource: 0,
    IsMoto: false,
    ModifiedProduct: null,
    UrlParameters: JSON.stringify([
      { Key: "utm_source", Value: "newsletter" },
      { Key: "utm_campaign", Value: "spring" },
    ]),
    DiscountedShippingPrice: 5.5,
    DoNotChargeVAT: false,
    AllowMailsFromMerchant: true,
    AllowSMSFromMerchant: false,
    AllowDirectCommunicationFromMerchant: null,
    CustomerComments: enc("Please leave at the front desk"),
    IsFreeShipping: false,
    FreeShippingCouponCode: null,
    ShipToStoreCode: null,
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
    IsSplitOrder: false,
    IsReplacementOrder: false,
    OriginalOrder: null,
    LoyaltyCode: null,
    LoyaltyPointsEarned: 0,
    LoyaltyPointsSpent: 0,
    OTVoucherAmount: null,
    OTVoucherCode: null,
    OTVoucherCurrencyCode: null,
    CultureCode: "en-US",
    InitialCheckoutCultureCode: "en-US",
    PreferredCultureCode: null,
    HubId: 1,
    HubCode: "DE-HUB-1",
    SameDayDispatch: false,
    SameDayDispatchCost: 0,
    TotalDutiesAndTaxesPrice: 6.15,
    CCFPrice: 1.01,
    TotalDutiesPaidByCustomerPrice: 6.15,
    TotalValueForCustoms: 83.51,
    USSalesTax: 0,
    CustomerDTBreakdown: { Duties: 4.31, OtherFees: 0.82, SalesTaxes: 1.02 },
    MerchantDTBreakdown: null,
    ShippingVATRate: 0,
    CookieConsent: 1,
    TaxCalculationRule: "DDP",
    ImporterDetails: null,
    GiftCards: [],
    Markups: null,
    ReservationRequestId: null,
    ...unlisted({
      OriginalMerchantTotalProductsDiscountedPrice: 83.51,
      IsFirstOrderOfCustomer: true,
    }),
  };
}

function updateOrderStatus(): UpdateOrderStatusRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    CartId: null,
    CartHash: null,
    UserId: null,
    CurrencyCode: null,
    StatusCode: "canceled",
    Products: null,
    Customer: null,
    PrimaryShipping: null,
    PrimaryBilling: null,
    Discounts: null,
    InternationalDetails: null,
    PaymentDetails: null,
    UrlParameters: null,
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
    ...unlisted({
      OrderStatusReason: { OrderStatusReasonCode: "CustomerRequest", Name: "Customer request" },
    }),
  };
}

function performOrderPayment(): PerformOrderPaymentRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    PaymentDetails: paymentDetails(),
    UrlParameters: null,
  };
}

function sendRMAInfoToMerchant(): SendRMAInfoToMerchantRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    RMANumber: "RMA-000317",
    ShipperName: "Express Courier",
    ReturnTrackingNumber: "JD014600006281234567",
    TrackingURL: enc("https://www.example.com/returns/track?n=JD014600006281234567"),
    CreatedBy: "Customer",
    ReturnedProducts: [
      {
        SKU: "TSHIRT-BLK-M",
        Name: "Organic Cotton T-Shirt",
        CartItemId: "1",
        ReturnQuantity: 1,
        ReturnReasonName: "Too small",
        MerchantReturnReasonCode: "SIZE",
        MerchantReturnReasonName: "Size or fit",
      },
      {
        SKU: "HOODIE-GRY-L",
        Name: "Fleece Hoodie",
        CartItemId: "2",
        ReturnQuantity: 1,
        ReturnReasonName: "Changed my mind",
        MerchantReturnReasonCode: null,
        MerchantReturnReasonName: null,
      },
    ],
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    CurrencyCode: "EUR",
    ReturnShippingCost: 8.5,
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
  };
}

function updateParcelDispatch(): UpdateParcelDispatchRequest {
  return {
    UrlParameters: null,
    DispatchedParcel: {
      ParcelTracking: {
        ParcelTrackingNumber: "1Z999AA10123456784",
        ParcelTrackingUrl: enc("https://www.example.com/track?parcel=PCL-88213&lang=en"),
        ParcelCode: "PCL-88213",
      },
      HubCode: "DE-HUB-1",
      Code: "PCL-88213",
      StatusName: "Dispatched",
      Products: [
        { Sku: "TSHIRT-BLK-M", CartItemId: "1", Quantity: 2 },
        // Both spellings occur on the wire.
        { SKU: "HOODIE-GRY-L", CartItemId: "2", Quantity: 1 },
      ],
    },
    OrderId: SAMPLE_ORDER_ID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    StatusCode: "shipped",
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
  };
}

function removeRestrictedProducts(): RemoveRestrictedProductsRequest {
  return {
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    CartToken: SERVICE_CART_TOKEN,
    CartId: "58211",
    UserId: null,
    CountryCode: "AU",
    CurrencyCode: "AUD",
    WebStoreCode: null,
    WebStoreInstanceCode: null,
    RemovedProductCodes: ["KNIFE-CHEF-20CM", "PERFUME-EDP-50ML"],
  };
}

/**
 * The payload is not shown (001 §6): these fields are a guess, and none is on a decoded list, so
 * the URLs are plain (an encoded one would reach the function encoded).
 */
function sendAdditionalRequiredDocumentsToMerchant(): SendAdditionalRequiredDocumentsToMerchantRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    Documents: [
      {
        DocumentTypeCode: "CommercialInvoice",
        DocumentTypeName: "Commercial invoice",
        DocumentUrl: `https://docs.example.com/orders/${SAMPLE_ORDER_ID}/invoice.pdf`,
        DocumentFormat: "PDF",
      },
      {
        DocumentTypeCode: "ShippingLabel",
        DocumentTypeName: "Shipping label",
        DocumentUrl: `https://docs.example.com/orders/${SAMPLE_ORDER_ID}/label.zpl`,
        DocumentFormat: "ZPL",
      },
    ],
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
  };
}

/** What every gift-card and voucher request carries (service document, Part 5.4). */
function giftCardRequest(cardId: string): GiftCardRequest {
  return {
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    ShippingCountryCode: "US",
    CardFields: { CardId: cardId },
    MerchantCartToken: SAMPLE_CART_TOKEN,
    CustomerId: "10442",
    CustomerEmail: enc("jane.doe@example.com"),
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
    CartToken: SERVICE_CART_TOKEN,
    AuthToken: SAMPLE_AUTH_TOKEN,
    SessionId: SAMPLE_SESSION_ID,
  };
}

function validateGiftCard(): ValidateGiftCardRequest {
  return giftCardRequest(SAMPLE_GIFT_CARD_ID);
}

function redeemGiftCard(): RedeemGiftCardRequest {
  // The amount's own field names are not documented: sent as the service might, kept as sent.
  return {
    ...giftCardRequest(SAMPLE_GIFT_CARD_ID),
    ...unlisted({ OrderId: SAMPLE_ORDER_ID, Amount: "25.00", CurrencyCode: "USD" }),
  };
}

function refundGiftCard(): RefundGiftCardRequest {
  return {
    ...giftCardRequest(SAMPLE_GIFT_CARD_ID),
    ...unlisted({ OrderId: SAMPLE_ORDER_ID, Amount: "10.00", CurrencyCode: "USD" }),
  };
}

function validateVoucher(): ValidateVoucherRequest {
  return giftCardRequest("SPRING25");
}

function notifyOrderRefund(): NotifyOrderRefundRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    MerchantInternalOrderId: null,
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
    RefundID: "RF-20931",
    RMANumber: "RMA-000317",
    MerchantRMANumber: null,
    FullRefund: false,
    ProductsDutiesRefund: true,
    ShippingRefund: false,
    RefundAsGiftCard: null,
    TotalRefundAmount: "170.1000",
    OriginalTotalRefundAmount: "143.0200",
    ServiceGestureAmount: "0.0000",
    TotalMoneyRefundAmount: "170.1000",
    DutiesAmount: "7.3200",
    ShippingAmount: "0.0000",
    CustomerPrepaidRefundAmount: "0.0000",
    OriginalCustomerPrepaidRefundAmount: "0.0000",
    TotalGiftCardsRefundAmount: "0.0000",
    TotalGiftCardsRefundAmountinMerchantCurrency: 0,
    TotalLoyaltyPointsRefunded: 0,
    TotalLoyaltyPointsRefundAmount: 0,
    GiftCardsData: [],
    ExternalReference: null,
    InitiatedBy: "Merchant",
    CurrencyCode: "USD",
    OriginalCurrencyCode: "EUR",
    RefundReason: { OrderRefundReasonCode: "DAMAGED", Name: "Damaged item" },
    RefundProducts: [
      {
        CartItemId: "2",
        RefundQuantity: "1",
        RefundAmount: "162.7800",
        OriginalRefundAmount: "136.8600",
        RefundAmountPercent: "100",
        RefundReason: "Damaged item",
        RefundComments: null,
        Sku: "HOODIE-GRY-L",
        ProductCode: "HOODIE-GRY-L",
        productGroupCode: null,
        ProductCodeSecondary: null,
        productGroupCodeSecondary: null,
      },
    ],
    RefundComponents: [
      {
        Amount: "7.3200",
        OriginalAmount: "6.1600",
        IsChargedToMerchant: "false",
        ComponentType: "Duties",
      },
    ],
    RefundComments: "Arrived torn",
    RefundDocument: [
      {
        DocumentData: null,
        CreditNoteUrl: enc(
          `https://docs.example.com/orders/${SAMPLE_ORDER_ID}/credit-note-RF-20931.pdf`,
        ),
        DocumentTypeCode: "CreditNote",
        DocumentTypeName: "Credit note",
        DocumentExtension: "PDF",
      },
    ],
  };
}

function updateOrderShippingInfo(): UpdateOrderShippingInfoRequest {
  return {
    OrderId: SAMPLE_ORDER_ID,
    MerchantGUID: SAMPLE_MERCHANT_GUID,
    MerchantOrderId: SAMPLE_MERCHANT_ORDER_ID,
    ShippingMethodCode: "standard_eu_hub",
    PrimaryShipping: { ...shopperAddress(), Address2: enc("Suite 410") },
    InternationalDetails: {
      ShippingMethodCode: "2",
      ShippingMethodName: "Express Courier",
      OrderTrackingNumber: "1Z999AA10123456784",
      OrderTrackingUrl: enc("http://www.example.com/track?id=1Z999AA10123456784"),
      DeliveryDaysFrom: 2,
      DeliveryDaysTo: 4,
    },
    WebStoreCode: "eu-main",
    WebStoreInstanceCode: "eu-main-www",
  };
}

function getCheckoutCartInfo(): GetCheckoutCartInfoRequest {
  return { merchantCartToken: SAMPLE_CART_TOKEN, countryCode: "US", currencyCode: "USD" };
}

/** The service order id of the captured order (a second order of the journey, wire-facts §6). */
export const CAPTURED_ORDER_ID = "GE927127002US";

/** An address whose every field arrives `null` (wire-facts §6). */
function nullAddress(): Address {
  const address: Record<string, null> = {};
  for (const key of Object.keys(shopperAddress())) address[key] = null;
  return address as Address;
}

/**
 * SendOrderToMerchant as captured from the service (wire-facts §6), not as documented: no
 * `PaymentDetails` (the service collected the payment), nulls and empty strings, stray whitespace
 * (`" EUR"`, `"GlobalE "`), a CRLF inside `Address2`, integer rates, encoding that does not follow
 * `IsEndCustomerPrimary` (the billing address encoded although the secondary is the end customer,
 * `"New+York"` beside a plain `"New York"`, `"United States"` and `"United+States"`, an encoded
 * Zip), and an address whose every field is null. Sent with `\/` escapes (`"N\/A"`).
 */
function capturedSendOrderToMerchant(): SendOrderToMerchantRequest {
  const order = sendOrderToMerchant();
  return {
    ...order,
    OrderId: CAPTURED_ORDER_ID,
    CartHash: "",
    CurrencyCode: null,
    UserId: null,
    Customer: { EmailAddress: null, IsEndCustomerPrimary: false, SendConfirmation: false },
    PrimaryShipping: {
      ...operatorAddress(),
      FirstName: "GlobalE ",
      Company: "",
      Address2: "Test Address2\r\nGlobal-e OrderId:GE927127",
      StateCode: "",
      CountryName: "United States",
    },
    SecondaryShipping: nullAddress(),
    PrimaryBilling: {
      FirstName: enc("Jane"),
      LastName: enc("Doe"),
      Company: "",
      Address1: enc("350 5th Ave"),
      City: "New+York",
      StateCode: "NY",
      StateOrProvince: "New York",
      Zip: "ON+M5B+1M4",
      Phone1: "+ 44 (0)808 258 0300",
      CountryCode: "US",
      CountryCode3: "USA",
      CountryName: "United+States",
    },
    SecondaryBilling: nullAddress(),
    InternationalDetails: {
      ...order.InternationalDetails,
      TransactionCurrencyCode: " EUR",
      ParcelsTracking: null,
      PaymentMethodCode: "OT",
    },
    PaymentDetails: null,
    PriceCoefficientRate: 1,
    RoundingRate: 0.76978010686395393,
    UrlParameters: null,
    OriginalOrder: null,
    HubId: null,
    LoyaltyPointsEarned: null,
    LoyaltyPointsSpent: null,
    Products: order.Products.map((product) => ({
      ...product,
      VATRate: 0,
      Attributes: null,
      Brand: null,
      BackOrderDate: null,
    })),
  };
}

/**
 * PerformOrderPayment as captured when the service collected the payment itself (wire-facts §6):
 * `CardNumber` and `CVVNumber` null, payment method `OT`, a mixed order's `Subs`.
 */
function capturedPerformOrderPayment(): PerformOrderPaymentRequest {
  return {
    ...performOrderPayment(),
    OrderId: CAPTURED_ORDER_ID,
    PaymentDetails: paymentDetails({
      CardNumber: null,
      CVVNumber: null,
      PaymentMethodCode: "OT",
      ExpirationDate: "2999-12-31",
    }),
    ...unlisted({ Subs: [] }),
  };
}

/**
 * UpdateOrderStatus as the service sends it (wire-facts §3, §6): the status in capitals
 * (`"CANCELLED"`, not the sample's `"canceled"`: compare with `isOrderStatus`), `MerchantOrderId`
 * null (find the order by its `OrderId` too), for the captured order. Sent with `\/` escapes (the
 * reason's `"Customer request\/support"`).
 */
function capturedUpdateOrderStatus(): UpdateOrderStatusRequest {
  return {
    ...updateOrderStatus(),
    OrderId: CAPTURED_ORDER_ID,
    MerchantOrderId: null,
    StatusCode: "CANCELLED",
    ...unlisted({
      OrderStatusReason: {
        OrderStatusReasonCode: "CustomerRequest",
        Name: "Customer request/support",
      },
    }),
  };
}

/**
 * GetCheckoutCartInfo as captured in its GET form (wire-facts §6): the token named `cartToken`
 * (not `merchantCartToken`), `IsStockValidation=1` (§6: that flag or `isFixedPriceSupported=false`,
 * one of them), the country in three letters (`GER`).
 */
function capturedGetCheckoutCartInfo(): GetCheckoutCartInfoQuery {
  return {
    cartToken: SAMPLE_CART_TOKEN,
    countryCode: "GER",
    currencyCode: "USD",
    IsStockValidation: "1",
  };
}

/** The callbacks with a captured form (`capturedPayload`): the ones wire-facts §6 shows. */
export const CAPTURED_BUILDERS: {
  readonly [K in keyof CapturedPayloads]: () => CapturedPayloads[K];
} = {
  GetCheckoutCartInfo: capturedGetCheckoutCartInfo,
  SendOrderToMerchant: capturedSendOrderToMerchant,
  PerformOrderPayment: capturedPerformOrderPayment,
  UpdateOrderStatus: capturedUpdateOrderStatus,
};

/** Builders of fresh sample payloads: each call returns new objects the caller may change. */
export const SAMPLE_BUILDERS: { readonly [K in keyof SamplePayloads]: () => SamplePayloads[K] } = {
  GetCheckoutCartInfo: getCheckoutCartInfo,
  SendOrderToMerchant: sendOrderToMerchant,
  UpdateOrderStatus: updateOrderStatus,
  PerformOrderPayment: performOrderPayment,
  SendRMAInfoToMerchant: sendRMAInfoToMerchant,
  UpdateParcelDispatch: updateParcelDispatch,
  RemoveRestrictedProducts: removeRestrictedProducts,
  SendAdditionalRequiredDocumentsToMerchant: sendAdditionalRequiredDocumentsToMerchant,
  ValidateGiftCard: validateGiftCard,
  RedeemGiftCard: redeemGiftCard,
  RefundGiftCard: refundGiftCard,
  ValidateVoucher: validateVoucher,
  NotifyOrderRefund: notifyOrderRefund,
  UpdateOrderShippingInfo: updateOrderShippingInfo,
};
