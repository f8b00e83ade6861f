/**
 * Availability: the rules that say when staff can be booked, and what follows from them:
 * slots, explanations and holds (docs/api.md §3).
 */
import { Effect, Schema } from "effect"
import { AvailabilityCreate, AvailabilityRule, AvailabilityUpdate, BlockedRule, DateRule, WeeklyRule } from "./rule.js"
import { formatInstant, optional, toMillis } from "../domain/common.js"
import { ValidationFailed } from "../domain/errors.js"
import {
  HOLD_DEFAULT_TTL_SECONDS,
  HoldCreate,
  holdView,
  type StoredHold,
  VISITOR_HOLD_MAX_TTL_SECONDS,
  VISITOR_HOLD_WINDOW_DAYS,
  VISITOR_HOLDS_PER_KEY,
  visitorHoldRefusal,
  visitorHoldsPerKey
} from "./hold.js"
import { Id } from "../domain/ids.js"
import { hidingOthers, type Visitor } from "../domain/visitor.js"
import type { Service } from "../services/service.js"
import type { Reason, Slot } from "../domain/slot.js"
import { Events } from "../events/Events.js"
import { currentStamp, findOr404, listPage, newResource, PageParams, patchResource } from "../internal/resources.js"
import { makeScheduleLoader } from "../scheduling/loadSchedule.js"
import { policyOf } from "../scheduling/policy.js"
import { readTogether } from "../scheduling/readTogether.js"
import { decodeInput } from "../domain/validation.js"
import { AvailabilityCollection, HoldsCollection } from "./collections.js"
import { ServicesCollection } from "../services/collections.js"
import { StaffCollection } from "../staff/collections.js"
import { type Condition, keyedTransactionOf, lockKeysOf, Storage } from "../ports/storage.js"
import { localDateOf } from "../scheduling/zones.js"
import { computeSlots, makeSlotFormatter } from "../scheduling/slots.js"
import { memberLockKeys, teamVerdict, visitorMemberRefusal } from "../scheduling/assignment.js"
import { makeMemberOccupancy } from "../scheduling/memberOccupancy.js"
import type { StaffSchedule } from "../scheduling/types.js"
import { InvalidReference } from "../domain/errors.js"
import { DAY, ExplainQuery, type Explanation, type SlotList, SlotQuery } from "./queries.js"

export const AvailabilityListParams = Schema.Struct({
  ...PageParams,
  staff_id: optional(Id("staff")),
  type: optional(Schema.Literal("weekly", "date", "blocked"))
})
export type AvailabilityListParams = typeof AvailabilityListParams.Encoded

/** The fields a PATCH may set on each type of rule. */
const UPDATABLE: Record<AvailabilityRule["type"], ReadonlySet<string>> = {
  weekly: new Set(["time_zone", "weekdays", "start_time", "end_time", "valid_from", "valid_until", "metadata"]),
  date: new Set(["time_zone", "date", "start_time", "end_time", "metadata"]),
  blocked: new Set(["time_zone", "start", "end", "metadata"])
}
const RULE_SCHEMAS = { weekly: WeeklyRule, date: DateRule, blocked: BlockedRule } as const

