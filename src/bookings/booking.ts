/**
 * Bookings and their status rules (docs/api.md §3). The transition table below is the only
 * place that decides which status changes are allowed.
 */
import { Schema } from "effect"
import { Instant, Metadata, Money, ObjectType, optional, Text, Timestamps } from "../domain/common.js"
import { ClientCreate } from "../clients/client.js"
import { StaffAssignmentFields } from "../domain/assignment.js"
import { Id } from "../domain/ids.js"
import { Answer, AnswersInput } from "../services/question.js"
import { OnConflict, Recurrence } from "../recurring/recurrence.js"

export const BookingStatus = Schema.Literal("pending", "confirmed", "cancelled", "completed", "no_show")
export type BookingStatus = typeof BookingStatus.Type

export const PaymentStatus = Schema.Literal("unpaid", "partially_paid", "paid")
export type PaymentStatus = typeof PaymentStatus.Type

const notes = Schema.NullOr(Text(5000)).annotations({ description: "notes about the appointment, up to 5000 characters" })
const cancellationReason = Schema.NullOr(Text(1000)).annotations({ description: "why it was cancelled, up to 1000 characters" })

export const Booking = Schema.Struct({
  id: Id("booking"),
  object: ObjectType("booking"),
  service_id: Id("service").annotations({ description: "the service booked" }),
  staff_id: Id("staff").annotations({
    description: "the staff member who provides it; for a collective service the first of `staff_ids`"
  }),
  ...StaffAssignmentFields,
  client_id: Id("client").annotations({ description: "the client who booked" }),
  start: Instant.annotations({ description: "when the appointment starts (RFC 3339, UTC)" }),
  end: Instant.annotations({ description: "when it ends: start plus the service's duration" }),
  status: BookingStatus.annotations({
    description: "`pending` until confirmed (services that require confirmation), then `confirmed`; finally " +
      "`cancelled`, `completed` or `no_show`"
  }),
  notes,
  cancellation_reason: cancellationReason,
  price: Schema.NullOr(Money).annotations({ description: "the service's price when booked; null when free" }),
  amount_paid: Schema.NullOr(Money).annotations({ description: "the sum of the payments recorded; null before the first" }),
  payment_status: PaymentStatus.annotations({ description: "how much of the price is paid" }),
  rescheduled_from: Schema.NullOr(Instant).annotations({ description: "the previous start, after a reschedule" }),
  buffer_before_minutes: Schema.Int.annotations({ description: "the service's buffer when booked" }),
  buffer_after_minutes: Schema.Int.annotations({ description: "the service's buffer when booked" }),
  answers: Schema.Array(Answer).annotations({
    description: "the client's answers to the service's questions, with each question's label and type as asked"
  }),
  series_id: Schema.NullOr(Id("series")).annotations({
    description: "the series this booking is an occurrence of; null when booked alone"
  }),
  metadata: Metadata,
  manage_version: optional(Schema.Int.annotations({
    description: "the generation of the booking's manage link: rotating it bumps this and kills every earlier link"
  })),
  manage_url: optional(Schema.String.annotations({
    description: "`{public_url}/manage/{token}`: where the client sees, cancels or moves the booking; " +
      "only in reads with a secret key or an OAuth token"
  })),
  revision: optional(Schema.Int.annotations({
    description: "how many times the booking was changed since it was made (absent: never); calendar feeds' `SEQUENCE`"
  })),
  ...Timestamps
}).annotations({ identifier: "Booking" })
export type Booking = typeof Booking.Type

/**
 * A booking as the visitor who made it sees it (publishable keys): the appointment itself,
 * not the account's records around it (client id, notes, metadata, payments).
 */
export const PublicBooking = Booking.pick(
  "id",
  "object",
  "service_id",
  "staff_id",
  "staff_ids",
  "start",
  "end",
  "status",
  "price",
  "series_id",
  "created_at",
  "updated_at"
)
  .annotations({
    identifier: "PublicBooking",
    description: "A booking as a publishable key sees it: the appointment, without the client, notes, metadata or payments."
  })
export type PublicBooking = typeof PublicBooking.Type
export const publicBooking = (b: Booking): PublicBooking => ({
  id: b.id,
  object: b.object,
  service_id: b.service_id,
  staff_id: b.staff_id,
  staff_ids: b.staff_ids,
  start: b.start,
  end: b.end,
  status: b.status,
  price: b.price,
  series_id: b.series_id,
  created_at: b.created_at,
  updated_at: b.updated_at
})

/** `current` with `changes` applied at `at`: every change of a booking goes through here, so its revision rises. */
export const revised = (current: Booking, changes: Partial<Booking>, at: string): Booking => ({
  ...current,
  ...changes,
  revision: (current.revision ?? 0) + 1,
  updated_at: at
})

