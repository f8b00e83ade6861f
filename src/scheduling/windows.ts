/**
 * Available windows of a staff member (docs/api.md §3, "Booking checks" 2): weekly hours,
 * replaced by date rules for their local date, minus `blocked` ranges, as sorted, merged
 * UTC intervals. Busy time from external calendars is cut out like `blocked` ranges.
 */
import type { AvailabilityRule } from "../availability/rule.js"
import { minutesOfDay, toMillis } from "../domain/common.js"
import type { BusyInterval, Interval } from "./types.js"
import { localDayOf, localToUtcDay, parseDay, weekdayOfDay } from "./zones.js"

const DAY = 86_400_000

/** A weekly rule with its text parsed once. */
export interface PreparedWeekly {
  readonly id: string
  readonly zone: string
  /** Bit `1 << weekday` set for each weekday (1 = Monday … 7 = Sunday). */
  readonly weekdays: number
  readonly start: number
  readonly end: number
  /** Inclusive day numbers; ±∞ when open. */
  readonly from: number
  readonly until: number
}

export interface PreparedDate {
  readonly id: string
  readonly zone: string
  readonly day: number
  readonly start: number
  readonly end: number
}

export interface PreparedBlocked {
  /** The time-off rule's id, or the external calendar's. */
  readonly id: string
  /** Set when the range is an external calendar's busy time. */
  readonly calendar_id?: string
  readonly start: number
  readonly end: number
}

export interface PreparedRules {
  readonly weekly: ReadonlyArray<PreparedWeekly>
  readonly dates: ReadonlyArray<PreparedDate>
  /** Day numbers that have at least one date rule (their weekly hours are replaced). */
  readonly overridden: ReadonlySet<number>
  /** Sorted by start, as given (not merged), so a detail can name each. */
  readonly blocked: ReadonlyArray<PreparedBlocked>
  /** `blocked` merged into disjoint sorted intervals. */
  readonly blockedMerged: ReadonlyArray<Interval>
}

const byStart = (a: Interval, b: Interval) => a.start - b.start || a.end - b.end

export const prepareRules = (
  rules: ReadonlyArray<AvailabilityRule>,
  busy: ReadonlyArray<BusyInterval> = []
): PreparedRules => {
  const weekly: Array<PreparedWeekly> = []
  const dates: Array<PreparedDate> = []
  const blocked: Array<PreparedBlocked> = []
  const overridden = new Set<number>()
  for (const rule of rules) {
    switch (rule.type) {
      case "weekly": {
        let mask = 0
        for (const d of rule.weekdays) mask |= 1 << d
        weekly.push({
          id: rule.id,
          zone: rule.time_zone,
          weekdays: mask,
          start: minutesOfDay(rule.start_time),
          end: minutesOfDay(rule.end_time),
          from: rule.valid_from == null ? Number.NEGATIVE_INFINITY : parseDay(rule.valid_from),
          until: rule.valid_until == null ? Number.POSITIVE_INFINITY : parseDay(rule.valid_until)
        })
        break
      }
      case "date": {
        const day = parseDay(rule.date)
        overridden.add(day)
        dates.push({
          id: rule.id,
          zone: rule.time_zone,
          day,
          start: minutesOfDay(rule.start_time),
          end: minutesOfDay(rule.end_time)
        })
        break
      }
      case "blocked":
        blocked.push({ id: rule.id, start: toMillis(rule.start), end: toMillis(rule.end) })
        break
    }
  }
  for (const b of busy) blocked.push({ id: b.calendar_id, calendar_id: b.calendar_id, start: b.start, end: b.end })
  blocked.sort(byStart)
  return { weekly, dates, overridden, blocked, blockedMerged: mergeIntervals(blocked) }
}

/** Merges intervals sorted by start; touching intervals (`next.start ≤ end`) become one. */
export const mergeIntervals = (sorted: ReadonlyArray<Interval>): Array<Interval> => {
  const out: Array<Interval> = []
  let start = 0
  let end = 0
  let open = false
  for (const iv of sorted) {
    if (iv.end <= iv.start) continue
    if (open && iv.start <= end) {
      if (iv.end > end) end = iv.end
    } else {
      if (open) out.push({ start, end })
      start = iv.start
      end = iv.end
      open = true
    }
  }
  if (open) out.push({ start, end })
  return out
}

