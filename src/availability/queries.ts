/** What a slot query and an explanation take and answer. */
import { Schema } from "effect"
import { Instant, optional, TimeZone, toMillis } from "../domain/common.js"
import { Id } from "../domain/ids.js"
import { Reason, Slot } from "../domain/slot.js"

export const DAY = 86_400_000
const MAX_SLOT_RANGE_DAYS = 62

export const SlotQuery = Schema.Struct({
  service_id: Id("service"),
  start: Instant,
  end: Instant,
  staff_id: optional(Id("staff")),
  time_zone: optional(TimeZone)
}).pipe(
  Schema.filter((q) => {
    const span = toMillis(q.end) - toMillis(q.start)
    if (span <= 0) return { path: ["end"], message: "must be later than start" }
    if (span > MAX_SLOT_RANGE_DAYS * DAY) return { path: ["end"], message: `must be at most ${MAX_SLOT_RANGE_DAYS} days after start` }
    return true
  })
).annotations({ identifier: "SlotQuery" })
export type SlotQuery = typeof SlotQuery.Encoded

export const SlotList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Slot).annotations({ description: "every bookable start in the range, earliest first" }),
  days: optional(
    Schema.Array(Schema.Struct({
      date: Schema.String.annotations({ description: "a local date (YYYY-MM-DD) in the query's time zone" }),
      slots: Schema.Array(Slot).annotations({ description: "the starts on that date" })
    })).annotations({ description: "the same starts grouped by local date in the query's `time_zone`" })
  )
}).annotations({ identifier: "SlotList", description: "The bookable starts of a service in a range (instants in UTC)." })
export type SlotList = typeof SlotList.Type

export const ExplainQuery = Schema.Struct({
  service_id: Id("service"),
  staff_id: optional(
    Id("staff").annotations({
      description: "the member asked about; omit to ask about the service's team (anyone free; collective: everyone)"
    })
  ),
  start: Instant
}).annotations({ identifier: "ExplainQuery" })
export type ExplainQuery = typeof ExplainQuery.Encoded

export const Explanation = Schema.Struct({
  object: Schema.Literal("explanation"),
  service_id: Schema.String.annotations({ description: "the service asked about" }),
  staff_id: Schema.String.annotations({
    description: "the staff member asked about; without one, the member who would be booked (collective: the first)"
  }),
  staff_ids: Schema.Array(Schema.String).annotations({
    description: "who would attend: the member asked about, the free members (best ranked first), or every member of a collective service"
  }),
  start: Instant,
  end: Instant,
  bookable: Schema.Boolean.annotations({ description: "whether a booking at this start would be accepted now" }),
  reasons: Schema.Array(Reason).annotations({ description: "every rule the start breaks (empty when bookable)" })
}).annotations({ identifier: "Explanation", description: "Whether one start can be booked, and why not." })
export type Explanation = typeof Explanation.Type