export const BookingCreate = Schema.Struct({
  service_id: Id("service").annotations({ description: "the service to book" }),
  staff_id: optional(Id("staff")).annotations({
    description: "omit to let the server decide: round robin by the service's policy, every member of a collective " +
      "service, or else the first staff member of the service who is free at `start`"
  }),
  client_id: optional(Id("client").annotations({ description: "an existing client; or give `client` instead" })),
  client: optional(ClientCreate).annotations({ description: "a new client to create with the booking; or give `client_id`" }),
  start: Instant.annotations({ description: "a bookable start, as listed by GET /v1/availability/slots" }),
  notes: optional(notes),
  answers: optional(AnswersInput.annotations({ description: "answers to the service's questions; every required one must be answered" })),
  metadata: optional(Metadata),
  hold_id: optional(Id("hold").annotations({ description: "a hold on this slot to turn into the booking" })),
  recurrence: optional(Recurrence.annotations({
    description: "book a series: `start` and every later occurrence of the rule (answered with a `booking_series`)"
  })),
  on_conflict: optional(OnConflict)
}).pipe(
  Schema.filter((input) => {
    if (input.recurrence === undefined && input.on_conflict !== undefined) {
      return { path: ["on_conflict"], message: "applies to a recurring booking only: send it with recurrence" }
    }
    if (input.recurrence !== undefined && input.hold_id !== undefined) {
      return { path: ["hold_id"], message: "cannot be used with recurrence: a hold reserves one slot" }
    }
    if (input.client_id !== undefined && input.client !== undefined) {
      return { path: ["client"], message: "cannot be given with client_id: send one or the other" }
    }
    if (input.client_id === undefined && input.client === undefined) {
      return { path: ["client_id"], message: "is required (or an inline client object)" }
    }
    return true
  })
).annotations({ identifier: "BookingCreate" })
export type BookingCreate = typeof BookingCreate.Type

export const BookingUpdate = Schema.Struct({
  start: optional(Instant.annotations({ description: "a new start: reschedules the booking" })),
  staff_id: optional(Id("staff").annotations({ description: "another staff member: reschedules the booking" })),
  status: optional(BookingStatus.annotations({ description: "a new status, as the status rules allow" })),
  notes: optional(notes),
  cancellation_reason: optional(cancellationReason),
  answers: optional(AnswersInput.annotations({
    description: "new answers, replacing all earlier ones, checked against the service's questions as they are now"
  })),
  metadata: optional(Metadata)
}).annotations({ identifier: "BookingUpdate" })
export type BookingUpdate = typeof BookingUpdate.Type

export const BookingReschedule = Schema.Struct({
  start: Instant.annotations({ description: "the new start" }),
  staff_id: optional(Id("staff").annotations({ description: "a new staff member; default: the same one" }))
}).annotations({ identifier: "BookingReschedule" })
export type BookingReschedule = typeof BookingReschedule.Type

export const BookingCancel = Schema.Struct({
  reason: optional(cancellationReason)
}).annotations({ identifier: "BookingCancel" })
export type BookingCancel = typeof BookingCancel.Type

export type BookingAction = "confirm" | "cancel" | "reschedule" | "complete" | "no_show"
/** The actions that move a booking to another status: all but reschedule. */
export type StatusAction = Exclude<BookingAction, "reschedule">

export const FINAL_STATUSES: ReadonlySet<BookingStatus> = new Set(["cancelled", "completed", "no_show"])
/** Statuses that hold a slot. */
export const ACTIVE_STATUSES: ReadonlyArray<BookingStatus> = ["pending", "confirmed"]

interface Transition<To extends BookingStatus | "same"> {
  readonly from: ReadonlyArray<BookingStatus>
  readonly to: To
  /** The transition is allowed only once the booking has started. */
  readonly afterStart: boolean
}

/** docs/api.md §3, "Booking status rules": the whole table. */
export const TRANSITIONS: { readonly [A in BookingAction]: Transition<A extends StatusAction ? BookingStatus : "same"> } = {
  confirm: { from: ["pending"], to: "confirmed", afterStart: false },
  cancel: { from: ["pending", "confirmed"], to: "cancelled", afterStart: false },
  reschedule: { from: ["pending", "confirmed"], to: "same", afterStart: false },
  complete: { from: ["confirmed"], to: "completed", afterStart: true },
  no_show: { from: ["confirmed"], to: "no_show", afterStart: true }
}

const STATUS_ACTIONS = (Object.keys(TRANSITIONS) as Array<BookingAction>).filter(
  (action): action is StatusAction => action !== "reschedule"
)

/** The action that moves a booking to `status` through `PATCH {status}`, if any: read from the table. */
export const actionForStatus = (status: BookingStatus): StatusAction | undefined =>
  STATUS_ACTIONS.find((action) => TRANSITIONS[action].to === status)

/**
 * Why `action` is not allowed on a booking in `from` at `now`, or `undefined` if it is.
 * `startMs` is the booking's start.
 */
export const transitionRefusal = (
  action: BookingAction,
  from: BookingStatus,
  startMs: number,
  now: number
): string | undefined => {
  const rule = TRANSITIONS[action]
  if (!rule.from.includes(from)) {
    return FINAL_STATUSES.has(from)
      ? `a ${from} booking is final and cannot ${action.replace("_", "-")}`
      : `cannot ${action.replace("_", "-")} a ${from} booking`
  }
  if (rule.afterStart && now < startMs) return `cannot ${action.replace("_", "-")} a booking before its start`
  return undefined
}

/** Payment status from what is owed and what was paid. */
export const paymentStatusOf = (price: number | null, paid: number): PaymentStatus =>
  paid <= 0 ? "unpaid" : price !== null && paid < price ? "partially_paid" : "paid"
