/** Round-robin and collective services (docs/api.md §11) through the library, on the memory sandbox. */
import { describe, expect, it } from "vitest"
import { createTestScheduling, type TestScheduling } from "../../index.js"
import { at, failure, MONDAY_9, NOW } from "../support/fixtures.js"

const team = async (size: number, service: Record<string, unknown>, s?: TestScheduling) => {
  const sched = s ?? await createTestScheduling({ now: NOW })
  const staffIds: Array<string> = []
  for (let i = 0; i < size; i++) {
    const member = await sched.staff.create({ name: `Member ${i + 1}`, time_zone: "Europe/Berlin" })
    await sched.availability.create({
      staff_id: member.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5],
      start_time: "09:00",
      end_time: "17:00"
    })
    staffIds.push(member.id)
  }
  const created = await sched.services.create({ name: "Consultation", duration_minutes: 30, staff_ids: staffIds, ...service })
  const client = await sched.clients.create({ name: "Bo", email: "bo@example.com" })
  return { s: sched, staffIds, serviceId: created.id, clientId: client.id }
}

const countBy = (ids: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  return counts
}

describe("service settings", () => {
  it("defaults to chosen and least_recently_booked, and refuses weights for staff outside staff_ids", async () => {
    const { s, serviceId, staffIds } = await team(2, {})
    expect(await s.services.get(serviceId)).toMatchObject({
      assignment: "chosen",
      round_robin_policy: "least_recently_booked",
      staff_weights: {}
    })
    const outsider = await s.staff.create({ name: "Out", time_zone: "UTC" })
    expect(await failure(s.services.update(serviceId, { staff_weights: { [outsider.id]: 10 } }))).toMatchObject({
      code: "validation_failed",
      status: 422,
      errors: [{ path: `staff_weights.${outsider.id}` }]
    })
    expect(await failure(s.services.update(serviceId, { staff_weights: { [staffIds[0]!]: 101 } }))).toMatchObject({
      code: "validation_failed",
      status: 422
    })
    // Dropping a weighted member from staff_ids without dropping the weight is refused too.
    await s.services.update(serviceId, { staff_weights: { [staffIds[1]!]: 80 } })
    expect(await failure(s.services.update(serviceId, { staff_ids: [staffIds[0]!] }))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: `staff_weights.${staffIds[1]}` }]
    })
  })
})

