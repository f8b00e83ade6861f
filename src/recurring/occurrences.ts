/** A series' occurrences between instants and the wall clock of its zone. */
import type { LocalDateTime } from "../ports/recurrence.js"
import { formatDay, localDayOf, localToUtc, offsetAt } from "../scheduling/zones.js"

export const MINUTE = 60_000
export const DAY = 86_400_000

/** The wall-clock date-time of an instant in a zone. */
export const localDateTimeOf = (timeZone: string, ms: number): LocalDateTime => {
  const local = ms + offsetAt(timeZone, ms)
  const day = localDayOf(timeZone, ms)
  return { date: formatDay(day), minutes: (local - day * DAY) / MINUTE }
}

/** A series' occurrences as instants: each local occurrence through the zone's rules. */
export const occurrenceInstants = (timeZone: string, locals: ReadonlyArray<LocalDateTime>): Array<number> =>
  locals.map((l) => localToUtc(timeZone, l.date, l.minutes))
