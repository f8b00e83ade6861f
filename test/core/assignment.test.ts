/** Round-robin and collective services (docs/api.md §11) through the library, on the memory sandbox. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { core, CoreTest, refusal } from "../support/coreTest.js"
import { at, MONDAY_9, NOW } from "../support/fixtures.js"

/** A team of `size` members working weekdays 09:00–17:00 in Berlin, a 30-minute service of theirs, a client. */
const team = (size: number, service: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sched = yield* core
    const staffIds: Array<string> = []
    for (let i = 0; i < size; i++) {
      const member = yield* sched.staff.create({ name: `Member ${i + 1}`, time_zone: "Europe/Berlin" })
      yield* sched.availability.create({
        staff_id: member.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      })
      staffIds.push(member.id)
    }
    const created = yield* sched.services.create({ name: "Consultation", duration_minutes: 30, staff_ids: staffIds, ...service })
    const client = yield* sched.clients.create({ name: "Bo", email: "bo@example.com" })
    return { s: sched, staffIds, serviceId: created.id, clientId: client.id }
  })

const countBy = (ids: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  return counts
}

describe("service settings", () => {
  it.effect("defaults to chosen and least_recently_booked, and refuses weights for staff outside staff_ids", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds } = yield* team(2, {})
      expect(yield* s.services.get(serviceId)).toMatchObject({
        assignment: "chosen",
        round_robin_policy: "least_recently_booked",
        staff_weights: {}
      })
      const outsider = yield* s.staff.create({ name: "Out", time_zone: "UTC" })
      expect(yield* refusal(s.services.update(serviceId, { staff_weights: { [outsider.id]: 10 } }))).toMatchObject({
        code: "validation_failed",
        status: 422,
        errors: [{ path: `staff_weights.${outsider.id}` }]
      })
      expect(yield* refusal(s.services.update(serviceId, { staff_weights: { [staffIds[0]!]: 101 } }))).toMatchObject({
        code: "validation_failed",
        status: 422
      })
      // Dropping a weighted member from staff_ids without dropping the weight is refused too.
      yield* s.services.update(serviceId, { staff_weights: { [staffIds[1]!]: 80 } })
      expect(yield* refusal(s.services.update(serviceId, { staff_ids: [staffIds[0]!] }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: `staff_weights.${staffIds[1]}` }]
      })
    }).pipe(Effect.provide(CoreTest)))
})

