/**
 * A booking's changes after it is made: the status actions by the status table, moves
 * (reschedules) rechecked in full, and plain updates; each with its event.
 */
import { Effect, type Either } from "effect"
import {
  actionForStatus,
  type Booking,
  type BookingAction,
  BookingCancel,
  BookingReschedule,
  BookingUpdate,
  revised,
  type StatusAction,
  TRANSITIONS,
  transitionRefusal
} from "./booking.js"
import { formatInstant, toMillis } from "../domain/common.js"
import { InvalidTransition, ValidationFailed } from "../domain/errors.js"
import type { AnswerInput } from "../services/question.js"
import type { Service } from "../services/service.js"
import type { Events } from "../events/Events.js"
import type { Actor } from "../events/catalogue.js"
import { changes, currentStamp, type findOr404 } from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import type { Collection } from "../ports/storage.js"
import type { makeReminderArming } from "../reminders/Reminders.js"
import type { makeScheduleLoader } from "../scheduling/loadSchedule.js"
import { policyOf } from "../scheduling/policy.js"
import type { Exclusions } from "../scheduling/scheduleReads.js"
import { gridPlace } from "../scheduling/slots.js"
import type { makeMemberOccupancy } from "../scheduling/memberOccupancy.js"
import { MINUTE } from "./insert.js"

/** What a status change or a move may change besides (the caller's notes, reason, metadata, answers). */
type BookingExtras = Partial<Pick<Booking, "notes" | "cancellation_reason" | "metadata" | "answers">>

const EVENT_OF_ACTION: Record<StatusAction, "booking.updated" | "booking.cancelled"> = {
  confirm: "booking.updated",
  cancel: "booking.cancelled",
  complete: "booking.updated",
  no_show: "booking.updated"
}

/** What the changes work with, from the Bookings service. */
export interface BookingChangeDeps<E, R> {
  readonly events: Events
  readonly bookings: Collection<Booking>
  readonly find: ReturnType<typeof findOr404<Booking>>
  readonly shared: ReturnType<typeof makeMemberOccupancy>
  readonly reminders: Effect.Effect.Success<ReturnType<typeof makeReminderArming>>
  readonly schedule: ReturnType<typeof makeScheduleLoader>
  readonly referencedService: (id: string) => Effect.Effect<Service, E, R>
  readonly answersFor: (service: Service, given: ReadonlyArray<AnswerInput>) => Either.Either<Booking["answers"], ValidationFailed>
}

