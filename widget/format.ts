/** Dates, times and prices in the visitor's locale and time zone. */
import type { Service, Slot } from "./api.js"
import { dateKey, type YearMonth } from "./time.js"

export interface Formatting {
  /** The BCP 47 locale for `Intl`. */
  readonly intl: string
  /** The IANA zone times are shown in. */
  readonly zone: string
  /** Intl formatters are costly to build (tens of µs each) and a calendar needs dozens: kept per options. */
  readonly formats: Map<string, Intl.DateTimeFormat>
}

export const fmt = (f: Formatting, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat => {
  const key = `${f.intl}|${JSON.stringify(options)}`
  let format = f.formats.get(key)
  if (format === undefined) {
    format = new Intl.DateTimeFormat(f.intl, options)
    f.formats.set(key, format)
  }
  return format
}

/** Today's date key in the zone. */
export const today = (f: Formatting): string => dateKey(Date.now(), f.zone)

/** The date key of an instant in the zone. */
export const dayIn = (f: Formatting, iso: string): string => dateKey(Date.parse(iso), f.zone)

export const zoneLabel = (zone: string): string => zone.replace(/_/g, " ")

export const formatTime = (f: Formatting, iso: string): string => {
  // 24-hour locales write 04:00, 12-hour ones 4:00 AM.
  const h12 = fmt(f, { hour: "numeric" }).resolvedOptions().hour12 === true
  return fmt(f, { timeZone: f.zone, hour: h12 ? "numeric" : "2-digit", minute: "2-digit" }).format(Date.parse(iso))
}

export const formatDay = (f: Formatting, key: string): string =>
  fmt(f, { timeZone: "UTC", weekday: "long", year: "numeric", month: "long", day: "numeric" }).format(Date.parse(`${key}T12:00:00Z`))

export const formatSlot = (f: Formatting, slot: Slot): string =>
  fmt(f, { timeZone: f.zone, weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" })
    .format(Date.parse(slot.start))

export const monthLabel = (f: Formatting, month: YearMonth): string =>
  fmt(f, { timeZone: "UTC", month: "long", year: "numeric" }).format(Date.UTC(month.year, month.month - 1, 15))

export const price = (f: Formatting, service: Service): string | undefined => {
  if (service.price === null) return undefined
  try {
    const format = new Intl.NumberFormat(f.intl, { style: "currency", currency: service.price.currency })
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2
    return format.format(service.price.amount / 10 ** digits)
  } catch {
    return undefined
  }
}
