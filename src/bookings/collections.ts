/** The collections of bookings and of what visitors booked: what each is indexed by, for filters and order. */
import type { Booking } from "./booking.js"
import { toMillis } from "../domain/common.js"
import type { VisitorBooking } from "../domain/visitor.js"
import { storedOccupiedEnd, storedOccupiedStart } from "../scheduling/occupancy.js"
import { type CollectionSpec, ListOfField } from "../ports/storage.js"

export const BookingsCollection: CollectionSpec<Booking> = {
  name: "bookings",
  indexes: {
    staff_id: { type: "text", get: (b) => b.staff_id },
    service_id: { type: "text", get: (b) => b.service_id },
    client_id: { type: "text", get: (b) => b.client_id },
    status: { type: "text", get: (b) => b.status },
    start_ms: { type: "integer", get: (b) => toMillis(b.start) },
    end_ms: { type: "integer", get: (b) => toMillis(b.end) },
    occupied_start: { type: "integer", get: storedOccupiedStart },
    occupied_end: { type: "integer", get: storedOccupiedEnd },
    series_id: { type: "text", get: (b) => b.series_id ?? null }
  },
  order: ["start_ms"],
  // Overlap checks by staff and time, covering every column they read (slot queries read
  // thousands of rows: no table lookups), ranged on both sides of occupied_start (see
  // MAX_OCCUPIED_MINUTES); lists by start, and by staff member, service or client by start
  // (a staff member's page must not scan past everyone else's bookings in start order); in-use
  // checks by service and client.
  storageIndexes: [
    ["staff_id", "occupied_start", "occupied_end", "status", "start_ms", "end_ms", "service_id"],
    ["start_ms"],
    ["staff_id", "start_ms"],
    ["status", "start_ms"],
    ["service_id", "start_ms"],
    ["client_id", "start_ms"],
    ["series_id", "start_ms"]
  ],
  // Most bookings belong to no series: their writes skip the series index.
  sparseColumns: ["series_id"],
  addedFields: { answers: [], series_id: null, staff_ids: new ListOfField("staff_id"), assigned_by: "chosen" }
}

/**
 * What visitors booked (a row per appointment, written with it), counted by key and UTC day
 * against the visitor booking limits; rows stay when the booking is cancelled, as the day's
 * count does.
 */
export const VisitorBookingsCollection: CollectionSpec<VisitorBooking> = {
  name: "visitor_bookings",
  indexes: {
    visitor_key: { type: "text", get: (v) => v.key_id },
    visitor_address: { type: "text", get: (v) => v.address },
    booked_ms: { type: "integer", get: (v) => toMillis(v.booked_at) }
  },
  order: [],
  storageIndexes: [["visitor_key", "booked_ms", "visitor_address"]]
}
