/**
 * Recurring bookings (docs/api.md §11): one request books every occurrence of an RRULE as an
 * ordinary booking with `series_id`, all checked by the booking checks and written in one
 * transaction. Built on the single-booking path of Bookings.ts (its checks, its insert), so a
 * rule of booking creation lives in one place. Who attends follows the service's assignment
 * through scheduling/assignment.ts, the same for every occurrence: a collective series books
 * every member each time; otherwise one member keeps the whole series.
 *
 * The rule is evaluated in wall-clock time of a zone: the expander (a port) steps floating
 * local date-times, and each is turned into an instant here with scheduling/zones.ts. A local
 * time inside a spring-forward gap starts at the first instant after the gap (02:30 → 03:00),
 * the same convention as availability windows; one inside a fall-back overlap takes the
 * earlier of its two instants.
 */
import { Effect, Either, Option, Schema } from "effect"
import { Bookings, newClientOnly } from "../bookings/Bookings.js"
import type { AssignedBy } from "../domain/assignment.js"
import { ACTIVE_STATUSES, type Booking, BookingCreate, publicBooking } from "../bookings/booking.js"
import { formatInstant, optional, toMillis } from "../domain/common.js"
import { InvalidReference, SeriesUnavailable, ValidationFailed } from "../domain/errors.js"
import { Id } from "../domain/ids.js"
import { MAX_SERIES_DAYS, MAX_SERIES_OCCURRENCES, type OnConflict, type ParsedRule, parseRule, RULE_SUBSET } from "./recurrence.js"
import { type BookingSeries, BookingSeriesCancel, type PublicBookingSeries, type StoredBookingSeries } from "./series.js"
import type { Service } from "../services/service.js"
import type { BlockedOccurrence } from "../domain/slot.js"
import type { Staff } from "../staff/member.js"
import { Events } from "../events/Events.js"
import { hidingOthers, type Visitor } from "../domain/visitor.js"
import { currentStamp, findOr404, listPage, PageParams, resourceAt, type Stamp } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { AvailabilityCollection } from "../availability/collections.js"
import { BookingsCollection } from "../bookings/collections.js"
import { BookingSeriesCollection } from "./collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type LocalDateTime, RecurrenceExpander } from "../ports/recurrence.js"
import { type Condition, Storage } from "../ports/storage.js"
import {
  blockedOccurrences,
  occurrenceReasons,
  pickLeastBlocked,
  tagReasons,
  visitorMemberRefusal,
  withOccurrence
} from "../scheduling/assignment.js"
import { policyOf } from "../scheduling/policy.js"
import type { StaffSchedule } from "../scheduling/types.js"
import { localToUtc } from "../scheduling/zones.js"
import { DAY, localDateTimeOf, MINUTE, occurrenceInstants } from "./occurrences.js"

const ruleProblem = (message: string) =>
  new ValidationFailed({
    detail: `recurrence.rule ${message}`,
    errors: [{ path: "recurrence.rule", message: `${message}; allowed: ${RULE_SUBSET}` }]
  })

export const BookingSeriesListParams = Schema.Struct({
  ...PageParams,
  client_id: optional(Id("client").annotations({ description: "only the series of this client" })),
  staff_id: optional(Id("staff").annotations({ description: "only the series whose `staff_id` (first attendee) is this member" })),
  service_id: optional(Id("service").annotations({ description: "only the series of this service" }))
}).annotations({ identifier: "BookingSeriesListParams" })
export type BookingSeriesListParams = typeof BookingSeriesListParams.Encoded

