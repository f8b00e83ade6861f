/**
 * The recurrence port on ical.js: `ICAL.Recur` and its iterator over a floating DTSTART, so
 * the expansion is pure wall-clock arithmetic; the core maps each result to an instant.
 * Iterations are capped: a rule whose matches are rare (a fifth Monday) must not spin.
 */
import ICAL from "ical.js"
import { Layer } from "effect"
import { type LocalDateTime, RecurrenceExpander, type RecurrenceExpansion } from "../../src/ports/recurrence.js"

/** Most `next()` calls one expansion may make, matched or not. */
const MAX_ITERATIONS = 2_000

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const floating = (at: LocalDateTime): ICAL.Time => {
  const [year, month, day] = at.date.split("-").map(Number) as [number, number, number]
  const whole = Math.floor(at.minutes)
  return ICAL.Time.fromData({
    year,
    month,
    day,
    hour: Math.floor(whole / 60),
    minute: whole % 60,
    second: Math.round((at.minutes - whole) * 60),
    isDate: false
  })
}

const localOf = (time: ICAL.Time): LocalDateTime => ({
  date: `${pad(time.year, 4)}-${pad(time.month)}-${pad(time.day)}`,
  minutes: time.hour * 60 + time.minute + time.second / 60
})

export const expandRecurrence = (expansion: RecurrenceExpansion): ReadonlyArray<LocalDateTime> => {
  const recur = ICAL.Recur.fromString(expansion.rule)
  const iterator = recur.iterator(floating(expansion.start))
  const until = expansion.until === undefined ? undefined : floating(expansion.until)
  const out: Array<LocalDateTime> = []
  for (let i = 0; i < MAX_ITERATIONS && out.length < expansion.limit; i++) {
    const next = iterator.next()
    if (next === undefined || next === null) break
    if (until !== undefined && next.compare(until) > 0) break
    out.push(localOf(next))
  }
  return out
}

export const RecurrenceExpanderLive = Layer.succeed(RecurrenceExpander, { expand: expandRecurrence })
