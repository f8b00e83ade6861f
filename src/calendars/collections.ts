/**
 * Where external calendars live: the subscriptions (tenant resources, also read across
 * tenants by the sync loop for those due) and their merged busy ranges, one row each, read
 * by the slot computation like time off.
 */
import type { BusyRange, StoredCalendar } from "../domain/calendar.js"
import type { CollectionSpec } from "../ports/storage.js"

export const CalendarsCollection: CollectionSpec<StoredCalendar> = {
  name: "calendars",
  indexes: {
    staff_id: { type: "text", get: (c) => c.staff_id },
    due_ms: { type: "integer", get: (c) => c.due_ms }
  },
  order: [],
  storageIndexes: [["staff_id"], ["due_ms"]]
}

export const BusyRangesCollection: CollectionSpec<BusyRange> = {
  name: "calendar_busy",
  indexes: {
    staff_id: { type: "text", get: (b) => b.staff_id },
    calendar_id: { type: "text", get: (b) => b.calendar_id },
    start_ms: { type: "integer", get: (b) => b.start_ms },
    end_ms: { type: "integer", get: (b) => b.end_ms }
  },
  order: ["start_ms"],
  // Slot queries by staff and time, covering the columns they read; a sync's replacement by calendar.
  storageIndexes: [["staff_id", "end_ms", "start_ms", "calendar_id"], ["calendar_id"]]
}
