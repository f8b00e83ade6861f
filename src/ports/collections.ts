/**
 * The core's collections: the member occupancy the scheduling rules share, and the list of
 * every collection; each feature's own specs (what it is indexed by) live in its folder.
 */
import { toMillis } from "../domain/common.js"
import { storedOccupiedEnd, storedOccupiedStart } from "../scheduling/occupancy.js"
import type { CollectionSpec } from "./storage.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { ClientsCollection } from "../clients/collections.js"
import { AvailabilityCollection, HoldsCollection } from "../availability/collections.js"
import { BookingsCollection, VisitorBookingsCollection } from "../bookings/collections.js"
import { BookingSeriesCollection } from "../recurring/collections.js"
import { PaymentsCollection } from "../payments/collections.js"
import { DeploymentSecretsCollection } from "../manage/collections.js"

/**
 * What a collective booking or hold occupies of its members after the first (the first is
 * the document's own `staff_id`): one row per further member, written and removed with the
 * booking or hold, so the overlap checks of every member see it. A booking's rows exist only
 * while it is pending or confirmed; a hold's until it is released or converted (expired ones
 * are ignored by `expires_ms`, as holds are).
 */
export interface MemberOccupancy {
  readonly id: string
  readonly source_id: string
  readonly kind: "booking" | "hold"
  readonly staff_id: string
  readonly service_id: string
  readonly start: string
  readonly end: string
  readonly buffer_before_minutes: number
  readonly buffer_after_minutes: number
  /** A hold's expiry; null for a booking. */
  readonly expires_at: string | null
}

/** A booking's rows never expire by time. */
export const NEVER_EXPIRES_MS = 8_640_000_000_000_000

export const MemberOccupancyCollection: CollectionSpec<MemberOccupancy> = {
  name: "member_occupancy",
  indexes: {
    source_id: { type: "text", get: (m) => m.source_id },
    staff_id: { type: "text", get: (m) => m.staff_id },
    service_id: { type: "text", get: (m) => m.service_id },
    start_ms: { type: "integer", get: (m) => toMillis(m.start) },
    end_ms: { type: "integer", get: (m) => toMillis(m.end) },
    occupied_start: { type: "integer", get: storedOccupiedStart },
    occupied_end: { type: "integer", get: storedOccupiedEnd },
    expires_ms: { type: "integer", get: (m) => (m.expires_at === null ? NEVER_EXPIRES_MS : toMillis(m.expires_at)) },
    kind: { type: "text", get: (m) => m.kind }
  },
  order: [],
  storageIndexes: [
    ["staff_id", "occupied_start", "occupied_end", "expires_ms", "start_ms", "end_ms", "service_id"],
    ["source_id"]
  ]
}

/** Every collection of the core, for adapters that prepare tables up front. */
export const CoreCollections: ReadonlyArray<CollectionSpec<any>> = [
  ServicesCollection,
  StaffCollection,
  ClientsCollection,
  AvailabilityCollection,
  BookingsCollection,
  BookingSeriesCollection,
  HoldsCollection,
  MemberOccupancyCollection,
  VisitorBookingsCollection,
  PaymentsCollection,
  DeploymentSecretsCollection
]

// Each feature's collections, named here too: the core's surface lists them with the ports.
export {
  AvailabilityCollection,
  BookingsCollection,
  BookingSeriesCollection,
  ClientsCollection,
  DeploymentSecretsCollection,
  HoldsCollection,
  PaymentsCollection,
  ServicesCollection,
  StaffCollection,
  VisitorBookingsCollection
}
