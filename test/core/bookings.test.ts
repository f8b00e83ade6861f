/** Booking checks 1–4 of docs/api.md §3, holds, events and "nothing half-written". */
import { describe, expect, it } from "vitest"
import { at, failure, MONDAY_9, NOW, salon } from "../support/fixtures.js"
import { createTestScheduling } from "../../index.js"

const TUESDAY_9 = "2027-03-30T07:00:00Z"

describe("create", () => {
  it("derives end, price and status from the service and records booking.created with the full booking", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const booking = await s.bookings.create({
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
    const [event] = (await s.events.list({ types: ["booking.created"] })).data
    expect(event!.data.object).toEqual(booking)
  })

  it("accepts an instant with an offset and stores it in UTC", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const booking = await s.bookings.create({
      service_id: serviceId,
      staff_id: staffId,
      client_id: clientId,
      start: "2027-03-29T09:00:00+02:00"
    })
    expect(booking.start).toBe(MONDAY_9)
  })

  it("requires confirmation when the service asks for it", async () => {
    const { s, serviceId, staffId, clientId } = await salon({ requires_confirmation: true })
    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    expect(booking.status).toBe("pending")
  })

  it("creates an inline client in the same step", async () => {
    const { s, serviceId, staffId } = await salon()
    const booking = await s.bookings.create({
      service_id: serviceId,
      staff_id: staffId,
      start: MONDAY_9,
      client: { name: "Cy", email: "cy@example.com" }
    })
    const client = await s.clients.get(booking.client_id)
    expect(client).toMatchObject({ name: "Cy", email: "cy@example.com" })
    const types = (await s.events.list({ limit: 100 })).data.map((e) => e.type)
    expect(types.slice(-2)).toEqual(["client.created", "booking.created"])
  })

  it("picks the first free staff member of the service when staff_id is omitted", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const second = await s.staff.create({ name: "Ben", time_zone: "Europe/Berlin" })
    await s.availability.create({ staff_id: second.id, type: "weekly", weekdays: [1], start_time: "09:00", end_time: "12:00" })
    await s.services.update(serviceId, { staff_ids: [staffId, second.id] })
    const first = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    const next = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    expect([first.staff_id, next.staff_id]).toEqual([staffId, second.id])
    expect(await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))).toMatchObject({
      code: "slot_unavailable"
    })
  })
})

describe("check 1: references exist, are active and match", () => {
  it("refuses unknown, inactive and unassigned references with invalid_reference naming the field", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const other = await s.staff.create({ name: "Cat", time_zone: "UTC" })
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
    expect(await failure(s.bookings.create({ ...base, service_id: "svc_00000000000000000000000000" }))).toMatchObject({
      code: "invalid_reference",
      status: 422,
      errors: [{ path: "service_id" }]
    })
    expect(await failure(s.bookings.create({ ...base, client_id: "cli_00000000000000000000000000" }))).toMatchObject({
      code: "invalid_reference",
      errors: [{ path: "client_id" }]
    })
    expect(await failure(s.bookings.create({ ...base, staff_id: other.id }))).toMatchObject({
      code: "invalid_reference",
      errors: [{ path: "staff_id" }]
    })
    await s.staff.update(staffId, { active: false })
    expect(await failure(s.bookings.create(base))).toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
    await s.staff.update(staffId, { active: true })
    await s.services.update(serviceId, { active: false })
    expect(await failure(s.bookings.create(base))).toMatchObject({ code: "invalid_reference", errors: [{ path: "service_id" }] })
    expect((await s.bookings.list()).data).toHaveLength(0)
  })
})

describe("check 2: within availability", () => {
  it("refuses starts outside hours, running past closing, on blocked time and on overridden dates", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
    const outside = await failure(s.bookings.create({ ...base, start: at(MONDAY_9, -30) }))
    expect(outside).toMatchObject({ code: "outside_availability", status: 409, reasons: [{ code: "outside_hours" }] })
    expect((outside.alternatives as Array<unknown>).length).toBe(3)
    // 16:45 + 30 min runs past 17:00.
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 7 * 60 + 45) }))).toMatchObject({ code: "outside_availability" })
    expect((await s.bookings.create({ ...base, start: at(MONDAY_9, 7 * 60 + 30) })).end).toBe(at(MONDAY_9, 8 * 60))
    await s.availability.create({ staff_id: staffId, type: "blocked", start: at(MONDAY_9, 60), end: at(MONDAY_9, 120) })
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 90) }))).toMatchObject({ reasons: [{ code: "blocked" }] })
    await s.availability.create({ staff_id: staffId, type: "date", date: "2027-03-30", start_time: "13:00", end_time: "15:00" })
    expect(await failure(s.bookings.create({ ...base, start: TUESDAY_9 }))).toMatchObject({ reasons: [{ code: "date_override" }] })
    expect((await s.bookings.create({ ...base, start: "2027-03-30T11:00:00Z" })).status).toBe("confirmed")
  })
})

