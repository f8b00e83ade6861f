/** Booking checks 1–4 of docs/api.md §3, holds, events and "nothing half-written". */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { SlotwiseFailure } from "../../src/domain/errors.js"
import { Tenant, type TenantId } from "../../src/ports/tenant.js"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"
import { at, MONDAY_9, NOW } from "../support/fixtures.js"

const TUESDAY_9 = "2027-03-30T07:00:00Z"

describe("create", () => {
  it.effect("derives end, price and status from the service and records booking.created with the full booking", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({
        service_id: serviceId,
        staff_id: staffId,
        client_id: clientId,
        start: MONDAY_9,
        notes: "first visit",
        metadata: { source: "web" }
      })
      expect(booking).toMatchObject({
        object: "booking",
        start: MONDAY_9,
        end: at(MONDAY_9, 30),
        status: "confirmed",
        price: { amount: 4000, currency: "EUR" },
        amount_paid: null,
        payment_status: "unpaid",
        rescheduled_from: null,
        notes: "first visit",
        metadata: { source: "web" },
        created_at: NOW
      })
      expect(booking.id).toMatch(/^bkg_[0-9A-Z]{26}$/)
      const [event] = (yield* s.events.list({ types: ["booking.created"] })).data
      expect(event!.data.object).toEqual(booking)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("accepts an instant with an offset and stores it in UTC", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({
        service_id: serviceId,
        staff_id: staffId,
        client_id: clientId,
        start: "2027-03-29T09:00:00+02:00"
      })
      expect(booking.start).toBe(MONDAY_9)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("requires confirmation when the service asks for it", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ requires_confirmation: true })
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(booking.status).toBe("pending")
    }).pipe(Effect.provide(CoreTest)))

  it.effect("creates an inline client in the same step", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId } = yield* salonIn()
      const booking = yield* s.bookings.create({
        service_id: serviceId,
        staff_id: staffId,
        start: MONDAY_9,
        client: { name: "Cy", email: "cy@example.com" }
      })
      const client = yield* s.clients.get(booking.client_id)
      expect(client).toMatchObject({ name: "Cy", email: "cy@example.com" })
      const types = (yield* s.events.list({ limit: 100 })).data.map((e) => e.type)
      expect(types.slice(-2)).toEqual(["client.created", "booking.created"])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("picks the first free staff member of the service when staff_id is omitted", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const second = yield* s.staff.create({ name: "Ben", time_zone: "Europe/Berlin" })
      yield* s.availability.create({ staff_id: second.id, type: "weekly", weekdays: [1], start_time: "09:00", end_time: "12:00" })
      yield* s.services.update(serviceId, { staff_ids: [staffId, second.id] })
      const first = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      const next = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      expect([first.staff_id, next.staff_id]).toEqual([staffId, second.id])
      expect(yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))).toMatchObject({
        code: "slot_unavailable"
      })
    }).pipe(Effect.provide(CoreTest)))
})

describe("check 1: references exist, are active and match", () => {
  it.effect("refuses unknown, inactive and unassigned references with invalid_reference naming the field", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const other = yield* s.staff.create({ name: "Cat", time_zone: "UTC" })
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
      expect(yield* refusal(s.bookings.create({ ...base, service_id: "svc_00000000000000000000000000" }))).toMatchObject({
        code: "invalid_reference",
        status: 422,
        errors: [{ path: "service_id" }]
      })
      expect(yield* refusal(s.bookings.create({ ...base, client_id: "cli_00000000000000000000000000" }))).toMatchObject({
        code: "invalid_reference",
        errors: [{ path: "client_id" }]
      })
      expect(yield* refusal(s.bookings.create({ ...base, staff_id: other.id }))).toMatchObject({
        code: "invalid_reference",
        errors: [{ path: "staff_id" }]
      })
      yield* s.staff.update(staffId, { active: false })
      expect(yield* refusal(s.bookings.create(base))).toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
      yield* s.staff.update(staffId, { active: true })
      yield* s.services.update(serviceId, { active: false })
      expect(yield* refusal(s.bookings.create(base))).toMatchObject({ code: "invalid_reference", errors: [{ path: "service_id" }] })
      expect((yield* s.bookings.list()).data).toHaveLength(0)
    }).pipe(Effect.provide(CoreTest)))
})

