/**
 * A team service's starts (round robin or collective, docs/api.md §11): the bookable members'
 * slots, read together and composed by the assignment rule.
 */
import { Effect } from "effect"
import type { Service } from "../services/service.js"
import type { Slot } from "../domain/slot.js"
import type { Staff } from "../staff/member.js"
import { collectiveSlots, roundRobinSlots, type TeamSlot } from "./assignment.js"
import { policyOf } from "./policy.js"
import { staffReasons } from "./refusals.js"
import type { Exclusions, ScheduleReads } from "./scheduleReads.js"
import { computeSlots, makeSlotFormatter } from "./slots.js"
import type { Interval } from "./types.js"

export const makeTeamSlots = (reads: ScheduleReads) => {
  /**
   * What a team service's starts in `range` are computed from: the bookable members'
   * schedules over `range`, and `within`, the team's starts of any part of it composed by the
   * assignment rule. Nothing when the team has no starts at all (a collective service with an
   * inactive member, a service nobody can be booked for).
   */
  const teamSchedules = (service: Service, members: ReadonlyArray<Staff>, range: Interval, now: number, exclude: Exclusions) =>
    Effect.gen(function*() {
      const policy = policyOf(service)
      const bookable = members.filter((m) => staffReasons(service, m).length === 0)
      const collective = service.assignment === "collective"
      if (bookable.length === 0 || (collective && bookable.length < service.staff_ids.length)) return undefined
      const found = yield* reads.schedules(bookable.map((m) => m.id), policy, range, now, exclude, "list")
      const order = collective ? service.staff_ids : yield* reads.ranking(service, now)
      return (part: Interval): Array<TeamSlot> => {
        const candidates = computeSlots({ policy, schedules: found, range: part, now })
        return collective ? collectiveSlots(candidates, order) : roundRobinSlots(candidates, order)
      }
    })

  const formatTeamSlots = (team: ReadonlyArray<TeamSlot>): Array<Slot> => {
    const format = makeSlotFormatter()
    return team.map((slot): Slot => ({ ...format(slot.start, slot.end, slot.staff_id, slot.remaining), staff_ids: slot.staff_ids }))
  }

  /**
   * A team service's starts in `range` (round robin or collective), as public slots: the
   * per-member slots composed by the assignment rule. `members`: those who may be booked
   * (active, assigned); a collective service with an inactive member has no slots.
   */
  const teamSlots = (service: Service, members: ReadonlyArray<Staff>, range: Interval, now: number, exclude: Exclusions = {}) =>
    Effect.map(teamSchedules(service, members, range, now, exclude), (within) => within === undefined ? [] : formatTeamSlots(within(range)))

  return { teamSchedules, formatTeamSlots, teamSlots } as const
}

export type TeamSlotReads = ReturnType<typeof makeTeamSlots>
