/**
 * Busy time in an iCalendar feed (RFC 5545): every opaque event (`TRANSP` not
 * `TRANSPARENT`, `STATUS` not `CANCELLED`), expanded with its `RRULE`/`RDATE`, `EXDATE`
 * and `RECURRENCE-ID` overrides (an override moves, changes or cancels one occurrence),
 * within a window, as UTC intervals.
 *
 * ical.js parses and expands; times are expanded in their own wall clock (every zone left
 * floating), then turned into instants here: `Z` times are UTC, a `TZID` that is an IANA
 * zone (or ends in one, as some producers prefix it) is read with the platform's zone data,
 * a Windows name (Outlook: "W. Europe Standard Time") through the table of common ones,
 * anything else through the feed's own `VTIMEZONE`, and floating times and all-day dates in
 * the staff member's zone.
 *
 * A feed is untrusted input, read within limits that count work, not results: steps of
 * recurrence per series and per feed (a step that yields nothing counts the same), content
 * lines bounded in length and parameters, and a feed's own time zone accepted only with
 * yearly rules (anything else makes ical.js expand it into memory). What a rule of ical.js's
 * own can still spend (a rule it cannot step through) is bounded by the worker's wall-clock
 * and memory limits (parseWorker.ts). A refusal names the line and what is wrong with it,
 * never the feed's content: the feed is a secret, and its text may be anything.
 */
import ICAL from "ical.js"
import type { Interval } from "../../src/scheduling/types.js"
import { daysFromCivil, localToUtcDay } from "../../src/scheduling/zones.js"
import { FeedParseError, formatCount, scanFeed } from "./contentLines.js"

export { FeedParseError, MAX_LINE_CHARS, MAX_LINE_PARAMETERS, neededLines } from "./contentLines.js"
import {
  type Component,
  DAY,
  lineOf,
  localizeSeries,
  makeZones,
  rawProperties,
  type RawProperty,
  rawWall,
  type Recur,
  type Time,
  type Wall,
  wallAt,
  wallClockMs,
  withoutQuotedContent
} from "./feedTimes.js"

/** Recurrence steps per series, whatever they yield (a daily rule reaches ~55 years); the series ends there. */
export const MAX_STEPS_PER_SERIES = 20_000
/**
 * Recurrence steps per feed, all series together; a feed that needs more is refused. A step
 * of ical.js costs 10–25 µs, so this bounds a feed's expansion to a few seconds.
 */
export const MAX_STEPS_PER_FEED = 200_000
/** Busy occurrences kept per feed: the expansion ends there. */
export const MAX_OCCURRENCES = 100_000

/** The step budgets (tests lower them; the defaults are the rule). */
export interface ParseLimits {
  readonly stepsPerSeries?: number
  readonly stepsPerFeed?: number
}

export interface ParseOptions {
  /** The staff member's IANA zone, for floating times and all-day dates. */
  readonly zone: string
  /** Occurrences outside it are left out; those crossing its edges are clipped. */
  readonly window: Interval
  readonly limits?: ParseLimits | undefined
}

const isOpaque = (event: Component): boolean => {
  const transparency = event.getFirstPropertyValue("transp")
  const status = event.getFirstPropertyValue("status")
  return String(transparency ?? "").toUpperCase() !== "TRANSPARENT" && String(status ?? "").toUpperCase() !== "CANCELLED"
}

