/**
 * The storage contract: one suite, run against every adapter (memory.test.ts,
 * sqlite.test.ts). The in-memory adapter is the reference; every assertion here is what it
 * does, so an adapter that passes behaves the same to the core.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Deferred, Effect, Either, Layer, Option, TestClock } from "effect"
import { RecurrenceExpanderLive } from "../../adapters/ical/recurrence.js"
import { Availability } from "../../src/availability/Availability.js"
import { Bookings } from "../../src/bookings/Bookings.js"
import { Clients } from "../../src/clients/Clients.js"
import { RecurringBookings } from "../../src/recurring/RecurringBookings.js"
import { Services } from "../../src/services/Services.js"
import { Staff as StaffUseCases } from "../../src/staff/Staff.js"
import { TestClockAt } from "../../src/testing/testClock.js"
import { Accounts, HANDLE_OWNERS_TENANT, HandleOwnersCollection } from "../../src/accounts/Accounts.js"
import { ApiKeys } from "../../src/keys/ApiKeys.js"
import { AccountsCollection } from "../../src/auth/collections.js"
import type { Account } from "../../src/accounts/account.js"
import { CALENDAR_FEED_TOKENS_TENANT, CalendarFeeds, CalendarFeedTokensCollection } from "../../src/calendarFeeds/CalendarFeeds.js"
import type { Booking } from "../../src/bookings/booking.js"
import type { Client } from "../../src/clients/client.js"
import { formatInstant } from "../../src/domain/common.js"
import type { StoredBookingSeries } from "../../src/recurring/series.js"
import type { Staff } from "../../src/staff/member.js"
import { CalendarRenderer } from "../../src/ports/calendar.js"
import { DOMAIN_OWNERS_TENANT, DomainOwnersCollection, Domains } from "../../src/domains/Domains.js"
import type { Service } from "../../src/services/service.js"
import { SYSTEM_TENANT } from "../../src/auth/collections.js"
import { MANAGE_LINK_SECRET_ID } from "../../src/manage/manageLink.js"
import { CoreLive } from "../../src/layers.js"
import { Calendars } from "../../src/calendars/Calendars.js"
import { BusyRangesCollection, CalendarsCollection } from "../../src/calendars/collections.js"
import { busyChunks } from "../../src/calendars/calendar.js"
import { Staff as StaffService } from "../../src/staff/Staff.js"
import { Manage } from "../../src/manage/Manage.js"
import { Events } from "../../src/events/Events.js"
import { type DueReminder, dueReminderId } from "../../src/reminders/reminder.js"
import {
  copyAccountReminders,
  makeReminderFiring,
  ReminderJobsCollection,
  ReminderSettingsCollection,
  tenantKeyOf
} from "../../src/reminders/Reminders.js"
import { WebhookPolicy } from "../../src/webhooks/policy.js"
import type { Event } from "../../src/events/catalogue.js"
import { sampleBooking, sampleService } from "../../src/events/samples.js"
import {
  BookingsCollection,
  BookingSeriesCollection,
  ClientsCollection,
  DeploymentSecretsCollection,
  MemberOccupancyCollection,
  ServicesCollection,
  StaffCollection
} from "../../src/ports/collections.js"
import { makeMemberOccupancy } from "../../src/scheduling/memberOccupancy.js"
import {
  type CollectionSpec,
  type ColumnsQuery,
  type ColumnValues,
  currentIdempotentWrites,
  type IdempotentWrites,
  type IndexValue,
  keyedTransactionOf,
  type ListQuery,
  Read
} from "../../src/ports/storage.js"
import { DnsResolver } from "../../src/ports/dns.js"
import { Storage } from "../../src/ports/storage.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"

export interface Thing {
  readonly id: string
  readonly kind: string
  readonly rank: number
  readonly tag: string | null
  readonly note?: string
}

/** A collection the core does not know: SQLite prepares its table on first use. */
export const Things: CollectionSpec<Thing> = {
  name: "contract_things",
  indexes: {
    kind: { type: "text", get: (t) => t.kind },
    rank: { type: "integer", get: (t) => t.rank },
    tag: { type: "text", get: (t) => t.tag }
  },
  order: ["rank"]
}

/** Two order columns, the first nullable: keyset cursors that hold nulls. */
export const Pairs: CollectionSpec<Thing> = {
  name: "contract_pairs",
  indexes: {
    tag: { type: "text", get: (t) => t.tag },
    rank: { type: "integer", get: (t) => t.rank }
  },
  order: ["tag", "rank"]
}

export const tenantA: TenantId = { account_id: "acct_a", environment: "sandbox" }
export const tenantAProd: TenantId = { account_id: "acct_a", environment: "production" }
export const tenantB: TenantId = { account_id: "acct_b", environment: "sandbox" }

export const as = (tenant: TenantId) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Tenant, tenant)

export const thing = (id: string, rank: number, kind = "plain", tag: string | null = null): Thing => ({
  id,
  kind,
  rank,
  tag
})

/**
 * Series stored before a series kept its attendees (no `staff_ids`, `assigned_by`), with the
 * occurrences a migration reads them from, per tenant; `after` is what the migration must make
 * of each series. Tenant B's series shares an id with one of tenant A's: only its own
 * occurrences answer for it.
 */
export const seriesBeforeAttendees = () => {
  const base = sampleBooking(Date.UTC(2027, 2, 1))
  const occurrence = (id: string, series_id: string, start: string, staff: ReadonlyArray<string>, assigned_by?: string) => {
    const { assigned_by: _, staff_ids: __, ...rest } = base
    return {
      ...rest,
      id,
      series_id,
      staff_id: staff[0]!,
      // Occurrences made before bookings kept their attendees lack both fields too.
      ...(assigned_by === undefined ? {} : { staff_ids: staff, assigned_by }),
      start,
      end: start.replace("T09:00", "T09:45")
    } as unknown as Booking
  }
  const series = (id: string, staff_id: string, kept: Record<string, unknown> = {}) =>
    ({
      id,
      object: "booking_series",
      service_id: base.service_id,
      staff_id,
      client_id: base.client_id,
      rule: "FREQ=WEEKLY;COUNT=2",
      time_zone: "UTC",
      on_conflict: "reject",
      skipped: [],
      metadata: {},
      created_at: base.created_at,
      updated_at: base.updated_at,
      ...kept
    }) as unknown as StoredBookingSeries
  return {
    [tenantA.account_id]: {
      tenant: tenantA,
      series: [
        series("ser_team", "stf_a"),
        series("ser_solo", "stf_b"),
        series("ser_moved", "stf_a"),
        series("ser_kept", "stf_d", { staff_ids: ["stf_d"], assigned_by: "first_free" }),
        series("ser_bare", "stf_e")
      ],
      occurrences: [
        // Stored later-first: the earliest start answers, whatever the order written.
        occurrence("bkg_t2", "ser_team", "2027-04-05T09:00:00Z", ["stf_a", "stf_b", "stf_c"], "collective"),
        occurrence("bkg_t1", "ser_team", "2027-03-29T09:00:00Z", ["stf_a", "stf_b"], "collective"),
        occurrence("bkg_s1", "ser_solo", "2027-03-30T09:00:00Z", ["stf_b"]),
        // Rescheduled to another member: the series' own member stays its attendee.
        occurrence("bkg_m1", "ser_moved", "2027-03-31T09:00:00Z", ["stf_c"], "round_robin"),
        occurrence("bkg_k1", "ser_kept", "2027-04-01T09:00:00Z", ["stf_x"], "round_robin")
      ],
      after: {
        ser_team: { staff_ids: ["stf_a", "stf_b"], assigned_by: "collective" },
        ser_solo: { staff_ids: ["stf_b"], assigned_by: "chosen" },
        ser_moved: { staff_ids: ["stf_a"], assigned_by: "round_robin" },
        ser_kept: { staff_ids: ["stf_d"], assigned_by: "first_free" },
        ser_bare: { staff_ids: ["stf_e"], assigned_by: "chosen" }
      } as Record<string, unknown>
    },
    [tenantB.account_id]: {
      tenant: tenantB,
      series: [series("ser_team", "stf_f")],
      occurrences: [occurrence("bkg_t1", "ser_team", "2027-03-29T09:00:00Z", ["stf_f"], "round_robin")],
      after: { ser_team: { staff_ids: ["stf_f"], assigned_by: "round_robin" } } as Record<string, unknown>
    }
  }
}

/** Writes the series and occurrences of `seriesBeforeAttendees`. */
export const storeSeriesBeforeAttendees = (storage: Context.Tag.Service<Storage>) =>
  Effect.forEach(Object.values(seriesBeforeAttendees()), ({ occurrences, series, tenant }) =>
    Effect.gen(function*() {
      for (const b of occurrences) yield* storage.collection(BookingsCollection).insert(b)
      for (const s of series) yield* storage.collection(BookingSeriesCollection).insert(s)
    }).pipe(as(tenant)), { discard: true })

/** Checks every series of `seriesBeforeAttendees` reads back with the attendees it must have got. */
export const expectSeriesAttendees = (storage: Context.Tag.Service<Storage>) =>
  Effect.forEach(Object.values(seriesBeforeAttendees()), ({ after, tenant }) =>
    Effect.gen(function*() {
      const stored = yield* storage.collection(BookingSeriesCollection).list({})
      expect(Object.fromEntries(stored.map((s) => [s.id, { staff_ids: s.staff_ids, assigned_by: s.assigned_by }]))).toEqual(after)
    }).pipe(as(tenant)), { discard: true })

let eventCounter = 0
export const event = (type = "booking.created", object: unknown = {}): Event => ({
  id: `evt_${(++eventCounter).toString().padStart(8, "0")}_${Math.random().toString(36).slice(2, 8)}`,
  object: "event",
  type,
  created_at: "2026-03-29T08:30:00Z",
  data: { object }
})

const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id)

const storageOf = <A extends { readonly id: string }>(spec: CollectionSpec<A>) => Effect.map(Storage, (s) => s.collection(spec))

/** Every page of `list` from the start, `limit` rows at a time, running `between` after each. */
const paginate = (
  query: (after: ReadonlyArray<IndexValue> | undefined) => Effect.Effect<ReadonlyArray<Thing>, unknown, Tenant>,
  keyOf: (row: Thing) => ReadonlyArray<IndexValue>,
  between: (page: number) => Effect.Effect<void, unknown, Tenant> = () => Effect.void
) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    let after: ReadonlyArray<IndexValue> | undefined = undefined
    for (let page = 0; page < 100; page++) {
      const rows: ReadonlyArray<Thing> = yield* query(after)
      if (rows.length === 0) return seen
      seen.push(...ids(rows))
      after = keyOf(rows[rows.length - 1]!)
      yield* between(page)
    }
    return yield* Effect.dieMessage("pagination did not end")
  })

