import { Schema } from "effect"
import { Metadata, Money, ObjectType, optional, Text, Timestamps } from "../domain/common.js"
import { Id } from "../domain/ids.js"

/** A payment received for a booking, from any provider (docs/api.md §3 Payments). */
export const Payment = Schema.Struct({
  id: Id("payment"),
  object: ObjectType("payment"),
  booking_id: Id("booking").annotations({ description: "the booking paid for" }),
  amount: Money,
  reference: Schema.NullOr(Text(255)).annotations({ description: "the payment provider's reference; null when none" }),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Payment" })
export type Payment = typeof Payment.Type

export const PaymentCreate = Schema.Struct({
  amount: Money,
  reference: optional(Schema.NullOr(Text(255)).annotations({ description: "the payment provider's reference" })),
  metadata: optional(Metadata)
}).annotations({ identifier: "PaymentCreate" })
export type PaymentCreate = typeof PaymentCreate.Type
