/**
 * The core's use cases as an Effect user runs them: services from context over the
 * in-memory storage, the tenant as a service, time from TestClock, failures as typed values
 * (`Effect.flip`). Each test gets its own store (`Effect.provide(CoreTest)`); `layer(...)`
 * shares one across a block where the tests only read what the block set up.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Availability } from "../../src/availability/Availability.js"
import { Bookings } from "../../src/bookings/Bookings.js"
import { Clients } from "../../src/clients/Clients.js"
import { Services } from "../../src/services/Services.js"
import { Staff } from "../../src/staff/Staff.js"
import { CoreTest, type CoreTestServices } from "../support/coreTest.js"

/** Friday 2027-03-26 09:00 Berlin; Monday 2027-03-29 09:00 Berlin (after the DST change) is MONDAY_9. */
const NOW = Date.parse("2027-03-26T08:00:00Z")
const MONDAY_9 = "2027-03-29T07:00:00Z"
const MONDAY_9_30 = "2027-03-29T07:30:00Z"

/** The effect over a store of its own, at NOW on the test's clock. */
const fresh = <A, E>(effect: Effect.Effect<A, E, CoreTestServices>) => Effect.provide(effect, CoreTest)

/** A salon: a stylist working weekdays 09:00–17:00 in Berlin, a 30-minute haircut, a client. */
const salon = (service: { readonly requires_confirmation?: boolean; readonly capacity?: number } = {}) =>
  Effect.gen(function*() {
    const staff = yield* (yield* Staff).create({ name: "Ana", time_zone: "Europe/Berlin" })
    yield* (yield* Availability).create({
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5],
      start_time: "09:00",
      end_time: "17:00"
    })
    const haircut = yield* (yield* Services).create({ name: "Haircut", duration_minutes: 30, staff_ids: [staff.id], ...service })
    const client = yield* (yield* Clients).create({ name: "Bo", email: "bo@example.com" })
    return { staffId: staff.id, serviceId: haircut.id, clientId: client.id }
  })

describe("Bookings", () => {
  it.effect("create: confirmed at the service's length, with the clock's time as created_at", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon()
      const booking = yield* (yield* Bookings).create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(booking).toMatchObject({ status: "confirmed", start: MONDAY_9, end: MONDAY_9_30, created_at: "2027-03-26T08:00:00Z" })
    })))

  it.effect("create: a service that requires confirmation starts pending", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon({ requires_confirmation: true })
      const booking = yield* (yield* Bookings).create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(booking.status).toBe("pending")
    })))

  it.effect("refusals are typed: a taken slot, a start outside hours, an unknown reference, a bad field", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon()
      const bookings = yield* Bookings
      const at = (start: string) => ({ service_id: serviceId, staff_id: staffId, client_id: clientId, start })
      yield* bookings.create(at(MONDAY_9))
      const taken = yield* Effect.flip(bookings.create(at("2027-03-29T07:15:00Z")))
      expect(taken).toMatchObject({ _tag: "SlotUnavailable" })
      const evening = yield* Effect.flip(bookings.create(at("2027-03-29T16:45:00Z")))
      expect(evening._tag).toBe("OutsideAvailability")
      const unknown = yield* Effect.flip(bookings.create({ ...at(MONDAY_9_30), client_id: "cli_00000000000000000000000000" }))
      expect(unknown).toMatchObject({ _tag: "InvalidReference", errors: [{ path: "client_id" }] })
      const malformed = yield* Effect.flip(bookings.create({ ...at("next monday") }))
      expect(malformed).toMatchObject({ _tag: "ValidationFailed", errors: [{ path: "start" }] })
    })))

  it.effect("refuses a start inside the notice period, as the clock reads it", () =>
    fresh(Effect.gen(function*() {
      const staff = yield* (yield* Staff).create({ name: "Ana", time_zone: "UTC" })
      yield* (yield* Availability).create({
        staff_id: staff.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5, 6, 7],
        start_time: "00:00",
        end_time: "23:59"
      })
      const svc = yield* (yield* Services).create({ name: "Call", duration_minutes: 30, staff_ids: [staff.id], min_notice_minutes: 120 })
      const client = yield* (yield* Clients).create({ name: "Bo" })
      const inOneHour = { service_id: svc.id, staff_id: staff.id, client_id: client.id, start: "2027-03-26T09:00:00Z" }
      expect((yield* Effect.flip((yield* Bookings).create(inOneHour)))._tag).toBe("OutsideAvailability")
      // Two hours earlier on the clock, the same start is far enough ahead.
      yield* TestClock.setTime(NOW - 2 * 3_600_000)
      expect((yield* (yield* Bookings).create(inOneHour)).status).toBe("confirmed")
    })))

  it.effect("transitions follow the status table; final states refuse every action", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon({ requires_confirmation: true })
      const bookings = yield* Bookings
      const pending = yield* bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      // Completing before the start, or before confirming, is not allowed.
      expect((yield* Effect.flip(bookings.complete(pending.id)))._tag).toBe("InvalidTransition")
      expect((yield* bookings.confirm(pending.id)).status).toBe("confirmed")
      expect((yield* Effect.flip(bookings.complete(pending.id)))._tag).toBe("InvalidTransition")
      yield* TestClock.setTime(Date.parse(MONDAY_9_30))
      expect((yield* bookings.complete(pending.id)).status).toBe("completed")
      for (const action of [bookings.confirm, bookings.noShow, (id: string) => bookings.cancel(id)]) {
        expect((yield* Effect.flip(action(pending.id)))._tag).toBe("InvalidTransition")
      }
      expect((yield* Effect.flip(bookings.confirm("bkg_00000000000000000000000000")))._tag).toBe("NotFound")
    })))

  it.effect("reschedule keeps the status, records the previous start and frees the old slot", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon()
      const bookings = yield* Bookings
      const booking = yield* bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      const moved = yield* bookings.reschedule(booking.id, { start: MONDAY_9_30 })
      expect(moved).toMatchObject({ status: "confirmed", start: MONDAY_9_30, rescheduled_from: MONDAY_9 })
      const again = yield* bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(again.start).toBe(MONDAY_9)
      const cancelled = yield* bookings.cancel(moved.id, { reason: "ill" })
      expect(cancelled).toMatchObject({ status: "cancelled", cancellation_reason: "ill" })
      expect((yield* Effect.flip(bookings.reschedule(moved.id, { start: MONDAY_9 })))._tag).toBe("InvalidTransition")
    })))
})

