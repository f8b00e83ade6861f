import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { AvailabilityRule } from "../../src/availability/rule.js"
import {
  addDays,
  availableWindows,
  canonicalZone,
  checkStart,
  computeSlots,
  hasGapOn,
  localDateOf,
  localToUtc,
  type SlotPolicy,
  type StaffSchedule,
  weekdayOf
} from "../../src/scheduling/index.js"

const MIN = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7]

const utc = (iso: string) => Date.parse(iso)
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

const meta = {
  object: "availability" as const,
  staff_id: "stf_1",
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  metadata: {}
}
const weekly = (zone: string, start: string, end: string, weekdays = ALL_DAYS): AvailabilityRule => ({
  ...meta,
  id: "avl_w",
  type: "weekly",
  time_zone: zone,
  weekdays,
  start_time: start,
  end_time: end,
  valid_from: null,
  valid_until: null
})

const policy = (over: Partial<SlotPolicy> = {}): SlotPolicy => ({
  service_id: "svc_1",
  duration: 30 * MIN,
  buffer_before: 0,
  buffer_after: 0,
  interval: 30 * MIN,
  capacity: 1,
  min_notice: 0,
  max_advance: 400 * DAY,
  ...over
})
const schedule = (rules: Array<AvailabilityRule>): StaffSchedule => ({ staff_id: "stf_1", rules, occupancy: [] })

