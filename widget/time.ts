/** Civil dates, time zones and the .ics file: Intl does the zone arithmetic. */

export interface YearMonth {
  readonly year: number
  readonly month: number // 1–12
}

const DAY = 86_400_000
const keyFormats = new Map<string, Intl.DateTimeFormat>()

/** `YYYY-MM-DD` of an instant in a time zone. */
export const dateKey = (ms: number, timeZone: string): string => {
  let format = keyFormats.get(timeZone)
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    keyFormats.set(timeZone, format)
  }
  const parts: Record<string, string> = {}
  for (const part of format.formatToParts(ms)) parts[part.type] = part.value
  return `${parts.year}-${parts.month}-${parts.day}`
}

export const civil = (year: number, month: number, day: number): string =>
  `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`

/** Days in a month of the proleptic Gregorian calendar. */
export const daysInMonth = ({ year, month }: YearMonth): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** Day of the week, 0 = Sunday. */
export const weekday = (key: string): number => new Date(`${key}T12:00:00Z`).getUTCDay()

export const addMonths = ({ year, month }: YearMonth, n: number): YearMonth => {
  const index = year * 12 + (month - 1) + n
  return { year: Math.floor(index / 12), month: (index % 12) + 1 }
}

export const addDays = (key: string, n: number): string => new Date(Date.parse(`${key}T12:00:00Z`) + n * DAY).toISOString().slice(0, 10)

export const monthOf = (key: string): YearMonth => ({ year: Number(key.slice(0, 4)), month: Number(key.slice(5, 7)) })

/** Months counted from year 0: months compare as numbers. */
export const monthIndex = ({ year, month }: YearMonth): number => year * 12 + month

/** The same day of the month n months on, or that month's last day when it is shorter. */
export const addMonthsToDay = (key: string, n: number): string => {
  const m = addMonths(monthOf(key), n)
  return civil(m.year, m.month, Math.min(Number(key.slice(8)), daysInMonth(m)))
}

const instant = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * The UTC range to ask for a month's slots in any zone: the month's UTC days padded by a
 * day each side (zone offsets stay within ±14 h), so switching zones needs no new request.
 */
export const monthRange = ({ year, month }: YearMonth): { start: string; end: string } => ({
  start: instant(Date.UTC(year, month - 1, 1) - DAY),
  end: instant(Date.UTC(year, month, 1) + DAY)
})

/** The visitor's zone, as the browser reports it. */
export const detectTimeZone = (): string => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"
  } catch {
    return "UTC"
  }
}

/** Every IANA zone the browser knows (the detected one included even if the list misses it). */
export const timeZones = (current: string): Array<string> => {
  const supported = (Intl as { supportedValuesOf?: (key: string) => Array<string> }).supportedValuesOf
  const list = supported === undefined ? [] : supported("timeZone")
  return list.includes(current) ? list : [current, ...list]
}

export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

// ---- .ics (RFC 5545) ----

/**
 * A TEXT value (RFC 5545 §3.3.11): backslash, semicolon and comma escaped, every line break
 * (CRLF, CR or LF) as `\n`, and the other control characters, which TEXT cannot hold, dropped.
 */
export const icsText = (value: string): string =>
  value
    .replace(/[\\;,]/g, "\\$&")
    .replace(/\r\n?|\n/g, "\\n")
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, "")
const icsInstant = (iso: string): string => iso.replace(/[-:]/g, "").replace(/\.\d+/, "")

const encoder = new TextEncoder()
/** Octets per content line, the CRLF not counted (RFC 5545 §3.1). */
const LINE_OCTETS = 75

/**
 * A content line folded into lines of at most 75 octets of UTF-8, each continuation starting
 * with a space; a character is never split across lines.
 */
export const fold = (line: string): string => {
  const lines: Array<string> = []
  let current = ""
  let octets = 0
  for (const char of line) {
    const size = encoder.encode(char).length
    if (octets + size > LINE_OCTETS) {
      lines.push(current)
      current = " "
      octets = 1
    }
    current += char
    octets += size
  }
  lines.push(current)
  return lines.join("\r\n")
}

export interface IcsEvent {
  readonly uid: string
  readonly start: string
  readonly end: string
  readonly summary: string
  readonly description: string
  readonly stamp: string
}

/** A calendar file of one event, or of several (a series' occurrences, each its own event). */
export const ics = (event: IcsEvent | ReadonlyArray<IcsEvent>): string =>
  [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Slotwise//Booking widget//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    ...(Array.isArray(event) ? event : [event as IcsEvent]).flatMap((e) => [
      "BEGIN:VEVENT",
      `UID:${e.uid}`,
      `DTSTAMP:${icsInstant(e.stamp)}`,
      `DTSTART:${icsInstant(e.start)}`,
      `DTEND:${icsInstant(e.end)}`,
      `SUMMARY:${icsText(e.summary)}`,
      `DESCRIPTION:${icsText(e.description)}`,
      "END:VEVENT"
    ]),
    "END:VCALENDAR",
    ""
  ].map(fold).join("\r\n")
