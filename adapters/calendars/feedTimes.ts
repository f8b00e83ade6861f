/**
 * Times in a feed: wall clocks, the zones they name (IANA, Windows names, the feed's own
 * `VTIMEZONE`) and the instants they stand for.
 */
import ICAL from "ical.js"
import { canonicalZone, daysFromCivil, localToUtcDay, offsetAt } from "../../src/scheduling/zones.js"
import { FeedParseError, LINE_PROPERTY } from "./contentLines.js"
import { WINDOWS_ZONES } from "./windowsZones.js"

/** Values of `RDATE` in one time zone definition. */
const MAX_ZONE_DATES = 1000

export const DAY = 86_400_000
const MINUTE = 60_000

/** ical.js's message without the line it quotes (the feed's content). */
export const withoutQuotedContent = (message: string) => message.replace(/\s*(?:in\s*)?(["']).*$/s, "")

export const lineOf = (component: Component): number => Number(component.getFirstPropertyValue(LINE_PROPERTY.toLowerCase()) ?? 0)

export type Component = InstanceType<typeof ICAL.Component>
export type Time = InstanceType<typeof ICAL.Time>
export type Recur = InstanceType<typeof ICAL.Recur>
/** A wall-clock time: what ical.js's `Time` and a raw jCal value both give. */
export interface Wall {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
}
type Converter = (time: Wall) => number

const IANA_SUFFIX = /([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+){1,2})$/

export const wallClockMs = (t: Wall): number =>
  daysFromCivil(t.year, t.month, t.day) * DAY + (t.hour * 60 + t.minute) * MINUTE + t.second * 1000

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

/**
 * A time zone definition ical.js can use without harm: its observances repeat yearly (a zone
 * changes its offset a few times a year; ical.js keeps every change from the first one on).
 */
const checkZoneRules = (definition: Component) => {
  let dates = 0
  for (const observance of definition.getAllSubcomponents()) {
    for (const rrule of observance.getAllProperties("rrule")) {
      const recur = rrule.getFirstValue() as Recur
      const parts = recur.parts as Record<string, ReadonlyArray<unknown> | undefined>
      const expanding = ["BYSECOND", "BYMINUTE", "BYHOUR", "BYYEARDAY", "BYWEEKNO", "BYSETPOS"].find((part) => parts[part] !== undefined)
      if (recur.freq !== "YEARLY" || expanding !== undefined || (parts.BYDAY?.length ?? 0) > 1 || (parts.BYMONTH?.length ?? 0) > 1) {
        throw new FeedParseError(
          `line ${lineOf(observance)}: a time zone of the feed's own repeats ` +
            `${recur.freq !== "YEARLY" ? `FREQ=${recur.freq}` : `with ${expanding ?? "several days or months"}`}; ` +
            "a time zone's rules must repeat yearly"
        )
      }
    }
    for (const rdate of observance.getAllProperties("rdate")) dates += rdate.getValues().length
    if (dates > MAX_ZONE_DATES) {
      throw new FeedParseError(`line ${lineOf(observance)}: a time zone of the feed's own lists more than ${MAX_ZONE_DATES} dates`)
    }
  }
}

/** Turns the times of one feed into instants, knowing its `VTIMEZONE`s and the staff member's zone. */
export const makeZones = (calendar: Component, staffZone: string) => {
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
        checkZoneRules(definition)
        // Registered by hand: only a zone neither IANA nor Windows names gets ical.js's rules.
        const zone = new ICAL.Timezone({ component: definition, tzid })
        found = (t) => wallClockMs(t) - zone.utcOffset(ICAL.Time.fromData({ ...t, isDate: false })) * 1000
      }
    }
    converters.set(tzid, found)
    return found
  }
  /** The converter for a property's times: by its `TZID`, UTC for `Z`, else the staff member's zone. */
  const converterFor = (property: InstanceType<typeof ICAL.Property> | null, sample: Time | undefined): Converter => {
    if (sample !== undefined && isUtc(sample)) return utc
    const tzid = property?.getParameter("tzid")
    return typeof tzid === "string" ? byTzid(tzid) : staff
  }
  /** A raw value's instant, by its `TZID` parameter. */
  const instantOf = (wall: RawWall, tzid: unknown): number =>
    wall.utc ? utc(wall) : typeof tzid === "string" ? byTzid(tzid)(wall) : staff(wall)
  return { converterFor, instantOf }
}

/** The wall-clock fields of `ms` read as if UTC (the inverse of `wallClockMs`). */
export const wallAt = (ms: number): Wall => {
  const d = new Date(ms)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds()
  }
}

const utc = (t: Wall): number => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second)

interface RawWall extends Wall {
  readonly isDate: boolean
  readonly utc: boolean
}

const RAW_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z)?)?$/

/** A jCal `date` or `date-time` value, read without ical.js's `Time` (hot for feeds of thousands of events). */
export const rawWall = (value: unknown): RawWall | undefined => {
  const m = typeof value === "string" ? RAW_TIME.exec(value) : null
  if (m === null) return undefined
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    isDate: m[4] === undefined,
    utc: m[7] === "Z"
  }
}

/** A jCal property: name, parameters, type, value(s). */
export type RawProperty = readonly [string, Readonly<Record<string, unknown>>, string, ...Array<unknown>]

export const rawProperties = (component: Component): ReadonlyArray<RawProperty> => (component.jCal as any)[1]

/**
 * Expansion runs in the series' wall clock, so a `Z` time among its `UNTIL` and `EXDATE`s
 * (Outlook writes `UNTIL` in UTC beside a zoned `DTSTART`) is first read in the series' zone.
 */
export const localizeSeries = (master: Component) => {
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
