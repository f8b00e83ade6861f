/** checkStart and nearestSlots (src/scheduling/checks.ts): the reasons a start is refused, and its alternatives. */
import { describe, expect, it } from "vitest"
import { checkStart, nearestSlots, type StaffSchedule } from "../../src/scheduling/index.js"
import {
  MIN,
  HOUR,
  DAY,
  ZONE,
  at,
  dhm,
  mdhm,
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
  codes
} from "./fixtures.js"

describe("checkStart", () => {
  const p = policy({ buffer_before: 10 * MIN, buffer_after: 10 * MIN, min_notice: HOUR, max_advance: 30 * DAY })
  const check = (schedule: StaffSchedule, start: number, now = NOW, pol = p) => checkStart({ policy: pol, schedule, start, now })

  it("is empty for a bookable start, even off the slot grid", () => {
    expect(check(staff([WEEKDAYS_9_12]), at("01 09:10"))).toEqual([])
    expect(check(staff([WEEKDAYS_9_12]), at("01 11:30"))).toEqual([])
  })

  it("outside_hours", () => {
    const r = check(staff([WEEKDAYS_9_12]), at("01 11:45"))
    expect(codes(r)).toEqual(["outside_hours"])
    expect(r[0]!.detail).toContain("09:00–12:00")
    expect(codes(check(staff([WEEKDAYS_9_12]), at("06 10:00")))).toEqual(["outside_hours"]) // Saturday
    expect(codes(check(staff([]), at("01 10:00")))).toEqual(["outside_hours"])
    // valid_until is inclusive: the day after is outside.
    const limited = staff([weekly([1, 2, 3, 4, 5], "09:00", "12:00", ZONE, null, "2026-06-01")])
    expect(check(limited, at("01 10:00"))).toEqual([])
    expect(codes(check(limited, at("02 10:00")))).toEqual(["outside_hours"])
  })

  it("date_override", () => {
    const s = staff([WEEKDAYS_9_12, dated("2026-06-03", "13:00", "14:00"), dated("2026-06-03", "15:00", "16:00")])
    const r = check(s, at("03 10:00"))
    expect(codes(r)).toEqual(["date_override"])
    expect(r[0]!.detail).toContain("13:00–14:00, 15:00–16:00")
    expect(check(s, at("03 13:00"))).toEqual([])
    expect(check(s, at("04 10:00"))).toEqual([])
  })

  it("blocked names the time off", () => {
    const s = staff([WEEKDAYS_9_12, blocked("avl_off", at("01 10:15"), at("01 10:45"))])
    const r = check(s, at("01 10:30"))
    expect(codes(r)).toEqual(["blocked"])
    expect(r[0]!.detail).toContain("avl_off")
    expect(r[0]!.detail).toContain("10:15")
    // Touching the time off is fine.
    expect(check(s, at("01 10:45"))).toEqual([])
    expect(check(s, at("01 09:45"))).toEqual([])
  })

  it("booking_overlap and buffer_overlap carry the booking id; held carries the hold id", () => {
    const s = staff([WEEKDAYS_9_12], [
      withBuffers(booking("bkg_over", at("01 10:00"), 30), 5, 5),
      hold("hld_1", at("01 11:30"), 30)
    ])
    expect(check(s, at("01 10:15"))).toEqual([
      expect.objectContaining({ code: "booking_overlap", booking_id: "bkg_over" })
    ])
    const buffer = check(s, at("01 10:35"))
    expect(buffer).toEqual([expect.objectContaining({ code: "buffer_overlap", booking_id: "bkg_over" })])
    expect(buffer[0]!.detail).toContain("bkg_over")
    // The booking occupies 09:55–10:35. Only the slot's raw time overlapping the booking's
    // raw time is a booking_overlap; touching its buffer is a buffer_overlap.
    expect(codes(check(s, at("01 10:32")))).toEqual(["buffer_overlap"])
    expect(codes(check(s, at("01 09:28")))).toEqual(["buffer_overlap"])
    expect(codes(check(s, at("01 09:31")))).toEqual(["booking_overlap"])
    expect(codes(check(s, at("01 10:29")))).toEqual(["booking_overlap"])
    // A candidate occupies [s − 10, s + 40): 10:45 and 09:15 just touch the booking's range.
    expect(check(s, at("01 10:45"))).toEqual([])
    expect(codes(check(s, at("01 09:20")))).toEqual(["buffer_overlap"])
    expect(check(s, at("01 09:15"))).toEqual([])
    const held = check(s, at("01 11:15"))
    expect(held).toEqual([expect.objectContaining({ code: "held", hold_id: "hld_1" })])
    expect(held[0]!.booking_id).toBeUndefined()
  })

  it("capacity_full, and seats are not conflicts", () => {
    const cap = policy({ capacity: 2 })
    const one = staff([WEEKDAYS_9_12], [booking("bkg_1", at("01 10:00"), 30)])
    expect(check(one, at("01 10:00"), NOW, cap)).toEqual([])
    const two = staff([WEEKDAYS_9_12], [booking("bkg_1", at("01 10:00"), 30), hold("hld_1", at("01 10:00"), 30)])
    expect(codes(check(two, at("01 10:00"), NOW, cap))).toEqual(["capacity_full"])
    expect(codes(check(two, at("01 10:15"), NOW, cap))).toEqual(["booking_overlap", "held"])
  })

  it("min_notice and max_advance", () => {
    const s = staff([WEEKDAYS_9_12])
    expect(codes(check(s, at("01 10:00"), at("01 09:30")))).toEqual(["min_notice"])
    expect(check(s, at("01 10:00"), at("01 09:00"))).toEqual([])
    expect(codes(check(s, at("01 10:00"), at("01 10:30")))).toEqual(["min_notice"])
    const r = check(s, at("01 10:00"), at("01 10:00") - 30 * DAY - 1)
    expect(codes(r)).toEqual(["max_advance"])
    expect(check(s, at("01 10:00"), at("01 10:00") - 30 * DAY)).toEqual([])
  })

  it("dst_gap", () => {
    const s = staff([weekly([7], "01:00", "04:00")])
    const r = checkStart({
      policy: policy({ duration: HOUR }),
      schedule: s,
      start: Date.parse("2026-03-29T01:30:00Z"),
      now: Date.parse("2026-03-01T00:00:00Z")
    })
    expect(codes(r)).toEqual(["dst_gap"])
  })

  it("lists one reason per failed check", () => {
    const s = staff([WEEKDAYS_9_12, blocked("avl_off", at("01 07:00"), at("01 08:15"))], [
      booking("bkg_1", at("01 08:00"), 30),
      booking("bkg_2", at("01 08:20"), 10),
      hold("hld_1", at("01 07:30"), 30)
    ])
    const r = check(s, at("01 08:00"), at("01 07:30"))
    expect(r.map((x) => [x.code, x.booking_id ?? x.hold_id ?? null])).toEqual([
      ["blocked", null],
      ["held", "hld_1"],
      ["booking_overlap", "bkg_1"],
      ["booking_overlap", "bkg_2"],
      ["min_notice", null]
    ])
    for (const reason of r) expect(reason.detail.length).toBeGreaterThan(10)
  })
})