describe("check 2: within availability", () => {
  it.effect("refuses starts outside hours, running past closing, on blocked time and on overridden dates", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
      const outside = yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, -30) }))
      expect(outside).toMatchObject({ code: "outside_availability", status: 409, reasons: [{ code: "outside_hours" }] })
      expect((outside.alternatives as Array<unknown>).length).toBe(3)
      // 16:45 + 30 min runs past 17:00.
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 7 * 60 + 45) }))).toMatchObject({
        code: "outside_availability"
      })
      expect((yield* s.bookings.create({ ...base, start: at(MONDAY_9, 7 * 60 + 30) })).end).toBe(at(MONDAY_9, 8 * 60))
      yield* s.availability.create({ staff_id: staffId, type: "blocked", start: at(MONDAY_9, 60), end: at(MONDAY_9, 120) })
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 90) }))).toMatchObject({ reasons: [{ code: "blocked" }] })
      yield* s.availability.create({ staff_id: staffId, type: "date", date: "2027-03-30", start_time: "13:00", end_time: "15:00" })
      expect(yield* refusal(s.bookings.create({ ...base, start: TUESDAY_9 }))).toMatchObject({ reasons: [{ code: "date_override" }] })
      expect((yield* s.bookings.create({ ...base, start: "2027-03-30T11:00:00Z" })).status).toBe("confirmed")
    }).pipe(Effect.provide(CoreTest)))
})

describe("check 3: no overlap, buffers and capacity", () => {
  it.effect("refuses an overlapping booking with the booking's id and offers the nearest free slots", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
      const first = yield* s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
      const error = yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 75) }))
      expect(error).toMatchObject({
        code: "slot_unavailable",
        status: 409,
        name: "SlotUnavailableError",
        reasons: [{ code: "booking_overlap", booking_id: first.id }]
      })
      expect((error.alternatives as Array<{ start: string }>).map((a) => a.start)).toEqual([
        at(MONDAY_9, 30),
        at(MONDAY_9, 90),
        at(MONDAY_9, 120)
      ])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("keeps buffers clear on both sides", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ buffer_before_minutes: 15, buffer_after_minutes: 15 })
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
      const first = yield* s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 90) }))).toMatchObject({
        reasons: [{ code: "buffer_overlap", booking_id: first.id }]
      })
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 30) }))).toMatchObject({
        reasons: [{ code: "buffer_overlap" }]
      })
      expect((yield* s.bookings.create({ ...base, start: at(MONDAY_9, 120) })).status).toBe("confirmed")
      expect((yield* s.bookings.create({ ...base, start: MONDAY_9 })).status).toBe("confirmed")
    }).pipe(Effect.provide(CoreTest)))

  it.effect("admits up to capacity bookings of the same service at the same start", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ capacity: 3, name: "Yoga" })
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
      for (let i = 0; i < 3; i++) yield* s.bookings.create(base)
      expect(yield* refusal(s.bookings.create(base))).toMatchObject({ code: "slot_unavailable", reasons: [{ code: "capacity_full" }] })
      // A different start that overlaps the class is a conflict, not another seat.
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 15) }))).toMatchObject({ code: "slot_unavailable" })
      const slots = yield* s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) })
      expect(slots.data.map((slot) => [slot.start, slot.remaining])).toEqual([[at(MONDAY_9, 30), 3]])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("frees the slot when a booking is cancelled", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
      const first = yield* s.bookings.create(base)
      yield* s.bookings.cancel(first.id)
      expect((yield* s.bookings.create(base)).status).toBe("confirmed")
    }).pipe(Effect.provide(CoreTest)))
})

