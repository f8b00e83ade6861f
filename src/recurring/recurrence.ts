/**
 * The recurrence a booking request may carry (docs/api.md §11) and the RRULE subset Slotwise
 * accepts, checked here in the core before anything is expanded.
 */
import { Either, Schema } from "effect"
import { optional, TimeZone } from "../domain/common.js"

/** The most occurrences one series may have (COUNT's limit too). */
export const MAX_SERIES_OCCURRENCES = 52
/** UNTIL may lie at most this many days after the first start. */
export const MAX_SERIES_DAYS = 366

export const Recurrence = Schema.Struct({
  rule: Schema.String.pipe(Schema.maxLength(500, { message: () => "must be at most 500 characters" })).annotations({
    description: "an RFC 5545 RRULE: FREQ=DAILY|WEEKLY|MONTHLY, optional INTERVAL and BYDAY, and COUNT (at most 52) " +
      "or UNTIL (at most one year after `start`), such as `FREQ=WEEKLY;BYDAY=MO;COUNT=10`; `start` must be its first occurrence"
  }),
  time_zone: optional(TimeZone.annotations({
    description: "the zone whose wall clock the rule follows (a weekly 09:00 stays 09:00 across DST); default: the zone of " +
      "the staff member's weekly availability, else the staff member's `time_zone`"
  }))
}).annotations({ identifier: "Recurrence" })
export type Recurrence = typeof Recurrence.Type

export const OnConflict = Schema.Literal("reject", "skip").annotations({
  description: "what to do when some occurrences cannot be booked: `reject` (default) books none and answers 409 " +
    "`series_unavailable` listing each; `skip` books the free ones and lists the others in `skipped`"
})
export type OnConflict = typeof OnConflict.Type

// ---------------------------------------------------------------------------------------
// The RRULE subset.

export type Frequency = "DAILY" | "WEEKLY" | "MONTHLY"

export interface ParsedRule {
  readonly freq: Frequency
  readonly interval: number
  readonly byDay: ReadonlyArray<{ readonly ordinal: number; readonly day: string }>
  readonly count: number | undefined
  /** UNTIL as written: `YYYYMMDD`, `YYYYMMDDTHHMMSS` (wall clock) or with `Z` (UTC). */
  readonly until: { readonly date: string; readonly minutes: number | undefined; readonly utc: boolean } | undefined
  /** The rule to expand: the checked parts in a canonical order, without UNTIL (applied by the caller). */
  readonly expandable: string
}

export const RULE_SUBSET = "FREQ=DAILY, WEEKLY or MONTHLY, optional INTERVAL (1–99) and BYDAY (MO…SU; ordinals such as " +
  "1MO or -1FR only with MONTHLY), and exactly one of COUNT (1–52) or UNTIL (at most one year after start)"

const WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
const ALLOWED_PARTS = new Set(["FREQ", "INTERVAL", "BYDAY", "COUNT", "UNTIL"])

/** The rule's parts if it is within the subset, else what is wrong with it (in words). */
export const parseRule = (text: string): Either.Either<ParsedRule, string> => {
  const body = text.trim().replace(/^RRULE:/i, "")
  if (body === "") return Either.left("is empty")
  const parts = new Map<string, string>()
  for (const piece of body.split(";")) {
    const eq = piece.indexOf("=")
    const name = (eq < 0 ? piece : piece.slice(0, eq)).trim().toUpperCase()
    const value = eq < 0 ? "" : piece.slice(eq + 1).trim().toUpperCase()
    if (!ALLOWED_PARTS.has(name)) return Either.left(`has ${name === "" ? "an empty part" : name}, which is not supported`)
    if (parts.has(name)) return Either.left(`names ${name} twice`)
    if (value === "") return Either.left(`has no value for ${name}`)
    parts.set(name, value)
  }
  const freq = parts.get("FREQ")
  if (freq === undefined) return Either.left("has no FREQ")
  if (freq !== "DAILY" && freq !== "WEEKLY" && freq !== "MONTHLY") return Either.left(`has FREQ=${freq}, which is not supported`)
  const intervalText = parts.get("INTERVAL") ?? "1"
  const interval = /^\d{1,2}$/.test(intervalText) ? Number(intervalText) : Number.NaN
  if (!(interval >= 1 && interval <= 99)) return Either.left(`has INTERVAL=${intervalText}; it must be 1 to 99`)
  const byDay: Array<{ ordinal: number; day: string }> = []
  const byDayText = parts.get("BYDAY")
  if (byDayText !== undefined) {
    for (const item of byDayText.split(",")) {
      const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(item)
      if (m === null) return Either.left(`has BYDAY=${byDayText}; each day must be MO, TU, WE, TH, FR, SA or SU`)
      const ordinal = m[1] === undefined ? 0 : Number(m[1])
      if (ordinal !== 0 && freq !== "MONTHLY") return Either.left(`has BYDAY=${item}; an ordinal day needs FREQ=MONTHLY`)
      if (ordinal !== 0 && (Math.abs(ordinal) > 5)) return Either.left(`has BYDAY=${item}; the ordinal must be 1 to 5 or -1 to -5`)
      byDay.push({ ordinal, day: m[2]! })
    }
  }
  const countText = parts.get("COUNT")
  const untilText = parts.get("UNTIL")
  if (countText === undefined && untilText === undefined) return Either.left("has neither COUNT nor UNTIL: a series must end")
  if (countText !== undefined && untilText !== undefined) return Either.left("has both COUNT and UNTIL; give one")
  let count: number | undefined
  if (countText !== undefined) {
    count = /^\d{1,3}$/.test(countText) ? Number(countText) : Number.NaN
    if (!(count >= 1 && count <= MAX_SERIES_OCCURRENCES)) {
      return Either.left(`has COUNT=${countText}; it must be 1 to ${MAX_SERIES_OCCURRENCES}`)
    }
  }
  let until: ParsedRule["until"]
  if (untilText !== undefined) {
    const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$/.exec(untilText)
    const date = m === null ? "" : `${m[1]}-${m[2]}-${m[3]}`
    const valid = m !== null && isCalendarDate(date) &&
      (m[4] === undefined || (Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60))
    if (!valid) return Either.left(`has UNTIL=${untilText}; it must be a date YYYYMMDD or a date-time YYYYMMDDTHHMMSS[Z]`)
    until = {
      date,
      minutes: m![4] === undefined ? undefined : Number(m![4]) * 60 + Number(m![5]) + Number(m![6]) / 60,
      utc: m![7] === "Z"
    }
  }
  const expandable = [
    `FREQ=${freq}`,
    ...(interval !== 1 ? [`INTERVAL=${interval}`] : []),
    ...(byDay.length > 0 ? [`BYDAY=${byDay.map((d) => `${d.ordinal === 0 ? "" : d.ordinal}${d.day}`).join(",")}`] : []),
    ...(count !== undefined ? [`COUNT=${count}`] : [])
  ].join(";")
  return Either.right({ freq, interval, byDay, count, until, expandable })
}

const isCalendarDate = (date: string): boolean => {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number]
  const probe = new Date(Date.UTC(y, m - 1, d))
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d
}

export const weekdayCode = (isoWeekday: number): string => WEEKDAYS[isoWeekday - 1]!