export class RecurringBookings extends Effect.Service<RecurringBookings>()("slotwise/RecurringBookings", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const bookingUseCases = yield* Bookings
    const expander = yield* Effect.serviceOption(RecurrenceExpander)
    const series = storage.collection(BookingSeriesCollection)
    const bookings = storage.collection(BookingsCollection)
    const rules = storage.collection(AvailabilityCollection)
    const staff = storage.collection(StaffCollection)
    const {
      answersFor,
      clientOf,
      countVisitorBookings,
      createLockKeys,
      insertBooking,
      keyedWrite,
      lockKeys,
      referencedService,
      referencedStaff,
      schedule,
      transition
    } = bookingUseCases.creation
    const decodeCreate = decodeInput(BookingCreate)
    const decodeCancel = decodeInput(BookingSeriesCancel)
    const decodeList = decodeInput(BookingSeriesListParams)
    const find = findOr404(series, "booking series")

    /** The zone a staff member's rule follows by default: their weekly hours' zone, else their own. */
    const zoneOf = (member: Staff) =>
      Effect.map(
        rules.list({
          where: [{ column: "staff_id", op: "eq", value: member.id }, { column: "type", op: "eq", value: "weekly" }],
          limit: 1
        }),
        (found) => found[0]?.time_zone ?? member.time_zone
      )

    const occurrencesOf = (id: string) => bookings.list({ where: [{ column: "series_id", op: "eq", value: id }] })

    /** The instants of the rule from `start`, or why the rule or start cannot make a series of this service. */
    const expand = (parsed: ParsedRule, service: Service, zone: string, start: number) =>
      Effect.gen(function*() {
        const allowed = Math.min(MAX_SERIES_OCCURRENCES, service.max_occurrences ?? 0)
        if (allowed === 0) {
          return yield* new ValidationFailed({
            detail: `service ${service.id} does not offer repeats (its max_occurrences is 0)`,
            errors: [{ path: "recurrence", message: "is not offered by this service: its max_occurrences is 0" }]
          })
        }
        if (Option.isNone(expander)) {
          return yield* new ValidationFailed({
            detail: "recurring bookings need a recurrence expander, which this instance was composed without",
            errors: [{ path: "recurrence", message: "is not available in this instance" }]
          })
        }
        const first = localDateTimeOf(zone, start)
        let until: LocalDateTime | undefined
        if (parsed.until !== undefined) {
          const u = parsed.until
          const untilMs = u.utc ? toMillis(`${u.date}T00:00:00Z`) + (u.minutes ?? 0) * MINUTE : localToUtc(zone, u.date, u.minutes ?? 1440)
          if (untilMs < start) return yield* ruleProblem("has UNTIL before start")
          if (untilMs > start + MAX_SERIES_DAYS * DAY) return yield* ruleProblem("has UNTIL more than one year after start")
          // A date alone includes its whole day; a UTC instant is read on the zone's wall clock.
          until = u.utc ? localDateTimeOf(zone, untilMs) : { date: u.date, minutes: u.minutes ?? 1440 - 1 / 60 }
        }
        const locals = expander.value.expand({ rule: parsed.expandable, start: first, until, limit: allowed + 1 })
        const head = locals[0]
        if (head === undefined || head.date !== first.date || Math.abs(head.minutes - first.minutes) > 1e-6) {
          return yield* new ValidationFailed({
            detail: `start ${formatInstant(start)} (${first.date} in ${zone}) is not an occurrence of the rule`,
            errors: [{ path: "start", message: `must be the rule's first occurrence: ${first.date} in ${zone} does not match it` }]
          })
        }
        if (locals.length > allowed) {
          return yield* new ValidationFailed({
            detail: `the rule makes more than ${allowed} occurrences`,
            errors: [{
              path: "recurrence.rule",
              message: allowed < MAX_SERIES_OCCURRENCES
                ? `makes more than ${allowed} occurrences, the most service ${service.id} allows (max_occurrences)`
                : `makes more than ${MAX_SERIES_OCCURRENCES} occurrences; allowed: ${RULE_SUBSET}`
            }]
          })
        }
        return occurrenceInstants(zone, locals)
      })

    /** `invalid_reference` when the service or one of `members` cannot be booked at all, whatever the time. */
    const refuseFixed = (service: Service, members: ReadonlyArray<Staff>) => {
      const fixed = [...new Map(members.flatMap((m) => schedule.staffReasons(service, m)).map((r) => [r.detail, r])).values()]
      return fixed.length === 0 ? Effect.void : Effect.fail(
        new InvalidReference({
          detail: fixed.map((r) => r.detail).join("; "),
          errors: fixed.map((r) => ({ path: r.code === "service_inactive" ? "service_id" : "staff_id", message: r.detail }))
        })
      )
    }

    /**
     * Who attends every occurrence (docs/api.md §11), with their schedules over the series,
     * read inside the caller's transaction so the pick and the writes are one step:
     * - collective: every member of the service (`requested`, if given, must be one of them);
     * - a `requested` member: that one, `chosen`;
     * - otherwise one member for the whole series: in the order of the service's round-robin
     *   ranking (`round_robin`) or of its `staff_ids` (`first_free`), the first free at every
     *   occurrence, else the first with the fewest blocked occurrences.
     */
    const attendeesOf = (service: Service, requested: string | undefined, starts: ReadonlyArray<number>, now: number) =>
      Effect.gen(function*() {
        const policy = policyOf(service)
        const range = { start: Math.min(...starts), end: Math.max(...starts) + 1 }
        const schedulesOf = (members: ReadonlyArray<Staff>) => schedule.schedules(members.map((m) => m.id), policy, range, now)
        if (service.assignment === "collective") {
          const members = yield* schedule.candidatesOf(service, requested)
          yield* refuseFixed(service, members)
          return { members, assignedBy: "collective" as AssignedBy, schedules: yield* schedulesOf(members) }
        }
        if (requested !== undefined) {
          const member = yield* referencedStaff(requested)
          yield* refuseFixed(service, [member])
          return { members: [member], assignedBy: "chosen" as AssignedBy, schedules: yield* schedulesOf([member]) }
        }
        const members = yield* schedule.candidatesOf(service, undefined)
        const bookable = members.filter((m) => schedule.staffReasons(service, m).length === 0)
        if (bookable.length === 0) {
          yield* refuseFixed(service, members)
          return yield* schedule.noStaff(service)
        }
        const found = yield* schedulesOf(bookable)
        const blocked = new Map(bookable.map((m, i) => [m.id, blockedOccurrences(policy, [found[i]!], starts, now)]))
        const roundRobin = service.assignment === "round_robin"
        const order = roundRobin ? yield* schedule.ranking(service, now) : service.staff_ids
        const picked = pickLeastBlocked(order, blocked)!
        const index = bookable.findIndex((m) => m.id === picked)
        return {
          members: [bookable[index]!],
          assignedBy: (roundRobin ? "round_robin" : "first_free") as AssignedBy,
          schedules: [found[index]!]
        }
      })

    /** The zone for a series without `time_zone`: the given staff member's, else the service's first one's. */
    const defaultZone = (service: Service, staffId: string | undefined) =>
      Effect.gen(function*() {
        const id = staffId ?? service.staff_ids[0]
        if (id === undefined) return "UTC"
        const member = Option.getOrUndefined(yield* staff.get(id))
        return member === undefined ? "UTC" : yield* zoneOf(member)
      })

    const withOccurrences = (doc: StoredBookingSeries, occurrences: ReadonlyArray<Booking>): BookingSeries => ({
      ...doc,
      occurrences
    })

    /**
     * Books a series: `start` and every later occurrence of `recurrence.rule`, checked one by
     * one (each seeing the occurrences already written) inside one transaction. A `visitor`'s
     * occurrences count against its limits of the day, each as one booking.
     */
    const create = (input: typeof BookingCreate.Encoded, visitor?: Visitor) =>
      Effect.flatMap(decodeCreate(input), (fields) =>
        keyedWrite(Effect.gen(function*() {
          const recurrence = fields.recurrence
          if (recurrence === undefined) {
            return yield* new ValidationFailed({
              detail: "a series needs a recurrence",
              errors: [{ path: "recurrence", message: "is required to book a series" }]
            })
          }
          const onConflict: OnConflict = fields.on_conflict ?? "reject"
          const now: Stamp = yield* currentStamp
          const start = toMillis(fields.start)
          const parsed = yield* Either.mapLeft(parseRule(recurrence.rule), ruleProblem)
          const service = yield* referencedService(fields.service_id)
          yield* lockKeys(createLockKeys(service, fields.staff_id, visitor))
          const named = visitor === undefined ? undefined : visitorMemberRefusal(service, fields.staff_id)
          if (named !== undefined) return yield* named
          const answers = yield* answersFor(service, fields.answers ?? [])
          const zone = recurrence.time_zone ?? (yield* defaultZone(service, fields.staff_id))
          const starts = yield* expand(parsed, service, zone, start)
          const attendees = yield* attendeesOf(service, fields.staff_id, starts, now.ms)
          const member = attendees.members[0]!
          const staffIds = attendees.members.map((m) => m.id)
          const client = yield* clientOf(fields)
          const { created_at, id, updated_at } = resourceAt("series", now)
          const booked: Array<Booking> = []
          const blocked: Array<BlockedOccurrence> = []
          const policy = policyOf(service)
          let current: ReadonlyArray<StaffSchedule> = attendees.schedules
          for (const at of starts) {
            const perMember = occurrenceReasons(policy, current, at, now.ms)
            // A member the request did not name is named on each reason, as for a single team booking.
            const reasons = attendees.assignedBy === "chosen" ? perMember.flatMap((m) => m.reasons) : tagReasons(perMember)
            if (reasons.length > 0) {
              blocked.push({ start: formatInstant(at), reasons })
              continue
            }
            const booking = yield* insertBooking({
              fields,
              service,
              member,
              staffIds,
              assignedBy: attendees.assignedBy,
              client,
              answers,
              now,
              start: at,
              seriesId: id
            })
            booked.push(booking)
            // The occurrences written so far occupy the attendees too: a series never overlaps itself.
            current = withOccurrence(policy, current, at, booking.id)
          }
          if (blocked.length > 0 && (onConflict === "reject" || booked.length === 0)) {
            return yield* new SeriesUnavailable({
              detail: `${blocked.length} of ${starts.length} occurrences cannot be booked (first: ${blocked[0]!.start}: ` +
                `${blocked[0]!.reasons.map((r) => r.detail).join("; ")})` +
                (onConflict === "skip" ? "; none could" : "; nothing was booked"),
              occurrences: blocked
            })
          }
          const doc: StoredBookingSeries = {
            id,
            object: "booking_series",
            service_id: service.id,
            staff_id: member.id,
            staff_ids: staffIds,
            assigned_by: attendees.assignedBy,
            client_id: client.id,
            rule: recurrence.rule,
            time_zone: zone,
            on_conflict: onConflict,
            skipped: blocked,
            metadata: fields.metadata ?? {},
            created_at,
            updated_at
          }
          if (visitor !== undefined) yield* countVisitorBookings(visitor, booked, now)
          yield* series.insert(doc)
          return withOccurrences(doc, booked)
        })))

    /**
     * A visitor's series (publishable key): a new client only, answered with the public view,
     * counted against the visitor's limits; a refused occurrence names nobody else's booking.
     */
    const createForVisitor = (input: typeof BookingCreate.Encoded, visitor: Visitor) =>
      newClientOnly(input, Effect.map(hidingOthers(create(input, visitor)), publicSeries))

    const get = (id: string) =>
      Effect.gen(function*() {
        const doc = yield* find(id)
        return withOccurrences(doc, yield* occurrencesOf(doc.id))
      })

    /**
     * The series in creation order, each with its occurrences (by start), which one read finds
     * for the whole page. `staff_id` matches the series' `staff_id`, as it does for bookings.
     */
    const list = (params: BookingSeriesListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit, ...filters } = yield* decodeList(params)
        const where: Array<Condition> = []
        for (const column of ["client_id", "staff_id", "service_id"] as const) {
          const value = filters[column]
          if (value !== undefined) where.push({ column, op: "eq", value })
        }
        const page = yield* listPage(series, { where, limit, cursor, filters })
        const found = page.data.length === 0
          ? []
          : yield* bookings.list({ where: [{ column: "series_id", op: "in", value: page.data.map((doc) => doc.id) }] })
        const bySeries = new Map<string, Array<Booking>>()
        for (const booking of found) {
          const into = bySeries.get(booking.series_id!)
          if (into === undefined) bySeries.set(booking.series_id!, [booking])
          else into.push(booking)
        }
        return { ...page, data: page.data.map((doc) => withOccurrences(doc, bySeries.get(doc.id) ?? [])) }
      })

    /**
     * Cancels every pending or confirmed occurrence (from `from` on, when given), each with its
     * own `booking.cancelled` event, in one transaction; finished and cancelled ones stay.
     */
    const cancel = (id: string, input: typeof BookingSeriesCancel.Encoded = {}) =>
      Effect.flatMap(decodeCancel(input), ({ from, reason }) =>
        events.mutate(Effect.gen(function*() {
          const doc = yield* find(id)
          const fromMs = from === undefined ? Number.NEGATIVE_INFINITY : toMillis(from)
          const occurrences = yield* occurrencesOf(doc.id)
          const after: Array<Booking> = []
          for (const booking of occurrences) {
            const cancellable = ACTIVE_STATUSES.includes(booking.status) && toMillis(booking.start) >= fromMs
            after.push(cancellable ? yield* transition(booking.id, "cancel", { cancellation_reason: reason ?? null }) : booking)
          }
          return withOccurrences(doc, after)
        })))

    /**
     * Create from a `POST /v1/bookings` body: a series when it has `recurrence`, else one
     * booking. `visitor`: a publishable key's caller, answered with public views.
     */
    const createFromRequest = (input: typeof BookingCreate.Encoded, visitor?: Visitor) =>
      typeof input === "object" && input !== null && input.recurrence !== undefined
        ? visitor !== undefined ? createForVisitor(input, visitor) : create(input)
        : visitor !== undefined
        ? bookingUseCases.createForVisitor(input, visitor)
        : bookingUseCases.create(input)

    return { create, createForVisitor, createFromRequest, get, list, cancel } as const
  })
}) {}

export const publicSeries = (s: BookingSeries): PublicBookingSeries => ({
  id: s.id,
  object: s.object,
  service_id: s.service_id,
  staff_id: s.staff_id,
  staff_ids: s.staff_ids,
  rule: s.rule,
  time_zone: s.time_zone,
  skipped: s.skipped,
  occurrences: s.occurrences.map(publicBooking),
  created_at: s.created_at,
  updated_at: s.updated_at
})
