/**
 * Where external calendars live: the subscriptions (tenant resources, also read across
 * tenants by the sync loop for those due) and their merged busy ranges, a document per
 * calendar and week, read by the slot computation like time off.
 */
import type { BusyChunk, StoredCalendar } from "./calendar.js"
import type { CollectionSpec } from "../ports/storage.js"

export const CalendarsCollection: CollectionSpec<StoredCalendar> = {
  name: "calendars",
  indexes: {
    staff_id: { type: "text", get: (c) => c.staff_id },
    due_ms: { type: "integer", get: (c) => c.due_ms }
  },
  order: [],
  storageIndexes: [["staff_id"]],
  // Only the sync loop reads by due time, across tenants: the due calendars are few, so
  // sorting them by id after the range read costs little.
  acrossTenantIndexes: [["due_ms"]],
  addedFields: { sync_state: "idle" }
}

export const BusyRangesCollection: CollectionSpec<BusyChunk> = {
  name: "calendar_busy_weeks",
  indexes: {
    staff_id: { type: "text", get: (b) => b.staff_id },
    calendar_id: { type: "text", get: (b) => b.calendar_id },
    from_ms: { type: "integer", get: (b) => b.from_ms },
    to_ms: { type: "integer", get: (b) => b.to_ms }
  },
  order: ["from_ms"],
  // Slot queries by staff and time; a sync's replacement by calendar.
  storageIndexes: [["staff_id", "from_ms", "to_ms"], ["calendar_id"]]
}
