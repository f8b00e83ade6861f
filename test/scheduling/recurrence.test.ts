/**
 * Recurrence expansion against an independent reading of the rules: random DAILY, WEEKLY
 * (with BYDAY) and MONTHLY rules from random starts in 2027, in Europe/Berlin and
 * America/New_York (both 2027 changes each), expanded by the ical.js adapter and turned into
 * instants by the core, must give the dates an oracle gets by stepping local dates, each at
 * the same wall-clock time (the earlier instant of a repeated hour; the first instant after
 * a skipped one). The oracle reads zones through Intl only, never through zones.ts.
 */
import fc from "fast-check"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { expandRecurrence } from "../../adapters/ical/recurrence.js"
import { parseRule } from "../../src/recurring/recurrence.js"
import { localDateTimeOf, occurrenceInstants } from "../../src/recurring/occurrences.js"

const DAY = 86_400_000
const MINUTE = 60_000
const WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

const formatters = new Map<string, Intl.DateTimeFormat>()
/** `YYYY-MM-DD HH:MM` of an instant in a zone, by Intl. */
const wallClock = (zone: string, ms: number): string => {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23"
    })
    formatters.set(zone, f)
  }
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`
}
const offsetAt = (zone: string, ms: number): number => {
  const [date, time] = wallClock(zone, ms).split(" ") as [string, string]
  return Date.parse(`${date}T${time}:00Z`) - Math.floor(ms / MINUTE) * MINUTE
}
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`
const dateOf = (days: number) => new Date(days * DAY).toISOString().slice(0, 10)

/** The earliest instant showing `date minutes` in `zone`, or the first after it when that wall-clock time is skipped. */
const expectedInstant = (zone: string, date: string, minutes: number): number => {
  for (let m = minutes; m < minutes + 180; m++) {
    const local = Date.parse(`${date}T00:00:00Z`) + m * MINUTE
    const offsets = new Set([offsetAt(zone, local - DAY), offsetAt(zone, local + DAY)])
    const found = [...offsets].map((o) => local - o).filter((ms) =>
      wallClock(zone, ms) === `${dateOf(Math.floor(local / DAY))} ${hhmm(m % 1440)}`
    )
    if (found.length > 0) return Math.min(...found)
  }
  throw new Error(`no instant near ${date} ${hhmm(minutes)} in ${zone}`)
}

interface RuleCase {
  readonly zone: string
  readonly startDay: number
  readonly minutes: number
  readonly freq: "DAILY" | "WEEKLY" | "MONTHLY"
  readonly interval: number
  readonly byDay: ReadonlyArray<number>
  readonly count: number
}

/** The local dates of a rule, by stepping dates the way RFC 5545 reads it (weeks start on Monday). */
const oracleDates = (c: RuleCase): Array<string> => {
  const out: Array<string> = []
  if (c.freq === "DAILY") {
    for (let k = 0; out.length < c.count; k++) out.push(dateOf(c.startDay + k * c.interval))
  } else if (c.freq === "WEEKLY") {
    const weekday = ((c.startDay + 3) % 7) + 1
    const days = [...new Set([weekday, ...c.byDay])].sort((a, b) => a - b)
    const monday = c.startDay - (weekday - 1)
    for (let k = 0; out.length < c.count; k++) {
      for (const d of days) {
        const day = monday + 7 * c.interval * k + (d - 1)
        if (day >= c.startDay && out.length < c.count) out.push(dateOf(day))
      }
    }
  } else {
    const start = new Date(c.startDay * DAY)
    const dayOfMonth = start.getUTCDate()
    for (let k = 0; out.length < c.count; k++) {
      const probe = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + k * c.interval, dayOfMonth))
      // Months without that day have no occurrence.
      if (probe.getUTCDate() === dayOfMonth) out.push(probe.toISOString().slice(0, 10))
    }
  }
  return out
}

const ruleText = (c: RuleCase): string => {
  const weekday = ((c.startDay + 3) % 7) + 1
  const byDay = c.freq === "WEEKLY" && c.byDay.length > 0
    ? `;BYDAY=${[...new Set([weekday, ...c.byDay])].map((d) => WEEKDAYS[d - 1]).join(",")}`
    : ""
  return `FREQ=${c.freq}${c.interval === 1 ? "" : `;INTERVAL=${c.interval}`}${byDay};COUNT=${c.count}`
}

