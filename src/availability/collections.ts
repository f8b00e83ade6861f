/** The collections of availability rules and holds: what each is indexed by, for filters and order. */
import type { AvailabilityRule } from "./rule.js"
import { toMillis } from "../domain/common.js"
import type { StoredHold } from "./hold.js"
import { storedOccupiedEnd, storedOccupiedStart } from "../scheduling/occupancy.js"
import { type CollectionSpec, ListOfField } from "../ports/storage.js"

export const AvailabilityCollection: CollectionSpec<AvailabilityRule> = {
  name: "availability",
  indexes: {
    staff_id: { type: "text", get: (r) => r.staff_id },
    type: { type: "text", get: (r) => r.type }
  },
  order: []
}

export const HoldsCollection: CollectionSpec<StoredHold> = {
  name: "holds",
  indexes: {
    visitor_key: { type: "text", get: (h) => h.visitor?.key_id ?? null },
    visitor_address: { type: "text", get: (h) => h.visitor?.address ?? null },
    staff_id: { type: "text", get: (h) => h.staff_id },
    service_id: { type: "text", get: (h) => h.service_id },
    start_ms: { type: "integer", get: (h) => toMillis(h.start) },
    end_ms: { type: "integer", get: (h) => toMillis(h.end) },
    occupied_start: { type: "integer", get: storedOccupiedStart },
    occupied_end: { type: "integer", get: storedOccupiedEnd },
    expires_ms: { type: "integer", get: (h) => toMillis(h.expires_at) }
  },
  order: [],
  // Overlap checks by staff and time; a visitor's new hold counts its key's live holds.
  storageIndexes: [
    ["staff_id", "occupied_start", "occupied_end", "expires_ms", "start_ms", "end_ms", "service_id"],
    ["visitor_key", "expires_ms", "visitor_address"]
  ],
  addedFields: { staff_ids: new ListOfField("staff_id"), assigned_by: "chosen" }
}