describe("round robin", () => {
  /** Books `count` distinct starts (everyone free at each) and counts who got them. */
  const fairness = (service: Record<string, unknown>, count: number) =>
    Effect.gen(function*() {
      const s = yield* core
      const staffIds: Array<string> = []
      for (let i = 0; i < 5; i++) {
        const member = yield* s.staff.create({ name: `M${i}`, time_zone: "UTC" })
        yield* s.availability.create({
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
      const svc = yield* s.services.create({
        name: "Call",
        duration_minutes: 15,
        staff_ids: staffIds,
        assignment: "round_robin",
        ...service,
        ...(weights === undefined ? {} : { staff_weights: weights })
      })
      const client = yield* s.clients.create({ name: "Bo" })
      const first = Date.parse("2027-03-27T00:00:00Z")
      const picked: Array<string> = []
      for (let i = 0; i < count; i++) {
        const start = new Date(first + i * 15 * 60_000).toISOString().replace(".000Z", "Z")
        const booking = yield* s.bookings.create({ service_id: svc.id, client_id: client.id, start })
        expect(booking.assigned_by).toBe("round_robin")
        expect(booking.staff_ids).toEqual([booking.staff_id])
        picked.push(booking.staff_id)
      }
      return { staffIds, counts: countBy(picked) }
    })

  for (const policy of ["least_recently_booked", "fewest_upcoming"] as const) {
    it.effect(`${policy}: 1,000 bookings over 5 equally free members stay within max/min 1.1`, () =>
      Effect.gen(function*() {
        const { counts, staffIds } = yield* fairness({ round_robin_policy: policy }, 1000)
        const values = staffIds.map((id) => counts.get(id) ?? 0)
        expect(Math.max(...values) / Math.min(...values)).toBeLessThanOrEqual(1.1)
      }).pipe(Effect.provide(CoreTest)), 60_000)
  }

  it.effect("weighted: 1,000 bookings follow the weights within 10 %", () =>
    Effect.gen(function*() {
      const weights = [10, 20, 30, 40, 100]
      const { counts, staffIds } = yield* fairness({
        round_robin_policy: "weighted",
        staff_weights: (ids: Array<string>) => Object.fromEntries(ids.map((id, i) => [id, weights[i]]))
      }, 1000)
      const total = weights.reduce((a, b) => a + b, 0)
      staffIds.forEach((id, i) => {
        const expected = (1000 * weights[i]!) / total
        expect(Math.abs((counts.get(id) ?? 0) - expected) / expected).toBeLessThanOrEqual(0.1)
      })
    }).pipe(Effect.provide(CoreTest)), 60_000)

  it.effect("lists each free start once with who is free, picks only the free, and fails only when nobody is", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(3, { assignment: "round_robin" })
      yield* s.services.update(serviceId, { assignment: "chosen" })
      yield* s.bookings.create({ service_id: serviceId, staff_id: staffIds[0]!, client_id: clientId, start: MONDAY_9 })
      yield* s.services.update(serviceId, { assignment: "round_robin" })
      const slots = (yield* s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 60) })).data
      expect(slots.map((slot) => slot.start)).toEqual([MONDAY_9, at(MONDAY_9, 30)])
      expect(slots[0]).toMatchObject({ remaining: 2 })
      expect([...slots[0]!.staff_ids].sort()).toEqual([staffIds[1], staffIds[2]].sort())
      expect(slots[0]!.staff_ids).toContain(slots[0]!.staff_id)
      expect(slots[1]!.staff_ids).toHaveLength(3)
      const a = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      const b = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      expect(new Set([a.staff_id, b.staff_id])).toEqual(new Set([staffIds[1], staffIds[2]]))
      expect(a.staff_id).toBe(slots[0]!.staff_id)
      const refused = yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
      expect(refused).toMatchObject({ code: "slot_unavailable", status: 409 })
      expect(new Set((refused.reasons as Array<{ staff_id: string }>).map((r) => r.staff_id))).toEqual(new Set(staffIds))
      expect((refused.alternatives as Array<{ start: string }>)[0]).toMatchObject({ start: at(MONDAY_9, 30) })
      // Explain without a member: who is free, or every member's reason.
      const explained = yield* s.availability.explain({ service_id: serviceId, start: MONDAY_9 })
      expect(explained).toMatchObject({ bookable: false })
      expect(explained.reasons).toHaveLength(3)
      expect((yield* s.availability.explain({ service_id: serviceId, start: at(MONDAY_9, 30) })).staff_ids).toHaveLength(3)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("a request naming a member books that member; a hold picks at hold time and the booking keeps it", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(3, { assignment: "round_robin" })
      const named = yield* s.bookings.create({ service_id: serviceId, staff_id: staffIds[2]!, client_id: clientId, start: MONDAY_9 })
      expect(named).toMatchObject({ staff_id: staffIds[2], assigned_by: "chosen" })
      const hold = yield* s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
      expect(hold).toMatchObject({ staff_id: staffIds[0], staff_ids: [staffIds[0]], assigned_by: "round_robin" })
      // The held member is out of the next pick.
      const next = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      expect(next.staff_id).toBe(staffIds[1])
      const converted = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9, hold_id: hold.id })
      expect(converted).toMatchObject({ staff_id: staffIds[0], assigned_by: "round_robin" })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("a reschedule keeps the member when free there, else picks another free member", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment: "round_robin" })
      const booking = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })
      expect(booking.staff_id).toBe(staffIds[0])
      const kept = yield* s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 60) })
      expect(kept).toMatchObject({ staff_id: staffIds[0], assigned_by: "round_robin", start: at(MONDAY_9, 60) })
      yield* s.bookings.create({ service_id: serviceId, staff_id: staffIds[0]!, client_id: clientId, start: at(MONDAY_9, 120) })
      const moved = yield* s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 120) })
      expect(moved).toMatchObject({ staff_id: staffIds[1], staff_ids: [staffIds[1]], assigned_by: "round_robin" })
    }).pipe(Effect.provide(CoreTest)))
})

