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
  // Seen in real captures and decoded by integrations (wire-facts §6).
  CityRegion: optionalString,
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
  // Decoded by integrations (wire-facts §6); where it sits is not documented.
  VATRegistrationNumber: optionalString,
};

/** PrimaryShipping, SecondaryShipping, PrimaryBilling, SecondaryBilling of an order. */
export const addressSchema = z.looseObject(addressShape);

/**
 * An address (spec 2.4): every field may be missing or `null` (real captures send whole addresses
 * of nulls). The encoded ones arrive decoded; see `context.rawPayload` for the values as sent.
 */
export interface Address {
  FirstName?: string | null | undefined;
  LastName?: string | null | undefined;
  MiddleName?: string | null | undefined;
  Salutation?: string | null | undefined;
  Company?: string | null | undefined;
  Address1?: string | null | undefined;
  Address2?: string | null | undefined;
  City?: string | null | undefined;
  CityRegion?: string | null | undefined;
  StateCode?: string | null | undefined;
  StateOrProvince?: string | null | undefined;
  /** The cart side's spelling of `StateOrProvince`; accepted on every address. */
  StateOrProvice?: string | null | undefined;
  Zip?: string | null | undefined;
  Email?: string | null | undefined;
  Phone1?: string | null | undefined;
  Phone2?: string | null | undefined;
  Fax?: string | null | undefined;
  /** 2-letter ISO code (3 letters seen in carts). */
  CountryCode?: string | null | undefined;
  CountryCode3?: string | null | undefined;
  CountryName?: string | null | undefined;
  CollectionPointId?: string | null | undefined;
  AddressBookId?: string | null | undefined;
  AddressBookName?: string | null | undefined;
  CustomerTaxId?: string | null | undefined;
  VATRegistrationNumber?: string | null | undefined;
}
