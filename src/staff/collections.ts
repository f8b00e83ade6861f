/** The staff members' collection: what it is indexed by, for filters and order. */
import type { Staff } from "./member.js"
import type { CollectionSpec } from "../ports/storage.js"

export const StaffCollection: CollectionSpec<Staff> = {
  name: "staff",
  indexes: { active: { type: "integer", get: (s) => (s.active ? 1 : 0) } },
  order: [],
  // Tenants have tens of staff and services: an index on `active` would not pay for itself.
  storageIndexes: []
}