describe("check 3: no overlap, buffers and capacity", () => {
  it("refuses an overlapping booking with the booking's id and offers the nearest free slots", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
    const first = await s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
    const error = await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 75) }))
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
  })

  it("keeps buffers clear on both sides", async () => {
    const { s, serviceId, staffId, clientId } = await salon({ buffer_before_minutes: 15, buffer_after_minutes: 15 })
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
    const first = await s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 90) }))).toMatchObject({
      reasons: [{ code: "buffer_overlap", booking_id: first.id }]
    })
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 30) }))).toMatchObject({ reasons: [{ code: "buffer_overlap" }] })
    expect((await s.bookings.create({ ...base, start: at(MONDAY_9, 120) })).status).toBe("confirmed")
    expect((await s.bookings.create({ ...base, start: MONDAY_9 })).status).toBe("confirmed")
  })

  it("admits up to capacity bookings of the same service at the same start", async () => {
    const { s, serviceId, staffId, clientId } = await salon({ capacity: 3, name: "Yoga" })
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
    for (let i = 0; i < 3; i++) await s.bookings.create(base)
    expect(await failure(s.bookings.create(base))).toMatchObject({ code: "slot_unavailable", reasons: [{ code: "capacity_full" }] })
    // A different start that overlaps the class is a conflict, not another seat.
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 15) }))).toMatchObject({ code: "slot_unavailable" })
    const slots = await s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) })
    expect(slots.data.map((slot) => [slot.start, slot.remaining])).toEqual([[at(MONDAY_9, 30), 3]])
  })

  it("frees the slot when a booking is cancelled", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
    const first = await s.bookings.create(base)
    await s.bookings.cancel(first.id)
    expect((await s.bookings.create(base)).status).toBe("confirmed")
  })
})

describe("check 4: notice and advance", () => {
  it("refuses starts sooner than the notice or further than the advance limit", async () => {
    const { s, serviceId, staffId, clientId } = await salon({ min_notice_minutes: 24 * 60, max_advance_days: 14 })
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
    // Friday 2027-03-26 10:00 Berlin is two hours from now.
    expect(await failure(s.bookings.create({ ...base, start: "2027-03-26T09:00:00Z" }))).toMatchObject({
      reasons: [{ code: "min_notice" }]
    })
    expect(await failure(s.bookings.create({ ...base, start: "2027-04-12T07:00:00Z" }))).toMatchObject({
      reasons: [{ code: "max_advance" }]
    })
    expect((await s.bookings.create({ ...base, start: "2027-04-09T07:00:00Z" })).status).toBe("confirmed")
  })
})

describe("reschedule", () => {
  it("moves the booking, records the previous start and event, and frees the old slot", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId }
    const booking = await s.bookings.create({ ...base, start: MONDAY_9 })
    // Moving by 15 minutes overlaps only itself, which is allowed.
    const moved = await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 15) })
    expect(moved).toMatchObject({ start: at(MONDAY_9, 15), end: at(MONDAY_9, 45), rescheduled_from: MONDAY_9, status: "confirmed" })
    const [event] = (await s.events.list({ types: ["booking.rescheduled"] })).data
    expect((event!.data.previous as any).start).toBe(MONDAY_9)
    expect((event!.data.object as any).start).toBe(at(MONDAY_9, 15))
    expect(await failure(s.bookings.reschedule(booking.id, { start: at(MONDAY_9, -60) }))).toMatchObject({ code: "outside_availability" })
    expect((await s.bookings.get(booking.id)).start).toBe(at(MONDAY_9, 15))
    const other = await s.bookings.create({ ...base, start: at(MONDAY_9, 60) })
    expect(await failure(s.bookings.update(other.id, { start: at(MONDAY_9, 30) }))).toMatchObject({ code: "slot_unavailable" })
    expect((await s.bookings.update(other.id, { start: TUESDAY_9 })).rescheduled_from).toBe(at(MONDAY_9, 60))
  })

  it("refuses to combine a status change with a new time", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    expect(await failure(s.bookings.update(booking.id, { status: "cancelled", start: TUESDAY_9 }))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "status" }]
    })
  })
})

