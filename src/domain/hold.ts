import { Schema } from "effect"
import { Instant, Metadata, optional, Timestamps } from "./common.js"
import { Id } from "./ids.js"

export const HOLD_DEFAULT_TTL_SECONDS = 300
export const HOLD_MAX_TTL_SECONDS = 600

/** A slot reserved for a short time while a client enters details (API.md §3 Holds). */
export const Hold = Schema.Struct({
  id: Id("hold"),
  object: Schema.Literal("hold"),
  service_id: Id("service"),
  staff_id: Id("staff"),
  start: Instant,
  end: Instant,
  expires_at: Instant,
  buffer_before_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  buffer_after_minutes: Schema.Int.annotations({ description: "the service's buffer when held" }),
  metadata: Metadata,
  ...Timestamps
}).annotations({ identifier: "Hold" })
export type Hold = typeof Hold.Type

export const HoldCreate = Schema.Struct({
  service_id: Id("service"),
  staff_id: Id("staff"),
  start: Instant,
  ttl_seconds: optional(Schema.Int.pipe(Schema.between(1, HOLD_MAX_TTL_SECONDS, {
    message: () => `must be a whole number of seconds from 1 to ${HOLD_MAX_TTL_SECONDS}`
  }))),
  metadata: optional(Metadata)
}).annotations({ identifier: "HoldCreate" })
export type HoldCreate = typeof HoldCreate.Type
