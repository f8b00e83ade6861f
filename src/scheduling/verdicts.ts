/**
 * The verdicts on a start (docs/api.md §3 "Booking checks", §11): whether it is bookable with
 * a staff member or a team, and whom a booking or hold goes to, each checked on the schedules
 * as read (scheduleReads.ts) and refused with the API's errors (refusals.ts), alternatives
 * included (alternatives.ts). Every create goes through here: the common paths are chained in
 * one step after the read, not generators.
 */
import { Effect } from "effect"
import type { AssignedBy } from "../domain/assignment.js"
import type { InvalidReference, OutsideAvailability, SlotUnavailable, StorageFailure } from "../domain/errors.js"
import type { Service } from "../services/service.js"
import type { Reason } from "../domain/slot.js"
import type { Staff } from "../staff/member.js"
import { StaffCollection } from "../staff/collections.js"
import { type CollectionRead, Read, readManyOf, type ReadResults, type StorageService } from "../ports/storage.js"
import type { Tenant } from "../ports/tenant.js"
import type { AlternativeReads } from "./alternatives.js"
import { pickFree, teamVerdict } from "./assignment.js"
import { checkStart } from "./checks.js"
import { policyOf } from "./policy.js"
import { NO_READS } from "./readTogether.js"
import { FIXED_REASONS, fixedRefusal, noStaffMember, staffReasons, startRefusal } from "./refusals.js"
import type { Exclusions, ScheduleReads } from "./scheduleReads.js"
import type { SlotPolicy, StaffSchedule } from "./types.js"

/** Whom a booking or hold goes to: `member` is the first of `staff_ids`. */
export interface StaffChoice {
  readonly member: Staff
  readonly staff_ids: ReadonlyArray<string>
  readonly assigned_by: AssignedBy
}