describe("collective", () => {
  it.effect("a start is free only when every member is; the booking takes all of them; explain names the blocker", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(3, { assignment: "collective" })
      const other = yield* s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
      const solo = yield* s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })
      const slots = (yield* s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 90) })).data
      expect(slots.map((slot) => slot.start)).toEqual([at(MONDAY_9, 30), at(MONDAY_9, 60)])
      expect(slots[0]).toMatchObject({ staff_id: staffIds[0], staff_ids: staffIds, remaining: 1 })

      const explained = yield* s.availability.explain({ service_id: serviceId, start: MONDAY_9 })
      expect(explained).toMatchObject({
        bookable: false,
        staff_ids: staffIds,
        reasons: [{ code: "booking_overlap", booking_id: solo.id, staff_id: staffIds[1] }]
      })
      const refused = yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
      expect(refused).toMatchObject({ code: "slot_unavailable", reasons: [{ staff_id: staffIds[1] }] })

      const booking = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 30) })
      expect(booking).toMatchObject({ staff_id: staffIds[0], staff_ids: staffIds, assigned_by: "collective" })
      // Every member is taken: the third cannot be booked alone at that time.
      const third = yield* refusal(
        s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 30) })
      )
      expect(third).toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: booking.id }] })

      // Moving it moves every member; the old time is free for each again.
      const moved = yield* s.bookings.reschedule(booking.id, { start: at(MONDAY_9, 120) })
      expect(moved.staff_ids).toEqual(staffIds)
      yield* s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 30) })
      expect(
        yield* refusal(s.bookings.create({ service_id: other.id, staff_id: staffIds[2]!, client_id: clientId, start: at(MONDAY_9, 120) }))
      )
        .toMatchObject({ code: "slot_unavailable" })
      // A further member cannot be deleted while the booking is upcoming.
      const lone = yield* s.staff.create({ name: "Lone", time_zone: "UTC" })
      yield* s.availability.create({ staff_id: lone.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "17:00" })
      yield* s.services.update(serviceId, { staff_ids: [...staffIds, lone.id] })
      const withLone = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 240) })
      yield* s.services.update(serviceId, { staff_ids: staffIds })
      const inUse = yield* refusal(s.staff.delete(lone.id))
      expect(inUse).toMatchObject({ code: "resource_in_use" })
      expect(inUse.detail).toContain(withLone.id)
      yield* s.bookings.cancel(withLone.id)
      yield* s.staff.delete(lone.id)
      // Cancelling frees every member.
      yield* s.bookings.cancel(booking.id)
      const freed = yield* s.bookings.create({
        service_id: other.id,
        staff_id: staffIds[2]!,
        client_id: clientId,
        start: at(MONDAY_9, 120)
      })
      expect(freed.status).toBe("confirmed")
    }).pipe(Effect.provide(CoreTest)))

  it.effect("a hold occupies every member until released or converted", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment: "collective" })
      const other = yield* s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
      const hold = yield* s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
      expect(hold).toMatchObject({ staff_ids: staffIds, assigned_by: "collective" })
      expect(yield* refusal(s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })))
        .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "held", hold_id: hold.id }] })
      yield* s.availability.releaseHold(hold.id)
      const again = yield* s.availability.hold({ service_id: serviceId, start: MONDAY_9 })
      const booking = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9, hold_id: again.id })
      expect(booking).toMatchObject({ staff_ids: staffIds, assigned_by: "collective" })
      expect(yield* refusal(s.bookings.create({ service_id: other.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })))
        .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: booking.id }] })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("capacity 3: each member's seats count on their own; the class takes 3 bookings and refuses the 4th", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment: "collective", capacity: 3 })
      const [first, second] = staffIds as [string, string]
      const remaining = (start: string) =>
        Effect.map(
          s.availability.slots({ service_id: serviceId, start, end: at(start, 1) }),
          (slots) => slots.data.map((slot) => slot.remaining)
        )
      const book = (start: string) => s.bookings.create({ service_id: serviceId, client_id: clientId, start })
      expect(yield* remaining(MONDAY_9)).toEqual([3])
      const seats = []
      for (const left of [2, 1, 0]) {
        const booking = yield* book(MONDAY_9)
        expect(booking).toMatchObject({ staff_ids: staffIds, assigned_by: "collective", status: "confirmed" })
        seats.push(booking)
        expect(yield* remaining(MONDAY_9)).toEqual(left === 0 ? [] : [left])
      }
      const full = yield* refusal(book(MONDAY_9))
      expect(full).toMatchObject({ code: "slot_unavailable", status: 409 })
      expect((full.reasons as Array<{ code: string; staff_id: string }>).map((r) => [r.code, r.staff_id])).toEqual([
        ["capacity_full", first],
        ["capacity_full", second]
      ])
      // A seat given back is a seat for the class again.
      yield* s.bookings.cancel(seats[1]!.id)
      expect(yield* remaining(MONDAY_9)).toEqual([1])
      expect((yield* book(MONDAY_9)).staff_ids).toEqual(staffIds)
      // A seat taken while the class had the first member alone is the first member's only: the
      // class has the seats its fullest member has left.
      const later = at(MONDAY_9, 60)
      yield* s.services.update(serviceId, { staff_ids: [first] })
      expect((yield* book(later)).staff_ids).toEqual([first])
      yield* s.services.update(serviceId, { staff_ids: staffIds })
      expect(yield* remaining(later)).toEqual([2])
      yield* book(later)
      yield* book(later)
      const firstFull = yield* refusal(book(later))
      expect(firstFull.reasons).toEqual([expect.objectContaining({ code: "capacity_full", staff_id: first })])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("capacity 3: a member's other one-seat booking blocks the class, and a seat of the class blocks the member's other bookings", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment: "collective", capacity: 3 })
      const solo = yield* s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: staffIds })
      const alone = yield* s.bookings.create({ service_id: solo.id, staff_id: staffIds[1]!, client_id: clientId, start: at(MONDAY_9, 15) })
      // The class at 09:00 and 09:30 overlaps 09:15–09:45: neither is offered nor bookable.
      const slots = (yield* s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 61) })).data
      expect(slots.map((slot) => [slot.start, slot.remaining])).toEqual([[at(MONDAY_9, 60), 3]])
      for (const start of [MONDAY_9, at(MONDAY_9, 30)]) {
        expect(yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start }))).toMatchObject({
          code: "slot_unavailable",
          reasons: [{ code: "booking_overlap", booking_id: alone.id, staff_id: staffIds[1] }]
        })
      }
      const seat = yield* s.bookings.create({ service_id: serviceId, client_id: clientId, start: at(MONDAY_9, 60) })
      // One seat taken of three, yet each member is in the class: neither can be booked elsewhere then.
      for (const member of staffIds) {
        expect(yield* refusal(s.bookings.create({ service_id: solo.id, staff_id: member, client_id: clientId, start: at(MONDAY_9, 60) })))
          .toMatchObject({ code: "slot_unavailable", reasons: [{ code: "booking_overlap", booking_id: seat.id }] })
      }
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses a staff_id outside the service, and an inactive member blocks every start", () =>
    Effect.gen(function*() {
      const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment: "collective" })
      const outsider = yield* s.staff.create({ name: "Out", time_zone: "UTC" })
      expect(yield* refusal(s.bookings.create({ service_id: serviceId, staff_id: outsider.id, client_id: clientId, start: MONDAY_9 })))
        .toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
      yield* s.staff.update(staffIds[1]!, { active: false })
      expect((yield* s.availability.slots({ service_id: serviceId, start: MONDAY_9, end: at(MONDAY_9, 90) })).data).toEqual([])
      expect(yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 })))
        .toMatchObject({ code: "invalid_reference", errors: [{ path: "staff_id" }] })
    }).pipe(Effect.provide(CoreTest)))
})

