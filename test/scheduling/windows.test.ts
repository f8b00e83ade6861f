import { describe, expect, it } from "vitest"
import type { AvailabilityRule } from "../../src/availability/rule.js"
import { availableWindows, type Interval } from "../../src/scheduling/index.js"

const HOUR = 3_600_000
const DAY = 86_400_000
const utc = (iso: string) => Date.parse(iso)
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
const show = (ws: ReadonlyArray<Interval>) => ws.map((w) => `${iso(w.start)}/${iso(w.end)}`)

const meta = {
  object: "availability" as const,
  staff_id: "stf_1",
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  metadata: {}
}
let n = 0
const weekly = (
  weekdays: Array<number>,
  start: string,
  end: string,
  opts: { zone?: string; from?: string | null; until?: string | null } = {}
): AvailabilityRule => ({
  ...meta,
  id: `avl_w${n++}`,
  type: "weekly",
  time_zone: opts.zone ?? "UTC",
  weekdays,
  start_time: start,
  end_time: end,
  valid_from: opts.from ?? null,
  valid_until: opts.until ?? null
})
const dated = (date: string, start: string, end: string, zone = "UTC"): AvailabilityRule => ({
  ...meta,
  id: `avl_d${n++}`,
  type: "date",
  time_zone: zone,
  date,
  start_time: start,
  end_time: end
})
const blocked = (start: string, end: string): AvailabilityRule => ({
  ...meta,
  id: `avl_b${n++}`,
  type: "blocked",
  time_zone: "UTC",
  start,
  end
})

// 2026-06-01 is a Monday.
const june = (from: string, to: string) => ({ start: utc(`2026-06-${from}Z`), end: utc(`2026-06-${to}Z`) })
const WEEK = june("01T00:00:00", "08T00:00:00")

