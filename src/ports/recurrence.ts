/**
 * The recurrence port: expands an RRULE (already checked against the subset in
 * domain/recurrence.ts) over floating wall-clock date-times. The core turns each local
 * occurrence into an instant with its own zone arithmetic (scheduling/zones.ts), so the
 * expander never sees a time zone. Adapter: adapters/ical/recurrence.ts (ical.js).
 */
import { Context } from "effect"

/** A wall-clock date-time with no zone: a local date and minutes since its midnight. */
export interface LocalDateTime {
  readonly date: string
  readonly minutes: number
}

export interface RecurrenceExpansion {
  /** The rule without UNTIL (`parseRule(...).expandable`). */
  readonly rule: string
  /** The first occurrence's wall-clock date-time (DTSTART). */
  readonly start: LocalDateTime
  /** No occurrence after this wall-clock date-time. */
  readonly until?: LocalDateTime | undefined
  /** At most this many occurrences. */
  readonly limit: number
}

export interface RecurrenceExpanderService {
  /** The rule's occurrences from `start` on, in order, as the rule's RFC 5545 reading gives them. */
  readonly expand: (expansion: RecurrenceExpansion) => ReadonlyArray<LocalDateTime>
}

export class RecurrenceExpander extends Context.Tag("slotwise/RecurrenceExpander")<RecurrenceExpander, RecurrenceExpanderService>() {}