describe("a refused team start", () => {
  for (const assignment of ["collective", "round_robin"] as const) {
    it.effect(`${assignment}: offers the nearest free starts as far out as one staff member's refusal does`, () =>
      Effect.gen(function*() {
        const { s, serviceId, staffIds, clientId } = yield* team(2, { assignment })
        // Nobody the team needs is free for two weeks: the nearest free starts are 14 days on.
        const away = assignment === "collective" ? [staffIds[1]!] : staffIds
        for (const id of away) yield* s.availability.create({ staff_id: id, type: "blocked", start: NOW, end: "2027-04-12T00:00:00Z" })
        const refused = yield* refusal(s.bookings.create({ service_id: serviceId, client_id: clientId, start: MONDAY_9 }))
        expect(refused).toMatchObject({ code: "outside_availability", status: 409 })
        // 09:00 in Berlin (CEST) on Monday 2027-04-12.
        const back = "2027-04-12T07:00:00Z"
        const alternatives = refused.alternatives as Array<{ start: string; staff_ids: ReadonlyArray<string> }>
        expect(alternatives.map((slot) => slot.start)).toEqual([back, at(back, 30), at(back, 60)])
        if (assignment === "collective") { for (const slot of alternatives) expect(slot.staff_ids).toEqual(staffIds) }
        // The same member's own refusal finds the same starts.
        const solo = yield* s.services.create({ name: "Solo", duration_minutes: 30, staff_ids: [staffIds[1]!] })
        const alone = yield* refusal(
          s.bookings.create({ service_id: solo.id, staff_id: staffIds[1]!, client_id: clientId, start: MONDAY_9 })
        )
        expect((alone.alternatives as Array<{ start: string }>).map((slot) => slot.start)).toEqual(alternatives.map((slot) => slot.start))
      }).pipe(Effect.provide(CoreTest)))
  }
})