export class Availability extends Effect.Service<Availability>()("slotwise/Availability", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const events = yield* Events
    const rules = storage.collection(AvailabilityCollection)
    const staff = storage.collection(StaffCollection)
    const services = storage.collection(ServicesCollection)
    const holds = storage.collection(HoldsCollection)
    const schedule = makeScheduleLoader(storage)
    // A hold excludes only the holds and creates that could take one of its members' seats
    // or count against its visitor's limit.
    const keyedWrite = keyedTransactionOf(storage)
    const lockKeys = lockKeysOf(storage)
    const shared = makeMemberOccupancy(storage)
    const together = readTogether(storage)
    const findRule = findOr404(rules, "availability rule")
    const findStaff = findOr404(staff, "staff member")
    const findService = findOr404(services, "service")
    const findHold = findOr404(holds, "hold")
    const decodeCreate = decodeInput(AvailabilityCreate)
    const decodeUpdate = decodeInput(AvailabilityUpdate)
    const decodeList = decodeInput(AvailabilityListParams)
    const decodeSlots = decodeInput(SlotQuery)
    const decodeExplain = decodeInput(ExplainQuery)
    const decodeHold = decodeInput(HoldCreate)
    const validateRule = {
      weekly: decodeInput(RULE_SCHEMAS.weekly),
      date: decodeInput(RULE_SCHEMAS.date),
      blocked: decodeInput(RULE_SCHEMAS.blocked)
    }

    /** A referenced staff member of this tenant, or `invalid_reference` on `path`. */
    const referencedStaff = (id: string, path = "staff_id") =>
      Effect.catchTag(
        findStaff(id),
        "NotFound",
        () =>
          Effect.fail(
            new InvalidReference({
              detail: `no staff member with id ${id}`,
              errors: [{ path, message: "does not name an existing staff member" }]
            })
          )
      )
    const referencedService = (id: string) =>
      Effect.catchTag(
        findService(id),
        "NotFound",
        () =>
          Effect.fail(
            new InvalidReference({
              detail: `no service with id ${id}`,
              errors: [{ path: "service_id", message: "does not name an existing service" }]
            })
          )
      )

    const create = (input: typeof AvailabilityCreate.Encoded) =>
      Effect.gen(function*() {
        const fields = yield* decodeCreate(input)
        return yield* events.mutate(Effect.gen(function*() {
          const member = yield* referencedStaff(fields.staff_id)
          const base = { ...(yield* newResource("availability")), object: "availability" as const, metadata: {} }
          const rule = {
            ...base,
            ...(fields.type === "weekly" ? { valid_from: null, valid_until: null } : {}),
            ...fields,
            time_zone: fields.time_zone ?? member.time_zone
          } as AvailabilityRule
          yield* rules.insert(rule)
          yield* events.record("availability.created", rule)
          return rule
        }))
      })

    const patch = patchResource({
      events,
      collection: rules,
      find: findRule,
      validate: (merged) => validateRule[(merged as AvailabilityRule).type](merged) as Effect.Effect<AvailabilityRule, ValidationFailed>,
      type: "availability.updated",
      prepare: (current, fields: AvailabilityUpdate) => {
        const foreign = Object.keys(fields).filter((key) => !UPDATABLE[current.type].has(key))
        return foreign.length === 0 ? Effect.succeed(fields) : Effect.fail(
          new ValidationFailed({
            detail: `${foreign.join(", ")} cannot be set on a ${current.type} rule`,
            errors: foreign.map((path) => ({ path, message: `does not apply to a ${current.type} rule` }))
          })
        )
      }
    })
    const update = (id: string, input: typeof AvailabilityUpdate.Encoded) =>
      Effect.flatMap(decodeUpdate(input), (fields) => patch(id, fields))

    const remove = (id: string) =>
      events.mutate(Effect.gen(function*() {
        const current = yield* findRule(id)
        yield* rules.remove(id)
        yield* events.record("availability.deleted", current)
        return current
      }))

    const list = (params: AvailabilityListParams = {}) =>
      Effect.gen(function*() {
        const { cursor, limit, staff_id, type } = yield* decodeList(params)
        const where: Array<Condition> = [
          ...(staff_id === undefined ? [] : [{ column: "staff_id", op: "eq", value: staff_id } as const]),
          ...(type === undefined ? [] : [{ column: "type", op: "eq", value: type } as const])
        ]
        return yield* listPage(rules, { where, limit, cursor, filters: { staff_id, type } })
      })

    /** Every bookable start in the range, across the service's active staff or one member. */
    const slots = (query: SlotQuery) =>
      Effect.gen(function*() {
        const q = yield* decodeSlots(query)
        const service = yield* referencedService(q.service_id)
        const member = q.staff_id === undefined ? undefined : yield* referencedStaff(q.staff_id)
        const now = (yield* currentStamp).ms
        const range = { start: toMillis(q.start), end: toMillis(q.end) }
        const policy = policyOf(service)
        let schedules: ReadonlyArray<StaffSchedule>
        if (service.assignment === "collective" || (service.assignment === "round_robin" && member === undefined)) {
          // docs/api.md §11: a team's starts, each once, composed from every member's.
          const members = yield* staff.list({ where: [{ column: "id", op: "in", value: service.staff_ids }] })
          const data = (member !== undefined && !service.staff_ids.includes(member.id)) || !service.active
            ? []
            : yield* schedule.teamSlots(service, members, range, now)
          return withDays(data, q.time_zone)
        } else if (member !== undefined) {
          schedules = schedule.staffReasons(service, member).length === 0
            ? yield* schedule.schedules([member.id], policy, range, now, {}, "list")
            : []
        } else if (!service.active || service.staff_ids.length === 0) {
          schedules = []
        } else {
          // Who is active, read together with every assigned member's schedule (inactive
          // members are rare; their schedules are dropped) rather than one after the other.
          const [active, all] = yield* together([
            staff.listIndexes({
              where: [{ column: "id", op: "in", value: service.staff_ids }, { column: "active", op: "eq", value: 1 }]
            }),
            schedule.schedules(service.staff_ids, policy, range, now, {}, "list")
          ], service.staff_ids.length > 1)
          const activeIds = new Set(active.map((row) => row.id))
          schedules = all.filter((s) => activeIds.has(s.staff_id))
        }
        return withDays(computeSlots({ policy, schedules, range, now }, makeSlotFormatter()), q.time_zone)
      })

    const withDays = (data: ReadonlyArray<Slot>, timeZone: string | undefined): SlotList => {
      if (timeZone === undefined) return { object: "list", data }
      const byDate = new Map<string, Array<Slot>>()
      for (const slot of data) {
        const date = localDateOf(timeZone, toMillis(slot.start))
        const group = byDate.get(date)
        if (group === undefined) byDate.set(date, [slot])
        else group.push(slot)
      }
      const days = [...byDate].map(([date, slots]) => ({ date, slots }))
      return { object: "list", data, days }
    }

    /** Why a start is or is not bookable: one reason per failed check. */
    const explain = (query: ExplainQuery) =>
      Effect.gen(function*() {
        const q = yield* decodeExplain(query)
        const service = yield* referencedService(q.service_id)
        const member = q.staff_id === undefined ? undefined : yield* referencedStaff(q.staff_id)
        const now = (yield* currentStamp).ms
        const start = toMillis(q.start)
        let reasons: ReadonlyArray<Reason>
        let staffIds: ReadonlyArray<string>
        if (member !== undefined && service.assignment !== "collective") {
          reasons = yield* schedule.explain(service, member, start, now)
          staffIds = [member.id]
        } else {
          // The team: collective needs every member, otherwise anyone free will do.
          if (service.staff_ids.length === 0) {
            return yield* new InvalidReference({
              detail: `service ${service.id} has no staff`,
              errors: [{ path: "staff_id", message: "is required: the service has no staff to explain" }]
            })
          }
          const members = yield* schedule.membersOf(service)
          const mode = service.assignment === "collective" ? "collective" : "round_robin"
          const verdict = teamVerdict(mode, yield* schedule.membersReasons(service, members, start, now))
          reasons = verdict.reasons
          staffIds = mode === "collective"
            ? service.staff_ids
            : service.assignment === "round_robin"
            ? (yield* schedule.ranking(service, now)).filter((id) => verdict.free.includes(id))
            : verdict.free
        }
        return {
          object: "explanation",
          service_id: service.id,
          staff_id: staffIds[0] ?? member?.id ?? service.staff_ids[0]!,
          staff_ids: staffIds,
          start: q.start,
          end: formatInstant(start + service.duration_minutes * 60_000),
          bookable: reasons.length === 0,
          reasons
        } satisfies Explanation
      })

    /**
     * Reserves a bookable slot for a few minutes; it leaves `slots` for everyone else. A
     * `visitor` (a publishable key's caller) gets a shorter hold and only a few at once, counted
     * in storage, so a copied key cannot keep a day's slots from everyone else.
     */
    const hold = (input: typeof HoldCreate.Encoded, visitor?: Visitor) =>
      visitor === undefined ? holdFor(input) : hidingOthers(holdFor(input, visitor))
    const holdFor = (input: typeof HoldCreate.Encoded, visitor?: Visitor) =>
      Effect.gen(function*() {
        const fields = yield* decodeHold(input)
        return yield* keyedWrite(Effect.gen(function*() {
          const service = yield* referencedService(fields.service_id)
          const named = visitor === undefined ? undefined : visitorMemberRefusal(service, fields.staff_id)
          if (named !== undefined) return yield* named
          const members = memberLockKeys(service, fields.staff_id)
          yield* lockKeys(visitor === undefined ? members : [...members, `visitor/${visitor.key_id}`])
          const now = yield* currentStamp
          if (visitor !== undefined) yield* ensureVisitorMayHold(visitor, service, now.ms)
          const start = toMillis(fields.start)
          const { assigned_by, member, staff_ids } = yield* schedule.assign(service, fields.staff_id, start, now.ms)
          const asked = fields.ttl_seconds ?? HOLD_DEFAULT_TTL_SECONDS
          const ttl = visitor === undefined ? asked : Math.min(asked, VISITOR_HOLD_MAX_TTL_SECONDS)
          const created: StoredHold = {
            ...(yield* newResource("hold")),
            object: "hold",
            service_id: service.id,
            staff_id: member.id,
            staff_ids,
            assigned_by,
            start: fields.start,
            end: formatInstant(start + service.duration_minutes * 60_000),
            expires_at: formatInstant(now.ms + ttl * 1000),
            buffer_before_minutes: service.buffer_before_minutes,
            buffer_after_minutes: service.buffer_after_minutes,
            metadata: fields.metadata ?? {},
            ...(visitor === undefined ? {} : { visitor })
          }
          yield* holds.insert(created)
          yield* shared.sync(created)
          return holdView(created)
        }))
      })

    /**
     * `hold_limit_reached` when the visitor or its key already holds its most (inside the
     * hold's transaction). Past the key's least, the service's open starts of the coming days
     * are counted, only then: most holds never get near it.
     */
    const ensureVisitorMayHold = (visitor: Visitor, service: Service, now: number) =>
      Effect.gen(function*() {
        const active = yield* holds.listIndexes({
          where: [{ column: "visitor_key", op: "eq", value: visitor.key_id }, { column: "expires_ms", op: "gt", value: now }],
          columns: ["visitor_address"],
          ordered: false
        })
        const addresses = active.map((row) => row.visitor_address)
        let refusal = visitorHoldRefusal(visitor, addresses, VISITOR_HOLDS_PER_KEY)
        if (refusal !== undefined && addresses.length >= VISITOR_HOLDS_PER_KEY) {
          const open = yield* slots({
            service_id: service.id,
            start: formatInstant(now),
            end: formatInstant(now + VISITOR_HOLD_WINDOW_DAYS * DAY)
          })
          refusal = visitorHoldRefusal(visitor, addresses, visitorHoldsPerKey(open.data.length + addresses.length))
        }
        if (refusal !== undefined) return yield* refusal
      })

    const getHold = (id: string) => Effect.map(findHold(id), holdView)

    /** Releases a hold at once; releasing an expired or converted hold is `not_found`. */
    const releaseHold = (id: string) =>
      storage.transaction(Effect.gen(function*() {
        const current = yield* findHold(id)
        yield* holds.remove(id)
        yield* shared.release(id, current.staff_ids.length)
        return holdView(current)
      }))

    return {
      create,
      get: findRule,
      list,
      update,
      delete: remove,
      slots,
      explain,
      hold,
      getHold,
      releaseHold
    } as const
  })
}) {}

export { AvailabilityRule }
export { ExplainQuery, Explanation, SlotList, SlotQuery } from "./queries.js"