export const makeVerdicts = (storage: StorageService, reads: ScheduleReads, alternatives: AlternativeReads) => {
  const { candidatesOf, ranking, schedules, schedulesThen } = reads
  const readMany = readManyOf(storage)

  /** The reasons `start` is not bookable with `staff` on `schedule` (empty when it is). */
  const reasonsOn = (service: Service, staff: Staff, policy: SlotPolicy, schedule: StaffSchedule, start: number, now: number) => {
    const fixed = staffReasons(service, staff)
    const checked = checkStart({ policy, schedule, start, now })
    return fixed.length === 0 ? checked : [...fixed, ...checked]
  }

  /** The reasons `start` is not bookable with `staff` (empty when it is). */
  const explain = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) => {
    const policy = policyOf(service)
    return Effect.map(
      schedules([staff.id], policy, { start, end: start + 1 }, now, exclude),
      ([schedule]) => reasonsOn(service, staff, policy, schedule!, start, now)
    )
  }

  /**
   * Succeeds with `free` when `start` is bookable with `staff`; otherwise fails with the API's
   * error for the first kind of reason: the staff member or service itself, availability, or
   * conflict. One step after the read: every create runs it.
   */
  const ensureBookable = <A = void>(
    service: Service,
    staff: Staff,
    start: number,
    now: number,
    exclude: Exclusions = {},
    free?: A
  ): Effect.Effect<A, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    whenBookable(service, staff, start, now, exclude, () => Effect.succeed(free as A))

  /** `next` when `start` is bookable with `staff`, in the same step; otherwise as `ensureBookable` fails. */
  const whenBookable = <A, E, R>(
    service: Service,
    staff: Staff,
    start: number,
    now: number,
    exclude: Exclusions,
    next: () => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
    const policy = policyOf(service)
    return schedulesThen(
      [staff.id],
      policy,
      { start, end: start + 1 },
      now,
      exclude,
      "check",
      ([schedule]): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
        const reasons = reasonsOn(service, staff, policy, schedule!, start, now)
        return reasons.length === 0 ? next() : refuse(service, staff, start, now, exclude, reasons)
      }
    )
  }

  /**
   * `whenBookable` for the staff member `id` names, read with their schedule (and the
   * `alongside` reads) in one go, or `invalid_reference` (before anything else) when there is none.
   */
  const whenBookableNamed = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>>>(
    service: Service,
    id: string,
    start: number,
    now: number,
    exclude: Exclusions,
    next: (member: Staff, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
    alongside: T
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
    const policy = policyOf(service)
    return schedulesThen(
      [id],
      policy,
      { start, end: start + 1 },
      now,
      exclude,
      "check",
      (
        [schedule],
        [found, ...rest]
      ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> => {
        const member = found[0]
        if (member === undefined) return Effect.fail(noStaffMember(id))
        const reasons = reasonsOn(service, member, policy, schedule!, start, now)
        return reasons.length === 0 ? next(member, rest as ReadResults<T>) : refuse(service, member, start, now, exclude, reasons)
      },
      [Read.list(StaffCollection, { where: [{ column: "id", op: "eq", value: id }] }), ...alongside] as const
    )
  }

  /** The refusal for a start that has `reasons`, with alternatives where they help. */
  const refuse = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions, reasons: Array<Reason>) =>
    Effect.gen(function*() {
      const fixed = staffReasons(service, staff)
      if (fixed.length > 0) return yield* fixedRefusal(fixed)
      return yield* startRefusal(reasons, yield* alternatives.alternatives(service, staff, start, now, exclude))
    })

  /** Each of `members`' reasons at `start`, their schedules read together. */
  const membersReasons = (service: Service, members: ReadonlyArray<Staff>, start: number, now: number, exclude: Exclusions = {}) => {
    const policy = policyOf(service)
    return Effect.map(
      schedules(members.map((m) => m.id), policy, { start, end: start + 1 }, now, exclude),
      (found) =>
        members.map((member, i) => ({
          staff_id: member.id,
          reasons: reasonsOn(service, member, policy, found[i]!, start, now)
        }))
    )
  }

  /** The API's refusal for a team start with `reasons` (each naming its member). */
  const refuseTeam = (
    service: Service,
    members: ReadonlyArray<Staff>,
    start: number,
    now: number,
    exclude: Exclusions,
    reasons: ReadonlyArray<Reason>
  ) =>
    Effect.gen(function*() {
      const fixed = reasons.filter((r) => FIXED_REASONS.has(r.code))
      if (fixed.length > 0 && (service.assignment === "collective" || fixed.length === reasons.length)) {
        return yield* fixedRefusal(fixed)
      }
      return yield* startRefusal([...reasons], yield* alternatives.teamAlternatives(service, members, start, now, exclude))
    })

  /**
   * Who a booking or hold of `service` at `start` goes to (docs/api.md §11), decided and
   * checked in one step inside the caller's transaction, so the pick and the write are atomic:
   * - collective: every member, each checked (`requested`, if given, must be one of them);
   * - a `requested` member: that one, checked;
   * - round robin: `prefer` when free (a rescheduled booking keeps its member), else the
   *   first free member in the policy's ranking;
   * - otherwise: the first free member in the service's order.
   * Nobody free: the refusal names every member's reasons.
   */
  const assign = (
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions = {},
    prefer?: string
  ): Effect.Effect<StaffChoice, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    assignThen(service, requested, start, now, exclude, prefer, Effect.succeed)

  /**
   * `next` of whom `assign` decides, in the same step, and of what the `alongside` reads read
   * (with the member's schedule where that is one read, else after the choice).
   */
  const assignThen = <A, E, R, const T extends ReadonlyArray<CollectionRead<any>> = readonly []>(
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions,
    prefer: string | undefined,
    next: (choice: StaffChoice, alongside: ReadResults<T>) => Effect.Effect<A, E, R>,
    alongside: T = NO_READS as unknown as T
  ): Effect.Effect<A, E | StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, R | Tenant> =>
    // The common case, chained rather than a generator: one named member, checked.
    service.assignment !== "collective" && requested !== undefined
      ? whenBookableNamed(
        service,
        requested,
        start,
        now,
        exclude,
        (member, read) => next({ member, staff_ids: [member.id], assigned_by: "chosen" }, read),
        alongside
      )
      : Effect.flatMap(
        assignAmong(service, requested, start, now, exclude, prefer),
        (choice) =>
          alongside.length === 0
            ? next(choice, NO_READS as unknown as ReadResults<T>)
            : Effect.flatMap(readMany(alongside), (read) => next(choice, read))
      )

  /** `assign` for a collective service or a member not named. */
  const assignAmong = (
    service: Service,
    requested: string | undefined,
    start: number,
    now: number,
    exclude: Exclusions,
    prefer: string | undefined
  ): Effect.Effect<StaffChoice, StorageFailure | InvalidReference | SlotUnavailable | OutsideAvailability, Tenant> =>
    Effect.gen(function*() {
      if (service.assignment === "collective") {
        const members = yield* candidatesOf(service, requested)
        const verdict = teamVerdict("collective", yield* membersReasons(service, members, start, now, exclude))
        if (verdict.reasons.length > 0) return yield* refuseTeam(service, members, start, now, exclude, verdict.reasons)
        return { member: members[0]!, staff_ids: members.map((m) => m.id), assigned_by: "collective" } satisfies StaffChoice
      }
      const members = yield* candidatesOf(service, undefined)
      const perMember = yield* membersReasons(service, members, start, now, exclude)
      const verdict = teamVerdict("round_robin", perMember)
      const roundRobin = service.assignment === "round_robin"
      const picked = roundRobin
        ? (prefer !== undefined && verdict.free.includes(prefer) ? prefer : pickFree(yield* ranking(service, now), verdict.free))
        : verdict.free[0]
      if (picked === undefined) {
        if (!roundRobin) return yield* refuse(service, members[0]!, start, now, exclude, [...perMember[0]!.reasons])
        return yield* refuseTeam(service, members, start, now, exclude, verdict.reasons)
      }
      const member = members.find((m) => m.id === picked)!
      return { member, staff_ids: [member.id], assigned_by: roundRobin ? "round_robin" : "first_free" } satisfies StaffChoice
    })

  return { explain, ensureBookable, membersReasons, refuseTeam, assign, assignThen } as const
}
