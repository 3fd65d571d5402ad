/**
 * The values the service sends form-URL-encoded (wire-facts §4 and §6): the same fixed list the
 * public integrations decode — names, salutation, company, address lines, city and city region,
 * state and state code, zip, e-mail, phones, fax, country name, tracking and waybill URLs,
 * customer tax id and VAT registration number — never the whole payload. Each value is decoded
 * only if it is in encoded form (the `auto` policy), so plain values in these fields are safe.
 */
/** Where a person or card owner is reached: present in addresses and in PaymentDetails. */
const CONTACT_FIELDS = [
  "Address1",
  "Address2",
  "City",
  "StateCode",
  "StateOrProvince",
  // The cart-side spelling, accepted on every address and on PaymentDetails (sources mix them).
  "StateOrProvice",
  "Zip",
  "Email",
  "Phone1",
  "Phone2",
  "Fax",
  "CountryName",
] as const;

const ADDRESS_FIELDS = [
  "Salutation",
  "FirstName",
  "LastName",
  "MiddleName",
  "Company",
  ...CONTACT_FIELDS,
  "CityRegion",
  "CustomerTaxId",
  "VATRegistrationNumber",
] as const;

const PAYMENT_FIELDS = ["OwnerFirstName", "OwnerLastName", "OwnerName", ...CONTACT_FIELDS] as const;

const ADDRESSES = ["PrimaryShipping", "SecondaryShipping", "PrimaryBilling", "SecondaryBilling"];

/** SendOrderToMerchant, UpdateOrderStatus and PerformOrderPayment carry the order object. */
export const ORDER_ENCODED_FIELDS: readonly string[] = [
  ...ADDRESSES.flatMap((address) => ADDRESS_FIELDS.map((field) => `${address}.${field}`)),
  ...PAYMENT_FIELDS.map((field) => `PaymentDetails.${field}`),
  "Customer.EmailAddress",
  "VATRegistrationNumber",
  "InternationalDetails.OrderTrackingUrl",
  "InternationalDetails.OrderWaybillUrl",
  // 000 §2.3's ParcelTracking entries; 001 §4.6 sends their URL percent-encoded (as in
  // DISPATCH_ENCODED_FIELDS below).
  "InternationalDetails.ParcelsTracking.*.ParcelTrackingUrl",
];

export const RMA_ENCODED_FIELDS: readonly string[] = ["TrackingURL"];

export const DISPATCH_ENCODED_FIELDS: readonly string[] = [
  "DispatchedParcel.ParcelTracking.ParcelTrackingUrl",
];

/** The gift-card and voucher requests: the shopper's e-mail. */
export const GIFT_CARD_ENCODED_FIELDS: readonly string[] = ["CustomerEmail"];

/** NotifyOrderRefund: the credit notes' URLs (of the top-level refund and of each in `Refunds`). */
export const REFUND_ENCODED_FIELDS: readonly string[] = [
  "RefundDocument.*.CreditNoteUrl",
  "Refunds.*.RefundDocument.*.CreditNoteUrl",
];
