/**
 * Booking reminders: the offsets before a start at which `booking.reminder` is emitted, set
 * for the account (both environments) and optionally per service, and the due jobs that
 * carry them from a booking's transaction to the moment they fire.
 */
import { Schema } from "effect"

/** The shortest and longest offset: 5 minutes to 30 days. */
export const MIN_REMINDER_OFFSET_MINUTES = 5
export const MAX_REMINDER_OFFSET_MINUTES = 43_200
export const MAX_REMINDERS = 5

export const Reminder = Schema.Struct({
  offset_minutes: Schema.Int.pipe(
    Schema.between(MIN_REMINDER_OFFSET_MINUTES, MAX_REMINDER_OFFSET_MINUTES, {
      message: () => `must be a whole number of minutes from ${MIN_REMINDER_OFFSET_MINUTES} to ${MAX_REMINDER_OFFSET_MINUTES} (30 days)`
    })
  ).annotations({ description: "how long before the start the reminder fires, 5 to 43200 minutes" })
}).annotations({ identifier: "Reminder" })
export type Reminder = typeof Reminder.Type

export const Reminders = Schema.Array(Reminder).pipe(
  Schema.maxItems(MAX_REMINDERS, { message: () => `at most ${MAX_REMINDERS} reminders` }),
  Schema.filter((list) => {
    const seen = new Set<number>()
    for (const [index, { offset_minutes }] of list.entries()) {
      if (seen.has(offset_minutes)) return { path: [index, "offset_minutes"], message: "repeats an earlier offset" }
      seen.add(offset_minutes)
    }
    return true
  }, { jsonSchema: {} }),
  Schema.annotations({
    identifier: "Reminders",
    description: "up to 5 distinct offsets; each confirmed booking emits `booking.reminder` at start − offset"
  })
)
export type Reminders = typeof Reminders.Type

/** One reminder still to fire: a booking, an offset and the start it was armed for. */
export interface DueReminder {
  /** `<booking id>:<offset>`: one job per booking and offset. */
  readonly id: string
  readonly booking_id: string
  readonly offset_minutes: number
  /** The booking's start when armed: a moved booking's old job never fires. */
  readonly start_ms: number
  readonly due_ms: number
  /** `account_id/environment`, so one tenant's due jobs can be locked without another's. */
  readonly tenant_key: string
}

export const dueReminderId = (bookingId: string, offsetMinutes: number) => `${bookingId}:${offsetMinutes}`

/** How late a reminder may fire and still be `late: false`. */
export const REMINDER_GRACE_MS = 5 * 60_000

/** The offsets in force for a booking of `service`: its own list when set, else the account's. */
export const effectiveOffsets = (
  service: { readonly reminders?: Reminders | null | undefined },
  account: Reminders
): ReadonlyArray<number> => (service.reminders ?? account).map((r) => r.offset_minutes)