export const storageContract = (name: string, makeLayer: () => Layer.Layer<Storage, unknown>) => {
  /** Runs a test body on a fresh store. */
  const test = <A, E>(title: string, body: Effect.Effect<A, E, Storage>, timeout?: number) =>
    it.live(title, () => Effect.provide(body, makeLayer()), timeout)

  describe(`storage contract: ${name}`, () => {
    describe("documents", () => {
      test(
        "insert, get, update, remove",
        Effect.gen(function*() {
          const things = (yield* Storage).collection(Things)
          const t1 = { ...thing("t1", 5, "a", "x"), note: "first" }
          yield* things.insert(t1)
          expect(yield* things.get("t1")).toEqual(Option.some(t1))
          expect(yield* things.get("missing")).toEqual(Option.none())

          const t1b = { ...t1, rank: 7, note: "second" }
          yield* things.update(t1b)
          expect(yield* things.get("t1")).toEqual(Option.some(t1b))
          expect(yield* things.listIndexes({})).toEqual([{ id: "t1", kind: "a", rank: 7, tag: "x" }])

          yield* things.remove("t1")
          expect(yield* things.get("t1")).toEqual(Option.none())
          expect(yield* things.list({})).toEqual([])
          // Removing what is not there is not an error.
          yield* things.remove("t1")
          // Update replaces by id, creating the document if it is absent.
          yield* things.update(thing("t2", 1))
          expect(yield* things.get("t2")).toEqual(Option.some(thing("t2", 1)))
        }).pipe(as(tenantA))
      )

      test(
        "services keep their questions and bookings their answers of every kind, as given",
        Effect.gen(function*() {
          const storage = yield* Storage
          const now = Date.parse("2026-03-29T08:30:00Z")
          const service: Service = {
            ...sampleService(now),
            questions: [
              { id: "topic", label: "Topic", type: "text", required: true, help: "A few words" },
              { id: "extras", label: "Extras", type: "multi_select", required: false, options: ["Wash", "Beard"] }
            ]
          }
          const booking: Booking = {
            ...sampleBooking(now),
            answers: [
              { question_id: "topic", label: "Topic", type: "text", value: "Trim, \"short\" – ü" },
              { question_id: "guests", label: "Guests", type: "number", value: 2.5 },
              { question_id: "terms", label: "Terms", type: "checkbox", value: false },
              { question_id: "extras", label: "Extras", type: "multi_select", value: ["Beard", "Wash"] }
            ]
          }
          yield* storage.collection(ServicesCollection).insert(service)
          yield* storage.collection(BookingsCollection).insert(booking)
          expect(yield* storage.collection(ServicesCollection).get(service.id)).toEqual(Option.some(service))
          expect(yield* storage.collection(BookingsCollection).get(booking.id)).toEqual(Option.some(booking))
          const changed = { ...booking, answers: booking.answers.slice(1) }
          yield* storage.collection(BookingsCollection).update(changed)
          expect(yield* storage.collection(BookingsCollection).list({})).toEqual([changed])
        }).pipe(as(tenantA))
      )

      test(
        "a duplicate insert fails with StorageFailure and keeps the first document",
        Effect.gen(function*() {
          const things = (yield* Storage).collection(Things)
          yield* things.insert(thing("t1", 1, "first"))
          const error = yield* Effect.flip(things.insert(thing("t1", 2, "second")))
          expect(error._tag).toBe("StorageFailure")
          expect(yield* things.get("t1")).toEqual(Option.some(thing("t1", 1, "first")))
        }).pipe(as(tenantA))
      )

      test(
        "tenants and environments are isolated",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          const tenants = [tenantA, tenantAProd, tenantB] as const
          for (const [i, tenant] of tenants.entries()) {
            yield* things.insert(thing("same", i, `kind_${i}`)).pipe(as(tenant))
          }
          yield* things.insert(thing("only_b", 9)).pipe(as(tenantB))
          for (const [i, tenant] of tenants.entries()) {
            const scoped = as(tenant)
            expect(yield* scoped(things.get("same"))).toEqual(Option.some(thing("same", i, `kind_${i}`)))
            const listed = yield* scoped(things.list({}))
            expect(ids(listed)).toEqual(tenant === tenantB ? ["same", "only_b"] : ["same"])
            expect(yield* scoped(things.listIndexes({ where: [{ column: "id", op: "eq", value: "same" }] })))
              .toEqual([{ id: "same", kind: `kind_${i}`, rank: i, tag: null }])
          }
          expect(yield* things.get("only_b").pipe(as(tenantA))).toEqual(Option.none())

          yield* things.remove("same").pipe(as(tenantA))
          yield* things.update(thing("same", 100, "changed")).pipe(as(tenantAProd))
          expect(yield* things.get("same").pipe(as(tenantA))).toEqual(Option.none())
          expect(yield* things.get("same").pipe(as(tenantAProd))).toEqual(Option.some(thing("same", 100, "changed")))
          expect(yield* things.get("same").pipe(as(tenantB))).toEqual(Option.some(thing("same", 2, "kind_2")))
        })
      )

      test(
        "listAcrossTenants returns every tenant's rows with their tenant",
        Effect.gen(function*() {
          const things = (yield* Storage).collection(Things)
          yield* things.insert(thing("a1", 1, "k")).pipe(as(tenantA))
          yield* things.insert(thing("p1", 2, "k")).pipe(as(tenantAProd))
          yield* things.insert(thing("b1", 3, "k")).pipe(as(tenantB))
          yield* things.insert(thing("b2", 4, "other")).pipe(as(tenantB))
          const rows = yield* things.listAcrossTenants({ where: [{ column: "kind", op: "eq", value: "k" }] })
          expect(rows).toEqual([
            { tenant: tenantA, doc: thing("a1", 1, "k") },
            { tenant: tenantAProd, doc: thing("p1", 2, "k") },
            { tenant: tenantB, doc: thing("b1", 3, "k") }
          ])
          const after = yield* things.listAcrossTenants({ after: [2, "p1"], limit: 2 })
          expect(after.map((r) => r.doc.id)).toEqual(["b1", "b2"])
        })
      )
    })

    describe("lists", () => {
      const fixture = [
        thing("t1", 1, "a", "x"),
        thing("t2", 2, "b", null),
        thing("t3", 3, "a", "y"),
        thing("t4", 4, "c", "x"),
        thing("t5", 5, "b", null)
      ]
      const seed = Effect.flatMap(Storage, (s) => Effect.forEach(fixture, (t) => s.collection(Things).insert(t)))
      const listed = (query: ListQuery) => Effect.flatMap(Storage, (s) => Effect.map(s.collection(Things).list(query), ids))

      test(
        "every condition op, on index columns and on id, with the reference null semantics",
        Effect.gen(function*() {
          yield* seed
          const where = (...conditions: NonNullable<ListQuery["where"]>) => listed({ where: conditions })
          expect(yield* where({ column: "kind", op: "eq", value: "a" })).toEqual(["t1", "t3"])
          expect(yield* where({ column: "kind", op: "ne", value: "a" })).toEqual(["t2", "t4", "t5"])
          expect(yield* where({ column: "rank", op: "lt", value: 3 })).toEqual(["t1", "t2"])
          expect(yield* where({ column: "rank", op: "lte", value: 3 })).toEqual(["t1", "t2", "t3"])
          expect(yield* where({ column: "rank", op: "gt", value: 3 })).toEqual(["t4", "t5"])
          expect(yield* where({ column: "rank", op: "gte", value: 3 })).toEqual(["t3", "t4", "t5"])
          expect(yield* where({ column: "kind", op: "in", value: ["b", "c"] })).toEqual(["t2", "t4", "t5"])
          expect(yield* where({ column: "kind", op: "in", value: [] })).toEqual([])
          expect(yield* where({ column: "id", op: "eq", value: "t4" })).toEqual(["t4"])
          expect(yield* where({ column: "id", op: "in", value: ["t5", "t1", "nope"] })).toEqual(["t1", "t5"])
          expect(yield* where({ column: "id", op: "gt", value: "t3" })).toEqual(["t4", "t5"])
          // Nulls: eq/ne/in treat null as a value; the order comparisons never match it.
          expect(yield* where({ column: "tag", op: "eq", value: null })).toEqual(["t2", "t5"])
          expect(yield* where({ column: "tag", op: "ne", value: null })).toEqual(["t1", "t3", "t4"])
          expect(yield* where({ column: "tag", op: "ne", value: "x" })).toEqual(["t2", "t3", "t5"])
          expect(yield* where({ column: "tag", op: "in", value: ["y", null] })).toEqual(["t2", "t3", "t5"])
          expect(yield* where({ column: "tag", op: "in", value: [null] })).toEqual(["t2", "t5"])
          expect(yield* where({ column: "tag", op: "lt", value: "z" })).toEqual(["t1", "t3", "t4"])
          expect(yield* where({ column: "rank", op: "gt", value: null })).toEqual([])
          // Conditions combine with AND; limit caps the rows.
          expect(
            yield* where({ column: "kind", op: "ne", value: "c" }, { column: "rank", op: "gte", value: 2 })
          ).toEqual(["t2", "t3", "t5"])
          expect(yield* listed({ where: [{ column: "rank", op: "gt", value: 1 }], limit: 2 })).toEqual(["t2", "t3"])
          expect(yield* listed({ limit: 0 })).toEqual([])
        }).pipe(as(tenantA))
      )

      test(
        "orders by spec.order, then id",
        Effect.gen(function*() {
          const things = (yield* Storage).collection(Things)
          for (const t of [thing("c", 2), thing("a", 2), thing("z", 1), thing("b", 3), thing("y", 1)]) {
            yield* things.insert(t)
          }
          expect(ids(yield* things.list({}))).toEqual(["y", "z", "a", "c", "b"])
          expect(ids(yield* things.listIndexes({}))).toEqual(["y", "z", "a", "c", "b"])
          expect(ids(yield* things.list({ after: [1, "z"] }))).toEqual(["a", "c", "b"])
          expect(ids(yield* things.list({ after: [2, "a"], limit: 1 }))).toEqual(["c"])
        }).pipe(as(tenantA))
      )

      test(
        "listIndexes returns the id and every index value, integers as numbers",
        Effect.gen(function*() {
          yield* seed
          const rows = yield* Effect.flatMap(
            Storage,
            (s) => s.collection(Things).listIndexes({ where: [{ column: "kind", op: "in", value: ["a", "b"] }] })
          )
          expect(rows).toEqual([
            { id: "t1", kind: "a", rank: 1, tag: "x" },
            { id: "t2", kind: "b", rank: 2, tag: null },
            { id: "t3", kind: "a", rank: 3, tag: "y" },
            { id: "t5", kind: "b", rank: 5, tag: null }
          ])
          expect(typeof rows[0]!.rank).toBe("number")
        }).pipe(as(tenantA))
      )

      test(
        "listColumns gives each group's matching rows as aligned columns, in this tenant only",
        Effect.gen(function*() {
          yield* seed
          const storage = yield* Storage
          const things = storage.collection(Things)
          yield* things.insert(thing("other", 9, "a", "x")).pipe(as(tenantB))
          /** A group's rows, put back together and sorted: their order is not part of the contract. */
          const rowsOf = (groups: ReadonlyMap<IndexValue, ColumnValues>, key: IndexValue) => {
            const [first = [], ...rest] = groups.get(key) ?? []
            return first.map((value, i) => [value, ...rest.map((column) => column[i])]).sort((a, b) => String(a).localeCompare(String(b)))
          }
          const byKind = yield* things.listColumns({
            where: [{ column: "rank", op: "gt", value: 1 }],
            groupBy: "kind",
            columns: ["rank", "tag", "id"]
          })
          expect([...byKind.keys()].sort()).toEqual(["a", "b", "c"])
          expect(rowsOf(byKind, "a")).toEqual([[3, "y", "t3"]])
          expect(rowsOf(byKind, "b")).toEqual([[2, null, "t2"], [5, null, "t5"]])
          expect(rowsOf(byKind, "c")).toEqual([[4, "x", "t4"]])
          expect(typeof byKind.get("a")![0]![0]).toBe("number")

          // A nullable column groups its nulls together.
          const byTag = yield* things.listColumns({ groupBy: "tag", columns: ["id"] })
          expect(byTag.size).toBe(3)
          expect(rowsOf(byTag, null)).toEqual([["t2"], ["t5"]])
          expect(rowsOf(byTag, "x")).toEqual([["t1"], ["t4"]])
          expect(yield* things.listColumns({ where: [{ column: "kind", op: "eq", value: "none" }], groupBy: "kind", columns: ["id"] }))
            .toEqual(new Map())

          // Inside a transaction it sees the transaction's own writes.
          yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("t6", 6, "c", "z"))
            yield* things.remove("t4")
            expect(rowsOf(yield* things.listColumns({ groupBy: "kind", columns: ["id"] }), "c")).toEqual([["t6"]])
          }))
        }).pipe(as(tenantA))
      )

      test(
        "readMany answers each read as its collection method does, in one go, in this tenant only",
        Effect.gen(function*() {
          yield* seed
          const storage = yield* Storage
          const things = storage.collection(Things)
          const pairs = storage.collection(Pairs)
          yield* things.insert(thing("other", 9, "a", "x")).pipe(as(tenantB))
          for (const r of [thing("p1", 2, "k", null), thing("p2", 1, "k", "it's \"quoted\""), thing("p3", 1, "k", null)])
            yield* pairs.insert(r)
          // Values of every kind across the reads (lists, nulls, quotes, an empty list), so a
          // composed statement numbers each read's parameters on from the last one's.
          const listQuery: ListQuery = { where: [{ column: "kind", op: "in", value: ["a", "b"] }], limit: 3 }
          const indexesQuery: ListQuery = { where: [{ column: "tag", op: "in", value: ["y", null] }], columns: ["rank"], ordered: false }
          const columnsQuery: ColumnsQuery = { where: [{ column: "rank", op: "gt", value: 1 }], groupBy: "kind", columns: ["rank", "id"] }
          const reads = [
            Read.list(Things, listQuery),
            Read.listIndexes(Things, indexesQuery),
            Read.listColumns(Things, columnsQuery),
            Read.list(Pairs, { where: [{ column: "tag", op: "ne", value: "it's \"quoted\"" }] }),
            Read.listIndexes(Pairs, { where: [{ column: "rank", op: "in", value: [] }] }),
            Read.list(Things, { after: [3, "t3"] }),
            Read.listIndexes(Pairs, {})
          ] as const
          // Each adapter here runs them together itself (`readManyOf` would fall back to the methods).
          expect(storage.readMany).toBeTypeOf("function")
          const readMany = storage.readMany!
          const [list, indexes, columns, pairList, none, after, pairIndexes] = yield* readMany(reads)
          expect(list).toEqual(yield* things.list(listQuery))
          expect(ids(list)).toEqual(["t1", "t2", "t3"])
          expect([...indexes].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
            [...(yield* things.listIndexes(indexesQuery))].sort((a, b) => a.id.localeCompare(b.id))
          )
          expect(typeof indexes[0]!.rank).toBe("number")
          expect(columns).toEqual(yield* things.listColumns(columnsQuery))
          expect(ids(pairList)).toEqual(["p3", "p1"])
          expect(none).toEqual([])
          expect(ids(after)).toEqual(["t4", "t5"])
          expect(pairIndexes).toEqual(yield* pairs.listIndexes({}))
          expect(yield* readMany([])).toEqual([])

          // Inside a transaction they see its own writes.
          yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("t6", 6, "a"))
            yield* things.remove("t1")
            const [inside] = yield* readMany([Read.list(Things, { where: [{ column: "kind", op: "eq", value: "a" }] })])
            expect(ids(inside)).toEqual(["t3", "t6"])
          }))
          // A read naming a column the collection does not index fails where the method does.
          const unknown: ListQuery = { columns: ["nope"] }
          const refused = yield* Effect.either(readMany([Read.list(Things, {}), Read.listIndexes(Things, unknown)]))
          const alone = yield* Effect.either(things.listIndexes(unknown))
          expect(Either.isLeft(refused) ? refused.left._tag : "answered").toBe(Either.isLeft(alone) ? alone.left._tag : "answered")

          // Values a composed statement must carry through as they are: quotes, a backslash,
          // a control character and characters beyond ASCII, as group keys, row values and
          // documents. (No NUL: PostgreSQL text cannot hold one; the core refuses them in input.)
          const hostile = "tab\t \"q\" \\ ✓ 🙂"
          yield* pairs.insert(thing("p9", 7, hostile, hostile))
          const byTag: ColumnsQuery = { groupBy: "tag", columns: ["rank", "id"] }
          const named: ListQuery = { where: [{ column: "tag", op: "eq", value: hostile }] }
          const [groups, rows, docs] = yield* readMany([
            Read.listColumns(Pairs, byTag),
            Read.listIndexes(Pairs, named),
            Read.list(Pairs, named)
          ])
          expect(groups).toEqual(yield* pairs.listColumns(byTag))
          expect(groups.get(hostile)).toEqual([[7], ["p9"]])
          expect(rows).toEqual([{ id: "p9", tag: hostile, rank: 7 }])
          expect(docs).toEqual([thing("p9", 7, hostile, hostile)])
        }).pipe(as(tenantA))
      )

      test(
        "keyset pagination misses nothing and repeats nothing under inserts and deletes",
        Effect.gen(function*() {
          const things = (yield* Storage).collection(Things)
          // Ranks repeat so the id tie-break matters.
          const initial = Array.from({ length: 12 }, (_, i) => thing(`t${String(i).padStart(2, "0")}`, Math.floor(i / 2)))
          for (const t of initial) yield* things.insert(t)
          const seen = yield* paginate(
            (after) => things.list(after === undefined ? { limit: 3 } : { after, limit: 3 }),
            (t) => [t.rank, t.id],
            (page) =>
              Effect.gen(function*() {
                if (page === 0) {
                  // Cursor is t02 (rank 1). Before it: not seen; after it: seen once.
                  yield* things.insert(thing("early", 0))
                  yield* things.insert(thing("t01b", 1)) // (1, "t01b") sorts before (1, "t02")
                  yield* things.insert(thing("t02z", 1)) // (1, "t02z") sorts after the cursor
                  yield* things.remove("t02") // the cursor row itself
                  yield* things.remove("t07") // a row not seen yet
                }
                if (page === 1) {
                  yield* things.insert(thing("last", 99))
                  yield* things.update(thing("t09", 0)) // moves behind the cursor: not seen again
                }
              })
          )
          expect(seen).toEqual([
            "t00",
            "t01",
            "t02",
            "t02z",
            "t03",
            "t04",
            "t05",
            "t06",
            "t08",
            "t10",
            "t11",
            "last"
          ])
        }).pipe(as(tenantA))
      )

      test(
        "keyset pagination over a nullable, multi-column order",
        Effect.gen(function*() {
          const pairs = (yield* Storage).collection(Pairs)
          const rows = [
            thing("p1", 2, "k", null),
            thing("p2", 1, "k", "m"),
            thing("p3", 1, "k", null),
            thing("p4", 3, "k", "a"),
            thing("p5", 1, "k", null),
            thing("p6", 2, "k", "m"),
            thing("p7", 0, "k", "z")
          ]
          for (const r of rows) yield* pairs.insert(r)
          const all = ids(yield* pairs.list({}))
          expect(all).toEqual(["p3", "p5", "p1", "p4", "p2", "p6", "p7"])
          for (const limit of [1, 2, 3]) {
            const seen = yield* paginate(
              (after) => pairs.list(after === undefined ? { limit } : { after, limit }),
              (t) => [t.tag, t.rank, t.id]
            )
            expect(seen).toEqual(all)
          }
          // A shorter cursor counts the missing values as null.
          expect(ids(yield* pairs.list({ after: [null] }))).toEqual(all)
          expect(ids(yield* pairs.list({ after: ["m", 1, "p2"] }))).toEqual(["p6", "p7"])
        }).pipe(as(tenantA))
      )
    })

    describe("transactions", () => {
      test(
        "commit is all-or-nothing: a failure after writes and an event leaves none of them",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          yield* things.insert(thing("keep", 1, "before"))
          yield* things.insert(thing("gone", 2))
          const seqBefore = yield* storage.events.lastSeq
          const result = yield* Effect.either(storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("n1", 3))
            yield* things.insert(thing("n2", 4))
            yield* things.update(thing("keep", 1, "after"))
            yield* things.remove("gone")
            yield* storage.events.append(event())
            return yield* Effect.fail("boom" as const)
          })))
          expect(result).toEqual(Either.left("boom"))
          expect(ids(yield* things.list({}))).toEqual(["keep", "gone"])
          expect(yield* things.get("keep")).toEqual(Option.some(thing("keep", 1, "before")))
          expect(yield* storage.events.read({ after: 0, limit: 10 })).toEqual([])
          expect(yield* storage.events.lastSeq).toBe(seqBefore)

          // A typed storage failure inside (a duplicate) rolls back the same way.
          const duplicate = yield* Effect.flip(storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("n3", 5))
            yield* storage.events.append(event())
            yield* things.insert(thing("keep", 9))
          })))
          expect(duplicate._tag).toBe("StorageFailure")
          expect(yield* things.get("n3")).toEqual(Option.none())
          expect(yield* storage.events.read({ after: 0, limit: 10 })).toEqual([])

          // And a successful one commits everything.
          const value = yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("n1", 3))
            yield* things.remove("gone")
            yield* storage.events.append(event("client.created"))
            return 42
          }))
          expect(value).toBe(42)
          expect(ids(yield* things.list({}))).toEqual(["keep", "n1"])
          expect((yield* storage.events.read({ after: 0, limit: 10 })).map((e) => e.event.type)).toEqual([
            "client.created"
          ])
        }).pipe(as(tenantA))
      )

      test(
        "an idempotent request's transaction keeps its result in itself; a retry is given it and writes nothing",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          /** The request's writes: each result kept as a document, those of `earlier` given back in order. */
          const request = (earlier: ReadonlyArray<string>): IdempotentWrites => {
            let next = 0
            return {
              replay: () => (next < earlier.length ? Option.some(Effect.succeed(earlier[next++])) : Option.none()),
              committing: (result) => as(tenantA)(things.insert(thing(`kept-${String(result)}`, 100, "kept")))
            }
          }
          const writing = (id: string, outcome: Effect.Effect<void, string> = Effect.void) =>
            Effect.zipRight(Effect.zipRight(things.insert(thing(id, 1)), outcome), Effect.succeed(id))
          const first = request([])
          expect(yield* Effect.locally(storage.transaction(writing("w1")), currentIdempotentWrites, first)).toBe("w1")
          // Rolled back: its result is not kept either.
          const failed = storage.transaction(writing("w2", Effect.fail("boom")))
          expect(yield* Effect.flip(Effect.locally(failed, currentIdempotentWrites, first))).toBe("boom")
          expect(yield* Effect.locally(keyedTransactionOf(storage)(writing("w3")), currentIdempotentWrites, first)).toBe("w3")
          expect(ids(yield* things.list({}))).toEqual(["w1", "w3", "kept-w1", "kept-w3"])
          // The retry: both transactions are given what they committed; a third runs.
          const retry = request(["w1", "w3"])
          const again = yield* Effect.locally(
            Effect.all([
              storage.transaction(writing("x1")),
              keyedTransactionOf(storage)(writing("x2")),
              storage.transaction(writing("x3"))
            ]),
            currentIdempotentWrites,
            retry
          )
          expect(again).toEqual(["w1", "w3", "x3"])
          expect(ids(yield* things.list({}))).toEqual(["w1", "w3", "x3", "kept-w1", "kept-w3", "kept-x3"])
        }).pipe(as(tenantA))
      )

      test(
        "a nested transaction joins the outer one",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          // The outer failure undoes the inner, already "finished", transaction.
          yield* Effect.either(storage.transaction(Effect.gen(function*() {
            yield* storage.transaction(things.insert(thing("inner", 1)))
            yield* things.insert(thing("outer", 2))
            return yield* Effect.fail("boom")
          })))
          expect(yield* things.list({})).toEqual([])
          // The inner one is no savepoint: its writes stay when the outer catches its failure.
          yield* storage.transaction(Effect.gen(function*() {
            yield* Effect.either(storage.transaction(Effect.zipRight(things.insert(thing("inner", 1)), Effect.fail("x"))))
            yield* things.insert(thing("outer", 2))
          }))
          expect(ids(yield* things.list({}))).toEqual(["inner", "outer"])
        }).pipe(as(tenantA))
      )

      test(
        "reads inside a transaction see its own writes",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          yield* things.insert(thing("old", 1))
          yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("new", 2, "fresh"))
            expect(yield* things.get("new")).toEqual(Option.some(thing("new", 2, "fresh")))
            expect(ids(yield* things.list({}))).toEqual(["old", "new"])
            expect(yield* things.listIndexes({ where: [{ column: "kind", op: "eq", value: "fresh" }] })).toEqual([
              { id: "new", kind: "fresh", rank: 2, tag: null }
            ])
            yield* things.update(thing("old", 3))
            expect(ids(yield* things.list({}))).toEqual(["new", "old"])
            yield* things.remove("new")
            expect(yield* things.get("new")).toEqual(Option.none())
          }))
          expect(ids(yield* things.list({}))).toEqual(["old"])
        }).pipe(as(tenantA))
      )

      test(
        "reads outside a transaction never see its uncommitted or rolled-back writes",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          const written = yield* Deferred.make<void>()
          const read = yield* Deferred.make<void>()
          const writer = storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("uncommitted", 1))
            yield* Deferred.succeed(written, undefined)
            // An adapter may make the reader wait for the transaction: do not wait forever.
            yield* Effect.ignore(Effect.timeout(Deferred.await(read), "100 millis"))
            return yield* Effect.fail("rollback")
          }))
          const reader = Effect.gen(function*() {
            yield* Deferred.await(written)
            const got = yield* things.get("uncommitted")
            const listed = yield* things.list({})
            yield* Deferred.succeed(read, undefined)
            return { got, listed }
          })
          const [, seen] = yield* Effect.all([Effect.either(writer), reader], { concurrency: "unbounded" })
          expect(seen.got).toEqual(Option.none())
          expect(seen.listed).toEqual([])
          expect(yield* things.get("uncommitted")).toEqual(Option.none())
        }).pipe(as(tenantA))
      )

      test(
        "afterCommit runs once the outermost transaction commits, in order; never after a rollback",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          const log: Array<string> = []
          const note = (entry: string) => storage.afterCommit(Effect.sync(() => log.push(entry)))

          yield* note("outside: at once")
          expect(log).toEqual(["outside: at once"])

          yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("a", 1))
            yield* note("first")
            yield* storage.transaction(note("nested"))
            expect(log).toEqual(["outside: at once"])
          }))
          expect(log).toEqual(["outside: at once", "first", "nested"])

          yield* Effect.either(storage.transaction(Effect.zipRight(note("rolled back"), Effect.fail("no"))))
          expect(log).not.toContain("rolled back")

          // What runs after a commit sees it committed, and may start a transaction of its own.
          yield* storage.transaction(Effect.gen(function*() {
            yield* things.insert(thing("b", 2))
            yield* storage.afterCommit(
              Effect.gen(function*() {
                log.push(Option.isSome(yield* things.get("b")) ? "saw b" : "missed b")
                yield* things.insert(thing("c", 3))
              }).pipe(as(tenantA), Effect.orDie)
            )
          }))
          expect(log).toContain("saw b")
          expect(ids(yield* things.list({}))).toEqual(["a", "b", "c"])
        }).pipe(as(tenantA))
      )

      test(
        "50 concurrent claim-the-seat transactions produce exactly one seat",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          const claim = (i: number) =>
            storage.transaction(Effect.gen(function*() {
              const taken = yield* things.listIndexes({ where: [{ column: "kind", op: "eq", value: "seat" }] })
              yield* Effect.yieldNow() // let the others run between the check and the write
              if (taken.length > 0) return { won: false, holder: taken[0]!.id }
              yield* things.insert(thing(`seat_${i}`, i, "seat"))
              return { won: true, holder: `seat_${i}` }
            }))
          const results = yield* Effect.all(Array.from({ length: 50 }, (_, i) => claim(i)), {
            concurrency: "unbounded"
          })
          const winners = results.filter((r) => r.won)
          expect(winners).toHaveLength(1)
          const seats = yield* things.list({ where: [{ column: "kind", op: "eq", value: "seat" }] })
          expect(ids(seats)).toEqual([winners[0]!.holder])
          expect(new Set(results.map((r) => r.holder))).toEqual(new Set([winners[0]!.holder]))
        }).pipe(as(tenantA))
      )
    })

    describe("events", () => {
      test(
        "append, read after a cursor, type filter, get by id within the tenant, across tenants",
        Effect.gen(function*() {
          const storage = yield* Storage
          const log = storage.events
          expect(yield* log.lastSeq).toBe(0)
          const a1 = event("booking.created")
          const a2 = event("client.created")
          const b1 = event("booking.created")
          const a3 = event("booking.cancelled")
          yield* log.append(a1).pipe(as(tenantA))
          yield* log.append(a2).pipe(as(tenantA))
          yield* log.append(b1).pipe(as(tenantB))
          yield* log.append(a3).pipe(as(tenantA))

          const all = yield* log.read({ after: 0, limit: 10 }).pipe(as(tenantA))
          expect(all.map((s) => s.event)).toEqual([a1, a2, a3])
          expect(all.every((s) => s.tenant.account_id === "acct_a" && s.tenant.environment === "sandbox")).toBe(true)
          expect(all.map((s) => s.seq)).toEqual([...all.map((s) => s.seq)].sort((x, y) => x - y))
          expect(new Set(all.map((s) => s.seq)).size).toBe(3)

          expect((yield* log.read({ after: all[0]!.seq, limit: 10 }).pipe(as(tenantA))).map((s) => s.event.id))
            .toEqual([a2.id, a3.id])
          expect((yield* log.read({ after: 0, limit: 2 }).pipe(as(tenantA))).map((s) => s.event.id)).toEqual([
            a1.id,
            a2.id
          ])
          expect(
            (yield* log.read({ after: 0, limit: 10, types: ["booking.created", "booking.cancelled"] }).pipe(
              as(tenantA)
            )).map((s) => s.event.id)
          ).toEqual([a1.id, a3.id])
          expect(yield* log.read({ after: 0, limit: 10, types: [] }).pipe(as(tenantA))).toEqual([])
          expect(yield* log.read({ after: 0, limit: 10 }).pipe(as(tenantAProd))).toEqual([])

          expect(yield* log.get(a2.id).pipe(as(tenantA))).toEqual(Option.some(a2))
          expect(yield* log.get(b1.id).pipe(as(tenantA))).toEqual(Option.none())
          expect(yield* log.get(b1.id).pipe(as(tenantB))).toEqual(Option.some(b1))
          expect(yield* log.get(a2.id).pipe(as(tenantAProd))).toEqual(Option.none())

          const across = yield* log.readAcrossTenants({ after: 0, limit: 10 })
          expect(across.map((s) => [s.event.id, s.tenant])).toEqual([
            [a1.id, tenantA],
            [a2.id, tenantA],
            [b1.id, tenantB],
            [a3.id, tenantA]
          ])
          expect((yield* log.readAcrossTenants({ after: across[1]!.seq, limit: 1 })).map((s) => s.event.id)).toEqual([
            b1.id
          ])
          expect(yield* log.lastSeq).toBe(across[3]!.seq)
        })
      )

      test(
        "seq follows commit order; paging with limit 3 under 20 concurrent writers misses and repeats nothing",
        Effect.gen(function*() {
          const storage = yield* Storage
          const log = storage.events
          const writers = Array.from({ length: 20 }, (_, i) =>
            storage.transaction(Effect.gen(function*() {
              yield* log.append(event("booking.created", { writer: i, n: 0 }))
              yield* Effect.yieldNow()
              yield* log.append(event("booking.updated", { writer: i, n: 1 }))
            })))
          const reader = Effect.gen(function*() {
            const seen: Array<{ seq: number; id: string }> = []
            let after = 0
            for (let round = 0; seen.length < 40; round++) {
              if (round > 20_000) return yield* Effect.dieMessage("reader starved")
              const page = yield* log.read({ after, limit: 3 })
              for (const s of page) seen.push({ seq: s.seq, id: s.event.id })
              if (page.length > 0) after = page[page.length - 1]!.seq
              else yield* Effect.sleep("1 millis")
            }
            return seen
          })
          const [, seen] = yield* Effect.all([Effect.all(writers, { concurrency: "unbounded" }), reader], {
            concurrency: "unbounded"
          })
          expect(new Set(seen.map((s) => s.id)).size).toBe(40)
          const all = yield* log.read({ after: 0, limit: 100 })
          expect(seen).toEqual(all.map((s) => ({ seq: s.seq, id: s.event.id })))
          // Transactions do not interleave: each writer's two events are neighbours, in order.
          for (let i = 0; i < all.length; i += 2) {
            const first = all[i]!.event.data.object as { writer: number; n: number }
            const second = all[i + 1]!.event.data.object as { writer: number; n: number }
            expect([first.writer, first.n, second.n]).toEqual([second.writer, 0, 1])
          }
        }).pipe(as(tenantA))
      )
    })

    describe("manage links", () => {
      const tenant: TenantId = { account_id: `acc_${"2".repeat(26)}`, environment: "production" }
      /** A core over this store, as another instance sharing the database would build it. */
      const instance = (storage: Context.Tag.Service<Storage>) =>
        Effect.map(
          Layer.build(CoreLive.pipe(
            Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
            Layer.provide(Layer.succeed(Storage, storage))
          )),
          (context) => Context.get(context, Manage)
        )

      test(
        "instances starting together create one deployment secret; a link works on each; a rotation kills it on each",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const booking = sampleBooking(Date.parse("2027-03-26T08:00:00Z"))
          yield* storage.collection(BookingsCollection).insert(booking).pipe(as(tenant))
          const [one, two] = [yield* instance(storage), yield* instance(storage)]

          // Both make the booking's link at once: each finds no secret and races to insert one.
          const [fromOne, fromTwo] = yield* Effect.all([one.manageLink(booking.id), two.manageLink(booking.id)], { concurrency: 2 })
            .pipe(as(tenant))
          expect(fromTwo.token).toBe(fromOne.token)
          const secrets = yield* storage.collection(DeploymentSecretsCollection).list({}).pipe(as(SYSTEM_TENANT))
          expect(secrets.map((s) => s.id)).toEqual([MANAGE_LINK_SECRET_ID])
          expect((yield* two.open(fromOne.token)).booking.id).toBe(booking.id)

          const rotated = yield* one.rotate(booking.id).pipe(as(tenant))
          expect(rotated.manage_version).toBe(2)
          const stored = yield* storage.collection(BookingsCollection).get(booking.id).pipe(as(tenant))
          expect(Option.map(stored, (b) => b.manage_version)).toEqual(Option.some(2))
          for (const manage of [one, two]) {
            expect((yield* Effect.either(manage.open(fromOne.token))).pipe(Either.getLeft, Option.map((e) => e._tag))).toEqual(
              Option.some("NotFound")
            )
          }
          const fresh = yield* two.manageLink(booking.id).pipe(as(tenant))
          expect((yield* one.open(fresh.token)).booking.manage_version).toBe(2)
        }))
      )
    })

    describe("booking series", () => {
      const tenant: TenantId = { account_id: `acc_${"3".repeat(26)}`, environment: "sandbox" }
      /** The core over this store with the ical.js expander, its clock at 2027-01-01, and a bookable tenant. */
      const seriesCore = (storage: Context.Tag.Service<Storage>, at: TenantId = tenant) =>
        Effect.gen(function*() {
          const clock = Context.get(yield* Layer.build(TestClockAt(Date.parse("2027-01-01T00:00:00Z"))), TestClock.TestClock)
          const core = yield* Layer.build(CoreLive.pipe(
            Layer.provide(RecurrenceExpanderLive),
            Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: false })),
            Layer.provide(Layer.succeed(Storage, storage))
          ))
          const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
            Effect.withClock(Effect.provide(effect, core), clock).pipe(as(at)) as Effect.Effect<A, E>
          const member = yield* run(Effect.flatMap(StaffUseCases, (s) => s.create({ name: "Ana", time_zone: "Europe/Berlin" })))
          yield* run(Effect.flatMap(Availability, (a) =>
            a.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })))
          const service = yield* run(Effect.flatMap(Services, (s) =>
            s.create({ name: "Lesson", duration_minutes: 60, staff_ids: [member.id], max_occurrences: 10 })))
          const client = yield* run(Effect.flatMap(Clients, (c) =>
            c.create({ name: "Bo" })))
          const request = (rule: string, extra: Record<string, unknown> = {}) => ({
            service_id: service.id,
            staff_id: member.id,
            client_id: client.id,
            start: "2027-03-15T08:00:00Z",
            recurrence: { rule },
            ...extra
          })
          return { run, request, series: Context.get(core, RecurringBookings), member, client, service }
        })

      test(
        "list pages a tenant's series by creation, each with its occurrences; filters; other accounts and environments see none",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { client, member, request, run, series, service } = yield* seriesCore(storage)
          const a = yield* run(series.create(request("FREQ=WEEKLY;COUNT=2")))
          const b = yield* run(series.create(request("FREQ=WEEKLY;COUNT=3", { start: "2027-03-15T10:00:00Z" })))
          const c = yield* run(series.create(request("FREQ=DAILY;COUNT=2", { start: "2027-03-16T12:00:00Z" })))
          const first = yield* run(series.list({ limit: 2 }))
          expect(first).toMatchObject({ object: "list", data: [a, b], has_more: true })
          expect(yield* run(series.list({ limit: 2, cursor: first.next_cursor! }))).toEqual({
            object: "list",
            data: [c],
            has_more: false,
            next_cursor: null
          })
          const ids = (page: { readonly data: ReadonlyArray<{ readonly id: string }> }) => page.data.map((x) => x.id)
          expect(ids(yield* run(series.list({ client_id: client.id, staff_id: member.id, service_id: service.id })))).toEqual([
            a.id,
            b.id,
            c.id
          ])
          expect(ids(yield* run(series.list({ staff_id: `stf_${"9".repeat(26)}` })))).toEqual([])
          const production = yield* seriesCore(storage, { ...tenant, environment: "production" })
          const theirs = yield* production.run(production.series.create(production.request("FREQ=WEEKLY;COUNT=2")))
          expect(ids(yield* production.run(production.series.list()))).toEqual([theirs.id])
          const elsewhere = yield* seriesCore(storage, { account_id: `acc_${"4".repeat(26)}`, environment: "sandbox" })
          expect(yield* elsewhere.run(elsewhere.series.list())).toEqual({ object: "list", data: [], has_more: false, next_cursor: null })
          expect(ids(yield* run(series.list()))).toEqual([a.id, b.id, c.id])
        }))
      )

      test(
        "a series and its occurrences are stored and read back by series_id, across the DST change, in start order",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { request, run, series } = yield* seriesCore(storage)
          const made = yield* run(series.create(request("FREQ=WEEKLY;COUNT=4")))
          // 09:00 in Berlin: CET before 2027-03-28, CEST after.
          expect(made.occurrences.map((b) => b.start)).toEqual([
            "2027-03-15T08:00:00Z",
            "2027-03-22T08:00:00Z",
            "2027-03-29T07:00:00Z",
            "2027-04-05T07:00:00Z"
          ])
          const stored = yield* storage.collection(BookingSeriesCollection).get(made.id).pipe(as(tenant))
          expect(Option.map(stored, (doc) => [doc.rule, doc.time_zone, doc.staff_id])).toEqual(
            Option.some(["FREQ=WEEKLY;COUNT=4", "Europe/Berlin", made.staff_id])
          )
          const bySeries = yield* storage.collection(BookingsCollection).list({
            where: [{ column: "series_id", op: "eq", value: made.id }]
          }).pipe(as(tenant))
          expect(bySeries.map((b) => b.id)).toEqual(made.occurrences.map((b) => b.id))
          expect(yield* run(series.get(made.id))).toEqual(made)
          // Another tenant sees none of it.
          expect(Option.isNone(yield* storage.collection(BookingSeriesCollection).get(made.id).pipe(as(tenantB)))).toBe(true)
        }))
      )

      test(
        "reject writes nothing when one occurrence is taken; skip writes the rest; cancel from writes each cancellation with its event",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { request, run, series } = yield* seriesCore(storage)
          const first = yield* run(series.create(request("FREQ=WEEKLY;COUNT=2")))
          const seqBefore = yield* storage.events.lastSeq
          const refused = yield* Effect.flip(run(series.create(request("FREQ=DAILY;COUNT=3", { start: "2027-03-21T08:00:00Z" }))))
          // 03-21 is a Sunday: closed; 03-22 overlaps the first series.
          expect(refused._tag).toBe("SeriesUnavailable")
          expect(yield* storage.events.lastSeq).toBe(seqBefore)
          expect(yield* storage.collection(BookingSeriesCollection).list({}).pipe(as(tenant))).toHaveLength(1)
          expect(yield* storage.collection(BookingsCollection).list({}).pipe(as(tenant))).toHaveLength(2)
          const skipped = yield* run(series.create(request("FREQ=DAILY;COUNT=3", { start: "2027-03-22T10:00:00Z", on_conflict: "skip" })))
          expect(skipped.occurrences.map((b) => b.start)).toEqual(["2027-03-22T10:00:00Z", "2027-03-23T10:00:00Z", "2027-03-24T10:00:00Z"])
          const cancelled = yield* run(series.cancel(first.id, { from: first.occurrences[1]!.start }))
          expect(cancelled.occurrences.map((b) => b.status)).toEqual(["confirmed", "cancelled"])
          const log = yield* storage.events.read({ after: seqBefore, types: ["booking.cancelled"], limit: 10 }).pipe(as(tenant))
          expect(log.map((e) => (e.event.data.object as Booking).id)).toEqual([first.occurrences[1]!.id])
        }))
      )

      test(
        "a collective series occupies every member through stored rows, refuses a member busy alone, and its cancel removes the rows",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { client, member, run, series } = yield* seriesCore(storage)
          const other = yield* run(Effect.flatMap(StaffUseCases, (s) => s.create({ name: "Ben", time_zone: "Europe/Berlin" })))
          yield* run(
            Effect.flatMap(
              Availability,
              (a) => a.create({ staff_id: other.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
            )
          )
          const members = [member.id, other.id]
          const team = (assignment: "collective" | "round_robin", extra: Record<string, unknown> = {}) =>
            run(
              Effect.flatMap(Services, (s) =>
                s.create({
                  name: `Team ${assignment}`,
                  duration_minutes: 60,
                  staff_ids: members,
                  assignment,
                  max_occurrences: 10,
                  ...extra
                }))
            )
          const solo = yield* run(Effect.flatMap(Services, (s) => s.create({ name: "Solo", duration_minutes: 60, staff_ids: members })))
          const alone = (start: string) =>
            run(Effect.flatMap(Bookings, (b) => b.create({ service_id: solo.id, staff_id: other.id, client_id: client.id, start })))
          const collective = yield* team("collective")
          const weekly = (serviceId: string, extra: Record<string, unknown> = {}) =>
            series.create({
              service_id: serviceId,
              client_id: client.id,
              start: "2027-03-15T08:00:00Z",
              recurrence: { rule: "FREQ=WEEKLY;COUNT=3" },
              ...extra
            })
          const busy = yield* alone("2027-03-22T08:00:00Z")
          const refused = yield* Effect.flip(run(weekly(collective.id)))
          expect(refused).toMatchObject({
            _tag: "SeriesUnavailable",
            occurrences: [{
              start: "2027-03-22T08:00:00Z",
              reasons: [{ code: "booking_overlap", booking_id: busy.id, staff_id: other.id }]
            }]
          })
          const made = yield* run(weekly(collective.id, { on_conflict: "skip" }))
          expect(made.occurrences.map((b) => [b.start, b.staff_ids, b.assigned_by])).toEqual([
            ["2027-03-15T08:00:00Z", members, "collective"],
            ["2027-03-29T07:00:00Z", members, "collective"]
          ])
          const storedSeries = storage.collection(BookingSeriesCollection)
          expect(Option.map(yield* storedSeries.get(made.id).pipe(as(tenant)), (doc) => [doc.staff_ids, doc.assigned_by]))
            .toEqual(Option.some([members, "collective"]))
          const rows = storage.collection(MemberOccupancyCollection)
          const rowsOf = Effect.map(
            rows.list({ where: [{ column: "staff_id", op: "eq", value: other.id }] }).pipe(as(tenant)),
            (found) => found.map((row) => row.source_id).sort()
          )
          expect(yield* rowsOf).toEqual(made.occurrences.map((b) => b.id).sort())
          expect(yield* Effect.flip(alone("2027-03-15T08:00:00Z"))).toMatchObject({ _tag: "SlotUnavailable" })
          yield* run(series.cancel(made.id))
          expect(yield* rowsOf).toEqual([])
          expect((yield* alone("2027-03-15T08:00:00Z")).staff_id).toBe(other.id)
          // Round robin, fewest upcoming: the member without upcoming bookings of the service keeps the series.
          const roundRobin = yield* team("round_robin", { round_robin_policy: "fewest_upcoming" })
          yield* run(
            Effect.flatMap(
              Bookings,
              (b) => b.create({ service_id: roundRobin.id, staff_id: member.id, client_id: client.id, start: "2027-04-30T08:00:00Z" })
            )
          )
          const picked = yield* run(weekly(roundRobin.id, { start: "2027-04-05T07:00:00Z" }))
          expect(picked.occurrences.map((b) => [b.staff_id, b.assigned_by])).toEqual([
            [other.id, "round_robin"],
            [other.id, "round_robin"],
            [other.id, "round_robin"]
          ])
          expect(Option.map(yield* storedSeries.get(picked.id).pipe(as(tenant)), (doc) => [doc.staff_ids, doc.assigned_by]))
            .toEqual(Option.some([[other.id], "round_robin"]))
        }))
      )

      test(
        "a collective class of capacity 3 counts each member's seats through stored rows: 3 bookings, the 4th refused for both",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { client, member, run } = yield* seriesCore(storage)
          const other = yield* run(Effect.flatMap(StaffUseCases, (s) => s.create({ name: "Ben", time_zone: "Europe/Berlin" })))
          yield* run(
            Effect.flatMap(
              Availability,
              (a) => a.create({ staff_id: other.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
            )
          )
          const members = [member.id, other.id]
          const cls = yield* run(
            Effect.flatMap(
              Services,
              (s) => s.create({ name: "Class", duration_minutes: 60, staff_ids: members, assignment: "collective", capacity: 3 })
            )
          )
          const start = "2027-03-15T08:00:00Z"
          const book = run(Effect.flatMap(Bookings, (b) => b.create({ service_id: cls.id, client_id: client.id, start })))
          const remaining = run(Effect.flatMap(Availability, (a) => a.slots({ service_id: cls.id, start, end: "2027-03-15T08:01:00Z" })))
          for (const left of [2, 1]) {
            expect((yield* book).staff_ids).toEqual(members)
            expect((yield* remaining).data.map((slot) => slot.remaining)).toEqual([left])
          }
          yield* book
          expect((yield* remaining).data).toEqual([])
          const refused = yield* Effect.flip(book)
          expect(refused).toMatchObject({
            _tag: "SlotUnavailable",
            reasons: [{ code: "capacity_full", staff_id: member.id }, { code: "capacity_full", staff_id: other.id }]
          })
        }))
      )

      test(
        "two series racing for the same starts: one is booked whole, the other refused, nothing mixed",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const { request, run, series } = yield* seriesCore(storage)
          const outcomes = yield* Effect.all(
            [
              run(Effect.either(series.create(request("FREQ=WEEKLY;COUNT=6")))),
              run(Effect.either(series.create(request("FREQ=WEEKLY;COUNT=6"))))
            ],
            { concurrency: 2 }
          )
          expect(outcomes.map((o) => o._tag).sort()).toEqual(["Left", "Right"])
          const lost = outcomes.find(Either.isLeft)!.left
          expect(lost._tag).toBe("SeriesUnavailable")
          const stored = yield* storage.collection(BookingsCollection).list({}).pipe(as(tenant))
          expect(stored).toHaveLength(6)
          expect(new Set(stored.map((b) => b.series_id)).size).toBe(1)
        }))
      )
    })

    describe("deleting a staff member", () => {
      const tenant: TenantId = { account_id: `acc_${"3".repeat(26)}`, environment: "sandbox" }
      const core = Effect.map(
        Layer.build(CoreLive.pipe(Layer.provide(Layer.succeed(WebhookPolicy, { allowPrivate: true })))),
        (context) => ({
          staff: Context.get(context, StaffService),
          calendars: Context.get(context, Calendars),
          feeds: Context.get(context, CalendarFeeds),
          events: Context.get(context, Events)
        })
      )

      test(
        "removes their external calendars, busy times and calendar feed in the same transaction, each with its event",
        Effect.scoped(
          Effect.gen(function*() {
            const { calendars, events, feeds, staff } = yield* core
            const leaving = yield* staff.create({ name: "Lee", time_zone: "UTC" })
            const staying = yield* staff.create({ name: "Sam", time_zone: "UTC" })
            const busy = yield* storageOf(BusyRangesCollection)
            const made: Array<string> = []
            for (const member of [leaving, staying]) {
              const calendar = yield* calendars.create(member.id, { url: `https://calendar.example.com/${member.id}.ics` })
              made.push(calendar.id)
              // What a sync leaves: busy ranges for the calendar.
              for (const chunk of busyChunks(calendar, [{ start: 1_800_000_000_000, end: 1_800_003_600_000 }])) yield* busy.insert(chunk)
              yield* feeds.create(member.id)
            }
            const tokenEntries = Effect.flatMap(storageOf(CalendarFeedTokensCollection), (map) => map.list({})).pipe(
              as(CALENDAR_FEED_TOKENS_TENANT)
            )
            expect(yield* tokenEntries).toHaveLength(2)
            const before = (yield* events.list({ limit: 100 })).next_cursor

            yield* staff.delete(leaving.id)

            const remaining = yield* storageOf(CalendarsCollection).pipe(Effect.flatMap((c) => c.list({})))
            expect(remaining.map((c) => c.id)).toEqual([made[1]])
            expect([...new Set((yield* busy.list({})).map((b) => b.staff_id))]).toEqual([staying.id])
            expect((yield* Effect.flip(feeds.get(leaving.id)))._tag).toBe("NotFound")
            expect((yield* feeds.get(staying.id)).staff_id).toBe(staying.id)
            expect((yield* tokenEntries).map((e) => e.feed_id)).toEqual([staying.id])
            const logged = (yield* events.list({ after: before, limit: 100 })).data
            expect(logged.map((e) => e.type)).toEqual(["calendar.deleted", "calendar_feed.deleted", "staff.deleted"])
            expect(logged[0]!.data.object).toMatchObject({ id: made[0], staff_id: leaving.id, url: "https://calendar.example.com/…" })
            expect(JSON.stringify(logged)).not.toContain(`${leaving.id}.ics`)
            expect(logged[1]!.data.object).toEqual({ object: "calendar_feed", staff_id: leaving.id, created_at: expect.any(String) })
          }).pipe(as(tenant))
        )
      )

      test(
        "leaves calendars, busy times and the feed in place when the deletion is refused",
        Effect.scoped(
          Effect.gen(function*() {
            const storage = yield* Storage
            const { calendars, feeds, staff } = yield* core
            const member = yield* staff.create({ name: "Kim", time_zone: "UTC" })
            const calendar = yield* calendars.create(member.id, { url: "https://calendar.example.com/kim.ics" })
            yield* feeds.create(member.id)
            // A failure after the cascade ran: the whole transaction rolls back.
            yield* Effect.either(storage.transaction(Effect.zipRight(staff.delete(member.id), Effect.fail("no"))))
            expect((yield* calendars.get(member.id, calendar.id)).id).toBe(calendar.id)
            expect((yield* feeds.get(member.id)).staff_id).toBe(member.id)
          }).pipe(as(tenant))
        )
      )
    })

    describe("eraseTenant", () => {
      test(
        "removes the tenant's documents and events only; seqs are not reused",
        Effect.gen(function*() {
          const storage = yield* Storage
          const things = storage.collection(Things)
          const pairs = storage.collection(Pairs)
          for (const tenant of [tenantA, tenantAProd, tenantB]) {
            yield* Effect.gen(function*() {
              yield* things.insert(thing("t1", 1))
              yield* pairs.insert(thing("p1", 1))
              yield* storage.events.append(event())
            }).pipe(as(tenant))
          }
          const lastBefore = yield* storage.events.lastSeq

          // An erase in a failed transaction erases nothing.
          yield* Effect.either(storage.transaction(Effect.zipRight(storage.eraseTenant, Effect.fail("no")))).pipe(
            as(tenantA)
          )
          expect(ids(yield* things.list({}).pipe(as(tenantA)))).toEqual(["t1"])

          yield* storage.eraseTenant.pipe(as(tenantA))
          expect(yield* things.list({}).pipe(as(tenantA))).toEqual([])
          expect(yield* pairs.list({}).pipe(as(tenantA))).toEqual([])
          expect(yield* storage.events.read({ after: 0, limit: 10 }).pipe(as(tenantA))).toEqual([])
          for (const tenant of [tenantAProd, tenantB]) {
            expect(ids(yield* things.list({}).pipe(as(tenant)))).toEqual(["t1"])
            expect(ids(yield* pairs.list({}).pipe(as(tenant)))).toEqual(["p1"])
            expect(yield* storage.events.read({ after: 0, limit: 10 }).pipe(as(tenant))).toHaveLength(1)
          }
          expect(yield* storage.events.readAcrossTenants({ after: 0, limit: 10 })).toHaveLength(2)

          expect(yield* storage.events.lastSeq).toBe(lastBefore)
          yield* storage.events.append(event()).pipe(as(tenantA))
          const [fresh] = yield* storage.events.read({ after: 0, limit: 10 }).pipe(as(tenantA))
          expect(fresh!.seq).toBeGreaterThan(lastBefore)

          // Erasing the newest events must not hand their seqs out again either.
          yield* storage.eraseTenant.pipe(as(tenantA))
          expect(yield* storage.events.lastSeq).toBe(fresh!.seq)
          yield* storage.events.append(event()).pipe(as(tenantB))
          const afterErase = yield* storage.events.readAcrossTenants({ after: fresh!.seq - 1, limit: 10 })
          expect(afterErase).toHaveLength(1)
          expect(afterErase[0]!.seq).toBeGreaterThan(fresh!.seq)
        })
      )
    })

    describe("custom domains' hostname map", () => {
      /** The core's domains over this store, with a resolver that finds every record value in `published`. */
      const domainsOver = (published: Set<string>) =>
        Effect.map(
          Layer.build(Domains.Default.pipe(Layer.provide(Layer.merge(
            Layer.succeed(DnsResolver, { resolveTxt: () => Effect.succeed([...published]) }),
            Events.Default
          )))),
          (context) => Context.get(context, Domains)
        )

      test(
        "verifications of one hostname by several tenants at once leave exactly one owner",
        Effect.scoped(Effect.gen(function*() {
          const published = new Set<string>()
          const domains = yield* domainsOver(published)
          const tenants = [tenantA, tenantAProd, tenantB, { account_id: "acct_c", environment: "production" } as const]
          const created = yield* Effect.forEach(
            tenants,
            (tenant) =>
              Effect.tap(
                domains.create({ hostname: "book.race.example" }).pipe(as(tenant)),
                (d) => Effect.sync(() => published.add(d.verification.value))
              )
          )
          const outcomes = yield* Effect.forEach(
            tenants,
            (tenant, i) => Effect.either(domains.verify(created[i]!.id).pipe(as(tenant))),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.flatMap((o, i) => (Either.isRight(o) ? [tenants[i]!] : []))
          expect(winners).toHaveLength(1)
          for (const o of outcomes) if (Either.isLeft(o)) expect(o.left._tag).toBe("DomainTaken")
          const owners = yield* (yield* storageOf(DomainOwnersCollection)).list({}).pipe(as(DOMAIN_OWNERS_TENANT))
          expect(owners).toEqual([{ id: "book.race.example", ...winners[0]!, domain_id: created[tenants.indexOf(winners[0]!)]!.id }])
          expect(yield* domains.accountForHost("book.race.example")).toEqual(Option.some(winners[0]))
        })),
        30_000
      )

      test(
        "the map's key is the hostname across tenants: a second entry for it fails, and its removal frees it",
        Effect.gen(function*() {
          const map = yield* storageOf(DomainOwnersCollection)
          const entry = { id: "book.key.example", ...tenantA, domain_id: "dom_A" }
          yield* map.insert(entry)
          const second = yield* Effect.flip(map.insert({ id: "book.key.example", ...tenantB, domain_id: "dom_B" }))
          expect(second._tag).toBe("StorageFailure")
          expect(yield* map.get("book.key.example")).toEqual(Option.some(entry))
          yield* map.remove("book.key.example")
          yield* map.insert({ id: "book.key.example", ...tenantB, domain_id: "dom_B" })
          expect((yield* map.list({})).map((e) => e.account_id)).toEqual([tenantB.account_id])
        }).pipe(as(DOMAIN_OWNERS_TENANT))
      )
    })
    describe("account handles", () => {
      /** A fresh instance of the accounts service over this store: what each server process builds on start. */
      const accountsService = Effect.map(
        Layer.build(Accounts.Default.pipe(Layer.provide(ApiKeys.Default))),
        (context) => Context.get(context, Accounts)
      )
      const handleMap = Effect.flatMap(storageOf(HandleOwnersCollection), (map) => map.list({}).pipe(as(HANDLE_OWNERS_TENANT)))

      test(
        "accounts with one name created at once get distinct handles: the name's, then -2, -3 …",
        Effect.scoped(Effect.gen(function*() {
          const accounts = yield* accountsService
          const created = yield* Effect.forEach(
            Array.from({ length: 8 }, () => "Acme Studio"),
            (name) => accounts.create({ name, plan: "free" }),
            { concurrency: "unbounded" }
          )
          const handles = created.map((c) => c.account.handle).sort()
          expect(handles).toEqual([
            "acme-studio",
            "acme-studio-2",
            "acme-studio-3",
            "acme-studio-4",
            "acme-studio-5",
            "acme-studio-6",
            "acme-studio-7",
            "acme-studio-8"
          ])
          const map = yield* handleMap
          expect(map.map((e) => [e.id, e.account_id]).sort()).toEqual(created.map((c) => [c.account.handle, c.account.id]).sort())
        })),
        30_000
      )

      test(
        "claims of one handle by several accounts at once leave exactly one owner",
        Effect.scoped(Effect.gen(function*() {
          const accounts = yield* accountsService
          const created = yield* Effect.forEach(["One", "Two", "Three", "Four"], (name) => accounts.create({ name, plan: "pro" }))
          const outcomes = yield* Effect.forEach(
            created,
            (c) => Effect.either(accounts.updateSettings(c.account.id, { handle: "the-studio" })),
            { concurrency: "unbounded" }
          )
          const winners = outcomes.filter(Either.isRight)
          expect(winners).toHaveLength(1)
          for (const o of outcomes) if (Either.isLeft(o)) expect(o.left._tag).toBe("HandleTaken")
          const winner = winners[0]!.right
          expect(Option.map(yield* accounts.byHandle("the-studio"), (a) => a.id)).toEqual(Option.some(winner.id))
          // The winner's former handle is held for it (see below); every other account keeps its own.
          const map = yield* handleMap
          expect(map.map((e) => [e.id, e.account_id]).sort()).toEqual([
            ...created.map((c) => [c.account.handle, c.account.id]),
            ["the-studio", winner.id]
          ].sort())
          const former = created.find((c) => c.account.id === winner.id)!.account.handle
          expect(map.find((e) => e.id === former)?.held_until).toEqual(expect.any(String))
        })),
        30_000
      )

      /** Two instances of the accounts service over this store, reading one test clock. */
      const twoInstancesWithClock = Effect.gen(function*() {
        const clock = Context.get(yield* Layer.build(TestClockAt(Date.parse("2027-03-01T00:00:00Z"))), TestClock.TestClock)
        const [first, second] = yield* Effect.all([accountsService, accountsService])
        const at = <A, E>(effect: Effect.Effect<A, E>) => Effect.withClock(effect, clock)
        return { first, second, at, pass: (ms: number) => clock.adjust(ms) }
      })
      const DAY = 24 * 60 * 60 * 1000

      test(
        "a released handle stays its former owner's for 30 days, in storage: every instance redirects it and refuses it to others; then anyone may take it",
        Effect.scoped(Effect.gen(function*() {
          const { first, second, at, pass } = yield* twoInstancesWithClock
          const dom = (yield* at(first.create({ name: "Dom", plan: "free", handle: "dom-y" }))).account
          const other = (yield* at(second.create({ name: "Other", plan: "free" }))).account
          expect((yield* at(first.updateSettings(dom.id, { handle: "dom-z" }))).handle).toBe("dom-z")
          expect(yield* at(second.byHandle("dom-y"))).toEqual(Option.none())
          expect(yield* at(second.movedTo("dom-y"))).toEqual(Option.some("dom-z"))
          const refused = (operation: Effect.Effect<unknown, unknown>) =>
            Effect.map(
              Effect.flip(at(operation)),
              (error) => expect(error).toMatchObject({ _tag: "HandleTaken", detail: expect.stringContaining("released") })
            )
          yield* refused(second.updateSettings(other.id, { handle: "dom-y" }))
          yield* refused(second.update(other.id, { handle: "dom-y" }))
          yield* refused(second.create({ name: "Taker", plan: "free", handle: "dom-y" }))
          // A name that gives it gets the next handle instead.
          expect((yield* at(second.create({ name: "Dom Y", plan: "free" }))).account.handle).toBe("dom-y-2")
          yield* pass(30 * DAY - 1)
          yield* refused(second.updateSettings(other.id, { handle: "dom-y" }))
          expect(yield* at(first.movedTo("dom-y"))).toEqual(Option.some("dom-z"))
          yield* pass(1)
          expect(yield* at(first.movedTo("dom-y"))).toEqual(Option.none())
          expect((yield* at(second.updateSettings(other.id, { handle: "dom-y" }))).handle).toBe("dom-y")
          expect(Option.map(yield* at(first.byHandle("dom-y")), (a) => a.id)).toEqual(Option.some(other.id))
          expect(yield* Effect.flip(at(first.updateSettings(dom.id, { handle: "dom-y" })))).toMatchObject({ _tag: "HandleTaken" })
          // A lapsed hold claimed by several accounts at once, from both instances: one owner.
          yield* at(second.updateSettings(other.id, { handle: "dom-w" }))
          yield* pass(30 * DAY)
          const takers = yield* Effect.forEach(
            ["T1", "T2", "T3", "T4"],
            (name) => Effect.map(at(first.create({ name, plan: "free" })), (c) => c.account)
          )
          const outcomes = yield* Effect.forEach(
            takers,
            (taker, i) => Effect.either(at((i % 2 === 0 ? first : second).updateSettings(taker.id, { handle: "dom-y" }))),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter(Either.isRight)).toHaveLength(1)
          const winner = outcomes.find(Either.isRight)!.right
          expect(Option.map(yield* at(second.byHandle("dom-y")), (a) => a.id)).toEqual(Option.some(winner.id))
          expect((yield* handleMap).filter((e) => e.id === "dom-y")).toEqual([{ id: "dom-y", account_id: winner.id }])
        })),
        30_000
      )

      test(
        "the former owner takes a held handle back, from another instance, and the handle it leaves is held in turn",
        Effect.scoped(Effect.gen(function*() {
          const { first, second, at, pass } = yield* twoInstancesWithClock
          const owner = (yield* at(first.create({ name: "Back", plan: "free", handle: "back-forth" }))).account
          const other = (yield* at(first.create({ name: "Other", plan: "free" }))).account
          yield* at(first.updateSettings(owner.id, { handle: "forth-back" }))
          yield* pass(10 * DAY)
          expect((yield* at(second.update(owner.id, { handle: "back-forth" }))).handle).toBe("back-forth")
          expect(Option.map(yield* at(first.byHandle("back-forth")), (a) => a.id)).toEqual(Option.some(owner.id))
          expect(yield* at(first.movedTo("back-forth"))).toEqual(Option.none())
          expect(yield* at(first.movedTo("forth-back"))).toEqual(Option.some("back-forth"))
          expect(yield* Effect.flip(at(second.updateSettings(other.id, { handle: "forth-back" })))).toMatchObject({ _tag: "HandleTaken" })
          const held = (yield* handleMap).filter((e) => e.account_id === owner.id).map((e) => [e.id, e.held_until ?? null]).sort()
          expect(held).toEqual([["back-forth", null], ["forth-back", "2027-04-10T00:00:00Z"]])
        })),
        30_000
      )

      test(
        "accounts stored before handles existed get one from two processes starting at once, each distinct",
        Effect.scoped(Effect.gen(function*() {
          const stored = yield* storageOf(AccountsCollection)
          const legacy = ["acc_01J0000000000000000000000A", "acc_01J0000000000000000000000B", "acc_01J0000000000000000000000C"]
          for (const id of legacy) {
            const { handle: _handle, branding: _branding, ...earlier } = {
              id,
              object: "account",
              name: "Old Shop",
              handle: "",
              plan: "free",
              allowed_origins: [],
              branding: null,
              rate_limit_per_minute: null,
              limits: { requests_per_minute: 60 },
              metadata: {},
              created_at: "2026-01-01T00:00:00Z",
              updated_at: "2026-01-01T00:00:00Z"
            }
            yield* stored.insert(earlier as unknown as Account).pipe(as(SYSTEM_TENANT))
          }
          const [first, second] = yield* Effect.all([accountsService, accountsService], { concurrency: "unbounded" })
          const handles = yield* Effect.forEach(legacy, (id) => Effect.map(first.get(id), (a) => a.handle))
          expect([...handles].sort()).toEqual(["old-shop", "old-shop-2", "old-shop-3"])
          expect(yield* second.assignMissingHandles).toBe(0)
          for (const [i, id] of legacy.entries()) {
            expect(Option.map(yield* second.byHandle(handles[i]!), (a) => a.id)).toEqual(Option.some(id))
          }
          expect((yield* handleMap).map((e) => e.id).sort()).toEqual(["old-shop", "old-shop-2", "old-shop-3"])
        })),
        30_000
      )
    })

    describe("calendar feeds' token map", () => {
      /** The core's feeds over this store, rendering each feed as its name and its events' UIDs. */
      const feedsOver = Effect.map(
        Layer.build(CalendarFeeds.Default.pipe(Layer.provide(Layer.merge(
          Layer.succeed(CalendarRenderer, {
            render: (calendar) => [calendar.name, ...calendar.events.map((e) => `${e.uid} ${e.summary}`)].join("\n")
          }),
          Events.Default
        )))),
        (context) => Context.get(context, CalendarFeeds)
      )
      const tokenOf = (url: string) => /([A-Za-z0-9_-]{43})\.ics$/.exec(url)![1]!

      /** A staff member with one confirmed booking tomorrow of a client, written straight into the tenant's collections. */
      const staffWithBooking = (tenant: TenantId, suffix: string) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const stamp = formatInstant(now)
          const member = {
            id: `stf_${suffix.repeat(26)}`,
            object: "staff",
            name: `Staff ${suffix}`,
            email: null,
            time_zone: "UTC",
            active: true,
            metadata: {},
            created_at: stamp,
            updated_at: stamp
          } as Staff
          const booking = {
            id: `bkg_${suffix.repeat(26)}`,
            object: "booking",
            service_id: "svc_none",
            staff_id: member.id,
            client_id: `cli_${suffix.repeat(26)}`,
            start: formatInstant(now + 86_400_000),
            end: formatInstant(now + 86_400_000 + 1_800_000),
            status: "confirmed",
            notes: null,
            cancellation_reason: null,
            price: null,
            amount_paid: null,
            payment_status: "unpaid",
            rescheduled_from: null,
            buffer_before_minutes: 0,
            buffer_after_minutes: 0,
            metadata: {},
            created_at: stamp,
            updated_at: stamp
          } as Booking
          yield* (yield* storageOf(StaffCollection)).insert(member)
          yield* (yield* storageOf(ClientsCollection)).insert(
            {
              ...member,
              id: `cli_${suffix.repeat(26)}`,
              object: "client",
              name: `Client ${suffix}`,
              phone: null,
              time_zone: null,
              notes: null
            } as Client
          )
          yield* (yield* storageOf(BookingsCollection)).insert(booking)
          return member.id
        }).pipe(as(tenant))

      const entries = Effect.flatMap(storageOf(CalendarFeedTokensCollection), (map) => map.list({})).pipe(as(CALENDAR_FEED_TOKENS_TENANT))

      test(
        "maps each token's hash to its tenant; a rotation or deletion replaces or removes the entry, and a token opens only its tenant's bookings",
        Effect.scoped(Effect.gen(function*() {
          const feeds = yield* feedsOver
          const staffA = yield* staffWithBooking(tenantA, "A")
          const staffB = yield* staffWithBooking(tenantB, "B")
          const a1 = yield* feeds.create(staffA).pipe(as(tenantA))
          const b = yield* feeds.create(staffB).pipe(as(tenantB))
          expect((yield* entries).map((e) => [e.account_id, e.environment, e.feed_id]).sort()).toEqual([
            ["acct_a", "sandbox", staffA],
            ["acct_b", "sandbox", staffB]
          ])
          // Only hashes are stored, never the token.
          for (const entry of yield* entries) expect(entry.id).toMatch(/^[0-9a-f]{64}$/)
          expect((yield* feeds.render(tokenOf(a1.url))).body.split("\n").slice(1)).toEqual([
            `bkg_${"A".repeat(26)}@127.0.0.1 Booking: Client A`
          ])
          expect((yield* feeds.render(tokenOf(b.url))).body.split("\n").slice(1)).toEqual([
            `bkg_${"B".repeat(26)}@127.0.0.1 Booking: Client B`
          ])

          const a2 = yield* feeds.create(staffA).pipe(as(tenantA))
          expect(yield* entries).toHaveLength(2)
          expect((yield* Effect.flip(feeds.render(tokenOf(a1.url))))._tag).toBe("NotFound")
          expect((yield* feeds.render(tokenOf(a2.url))).body).toContain(`bkg_${"A".repeat(26)}@127.0.0.1`)

          yield* feeds.delete(staffB).pipe(as(tenantB))
          expect((yield* entries).map((e) => e.account_id)).toEqual(["acct_a"])
          expect((yield* Effect.flip(feeds.render(tokenOf(b.url))))._tag).toBe("NotFound")
        }))
      )

      test(
        "a feed made in a transaction that fails leaves no entry; an erased tenant's entry opens nothing",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const feeds = yield* feedsOver
          const staffA = yield* staffWithBooking(tenantA, "A")
          yield* Effect.either(storage.transaction(Effect.zipRight(feeds.create(staffA), Effect.fail("no")))).pipe(as(tenantA))
          expect(yield* entries).toEqual([])
          expect((yield* Effect.flip(feeds.get(staffA).pipe(as(tenantA))))._tag).toBe("NotFound")

          const made = yield* feeds.create(staffA).pipe(as(tenantA))
          yield* storage.eraseTenant.pipe(as(tenantA))
          expect((yield* Effect.flip(feeds.render(tokenOf(made.url))))._tag).toBe("NotFound")
        }))
      )
    })
    describe("team bookings", () => {
      test(
        "a booking keeps staff_ids and assigned_by; a collective one's further members are found by staff and time, and go with it",
        Effect.gen(function*() {
          const storage = yield* Storage
          const bookings = storage.collection(BookingsCollection)
          const rows = storage.collection(MemberOccupancyCollection)
          const shared = makeMemberOccupancy(storage)
          const now = Date.parse("2027-03-26T08:00:00Z")
          const base = sampleBooking(now)
          const members = [base.staff_id, "stf_01JQ4Z8X9V3K7M2N5P6R8T0W1Y", "stf_01JQ4Z8X9V3K7M2N5P6R8T0W1Z"]
          const booking = { ...base, staff_ids: members, assigned_by: "collective" as const }
          yield* storage.transaction(Effect.zipRight(bookings.insert(booking), shared.sync(booking))).pipe(as(tenantA))
          expect(yield* bookings.get(booking.id).pipe(as(tenantA))).toEqual(Option.some(booking))
          const start = Date.parse(booking.start)
          const overlapping = (staffId: string) =>
            rows.listIndexes({
              where: [
                { column: "staff_id", op: "in", value: [staffId] },
                { column: "occupied_start", op: "lt", value: start + 1 },
                { column: "occupied_end", op: "gt", value: start },
                { column: "expires_ms", op: "gt", value: now }
              ],
              columns: ["source_id", "kind"]
            }).pipe(Effect.map((found) => found.map(({ id, kind, source_id }) => ({ id, source_id, kind }))))
          expect(yield* overlapping(members[2]!).pipe(as(tenantA))).toEqual([
            { id: `${booking.id}.${members[2]}`, source_id: booking.id, kind: "booking" }
          ])
          // The first member is the booking's own staff_id: no row; another tenant sees none.
          expect(yield* overlapping(members[0]!).pipe(as(tenantA))).toEqual([])
          expect(yield* overlapping(members[2]!).pipe(as(tenantB))).toEqual([])
          const cancelled = { ...booking, status: "cancelled" as const }
          yield* storage.transaction(Effect.zipRight(bookings.update(cancelled), shared.sync(cancelled, booking))).pipe(as(tenantA))
          expect(yield* overlapping(members[1]!).pipe(as(tenantA))).toEqual([])
        })
      )
    })
    describe("reminders", () => {
      /** An instance's firing over this store, as another process sharing the database would build it. */
      const firingOver = (storage: Context.Tag.Service<Storage>) =>
        Effect.flatMap(
          Layer.build(Events.Default.pipe(Layer.provide(Layer.succeed(Storage, storage)))),
          (context) => Effect.provide(makeReminderFiring, context)
        )
      const job = (tenant: TenantId, booking: Booking, offset: number, dueMs: number): DueReminder => ({
        id: dueReminderId(booking.id, offset),
        booking_id: booking.id,
        offset_minutes: offset,
        start_ms: Date.parse(booking.start),
        due_ms: dueMs,
        tenant_key: tenantKeyOf(tenant)
      })

      test(
        "due jobs: fired once however many instances fire at once, each tenant's in its own log; later ones wait; erased with their tenant",
        Effect.scoped(Effect.gen(function*() {
          const storage = yield* Storage
          const jobs = storage.collection(ReminderJobsCollection)
          const now = yield* Clock.currentTimeMillis
          const booking = { ...sampleBooking(now), start: formatInstant(now + 3_600_000), status: "confirmed" as const }
          for (const tenant of [tenantA, tenantB]) {
            yield* storage.collection(BookingsCollection).insert(booking).pipe(as(tenant))
            yield* jobs.insert(job(tenant, booking, 60, now - 1000)).pipe(as(tenant))
          }
          const later = job(tenantA, booking, 30, now + 1_800_000)
          yield* jobs.insert(later).pipe(as(tenantA))
          expect(
            (yield* jobs.listIndexes({ where: [{ column: "booking_id", op: "eq", value: booking.id }], columns: [] }).pipe(as(tenantA)))
              .map((row) => row.id).sort()
          ).toEqual([dueReminderId(booking.id, 30), dueReminderId(booking.id, 60)])

          const instances = [yield* firingOver(storage), yield* firingOver(storage), yield* firingOver(storage)]
          const nexts = yield* Effect.all(instances.map((firing) => firing.fireDue), { concurrency: "unbounded" })
          expect(nexts).toEqual(nexts.map(() => later.due_ms))
          for (const tenant of [tenantA, tenantB]) {
            const sent = yield* storage.events.read({ after: 0, limit: 10, types: ["booking.reminder"] }).pipe(as(tenant))
            expect(
              sent.map((row) => [row.tenant, (row.event.data.object as Booking).id, row.event.data.offset_minutes, row.event.data.late])
            )
              .toEqual([[tenant, booking.id, 60, false]])
          }
          expect((yield* jobs.listAcrossTenants({})).map((row) => row.doc)).toEqual([later])
          // Fired again: nothing new.
          yield* instances[0]!.fireDue
          expect(yield* storage.events.read({ after: 0, limit: 10, types: ["booking.reminder"] }).pipe(as(tenantA))).toHaveLength(1)

          yield* storage.eraseTenant.pipe(as(tenantA))
          expect(yield* jobs.listAcrossTenants({})).toEqual([])
        }))
      )

      test(
        "the account's reminders are copied into both environments, replacing the earlier copy",
        Effect.gen(function*() {
          const storage = yield* Storage
          const settings = storage.collection(ReminderSettingsCollection)
          yield* storage.transaction(copyAccountReminders(storage, "acct_a", [{ offset_minutes: 60 }]))
          yield* storage.transaction(copyAccountReminders(storage, "acct_a", [{ offset_minutes: 30 }, { offset_minutes: 1440 }]))
          for (const tenant of [tenantA, tenantAProd]) {
            expect((yield* settings.list({}).pipe(as(tenant))).map((s) => s.reminders))
              .toEqual([[{ offset_minutes: 30 }, { offset_minutes: 1440 }]])
          }
          expect(yield* settings.list({}).pipe(as(tenantB))).toEqual([])
        })
      )
    })
  })
}
