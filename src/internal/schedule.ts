/**
 * Loads what the pure scheduling functions need from storage (rules, bookings and holds as
 * index rows, never whole documents) and turns their verdicts into the API's errors. The
 * booking checks of API.md §3 are decided here and in src/scheduling, nowhere else.
 */
import { Effect } from "effect"
import { ACTIVE_STATUSES } from "../domain/booking.js"
import { formatInstant } from "../domain/common.js"
import { InvalidReference, OutsideAvailability, SlotUnavailable } from "../domain/errors.js"
import type { AvailabilityRule } from "../domain/availability.js"
import { MAX_OCCUPIED_MINUTES, type Service } from "../domain/service.js"
import type { Reason, Slot } from "../domain/slot.js"
import type { Staff } from "../domain/staff.js"
import { AvailabilityCollection, BookingsCollection, HoldsCollection } from "../ports/collections.js"
import type { StorageFailure } from "../domain/errors.js"
import type { IndexedRow, StorageService } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import { checkStart, nearestSlots } from "../scheduling/slots.js"
import type { Interval, Occupancy, SlotCandidate, SlotPolicy, StaffSchedule } from "../scheduling/types.js"

const MINUTE = 60_000
const DAY = 86_400_000
const MAX_OCCUPIED = MAX_OCCUPIED_MINUTES * MINUTE
/** How far from a refused start alternatives are looked for. */
const ALTERNATIVES_RANGE = 31 * DAY
const SLOT_CONFLICTS: ReadonlySet<Reason["code"]> = new Set(["booking_overlap", "buffer_overlap", "capacity_full", "held"])

export const policyOf = (service: Service): SlotPolicy => ({
  service_id: service.id,
  duration: service.duration_minutes * MINUTE,
  buffer_before: service.buffer_before_minutes * MINUTE,
  buffer_after: service.buffer_after_minutes * MINUTE,
  interval: service.slot_interval_minutes * MINUTE,
  capacity: service.capacity,
  min_notice: service.min_notice_minutes * MINUTE,
  max_advance: service.max_advance_days * DAY
})

/**
 * Formats slot candidates. Many staff share the same starts, so each instant's text is
 * made once per call and shared: a month for fifty people is ~18,000 slots but ~400 texts.
 */
export const makeSlotFormatter = () => {
  const texts = new Map<number, string>()
  const text = (ms: number) => {
    let found = texts.get(ms)
    if (found === undefined) texts.set(ms, found = formatInstant(ms))
    return found
  }
  return (candidate: SlotCandidate): Slot => ({
    start: text(candidate.start),
    end: text(candidate.end),
    staff_id: candidate.staff_id,
    remaining: candidate.remaining
  })
}

/** What the overlap checks read of bookings and holds. */
const OCCUPANCY_COLUMNS = ["staff_id", "service_id", "start_ms", "end_ms", "occupied_start", "occupied_end"]
/**
 * What listing slots of a one-seat service reads: only whose time is occupied. A month for
 * fifty people reads ~5,000 rows, and two id strings a row were most of the cost.
 */
const LEAN_COLUMNS = ["staff_id", "occupied_start", "occupied_end"]

const leanOccupancyOf = (kind: Occupancy["kind"], row: IndexedRow): Occupancy => ({
  kind,
  id: "",
  service_id: "",
  start: row.occupied_start as number,
  end: row.occupied_end as number,
  occupied_start: row.occupied_start as number,
  occupied_end: row.occupied_end as number
})

const occupancyOf = (kind: Occupancy["kind"], row: IndexedRow): Occupancy => ({
  kind,
  id: row.id,
  service_id: row.service_id as string,
  start: row.start_ms as number,
  end: row.end_ms as number,
  occupied_start: row.occupied_start as number,
  occupied_end: row.occupied_end as number
})

export interface Exclusions {
  /** A booking being rescheduled does not conflict with itself. */
  readonly bookingId?: string
  /** A hold being converted into a booking does not conflict with it. */
  readonly holdId?: string
}

