/** The core's collections: what each resource is indexed by, for filters and order. */
import type { AvailabilityRule } from "../domain/availability.js"
import type { Booking } from "../domain/booking.js"
import type { Client } from "../domain/client.js"
import { toMillis } from "../domain/common.js"
import type { StoredHold } from "../domain/hold.js"
import type { DeploymentSecret } from "../domain/manageLink.js"
import type { Payment } from "../domain/payment.js"
import type { StoredBookingSeries } from "../domain/series.js"
import type { Service } from "../domain/service.js"
import type { Staff } from "../domain/staff.js"
import type { VisitorBooking } from "../domain/visitor.js"
import { assignmentDefaults } from "../domain/assignment.js"
import { storedOccupiedEnd, storedOccupiedStart } from "../scheduling/occupancy.js"
import { type CollectionSpec, FieldOfRelated, ListOfField } from "./storage.js"

export const ServicesCollection: CollectionSpec<Service> = {
  name: "services",
  indexes: { active: { type: "integer", get: (s) => (s.active ? 1 : 0) } },
  order: [],
  storageIndexes: [],
  addedFields: { questions: [], reminders: null, max_occurrences: 0, ...assignmentDefaults }
}

export const StaffCollection: CollectionSpec<Staff> = {
  name: "staff",
  indexes: { active: { type: "integer", get: (s) => (s.active ? 1 : 0) } },
  order: [],
  // Tenants have tens of staff and services: an index on `active` would not pay for itself.
  storageIndexes: []
}

export const ClientsCollection: CollectionSpec<Client> = {
  name: "clients",
  indexes: { email: { type: "text", get: (c) => c.email?.toLowerCase() ?? null } },
  order: []
}

export const AvailabilityCollection: CollectionSpec<AvailabilityRule> = {
  name: "availability",
  indexes: {
    staff_id: { type: "text", get: (r) => r.staff_id },
    type: { type: "text", get: (r) => r.type }
  },
  order: []
}

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

export const PaymentsCollection: CollectionSpec<Payment> = {
  name: "payments",
  indexes: { booking_id: { type: "text", get: (p) => p.booking_id } },
  order: []
}

/** Secrets of the deployment, shared by every instance; only in the system tenant. */
export const DeploymentSecretsCollection: CollectionSpec<DeploymentSecret> = {
  name: "deployment_secrets",
  indexes: {},
  order: []
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
