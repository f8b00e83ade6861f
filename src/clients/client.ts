import { Schema } from "effect"
import { Email, Metadata, Name, ObjectType, Phone, Text, TimeZone, Timestamps, optionalFields } from "../domain/common.js"
import { Id } from "../domain/ids.js"

export const ClientFields = {
  name: Name,
  email: Schema.NullOr(Email).annotations({ description: "email address; null when none" }),
  phone: Schema.NullOr(Phone).annotations({ description: "phone number; null when none" }),
  time_zone: Schema.NullOr(TimeZone).annotations({ description: "the client's IANA time zone, to show times in; null when unknown" }),
  notes: Schema.NullOr(Text(5000)).annotations({ description: "notes about the client, up to 5000 characters" }),
  metadata: Metadata
}

export const Client = Schema.Struct({
  id: Id("client"),
  object: ObjectType("client"),
  ...ClientFields,
  ...Timestamps
}).annotations({ identifier: "Client" })
export type Client = typeof Client.Type

const { name, ...optionalOnCreate } = ClientFields
export const ClientCreate = Schema.Struct({
  name,
  ...optionalFields(optionalOnCreate)
}).annotations({ identifier: "ClientCreate" })
export type ClientCreate = typeof ClientCreate.Type

export const ClientUpdate = Schema.Struct(optionalFields(ClientFields)).annotations({ identifier: "ClientUpdate" })
export type ClientUpdate = typeof ClientUpdate.Type

export const clientDefaults = { email: null, phone: null, time_zone: null, notes: null, metadata: {} }