export const makeScheduleLoader = (storage: StorageService) => {
  const rules = storage.collection(AvailabilityCollection)
  const bookings = storage.collection(BookingsCollection)
  const holds = storage.collection(HoldsCollection)

  /**
   * The schedules of `staffIds` for candidates starting in `range`: every rule, and every
   * active booking and unexpired hold whose occupied range can touch a candidate's.
   */
  const schedules = (
    staffIds: ReadonlyArray<string>,
    policy: SlotPolicy,
    range: Interval,
    now: number,
    exclude: Exclusions = {},
    purpose: "check" | "list" = "check"
  ): Effect.Effect<Array<StaffSchedule>, StorageFailure, Tenant> => {
    // Listing a one-seat service needs no ids (no reasons, no seats): read the lean rows.
      const lean = purpose === "list" && policy.capacity === 1 && exclude.bookingId === undefined && exclude.holdId === undefined
      const columns = lean ? { columns: LEAN_COLUMNS, includeId: false } : { columns: OCCUPANCY_COLUMNS }
      const toOccupancy = lean ? leanOccupancyOf : occupancyOf
      const from = range.start - policy.buffer_before
      const to = range.end + policy.duration + policy.buffer_after
      // An occupied range longer than MAX_OCCUPIED_MINUTES cannot exist, so one that reaches
      // `from` starts after `from − MAX_OCCUPIED`: the index scan is bounded on both sides.
      const overlapping = [
        { column: "staff_id", op: "in", value: staffIds },
        { column: "occupied_start", op: "gt", value: from - MAX_OCCUPIED },
        { column: "occupied_start", op: "lt", value: to },
        { column: "occupied_end", op: "gt", value: from }
      ] as const
    const group = (
      ruleDocs: ReadonlyArray<AvailabilityRule>,
      bookingRows: ReadonlyArray<IndexedRow>,
      holdRows: ReadonlyArray<IndexedRow>
    ) => {
      // One pass over each result, grouped by staff member: thousands of rows, dozens of staff.
      const byStaff = new Map(staffIds.map((id) => [id, { rules: [] as Array<AvailabilityRule>, occupancy: [] as Array<Occupancy> }]))
      for (const rule of ruleDocs) byStaff.get(rule.staff_id)?.rules.push(rule)
      for (const row of bookingRows) {
        if (lean || row.id !== exclude.bookingId) byStaff.get(row.staff_id as string)?.occupancy.push(toOccupancy("booking", row))
      }
      for (const row of holdRows) {
        if (lean || row.id !== exclude.holdId) byStaff.get(row.staff_id as string)?.occupancy.push(toOccupancy("hold", row))
      }
      return staffIds.map((staff_id): StaffSchedule => ({ staff_id, ...byStaff.get(staff_id)! }))
    }
    // Chained, not a generator: this runs inside every booking check.
    return Effect.flatMap(rules.list({ where: [{ column: "staff_id", op: "in", value: staffIds }] }), (ruleDocs) =>
      Effect.flatMap(
        bookings.listIndexes({
          where: [...overlapping, { column: "status", op: "in", value: ACTIVE_STATUSES }],
          ...columns,
          ordered: false
        }),
        (bookingRows) =>
          Effect.map(
            holds.listIndexes({
              where: [...overlapping, { column: "expires_ms", op: "gt", value: now }],
              ...columns,
              ordered: false
            }),
            (holdRows) => group(ruleDocs, bookingRows, holdRows)
          )
      ))
  }

  /** Why `staff` cannot be booked for `service` at all, whatever the time. */
  const staffReasons = (service: Service, staff: Staff): Array<Reason> => [
    ...(service.active ? [] : [{ code: "service_inactive" as const, detail: `service ${service.id} is inactive` }]),
    ...(staff.active ? [] : [{ code: "staff_inactive" as const, detail: `staff member ${staff.id} is inactive` }]),
    ...(service.staff_ids.includes(staff.id) ? [] : [{
      code: "staff_not_assigned" as const,
      detail: `staff member ${staff.id} does not deliver service ${service.id}`
    }])
  ]

  /** The reasons `start` is not bookable with `staff` (empty when it is). */
  const explain = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) => {
    const policy = policyOf(service)
    return Effect.map(
      schedules([staff.id], policy, { start, end: start + 1 }, now, exclude),
      ([schedule]) => [...staffReasons(service, staff), ...checkStart({ policy, schedule: schedule!, start, now })]
    )
  }

  /** Up to three free slots of `staff` nearest to `start`. */
  const alternatives = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.gen(function*() {
      if (staffReasons(service, staff).length > 0) return []
      const policy = policyOf(service)
      const range = { start: start - ALTERNATIVES_RANGE, end: start + ALTERNATIVES_RANGE }
      const [schedule] = yield* schedules([staff.id], policy, range, now, exclude)
      return nearestSlots({ policy, schedule: schedule!, start, now, count: 3 }).map(makeSlotFormatter())
    })

  /**
   * Succeeds when `start` is bookable with `staff`; otherwise fails with the API's error for
   * the first kind of reason: the staff member or service itself, availability, or conflict.
   */
  const ensureBookable = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.flatMap(explain(service, staff, start, now, exclude), (reasons) =>
      reasons.length === 0 ? Effect.void : refuse(service, staff, start, now, exclude, reasons))

  /** The refusal for a start that has `reasons`, with alternatives where they help. */
  const refuse = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions, reasons: Array<Reason>) =>
    Effect.gen(function*() {
      const fixed = staffReasons(service, staff)
      if (fixed.length > 0) {
        return yield* new InvalidReference({
          detail: fixed.map((r) => r.detail).join("; "),
          errors: fixed.map((r) => ({
            path: r.code === "service_inactive" ? "service_id" : "staff_id",
            message: r.detail
          }))
        })
      }
      const detail = reasons.map((r) => r.detail).join("; ")
      const slots = yield* alternatives(service, staff, start, now, exclude)
      return yield* reasons.every((r) => SLOT_CONFLICTS.has(r.code))
        ? new SlotUnavailable({ detail, reasons, alternatives: slots })
        : new OutsideAvailability({ detail, reasons, alternatives: slots })
    })

  return { schedules, explain, alternatives, ensureBookable, staffReasons } as const
}
