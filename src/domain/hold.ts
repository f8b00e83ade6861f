import { Schema } from "effect"
import { Instant, Metadata, ObjectType, optional, Timestamps } from "./common.js"
import { Id } from "./ids.js"

export const HOLD_DEFAULT_TTL_SECONDS = 300
export const HOLD_MAX_TTL_SECONDS = 600

/** A slot reserved for a short time while a client enters details (API.md §3 Holds). */
export const Hold = Schema.Struct({
  id: Id("hold"),
  object: ObjectType("hold"),
  service_id: Id("service").annotations({ description: "the service of the held slot" }),
  staff_id: Id("staff").annotations({ description: "the staff member of the held slot" }),
  start: Instant.annotations({ description: "the held start" }),
  end: Instant.annotations({ description: "the held end: start plus the service's duration" }),
  expires_at: Instant.annotations({ description: "when the slot is free again unless booked with this hold" }),
  buffer_before_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  buffer_after_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Hold" })
export type Hold = typeof Hold.Type

export const HoldCreate = Schema.Struct({
  service_id: Id("service").annotations({ description: "the service to hold a slot of" }),
  staff_id: Id("staff").annotations({ description: "the staff member to hold" }),
  start: Instant.annotations({ description: "a bookable start" }),
  ttl_seconds: optional(Schema.Int.pipe(Schema.between(1, HOLD_MAX_TTL_SECONDS, {
    message: () => `must be a whole number of seconds from 1 to ${HOLD_MAX_TTL_SECONDS}`
  })).annotations({ description: "how long to hold, 1 to 600 seconds (default 300)" })),
  metadata: optional(Metadata)
}).annotations({ identifier: "HoldCreate" })
export type HoldCreate = typeof HoldCreate.Type
