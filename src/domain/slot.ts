/** A bookable start and why a start is or is not bookable (API.md §3 Slots, Explain). */
import { Schema } from "effect"
import { Instant } from "./common.js"

export const Slot = Schema.Struct({
  start: Instant,
  end: Instant,
  staff_id: Schema.String,
  remaining: Schema.Int.annotations({ description: "seats still free at this start" })
}).annotations({ identifier: "Slot" })
export type Slot = typeof Slot.Type

export const ReasonCode = Schema.Literal(
  "outside_hours",
  "date_override",
  "blocked",
  "booking_overlap",
  "buffer_overlap",
  "min_notice",
  "max_advance",
  "dst_gap",
  "staff_inactive",
  "service_inactive",
  "staff_not_assigned",
  "capacity_full",
  "held"
)
export type ReasonCode = typeof ReasonCode.Type

export const Reason = Schema.Struct({
  code: ReasonCode,
  detail: Schema.String,
  booking_id: Schema.optional(Schema.String),
  hold_id: Schema.optional(Schema.String)
}).annotations({ identifier: "UnbookableReason" })
export type Reason = typeof Reason.Type