describe("round robin", () => {
  /** Books `count` distinct starts (everyone free at each) and counts who got them. */
  const fairness = async (service: Record<string, unknown>, count: number) => {
    const s = await createTestScheduling({ now: NOW })
    const staffIds: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const member = await s.staff.create({ name: `M${i}`, time_zone: "UTC" })
      await s.availability.create({
        staff_id: member.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5, 6, 7],
        start_time: "00:00",
        end_time: "24:00"
      })
      staffIds.push(member.id)
    }
    const weights = typeof service.staff_weights === "function"
      ? (service.staff_weights as (ids: Array<string>) => Record<string, number>)(staffIds)
      : undefined
    const svc = await s.services.create({
      name: "Call",
      duration_minutes: 15,
      staff_ids: staffIds,
      assignment: "round_robin",
      ...service,
      ...(weights === undefined ? {} : { staff_weights: weights })
    })
    const client = await s.clients.create({ name: "Bo" })
    const first = Date.parse("2027-03-27T00:00:00Z")
    const picked: Array<string> = []
    for (let i = 0; i < count; i++) {
      const start = new Date(first + i * 15 * 60_000).toISOString().replace(".000Z", "Z")
      const booking = await s.bookings.create({ service_id: svc.id, client_id: client.id, start })
      expect(booking.assigned_by).toBe("round_robin")
      expect(booking.staff_ids).toEqual([booking.staff_id])
      picked.push(booking.staff_id)
    }
    return { staffIds, counts: countBy(picked) }
  }

  for (const policy of ["least_recently_booked", "fewest_upcoming"] as const) {
    it(`${policy}: 1,000 bookings over 5 equally free members stay within max/min 1.1`, async () => {
      const { counts, staffIds } = await fairness({ round_robin_policy: policy }, 1000)
      const values = staffIds.map((id) => counts.get(id) ?? 0)
      expect(Math.max(...values) / Math.min(...values)).toBeLessThanOrEqual(1.1)
    }, 60_000)
  }

  it("weighted: 1,000 bookings follow the weights within 10 %", async () => {
    const weights = [10, 20, 30, 40, 100]
    const { counts, staffIds } = await fairness({
      round_robin_policy: "weighted",
      staff_weights: (ids: Array<string>) => Object.fromEntries(ids.map((id, i) => [id, weights[i]]))
    }, 1000)
    const total = weights.reduce((a, b) => a + b, 0)
    staffIds.forEach((id, i) => {
      const expected = (1000 * weights[i]!) / total
      expect(Math.abs((counts.get(id) ?? 0) - expected) / expected).toBeLessThanOrEqual(0.1)
    })
  }, 60_000)

  it("lists each free start once with who is free, picks only the free, and fails only when nobody is", async () => {
    const { s, serviceId, staffIds, clientId } = await team(3, { assignment: "round_robin" })
    await s.services.update(serviceId, { assignment: "chosen" })
    await s.bookings.create({ service_id: serviceId, staff_id: staffIds[0]!, client_id: clientId, start: MONDAY_9 })
    await s.services.update(serviceId, { assignment: "round_robin" })
    const slots = (await s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) })).data
    expect(slots.map((slot) => slot.start)).toEqual([MONDAY_9, at(MONDAY_9, 30)])
    expect(slots[0]).toMatchObject({ remaining: 2 })
    expect([...slots[0]!.staff_ids].sort()).toEqual([staffIds[1], staffIds[2]].sort())
    expect(slots[0]!.staff_ids).toContain(slots[0]!.staff_id)
    expect(slots[1]!.staff_ids).toHaveLength(3)
    const a = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    const b = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    expect(new Set([a.staff_id, b.staff_id])).toEqual(new Set([staffIds[1], staffIds[2]]))
    expect(a.staff_id).toBe(slots[0]!.staff_id)
    const refused = await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
    expect(refused).toMatchObject({ code: "slot_unavailable", status: 409 })
    expect(new Set((refused.reasons as Array<{ staff_id: string }>).map((r) => r.staff_id))).toEqual(new Set(staffIds))
    expect((refused.alternatives as Array<{ start: string }>)[0]).toMatchObject({ start: at(MONDAY_9, 30) })
    // Explain without a member: who is free, or every member's reason.
    const explained = await s.availability.explain({ service_id: serviceId, start: MONDAY_9 })
    expect(explained).toMatchObject({ bookable: false })
    expect(explained.reasons).toHaveLength(3)
    expect((await s.availability.explain({ service_id: serviceId, start: at(MONDAY_9, 30) })).staff_ids).toHaveLength(3)
  })

  it("a request naming a member books that member; a hold picks at hold time and the booking keeps it", async () => {
    const { s, serviceId, staffIds, clientId } = await team(3, { assignment: "round_robin" })
    const named = await s.bookings.create({ service_id: serviceId, staff_id: staffIds[2]!, client_id: clientId, start: MONDAY_9 })
    expect(named).toMatchObject({ staff_id: staffIds[2], assigned_by: "chosen" })
    const hold = await s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
    expect(hold).toMatchObject({ staff_id: staffIds[0], staff_ids: [staffIds[0]], assigned_by: "round_robin" })
    // The held member is out of the next pick.
    const next = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    expect(next.staff_id).toBe(staffIds[1])
    const converted = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9, hold_id: hold.id })
    expect(converted).toMatchObject({ staff_id: staffIds[0], assigned_by: "round_robin" })
  })

  it("a reschedule keeps the member when free there, else picks another free member", async () => {
    const { s, serviceId, staffIds, clientId } = await team(2, { assignment: "round_robin" })
    const booking = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
    expect(booking.staff_id).toBe(staffIds[0])
    const kept = await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 60) })
    expect(kept).toMatchObject({ staff_id: staffIds[0], assigned_by: "round_robin", start: at(MONDAY_9, 60) })
    await s.bookings.create({ service_id: serviceId, staff_id: staffIds[0]!, client_id: clientId, start: at(MONDAY_9, 120) })
    const moved = await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 120) })
    expect(moved).toMatchObject({ staff_id: staffIds[1], staff_ids: [staffIds[1]], assigned_by: "round_robin" })
  })
})

