/** Booking reminders on the test clock: when they fire, how often, and what disarms them. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, TestClock } from "effect"
import { IN_PROCESS_POLL_MS } from "../../compose.js"
import { ReminderWorkerLive } from "../../adapters/reminders/worker.js"
import type { Booking } from "../../src/bookings/booking.js"
import { Events } from "../../src/events/Events.js"
import { BookingsCollection } from "../../src/ports/collections.js"
import { Storage } from "../../src/ports/storage.js"
import { Reminders } from "../../src/reminders/reminder.js"
import {
  makeReminderArming,
  makeReminderFiring,
  onReminderArmed,
  ReminderDefaults,
  ReminderJobsCollection,
  tenantKeyOf
} from "../../src/reminders/Reminders.js"
import type { Service } from "../../src/services/service.js"
import { core, CoreTest, coreTestLayer, refusal, salonIn } from "../support/coreTest.js"
import { at, MONDAY_9, NOW } from "../support/fixtures.js"

const ACCOUNT_REMINDERS = [{ offset_minutes: 1440 }, { offset_minutes: 60 }]

/** A sandbox of its own with the account's reminders and the worker that fires them on the test clock, as the library runs it. */
const WithReminders = ReminderWorkerLive({ maxSleepMs: IN_PROCESS_POLL_MS }).pipe(
  Layer.provideMerge(CoreTest),
  Layer.provide(Layer.succeed(ReminderDefaults, Schema.decodeUnknownSync(Reminders)(ACCOUNT_REMINDERS)))
)

const reminders = Effect.map(
  Effect.flatMap(Events, (events) => events.list({ types: ["booking.reminder"], limit: 100 })),
  (page) => page.data
)

/** Moves the test clock to `instant`; reminders due on the way fire in order. */
const setClock = (instant: string) => TestClock.setTime(Date.parse(instant))

const setUp = (service: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const s = yield* core
    const fixture = yield* salonIn(service)
    const book = (start = MONDAY_9) =>
      s.bookings.create({ service_id: fixture.serviceId, staff_id: fixture.staffId, client_id: fixture.clientId, start })
    return { ...fixture, s, book }
  })