describe("availableWindows", () => {
  it("repeats weekly hours on their weekdays, sorted", () => {
    const ws = availableWindows([weekly([1, 3, 5], "09:00", "17:00")], WEEK)
    expect(show(ws)).toEqual([
      "2026-06-01T09:00:00Z/2026-06-01T17:00:00Z",
      "2026-06-03T09:00:00Z/2026-06-03T17:00:00Z",
      "2026-06-05T09:00:00Z/2026-06-05T17:00:00Z"
    ])
  })

  it("follows the rule's zone", () => {
    const ws = availableWindows([weekly([1], "09:00", "17:00", { zone: "Asia/Kolkata" })], WEEK)
    expect(show(ws)).toEqual(["2026-06-01T03:30:00Z/2026-06-01T11:30:00Z"])
  })

  it("merges overlapping and touching rules", () => {
    const ws = availableWindows([
      weekly([1], "09:00", "12:00"),
      weekly([1], "11:00", "13:00"),
      weekly([1], "13:00", "14:00"),
      weekly([1], "15:00", "16:00")
    ], WEEK)
    expect(show(ws)).toEqual([
      "2026-06-01T09:00:00Z/2026-06-01T14:00:00Z",
      "2026-06-01T15:00:00Z/2026-06-01T16:00:00Z"
    ])
  })

  it("merges adjacent windows across midnight into one (Mon 18:00–24:00 + Tue 00:00–06:00)", () => {
    const rules = [weekly([1], "18:00", "24:00"), weekly([2], "00:00", "06:00")]
    expect(show(availableWindows(rules, WEEK))).toEqual(["2026-06-01T18:00:00Z/2026-06-02T06:00:00Z"])
    // The same in a zone with an offset.
    const berlin = [weekly([1], "18:00", "24:00", { zone: "Europe/Berlin" }), weekly([2], "00:00", "06:00", { zone: "Europe/Berlin" })]
    expect(show(availableWindows(berlin, WEEK))).toEqual(["2026-06-01T16:00:00Z/2026-06-02T04:00:00Z"])
  })

  it("returns windows that intersect the range whole, not clipped", () => {
    const rules = [weekly([1], "18:00", "24:00"), weekly([2], "00:00", "06:00")]
    // A range inside Tuesday's early hours still returns the window from Monday 18:00.
    expect(show(availableWindows(rules, june("02T03:00:00", "02T04:00:00"))))
      .toEqual(["2026-06-01T18:00:00Z/2026-06-02T06:00:00Z"])
    expect(show(availableWindows([weekly([1], "09:00", "17:00")], june("01T12:00:00", "01T12:30:00"))))
      .toEqual(["2026-06-01T09:00:00Z/2026-06-01T17:00:00Z"])
    // Half-open: a window ending at the range start, or starting at its end, is not returned.
    expect(availableWindows([weekly([1], "09:00", "17:00")], june("01T17:00:00", "01T18:00:00"))).toEqual([])
    expect(availableWindows([weekly([1], "09:00", "17:00")], june("01T08:00:00", "01T09:00:00"))).toEqual([])
    expect(availableWindows([weekly([1], "09:00", "17:00")], june("01T12:00:00", "01T12:00:00"))).toEqual([])
  })

  it("finds the real start of a run of 24-hour days that began days before the range", () => {
    // Available from Monday 08:00 without a break until Friday 20:00.
    const rules = [weekly([1], "08:00", "24:00"), weekly([2, 3, 4], "00:00", "24:00"), weekly([5], "00:00", "20:00")]
    const expected = ["2026-06-01T08:00:00Z/2026-06-05T20:00:00Z"]
    expect(show(availableWindows(rules, june("04T10:00:00", "04T11:00:00")))).toEqual(expected)
    expect(show(availableWindows(rules, june("01T10:00:00", "01T11:00:00")))).toEqual(expected)
    expect(show(availableWindows(rules, june("05T19:00:00", "06T11:00:00")))).toEqual(expected)
  })

  it("terminates on availability that never ends, starting the same for ranges of the same day", () => {
    const rules = [weekly([1, 2, 3, 4, 5, 6, 7], "00:00", "24:00")]
    const a = availableWindows(rules, june("10T10:00:00", "10T11:00:00"))
    const b = availableWindows(rules, june("10T13:07:00", "12T09:00:00"))
    expect(a).toHaveLength(1)
    expect(a[0]!.start).toBeLessThanOrEqual(utc("2026-06-10T00:00:00Z") - 30 * DAY)
    expect(a[0]!.end).toBeGreaterThanOrEqual(utc("2026-06-12T00:00:00Z") + 30 * DAY)
    expect(b[0]!.start).toBe(a[0]!.start)
    expect(a[0]!.start % DAY).toBe(0)
  })

  it("valid_from and valid_until are inclusive", () => {
    const rule = weekly([1, 2, 3, 4, 5, 6, 7], "09:00", "10:00", { from: "2026-06-03", until: "2026-06-05" })
    expect(show(availableWindows([rule], WEEK))).toEqual([
      "2026-06-03T09:00:00Z/2026-06-03T10:00:00Z",
      "2026-06-04T09:00:00Z/2026-06-04T10:00:00Z",
      "2026-06-05T09:00:00Z/2026-06-05T10:00:00Z"
    ])
    const open = weekly([1, 2, 3, 4, 5, 6, 7], "09:00", "10:00", { until: "2026-06-01" })
    expect(show(availableWindows([open], WEEK))).toEqual(["2026-06-01T09:00:00Z/2026-06-01T10:00:00Z"])
    const single = weekly([3], "09:00", "10:00", { from: "2026-06-03", until: "2026-06-03" })
    expect(show(availableWindows([single], WEEK))).toEqual(["2026-06-03T09:00:00Z/2026-06-03T10:00:00Z"])
    const wrongDay = weekly([4], "09:00", "10:00", { from: "2026-06-03", until: "2026-06-03" })
    expect(availableWindows([wrongDay], WEEK)).toEqual([])
  })

  it("date rules replace the weekly hours of their date, and stack", () => {
    const rules = [
      weekly([1, 2, 3, 4, 5], "09:00", "17:00"),
      dated("2026-06-03", "12:00", "14:00"),
      dated("2026-06-03", "15:00", "16:00"),
      dated("2026-06-03", "13:30", "14:30")
    ]
    expect(show(availableWindows(rules, june("02T00:00:00", "05T00:00:00")))).toEqual([
      "2026-06-02T09:00:00Z/2026-06-02T17:00:00Z",
      "2026-06-03T12:00:00Z/2026-06-03T14:30:00Z",
      "2026-06-03T15:00:00Z/2026-06-03T16:00:00Z",
      "2026-06-04T09:00:00Z/2026-06-04T17:00:00Z"
    ])
  })

  it("a date rule opens a day without weekly hours, and can extend beyond them", () => {
    const rules = [weekly([1, 2, 3, 4, 5], "09:00", "17:00"), dated("2026-06-06", "10:00", "12:00"), dated("2026-06-05", "07:00", "20:00")]
    expect(show(availableWindows(rules, june("05T00:00:00", "08T00:00:00")))).toEqual([
      "2026-06-05T07:00:00Z/2026-06-05T20:00:00Z",
      "2026-06-06T10:00:00Z/2026-06-06T12:00:00Z"
    ])
  })

  it("a date rule applies to its local date in its zone", () => {
    const rules = [
      weekly([1, 2, 3, 4, 5], "09:00", "17:00", { zone: "America/New_York" }),
      dated("2026-06-03", "20:00", "23:00", "America/New_York")
    ]
    // 2026-06-03 in New York runs 04:00Z–04:00Z; its weekly hours are replaced.
    expect(show(availableWindows(rules, june("02T20:00:00", "04T14:00:00")))).toEqual([
      "2026-06-02T13:00:00Z/2026-06-02T21:00:00Z",
      "2026-06-04T00:00:00Z/2026-06-04T03:00:00Z",
      "2026-06-04T13:00:00Z/2026-06-04T21:00:00Z"
    ])
  })

  it("blocked ranges cut windows", () => {
    const rules = [
      weekly([1, 2, 3], "09:00", "17:00"),
      blocked("2026-06-01T11:00:00Z", "2026-06-01T12:00:00Z"),
      blocked("2026-06-01T11:30:00Z", "2026-06-01T12:30:00Z"),
      blocked("2026-06-01T16:00:00Z", "2026-06-02T10:00:00Z"),
      blocked("2026-06-03T00:00:00Z", "2026-06-04T00:00:00Z")
    ]
    expect(show(availableWindows(rules, WEEK))).toEqual([
      "2026-06-01T09:00:00Z/2026-06-01T11:00:00Z",
      "2026-06-01T12:30:00Z/2026-06-01T16:00:00Z",
      "2026-06-02T10:00:00Z/2026-06-02T17:00:00Z"
    ])
  })

  it("a blocked range also cuts date-rule hours and merged night windows", () => {
    const rules = [
      weekly([1], "18:00", "24:00"),
      weekly([2], "00:00", "06:00"),
      dated("2026-06-04", "09:00", "12:00"),
      blocked("2026-06-01T23:00:00Z", "2026-06-02T01:00:00Z"),
      blocked("2026-06-04T08:00:00Z", "2026-06-04T10:00:00Z")
    ]
    expect(show(availableWindows(rules, WEEK))).toEqual([
      "2026-06-01T18:00:00Z/2026-06-01T23:00:00Z",
      "2026-06-02T01:00:00Z/2026-06-02T06:00:00Z",
      "2026-06-04T10:00:00Z/2026-06-04T12:00:00Z"
    ])
  })

  it("ignores rules of other weekdays and returns nothing without wall-clock rules", () => {
    expect(availableWindows([], WEEK)).toEqual([])
    expect(availableWindows([blocked("2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z")], WEEK)).toEqual([])
    expect(availableWindows([weekly([7], "09:00", "10:00")], june("01T00:00:00", "07T00:00:00"))).toEqual([])
  })

  it("spans long ranges day by day", () => {
    const ws = availableWindows([weekly([1, 2, 3, 4, 5], "09:00", "17:00", { zone: "Europe/Berlin" })], {
      start: utc("2026-01-01T00:00:00Z"),
      end: utc("2027-01-01T00:00:00Z")
    })
    expect(ws).toHaveLength(261)
    for (const w of ws) expect(w.end - w.start).toBe(8 * HOUR)
    for (let i = 1; i < ws.length; i++) expect(ws[i]!.start).toBeGreaterThan(ws[i - 1]!.end)
  })
})