describe("Availability.slots", () => {
  it.effect("lists each start of the staff member's hours at the service's step, and not a booked one", () =>
    fresh(Effect.gen(function*() {
      const { clientId, serviceId, staffId } = yield* salon()
      const availability = yield* Availability
      const day = { service_id: serviceId, start: "2027-03-29T00:00:00Z", end: "2027-03-30T00:00:00Z" }
      const before = (yield* availability.slots(day)).data
      // 09:00–17:00 Berlin (UTC+2 after the change) in 30-minute steps.
      expect(before).toHaveLength(16)
      expect(before[0]).toMatchObject({ start: MONDAY_9, end: MONDAY_9_30, staff_id: staffId, remaining: 1 })
      expect(before.at(-1)!.start).toBe("2027-03-29T14:30:00Z")
      yield* (yield* Bookings).create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      const after = (yield* availability.slots(day)).data.map((slot) => slot.start)
      expect(after).toHaveLength(15)
      expect(after).not.toContain(MONDAY_9)
    })))

  it.effect("a range longer than 62 days or ending before it starts is a typed validation failure", () =>
    fresh(Effect.gen(function*() {
      const { serviceId } = yield* salon()
      const availability = yield* Availability
      const long = yield* Effect.flip(
        availability.slots({ service_id: serviceId, start: "2027-03-29T00:00:00Z", end: "2027-06-29T00:00:00Z" })
      )
      expect(long).toMatchObject({ _tag: "ValidationFailed", errors: [{ path: "end" }] })
      const backwards = yield* Effect.flip(
        availability.slots({ service_id: serviceId, start: "2027-03-29T00:00:00Z", end: "2027-03-28T00:00:00Z" })
      )
      expect(backwards._tag).toBe("ValidationFailed")
    })))
})

describe("Clients", () => {
  layer(CoreTest)((it) => {
    it.effect("create, read, update and list within the tenant; an unknown id is NotFound", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const ann = yield* clients.create({ name: "Ann", email: "ann@example.com" })
        expect(yield* clients.get(ann.id)).toEqual(ann)
        const renamed = yield* clients.update(ann.id, { name: "Anne" })
        expect(renamed).toMatchObject({ id: ann.id, name: "Anne", email: "ann@example.com" })
        expect((yield* clients.list()).data.map((c) => c.id)).toContain(ann.id)
        expect((yield* Effect.flip(clients.get("cli_00000000000000000000000000")))._tag).toBe("NotFound")
      }))

    it.effect("refuses a malformed email and an unknown field, naming each", () =>
      Effect.gen(function*() {
        const clients = yield* Clients
        const refused = yield* Effect.flip(clients.create({ name: "Cy", email: "not an email", shoe_size: 44 } as never))
        expect(refused._tag).toBe("ValidationFailed")
        expect((refused as { errors: ReadonlyArray<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual(["email", "shoe_size"])
      }))

    it.effect("a client with an upcoming booking cannot be deleted; once cancelled it can", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const { clientId } = yield* salon()
        const services = (yield* (yield* Services).list()).data
        const staffId = services[0]!.staff_ids[0]!
        const booking = yield* (yield* Bookings).create({
          service_id: services[0]!.id,
          staff_id: staffId,
          client_id: clientId,
          start: MONDAY_9
        })
        const clients = yield* Clients
        expect((yield* Effect.flip(clients.delete(clientId)))._tag).toBe("ResourceInUse")
        yield* (yield* Bookings).cancel(booking.id)
        yield* clients.delete(clientId)
        expect((yield* Effect.flip(clients.get(clientId)))._tag).toBe("NotFound")
      }))
  })
})