describe("check 4: notice and advance", () => {
  it.effect("refuses starts sooner than the notice or further than the advance limit", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn({ min_notice_minutes: 24 * 60, max_advance_days: 14 })
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
      // Friday 2027-03-26 10:00 Berlin is two hours from now.
      expect(yield* refusal(s.bookings.create({ ...base, start: "2027-03-26T09:00:00Z" }))).toMatchObject({
        reasons: [{ code: "min_notice" }]
      })
      expect(yield* refusal(s.bookings.create({ ...base, start: "2027-04-12T07:00:00Z" }))).toMatchObject({
        reasons: [{ code: "max_advance" }]
      })
      expect((yield* s.bookings.create({ ...base, start: "2027-04-09T07:00:00Z" })).status).toBe("confirmed")
    }).pipe(Effect.provide(CoreTest)))
})

describe("reschedule", () => {
  it.effect("moves the booking, records the previous start and event, and frees the old slot", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
      const booking = yield* s.bookings.create({ ...base, start: MONDAY_9 })
      // Moving by 15 minutes overlaps only itself, which is allowed.
      const moved = yield* s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 15) })
      expect(moved).toMatchObject({ start: at(MONDAY_9, 15), end: at(MONDAY_9, 45), rescheduled_from: MONDAY_9, status: "confirmed" })
      const [event] = (yield* s.events.list({ types: ["booking.rescheduled"] })).data
      expect((event!.data.previous as any).start).toBe(MONDAY_9)
      expect((event!.data.object as any).start).toBe(at(MONDAY_9, 15))
      expect(yield* refusal(s.bookings.reschedule(booking.id, { start: at(MONDAY_9, -60) }))).toMatchObject({
        code: "outside_availability"
      })
      expect((yield* s.bookings.get(booking.id)).start).toBe(at(MONDAY_9, 15))
      const other = yield* s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
      expect(yield* refusal(s.bookings.update(other.id, { start: at(MONDAY_9, 30) }))).toMatchObject({ code: "slot_unavailable" })
      expect((yield* s.bookings.update(other.id, { start: TUESDAY_9 })).rescheduled_from).toBe(at(MONDAY_9, 60))
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses to combine a status change with a new time", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      expect(yield* refusal(s.bookings.update(booking.id, { status: "cancelled", start: TUESDAY_9 }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "status" }]
      })
    }).pipe(Effect.provide(CoreTest)))
})

describe("holds", () => {
  it.effect("takes the slot out of everyone's slots, converts into a booking, and expires by itself", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const range = { service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) }
      const hold = yield* s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9, ttl_seconds: 120 })
      expect(hold).toMatchObject({ object: "hold", start: MONDAY_9, expires_at: "2027-03-26T08:02:00Z" })
      expect((yield* s.availability.slots(range)).data.map((x) => x.start)).toEqual([at(MONDAY_9, 30)])
      const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
      expect(yield* refusal(s.bookings.create(base))).toMatchObject({
        code: "slot_unavailable",
        reasons: [{ code: "held", hold_id: hold.id }]
      })
      const booking = yield* s.bookings.create({ ...base, hold_id: hold.id })
      expect(booking.start).toBe(MONDAY_9)
      expect(yield* refusal(s.availability.getHold(hold.id))).toMatchObject({ code: "not_found" })

      const second = yield* s.availability.hold({ service_id: serviceId, staff_id: staffId, start: at(MONDAY_9, 30), ttl_seconds: 60 })
      yield* TestClock.adjust("61 seconds")
      expect((yield* s.availability.slots(range)).data.map((x) => x.start)).toEqual([at(MONDAY_9, 30)])
      expect(yield* refusal(s.bookings.create({ ...base, start: at(MONDAY_9, 30), hold_id: second.id }))).toMatchObject({
        code: "hold_expired",
        status: 409
      })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses ttl over ten minutes, a hold on a taken slot, and a hold used for another slot", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      expect(yield* refusal(s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9, ttl_seconds: 601 })))
        .toMatchObject({ code: "validation_failed", errors: [{ path: "ttl_seconds" }] })
      const hold = yield* s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9 })
      expect(hold.expires_at).toBe("2027-03-26T08:05:00Z")
      expect(yield* refusal(s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9 }))).toMatchObject({
        code: "slot_unavailable"
      })
      expect(yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: TUESDAY_9, hold_id: hold.id })))
        .toMatchObject({ code: "validation_failed", errors: [{ path: "hold_id" }] })
      yield* s.availability.releaseHold(hold.id)
      expect((yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })).staff_id).toBe(staffId)
    }).pipe(Effect.provide(CoreTest)))
})