/** `windows` (sorted, disjoint) minus `cuts` (sorted, disjoint). */
const subtract = (windows: ReadonlyArray<Interval>, cuts: ReadonlyArray<Interval>): Array<Interval> => {
  if (cuts.length === 0) return windows as Array<Interval>
  const out: Array<Interval> = []
  let j = 0
  for (const w of windows) {
    let start = w.start
    while (j < cuts.length && cuts[j]!.end <= start) j++
    let k = j
    while (k < cuts.length && cuts[k]!.start < w.end) {
      const c = cuts[k]!
      if (c.start > start) out.push({ start, end: c.start })
      if (c.end > start) start = c.end
      k++
    }
    if (start < w.end) out.push({ start, end: w.end })
  }
  return out
}

/**
 * The merged windows of the rules' local dates that can hold instants of `[lo, hi)`;
 * availability is exact for every instant in `[lo, hi)`.
 */
const windowsAround = (rules: PreparedRules, lo: number, hi: number): Array<Interval> => {
  const raw: Array<Interval> = []
  for (const w of rules.weekly) {
    const first = Math.max(localDayOf(w.zone, lo) - 1, w.from)
    const last = Math.min(localDayOf(w.zone, hi) + 1, w.until)
    for (let day = first; day <= last; day++) {
      if ((w.weekdays & (1 << weekdayOfDay(day))) === 0 || rules.overridden.has(day)) continue
      const start = localToUtcDay(w.zone, day, w.start)
      const end = localToUtcDay(w.zone, day, w.end)
      if (end > start) raw.push({ start, end })
    }
  }
  for (const d of rules.dates) {
    if (d.day < localDayOf(d.zone, lo) - 1 || d.day > localDayOf(d.zone, hi) + 1) continue
    const start = localToUtcDay(d.zone, d.day, d.start)
    const end = localToUtcDay(d.zone, d.day, d.end)
    if (end > start) raw.push({ start, end })
  }
  raw.sort(byStart)
  return subtract(mergeIntervals(raw), rules.blockedMerged)
}

/**
 * How far beyond the range availability is computed to find where a window that crosses
 * the range's edge really starts or ends: a day, then a week, then a month. A run of
 * uninterrupted availability longer than that is cut there.
 */
const PADS = [1, 8, 32] as const

/**
 * The windows of prepared rules that intersect `range`, whole (not clipped to it), sorted
 * and merged.
 */
export const windowsOf = (rules: PreparedRules, range: Interval): Array<Interval> => {
  if (range.end <= range.start) return []
  // Aligned on UTC days, so a window cut by the last pad starts at the same instant for
  // every range that begins on the same day.
  const dayLo = Math.floor(range.start / DAY) * DAY
  const dayHi = Math.ceil(range.end / DAY) * DAY
  let result: Array<Interval> = []
  for (const pad of PADS) {
    const lo = dayLo - pad * DAY
    const hi = dayHi + pad * DAY
    const all = windowsAround(rules, lo, hi)
    result = []
    for (const w of all) if (w.start < range.end && w.end > range.start) result.push(w)
    const first = result[0]
    const last = result[result.length - 1]
    if (first === undefined || last === undefined || (first.start > lo && last.end < hi)) break
  }
  return result
}

/**
 * Whether `[start, end]` lies inside one available window. Only the local dates around it are
 * computed: availability is exact there, so the window holding it is whole there too, and
 * where it really begins or ends further out (what `windowsOf` widens its range to find)
 * does not change the answer.
 */
export const withinWindow = (rules: PreparedRules, start: number, end: number): boolean => {
  for (const w of windowsAround(rules, start, Math.max(end, start + 1))) {
    // `start < w.end`: a window that ends at `start` holds no instant of it, even for no duration.
    if (w.start <= start && end <= w.end && start < w.end) return true
  }
  return false
}

export const availableWindows = (rules: ReadonlyArray<AvailabilityRule>, range: Interval): ReadonlyArray<Interval> =>
  windowsOf(prepareRules(rules), range)
