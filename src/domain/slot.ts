/** A bookable start and why a start is or is not bookable (docs/api.md §3 Slots, Explain). */
import { Schema } from "effect"
import { Instant } from "./common.js"

export const Slot = Schema.Struct({
  start: Instant.annotations({ description: "a bookable start" }),
  end: Instant.annotations({ description: "when an appointment at this start ends" }),
  staff_id: Schema.String.annotations({
    description: "the staff member free at this start; round robin: the one who would be picked now; collective: the first member"
  }),
  staff_ids: Schema.Array(Schema.String).annotations({
    description: "who is free at this start (round robin: every free member; collective: every member, all free)"
  }),
  remaining: Schema.Int.annotations({
    description: "seats still free at this start (round robin: across the free members; collective: the fewest any member has)"
  })
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
  "held",
  "external_busy"
)
export type ReasonCode = typeof ReasonCode.Type

export const Reason = Schema.Struct({
  code: ReasonCode.annotations({ description: "which check failed" }),
  detail: Schema.String.annotations({ description: "the failed check in words" }),
  booking_id: Schema.optional(Schema.String.annotations({ description: "the booking in the way, if one is" })),
  hold_id: Schema.optional(Schema.String.annotations({ description: "the hold in the way, if one is" })),
  staff_id: Schema.optional(Schema.String.annotations({
    description: "the staff member this reason is about (services with round robin or collective assignment)"
  })),
  calendar_id: Schema.optional(
    Schema.String.annotations({ description: "the external calendar whose busy time is in the way (`external_busy`)" })
  )
}).annotations({ identifier: "UnbookableReason" })
export type Reason = typeof Reason.Type

/** An occurrence of a recurring request that cannot be booked, and why (the explain reasons). */
export const BlockedOccurrence = Schema.Struct({
  start: Instant.annotations({ description: "the occurrence's start" }),
  reasons: Schema.Array(Reason).annotations({ description: "every check the start failed" })
}).annotations({ identifier: "BlockedOccurrence" })
export type BlockedOccurrence = typeof BlockedOccurrence.Type
