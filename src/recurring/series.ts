/**
 * The booking series resource (docs/api.md §11): the bookings one recurring request made. Its
 * occurrences are ordinary bookings whose `series_id` names it.
 */
import { Schema } from "effect"
import { AssignedBy } from "../domain/assignment.js"
import { Instant, Metadata, ObjectType, optional, Text, TimeZone, Timestamps } from "../domain/common.js"
import { Booking, PublicBooking } from "../bookings/booking.js"
import { Id } from "../domain/ids.js"
import { OnConflict } from "./recurrence.js"
import { BlockedOccurrence } from "../domain/slot.js"

const seriesFields = {
  id: Id("series"),
  object: ObjectType("booking_series"),
  service_id: Id("service").annotations({ description: "the service booked" }),
  staff_id: Id("staff").annotations({
    description: "the staff member of every occurrence (collective services: the first of `staff_ids`, who all attend)"
  }),
  staff_ids: Schema.Array(Id("staff")).annotations({
    description: "everyone who attends every occurrence: one member, or all the service's members for a collective service"
  }),
  assigned_by: AssignedBy,
  client_id: Id("client").annotations({ description: "the client who booked" }),
  rule: Schema.String.annotations({ description: "the RRULE as given" }),
  time_zone: TimeZone.annotations({ description: "the zone the rule was evaluated in" }),
  on_conflict: OnConflict,
  skipped: Schema.Array(BlockedOccurrence).annotations({
    description: "occurrences left out when the series was made (`on_conflict: skip`), each with why"
  }),
  metadata: Metadata,
  ...Timestamps
}

/** The series as stored: its occurrences are the bookings whose `series_id` names it. */
export const StoredBookingSeries = Schema.Struct(seriesFields).annotations({ identifier: "StoredBookingSeries" })
export type StoredBookingSeries = typeof StoredBookingSeries.Type

export const BookingSeries = Schema.Struct({
  ...seriesFields,
  occurrences: Schema.Array(Booking).annotations({
    description: "the bookings of the series by start, whatever their status now (a cancelled one stays listed)"
  })
}).annotations({
  identifier: "BookingSeries",
  description: "Bookings made together from one recurrence rule; each occurrence is an ordinary booking with `series_id`."
})
export type BookingSeries = typeof BookingSeries.Type

/** A series as the visitor who made it sees it (publishable keys): the appointments, not the account's records. */
export const PublicBookingSeries = Schema.Struct({
  id: seriesFields.id,
  object: seriesFields.object,
  service_id: seriesFields.service_id,
  staff_id: seriesFields.staff_id,
  staff_ids: seriesFields.staff_ids,
  rule: seriesFields.rule,
  time_zone: seriesFields.time_zone,
  skipped: seriesFields.skipped,
  occurrences: Schema.Array(PublicBooking),
  ...Timestamps
}).annotations({
  identifier: "PublicBookingSeries",
  description: "A series as a publishable key sees it: its appointments, without the client, notes, metadata or payments."
})
export type PublicBookingSeries = typeof PublicBookingSeries.Type

export const BookingSeriesCancel = Schema.Struct({
  from: optional(Instant.annotations({
    description: "cancel the occurrences starting at or after this instant (this one and later); default: all"
  })),
  reason: optional(Schema.NullOr(Text(1000)).annotations({ description: "why, stored on each cancelled booking" }))
}).annotations({ identifier: "BookingSeriesCancel" })
export type BookingSeriesCancel = typeof BookingSeriesCancel.Type
