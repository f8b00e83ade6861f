/** What a calendar leaves in storage, written and removed together: the calendar and its busy ranges. */
import { Effect } from "effect"
import type { ChangeRecorder } from "../internal/resources.js"
import type { Storage } from "../ports/storage.js"
import { type BusyChunk, type StoredCalendar, toCalendar } from "./calendar.js"
import { BusyRangesCollection, CalendarsCollection } from "./collections.js"

/** Replaces a calendar's busy ranges with `chunks`, writing only those that changed; inside a transaction. */
export const replaceBusyRanges = (storage: Storage["Type"]) => {
  const busy = storage.collection(BusyRangesCollection)
  return (calendarId: string, chunks: ReadonlyArray<BusyChunk> = []) =>
    Effect.gen(function*() {
      const stored = yield* busy.list({ where: [{ column: "calendar_id", op: "eq", value: calendarId }] })
      const wanted = new Map(chunks.map((c) => [c.id, c]))
      for (const old of stored) {
        const next = wanted.get(old.id)
        wanted.delete(old.id)
        if (next === undefined) yield* busy.remove(old.id)
        else if (JSON.stringify(next) !== JSON.stringify(old)) yield* busy.update(next)
      }
      for (const chunk of wanted.values()) yield* busy.insert(chunk)
    })
}

/** Removes a calendar with its busy ranges and records `calendar.deleted`; inside a transaction. */
export const removeCalendar = (storage: Storage["Type"], events: ChangeRecorder) => {
  const calendars = storage.collection(CalendarsCollection)
  const replaceRanges = replaceBusyRanges(storage)
  return (calendar: StoredCalendar) =>
    Effect.gen(function*() {
      yield* calendars.remove(calendar.id)
      yield* replaceRanges(calendar.id)
      const shown = toCalendar(calendar)
      yield* events.record("calendar.deleted", shown)
      return shown
    })
}

/**
 * Removes every external calendar of a staff member with their busy ranges, recording
 * `calendar.deleted` for each; inside the transaction that deletes the staff member.
 */
export const removeCalendarsOfStaff = (storage: Storage["Type"], events: ChangeRecorder, staffId: string) =>
  Effect.gen(function*() {
    const removeOne = removeCalendar(storage, events)
    const owned = yield* storage.collection(CalendarsCollection).list({ where: [{ column: "staff_id", op: "eq", value: staffId }] })
    for (const calendar of owned) yield* removeOne(calendar)
  })