const rootsOf = (text: string): Array<Component> => {
  const body = text.replace(/^\uFEFF/, "")
  if (!/^\s*BEGIN:VCALENDAR/i.test(body)) throw new FeedParseError("the feed is not iCalendar (it does not begin with BEGIN:VCALENDAR)")
  const scanned = scanFeed(body)
  let parsed: unknown
  try {
    parsed = ICAL.parse(scanned.text)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const quoted = /(["'])(.*)\1\s*$/s.exec(message)?.[2]
    const line = quoted === undefined || quoted === "" ? 0 : scanned.lineContaining(quoted)
    throw new FeedParseError(`${line > 0 ? `line ${line}: ` : ""}the feed is not valid iCalendar (${withoutQuotedContent(message)})`)
  }
  const all = Array.isArray(parsed) && typeof parsed[0] === "string" ? [parsed] : (parsed as Array<unknown>)
  return all.map((jcal) => new ICAL.Component(jcal as any)).filter((c) => c.name === "vcalendar")
}

/** Busy ranges as one flat typed array, `start, end, start, end…`: what crosses threads without a copy per range. */
export type BusyPairs = Float64Array<ArrayBuffer>

export const intervalsOf = (pairs: BusyPairs): Array<Interval> => {
  const intervals: Array<Interval> = new Array(pairs.length >> 1)
  for (let i = 0; i < intervals.length; i++) intervals[i] = { start: pairs[2 * i]!, end: pairs[2 * i + 1]! }
  return intervals
}

export const pairsOf = (intervals: ReadonlyArray<Interval>): BusyPairs => {
  const pairs = new Float64Array(intervals.length * 2)
  intervals.forEach((range, i) => {
    pairs[2 * i] = range.start
    pairs[2 * i + 1] = range.end
  })
  return pairs
}

/** Every busy occurrence of the feed within the window, clipped to it, in no particular order. */
export const parseBusy = (text: string, options: ParseOptions): Array<Interval> => intervalsOf(parseBusyPairs(text, options))

/** `parseBusy`, as pairs. */
export const parseBusyPairs = (text: string, options: ParseOptions): BusyPairs => {
  const { window } = options
  const stepsPerSeries = options.limits?.stepsPerSeries ?? MAX_STEPS_PER_SERIES
  const stepsPerFeed = options.limits?.stepsPerFeed ?? MAX_STEPS_PER_FEED
  let steps = 0
  const staffDay = (t: Time) => localToUtcDay(options.zone, daysFromCivil(t.year, t.month, t.day), 0)
  let pairs = new Float64Array(2048)
  let count = 0
  const full = () => count >= MAX_OCCURRENCES
  const add = (start: number, end: number) => {
    if (full()) return
    const s = Math.max(start, window.start)
    const e = Math.min(end, window.end)
    if (e <= s) return
    if (2 * count === pairs.length) {
      const grown = new Float64Array(pairs.length * 2)
      grown.set(pairs)
      pairs = grown
    }
    pairs[2 * count] = s
    pairs[2 * count + 1] = e
    count++
  }

  for (const calendar of rootsOf(text)) {
    const { converterFor, instantOf } = makeZones(calendar, options.zone)
    const staffDate = (w: Wall) => localToUtcDay(options.zone, daysFromCivil(w.year, w.month, w.day), 0)
    /** Runs the reading of one event, refusing the feed by the event's line when ical.js cannot read its values. */
    const readingEvent = (vevent: Component, read: () => void) => {
      try {
        read()
      } catch (error) {
        if (error instanceof FeedParseError) throw error
        throw new FeedParseError(`line ${lineOf(vevent)}: the event's times or recurrence cannot be read`)
      }
    }
    /** One event that does not repeat, from its raw properties. */
    const single = (vevent: Component) => {
      let start: RawProperty | undefined
      let end: RawProperty | undefined
      let duration: unknown
      let opaque = true
      for (const property of rawProperties(vevent)) {
        const [name, , , value] = property
        if (name === "dtstart") start = property
        else if (name === "dtend") end = property
        else if (name === "duration") duration = value
        else if (name === "transp" && String(value).toUpperCase() === "TRANSPARENT") opaque = false
        else if (name === "status" && String(value).toUpperCase() === "CANCELLED") opaque = false
      }
      const from = start === undefined ? undefined : rawWall(start[3])
      if (!opaque || from === undefined || start === undefined) return
      const to = end === undefined ? undefined : rawWall(end[3])
      const seconds = typeof duration === "string" ? ICAL.Duration.fromString(duration).toSeconds() : undefined
      if (from.isDate) {
        const first = staffDate(from)
        const days = to !== undefined ?
          daysFromCivil(to.year, to.month, to.day) - daysFromCivil(from.year, from.month, from.day)
          : seconds !== undefined
          ? Math.ceil(seconds / 86_400)
          : 1
        add(first, localToUtcDay(options.zone, daysFromCivil(from.year, from.month, from.day) + Math.max(days, 1), 0))
        return
      }
      const startMs = instantOf(from, start[1].tzid)
      const endMs = to !== undefined && end !== undefined
        ? instantOf(to, end[1].tzid ?? start[1].tzid)
        : startMs + (seconds ?? 0) * 1000
      add(startMs, endMs)
    }
    /** The instants of one occurrence of `item` (its own start and end properties say the zones). */
    const occurrence = (item: Component, start: Time, end: Time) => {
      if (start.isDate) {
        const from = staffDay(start)
        const to = end.isDate ? staffDay(end) : from
        add(from, to > from ? to : localToUtcDay(options.zone, daysFromCivil(start.year, start.month, start.day) + 1, 0))
        return
      }
      const startProperty = item.getFirstProperty("dtstart")
      const endProperty = item.getFirstProperty("dtend") ?? startProperty
      add(converterFor(startProperty, start)(start), converterFor(endProperty, end)(end))
    }

    const series = new Map<string, { master?: Component; overrides: Array<Component> }>()
    const singles: Array<Component> = []
    for (const vevent of calendar.getAllSubcomponents("vevent")) {
      let uid: unknown
      let override = false
      let repeats = false
      for (const [name, , , value] of rawProperties(vevent)) {
        if (name === "uid") uid = value
        else if (name === "recurrence-id") override = true
        else if (name === "rrule" || name === "rdate") repeats = true
      }
      if (!override && !repeats && uid === undefined) {
        singles.push(vevent)
        continue
      }
      const key = String(uid ?? `anonymous-${series.size}`)
      const entry = series.get(key) ?? { overrides: [] }
      if (override) entry.overrides.push(vevent)
      else entry.master ??= vevent
      series.set(key, entry)
    }
    /** Expands one series (its master and its overrides) into busy occurrences. */
    const expand = (master: Component, overrides: ReadonlyArray<Component>) => {
      // Detached from the calendar: ical.js would otherwise scan every event of the feed for
      // overrides and every VTIMEZONE for zones on each event (times stay floating here anyway).
      const hasOverrides = overrides.length > 0
      const opaqueSeries = isOpaque(master)
      // Nothing of it can block: skipped before ical.js builds the series.
      if (!opaqueSeries && !hasOverrides) return
      const detach = (component: Component) => new ICAL.Component(component.jCal)
      const detached = detach(master)
      localizeSeries(detached)
      const event = new ICAL.Event(detached, { exceptions: overrides.map(detach) })
      const toInstant = converterFor(detached.getFirstProperty("dtstart"), event.startDate)
      const length = Math.max(0, event.endDate.toUnixTime() - event.startDate.toUnixTime()) * 1000
      const wallLength = wallClockMs(event.endDate) - wallClockMs(event.startDate)
      const toEnd = converterFor(detached.getFirstProperty("dtend") ?? detached.getFirstProperty("dtstart"), event.endDate)
      // One rule and nothing beside it (no RDATE, EXDATE or override): the rule's own iterator
      // yields exactly the occurrences the event's expansion would, without copying each one.
      const rules = detached.getAllProperties("rrule")
      const plain = !hasOverrides && rules.length === 1 && !detached.hasProperty("rdate") && !detached.hasProperty("exdate")
      const iterator: { next: () => Time | null } = plain
        ? (rules[0]!.getFirstValue() as Recur).iterator(event.startDate)
        : event.iterator()
      for (let i = 0; i < stepsPerSeries && !full(); i++) {
        if (++steps > stepsPerFeed) {
          throw new FeedParseError(
            `line ${lineOf(master)}: the feed's recurring events need more than ${formatCount(stepsPerFeed)} steps to expand ` +
              "(the limit per feed; a rule repeating every minute or second without end takes that many in days)"
          )
        }
        const next = iterator.next()
        if (next === undefined || next === null) break
        // The series' own time: once past the window (plus a day of slack for overrides
        // that move an occurrence earlier), nothing later can fall in it.
        const at = next.isDate ? staffDay(next) : toInstant(next)
        if (at > window.end + DAY) break
        // Long before the window (further than the event lasts, plus a day) an occurrence
        // can matter only through an override that moves it.
        const overridden = hasOverrides && next.toString() in event.exceptions
        if (at + length + DAY < window.start && !overridden) continue
        if (!overridden) {
          // The series' own occurrence: its start, and its end as far on the wall clock.
          if (!opaqueSeries) continue
          if (next.isDate) {
            const days = Math.max(1, Math.round(wallLength / DAY))
            add(at, localToUtcDay(options.zone, daysFromCivil(next.year, next.month, next.day) + days, 0))
          } else add(at, toEnd(wallAt(wallClockMs(next) + wallLength)))
          continue
        }
        const details = event.getOccurrenceDetails(next)
        const item = details.item.component
        if (isOpaque(item)) occurrence(item, details.startDate, details.endDate)
      }
    }

    for (const vevent of singles) {
      if (full()) break
      readingEvent(vevent, () => single(vevent))
    }

    for (const { master, overrides } of series.values()) {
      if (full()) break
      if (master === undefined || !(master.hasProperty("rrule") || master.hasProperty("rdate"))) {
        // A single event; an override without its series stands alone.
        for (const vevent of master === undefined ? overrides : [master]) readingEvent(vevent, () => single(vevent))
        continue
      }
      readingEvent(master, () => expand(master, overrides))
    }
  }
  return pairs.slice(0, 2 * count)
}
