/**
 * Bookings: creation with the checks of docs/api.md §3 as one atomic step, the status rules and
 * rescheduling. Payments live in Payments.ts and are offered here as well.
 */
import { Effect, Either, Option, Schema } from "effect"
import { ACTIVE_STATUSES, BookingCreate, type BookingCreate as BookingCreateFields, BookingStatus, publicBooking } from "./booking.js"
import { Instant, optional, toMillis } from "../domain/common.js"
import { HoldExpired, InvalidReference, type RateLimited, type StorageFailure, ValidationFailed } from "../domain/errors.js"
import { Id } from "../domain/ids.js"
import { type AnswerInput, checkAnswers } from "../services/question.js"
import type { Service } from "../services/service.js"
import type { Client } from "../clients/client.js"
import type { StoredHold } from "../availability/hold.js"
import { hidingOthers, type Visitor, visitorBookingRefusal, visitorDayStart } from "../domain/visitor.js"
import { Clients } from "../clients/Clients.js"
import { Events } from "../events/Events.js"
import { currentStamp, findOr404, listPage, PageParams, type Stamp, withStamp } from "../internal/resources.js"
import { decodeInput, decodeInputEither, validationFailed } from "../domain/validation.js"
import { Payments } from "../payments/Payments.js"
import { BookingsCollection, VisitorBookingsCollection } from "./collections.js"
import { ClientsCollection } from "../clients/collections.js"
import { HoldsCollection } from "../availability/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type CollectionRead, type Condition, keyedTransactionOf, lockKeysOf, Read, type ReadResults, Storage } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import { makeReminderArming } from "../reminders/Reminders.js"
import { thenDo } from "../internal/steps.js"
import { memberLockKeys, visitorMemberRefusal } from "../scheduling/assignment.js"
import { makeScheduleLoader } from "../scheduling/loadSchedule.js"
import type { Exclusions } from "../scheduling/scheduleReads.js"
import type { StaffChoice } from "../scheduling/verdicts.js"
import { makeMemberOccupancy } from "../scheduling/memberOccupancy.js"
import { endedBy, endsAfter } from "../services/Services.js"
import { makeBookingChanges } from "./changes.js"
import { makeBookingInsert, statusOnCreate } from "./insert.js"

const NO_EXCLUSIONS: Exclusions = {}

export const BookingListParams = Schema.Struct({
  ...PageParams,
  status: optional(Schema.Union(BookingStatus, Schema.Array(BookingStatus))),
  staff_id: optional(Id("staff")),
  client_id: optional(Id("client")),
  service_id: optional(Id("service")),
  start_from: optional(Instant),
  start_to: optional(Instant),
  upcoming: optional(Schema.Boolean.annotations({
    description:
      "true: only bookings that have not ended (pending or confirmed unless `status` says otherwise); false: only those that have"
  }))
}).annotations({ identifier: "BookingListParams" })
export type BookingListParams = typeof BookingListParams.Encoded

/**
 * A visitor's request (publishable key) books for a new client only: attaching it to an
 * existing client would let anyone who learns a client id book in their name.
 */
export const newClientOnly = <A, E, R>(input: typeof BookingCreate.Encoded, book: Effect.Effect<A, E, R>) =>
  typeof input === "object" && input !== null && input.client_id !== undefined
    ? Effect.fail(
      new ValidationFailed({
        detail: "a publishable key books only for a new client: send `client` (name, email…) instead of `client_id`",
        errors: [{ path: "client_id", message: "is not accepted with a publishable key; send client instead" }]
      })
    )
    : book

