/** Staff: the people who deliver services (docs/api.md §3). */
import { Effect, Schema } from "effect"
import { ResourceInUse } from "../domain/errors.js"
import { publicStaff, Staff as StaffMember, StaffCreate, staffDefaults, StaffUpdate } from "./member.js"
import { removeFeedOfStaff } from "../calendarFeeds/CalendarFeeds.js"
import { removeCalendarsOfStaff } from "../calendars/Calendars.js"
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
import { AvailabilityCollection } from "../availability/collections.js"
import { BookingsCollection } from "../bookings/collections.js"
import { MemberOccupancyCollection } from "../ports/collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "./collections.js"
import { type Condition, Storage } from "../ports/storage.js"
import { refuseIfBooked } from "../services/Services.js"

export const StaffListParams = Schema.Struct({
  ...PageParams,
  active: activeFilter("staff members")
})
export type StaffListParams = typeof StaffListParams.Encoded

export class Staff extends Effect.Service<Staff>()("slotwise/Staff", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const staff = storage.collection(StaffCollection)
    const services = storage.collection(ServicesCollection)
    const rules = storage.collection(AvailabilityCollection)
    const bookings = storage.collection(BookingsCollection)
    const sharedRows = storage.collection(MemberOccupancyCollection)
    const find = findOr404(staff, "staff member")
    const decodeCreate = decodeInput(StaffCreate)
    const decodeUpdate = decodeInput(StaffUpdate)
    const decodeList = decodeInput(StaffListParams)
    const validate = decodeInput(StaffMember)

    const create = (input: typeof StaffCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        return yield* events.mutate(Effect.gen(function*() {
          const member: StaffMember = {
            ...(yield* newResource("staff")),
            object: "staff",
            ...staffDefaults,
            ...fields
          }
          yield* staff.insert(member)
          yield* events.record("staff.created", member)
          return member
        }))
      })

    const patch = patchResource({ events, collection: staff, find, validate, type: "staff.updated" })
    const update = (id: string, input: typeof StaffUpdate.Encoded) => Effect.flatMap(decodeUpdate(input), (fields) => patch(id, fields))

    /**
     * Deletes a staff member with no upcoming bookings, with their availability rules,
     * external calendars (and their busy times) and calendar feed, and takes them off every
     * service; each of those changes records its own event, all in one transaction.
     */
    const remove = (id: string) =>
      events.mutate(Effect.gen(function*() {
        const current = yield* find(id)
        yield* refuseIfBooked(bookings, [{ column: "staff_id", op: "eq", value: id }], `staff member ${id}`)
        // A collective booking holds its further members through their occupancy rows.
        const now = yield* currentStamp
        const attending = yield* sharedRows.listIndexes({
          where: [
            { column: "staff_id", op: "eq", value: id },
            { column: "kind", op: "eq", value: "booking" },
            { column: "end_ms", op: "gt", value: now.ms }
          ],
          columns: ["source_id"],
          limit: 1
        })
        if (attending.length > 0) {
          return yield* new ResourceInUse({
            detail: `staff member ${id} has upcoming bookings (${attending[0]!.source_id}); cancel or reschedule them first`
          })
        }
        for (const rule of yield* rules.list({ where: [{ column: "staff_id", op: "eq", value: id }] })) {
          yield* rules.remove(rule.id)
          yield* events.record("availability.deleted", rule)
        }
        for (const service of yield* services.list({})) {
          if (!service.staff_ids.includes(id)) continue
          const next = { ...service, staff_ids: service.staff_ids.filter((s) => s !== id), updated_at: now.iso }
          yield* services.update(next)
          yield* events.record("service.updated", next, { previous: service })
        }
        yield* removeCalendarsOfStaff(storage, events, id)
        yield* removeFeedOfStaff(storage, events, id)
        yield* staff.remove(id)
        yield* events.record("staff.deleted", current)
        return current
      }))

    const list = (params: StaffListParams = {}) =>
      Effect.gen(function*() {
        const { active, cursor, limit } = yield* decodeList(params)
        const where: Array<Condition> = active === undefined ? [] : [{ column: "active", op: "eq", value: active ? 1 : 0 }]
        return yield* listPage(staff, { where, limit, cursor, filters: { active } })
      })

    return {
      create,
      get: find,
      list,
      update,
      delete: remove,
      // What visitors (publishable keys) read: active staff, without email and metadata.
      ...visitorReads({ label: "staff member", get: find, list, view: publicStaff })
    } as const
  })
}) {}