describe("collective", () => {
  it("a start is free only when every member is; the booking takes all of them; explain names the blocker", async () => {
    const { s, serviceId, staffIds, clientId } = await team(3, { assignment: "collective" })
    const other = await s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
    const solo = await s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })
    const slots = (await s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 90) })).data
    expect(slots.map((slot) => slot.start)).toEqual([at(MONDAY_9, 30), at(MONDAY_9, 60)])
    expect(slots[0]).toMatchObject({ staff_id: staffIds[0], staff_ids: staffIds, remaining: 1 })

    const explained = await s.availability.explain({ service_id: serviceId, start: MONDAY_9 })
    expect(explained).toMatchObject({
      bookable: false,
      staff_ids: staffIds,
      reasons: [{ code: "booking_overlap", booking_id: solo.id, staff_id: staffIds[1] }]
    })
    const refused = await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
    expect(refused).toMatchObject({ code: "slot_unavailable", reasons: [{ staff_id: staffIds[1] }] })

    const booking = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 30) })
    expect(booking).toMatchObject({ staff_id: staffIds[0], staff_ids: staffIds, assigned_by: "collective" })
    // Every member is taken: the third cannot be booked alone at that time.
    const third = await failure(
      s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 30) })
    )
    expect(third).toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: booking.id }] })

    // Moving it moves every member; the old time is free for each again.
    const moved = await s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 120) })
    expect(moved.staff_ids).toEqual(staffIds)
    await s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 30) })
    expect(
      await failure(s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 120) }))
    )
      .toMatchObject({ code: "slot_unavailable" })
    // A further member cannot be deleted while the booking is upcoming.
    const lone = await s.staff.create({ name: "Lone", time_zone: "UTC" })
    await s.availability.create({ staff_id: lone.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
    await s.services.update(serviceId, { staff_ids: [...staffIds, lone.id] })
    const withLone = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 240) })
    await s.services.update(serviceId, { staff_ids: staffIds })
    const refusal = await failure(s.staff.delete(lone.id))
    expect(refusal).toMatchObject({ code: "resource_in_use" })
    expect(refusal.detail).toContain(withLone.id)
    await s.bookings.cancel(withLone.id)
    await s.staff.delete(lone.id)
    // Cancelling frees every member.
    await s.bookings.cancel(booking.id)
    const freed = await s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 120) })
    expect(freed.status).toBe("confirmed")
  })

  it("a hold occupies every member until released or converted", async () => {
    const { s, serviceId, staffIds, clientId } = await team(2, { assignment: "collective" })
    const other = await s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
    const hold = await s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
    expect(hold).toMatchObject({ staff_ids: staffIds, assigned_by: "collective" })
    expect(await failure(s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })))
      .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "held", hold_id: hold.id }] })
    await s.availability.releaseHold(hold.id)
    const again = await s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
    const booking = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9, hold_id: again.id })
    expect(booking).toMatchObject({ staff_ids: staffIds, assigned_by: "collective" })
    expect(await failure(s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })))
      .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: booking.id }] })
  })

  it("capacity 3: each member's seats count on their own; the class takes 3 bookings and refuses the 4th", async () => {
    const { s, serviceId, staffIds, clientId } = await team(2, { assignment: "collective", capacity: 3 })
    const [first, second] = staffIds as [string, string]
    const remaining = async (start: string) =>
      (await s.availability.slots({ service_id: serviceId, start, end: at(start, 1) })).data.map((slot) => slot.remaining)
    const book = (start: string) => s.bookings.create({ service_id: serviceId, client_id: clientId, start })
    expect(await remaining(MONDAY_9)).toEqual([3])
    const seats = []
    for (const left of [2, 1, 0]) {
      const booking = await book(MONDAY_9)
      expect(booking).toMatchObject({ staff_ids: staffIds, assigned_by: "collective", status: "confirmed" })
      seats.push(booking)
      expect(await remaining(MONDAY_9)).toEqual(left === 0 ? [] : [left])
    }
    const full = await failure(book(MONDAY_9))
    expect(full).toMatchObject({ code: "slot_unavailable", status: 409 })
    expect((full.reasons as Array<{ code: string; staff_id: string }>).map((r) => [r.code, r.staff_id])).toEqual([
      ["capacity_full", first],
      ["capacity_full", second]
    ])
    // A seat given back is a seat for the class again.
    await s.bookings.cancel(seats[1]!.id)
    expect(await remaining(MONDAY_9)).toEqual([1])
    expect((await book(MONDAY_9)).staff_ids).toEqual(staffIds)
    // A seat taken while the class had the first member alone is the first member's only: the
    // class has the seats its fullest member has left.
    const later = at(MONDAY_9, 60)
    await s.services.update(serviceId, { staff_ids: [first] })
    expect((await book(later)).staff_ids).toEqual([first])
    await s.services.update(serviceId, { staff_ids: staffIds })
    expect(await remaining(later)).toEqual([2])
    await book(later)
    await book(later)
    const firstFull = await failure(book(later))
    expect(firstFull.reasons).toEqual([expect.objectContaining({ code: "capacity_full", staff_id: first })])
  })

  it("capacity 3: a member's other one-seat booking blocks the class, and a seat of the class blocks the member's other bookings", async () => {
    const { s, serviceId, staffIds, clientId } = await team(2, { assignment: "collective", capacity: 3 })
    const solo = await s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
    const alone = await s.bookings.create({ service_id: solo.id, staff_id: staffIds[1]!, client_id: clientId, start: at(MONDAY_9, 15) })
    // The class at 09:00 and 09:30 overlaps 09:15–09:45: neither is offered nor bookable.
    const slots = (await s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 61) })).data
    expect(slots.map((slot) => [slot.start, slot.remaining])).toEqual([[at(MONDAY_9, 60), 3]])
    for (const start of [MONDAY_9, at(MONDAY_9, 30)]) {
      expect(await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start }))).toMatchObject({
        code: "slot_unavailable",
        reasons: [{ code: "booking_overlap", booking_id: alone.id, staff_id: staffIds[1] }]
      })
    }
    const seat = await s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 60) })
    // One seat taken of three, yet each member is in the class: neither can be booked elsewhere then.
    for (const member of staffIds) {
      expect(await failure(s.bookings.create({ service_id: solo.id, staff_id: member, client_id: clientId, start: at(MONDAY_9, 60) })))
        .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: seat.id }] })
    }
  })

  it("refuses a staff_id outside the service, and an inactive member blocks every start", async () => {
    const { s, serviceId, staffIds, clientId } = await team(2, { assignment: "collective" })
    const outsider = await s.staff.create({ name: "Out", time_zone: "UTC" })
    expect(await failure(s.bookings.create({ service_id: serviceId, staff_id: outsider.id, client_id: clientId, start: MONDAY_9 })))
      .toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
    await s.staff.update(staffIds[1]!, { active: false })
    expect((await s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 90) })).data).toEqual([])
    expect(await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })))
      .toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
  })
})