/** Independent oracle: the wall clock of an instant in a zone, straight from Intl. */
const oracleFormatters = new Map<string, Intl.DateTimeFormat>()
const wallOf = (zone: string, ms: number): string => {
  let f = oracleFormatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit"
    })
    oracleFormatters.set(zone, f)
  }
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, x.value]))
  return `${p["year"]}-${p["month"]}-${p["day"]} ${p["hour"]}:${p["minute"]}`
}
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`

describe("zone names", () => {
  it("are matched case-insensitively and spelled in their canonical case", () => {
    expect(canonicalZone("europe/berlin")).toBe("Europe/Berlin")
    expect(canonicalZone("EUROPE/BERLIN")).toBe("Europe/Berlin")
    expect(canonicalZone("america/port-au-prince")).toBe("America/Port-au-Prince")
    expect(canonicalZone("america/argentina/buenos_aires")).toBe("America/Argentina/Buenos_Aires")
    expect(canonicalZone("utc")).toBe("UTC")
    expect(canonicalZone("etc/gmt+5")).toBe("Etc/GMT+5")
  })

  it("keep current and linked names as they are rather than renaming them", () => {
    expect(canonicalZone("Asia/Kolkata")).toBe("Asia/Kolkata")
    expect(canonicalZone("asia/kolkata")).toBe("Asia/Kolkata")
    expect(canonicalZone("Asia/Calcutta")).toBe("Asia/Calcutta")
    expect(canonicalZone("us/pacific")).toBe("US/Pacific")
    expect(canonicalZone("Europe/Kyiv")).toBe("Europe/Kyiv")
  })

  it("every zone the runtime lists maps to itself, from any case", () => {
    for (const zone of Intl.supportedValuesOf("timeZone")) {
      expect(canonicalZone(zone)).toBe(zone)
      expect(canonicalZone(zone.toLowerCase())).toBe(zone)
      expect(canonicalZone(zone.toUpperCase())).toBe(zone)
    }
  })

  it("are refused when they name no zone", () => {
    for (const name of ["", "Europe/Atlantis", "CEST", "+01:00", "Europe/Berlin ", "x".repeat(65)]) {
      expect(canonicalZone(name)).toBeUndefined()
    }
  })
})

describe("calendar helpers", () => {
  it("weekdayOf is ISO (1 = Monday … 7 = Sunday)", () => {
    expect(weekdayOf("2026-06-01")).toBe(1)
    expect(weekdayOf("2026-03-29")).toBe(7)
    expect(weekdayOf("1970-01-01")).toBe(4)
    expect(weekdayOf("2000-02-29")).toBe(2)
    expect(weekdayOf("1969-12-31")).toBe(3)
  })

  it("addDays crosses months, leap days and years in both directions", () => {
    expect(addDays("2026-02-28", 1)).toBe("2026-03-01")
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29")
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01")
    expect(addDays("2026-01-01", -1)).toBe("2025-12-31")
    expect(addDays("2026-03-29", 0)).toBe("2026-03-29")
    expect(addDays("2026-03-01", 365)).toBe("2027-03-01")
  })

  it("addDays and weekdayOf agree with Date for random dates", () => {
    fc.assert(fc.property(fc.integer({ min: -30_000, max: 60_000 }), fc.integer({ min: -400, max: 400 }), (day, k) => {
      const date = new Date(day * DAY).toISOString().slice(0, 10)
      expect(addDays(date, k)).toBe(new Date((day + k) * DAY).toISOString().slice(0, 10))
      expect(weekdayOf(date)).toBe(((new Date(day * DAY).getUTCDay() + 6) % 7) + 1)
    }))
  })
})

describe("localToUtc", () => {
  it("converts ordinary times with the day's offset", () => {
    expect(iso(localToUtc("Europe/Berlin", "2026-01-15", 9 * 60))).toBe("2026-01-15T08:00:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-07-15", 9 * 60))).toBe("2026-07-15T07:00:00Z")
    expect(iso(localToUtc("America/New_York", "2026-07-15", 9 * 60))).toBe("2026-07-15T13:00:00Z")
    expect(iso(localToUtc("Asia/Kolkata", "2026-03-29", 9 * 60))).toBe("2026-03-29T03:30:00Z")
    expect(iso(localToUtc("Asia/Tokyo", "2026-03-29", 0))).toBe("2026-03-28T15:00:00Z")
    expect(iso(localToUtc("UTC", "2026-03-29", 0))).toBe("2026-03-29T00:00:00Z")
  })

  it("1440 is the next day's 00:00", () => {
    expect(localToUtc("Europe/Berlin", "2026-03-28", 1440)).toBe(localToUtc("Europe/Berlin", "2026-03-29", 0))
    expect(localToUtc("Europe/Berlin", "2026-10-25", 1440)).toBe(localToUtc("Europe/Berlin", "2026-10-26", 0))
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 1440))).toBe("2026-03-29T22:00:00Z")
  })

  it("maps a time in a spring-forward gap to the first instant after the gap", () => {
    // Berlin 2026-03-29: 02:00 CET → 03:00 CEST at 01:00Z.
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 119))).toBe("2026-03-29T00:59:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 120))).toBe("2026-03-29T01:00:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 150))).toBe("2026-03-29T01:00:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 180))).toBe("2026-03-29T01:00:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-03-29", 181))).toBe("2026-03-29T01:01:00Z")
    // New York 2026-03-08: 02:00 EST → 03:00 EDT at 07:00Z.
    expect(iso(localToUtc("America/New_York", "2026-03-08", 150))).toBe("2026-03-08T07:00:00Z")
    expect(iso(localToUtc("America/New_York", "2026-03-08", 180))).toBe("2026-03-08T07:00:00Z")
    // Lord Howe 2026-10-04: 02:00 (+10:30) → 02:30 (+11) at 15:30Z the day before.
    expect(iso(localToUtc("Australia/Lord_Howe", "2026-10-04", 135))).toBe("2026-10-03T15:30:00Z")
    expect(iso(localToUtc("Australia/Lord_Howe", "2026-10-04", 150))).toBe("2026-10-03T15:30:00Z")
  })

  it("maps a time in a fall-back overlap to its earlier occurrence", () => {
    // Berlin 2026-10-25: 03:00 CEST → 02:00 CET at 01:00Z; 02:30 happens at 00:30Z and 01:30Z.
    expect(iso(localToUtc("Europe/Berlin", "2026-10-25", 150))).toBe("2026-10-25T00:30:00Z")
    expect(iso(localToUtc("Europe/Berlin", "2026-10-25", 180))).toBe("2026-10-25T02:00:00Z")
    // New York 2026-11-01: 01:30 happens at 05:30Z and 06:30Z.
    expect(iso(localToUtc("America/New_York", "2026-11-01", 90))).toBe("2026-11-01T05:30:00Z")
    expect(iso(localToUtc("America/New_York", "2026-11-01", 120))).toBe("2026-11-01T07:00:00Z")
    // Lord Howe 2026-04-05: 02:00 (+11) → 01:30 (+10:30); 01:45 happens at 14:45Z and 15:15Z.
    expect(iso(localToUtc("Australia/Lord_Howe", "2026-04-05", 105))).toBe("2026-04-04T14:45:00Z")
    expect(iso(localToUtc("Australia/Lord_Howe", "2026-04-05", 120))).toBe("2026-04-04T15:30:00Z")
  })

  it("handles a transition at midnight (America/Santiago skips 00:00–01:00)", () => {
    expect(iso(localToUtc("America/Santiago", "2026-09-06", 0))).toBe("2026-09-06T04:00:00Z")
    expect(iso(localToUtc("America/Santiago", "2026-09-06", 60))).toBe("2026-09-06T04:00:00Z")
    expect(localToUtc("America/Santiago", "2026-09-05", 1440)).toBe(localToUtc("America/Santiago", "2026-09-06", 0))
  })

  it("agrees with Intl for random wall-clock times (gap → after it, overlap → earlier)", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago", "Pacific/Chatham"]
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 18_262, max: 21_915 }),
        fc.integer({ min: 0, max: 1439 }),
        (zone, day, minutes) => {
          const date = new Date(day * DAY).toISOString().slice(0, 10)
          const want = `${date} ${hhmm(minutes)}`
          const t = localToUtc(zone, date, minutes)
          expect(t % MIN).toBe(0)
          if (wallOf(zone, t) === want) {
            // The earlier occurrence: no instant 30 or 60 minutes before reads the same.
            expect(wallOf(zone, t - 30 * MIN)).not.toBe(want)
            expect(wallOf(zone, t - HOUR)).not.toBe(want)
          } else {
            // Nonexistent wall time: t is the first instant after the gap.
            expect(wallOf(zone, t - MIN) < want).toBe(true)
            expect(wallOf(zone, t) > want).toBe(true)
          }
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("localDateOf is the local calendar date", () => {
    expect(localDateOf("Europe/Berlin", utc("2026-03-28T23:30:00Z"))).toBe("2026-03-29")
    expect(localDateOf("Europe/Berlin", utc("2026-03-28T22:59:59Z"))).toBe("2026-03-28")
    expect(localDateOf("America/New_York", utc("2026-11-02T04:59:00Z"))).toBe("2026-11-01")
    expect(localDateOf("America/New_York", utc("2026-11-02T05:00:00Z"))).toBe("2026-11-02")
    expect(localDateOf("Pacific/Kiritimati", utc("2026-01-01T10:00:00Z"))).toBe("2026-01-02")
    expect(localDateOf("Pacific/Pago_Pago", utc("2026-01-01T10:00:00Z"))).toBe("2025-12-31")
    fc.assert(
      fc.property(
        fc.constantFrom("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"),
        fc.integer({ min: utc("2020-01-01T00:00:00Z") / MIN, max: utc("2030-01-01T00:00:00Z") / MIN }),
        (zone, minute) => {
          expect(localDateOf(zone, minute * MIN)).toBe(wallOf(zone, minute * MIN).slice(0, 10))
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("hasGapOn finds a gap only inside the given wall-clock range", () => {
    expect(hasGapOn("Europe/Berlin", "2026-03-29", 60, 240)).toBe(true)
    expect(hasGapOn("Europe/Berlin", "2026-03-29", 150, 160)).toBe(true)
    expect(hasGapOn("Europe/Berlin", "2026-03-29", 9 * 60, 17 * 60)).toBe(false)
    expect(hasGapOn("Europe/Berlin", "2026-03-29", 0, 120)).toBe(false)
    expect(hasGapOn("Europe/Berlin", "2026-03-29", 180, 1440)).toBe(false)
    expect(hasGapOn("Europe/Berlin", "2026-03-28", 0, 1440)).toBe(false)
    expect(hasGapOn("Europe/Berlin", "2026-03-30", 0, 1440)).toBe(false)
    expect(hasGapOn("Europe/Berlin", "2026-10-25", 0, 1440)).toBe(false) // an overlap is no gap
    expect(hasGapOn("America/New_York", "2026-03-08", 0, 1440)).toBe(true)
    expect(hasGapOn("Australia/Lord_Howe", "2026-10-04", 120, 150)).toBe(true)
    expect(hasGapOn("Australia/Lord_Howe", "2026-10-04", 150, 1440)).toBe(false)
    expect(hasGapOn("Asia/Tokyo", "2026-03-29", 0, 1440)).toBe(false)
    expect(hasGapOn("America/Santiago", "2026-09-06", 0, 30)).toBe(true)
  })
})

/** [zone, date of the transition, offset (h) the day before, offset on the day at 09:00 and after]. */
const transitions: ReadonlyArray<readonly [string, string, number, number]> = [
  ["Europe/Berlin", "2026-03-29", 1, 2],
  ["Europe/Berlin", "2026-10-25", 2, 1],
  ["America/New_York", "2026-03-08", -5, -4],
  ["America/New_York", "2026-11-01", -4, -5],
  ["Australia/Lord_Howe", "2026-04-05", 11, 10.5],
  ["Australia/Lord_Howe", "2026-10-04", 10.5, 11],
  ["Asia/Tokyo", "2026-03-29", 9, 9],
  ["Asia/Kolkata", "2026-10-25", 5.5, 5.5]
]

describe("wall-clock rules across DST", () => {
  it.each(transitions)("09:00–17:00 in %s stays 09:00–17:00 local around %s", (zone, date, before, after) => {
    const rule = weekly(zone, "09:00", "17:00")
    const days = [addDays(date, -1), date, addDays(date, 1)]
    const range = { start: localToUtc(zone, days[0]!, 0), end: localToUtc(zone, addDays(date, 2), 0) }
    const windows = availableWindows([rule], range)
    const expected = days.map((d, i) => {
      const offset = (i === 0 ? before : after) * HOUR
      const midnight = Date.parse(`${d}T00:00:00Z`)
      return { start: midnight + 9 * HOUR - offset, end: midnight + 17 * HOUR - offset }
    })
    expect(windows).toEqual(expected)
    for (const w of windows) {
      expect(w.end - w.start).toBe(8 * HOUR)
      expect(wallOf(zone, w.start).slice(11)).toBe("09:00")
      expect(wallOf(zone, w.end).slice(11)).toBe("17:00")
    }
    // And the slots on those days start at 09:00 local.
    const slots = computeSlots({
      policy: policy({ duration: HOUR, interval: HOUR }),
      schedules: [schedule([rule])],
      range,
      now: range.start - DAY
    })
    expect(slots).toHaveLength(24)
    expect(new Set(slots.map((s) => wallOf(zone, s.start).slice(11)))).toEqual(
      new Set(["09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00"])
    )
  })

  const gaps: ReadonlyArray<readonly [string, string, number, ReadonlyArray<string>]> = [
    // zone, date, real length of 01:00–04:00 (min), local starts of 30-minute slots
    ["Europe/Berlin", "2026-03-29", 120, ["01:00", "01:30", "03:00", "03:30"]],
    ["America/New_York", "2026-03-08", 120, ["01:00", "01:30", "03:00", "03:30"]],
    ["Australia/Lord_Howe", "2026-10-04", 150, ["01:00", "01:30", "02:30", "03:00", "03:30"]]
  ]
  it.each(gaps)("01:00–04:00 in %s on %s is shortened by the gap and has no slot in it", (zone, date, minutes, starts) => {
    const rule = weekly(zone, "01:00", "04:00")
    const day = { start: localToUtc(zone, date, 0), end: localToUtc(zone, date, 1440) }
    const windows = availableWindows([rule], day)
    expect(windows).toEqual([{ start: localToUtc(zone, date, 60), end: localToUtc(zone, date, 240) }])
    expect(windows[0]!.end - windows[0]!.start).toBe(minutes * MIN)
    const slots = computeSlots({ policy: policy(), schedules: [schedule([rule])], range: day, now: day.start - DAY })
    expect(slots.map((s) => wallOf(zone, s.start))).toEqual(starts.map((t) => `${date} ${t}`))
    for (const s of slots) expect(wallOf(zone, s.end) <= `${date} 04:00`).toBe(true)
  })

  it("a rule that lies wholly inside the gap yields nothing that day", () => {
    const rule = weekly("Europe/Berlin", "02:00", "03:00")
    const day = { start: utc("2026-03-28T23:00:00Z"), end: utc("2026-03-29T22:00:00Z") }
    expect(availableWindows([rule], day)).toEqual([])
    expect(availableWindows([rule], { start: utc("2026-03-29T22:00:00Z"), end: utc("2026-03-30T22:00:00Z") }))
      .toEqual([{ start: utc("2026-03-30T00:00:00Z"), end: utc("2026-03-30T01:00:00Z") }])
  })

  const overlaps: ReadonlyArray<readonly [string, string, number]> = [
    ["Europe/Berlin", "2026-10-25", 240],
    ["America/New_York", "2026-11-01", 240],
    ["Australia/Lord_Howe", "2026-04-05", 210]
  ]
  it.each(overlaps)("01:00–04:00 in %s on %s spans the overlap once, without duplicate starts", (zone, date, minutes) => {
    const rule = weekly(zone, "01:00", "04:00")
    const day = { start: localToUtc(zone, date, 0), end: localToUtc(zone, date, 1440) }
    const windows = availableWindows([rule], day)
    expect(windows).toHaveLength(1)
    expect(windows[0]!.end - windows[0]!.start).toBe(minutes * MIN)
    const slots = computeSlots({ policy: policy({ interval: 15 * MIN }), schedules: [schedule([rule])], range: day, now: day.start - DAY })
    const starts = slots.map((s) => s.start)
    expect(new Set(starts).size).toBe(starts.length)
    expect(starts).toEqual([...starts].sort((a, b) => a - b))
    // Consecutive starts are exactly 15 real minutes apart, through the repeated hour.
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBe(15 * MIN)
    expect(starts).toHaveLength((minutes - 30) / 15 + 1)
  })

  it("a 24-hour day rule is 23 h on spring-forward days and 25 h on fall-back days", () => {
    const rule = weekly("Europe/Berlin", "00:00", "24:00", [7])
    const march = availableWindows([rule], { start: utc("2026-03-29T12:00:00Z"), end: utc("2026-03-29T13:00:00Z") })
    expect(march).toEqual([{ start: utc("2026-03-28T23:00:00Z"), end: utc("2026-03-29T22:00:00Z") }])
    const october = availableWindows([rule], { start: utc("2026-10-25T12:00:00Z"), end: utc("2026-10-25T13:00:00Z") })
    expect(october).toEqual([{ start: utc("2026-10-24T22:00:00Z"), end: utc("2026-10-25T23:00:00Z") }])
  })

  it("explain says dst_gap for a start whose slot the gap cut off", () => {
    const s = schedule([weekly("Europe/Berlin", "01:00", "04:00")])
    const p = policy({ duration: HOUR, interval: HOUR })
    const now = utc("2026-03-01T00:00:00Z")
    // 01:30Z is "02:30" read with the winter offset (+01:00); really it is 03:30 CEST and the
    // hour to 04:30 no longer fits, because the 01:00–04:00 hours last only 2 h that day.
    const reasons = checkStart({ policy: p, schedule: s, start: utc("2026-03-29T01:30:00Z"), now })
    expect(reasons.map((r) => r.code)).toEqual(["dst_gap"])
    expect(reasons[0]!.detail).toContain("02:00")
    expect(reasons[0]!.detail).toContain("03:00")
    // The same slot a week later fits; before the gap and after it the day still works.
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-04-05T00:30:00Z"), now })).toEqual([])
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-03-29T00:00:00Z"), now })).toEqual([])
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-03-29T01:00:00Z"), now })).toEqual([])
    // Beyond what the wall-clock hours could ever hold it is plain outside_hours.
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-03-29T02:30:00Z"), now }).map((r) => r.code))
      .toEqual(["outside_hours"])
    // No gap on fall-back days: the long night still fits, and 09:00 is outside hours.
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-10-25T02:00:00Z"), now })).toEqual([])
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-10-25T08:00:00Z"), now }).map((r) => r.code))
      .toEqual(["outside_hours"])
  })

  it("explain says dst_gap when the rule starts inside the gap (New York, 02:30–05:00)", () => {
    const s = schedule([weekly("America/New_York", "02:30", "05:00")])
    const p = policy({ duration: 150 * MIN })
    const now = utc("2026-03-01T00:00:00Z")
    // 02:30 does not exist on 2026-03-08: the hours run 03:00–05:00 EDT (07:00Z–09:00Z).
    expect(availableWindows(s.rules, { start: utc("2026-03-08T05:00:00Z"), end: utc("2026-03-09T05:00:00Z") }))
      .toEqual([{ start: utc("2026-03-08T07:00:00Z"), end: utc("2026-03-08T09:00:00Z") }])
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-03-08T06:30:00Z"), now }).map((r) => r.code))
      .toEqual(["dst_gap"])
    expect(checkStart({ policy: p, schedule: s, start: utc("2026-03-01T07:30:00Z"), now: utc("2026-02-01T00:00:00Z") })).toEqual([])
  })
})