export class Bookings extends Effect.Service<Bookings>()("slotwise/Bookings", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const clientUseCases = yield* Clients
    const payments = yield* Payments
    const bookings = storage.collection(BookingsCollection)
    const services = storage.collection(ServicesCollection)
    const clients = storage.collection(ClientsCollection)
    const holds = storage.collection(HoldsCollection)
    const staff = storage.collection(StaffCollection)
    const visitorBookings = storage.collection(VisitorBookingsCollection)
    const schedule = makeScheduleLoader(storage)
    // A create excludes only the creates and holds that could take one of its members' seats.
    const keyedWrite = keyedTransactionOf(storage)
    const lockKeys = lockKeysOf(storage)
    const shared = makeMemberOccupancy(storage)
    const reminders = yield* makeReminderArming(storage)
    const find = findOr404(bookings, "booking")
    const decodeCreateInPlace = decodeInputEither(BookingCreate)
    const decodeCreate: (input: unknown) => Effect.Effect<BookingCreateFields, ValidationFailed> = decodeCreateInPlace
    const decodeList = decodeInput(BookingListParams)

    /**
     * A referenced resource of this tenant, or `invalid_reference` naming the field; `andThen`
     * goes on with the resource in the same step, where a create chains on it; `missing` is
     * that refusal, for a resource read some other way.
     */
    const reference = <A extends { readonly id: string }, E, R>(
      get: (id: string) => Effect.Effect<Option.Option<A>, E, R>,
      label: string,
      path: string
    ) => {
      const missing = (id: string) =>
        new InvalidReference({ detail: `no ${label} with id ${id}`, errors: [{ path, message: `does not name an existing ${label}` }] })
      const andThen = <B, E2, R2>(
        id: string,
        next: (found: A) => Effect.Effect<B, E2, R2>
      ): Effect.Effect<B, E | E2 | InvalidReference, R | R2> =>
        Effect.flatMap(
          get(id),
          (found): Effect.Effect<B, E2 | InvalidReference, R2> => Option.isSome(found) ? next(found.value) : Effect.fail(missing(id))
        )
      return Object.assign((id: string) => andThen(id, (found: A) => Effect.succeed(found)), { andThen, missing })
    }
    const referencedService = reference(services.get, "service", "service_id")
    const referencedStaff = reference(staff.get, "staff member", "staff_id")
    const referencedClient = reference(clients.get, "client", "client_id")
    const referencedHold = reference(holds.get, "hold", "hold_id")

    /** The answers to store for `service`'s questions as they are now, or `validation_failed` naming each bad one. */
    const answersFor = (service: Service, given: ReadonlyArray<AnswerInput>) =>
      Either.mapLeft(checkAnswers(service.questions, given), validationFailed)

    const recurringRefused = () =>
      new ValidationFailed({
        detail: "a recurring request makes a series: use bookingSeries.create (POST /v1/bookings takes both)",
        errors: [{ path: "recurrence", message: "is handled by bookingSeries.create" }]
      })

    /** `next` of the hold `holdId` that a create converts, checked against the slot asked for, in the same step. */
    const withHold = <A, E, R>(
      holdId: string,
      fields: BookingCreateFields,
      service: Service,
      now: Stamp,
      next: (held: StoredHold) => Effect.Effect<A, E, R>
    ) =>
      referencedHold.andThen(holdId, (held): Effect.Effect<A, E | ValidationFailed | HoldExpired, R> => {
        if (toMillis(held.expires_at) <= now.ms) {
          return Effect.fail(new HoldExpired({ detail: `hold ${held.id} expired at ${held.expires_at}` }))
        }
        if (
          held.service_id !== service.id || held.start !== fields.start ||
          (fields.staff_id !== undefined && !held.staff_ids.includes(fields.staff_id))
        ) {
          return Effect.fail(
            new ValidationFailed({
              detail: `hold ${held.id} is for another slot`,
              errors: [{
                path: "hold_id",
                message: `reserves service ${held.service_id} with staff member ${held.staff_id} at ${held.start}, not this slot`
              }]
            })
          )
        }
        return next(held)
      })

    /**
     * `next` of who attends, in the same step: as asked, or, converting a hold, its members
     * (decided when it was taken), rechecked; and of the `alongside` reads, read with them.
     */
    const withAttendees = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>>>(
      fields: BookingCreateFields,
      service: Service,
      start: number,
      now: Stamp,
      held: StoredHold | undefined,
      next: (choice: StaffChoice, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
      alongside: T
    ) => {
      if (held === undefined) return schedule.assignThen(service, fields.staff_id, start, now.ms, NO_EXCLUSIONS, undefined, next, alongside)
      const exclude: Exclusions = { holdId: held.id }
      return held.assigned_by === "collective"
        ? schedule.assignThen(service, undefined, start, now.ms, exclude, undefined, next, alongside)
        : schedule.assignThen(
          service,
          held.staff_id,
          start,
          now.ms,
          exclude,
          undefined,
          (choice, read) => next({ ...choice, assigned_by: held.assigned_by }, read),
          alongside
        )
    }

    /** The key locks of a create: its members', and a visitor's key's, whose day's bookings it counts. */
    const createLockKeys = (service: Service, staffId: string | undefined, visitor: Visitor | undefined) =>
      visitor === undefined ? memberLockKeys(service, staffId) : [...memberLockKeys(service, staffId), `visitor-bookings/${visitor.key_id}`]

    /**
     * Counts a visitor's `booked` appointments against its limits of the day, inside the
     * transaction that wrote them (under the key's lock, `createLockKeys`): `rate_limited`,
     * undoing them, when they pass one; else they are recorded for the next count.
     */
    const countVisitorBookings = (visitor: Visitor, booked: ReadonlyArray<{ readonly id: string }>, now: Stamp) =>
      Effect.flatMap(
        visitorBookings.listIndexes({
          where: [
            { column: "visitor_key", op: "eq", value: visitor.key_id },
            { column: "booked_ms", op: "gte", value: visitorDayStart(now.ms) }
          ],
          columns: ["visitor_address"],
          ordered: false
        }),
        (today): Effect.Effect<void, RateLimited | StorageFailure, Tenant> => {
          const refusal = visitorBookingRefusal(visitor, today.map((row) => row.visitor_address), booked.length, now.ms)
          return refusal !== undefined ? Effect.fail<RateLimited>(refusal) : Effect.forEach(
            booked,
            (b) => visitorBookings.insert({ id: b.id, key_id: visitor.key_id, address: visitor.address, booked_at: now.iso }),
            { discard: true }
          )
        }
      )

    /**
     * A create from input decoded with `BookingCreate`; a `visitor`'s is counted against its
     * limits. Chained, not a generator, and each step that has nothing to wait for (answers,
     * no hold, no key locks) taken in place: every create runs it.
     */
    const createDecoded = (fields: typeof BookingCreate.Type, visitor?: Visitor) => {
      if (fields.recurrence !== undefined) return Effect.fail(recurringRefused())
      const start = toMillis(fields.start)
      return keyedWrite(withStamp((now) =>
        referencedService.andThen(fields.service_id, (service) => {
          // The locks come before the reads that decide it (the hold, the members' schedules).
          // (A storage without key locks has no keys to name.)
          const locked = <A, E, R>(next: Effect.Effect<A, E, R>) =>
            storage.lockKeys === undefined ? next : thenDo(lockKeys(createLockKeys(service, fields.staff_id, visitor)), next)
          const named = visitor === undefined ? undefined : visitorMemberRefusal(service, fields.staff_id)
          if (named !== undefined) return locked(Effect.fail(named))
          // Checked before anything is written: refused answers leave no client or event behind.
          const checked = answersFor(service, fields.answers ?? [])
          if (Either.isLeft(checked)) return locked(Effect.fail(checked.left))
          const answers = checked.right
          // Read with the attendees' schedules: the client named, the account's reminder settings.
          const clientRead = clientReadOf(fields)
          const settingsRead = reminders.settingsReadFor(service, statusOnCreate(service))
          const book = (held: StoredHold | undefined) =>
            withAttendees(fields, service, start, now, held, (choice, read: ReadonlyArray<any>) =>
              withClientRead(fields, clientRead.length === 0 ? undefined : read[0], (client) => {
                const inserted = insertBooking({
                  fields,
                  service,
                  member: choice.member,
                  staffIds: choice.staff_ids,
                  assignedBy: choice.assigned_by,
                  client,
                  answers,
                  now,
                  start,
                  seriesId: null,
                  held,
                  reminderSettings: settingsRead.length === 0 ? undefined : read[clientRead.length]
                })
                return visitor === undefined ? inserted : Effect.tap(inserted, (booking) =>
                  countVisitorBookings(visitor, [booking], now))
              }), [...clientRead, ...settingsRead])
          return locked(fields.hold_id === undefined ? book(undefined) : withHold(fields.hold_id, fields, service, now, book))
        })
      ))
    }

    /** Decoded in place: the input is all it needs, and every create runs it. `visitor`: a publishable key's caller. */
    const create = (input: typeof BookingCreate.Encoded, visitor?: Visitor) => {
      const decoded = decodeCreateInPlace(input)
      return Either.isRight(decoded) ? createDecoded(decoded.right, visitor) : Effect.fail(decoded.left)
    }

    /**
     * `next` of the request's client, in the same step: an existing one, or a new one made now
     * (recording `client.created`).
     */
    const withClient = <A, E, R>(fields: BookingCreateFields, next: (client: { readonly id: string }) => Effect.Effect<A, E, R>) =>
      fields.client !== undefined
        ? Effect.flatMap(clientUseCases.insert(fields.client), next)
        : referencedClient.andThen(fields.client_id!, next)

    /** The read of the existing client a create names, to read with the attendees' schedules (none for a new client). */
    const clientReadOf = (fields: BookingCreateFields) =>
      fields.client === undefined
        ? [Read.list(ClientsCollection, { where: [{ column: "id", op: "eq", value: fields.client_id! }] })] as const
        : [] as const

    /** `withClient`, the existing client's documents already read (`clientReadOf`). */
    const withClientRead = <A, E, R>(
      fields: BookingCreateFields,
      read: ReadonlyArray<Client> | undefined,
      next: (client: { readonly id: string }) => Effect.Effect<A, E, R>
    ) => {
      if (fields.client !== undefined || read === undefined) return withClient(fields, next)
      const found = read[0]
      return found === undefined ? Effect.fail(referencedClient.missing(fields.client_id!)) : next(found)
    }
    /** The request's client alone (a series books it once for all its occurrences). */
    const clientOf = (fields: BookingCreateFields) => withClient(fields, Effect.succeed)

    const insertBooking = makeBookingInsert({ bookings, events, holds, reminders, shared })

    /**
     * A visitor's booking (publishable key): as a new client only, since attaching it to an
     * existing client would let anyone who learns a client id book in their name; answered
     * with the appointment alone. An inline client is always a new record, whatever its
     * email: nothing about the account's existing clients is merged or shown. It counts against
     * the visitor's limits of the day, and a refused time names nobody else's booking.
     */
    const createForVisitor = (input: typeof BookingCreate.Encoded, visitor: Visitor) =>
      newClientOnly(input, Effect.map(hidingOthers(create(input, visitor)), publicBooking))

    const list = (params: BookingListParams = {}) =>
      Effect.gen(function*() {
        const p = yield* decodeList(params)
        const now = (yield* currentStamp).ms
        const statuses = p.status === undefined ? undefined : typeof p.status === "string" ? [p.status] : p.status
        const where: Array<Condition> = [
          ...(statuses !== undefined ? [{ column: "status", op: "in", value: statuses } as const] : []),
          ...(p.upcoming === true && statuses === undefined
            ? [{ column: "status", op: "in", value: ACTIVE_STATUSES } as const]
            : []),
          ...(p.upcoming === true ? endsAfter(now) : []),
          ...(p.upcoming === false ? endedBy(now) : []),
          ...(p.staff_id !== undefined ? [{ column: "staff_id", op: "eq", value: p.staff_id } as const] : []),
          ...(p.client_id !== undefined ? [{ column: "client_id", op: "eq", value: p.client_id } as const] : []),
          ...(p.service_id !== undefined ? [{ column: "service_id", op: "eq", value: p.service_id } as const] : []),
          ...(p.start_from !== undefined ? [{ column: "start_ms", op: "gte", value: toMillis(p.start_from) } as const] : []),
          ...(p.start_to !== undefined ? [{ column: "start_ms", op: "lt", value: toMillis(p.start_to) } as const] : [])
        ]
        const { cursor, limit, ...filters } = p
        return yield* listPage(bookings, { where, limit, cursor, filters })
      })

    const { cancel, remove, reschedule, transition, update } = makeBookingChanges({
      answersFor,
      bookings,
      events,
      find,
      referencedService,
      reminders,
      schedule,
      shared
    })

    return {
      create,
      createForVisitor,
      get: find,
      list,
      update,
      delete: remove,
      confirm: (id: string) => transition(id, "confirm"),
      cancel,
      reschedule,
      complete: (id: string) => transition(id, "complete"),
      noShow: (id: string) => transition(id, "no_show"),
      recordPayment: payments.record,
      listPayments: payments.list,
      /** The steps of creation, for recurring bookings (BookingSeries) to build on. */
      creation: {
        keyedWrite,
        lockKeys,
        createLockKeys,
        countVisitorBookings,
        decodeCreate,
        referencedService,
        referencedStaff,
        answersFor,
        clientOf,
        insertBooking,
        schedule,
        transition
      }
    } as const
  })
}) {}
