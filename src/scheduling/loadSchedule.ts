/**
 * Loads what the pure scheduling functions need from storage (rules, bookings and holds as
 * index rows, never whole documents) and turns their verdicts into the API's errors. The
 * booking checks of docs/api.md §3 are decided here, in checks.ts and in slots.ts, nowhere else.
 */
import { Effect } from "effect"
import { ACTIVE_STATUSES } from "../domain/booking.js"
import { formatInstant } from "../domain/common.js"
import { InvalidReference, OutsideAvailability, SlotUnavailable } from "../domain/errors.js"
import type { AvailabilityRule } from "../domain/availability.js"
import { MAX_OCCUPIED_MINUTES, type Service } from "../domain/service.js"
import type { Reason, Slot } from "../domain/slot.js"
import type { Staff } from "../domain/staff.js"
import { BusyRangesCollection } from "../calendars/collections.js"
import type { BusyChunk } from "../domain/calendar.js"
import { AvailabilityCollection, BookingsCollection, HoldsCollection } from "../ports/collections.js"
import type { StorageFailure } from "../domain/errors.js"
import type { ColumnValues, IndexedRow, StorageService } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import { checkStart, nearestSlots } from "./checks.js"
import type { SlotMaker } from "./slots.js"
import type { BusyInterval, Interval, Occupancy, SlotPolicy, StaffSchedule } from "./types.js"

const MINUTE = 60_000
const DAY = 86_400_000
const MAX_OCCUPIED = MAX_OCCUPIED_MINUTES * MINUTE
/** How far from a refused start alternatives are looked for. */
const ALTERNATIVES_RANGE = 31 * DAY
/**
 * How far beyond the candidates' range busy time is read: slots step from the start of the
 * window they are in, so busy time earlier in that window (the same working day) moves them.
 */
const BUSY_PAD = 2 * DAY
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
 * Makes the public `Slot`s of one list. Many staff share the same starts, so each instant's
 * text is made once per list and shared: a month for fifty people is ~18,000 slots but ~400
 * texts. Slots come in start order, so the last start and end made usually match the next.
 */
export const makeSlotFormatter = (): SlotMaker<Slot> => {
  const texts = new Map<number, string>()
  const text = (ms: number) => {
    let found = texts.get(ms)
    if (found === undefined) texts.set(ms, found = formatInstant(ms))
    return found
  }
  let lastStart = Number.NaN
  let startText = ""
  let lastEnd = Number.NaN
  let endText = ""
  return (start, end, staff_id, remaining) => {
    if (start !== lastStart) startText = text(lastStart = start)
    if (end !== lastEnd) endText = text(lastEnd = end)
    return { start: startText, end: endText, staff_id, remaining }
  }
}

/** What the overlap checks read of bookings and holds. */
const OCCUPANCY_COLUMNS = ["staff_id", "service_id", "start_ms", "end_ms", "occupied_start", "occupied_end"]

const occupancyOf = (kind: Occupancy["kind"], row: IndexedRow): Occupancy => ({
  kind,
  id: row.id,
  service_id: row.service_id as string,
  start: row.start_ms as number,
  end: row.end_ms as number,
  occupied_start: row.occupied_start as number,
  occupied_end: row.occupied_end as number
})

/**
 * What listing slots of a one-seat service needs of its occupancies: only their occupied
 * ranges, read as columns per staff member (a month for fifty people is ~5,000 rows).
 */
const LEAN_COLUMNS = ["occupied_start", "occupied_end"]

const leanOccupancies = (kind: Occupancy["kind"], columns: ColumnValues | undefined, into: Array<Occupancy>) => {
  if (columns === undefined) return
  const [starts = [], ends = []] = columns as ReadonlyArray<ReadonlyArray<number>>
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!
    const end = ends[i]!
    into.push({ kind, id: "", service_id: "", start, end, occupied_start: start, occupied_end: end })
  }
}

/**
 * Runs independent reads at once where the storage runs them in parallel (PostgreSQL
 * outside a transaction) and `worthIt`, else one after another; the successes in order.
 * Only reads of many rows gain: for one staff member's few rows, forking fibers (0.1–0.4 ms
 * here) and waking more connections can cost what the overlap saves.
 */
export const readTogether = (storage: StorageService) => {
  const concurrency = storage.readConcurrency ?? Effect.succeed(1)
  return <const T extends ReadonlyArray<Effect.Effect<any, any, any>>>(reads: T, worthIt: boolean): Effect.Effect<
    { -readonly [K in keyof T]: Effect.Effect.Success<T[K]> },
    Effect.Effect.Error<T[number]>,
    Effect.Effect.Context<T[number]>
  > => {
    const all = reads as ReadonlyArray<Effect.Effect<unknown, unknown, unknown>>
    return (worthIt ? Effect.flatMap(concurrency, (concurrency) => Effect.all(all, { concurrency })) : Effect.all(all)) as any
  }
}