export const makeBookingChanges = <E, R>(
  { answersFor, bookings, events, find, referencedService, reminders, schedule, shared }: BookingChangeDeps<E, R>
) => {
  const decodeUpdate = decodeInput(BookingUpdate)
  const decodeReschedule = decodeInput(BookingReschedule)
  const decodeCancel = decodeInput(BookingCancel)

  /** The booking `action` is asked of, and the time now, once the table of transitions allows the action. */
  const allowedNow = (id: string, action: BookingAction) =>
    Effect.gen(function*() {
      const current = yield* find(id)
      const now = yield* currentStamp
      const refusal = transitionRefusal(action, current.status, toMillis(current.start), now.ms)
      if (refusal !== undefined) return yield* new InvalidTransition({ detail: refusal })
      return { current, now } as const
    })

  /** Applies a status action (not reschedule) with the table's rules and its event. */
  const transition = (id: string, action: StatusAction, extra: BookingExtras = {}, actor: Actor = "account") =>
    events.mutate(Effect.gen(function*() {
      const { current, now } = yield* allowedNow(id, action)
      const next = revised(current, { ...extra, status: TRANSITIONS[action].to }, now.iso)
      yield* bookings.update(next)
      yield* shared.sync(next, current)
      yield* reminders.arm(next)
      const type = EVENT_OF_ACTION[action]
      yield* events.record(type, next, type === "booking.cancelled" ? { previous: current, actor } : { previous: current })
      return next
    }))

  /**
   * `validation_failed` on `start` when it is inside the hours of `staffIds` but on none of
   * their grids, the starts the slots offer (a client moves only to those).
   */
  const ensureOnGrid = (service: Service, staffIds: ReadonlyArray<string>, start: number, now: number, exclude: Exclusions) =>
    Effect.flatMap(schedule.schedules(staffIds, policyOf(service), { start, end: start + 1 }, now, exclude), (found) => {
      const places = found.map((s) => gridPlace(policyOf(service), s, start))
      if (places.includes("on") || places.every((p) => p === "outside")) return Effect.void
      const nearest = [...new Set(places.flatMap((p) => (typeof p === "string" ? [] : p)))].sort((a, b) => a - b).map(formatInstant)
      return Effect.fail(
        new ValidationFailed({
          detail: `${formatInstant(start)} is not one of the service's starts` +
            (nearest.length === 0 ? "" : `; the nearest are ${nearest.join(" and ")}`),
          errors: [{ path: "start", message: "must be one of the service's starts, as the slots list them" }]
        })
      )
    })

  /**
   * Moves a pending or confirmed booking to a new start (and staff member), rechecked in full;
   * a client (through a manage link) only to a start on the service's grid.
   */
  const moveTo = (
    id: string,
    target: { readonly start?: string; readonly staff_id?: string },
    extra: BookingExtras = {},
    actor: Actor = "account"
  ) =>
    events.mutate(Effect.gen(function*() {
      const { current, now } = yield* allowedNow(id, "reschedule")
      const startText = target.start ?? current.start
      const staffId = target.staff_id ?? current.staff_id
      if (startText === current.start && staffId === current.staff_id && !changes(current, extra)) return current
      const service = yield* referencedService(current.service_id)
      const start = toMillis(startText)
      const exclude = { bookingId: current.id }
      if (actor === "client" && startText !== current.start) {
        const candidates = service.assignment === "round_robin" ? service.staff_ids : current.staff_ids
        yield* ensureOnGrid(service, candidates, start, now.ms, exclude)
      }
      // docs/api.md §11: a collective booking moves all its members; a round-robin one keeps
      // its member when free at the new start, else goes to the next free one by the policy.
      const choice = target.staff_id !== undefined
        ? yield* schedule.assign(service, target.staff_id, start, now.ms, exclude)
        : current.assigned_by === "collective" || (current.assigned_by === "round_robin" && service.assignment === "round_robin")
        ? yield* schedule.assign(service, undefined, start, now.ms, exclude, current.staff_id)
        : { ...(yield* schedule.assign(service, current.staff_id, start, now.ms, exclude)), assigned_by: current.assigned_by }
      const member = choice.member
      const moved = startText !== current.start || member.id !== current.staff_id ||
        choice.staff_ids.join() !== current.staff_ids.join()
      const next = revised(current, {
        ...extra,
        staff_id: member.id,
        staff_ids: choice.staff_ids,
        assigned_by: choice.assigned_by,
        start: startText,
        end: formatInstant(start + service.duration_minutes * MINUTE),
        rescheduled_from: startText !== current.start ? current.start : current.rescheduled_from,
        buffer_before_minutes: service.buffer_before_minutes,
        buffer_after_minutes: service.buffer_after_minutes
      }, now.iso)
      yield* bookings.update(next)
      yield* shared.sync(next, current)
      if (moved) yield* reminders.arm(next, { service })
      yield* events.record(
        moved ? "booking.rescheduled" : "booking.updated",
        next,
        moved ? { previous: current, actor } : { previous: current }
      )
      return next
    }))

  /** `actor`: who moves it, recorded in the event (`client` through a manage link). */
  const reschedule = (id: string, input: typeof BookingReschedule.Encoded, actor: Actor = "account") =>
    Effect.flatMap(decodeReschedule(input), (target) => moveTo(id, target, {}, actor))

  const cancel = (id: string, input: typeof BookingCancel.Encoded = {}, actor: Actor = "account") =>
    Effect.flatMap(decodeCancel(input), ({ reason }) => transition(id, "cancel", { cancellation_reason: reason ?? null }, actor))

  /** DELETE: cancels; cancelling an already cancelled booking returns it unchanged. */
  const remove = (id: string) =>
    events.mutate(Effect.gen(function*() {
      const current = yield* find(id)
      if (current.status === "cancelled") return current
      return yield* transition(id, "cancel")
    }))

  /**
   * PATCH: a new `status` follows the status table; a new `start` or `staff_id` is a
   * reschedule; other fields are a plain update.
   */
  const update = (id: string, input: typeof BookingUpdate.Encoded) =>
    Effect.gen(function*() {
      const { answers, start, staff_id, status, ...rest } = yield* decodeUpdate(input)
      const extra = answers === undefined ? rest : {
        ...rest,
        answers: yield* answersFor(yield* referencedService((yield* find(id)).service_id), answers)
      }
      if (status !== undefined && (start !== undefined || staff_id !== undefined)) {
        return yield* new ValidationFailed({
          detail: "change the status and the time in separate requests",
          errors: [{ path: "status", message: "cannot be combined with start or staff_id" }]
        })
      }
      if (status !== undefined) {
        const action = actionForStatus(status)
        if (action === undefined) {
          const current = yield* find(id)
          return yield* new InvalidTransition({ detail: `cannot move a ${current.status} booking to ${status}` })
        }
        return yield* transition(id, action, extra)
      }
      if (start !== undefined || staff_id !== undefined) {
        return yield* moveTo(id, { ...(start !== undefined ? { start } : {}), ...(staff_id !== undefined ? { staff_id } : {}) }, extra)
      }
      return yield* events.mutate(Effect.gen(function*() {
        const current = yield* find(id)
        if (!changes(current, extra)) return current
        const next = revised(current, extra, (yield* currentStamp).iso)
        yield* bookings.update(next)
        yield* events.record("booking.updated", next, { previous: current })
        return next
      }))
    })

  return { transition, reschedule, cancel, remove, update }
}
