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
 * the staff member's zone. Expansion is capped per event and per feed, so a rule that never
 * ends (or a rule ical.js cannot step through) cannot hold the sync.
 */
import ICAL from "ical.js"
import type { Interval } from "../../src/scheduling/types.js"
import { canonicalZone, daysFromCivil, localToUtcDay, offsetAt } from "../../src/scheduling/zones.js"
import { WINDOWS_ZONES } from "./windowsZones.js"

/** Occurrences looked at per recurring event (a daily rule reaches ~55 years). */
export const MAX_ITERATIONS_PER_EVENT = 20_000
/** Busy occurrences kept per feed. */
export const MAX_OCCURRENCES = 100_000

const DAY = 86_400_000
const MINUTE = 60_000

/** Why a feed's text is not usable, in words. */
export class FeedParseError extends Error {}

export interface ParseOptions {
  /** The staff member's IANA zone, for floating times and all-day dates. */
  readonly zone: string
  /** Occurrences outside it are left out; those crossing its edges are clipped. */
  readonly window: Interval
}

type Component = InstanceType<typeof ICAL.Component>
type Time = InstanceType<typeof ICAL.Time>
type Converter = (time: Time) => number

const IANA_SUFFIX = /([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+){1,2})$/

const wallClockMs = (t: Time): number => daysFromCivil(t.year, t.month, t.day) * DAY + (t.hour * 60 + t.minute) * MINUTE + t.second * 1000

/** Wall-clock time in an IANA zone → instant (a time in a spring-forward gap moves past it). */
const inZone = (zone: string): Converter => (t) =>
  localToUtcDay(zone, daysFromCivil(t.year, t.month, t.day), t.hour * 60 + t.minute) + t.second * 1000

const isUtc = (t: Time): boolean => t.zone?.tzid === "UTC"

const ianaOf = (tzid: string): string | undefined => {
  const name = tzid.replace(/^"|"$/g, "").trim()
  const direct = canonicalZone(name)
  if (direct !== undefined) return direct
  const windows = WINDOWS_ZONES[name]
  if (windows !== undefined) return canonicalZone(windows)
  const suffix = IANA_SUFFIX.exec(name)?.[1]
  return suffix === undefined ? undefined : canonicalZone(suffix)
}

/** Turns the times of one feed into instants, knowing its `VTIMEZONE`s and the staff member's zone. */
const makeZones = (calendar: Component, staffZone: string) => {
  const staff = inZone(staffZone)
  const definitions = new Map<string, Component>()
  for (const vtimezone of calendar.getAllSubcomponents("vtimezone")) {
    const tzid = vtimezone.getFirstPropertyValue("tzid")
    if (typeof tzid === "string") definitions.set(tzid, vtimezone)
  }
  const converters = new Map<string, Converter>()
  const byTzid = (tzid: string): Converter => {
    let found = converters.get(tzid)
    if (found !== undefined) return found
    const iana = ianaOf(tzid)
    if (iana !== undefined) found = inZone(iana)
    else {
      const definition = definitions.get(tzid)
      if (definition === undefined) found = staff
      else {
        // Registered by hand: only a zone neither IANA nor Windows names gets ical.js's rules.
        const zone = new ICAL.Timezone({ component: definition, tzid })
        found = (t) => wallClockMs(t) - zone.utcOffset(t) * 1000
      }
    }
    converters.set(tzid, found)
    return found
  }
  /** The converter for a property's times: by its `TZID`, UTC for `Z`, else the staff member's zone. */
  return (property: InstanceType<typeof ICAL.Property> | null, sample: Time | undefined): Converter => {
    if (sample !== undefined && isUtc(sample)) return (t) => (isUtc(t) ? Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) : staff(t))
    const tzid = property?.getParameter("tzid")
    return typeof tzid === "string" ? byTzid(tzid) : staff
  }
}

/**
 * Expansion runs in the series' wall clock, so a `Z` time among its `UNTIL` and `EXDATE`s
 * (Outlook writes `UNTIL` in UTC beside a zoned `DTSTART`) is first read in the series' zone.
 */
