/** The services' collection: what it is indexed by, for filters and order. */
import type { Service } from "./service.js"
import { assignmentDefaults } from "../domain/assignment.js"
import type { CollectionSpec } from "../ports/storage.js"

export const ServicesCollection: CollectionSpec<Service> = {
  name: "services",
  indexes: { active: { type: "integer", get: (s) => (s.active ? 1 : 0) } },
  order: [],
  storageIndexes: [],
  addedFields: { questions: [], reminders: null, max_occurrences: 0, ...assignmentDefaults }
}