describe("booking reminders", () => {
  it.effect("emits one reminder per account offset, at start minus the offset, with the booking", () =>
    Effect.gen(function*() {
      const { book } = yield* setUp()
      const booking = yield* book()
      yield* setClock(at(MONDAY_9, -1441))
      expect(yield* reminders).toEqual([])
      yield* setClock(at(MONDAY_9, -1440))
      const first = yield* reminders
      expect(first).toHaveLength(1)
      expect(first[0]).toMatchObject({
        type: "booking.reminder",
        created_at: at(MONDAY_9, -1440),
        data: { object: { id: booking.id, start: MONDAY_9, status: "confirmed" }, offset_minutes: 1440, late: false }
      })
      yield* setClock(at(MONDAY_9, 120))
      const all = yield* reminders
      expect(all.map((e) => [e.created_at, e.data.offset_minutes])).toEqual([
        [at(MONDAY_9, -1440), 1440],
        [at(MONDAY_9, -60), 60]
      ])
    }).pipe(Effect.provide(WithReminders)))

  it.effect("sends nothing for a cancelled booking, nor for a pending one until it is confirmed", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const { s, book } = yield* setUp()
        const cancelled = yield* book()
        yield* s.bookings.cancel(cancelled.id, {})
        yield* setClock(at(MONDAY_9, 120))
        expect(yield* reminders).toEqual([])
      }).pipe(Effect.provide(WithReminders))
      // A sandbox of its own for the second case.
      yield* Effect.gen(function*() {
        const pending = yield* setUp({ requires_confirmation: true })
        const waiting = yield* pending.book()
        yield* setClock(at(MONDAY_9, -1440))
        expect(yield* reminders).toEqual([])
        yield* pending.s.bookings.confirm(waiting.id)
        yield* setClock(at(MONDAY_9, -60))
        expect((yield* reminders).map((e) => e.data.offset_minutes)).toEqual([60])
      }).pipe(Effect.provide(WithReminders))
    }))

  it.effect("re-arms a rescheduled booking: nothing at the old time, one at the new", () =>
    Effect.gen(function*() {
      const { s, book } = yield* setUp()
      const booking = yield* book()
      const later = at(MONDAY_9, 120)
      yield* s.bookings.reschedule(booking.id, { start: later })
      yield* setClock(at(MONDAY_9, -1))
      const early = yield* reminders
      expect(early.map((e) => e.created_at)).toEqual([at(later, -1440)])
      yield* setClock(at(later, 1))
      const all = yield* reminders
      expect(all.map((e) => [e.created_at, e.data.offset_minutes])).toEqual([[at(later, -1440), 1440], [at(later, -60), 60]])
      expect(all.every((e) => (e.data.object as Booking).start === later)).toBe(true)
    }).pipe(Effect.provide(WithReminders)))

  it.effect("follows a service's own list instead of the account's, and none for an empty list", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const own = yield* setUp({ reminders: [{ offset_minutes: 30 }] })
        yield* own.book()
        yield* setClock(at(MONDAY_9, 1))
        expect((yield* reminders).map((e) => [e.created_at, e.data.offset_minutes])).toEqual([[at(MONDAY_9, -30), 30]])
      }).pipe(Effect.provide(WithReminders))
      // A sandbox of its own for the second case.
      yield* Effect.gen(function*() {
        const none = yield* setUp({ reminders: [] })
        yield* none.book()
        yield* setClock(at(MONDAY_9, 1))
        expect(yield* reminders).toEqual([])
      }).pipe(Effect.provide(WithReminders))
    }))

  it.effect("creates no reminder whose time has passed when the booking is made", () =>
    Effect.gen(function*() {
      const { book } = yield* setUp()
      // Monday 09:00 Berlin is 71 hours ahead: one day before is still ahead, so make it 30 minutes ahead.
      yield* setClock(at(MONDAY_9, -30))
      yield* book()
      yield* setClock(at(MONDAY_9, 1))
      expect(yield* reminders).toEqual([])
    }).pipe(Effect.provide(WithReminders)))

  it.effect("refuses invalid reminder lists on a service, naming the field", () =>
    Effect.gen(function*() {
      const { s } = yield* setUp()
      const tooShort = yield* refusal(s.services.create({ name: "Trim", duration_minutes: 15, reminders: [{ offset_minutes: 4 }] }))
      expect(tooShort).toMatchObject({ code: "validation_failed", errors: [{ path: "reminders.0.offset_minutes" }] })
      const repeated = yield* refusal(
        s.services.create({ name: "Trim", duration_minutes: 15, reminders: [{ offset_minutes: 60 }, { offset_minutes: 60 }] })
      )
      expect(repeated).toMatchObject({ code: "validation_failed", errors: [{ path: "reminders.1.offset_minutes" }] })
      const tooMany = yield* refusal(
        s.services.create({
          name: "Trim",
          duration_minutes: 15,
          reminders: [5, 6, 7, 8, 9, 10].map((offset_minutes) => ({ offset_minutes }))
        })
      )
      expect(tooMany).toMatchObject({ code: "validation_failed", errors: [{ path: "reminders" }] })
    }).pipe(Effect.provide(WithReminders)))
})