const localizeSeries = (master: Component) => {
  const tzid = master.getFirstProperty("dtstart")?.getParameter("tzid")
  const zone = typeof tzid === "string" ? ianaOf(tzid) : undefined
  if (zone === undefined) return
  const toWallClock = (t: Time): Time => {
    if (!isUtc(t) || t.isDate) return t
    const ms = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second)
    const wall = new Date(ms + offsetAt(zone, ms))
    return ICAL.Time.fromData({
      year: wall.getUTCFullYear(),
      month: wall.getUTCMonth() + 1,
      day: wall.getUTCDate(),
      hour: wall.getUTCHours(),
      minute: wall.getUTCMinutes(),
      second: wall.getUTCSeconds(),
      isDate: false
    })
  }
  for (const rrule of master.getAllProperties("rrule")) {
    const recur = rrule.getFirstValue() as InstanceType<typeof ICAL.Recur>
    if (recur.until) recur.until = toWallClock(recur.until)
  }
  for (const exdate of master.getAllProperties("exdate")) {
    exdate.setValues(exdate.getValues().map((value) => toWallClock(value as Time)))
  }
}

const isOpaque = (event: Component): boolean => {
  const transparency = event.getFirstPropertyValue("transp")
  const status = event.getFirstPropertyValue("status")
  return String(transparency ?? "").toUpperCase() !== "TRANSPARENT" && String(status ?? "").toUpperCase() !== "CANCELLED"
}

const rootsOf = (text: string): Array<Component> => {
  const body = text.replace(/^\uFEFF/, "").trimStart()
  if (!/^BEGIN:VCALENDAR/i.test(body)) throw new FeedParseError("the feed is not iCalendar (it does not begin with BEGIN:VCALENDAR)")
  let parsed: unknown
  try {
    parsed = ICAL.parse(body)
  } catch (error) {
    throw new FeedParseError(`the feed is not valid iCalendar: ${error instanceof Error ? error.message : String(error)}`)
  }
  const all = Array.isArray(parsed) && typeof parsed[0] === "string" ? [parsed] : (parsed as Array<unknown>)
  return all.map((jcal) => new ICAL.Component(jcal as any)).filter((c) => c.name === "vcalendar")
}

/** Every busy occurrence of the feed within the window, clipped to it, in no particular order. */
export const parseBusy = (text: string, options: ParseOptions): Array<Interval> => {
  const { window } = options
  const staffDay = (t: Time) => localToUtcDay(options.zone, daysFromCivil(t.year, t.month, t.day), 0)
  const busy: Array<Interval> = []
  const add = (start: number, end: number) => {
    if (busy.length >= MAX_OCCURRENCES) return
    const s = Math.max(start, window.start)
    const e = Math.min(end, window.end)
    if (e > s) busy.push({ start: s, end: e })
  }

  for (const calendar of rootsOf(text)) {
    const converterFor = makeZones(calendar, options.zone)
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
    for (const vevent of calendar.getAllSubcomponents("vevent")) {
      const uid = String(vevent.getFirstPropertyValue("uid") ?? `anonymous-${series.size}`)
      const entry = series.get(uid) ?? { overrides: [] }
      if (vevent.hasProperty("recurrence-id")) entry.overrides.push(vevent)
      else entry.master ??= vevent
      series.set(uid, entry)
    }

    for (const { master, overrides } of series.values()) {
      if (master === undefined || !(master.hasProperty("rrule") || master.hasProperty("rdate"))) {
        // A single event; an override without its series stands alone.
        for (const vevent of master === undefined ? overrides : [master]) {
          if (!isOpaque(vevent) || !vevent.hasProperty("dtstart")) continue
          const event = new ICAL.Event(vevent)
          occurrence(vevent, event.startDate, event.endDate)
        }
        continue
      }
      localizeSeries(master)
      const event = new ICAL.Event(master)
      for (const override of overrides) event.relateException(override)
      const toInstant = converterFor(master.getFirstProperty("dtstart"), event.startDate)
      const length = Math.max(0, event.endDate.toUnixTime() - event.startDate.toUnixTime()) * 1000
      const hasOverrides = overrides.length > 0
      const iterator = event.iterator()
      for (let i = 0; i < MAX_ITERATIONS_PER_EVENT; i++) {
        const next = iterator.next()
        if (next === undefined || next === null) break
        // The series' own time: once past the window (plus a day of slack for overrides
        // that move an occurrence earlier), nothing later can fall in it.
        const at = next.isDate ? staffDay(next) : toInstant(next)
        if (at > window.end + DAY) break
        // Long before the window (further than the event lasts, plus a day) an occurrence
        // can matter only through an override that moves it.
        if (at + length + DAY < window.start && (!hasOverrides || !(next.toString() in event.exceptions))) continue
        const details = event.getOccurrenceDetails(next)
        const item = details.item.component
        if (isOpaque(item)) occurrence(item, details.startDate, details.endDate)
      }
    }
  }
  return busy
}
