/**
 * The event catalogue (docs/api.md §4). Every change appends one of these in the same storage
 * transaction as the change (the outbox); polling, webhooks and in-process subscribers all
 * read that one log. The list is open: consumers must ignore types they do not know.
 *
 * No payload carries a secret: a calendar's event has its public view (the feed address
 * redacted to scheme and host), a calendar feed's never has its URL or token.
 */
import { Schema } from "effect"
import { Instant, optional } from "../domain/common.js"
import { Id } from "../domain/ids.js"

export const EVENT_TYPES = [
  "booking.created",
  "booking.updated",
  "booking.cancelled",
  "booking.rescheduled",
  "booking.reminder",
  "payment.received",
  "client.created",
  "client.updated",
  "client.deleted",
  "service.created",
  "service.updated",
  "service.deleted",
  "staff.created",
  "staff.updated",
  "staff.deleted",
  "availability.created",
  "availability.updated",
  "availability.deleted",
  "calendar.created",
  "calendar.updated",
  "calendar.deleted",
  "calendar_feed.created",
  "calendar_feed.rotated",
  "calendar_feed.deleted",
  "domain.created",
  "domain.verified",
  "domain.deleted"
] as const

export const EventType = Schema.Literal(...EVENT_TYPES)
export type EventType = typeof EventType.Type

/** Who made a change: the account (its keys, tokens, code) or the booking's client through a manage link. */
export const Actor = Schema.Literal("account", "client")
export type Actor = typeof Actor.Type

export const EventData = Schema.Struct({
  object: Schema.Unknown.annotations({ description: "the full resource after the change" }),
  previous: optional(Schema.Unknown.annotations({ description: "the resource before an update" })),
  booking: optional(Schema.Unknown.annotations({ description: "payment.received: the booking paid for" })),
  offset_minutes: optional(Schema.Int.annotations({
    description: "booking.reminder: the offset before the start this reminder is for, in minutes"
  })),
  late: optional(Schema.Boolean.annotations({
    description: "booking.reminder: sent more than 5 minutes after its time (no instance was running then)"
  })),
  actor: optional(Actor.annotations({
    description: "booking.cancelled and booking.rescheduled: `client` when the client acted through the manage link, else `account`"
  }))
})
export type EventData = typeof EventData.Type

export const Event = Schema.Struct({
  id: Id("event"),
  object: Schema.Literal("event"),
  type: Schema.String.annotations({ description: "one of the catalogue's types; ignore unknown ones" }),
  created_at: Instant,
  data: EventData
}).annotations({ identifier: "Event", description: "Something that happened to a resource, as the events feed and webhooks deliver it." })
export type Event = typeof Event.Type
