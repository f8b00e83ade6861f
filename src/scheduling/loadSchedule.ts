/**
 * Loads what the pure scheduling functions need from storage (rules, bookings and holds as
 * index rows, never whole documents) and turns their verdicts into the API's errors. The
 * booking checks of docs/api.md §3 are decided here, in checks.ts and in slots.ts, nowhere else.
 */
import { Effect } from "effect"
import { ACTIVE_STATUSES } from "../domain/booking.js"
import type { AssignedBy } from "../domain/assignment.js"
import { formatInstant } from "../domain/common.js"
import { InvalidReference, OutsideAvailability, SlotUnavailable } from "../domain/errors.js"
import type { AvailabilityRule } from "../domain/availability.js"
import { MAX_OCCUPIED_MINUTES, type Service } from "../domain/service.js"
import type { Reason, Slot } from "../domain/slot.js"
import type { Staff } from "../domain/staff.js"
import { BusyRangesCollection } from "../calendars/collections.js"
import type { BusyChunk } from "../domain/calendar.js"
import {
  AvailabilityCollection,
  BookingsCollection,
  HoldsCollection,
  MemberOccupancyCollection,
  StaffCollection
} from "../ports/collections.js"
import type { StorageFailure } from "../domain/errors.js"
import {
  type CollectionRead,
  type ColumnValues,
  type IndexedRow,
  Read,
  readManyOf,
  readOne,
  type ReadResults,
  type StorageService
} from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import {
  collectiveSlots,
  type MemberRecord,
  pickFree,
  rankMembers,
  roundRobinSlots,
  type TeamSlot,
  teamVerdict
} from "./assignment.js"
import { ALTERNATIVES_RANGE, checkStart, nearestSlots, nearestStarts } from "./checks.js"
import { occupiedFrom, occupiedUntil } from "./occupancy.js"
import { computeSlots, type SlotMaker } from "./slots.js"
import type { BusyInterval, Interval, Occupancy, SlotPolicy, StaffSchedule } from "./types.js"

const MINUTE = 60_000
const DAY = 86_400_000
const MAX_OCCUPIED = MAX_OCCUPIED_MINUTES * MINUTE
/** How many free starts a refusal offers. */
const ALTERNATIVES = 3
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
  // One `[staff_id]` per member, shared by their slots.
  const alone = new Map<string, ReadonlyArray<string>>()
  return (start, end, staff_id, remaining) => {
    if (start !== lastStart) startText = text(lastStart = start)
    if (end !== lastEnd) endText = text(lastEnd = end)
    let staff_ids = alone.get(staff_id)
    if (staff_ids === undefined) alone.set(staff_id, staff_ids = [staff_id])
    return { start: startText, end: endText, staff_id, staff_ids, remaining }
  }
}

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

/**
 * Runs independent reads at once where the storage runs them in parallel (PostgreSQL
 * outside a transaction) and `worthIt`, else one after another; the successes in order.
 * Only reads of many rows gain: for one staff member's few rows, forking fibers (0.1–0.4 ms
 * here) and waking more connections can cost what the overlap saves.
 */
