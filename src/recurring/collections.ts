/** The booking series' collection: what it is indexed by, for filters and order. */
import type { StoredBookingSeries } from "./series.js"
import { type CollectionSpec, FieldOfRelated, ListOfField } from "../ports/storage.js"

/** A series stored before it kept its attendees finds them on its earliest occurrence that also matches `match`. */
const seriesAttendees = (fallback: unknown, match: { readonly [theirs: string]: string }) =>
  new FieldOfRelated("bookings", { series_id: "id", ...match }, "start_ms", fallback)

/** Recurring bookings; their occurrences are found through the bookings' `series_id`. */
export const BookingSeriesCollection: CollectionSpec<StoredBookingSeries> = {
  name: "booking_series",
  indexes: {
    staff_id: { type: "text", get: (s) => s.staff_id },
    client_id: { type: "text", get: (s) => s.client_id },
    service_id: { type: "text", get: (s) => s.service_id }
  },
  order: [],
  // The list's filters; series are written far less often than bookings.
  storageIndexes: [["staff_id"], ["client_id"], ["service_id"]],
  addedFields: {
    // A rescheduled round-robin occurrence may have another member: read one that kept the series' own.
    staff_ids: seriesAttendees(new ListOfField("staff_id"), { staff_id: "staff_id" }),
    // How the attendees were decided never changes after the series is booked.
    assigned_by: seriesAttendees("chosen", {})
  }
}
