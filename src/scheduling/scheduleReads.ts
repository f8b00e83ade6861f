/**
 * The reads of the scheduling core: what the pure functions need from storage, as index rows
 * and columns, never whole documents: staff members' rules, active bookings, live holds, busy
 * calendar time and shared-member rows (in that order, in one go), a service's members, and
 * what the round-robin policies know of them.
 */
import { Effect } from "effect"
import { ACTIVE_STATUSES } from "../bookings/booking.js"
import type { AvailabilityRule } from "../availability/rule.js"
import type { BusyChunk } from "../calendars/calendar.js"
import { InvalidReference, type StorageFailure } from "../domain/errors.js"
import { MAX_OCCUPIED_MINUTES, type Service } from "../services/service.js"
import { BusyRangesCollection } from "../calendars/collections.js"
import { AvailabilityCollection, HoldsCollection } from "../availability/collections.js"
import { BookingsCollection } from "../bookings/collections.js"
import { MemberOccupancyCollection } from "../ports/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type CollectionRead, type ColumnValues, type IndexedRow, Read, type ReadResults, type StorageService } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import { type MemberRecord, rankMembers } from "./assignment.js"
import { occupiedFrom, occupiedUntil } from "./occupancy.js"
import { NO_READS, readsThen, withAlongside } from "./readTogether.js"
import { noStaff } from "./refusals.js"
import type { BusyInterval, Interval, Occupancy, SlotPolicy, StaffSchedule } from "./types.js"

const MINUTE = 60_000
const DAY = 86_400_000
const MAX_OCCUPIED = MAX_OCCUPIED_MINUTES * MINUTE
/**
 * How far beyond the candidates' range busy time is read: slots step from the start of the
 * window they are in, so busy time earlier in that window (the same working day) moves them.
 */
const BUSY_PAD = 2 * DAY
/** How far back the round-robin policies look at a service's bookings. */
const RECORDS_LOOKBACK = 90 * DAY

/** What the overlap checks read of bookings and holds. */
const OCCUPANCY_COLUMNS = ["staff_id", "service_id", "start_ms", "end_ms", "occupied_start", "occupied_end"]
/** What they read of a collective booking's or hold's rows for its further members. */
const SHARED_COLUMNS = [...OCCUPANCY_COLUMNS, "source_id", "kind"]

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