export const readTogether = (storage: StorageService) => {
  const concurrency = storage.readConcurrency ?? Effect.succeed(1)
  type Results<T extends ReadonlyArray<Effect.Effect<any, any, any>>> = { -readonly [K in keyof T]: Effect.Effect.Success<T[K]> }
  /** `next` of the successes, in the same step. */
  const andThen = <const T extends ReadonlyArray<Effect.Effect<any, any, any>>, B, E, R>(
    reads: T,
    worthIt: boolean,
    next: (results: Results<T>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, Effect.Effect.Error<T[number]> | E, Effect.Effect.Context<T[number]> | R> => {
    const all = reads as ReadonlyArray<Effect.Effect<unknown, unknown, unknown>>
    const then = next as (results: Array<unknown>) => Effect.Effect<B, E, R>
    return (worthIt
      ? Effect.flatMap(concurrency, (concurrency) => Effect.flatMap(Effect.all(all, { concurrency }), then))
      : inSequence(all, then)) as any
  }
  const together = <const T extends ReadonlyArray<Effect.Effect<any, any, any>>>(reads: T, worthIt: boolean): Effect.Effect<
    Results<T>,
    Effect.Effect.Error<T[number]>,
    Effect.Effect.Context<T[number]>
  > => andThen(reads, worthIt, Effect.succeed)
  return Object.assign(together, { andThen })
}

/**
 * `reads` one after another, then `next` of their successes in order: one step per read,
 * without what `Effect.all` sets up (batching and scope lookups, a loop, a mapped result).
 */
const inSequence = <B, E, R>(
  reads: ReadonlyArray<Effect.Effect<unknown, unknown, unknown>>,
  next: (results: Array<unknown>) => Effect.Effect<B, E, R>
): Effect.Effect<B, unknown, unknown> => {
  const from = (i: number, results: Array<unknown>): Effect.Effect<B, unknown, unknown> =>
    i === reads.length ? next(results) : Effect.flatMap(reads[i]!, (result) => {
      results.push(result)
      return from(i + 1, results)
    })
  // The list starts in the first step, so each run of the program has its own.
  return reads.length === 0 ? next([]) : Effect.flatMap(reads[0]!, (first) => from(1, [first]))
}

/**
 * `next` of what `reads` read, in order: together in one step or round trip of the storage
 * (`readMany`), or, where the storage reads in parallel here and now and it is `worthIt`
 * (many staff members' rows), each at once on a connection of its own.
 */
export const readsThen = (storage: StorageService) => {
  const together = readTogether(storage)
  const readMany = readManyOf(storage)
  // Spread over connections: each read a statement of its own, on a connection of its own.
  const one = readOne(storage)
  return <const T extends ReadonlyArray<CollectionRead<any>>, B, E, R>(
    reads: T,
    worthIt: boolean,
    next: (results: ReadResults<T>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, StorageFailure | E, Tenant | R> => {
    const inOne = Effect.flatMap(readMany(reads), next)
    if (!worthIt || storage.readConcurrency === undefined) return inOne
    return Effect.flatMap(storage.readConcurrency, (concurrency) =>
      concurrency > 1
        ? together.andThen(reads.map(one), true, next as (results: ReadonlyArray<unknown>) => Effect.Effect<B, E, R>)
        : inOne)
  }
}

/** `reads`, then the `alongside` ones: their results come last. */
const withAlongside = <const T extends ReadonlyArray<CollectionRead<any>>, U extends ReadonlyArray<CollectionRead<any>>>(
  reads: T,
  alongside: U
) => (alongside.length === 0 ? reads : [...reads, ...alongside]) as unknown as readonly [...T, ...U]

const NONE: ReadonlyArray<never> = []

/** No staff member of the tenant has the `staff_id` asked for. */
const noStaffMember = (id: string) =>
  new InvalidReference({ detail: `no staff member with id ${id}`, errors: [{ path: "staff_id", message: "does not name an existing staff member" }] })

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

/** Whom a booking or hold goes to: `member` is the first of `staff_ids`. */
export interface StaffChoice {
  readonly member: Staff
  readonly staff_ids: ReadonlyArray<string>
  readonly assigned_by: AssignedBy
}

export interface Exclusions {
  /** A booking being rescheduled does not conflict with itself. */
  readonly bookingId?: string
  /** A hold being converted into a booking does not conflict with it. */
  readonly holdId?: string
}

export const makeScheduleLoader = (storage: StorageService) => {
  const bookings = storage.collection(BookingsCollection)
  const staffDocs = storage.collection(StaffCollection)
  const readAll = readsThen(storage)
  const readMany = readManyOf(storage)

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
    alongside: T = NONE as unknown as T
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
        withAlongside([
          ruleDocs,
          Read.listColumns(BookingsCollection, { where: activeBookings, groupBy: "staff_id", columns: LEAN_COLUMNS }),
          Read.listColumns(HoldsCollection, { where: liveHolds, groupBy: "staff_id", columns: LEAN_COLUMNS }),
          busyChunks,
          Read.listColumns(MemberOccupancyCollection, { where: liveHolds, groupBy: "staff_id", columns: LEAN_COLUMNS })
        ] as const, alongside),
        many,
        ([docs, booked, held, busy, shared, ...extra]) =>
          next(assemble(
            docs,
            new Map(staffIds.map((id) => {
              const into: Array<Occupancy> = []
              leanOccupancies("booking", booked.get(id), into)
              leanOccupancies("hold", held.get(id), into)
              leanOccupancies("booking", shared.get(id), into)
              return [id, into]
            })),
            busy
          ), extra as ReadResults<T>)
      )
    }
    return readAll(
      withAlongside([
        ruleDocs,
        Read.listIndexes(BookingsCollection, { where: activeBookings, columns: OCCUPANCY_COLUMNS, ordered: false }),
        Read.listIndexes(HoldsCollection, { where: liveHolds, columns: OCCUPANCY_COLUMNS, ordered: false }),
        busyChunks,
        Read.listIndexes(MemberOccupancyCollection, { where: liveHolds, columns: SHARED_COLUMNS, ordered: false })
      ] as const, alongside),
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

  /** Why `staff` cannot be booked for `service` at all, whatever the time. */
  const staffReasons = (service: Service, staff: Staff): Array<Reason> => {
    const reasons: Array<Reason> = []
    if (!service.active) reasons.push({ code: "service_inactive", detail: `service ${service.id} is inactive` })
    if (!staff.active) reasons.push({ code: "staff_inactive", detail: `staff member ${staff.id} is inactive` })
    if (!service.staff_ids.includes(staff.id)) {
      reasons.push({ code: "staff_not_assigned", detail: `staff member ${staff.id} does not deliver service ${service.id}` })
    }
    return reasons
  }

  /** The reasons `start` is not bookable with `staff` on `schedule` (empty when it is). */
  const reasonsOn = (service: Service, staff: Staff, policy: SlotPolicy, schedule: StaffSchedule, start: number, now: number) => {
    const fixed = staffReasons(service, staff)
    const checked = checkStart({ policy, schedule, start, now })
    return fixed.length === 0 ? checked : [...fixed, ...checked]
  }

  /** The reasons `start` is not bookable with `staff` (empty when it is). */
  const explain = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) => {
    const policy = policyOf(service)
    return Effect.map(
      schedules([staff.id], policy, { start, end: start + 1 }, now, exclude),
      ([schedule]) => reasonsOn(service, staff, policy, schedule!, start, now)
    )
  }

  /** Up to `ALTERNATIVES` free slots of `staff` nearest to `start`. */
  const alternatives = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.gen(function*() {
      if (staffReasons(service, staff).length > 0) return []
      const policy = policyOf(service)
      const range = { start: start - ALTERNATIVES_RANGE, end: start + ALTERNATIVES_RANGE }
      const [schedule] = yield* schedules([staff.id], policy, range, now, exclude)
      const format = makeSlotFormatter()
      return nearestSlots({ policy, schedule: schedule!, start, now, count: ALTERNATIVES })
        .map((slot) => format(slot.start, slot.end, slot.staff_id, slot.remaining))
    })

  /**
   * Succeeds with `free` when `start` is bookable with `staff`; otherwise fails with the API's
   * error for the first kind of reason: the staff member or service itself, availability, or
   * conflict. One step after the read: every create runs it.
   */
  const ensureBookable = <A = void>(
    service: Service,
    staff: Staff,
    start: number,
    now: number,
    exclude: Exclusions = {},
    free?: A
  ): Effect.Effect<A, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    whenBookable(service, staff, start, now, exclude, () => Effect.succeed(free as A))

  /** `next` when `start` is bookable with `staff`, in the same step; otherwise as `ensureBookable` fails. */
  const whenBookable = <A, E, R>(
    service: Service,
    staff: Staff,
    start: number,
    now: number,
    exclude: Exclusions,
    next: () => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
    const policy = policyOf(service)
    return schedulesThen(
      [staff.id],
      policy,
      { start, end: start + 1 },
      now,
      exclude,
      "check",
      ([schedule]): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
        const reasons = reasonsOn(service, staff, policy, schedule!, start, now)
        return reasons.length === 0 ? next() : refuse(service, staff, start, now, exclude, reasons)
      }
    )
  }

  /**
   * `whenBookable` for the staff member `id` names, read with their schedule (and the
   * `alongside` reads) in one go, or `invalid_reference` (before anything else) when there is none.
   */
  const whenBookableNamed = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>>>(
    service: Service,
    id: string,
    start: number,
    now: number,
    exclude: Exclusions,
    next: (member: Staff, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
    alongside: T
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
    const policy = policyOf(service)
    return schedulesThen(
      [id],
      policy,
      { start, end: start + 1 },
      now,
      exclude,
      "check",
      ([schedule], [found, ...rest]): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
        const member = found[0]
        if (member === undefined) return Effect.fail(noStaffMember(id))
        const reasons = reasonsOn(service, member, policy, schedule!, start, now)
        return reasons.length === 0 ? next(member, rest as ReadResults<T>) : refuse(service, member, start, now, exclude, reasons)
      },
      [Read.list(StaffCollection, { where: [{ column: "id", op: "eq", value: id }] }), ...alongside] as const
    )
  }

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

  /** Each of `members`' reasons at `start`, their schedules read together. */
  const membersReasons = (service: Service, members: ReadonlyArray<Staff>, start: number, now: number, exclude: Exclusions = {}) => {
    const policy = policyOf(service)
    return Effect.map(
      schedules(members.map((m) => m.id), policy, { start, end: start + 1 }, now, exclude),
      (found) =>
        members.map((member, i) => ({
          staff_id: member.id,
          reasons: reasonsOn(service, member, policy, found[i]!, start, now)
        }))
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
    Effect.map(memberRecords(service, now), (records) =>
      rankMembers({ policy: service.round_robin_policy, members: service.staff_ids, records, weights: service.staff_weights }))

  /**
   * What a team service's starts in `range` are computed from: the bookable members'
   * schedules over `range`, and `within`, the team's starts of any part of it composed by the
   * assignment rule. Nothing when the team has no starts at all (a collective service with an
   * inactive member, a service nobody can be booked for).
   */
  const teamSchedules = (service: Service, members: ReadonlyArray<Staff>, range: Interval, now: number, exclude: Exclusions) =>
    Effect.gen(function*() {
      const policy = policyOf(service)
      const bookable = members.filter((m) => staffReasons(service, m).length === 0)
      const collective = service.assignment === "collective"
      if (bookable.length === 0 || (collective && bookable.length < service.staff_ids.length)) return undefined
      const found = yield* schedules(bookable.map((m) => m.id), policy, range, now, exclude, "list")
      const order = collective ? service.staff_ids : yield* ranking(service, now)
      return (part: Interval): Array<TeamSlot> => {
        const candidates = computeSlots({ policy, schedules: found, range: part, now })
        return collective ? collectiveSlots(candidates, order) : roundRobinSlots(candidates, order)
      }
    })

  const formatTeamSlots = (team: ReadonlyArray<TeamSlot>): Array<Slot> => {
    const format = makeSlotFormatter()
    return team.map((slot): Slot => ({ ...format(slot.start, slot.end, slot.staff_id, slot.remaining), staff_ids: slot.staff_ids }))
  }

  /**
   * A team service's starts in `range` (round robin or collective), as public slots: the
   * per-member slots composed by the assignment rule. `members`: those who may be booked
   * (active, assigned); a collective service with an inactive member has no slots.
   */
  const teamSlots = (service: Service, members: ReadonlyArray<Staff>, range: Interval, now: number, exclude: Exclusions = {}) =>
    Effect.map(teamSchedules(service, members, range, now, exclude), (within) => within === undefined ? [] : formatTeamSlots(within(range)))

  /** Up to `ALTERNATIVES` team slots nearest to `start` (itself excluded), found as for one staff member. */
  const teamAlternatives = (service: Service, members: ReadonlyArray<Staff>, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.map(
      teamSchedules(service, members, { start: start - ALTERNATIVES_RANGE, end: start + ALTERNATIVES_RANGE }, now, exclude),
      (within) => within === undefined ? [] : formatTeamSlots(nearestStarts(start, ALTERNATIVES, within))
    )

  /** The API's refusal for a team start with `reasons` (each naming its member). */
  const refuseTeam = (service: Service, members: ReadonlyArray<Staff>, start: number, now: number, exclude: Exclusions, reasons: ReadonlyArray<Reason>) =>
    Effect.gen(function*() {
      const fixed = reasons.filter((r) => FIXED_REASONS.has(r.code))
      if (fixed.length > 0 && (service.assignment === "collective" || fixed.length === reasons.length)) {
        return yield* new InvalidReference({
          detail: fixed.map((r) => r.detail).join("; "),
          errors: fixed.map((r) => ({ path: r.code === "service_inactive" ? "service_id" : "staff_id", message: r.detail }))
        })
      }
      const detail = reasons.map((r) => r.detail).join("; ")
      const slots = yield* teamAlternatives(service, members, start, now, exclude)
      return yield* reasons.every((r) => SLOT_CONFLICTS.has(r.code))
        ? new SlotUnavailable({ detail, reasons: [...reasons], alternatives: slots })
        : new OutsideAvailability({ detail, reasons: [...reasons], alternatives: slots })
    })

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
          : Effect.fail(new InvalidReference({
            detail: `service ${service.id} names staff that no longer exist: ${missing.join(", ")}`,
            errors: missing.map((id) => ({ path: "staff_id", message: `staff member ${id} of the service does not exist` }))
          }))
      }
    )

  const noStaff = (service: Service) =>
    new InvalidReference({
      detail: `service ${service.id} has no staff`,
      errors: [{ path: "staff_id", message: "is required: the service has no staff to choose from" }]
    })

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

  /**
   * Who a booking or hold of `service` at `start` goes to (docs/api.md §11), decided and
   * checked in one step inside the caller's transaction, so the pick and the write are atomic:
   * - collective: every member, each checked (`requested`, if given, must be one of them);
   * - a `requested` member: that one, checked;
   * - round robin: `prefer` when free (a rescheduled booking keeps its member), else the
   *   first free member in the policy's ranking;
   * - otherwise: the first free member in the service's order.
   * Nobody free: the refusal names every member's reasons.
   */
  const assign = (
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions = {},
    prefer?: string
  ): Effect.Effect<StaffChoice, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    assignThen(service, requested, start, now, exclude, prefer, Effect.succeed)

  /**
   * `next` of whom `assign` decides, in the same step, and of what the `alongside` reads read
   * (with the member's schedule where that is one read, else after the choice).
   */
  const assignThen = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>> = readonly []>(
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions,
    prefer: string | undefined,
    next: (choice: StaffChoice, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
    alongside: T = NONE as unknown as T
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> =>
    // The common case, chained rather than a generator: one named member, checked.
    service.assignment !== "collective" && requested !== undefined
      ? whenBookableNamed(
        service,
        requested,
        start,
        now,
        exclude,
        (member, read) => next({ member, staff_ids: [member.id], assigned_by: "chosen" }, read),
        alongside
      )
      : Effect.flatMap(
        assignAmong(service, requested, start, now, exclude, prefer),
        (choice) => alongside.length === 0 ? next(choice, NONE as unknown as ReadResults<T>) : Effect.flatMap(readMany(alongside), (read) => next(choice, read))
      )

  /** `assign` for a collective service or a member not named. */
  const assignAmong = (
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions,
    prefer: string | undefined
  ): Effect.Effect<StaffChoice, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    Effect.gen(function*() {
      if (service.assignment === "collective") {
        const members = yield* candidatesOf(service, requested)
        const verdict = teamVerdict("collective", yield* membersReasons(service, members, start, now, exclude))
        if (verdict.reasons.length > 0) return yield* refuseTeam(service, members, start, now, exclude, verdict.reasons)
        return { member: members[0]!, staff_ids: members.map((m) => m.id), assigned_by: "collective" } satisfies StaffChoice
      }
      const members = yield* candidatesOf(service, undefined)
      const perMember = yield* membersReasons(service, members, start, now, exclude)
      const verdict = teamVerdict("round_robin", perMember)
      const roundRobin = service.assignment === "round_robin"
      const picked = roundRobin
        ? (prefer !== undefined && verdict.free.includes(prefer) ? prefer : pickFree(yield* ranking(service, now), verdict.free))
        : verdict.free[0]
      if (picked === undefined) {
        if (!roundRobin) return yield* refuse(service, members[0]!, start, now, exclude, [...perMember[0]!.reasons])
        return yield* refuseTeam(service, members, start, now, exclude, verdict.reasons)
      }
      const member = members.find((m) => m.id === picked)!
      return { member, staff_ids: [member.id], assigned_by: roundRobin ? "round_robin" : "first_free" } satisfies StaffChoice
    })

  return {
    assign,
    assignThen,
    candidatesOf,
    noStaff,
    membersOf,
    schedules,
    explain,
    alternatives,
    ensureBookable,
    staffReasons,
    membersReasons,
    ranking,
    teamSlots,
    refuseTeam
  } as const
}

/** How far back the round-robin policies look at a service's bookings. */
const RECORDS_LOOKBACK = 90 * DAY
const FIXED_REASONS: ReadonlySet<Reason["code"]> = new Set(["service_inactive", "staff_inactive", "staff_not_assigned"])