describe("a refused team start", () => {
  for (const assignment of ["collective", "round_robin"] as const) {
    it(`${assignment}: offers the nearest free starts as far out as one staff member's refusal does`, async () => {
      const { s, serviceId, staffIds, clientId } = await team(2, { assignment })
      // Nobody the team needs is free for two weeks: the nearest free starts are 14 days on.
      const away = assignment === "collective" ? [staffIds[1]!] : staffIds
      for (const id of away) await s.availability.create({ staff_id: id, type: "blocked", start: NOW, end: "2027-04-12T00:00:00Z" })
      const refused = await failure(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
      expect(refused).toMatchObject({ code: "outside_availability", status: 409 })
      // 09:00 in Berlin (CEST) on Monday 2027-04-12.
      const back = "2027-04-12T07:00:00Z"
      const alternatives = refused.alternatives as Array<{ start: string; staff_ids: ReadonlyArray<string> }>
      expect(alternatives.map((slot) => slot.start)).toEqual([back, at(back, 30), at(back, 60)])
      if (assignment === "collective") { for (const slot of alternatives) expect(slot.staff_ids).toEqual(staffIds) }
      // The same member's own refusal finds the same starts.
      const solo = await s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: [staffIds[1]!] })
      const alone = await failure(s.bookings.create({ service_id: solo.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 }))
      expect((alone.alternatives as Array<{ start: string }>).map((slot) => slot.start)).toEqual(alternatives.map((slot) => slot.start))
    })
  }
})