describe("nothing half-written", () => {
  it.effect("a refused booking with an inline client leaves no booking, no client and no event", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      const before = {
        events: (yield* s.events.list({ limit: 100 })).data,
        clients: (yield* s.clients.list()).data,
        bookings: (yield* s.bookings.list()).data
      }
      const heard: Array<unknown> = []
      s.events.subscribe((e) => heard.push(e))
      for (const start of [MONDAY_9, at(MONDAY_9, -60), "2027-03-26T07:00:00Z"]) {
        yield* refusal(
          s.bookings.create({ service_id: serviceId, staff_id: staffId, start, client: { name: "Dee", email: "dee@example.com" } })
        )
      }
      expect((yield* s.events.list({ limit: 100 })).data).toEqual(before.events)
      expect((yield* s.clients.list()).data).toEqual(before.clients)
      expect((yield* s.bookings.list()).data).toEqual(before.bookings)
      expect(heard).toEqual([])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("an invalid update changes nothing", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId } = yield* salonIn()
      const before = yield* s.services.get(serviceId)
      expect(yield* refusal(s.services.update(serviceId, { duration_minutes: 0, capacity: 2 }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "duration_minutes" }]
      })
      expect(yield* s.services.get(serviceId)).toEqual(before)
    }).pipe(Effect.provide(CoreTest)))
})

describe("deleting resources in use", () => {
  it.effect("refuses to delete a service, staff member or client with upcoming bookings, and allows it once they are over", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const booking = yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
      const removals: ReadonlyArray<Effect.Effect<unknown, SlotwiseFailure, Tenant>> = [
        s.services.delete(serviceId),
        s.staff.delete(staffId),
        s.clients.delete(clientId)
      ]
      for (const remove of removals) {
        expect(yield* refusal(remove)).toMatchObject({ code: "resource_in_use", status: 409 })
      }
      yield* TestClock.setTime(Date.parse("2027-03-29T08:00:00Z"))
      yield* s.bookings.complete(booking.id)
      yield* s.staff.delete(staffId)
      expect((yield* s.services.get(serviceId)).staff_ids).toEqual([])
      expect((yield* s.availability.list({ staff_id: staffId })).data).toEqual([])
      const types = (yield* s.events.list({ limit: 100 })).data.map((e) => e.type)
      expect(types.slice(-3)).toEqual(["availability.deleted", "service.updated", "staff.deleted"])
      expect((yield* s.bookings.get(booking.id)).staff_id).toBe(staffId)
    }).pipe(Effect.provide(CoreTest)))
})

describe("tenants", () => {
  it.effect("never shows one tenant's data to another, nor sandbox data to production", () =>
    Effect.gen(function*() {
      const s = yield* core
      /** Runs a call as `tenant`, over the one store all three share. */
      const as = (tenant: TenantId) => Effect.provideService(Tenant, tenant)
      const a = as({ account_id: "acc_01J0000000000000000000000A", environment: "sandbox" })
      const b = as({ account_id: "acc_01J0000000000000000000000B", environment: "sandbox" })
      const aLive = as({ account_id: "acc_01J0000000000000000000000A", environment: "production" })
      const { serviceId, staffId, clientId } = yield* a(salonIn({}))
      const booking = yield* a(s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }))
      for (const other of [b, aLive]) {
        expect(yield* refusal(other(s.bookings.get(booking.id)))).toMatchObject({ code: "not_found", status: 404 })
        expect(yield* refusal(other(s.services.get(serviceId)))).toMatchObject({ code: "not_found" })
        expect(yield* refusal(other(s.bookings.cancel(booking.id)))).toMatchObject({ code: "not_found" })
        expect((yield* other(s.bookings.list())).data).toEqual([])
        expect((yield* other(s.events.list())).data).toEqual([])
        // Another tenant's ids are not usable as references either.
        expect(yield* refusal(other(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })))).toMatchObject({
          code: "invalid_reference"
        })
      }
      expect((yield* a(s.bookings.get(booking.id))).id).toBe(booking.id)
    }).pipe(Effect.provide(CoreTest)))
})