const DAY_2027 = Date.UTC(2027, 0, 1) / DAY

const ruleCase: fc.Arbitrary<RuleCase> = fc.record({
  zone: fc.constantFrom("Europe/Berlin", "America/New_York"),
  // Starts throughout 2027, more of them in the weeks before each change.
  startDay: fc.oneof(
    fc.integer({ min: DAY_2027, max: DAY_2027 + 355 }),
    fc.constantFrom(
      ...["2027-03-10", "2027-03-27", "2027-10-28", "2027-11-05", "2027-03-14", "2027-10-31"].map((d) => Date.parse(`${d}T00:00:00Z`) / DAY)
    )
  ),
  // Wall-clock times in the changed hours (01:00–03:59) as often as elsewhere.
  minutes: fc.oneof(fc.integer({ min: 60, max: 239 }), fc.integer({ min: 0, max: 95 }).map((q) => q * 15)),
  freq: fc.constantFrom("DAILY" as const, "WEEKLY" as const, "MONTHLY" as const),
  interval: fc.integer({ min: 1, max: 3 }),
  byDay: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { maxLength: 3 }),
  count: fc.integer({ min: 1, max: 52 })
})

describe("recurrence expansion", () => {
  it("matches the oracle's dates, each at the start's wall-clock time", () => {
    fc.assert(
      fc.property(ruleCase, (c) => {
        const parsed = parseRule(ruleText(c))
        expect(Either.isRight(parsed)).toBe(true)
        const rule = Either.getOrThrow(parsed)
        const startDate = dateOf(c.startDay)
        const locals = expandRecurrence({ rule: rule.expandable, start: { date: startDate, minutes: c.minutes }, limit: 53 })
        const dates = oracleDates(c)
        expect(locals.map((l) => l.date)).toEqual(dates)
        const instants = occurrenceInstants(c.zone, locals)
        expect(instants).toEqual(dates.map((date) => expectedInstant(c.zone, date, c.minutes)))
        // Outside the skipped hour, every occurrence shows the start's wall-clock time.
        const kept = instants.filter((ms, i) => wallClock(c.zone, ms) === `${dates[i]} ${hhmm(c.minutes)}`)
        const skippedHour = c.minutes >= 120 && c.minutes < 180
        if (!skippedHour) expect(kept).toHaveLength(instants.length)
      }),
      { numRuns: 300, seed: 20271107 }
    )
  })

  it("a start's wall-clock time reads back through localDateTimeOf in either zone", () => {
    fc.assert(
      fc.property(ruleCase, (c) => {
        const ms = expectedInstant(c.zone, dateOf(c.startDay), c.minutes)
        const local = localDateTimeOf(c.zone, ms)
        expect(`${local.date} ${hhmm(local.minutes)}`).toBe(wallClock(c.zone, ms))
      }),
      { numRuns: 300, seed: 7 }
    )
  })

  it("stops at UNTIL and at the limit; a rare rule ends within the iteration cap", () => {
    const weekly = expandRecurrence({
      rule: "FREQ=WEEKLY",
      start: { date: "2027-03-01", minutes: 540 },
      until: { date: "2027-03-22", minutes: 540 },
      limit: 53
    })
    expect(weekly.map((l) => l.date)).toEqual(["2027-03-01", "2027-03-08", "2027-03-15", "2027-03-22"])
    expect(expandRecurrence({ rule: "FREQ=DAILY", start: { date: "2027-03-01", minutes: 0 }, limit: 53 })).toHaveLength(53)
    // A fifth Monday of every second month: months without one are stepped over, within the cap.
    const rare = expandRecurrence({ rule: "FREQ=MONTHLY;INTERVAL=2;BYDAY=5MO", start: { date: "2027-03-29", minutes: 540 }, limit: 53 })
    expect(rare.length).toBeGreaterThan(0)
    expect(rare.length).toBeLessThanOrEqual(53)
  })
})