describe("holds", () => {
  it("takes the slot out of everyone's slots, converts into a booking, and expires by itself", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const range = { service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) }
    const hold = await s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9, ttl_seconds: 120 })
    expect(hold).toMatchObject({ object: "hold", start: MONDAY_9, expires_at: "2027-03-26T08:02:00Z" })
    expect((await s.availability.slots(range)).data.map((x) => x.start)).toEqual([at(MONDAY_9, 30)])
    const base = { service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 }
    expect(await failure(s.bookings.create(base))).toMatchObject({
      code: "slot_unavailable",
      reasons: [{ code: "held", hold_id: hold.id }]
    })
    const booking = await s.bookings.create({ ...base, hold_id: hold.id })
    expect(booking.start).toBe(MONDAY_9)
    expect(await failure(s.availability.getHold(hold.id))).toMatchObject({ code: "not_found" })

    const second = await s.availability.hold({ service_id: serviceId, staff_id: staffId, start: at(MONDAY_9, 30), ttl_seconds: 60 })
    await s.clock.advance({ seconds: 61 })
    expect((await s.availability.slots(range)).data.map((x) => x.start)).toEqual([at(MONDAY_9, 30)])
    expect(await failure(s.bookings.create({ ...base, start: at(MONDAY_9, 30), hold_id: second.id }))).toMatchObject({
      code: "hold_expired",
      status: 409
    })
  })

  it("refuses ttl over ten minutes, a hold on a taken slot, and a hold used for another slot", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    expect(await failure(s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9, ttl_seconds: 601 })))
      .toMatchObject({ code: "validation_failed", errors: [{ path: "ttl_seconds" }] })
    const hold = await s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9 })
    expect(hold.expires_at).toBe("2027-03-26T08:05:00Z")
    expect(await failure(s.availability.hold({ service_id: serviceId, staff_id: staffId, start: MONDAY_9 }))).toMatchObject({
      code: "slot_unavailable"
    })
    expect(await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: TUESDAY_9, hold_id: hold.id })))
      .toMatchObject({ code: "validation_failed", errors: [{ path: "hold_id" }] })
    await s.availability.releaseHold(hold.id)
    expect((await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })).staff_id).toBe(staffId)
  })
})

describe("nothing half-written", () => {
  it("a refused booking with an inline client leaves no booking, no client and no event", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const before = {
      events: (await s.events.list({ limit: 100 })).data,
      clients: (await s.clients.list()).data,
      bookings: (await s.bookings.list()).data
    }
    const heard: Array<unknown> = []
    s.events.subscribe((e) => heard.push(e))
    for (const start of [MONDAY_9, at(MONDAY_9, -60), "2027-03-26T07:00:00Z"]) {
      await failure(
        s.bookings.create({ service_id: serviceId, staff_id: staffId, start, client: { name: "Dee", email: "dee@example.com" } })
      )
    }
    expect((await s.events.list({ limit: 100 })).data).toEqual(before.events)
    expect((await s.clients.list()).data).toEqual(before.clients)
    expect((await s.bookings.list()).data).toEqual(before.bookings)
    expect(heard).toEqual([])
  })

  it("an invalid update changes nothing", async () => {
    const { s, serviceId } = await salon()
    const before = await s.services.get(serviceId)
    expect(await failure(s.services.update(serviceId, { duration_minutes: 0, capacity: 2 }))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "duration_minutes" }]
    })
    expect(await s.services.get(serviceId)).toEqual(before)
  })
})

describe("deleting resources in use", () => {
  it("refuses to delete a service, staff member or client with upcoming bookings, and allows it once they are over", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    for (const remove of [() => s.services.delete(serviceId), () => s.staff.delete(staffId), () => s.clients.delete(clientId)]) {
      expect(await failure(remove())).toMatchObject({ code: "resource_in_use", status: 409 })
    }
    await s.clock.set("2027-03-29T08:00:00Z")
    await s.bookings.complete(booking.id)
    await s.staff.delete(staffId)
    expect((await s.services.get(serviceId)).staff_ids).toEqual([])
    expect((await s.availability.list({ staff_id: staffId })).data).toEqual([])
    const types = (await s.events.list({ limit: 100 })).data.map((e) => e.type)
    expect(types.slice(-3)).toEqual(["availability.deleted", "service.updated", "staff.deleted"])
    expect((await s.bookings.get(booking.id)).staff_id).toBe(staffId)
  })
})

describe("tenants", () => {
  it("never shows one tenant's data to another, nor sandbox data to production", async () => {
    const s = await createTestScheduling({ now: NOW })
    const a = s.tenant({ account_id: "acc_01J0000000000000000000000A", environment: "sandbox" })
    const b = s.tenant({ account_id: "acc_01J0000000000000000000000B", environment: "sandbox" })
    const aLive = s.tenant({ account_id: "acc_01J0000000000000000000000A", environment: "production" })
    const { serviceId, staffId, clientId } = await salon({}, a as any)
    const booking = await a.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    for (const other of [b, aLive]) {
      expect(await failure(other.bookings.get(booking.id))).toMatchObject({ code: "not_found", status: 404 })
      expect(await failure(other.services.get(serviceId))).toMatchObject({ code: "not_found" })
      expect(await failure(other.bookings.cancel(booking.id))).toMatchObject({ code: "not_found" })
      expect((await other.bookings.list()).data).toEqual([])
      expect((await other.events.list()).data).toEqual([])
      // Another tenant's ids are not usable as references either.
      expect(await failure(other.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))).toMatchObject({
        code: "invalid_reference"
      })
    }
    expect((await a.bookings.get(booking.id)).id).toBe(booking.id)
    await s.close()
  })
})
