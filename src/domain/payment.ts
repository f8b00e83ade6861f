import { Schema } from "effect"
import { Metadata, Money, optional, Text, Timestamps } from "./common.js"
import { Id } from "./ids.js"

/** A payment received for a booking, from any provider (API.md §3 Payments). */
export const Payment = Schema.Struct({
  id: Id("payment"),
  object: Schema.Literal("payment"),
  booking_id: Id("booking"),
  amount: Money,
  reference: Schema.NullOr(Text(255)),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Payment" })
export type Payment = typeof Payment.Type

export const PaymentCreate = Schema.Struct({
  amount: Money,
  reference: optional(Schema.NullOr(Text(255))),
  metadata: optional(Metadata)
}).annotations({ identifier: "PaymentCreate" })
export type PaymentCreate = typeof PaymentCreate.Type