describe("nearestSlots", () => {
  it("finds the nearest free slots, excluding the start itself, in chronological order", () => {
    const s = staff([WEEKDAYS_9_12], [booking("bkg_1", at("01 10:00"), 30)])
    const near = nearestSlots({ policy: policy(), schedule: s, start: at("01 10:00"), now: NOW, count: 3 })
    // 09:00 and 11:00 are equally near: the earlier wins the tie.
    expect(near.map((x) => dhm(x.start))).toEqual(["01 09:00", "01 09:30", "01 10:30"])
    const one = nearestSlots({ policy: policy(), schedule: s, start: at("01 10:45"), now: NOW, count: 1 })
    expect(one.map((x) => dhm(x.start))).toEqual(["01 10:30"])
    // A free start is not its own alternative.
    const free = nearestSlots({ policy: policy(), schedule: s, start: at("01 11:00"), now: NOW, count: 2 })
    expect(free.map((x) => dhm(x.start))).toEqual(["01 10:30", "01 11:30"])
  })

  it("searches days and weeks away", () => {
    const s = staff([weekly([3], "09:00", "10:00")])
    const near = nearestSlots({ policy: policy(), schedule: s, start: at("01 10:00"), now: NOW, count: 3 })
    // Wednesday 05-27 09:30 is nearer to Monday 10:00 than Wednesday 06-10.
    expect(near.map((x) => mdhm(x.start))).toEqual(["05-27 09:30", "06-03 09:00", "06-03 09:30"])
    const future = nearestSlots({ policy: policy(), schedule: s, start: at("01 10:00"), now: at("01 00:00"), count: 3 })
    expect(future.map((x) => dhm(x.start))).toEqual(["03 09:00", "03 09:30", "10 09:00"])
    const far = staff([dated("2026-06-25", "09:00", "09:30")])
    expect(nearestSlots({ policy: policy(), schedule: far, start: at("01 10:00"), now: NOW, count: 3 }).map((x) => dhm(x.start)))
      .toEqual(["25 09:00"])
    expect(nearestSlots({ policy: policy(), schedule: staff([]), start: at("01 10:00"), now: NOW, count: 3 })).toEqual([])
  })

  it("never offers the past or beyond max advance", () => {
    const s = staff([WEEKDAYS_9_12])
    const near = nearestSlots({
      policy: policy({ max_advance: 2 * HOUR }),
      schedule: s,
      start: at("01 09:00"),
      now: at("01 09:10"),
      count: 5
    })
    expect(near.map((x) => dhm(x.start))).toEqual(["01 09:30", "01 10:00", "01 10:30", "01 11:00"])
  })
})