describe("firing due reminders", () => {
  const tenant = { account_id: `acc_${"1".repeat(26)}`, environment: "sandbox" } as const
  const NOW_MS = Date.parse(NOW)
  const booking = (startMs: number, status: Booking["status"] = "confirmed") =>
    ({ id: "bkg_01J0000000000000000000000A", service_id: "svc_x", start: new Date(startMs).toISOString(), status }) as unknown as Booking

  /** Stores `stored` with one job due `dueAgoMs` ago in a store of its own, fires, and answers the reminders emitted. */
  const fire = (stored: Booking, dueAgoMs: number) =>
    Effect.gen(function*() {
      const storage = yield* Storage
      const events = yield* Events
      const startMs = Date.parse(stored.start)
      yield* storage.collection(BookingsCollection).insert(stored)
      yield* storage.collection(ReminderJobsCollection).insert({
        id: `${stored.id}:60`,
        booking_id: stored.id,
        offset_minutes: 60,
        start_ms: startMs,
        due_ms: NOW_MS - dueAgoMs,
        tenant_key: tenantKeyOf(tenant)
      })
      const firing = yield* makeReminderFiring
      const next = yield* firing.fireDue
      const left = yield* storage.collection(ReminderJobsCollection).list({})
      const emitted = (yield* events.list({ types: ["booking.reminder"] })).data
      return { next, left, emitted }
    }).pipe(Effect.provide(coreTestLayer(NOW_MS, tenant)))

  it.effect("marks a reminder sent more than five minutes after its time as late", () =>
    Effect.gen(function*() {
      const late = yield* fire(booking(NOW_MS + 3_600_000), 6 * 60_000)
      expect(late.emitted.map((e) => e.data)).toMatchObject([{ offset_minutes: 60, late: true }])
      expect(late.left).toEqual([])
      const onTime = yield* fire(booking(NOW_MS + 3_600_000), 4 * 60_000)
      expect(onTime.emitted.map((e) => e.data)).toMatchObject([{ offset_minutes: 60, late: false }])
    }))

  it.effect("drops a missed reminder once the booking has started, and one whose booking moved or was cancelled", () =>
    Effect.gen(function*() {
      for (const stored of [booking(NOW_MS - 60_000), booking(NOW_MS + 3_600_000, "cancelled")]) {
        const outcome = yield* fire(stored, 3_600_000)
        expect(outcome.emitted).toEqual([])
        expect(outcome.left).toEqual([])
        expect(outcome.next).toBeNull()
      }
    }))
})

describe("waking the worker", () => {
  const tenant = { account_id: `acc_${"2".repeat(26)}`, environment: "sandbox" } as const
  const NOW_MS = Date.parse(NOW)
  const service = { id: "svc_x", reminders: [{ offset_minutes: 60 }] } as unknown as Service
  const booking = (startMs: number, status: Booking["status"] = "confirmed") =>
    ({ id: "bkg_01J0000000000000000000000B", service_id: "svc_x", start: new Date(startMs).toISOString(), status }) as unknown as Booking

  it.effect("tells the listener once per commit that armed a job, after the commit, and never for one that armed none", () =>
    Effect.gen(function*() {
      const storage = yield* Storage
      const arming = yield* makeReminderArming(storage)
      let wakes = 0
      const off = onReminderArmed(storage, () => wakes++)
      const seen: Array<[string, number]> = []
      const arm = (label: string, b: Booking) =>
        Effect.zipRight(
          storage.transaction(Effect.zipRight(arming.arm(b, { service }), Effect.sync(() => seen.push([`${label}, inside`, wakes])))),
          Effect.sync(() => seen.push([label, wakes]))
        )
      yield* arm("confirmed, due later", booking(NOW_MS + 3_600_000 * 3))
      yield* arm("cancelled", booking(NOW_MS + 3_600_000 * 3, "cancelled"))
      yield* arm("its moment passed", booking(NOW_MS + 30 * 60_000))
      // A change that rolls back armed nothing.
      yield* Effect.either(
        storage.transaction(Effect.zipRight(arming.arm(booking(NOW_MS + 3_600_000 * 5), { service }), Effect.fail("undo")))
      )
      seen.push(["rolled back", wakes])
      off()
      yield* arm("after unsubscribing", booking(NOW_MS + 3_600_000 * 6))
      expect(seen).toEqual([
        ["confirmed, due later, inside", 0],
        ["confirmed, due later", 1],
        ["cancelled, inside", 1],
        ["cancelled", 1],
        ["its moment passed, inside", 1],
        ["its moment passed", 1],
        ["rolled back", 1],
        ["after unsubscribing, inside", 1],
        ["after unsubscribing", 1]
      ])
    }).pipe(Effect.provide(coreTestLayer(NOW_MS, tenant))))
})
