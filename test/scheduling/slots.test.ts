/** computeSlots (src/scheduling/slots.ts): the bookable starts of schedules, and its properties against checkStart. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { AvailabilityRule } from "../../src/availability/rule.js"
import { availableWindows, checkStart, computeSlots, type Occupancy, type SlotPolicy } from "../../src/scheduling/index.js"
import {
  MIN,
  HOUR,
  DAY,
  at,
  hm,
  dhm,
  weekly,
  dated,
  blocked,
  policy,
  booking,
  withBuffers,
  hold,
  WEEKDAYS_9_12,
  staff,
  NOW,
  MONDAY,
  slotsOn,
  starts,
  codes
} from "./fixtures.js"

describe("computeSlots", () => {
  it("steps by the interval from the start of each window, ending inside it", () => {
    const s = staff([weekly([1], "09:10", "12:00")])
    expect(starts(slotsOn(s))).toEqual(["09:10", "09:40", "10:10", "10:40", "11:10"])
    const slots = slotsOn(s)
    expect(slots[0]).toEqual({ start: at("01 09:10"), end: at("01 09:40"), staff_id: "stf_1", remaining: 1 })
    // A range that starts inside the window keeps the window's grid.
    expect(starts(slotsOn(s, policy(), { start: at("01 10:00"), end: at("02 00:00") }))).toEqual(["10:10", "10:40", "11:10"])
    // Starts are < range.end; a slot may end after it.
    expect(starts(slotsOn(s, policy(), { start: at("01 09:00"), end: at("01 10:40") }))).toEqual(["09:10", "09:40", "10:10"])
    // A 60-minute service every 15 minutes; the last one ends exactly at 12:00.
    expect(starts(slotsOn(s, policy({ duration: HOUR, interval: 15 * MIN })))).toEqual(
      ["09:10", "09:25", "09:40", "09:55", "10:10", "10:25", "10:40", "10:55"]
    )
    // Interval longer than the duration.
    expect(starts(slotsOn(staff([WEEKDAYS_9_12]), policy({ interval: 45 * MIN })))).toEqual(["09:00", "09:45", "10:30", "11:15"])
  })

  it("offers nothing that does not fit in one window", () => {
    const s = staff([weekly([1], "09:00", "09:50"), weekly([1], "10:00", "11:00")])
    expect(starts(slotsOn(s, policy({ duration: 45 * MIN, interval: 15 * MIN })))).toEqual(["09:00", "10:00", "10:15"])
  })

  it("keeps occupied ranges with buffers apart, buffers may leave the window", () => {
    // The booking 10:00–10:30 has a 15-minute buffer after it: it occupies 10:00–10:45.
    const b = withBuffers(booking("bkg_1", at("01 10:00"), 30), 0, 15)
    const p = policy({ interval: 15 * MIN, buffer_before: 10 * MIN })
    // A candidate occupies [s − 10, s + 30): it conflicts for 09:30 < s < 10:55.
    expect(starts(slotsOn(staff([WEEKDAYS_9_12], [b]), p))).toEqual(["09:00", "09:15", "09:30", "11:00", "11:15", "11:30"])
    const withAfter = policy({ interval: 15 * MIN, buffer_after: 20 * MIN })
    // [s, s + 50) against [10:00, 10:45): conflicts for 09:10 < s < 10:45.
    expect(starts(slotsOn(staff([WEEKDAYS_9_12], [b]), withAfter))).toEqual(["09:00", "10:45", "11:00", "11:15", "11:30"])
  })

  it("respects min notice (inclusive) and max advance (inclusive)", () => {
    const s = staff([WEEKDAYS_9_12])
    expect(starts(slotsOn(s, policy({ min_notice: HOUR }), MONDAY, at("01 08:20")))[0]).toBe("09:30")
    expect(starts(slotsOn(s, policy({ min_notice: HOUR }), MONDAY, at("01 08:30")))[0]).toBe("09:30")
    expect(starts(slotsOn(s, policy({ min_notice: HOUR }), MONDAY, at("01 08:31")))[0]).toBe("10:00")
    const two = { start: at("01 00:00"), end: at("03 00:00") }
    const late = slotsOn(s, policy({ max_advance: DAY + HOUR }), two, at("01 09:00"))
    expect(dhm(late[late.length - 1]!.start)).toBe("02 10:00")
    expect(slotsOn(s, policy({ max_advance: 0 }), two, at("01 09:00")).map((x) => dhm(x.start))).toEqual(["01 09:00"])
  })

  it("counts seats when capacity > 1: same service and start is a seat, a hold too", () => {
    const p = policy({ capacity: 3 })
    const seats = [booking("bkg_1", at("01 10:00"), 30), booking("bkg_2", at("01 10:00"), 30)]
    const remaining = (occ: Array<Occupancy>) =>
      Object.fromEntries(slotsOn(staff([WEEKDAYS_9_12], occ), p).map((x) => [hm(x.start), x.remaining]))
    expect(remaining(seats)).toEqual({ "09:00": 3, "09:30": 3, "10:00": 1, "10:30": 3, "11:00": 3, "11:30": 3 })
    // A hold takes the last seat.
    const full = [...seats, hold("hld_1", at("01 10:00"), 30)]
    expect(remaining(full)["10:00"]).toBeUndefined()
    expect(codes(checkStart({ policy: p, schedule: staff([WEEKDAYS_9_12], full), start: at("01 10:00"), now: NOW })))
      .toEqual(["capacity_full"])
    // A seat still conflicts with other starts it overlaps (60-minute service every 30 min).
    const long = policy({ capacity: 3, duration: HOUR })
    const r = slotsOn(staff([WEEKDAYS_9_12], [booking("bkg_1", at("01 10:00"), 60)]), long)
    expect(r.map((x) => `${hm(x.start)}:${x.remaining}`)).toEqual(["09:00:3", "10:00:2", "11:00:3"])
    // Another service at the same start is a conflict, not a seat.
    const other = [booking("bkg_9", at("01 10:00"), 30, { service_id: "svc_2" })]
    expect(remaining(other)["10:00"]).toBeUndefined()
  })

  it("with capacity 1 a booking of the same service at the same start is a conflict", () => {
    const s = staff([WEEKDAYS_9_12], [booking("bkg_1", at("01 10:00"), 30)])
    expect(starts(slotsOn(s))).toEqual(["09:00", "09:30", "10:30", "11:00", "11:30"])
    expect(slotsOn(s).every((x) => x.remaining === 1)).toBe(true)
  })

  it("a hold removes the slot like a booking", () => {
    const s = staff([WEEKDAYS_9_12], [hold("hld_1", at("01 11:00"), 30)])
    expect(starts(slotsOn(s))).toEqual(["09:00", "09:30", "10:00", "10:30", "11:30"])
  })

  it("sorts by start, then by the order of the schedules", () => {
    const a = staff([weekly([1], "09:00", "10:00")], [], "stf_a")
    const b = staff([weekly([1], "09:30", "10:30")], [], "stf_b")
    const c = staff([weekly([1], "09:00", "10:00")], [], "stf_c")
    const r = computeSlots({ policy: policy(), schedules: [b, a, c], range: MONDAY, now: NOW })
    expect(r.map((x) => `${hm(x.start)} ${x.staff_id}`)).toEqual([
      "09:00 stf_a",
      "09:00 stf_c",
      "09:30 stf_b",
      "09:30 stf_a",
      "09:30 stf_c",
      "10:00 stf_b"
    ])
  })

  it("takes occupancy in any order", () => {
    const occ = [booking("bkg_3", at("01 11:00"), 30), booking("bkg_1", at("01 09:00"), 30), hold("hld_2", at("01 10:00"), 30)]
    expect(starts(slotsOn(staff([WEEKDAYS_9_12], occ)))).toEqual(["09:30", "10:30", "11:30"])
  })

  it("returns nothing for an empty range or no windows", () => {
    expect(slotsOn(staff([WEEKDAYS_9_12]), policy(), { start: at("01 10:00"), end: at("01 10:00") })).toEqual([])
    expect(slotsOn(staff([]))).toEqual([])
    expect(computeSlots({ policy: policy(), schedules: [], range: MONDAY, now: NOW })).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------
// Properties

const ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"] as const
const BASES = ["2026-03-06", "2026-03-27", "2026-04-03", "2026-06-01", "2026-10-02", "2026-10-23", "2026-10-30"] as const
const Q = 15 * MIN

const timeArb = (max: number) =>
  fc.integer({ min: 0, max }).map((q) => {
    const m = q * 15
    return `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`
  })
const wallRange = fc.tuple(timeArb(96), timeArb(96)).filter(([a, b]) => a < b)

const scenarioArb = fc.record({
  base: fc.constantFrom(...BASES),
  zone: fc.constantFrom(...ZONES),
  weekly: fc.array(
    fc.record({
      days: fc.subarray([1, 2, 3, 4, 5, 6, 7], { minLength: 1 }),
      hours: wallRange,
      from: fc.option(fc.integer({ min: -3, max: 6 }), { nil: null }),
      until: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null })
    }),
    { minLength: 1, maxLength: 3 }
  ),
  dates: fc.array(fc.record({ day: fc.integer({ min: -1, max: 6 }), hours: wallRange }), { maxLength: 2 }),
  blocked: fc.array(fc.record({ at: fc.integer({ min: -20, max: 500 }), length: fc.integer({ min: 1, max: 40 }) }), { maxLength: 2 }),
  occupancy: fc.array(
    fc.record({
      at: fc.integer({ min: -40, max: 500 }),
      minutes: fc.constantFrom(15, 30, 45, 60, 90),
      before: fc.constantFrom(0, 5, 15),
      after: fc.constantFrom(0, 10, 30),
      hold: fc.boolean(),
      service: fc.constantFrom("svc_1", "svc_1", "svc_2")
    }),
    { maxLength: 14 }
  ),
  policy: fc.record({
    duration: fc.constantFrom(15, 30, 45, 60, 120).map((m) => m * MIN),
    buffer_before: fc.constantFrom(0, 5, 15).map((m) => m * MIN),
    buffer_after: fc.constantFrom(0, 10, 30).map((m) => m * MIN),
    interval: fc.constantFrom(15, 20, 30, 45, 60).map((m) => m * MIN),
    capacity: fc.constantFrom(1, 1, 2, 3),
    min_notice: fc.constantFrom(0, 60, 1440).map((m) => m * MIN),
    max_advance: fc.constantFrom(1, 3, 30).map((d) => d * DAY)
  }),
  rangeStart: fc.integer({ min: 0, max: 96 }),
  rangeDays: fc.integer({ min: 1, max: 4 }),
  nowOffset: fc.integer({ min: -2 * 96, max: 96 })
})
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer A> ? A : never

const shift = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10)

const build = (sc: Scenario) => {
  const origin = Date.parse(`${sc.base}T00:00:00Z`)
  const range = { start: origin + sc.rangeStart * Q, end: origin + sc.rangeStart * Q + sc.rangeDays * DAY }
  const rules: Array<AvailabilityRule> = [
    ...sc.weekly.map((w) =>
      weekly(
        w.days,
        w.hours[0],
        w.hours[1],
        sc.zone,
        w.from === null ? null : shift(sc.base, w.from),
        w.until === null ? null : shift(sc.base, w.until)
      )
    ),
    ...sc.dates.map((d) => dated(shift(sc.base, d.day), d.hours[0], d.hours[1], sc.zone)),
    ...sc.blocked.map((b, i) => blocked(`avl_b${i}`, origin + b.at * Q, origin + (b.at + b.length) * Q))
  ]
  const occupancy: Array<Occupancy> = sc.occupancy.map((o, i) => {
    const start = range.start + o.at * Q
    return {
      kind: o.hold ? "hold" : "booking",
      id: `${o.hold ? "hld" : "bkg"}_${i}`,
      service_id: o.service,
      start,
      end: start + o.minutes * MIN,
      occupied_start: start - o.before * MIN,
      occupied_end: start + (o.minutes + o.after) * MIN
    }
  })
  const pol: SlotPolicy = { service_id: "svc_1", ...sc.policy }
  return { range, schedule: staff(rules, occupancy), policy: pol, now: range.start + sc.nowOffset * Q }
}

const occupiedConflict = (p: SlotPolicy, s: number, o: Occupancy) =>
  o.occupied_start < s + p.duration + p.buffer_after && s - p.buffer_before < o.occupied_end
const isSeat = (p: SlotPolicy, s: number, o: Occupancy) => p.capacity > 1 && o.service_id === p.service_id && o.start === s

describe("slot properties", () => {
  it("(a) no returned slot conflicts with any occupancy, and each fits the rules", () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { range, schedule, policy: p, now } = build(sc)
        const slots = computeSlots({ policy: p, schedules: [schedule], range, now })
        const windows = availableWindows(schedule.rules, range)
        let previous = Number.NEGATIVE_INFINITY
        for (const slot of slots) {
          expect(slot.start).toBeGreaterThan(previous)
          previous = slot.start
          expect(slot.end).toBe(slot.start + p.duration)
          expect(slot.start >= range.start && slot.start < range.end).toBe(true)
          expect(slot.start >= now + p.min_notice && slot.start <= now + p.max_advance).toBe(true)
          const w = windows.find((x) => x.start <= slot.start && slot.end <= x.end)
          expect(w).toBeDefined()
          expect((slot.start - w!.start) % p.interval).toBe(0)
          let seats = 0
          for (const o of schedule.occupancy) {
            if (isSeat(p, slot.start, o)) seats++
            else expect(occupiedConflict(p, slot.start, o)).toBe(false)
          }
          expect(slot.remaining).toBe(p.capacity - seats)
          expect(slot.remaining).toBeGreaterThan(0)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("(b) checkStart is empty exactly for the grid starts computeSlots returns", () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const { range, schedule, policy: p, now } = build(sc)
        const slots = computeSlots({ policy: p, schedules: [schedule], range, now })
        for (const slot of slots) expect(checkStart({ policy: p, schedule, start: slot.start, now })).toEqual([])
        const returned = new Set(slots.map((x) => x.start))
        for (const w of availableWindows(schedule.rules, range)) {
          for (let s = w.start; s < range.end && s < w.end; s += p.interval) {
            if (s < range.start) continue
            const reasons = checkStart({ policy: p, schedule, start: s, now })
            expect(reasons.length === 0).toBe(returned.has(s))
          }
        }
      }),
      { numRuns: 200 }
    )
  })

  it("(c) booking a returned slot (capacity 1) removes it and exactly the slots it conflicts with; removing restores", () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (sc, pick) => {
        const { range, schedule, now } = build(sc)
        const p = { ...build(sc).policy, capacity: 1 }
        const before = computeSlots({ policy: p, schedules: [schedule], range, now })
        if (before.length === 0) return
        const chosen = before[pick % before.length]!
        const added: Occupancy = {
          kind: "booking",
          id: "bkg_new",
          service_id: p.service_id,
          start: chosen.start,
          end: chosen.end,
          occupied_start: chosen.start - p.buffer_before,
          occupied_end: chosen.end + p.buffer_after
        }
        const booked = { ...schedule, occupancy: [...schedule.occupancy, added] }
        const after = computeSlots({ policy: p, schedules: [booked], range, now })
        expect(after.some((x) => x.start === chosen.start)).toBe(false)
        expect(after).toEqual(before.filter((x) => !occupiedConflict(p, x.start, added)))
        const restored = { ...booked, occupancy: booked.occupancy.filter((o) => o.id !== "bkg_new") }
        expect(computeSlots({ policy: p, schedules: [restored], range, now })).toEqual(before)
      }),
      { numRuns: 200 }
    )
  })

  it("(d) a seat at a returned slot (capacity > 1) lowers its remaining by one", () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), fc.integer({ min: 2, max: 4 }), (sc, pick, capacity) => {
        const { range, schedule, now } = build(sc)
        const p = { ...build(sc).policy, capacity }
        const before = computeSlots({ policy: p, schedules: [schedule], range, now })
        if (before.length === 0) return
        const chosen = before[pick % before.length]!
        const seat: Occupancy = {
          kind: pick % 2 === 0 ? "booking" : "hold",
          id: "seat",
          service_id: p.service_id,
          start: chosen.start,
          end: chosen.end,
          occupied_start: chosen.start - p.buffer_before,
          occupied_end: chosen.end + p.buffer_after
        }
        const after = computeSlots({ policy: p, schedules: [{ ...schedule, occupancy: [seat, ...schedule.occupancy] }], range, now })
        const same = after.find((x) => x.start === chosen.start)
        if (chosen.remaining === 1) expect(same).toBeUndefined()
        else expect(same?.remaining).toBe(chosen.remaining - 1)
        expect(after.filter((x) => x.start !== chosen.start))
          .toEqual(before.filter((x) => x.start !== chosen.start && !occupiedConflict(p, x.start, seat)))
      }),
      { numRuns: 200 }
    )
  })

  it("several schedules give each one's slots, merged by start in schedule order", () => {
    fc.assert(
      fc.property(fc.array(scenarioArb, { minLength: 2, maxLength: 4 }), (scs) => {
        const first = build(scs[0]!)
        const schedules = scs.map((sc, i) => ({ ...build(sc).schedule, staff_id: `stf_${i}` }))
        const all = computeSlots({ policy: first.policy, schedules, range: first.range, now: first.now })
        const expected = schedules
          .flatMap((s) => computeSlots({ policy: first.policy, schedules: [s], range: first.range, now: first.now }))
          .sort((a, b) => a.start - b.start)
        expect(all).toEqual(expected)
      }),
      { numRuns: 100 }
    )
  })
})
