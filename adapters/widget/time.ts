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

const icsText = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/([,;])/g, "\\$1")
const icsInstant = (iso: string): string => iso.replace(/[-:]/g, "").replace(/\.\d+/, "")

/** Lines over 75 octets are folded (RFC 5545 §3.1); counted in characters, which is stricter for ASCII. */
const fold = (line: string): string => {
  const out: Array<string> = []
  for (let i = 0; i < line.length; i += 73) out.push((i === 0 ? "" : " ") + line.slice(i, i + 73))
  return out.join("\r\n")
}

export interface IcsEvent {
  readonly uid: string
  readonly start: string
  readonly end: string
  readonly summary: string
  readonly description: string
  readonly stamp: string
}

export const ics = (event: IcsEvent): string =>
  [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Slotwise//Booking widget//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    "BEGIN:VEVENT",
    `UID:${event.uid}`,
    `DTSTAMP:${icsInstant(event.stamp)}`,
    `DTSTART:${icsInstant(event.start)}`,
    `DTEND:${icsInstant(event.end)}`,
    `SUMMARY:${icsText(event.summary)}`,
    `DESCRIPTION:${icsText(event.description)}`,
    "END:VEVENT",
    "END:VCALENDAR",
    ""
  ].map(fold).join("\r\n")
