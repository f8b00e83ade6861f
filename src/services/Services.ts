/** Services: what can be booked, for how long, by whom (docs/api.md §3). */
import { Effect, Schema } from "effect"
import { assignmentErrors } from "../domain/assignment.js"
import { InvalidReference, ResourceInUse, ValidationFailed } from "../domain/errors.js"
import { MAX_DURATION_MINUTES, publicService, Service, ServiceCreate, serviceDefaults, ServiceUpdate } from "./service.js"
import { Events } from "../events/Events.js"
import {
  activeFilter,
  currentStamp,
  findOr404,
  listPage,
  newResource,
  PageParams,
  patchResource,
  visitorReads
} from "../internal/resources.js"
import { decodeInput } from "../domain/validation.js"
import { BookingsCollection } from "../bookings/collections.js"
import { ServicesCollection } from "./collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type Collection, type Condition, Storage } from "../ports/storage.js"
import { ACTIVE_STATUSES, type Booking } from "../bookings/booking.js"

export const ServiceListParams = Schema.Struct({
  ...PageParams,
  active: activeFilter("services")
})
export type ServiceListParams = typeof ServiceListParams.Encoded

export class Services extends Effect.Service<Services>()("slotwise/Services", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const services = storage.collection(ServicesCollection)
    const staff = storage.collection(StaffCollection)
    const bookings = storage.collection(BookingsCollection)
    const find = findOr404(services, "service")
    const decodeCreate = decodeInput(ServiceCreate)
    const decodeUpdate = decodeInput(ServiceUpdate)
    const decodeList = decodeInput(ServiceListParams)
    const validate = decodeInput(Service)

    /** Every staff id must name a staff member of this tenant. */
    const checkStaff = (ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const unique = [...new Set(ids)]
        if (unique.length === 0) return unique
        const found = yield* staff.listIndexes({ where: [{ column: "id", op: "in", value: unique }] })
        const known = new Set(found.map((row) => row.id))
        const missing = unique.filter((id) => !known.has(id))
        if (missing.length > 0) {
          return yield* new InvalidReference({
            detail: `no staff member with id ${missing.join(", ")}`,
            errors: missing.map((id) => ({ path: `staff_ids.${ids.indexOf(id)}`, message: "does not name an existing staff member" }))
          })
        }
        return unique
      })

    /** `validation_failed` when a weight names someone outside `staff_ids` (docs/api.md §11). */
    const checkAssignment = (service: Pick<Service, "staff_ids" | "staff_weights">) => {
      const errors = assignmentErrors(service)
      return errors.length === 0
        ? Effect.void
        : Effect.fail(new ValidationFailed({ detail: "staff_weights may only weigh the service's own staff", errors }))
    }

    const create = (input: typeof ServiceCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        return yield* events.mutate(Effect.gen(function*() {
          const staff_ids = yield* checkStaff(fields.staff_ids ?? [])
          const service: Service = {
            ...(yield* newResource("service")),
            object: "service",
            ...serviceDefaults(fields),
            ...fields,
            staff_ids
          }
          yield* checkAssignment(service)
          yield* services.insert(service)
          yield* events.record("service.created", service)
          return service
        }))
      })

    const patch = patchResource({
      events,
      collection: services,
      find,
      validate,
      type: "service.updated",
      prepare: (current, fields: ServiceUpdate) =>
        Effect.flatMap(
          fields.staff_ids === undefined
            ? Effect.succeed(fields)
            : Effect.map(checkStaff(fields.staff_ids), (staff_ids) => ({ ...fields, staff_ids })),
          (checked) =>
            Effect.as(
              checkAssignment({
                staff_ids: checked.staff_ids ?? current.staff_ids,
                staff_weights: checked.staff_weights ?? current.staff_weights
              }),
              checked
            )
        )
    })
    const update = (id: string, input: typeof ServiceUpdate.Encoded) => Effect.flatMap(decodeUpdate(input), (fields) => patch(id, fields))

    const remove = (id: string) =>
      events.mutate(Effect.gen(function*() {
        const current = yield* find(id)
        yield* refuseIfBooked(bookings, [{ column: "service_id", op: "eq", value: id }], `service ${id}`)
        yield* services.remove(id)
        yield* events.record("service.deleted", current)
        return current
      }))

    const list = (params: ServiceListParams = {}) =>
      Effect.gen(function*() {
        const { active, cursor, limit } = yield* decodeList(params)
        const where: Array<Condition> = active === undefined ? [] : [{ column: "active", op: "eq", value: active ? 1 : 0 }]
        return yield* listPage(services, { where, limit, cursor, filters: { active } })
      })

    return {
      create,
      get: find,
      list,
      update,
      delete: remove,
      // What visitors (publishable keys) read: active services, without metadata.
      ...visitorReads({ label: "service", get: find, list, view: publicService })
    } as const
  })
}) {}

/**
 * Bookings that end after `ms`. The start bound is implied (no booking lasts longer than
 * a service can) and lets storage range-scan by start instead of reading the past.
 */
export const endsAfter = (ms: number): ReadonlyArray<Condition> => [
  { column: "end_ms", op: "gt", value: ms },
  { column: "start_ms", op: "gt", value: ms - MAX_DURATION_MINUTES * 60_000 }
]

/**
 * Bookings that ended by `ms`. The start bound is implied (a booking starts before it ends)
 * and stops storage's scan by start at `ms`, rather than reading every later booking to find
 * that none has ended.
 */
export const endedBy = (ms: number): ReadonlyArray<Condition> => [
  { column: "end_ms", op: "lte", value: ms },
  { column: "start_ms", op: "lt", value: ms }
]

/** `resource_in_use` when upcoming pending or confirmed bookings match `where`. */
export const refuseIfBooked = (
  bookings: Collection<Booking>,
  where: ReadonlyArray<Condition>,
  what: string
) =>
  Effect.gen(function*() {
    const now = yield* currentStamp
    const upcoming = yield* bookings.listIndexes({
      where: [...where, { column: "status", op: "in", value: ACTIVE_STATUSES }, ...endsAfter(now.ms)],
      limit: 1
    })
    if (upcoming.length > 0) {
      return yield* new ResourceInUse({
        detail: `${what} has upcoming bookings (${upcoming[0]!.id}); cancel or reschedule them first`
      })
    }
  })
