/**
 * docs/api.md §3 "Booking status rules": every (from status, action) pair, by the action
 * endpoints and by `update({ status })`, allowed ones reaching the table's status with its
 * event and refused ones giving `invalid_transition` with nothing changed.
 */
import { describe, expect, it } from "vitest"
import type { BookingStatus } from "../../src/bookings/index.js"
import { failure, MONDAY_9, salon } from "../support/fixtures.js"

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
const bookingIn = async (status: BookingStatus, afterStart: boolean) => {
  const fixture = await salon({ requires_confirmation: status === "pending" })
  const { s } = fixture
  const booking = await s.bookings.create({
    service_id: fixture.serviceId,
    staff_id: fixture.staffId,
    client_id: fixture.clientId,
    start: MONDAY_9
  })
  expect(booking.status).toBe(status === "pending" ? "pending" : "confirmed")
  if (status === "cancelled") await s.bookings.cancel(booking.id, { reason: "ill" })
  if (status === "completed" || status === "no_show") {
    await s.clock.set("2027-03-29T07:45:00Z")
    await (status === "completed" ? s.bookings.complete(booking.id) : s.bookings.noShow(booking.id))
  }
  if (afterStart) await s.clock.set("2027-03-29T07:45:00Z")
  return { ...fixture, booking: await s.bookings.get(booking.id) }
}

const perform = (s: Awaited<ReturnType<typeof bookingIn>>["s"], action: Action, id: string) => {
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
      it(`${from} --${action}--> ${allowed ? allowed.to : "409 invalid_transition"}`, async () => {
        // Reschedule needs a future booking; complete/no-show need one that has started.
        const afterStart = action === "complete" || action === "noShow"
        const { s, booking } = await bookingIn(from, afterStart)
        const eventsBefore = (await s.events.list({ limit: 100 })).data.length
        if (allowed) {
          const next = await perform(s, action, booking.id)
          expect(next.status).toBe(allowed.to)
          const events = (await s.events.list({ limit: 100 })).data
          const last = events[events.length - 1]!
          expect(last.type).toBe(allowed.event)
          expect((last.data.object as any).id).toBe(booking.id)
          expect((last.data.previous as any).status).toBe(from)
        } else {
          const error = await failure(perform(s, action, booking.id))
          expect(error).toMatchObject({ code: "invalid_transition", status: 409, name: "InvalidTransitionError" })
          expect((await s.bookings.get(booking.id)).status).toBe(from)
          expect((await s.events.list({ limit: 100 })).data.length).toBe(eventsBefore)
        }
      })
    }
  }

  it("complete and no-show are refused before the booking starts", async () => {
    const { s, booking } = await bookingIn("confirmed", false)
    expect(await failure(s.bookings.complete(booking.id))).toMatchObject({ code: "invalid_transition" })
    expect(await failure(s.bookings.noShow(booking.id))).toMatchObject({ code: "invalid_transition" })
    await s.clock.set(MONDAY_9)
    expect((await s.bookings.complete(booking.id)).status).toBe("completed")
  })
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
      it(`${from} -> ${to} is ${allowed ? "allowed" : "refused"}`, async () => {
        const { s, booking } = await bookingIn(from, true)
        if (allowed) {
          expect((await s.bookings.update(booking.id, { status: to })).status).toBe(to)
        } else {
          expect(await failure(s.bookings.update(booking.id, { status: to }))).toMatchObject({ code: "invalid_transition", status: 409 })
          expect((await s.bookings.get(booking.id)).status).toBe(from)
        }
      })
    }
  }
})

describe("cancellation", () => {
  it("keeps the reason, and delete() cancels idempotently but keeps the record", async () => {
    const { s, booking } = await bookingIn("confirmed", false)
    const cancelled = await s.bookings.cancel(booking.id, { reason: "ill" })
    expect(cancelled).toMatchObject({ status: "cancelled", cancellation_reason: "ill" })
    const again = await s.bookings.delete(booking.id)
    expect(again).toEqual(cancelled)
    expect((await s.bookings.get(booking.id)).status).toBe("cancelled")
    const cancellations = (await s.events.list({ types: ["booking.cancelled"] })).data
    expect(cancellations).toHaveLength(1)
  })

  it("delete() of a completed booking is an invalid transition", async () => {
    const { s, booking } = await bookingIn("completed", true)
    expect(await failure(s.bookings.delete(booking.id))).toMatchObject({ code: "invalid_transition" })
  })
})