export const makeScheduleReads = (storage: StorageService) => {
  const bookings = storage.collection(BookingsCollection)
  const staffDocs = storage.collection(StaffCollection)
  const readAll = readsThen(storage)

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
  ): Effect.Effect<Array<StaffSchedule>, StorageFailure, Tenant> =>
    schedulesThen(staffIds, policy, range, now, exclude, purpose, Effect.succeed)

  /**
   * `next` of the `schedules`, in the same step; and of what the `alongside` reads read, in
   * one go with them (a caller's reads that do not depend on them).
   */
  const schedulesThen = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>> = readonly []>(
    staffIds: ReadonlyArray<string>,
    policy: SlotPolicy,
    range: Interval,
    now: number,
    exclude: Exclusions,
    purpose: "check" | "list",
    next: (schedules: Array<StaffSchedule>, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
    alongside: T = NO_READS as unknown as T
  ): Effect.Effect<A, E | StorageFailure, R | Tenant> => {
    // The occupied range of the first candidate's start to that of the last one's end.
    const from = occupiedFrom(range.start, policy.buffer_before)
    const to = occupiedUntil(range.end + policy.duration, policy.buffer_after)
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
    const ruleDocs = Read.list(AvailabilityCollection, { where: [{ column: "staff_id", op: "in", value: staffIds }] })
    // Chunks hold the ranges that start in their week, ending by `to_ms`.
    const busyChunks = Read.list(BusyRangesCollection, {
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
      return readAll(
        withAlongside(
          [
            ruleDocs,
            Read.listColumns(BookingsCollection, { where: activeBookings, groupBy: "staff_id", columns: LEAN_COLUMNS }),
            Read.listColumns(HoldsCollection, { where: liveHolds, groupBy: "staff_id", columns: LEAN_COLUMNS }),
            busyChunks,
            Read.listColumns(MemberOccupancyCollection, { where: liveHolds, groupBy: "staff_id", columns: LEAN_COLUMNS })
          ] as const,
          alongside
        ),
        many,
        ([docs, booked, held, busy, shared, ...extra]) =>
          next(
            assemble(
              docs,
              new Map(staffIds.map((id) => {
                const into: Array<Occupancy> = []
                leanOccupancies("booking", booked.get(id), into)
                leanOccupancies("hold", held.get(id), into)
                leanOccupancies("booking", shared.get(id), into)
                return [id, into]
              })),
              busy
            ),
            extra as ReadResults<T>
          )
      )
    }
    return readAll(
      withAlongside(
        [
          ruleDocs,
          Read.listIndexes(BookingsCollection, { where: activeBookings, columns: OCCUPANCY_COLUMNS, ordered: false }),
          Read.listIndexes(HoldsCollection, { where: liveHolds, columns: OCCUPANCY_COLUMNS, ordered: false }),
          busyChunks,
          Read.listIndexes(MemberOccupancyCollection, { where: liveHolds, columns: SHARED_COLUMNS, ordered: false })
        ] as const,
        alongside
      ),
      many,
      ([docs, bookingRows, holdRows, busy, sharedRows, ...extra]) => {
        const byStaff = new Map(staffIds.map((id) => [id, [] as Array<Occupancy>]))
        for (const row of bookingRows) {
          if (row.id !== exclude.bookingId) byStaff.get(row.staff_id as string)?.push(occupancyOf("booking", row))
        }
        for (const row of holdRows) {
          if (row.id !== exclude.holdId) byStaff.get(row.staff_id as string)?.push(occupancyOf("hold", row))
        }
        // A collective booking or hold occupies its other members under its own id.
        for (const row of sharedRows) {
          const source = row.source_id as string
          if (source === exclude.bookingId || source === exclude.holdId) continue
          byStaff.get(row.staff_id as string)?.push(occupancyOf(row.kind as Occupancy["kind"], { ...row, id: source }))
        }
        return next(assemble(docs, byStaff, busy), extra as ReadResults<T>)
      }
    )
  }

  /**
   * What the round-robin policies know of each member: their bookings of the service that
   * start within the look-back window or later (ids, which sort by creation; statuses; ends).
   */
  const memberRecords = (service: Service, now: number) =>
    Effect.map(
      bookings.listColumns({
        where: [
          { column: "service_id", op: "eq", value: service.id },
          { column: "start_ms", op: "gt", value: now - RECORDS_LOOKBACK }
        ],
        groupBy: "staff_id",
        columns: ["id", "status", "end_ms"]
      }),
      (groups) => {
        const records = new Map<string, MemberRecord>()
        for (const [staffId, [ids = [], statuses = [], ends = []]] of groups) {
          let last: string | undefined
          let upcoming = 0
          for (let i = 0; i < ids.length; i++) {
            const id = ids[i] as string
            if (last === undefined || id > last) last = id
            if ((statuses[i] === "pending" || statuses[i] === "confirmed") && (ends[i] as number) > now) upcoming++
          }
          records.set(staffId as string, { last_booking_id: last, assigned: ids.length, upcoming })
        }
        return records
      }
    )

  /** The service's members ranked by its round-robin policy, as of now. */
  const ranking = (service: Service, now: number) =>
    Effect.map(
      memberRecords(service, now),
      (records) => rankMembers({ policy: service.round_robin_policy, members: service.staff_ids, records, weights: service.staff_weights })
    )

  /** The service's members in its `staff_ids` order; `invalid_reference` when one no longer exists. */
  const membersOf = (service: Service) =>
    Effect.flatMap(
      staffDocs.list({ where: [{ column: "id", op: "in", value: service.staff_ids }] }),
      (docs) => {
        const byId = new Map(docs.map((doc) => [doc.id, doc]))
        const ids = [...new Set(service.staff_ids)]
        const missing = ids.filter((id) => !byId.has(id))
        return missing.length === 0
          ? Effect.succeed(ids.map((id) => byId.get(id)!))
          : Effect.fail(
            new InvalidReference({
              detail: `service ${service.id} names staff that no longer exist: ${missing.join(", ")}`,
              errors: missing.map((id) => ({ path: "staff_id", message: `staff member ${id} of the service does not exist` }))
            })
          )
      }
    )

  /**
   * The members a booking of `service` is decided among: all of them (for a collective service
   * `requested`, if given, must be one of them); `invalid_reference` when it has none.
   */
  const candidatesOf = (service: Service, requested: string | undefined) => {
    if (service.assignment === "collective" && requested !== undefined && !service.staff_ids.includes(requested)) {
      return Effect.fail(
        new InvalidReference({
          detail: `staff member ${requested} does not deliver service ${service.id}`,
          errors: [{ path: "staff_id", message: "is not a member of this collective service (omit it: every member attends)" }]
        })
      )
    }
    return service.staff_ids.length === 0 ? Effect.fail(noStaff(service)) : membersOf(service)
  }

  return { schedules, schedulesThen, ranking, membersOf, candidatesOf } as const
}

export type ScheduleReads = ReturnType<typeof makeScheduleReads>
