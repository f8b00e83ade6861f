import { Schema } from "effect"
import { Email, Metadata, Name, Phone, Text, TimeZone, Timestamps , optionalFields } from "./common.js"
import { Id } from "./ids.js"

export const ClientFields = {
  name: Name,
  email: Schema.NullOr(Email),
  phone: Schema.NullOr(Phone),
  time_zone: Schema.NullOr(TimeZone),
  notes: Schema.NullOr(Text(5000)),
  metadata: Metadata
}

export const Client = Schema.Struct({
  id: Id("client"),
  object: Schema.Literal("client"),
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
