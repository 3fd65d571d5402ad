import { z } from "zod";
import { optionalString } from "./common.js";

/** Fields of an address (spec 2.4); reused by orders, payment details and cart user details. */
export const addressShape = {
  FirstName: optionalString,
  LastName: optionalString,
  MiddleName: optionalString,
  Salutation: optionalString,
  Company: optionalString,
  Address1: optionalString,
  Address2: optionalString,
  City: optionalString,
  StateCode: optionalString,
  StateOrProvince: optionalString,
  // The cart side spells it this way on the wire; accepted everywhere since sources mix them.
  StateOrProvice: optionalString,
  Zip: optionalString,
  Email: optionalString,
  Phone1: optionalString,
  Phone2: optionalString,
  Fax: optionalString,
  CountryCode: optionalString,
  CountryCode3: optionalString,
  CountryName: optionalString,
  CollectionPointId: optionalString,
  AddressBookId: optionalString,
  AddressBookName: optionalString,
  CustomerTaxId: optionalString,
};

/** PrimaryShipping, SecondaryShipping, PrimaryBilling, SecondaryBilling of an order. */
export const addressSchema = z.looseObject(addressShape);

export type Address = z.output<typeof addressSchema>;
