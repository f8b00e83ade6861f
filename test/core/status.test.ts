/**
 * docs/api.md §3 "Booking status rules": every (from status, action) pair, by the action
 * endpoints and by `update({ status })`, allowed ones reaching the table's status with its
 * event and refused ones giving `invalid_transition` with nothing changed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { BookingStatus } from "../../src/bookings/index.js"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"
import { MONDAY_9 } from "../support/fixtures.js"

type Action = "confirm" | "cancel" | "reschedule" | "complete" | "noShow"
const ACTIONS: ReadonlyArray<Action> = ["confirm", "cancel", "reschedule", "complete", "noShow"]
const STATUSES: ReadonlyArray<BookingStatus> = ["pending", "confirmed", "cancelled", "completed", "no_show"]

/** The table, for a booking whose start has passed (so complete/no-show are possible). */
const ALLOWED: Record<BookingStatus, Partial<Record<Action, { to: BookingStatus; event: string }>>> = {
  pending: {
    confirm: { to: "confirmed", event: "booking.updated" },
    cancel: { to: "cancelled", event: "booking.cancelled" },
    reschedule: { to: "pending", event: "booking.rescheduled" }
  },
  confirmed: {
    cancel: { to: "cancelled", event: "booking.cancelled" },
    reschedule: { to: "confirmed", event: "booking.rescheduled" },
    complete: { to: "completed", event: "booking.updated" },
    noShow: { to: "no_show", event: "booking.updated" }
  },
  cancelled: {},
  completed: {},
  no_show: {}
}

/** A booking on Monday 09:00 brought to `status`, with the clock after its start when asked. */
const bookingIn = (status: BookingStatus, afterStart: boolean) =>
  Effect.gen(function*() {
    const s = yield* core
    const fixture = yield* salonIn({ requires_confirmation: status === "pending" })
    const booking = yield* s.bookings.create({
      service_id: fixture.serviceId,
      staff_id: fixture.staffId,
      client_id: fixture.clientId,
      start: MONDAY_9
    })
    expect(booking.status).toBe(status === "pending" ? "pending" : "confirmed")
    if (status === "cancelled") yield* s.bookings.cancel(booking.id, { reason: "ill" })
    if (status === "completed" || status === "no_show") {
      yield* TestClock.setTime(Date.parse("2027-03-29T07:45:00Z"))
      yield* (status === "completed" ? s.bookings.complete(booking.id) : s.bookings.noShow(booking.id))
    }
    if (afterStart) yield* TestClock.setTime(Date.parse("2027-03-29T07:45:00Z"))
    return { ...fixture, s, booking: yield* s.bookings.get(booking.id) }
  })

const perform = (s: Effect.Effect.Success<typeof core>, action: Action, id: string) => {
  switch (action) {
    case "reschedule":
      return s.bookings.reschedule(id, { start: "2027-03-30T07:00:00Z" })
    case "cancel":
      return s.bookings.cancel(id, { reason: "changed plans" })
    default:
      return s.bookings[action](id)
  }
}

describe("booking status rules, by action", () => {
  for (const from of STATUSES) {
    for (const action of ACTIONS) {
      const allowed = ALLOWED[from][action]
      it.effect(`${from} --${action}--> ${allowed ? allowed.to : "409 invalid_transition"}`, () =>
        Effect.gen(function*() {
          // Reschedule needs a future booking; complete/no-show need one that has started.
          const afterStart = action === "complete" || action === "noShow"
          const { s, booking } = yield* bookingIn(from, afterStart)
          const eventsBefore = (yield* s.events.list({ limit: 100 })).data.length
          if (allowed) {
            const next = yield* perform(s, action, booking.id)
            expect(next.status).toBe(allowed.to)
            const events = (yield* s.events.list({ limit: 100 })).data
            const last = events[events.length - 1]!
            expect(last.type).toBe(allowed.event)
            expect((last.data.object as any).id).toBe(booking.id)
            expect((last.data.previous as any).status).toBe(from)
          } else {
            const error = yield* refusal(perform(s, action, booking.id))
            expect(error).toMatchObject({ code: "invalid_transition", status: 409, name: "InvalidTransitionError" })
            expect((yield* s.bookings.get(booking.id)).status).toBe(from)
            expect((yield* s.events.list({ limit: 100 })).data.length).toBe(eventsBefore)
          }
        }).pipe(Effect.provide(CoreTest)))
    }
  }

  it.effect("complete and no-show are refused before the booking starts", () =>
    Effect.gen(function*() {
      const { s, booking } = yield* bookingIn("confirmed", false)
      expect(yield* refusal(s.bookings.complete(booking.id))).toMatchObject({ code: "invalid_transition" })
      expect(yield* refusal(s.bookings.noShow(booking.id))).toMatchObject({ code: "invalid_transition" })
      yield* TestClock.setTime(Date.parse(MONDAY_9))
      expect((yield* s.bookings.complete(booking.id)).status).toBe("completed")
    }).pipe(Effect.provide(CoreTest)))
})

describe("booking status rules, by update({ status })", () => {
  const ACTION_OF: Record<BookingStatus, Action | undefined> = {
    pending: undefined,
    confirmed: "confirm",
    cancelled: "cancel",
    completed: "complete",
    no_show: "noShow"
  }
  for (const from of STATUSES) {
    for (const to of STATUSES) {
      const action = ACTION_OF[to]
      const allowed = action !== undefined ? ALLOWED[from][action] : undefined
      it.effect(`${from} -> ${to} is ${allowed ? "allowed" : "refused"}`, () =>
        Effect.gen(function*() {
          const { s, booking } = yield* bookingIn(from, true)
          if (allowed) {
            expect((yield* s.bookings.update(booking.id, { status: to })).status).toBe(to)
          } else {
            expect(yield* refusal(s.bookings.update(booking.id, { status: to }))).toMatchObject({ code: "invalid_transition", status: 409 })
            expect((yield* s.bookings.get(booking.id)).status).toBe(from)
          }
        }).pipe(Effect.provide(CoreTest)))
    }
  }
})

describe("cancellation", () => {
  it.effect("keeps the reason, and delete() cancels idempotently but keeps the record", () =>
    Effect.gen(function*() {
      const { s, booking } = yield* bookingIn("confirmed", false)
      const cancelled = yield* s.bookings.cancel(booking.id, { reason: "ill" })
      expect(cancelled).toMatchObject({ status: "cancelled", cancellation_reason: "ill" })
      const again = yield* s.bookings.delete(booking.id)
      expect(again).toEqual(cancelled)
      expect((yield* s.bookings.get(booking.id)).status).toBe("cancelled")
      const cancellations = (yield* s.events.list({ types: ["booking.cancelled"] })).data
      expect(cancellations).toHaveLength(1)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("delete() of a completed booking is an invalid transition", () =>
    Effect.gen(function*() {
      const { s, booking } = yield* bookingIn("completed", true)
      expect(yield* refusal(s.bookings.delete(booking.id))).toMatchObject({ code: "invalid_transition" })
    }).pipe(Effect.provide(CoreTest)))
})