const NO_BUSY: ReadonlyArray<BusyInterval> = []

/** Each staff member's busy ranges, from their calendars' chunks. */
const busyOf = (chunks: ReadonlyArray<BusyChunk>): Map<string, Array<BusyInterval>> => {
  const byStaff = new Map<string, Array<BusyInterval>>()
  for (const chunk of chunks) {
    let into = byStaff.get(chunk.staff_id)
    if (into === undefined) byStaff.set(chunk.staff_id, into = [])
    for (let i = 0; i < chunk.starts.length; i++) {
      into.push({ start: chunk.starts[i]!, end: chunk.ends[i]!, calendar_id: chunk.calendar_id })
    }
  }
  return byStaff
}

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
  const busyRanges = storage.collection(BusyRangesCollection)
  const together = readTogether(storage)

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
    const activeBookings = [...overlapping, { column: "status", op: "in", value: ACTIVE_STATUSES }] as const
    const liveHolds = [...overlapping, { column: "expires_ms", op: "gt", value: now }] as const
    // Listing a one-seat service needs no ids (no reasons, no seats): only occupied ranges.
    const lean = purpose === "list" && policy.capacity === 1 && exclude.bookingId === undefined && exclude.holdId === undefined
    const many = staffIds.length > 1
    const ruleDocs = rules.list({ where: [{ column: "staff_id", op: "in", value: staffIds }] })
    // Chunks hold the ranges that start in their week, ending by `to_ms`.
    const busyChunks = busyRanges.list({
      where: [
        { column: "staff_id", op: "in", value: staffIds },
        { column: "from_ms", op: "lt", value: to + BUSY_PAD },
        { column: "to_ms", op: "gt", value: from - BUSY_PAD }
      ]
    })
    const assemble = (
      docs: ReadonlyArray<AvailabilityRule>,
      byStaff: Map<string, Array<Occupancy>>,
      chunks: ReadonlyArray<BusyChunk>
    ) => {
      const busyByStaff = busyOf(chunks)
      const rulesOf = new Map(staffIds.map((id) => [id, [] as Array<AvailabilityRule>]))
      for (const rule of docs) rulesOf.get(rule.staff_id)?.push(rule)
      return staffIds.map((staff_id): StaffSchedule => ({
        staff_id,
        rules: rulesOf.get(staff_id)!,
        occupancy: byStaff.get(staff_id)!,
        busy: busyByStaff.get(staff_id) ?? NO_BUSY
      }))
    }
    // Chained, not a generator: this runs inside every booking check.
    if (lean) {
      return Effect.map(
        together([
          ruleDocs,
          bookings.listColumns({ where: activeBookings, groupBy: "staff_id", columns: LEAN_COLUMNS }),
          holds.listColumns({ where: liveHolds, groupBy: "staff_id", columns: LEAN_COLUMNS }),
          busyChunks
        ], many),
        ([docs, booked, held, busy]) =>
          assemble(
            docs,
            new Map(staffIds.map((id) => {
              const into: Array<Occupancy> = []
              leanOccupancies("booking", booked.get(id), into)
              leanOccupancies("hold", held.get(id), into)
              return [id, into]
            })),
            busy
          )
      )
    }
    return Effect.map(
      together([
        ruleDocs,
        bookings.listIndexes({ where: activeBookings, columns: OCCUPANCY_COLUMNS, ordered: false }),
        holds.listIndexes({ where: liveHolds, columns: OCCUPANCY_COLUMNS, ordered: false }),
        busyChunks
      ], many),
      ([docs, bookingRows, holdRows, busy]) => {
        const byStaff = new Map(staffIds.map((id) => [id, [] as Array<Occupancy>]))
        for (const row of bookingRows) {
          if (row.id !== exclude.bookingId) byStaff.get(row.staff_id as string)?.push(occupancyOf("booking", row))
        }
        for (const row of holdRows) {
          if (row.id !== exclude.holdId) byStaff.get(row.staff_id as string)?.push(occupancyOf("hold", row))
        }
        return assemble(docs, byStaff, busy)
      }
    )
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
      const format = makeSlotFormatter()
      return nearestSlots({ policy, schedule: schedule!, start, now, count: 3 })
        .map((slot) => format(slot.start, slot.end, slot.staff_id, slot.remaining))
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
