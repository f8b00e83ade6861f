/** The one write path of single and recurring creation: a checked booking, its reminders, its event. */
import { Effect } from "effect"
import type { Booking, BookingCreate as BookingCreateFields } from "./booking.js"
import { formatInstant } from "../domain/common.js"
import type { Service } from "../services/service.js"
import type { Staff } from "../staff/member.js"
import type { StoredHold } from "../availability/hold.js"
import type { Events } from "../events/Events.js"
import { resourceAt, type Stamp } from "../internal/resources.js"
import type { Collection } from "../ports/storage.js"
import type { makeReminderArming, ReminderSettings } from "../reminders/Reminders.js"
import { thenDo } from "../internal/steps.js"
import type { makeMemberOccupancy } from "../scheduling/memberOccupancy.js"

export const MINUTE = 60_000

/** A new booking's status: pending where the service asks for confirmation. */
export const statusOnCreate = (service: Service): Booking["status"] => (service.requires_confirmation ? "pending" : "confirmed")

/** What an insert works with, from the Bookings service. */
export interface BookingInsertDeps {
  readonly events: Events
  readonly bookings: Collection<Booking>
  readonly holds: Collection<StoredHold>
  readonly shared: ReturnType<typeof makeMemberOccupancy>
  readonly reminders: Effect.Effect.Success<ReturnType<typeof makeReminderArming>>
}

export const makeBookingInsert = ({ bookings, events, holds, reminders, shared }: BookingInsertDeps) => {
  /**
   * Writes one checked booking with its reminders and its `booking.created` event, inside the
   * caller's transaction: the one write path of single and recurring creation.
   */
  const insertBooking = (n: {
    readonly fields: BookingCreateFields
    readonly service: Service
    readonly member: Staff
    readonly client: { readonly id: string }
    readonly answers: Booking["answers"]
    readonly now: Stamp
    readonly start: number
    readonly seriesId: string | null
    /** Who attends and how they were decided; default: the member alone, as named. */
    readonly staffIds?: ReadonlyArray<string> | undefined
    readonly assignedBy?: Booking["assigned_by"] | undefined
    readonly held?: StoredHold | undefined
    /** The account's reminder settings, when read already (`settingsReadFor`). */
    readonly reminderSettings?: ReadonlyArray<ReminderSettings> | undefined
  }) => {
    const { fields, service, start } = n
    // Spelled out, not spread: a literal that starts with a spread is built one property
    // at a time, which measured ~15 µs for this object.
    const { created_at, id, updated_at } = resourceAt("booking", n.now)
    const booking: Booking = {
      id,
      created_at,
      updated_at,
      object: "booking",
      service_id: service.id,
      staff_id: n.member.id,
      staff_ids: n.staffIds ?? [n.member.id],
      assigned_by: n.assignedBy ?? "chosen",
      client_id: n.client.id,
      start: formatInstant(start),
      end: formatInstant(start + service.duration_minutes * MINUTE),
      status: statusOnCreate(service),
      notes: fields.notes ?? null,
      cancellation_reason: null,
      price: service.price,
      amount_paid: null,
      payment_status: "unpaid",
      rescheduled_from: null,
      buffer_before_minutes: service.buffer_before_minutes,
      buffer_after_minutes: service.buffer_after_minutes,
      answers: n.answers,
      series_id: n.seriesId,
      metadata: fields.metadata ?? {}
    }
    const held = n.held
    // Chained, not a generator, without the steps that have nothing to do: every create runs it.
    return Effect.zipRight(
      bookings.insert(booking),
      thenDo(
        shared.sync(booking),
        thenDo(
          held === undefined ? Effect.void : thenDo(holds.remove(held.id), shared.release(held.id, held.staff_ids.length)),
          reminders.armThen(
            booking,
            n.reminderSettings === undefined ? { fresh: true, service } : { fresh: true, service, settings: n.reminderSettings },
            events.recordAs("booking.created", booking, booking)
          )
        )
      )
    )
  }

  return insertBooking
}
