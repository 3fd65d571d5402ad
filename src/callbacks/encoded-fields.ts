/**
 * The values the service sends form-URL-encoded (wire-facts §4): the same fixed list the public
 * integrations decode — names, company, address lines, city, state, zip, e-mail, phones, fax,
 * country name, tracking and waybill URLs, customer tax id — never the whole payload.
 */
/** Where a person or card owner is reached: present in addresses and in PaymentDetails. */
const CONTACT_FIELDS = [
  "Address1",
  "Address2",
  "City",
  "StateOrProvince",
  "Zip",
  "Email",
  "Phone1",
  "Phone2",
  "Fax",
  "CountryName",
] as const;

const ADDRESS_FIELDS = [
  "FirstName",
  "LastName",
  "MiddleName",
  "Company",
  ...CONTACT_FIELDS,
  "CustomerTaxId",
] as const;

const PAYMENT_FIELDS = ["OwnerFirstName", "OwnerLastName", "OwnerName", ...CONTACT_FIELDS] as const;

const ADDRESSES = ["PrimaryShipping", "SecondaryShipping", "PrimaryBilling", "SecondaryBilling"];

/** SendOrderToMerchant, UpdateOrderStatus and PerformOrderPayment carry the order object. */
export const ORDER_ENCODED_FIELDS: readonly string[] = [
  ...ADDRESSES.flatMap((address) => ADDRESS_FIELDS.map((field) => `${address}.${field}`)),
  ...PAYMENT_FIELDS.map((field) => `PaymentDetails.${field}`),
  "Customer.EmailAddress",
  "InternationalDetails.OrderTrackingUrl",
  "InternationalDetails.OrderWaybillUrl",
];

export const RMA_ENCODED_FIELDS: readonly string[] = ["TrackingURL"];

export const DISPATCH_ENCODED_FIELDS: readonly string[] = [
  "DispatchedParcel.ParcelTracking.ParcelTrackingUrl",
];
