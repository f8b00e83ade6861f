/**
 * What a refusal offers instead (docs/api.md §3): the free starts nearest to the refused one,
 * of the staff member asked for or of the team.
 */
import { Effect } from "effect"
import type { Service } from "../services/service.js"
import type { Staff } from "../staff/member.js"
import { ALTERNATIVES_RANGE, nearestSlots, nearestStarts } from "./checks.js"
import { policyOf } from "./policy.js"
import { staffReasons } from "./refusals.js"
import type { Exclusions, ScheduleReads } from "./scheduleReads.js"
import { makeSlotFormatter } from "./slots.js"
import type { TeamSlotReads } from "./teamSlots.js"

/** How many free starts a refusal offers. */
const ALTERNATIVES = 3

export const makeAlternatives = (reads: ScheduleReads, team: TeamSlotReads) => {
  /** Up to `ALTERNATIVES` free slots of `staff` nearest to `start`. */
  const alternatives = (service: Service, staff: Staff, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.gen(function*() {
      if (staffReasons(service, staff).length > 0) return []
      const policy = policyOf(service)
      const range = { start: start - ALTERNATIVES_RANGE, end: start + ALTERNATIVES_RANGE }
      const [schedule] = yield* reads.schedules([staff.id], policy, range, now, exclude)
      const format = makeSlotFormatter()
      return nearestSlots({ policy, schedule: schedule!, start, now, count: ALTERNATIVES })
        .map((slot) => format(slot.start, slot.end, slot.staff_id, slot.remaining))
    })

  /** Up to `ALTERNATIVES` team slots nearest to `start` (itself excluded), found as for one staff member. */
  const teamAlternatives = (service: Service, members: ReadonlyArray<Staff>, start: number, now: number, exclude: Exclusions = {}) =>
    Effect.map(
      team.teamSchedules(service, members, { start: start - ALTERNATIVES_RANGE, end: start + ALTERNATIVES_RANGE }, now, exclude),
      (within) => within === undefined ? [] : team.formatTeamSlots(nearestStarts(start, ALTERNATIVES, within))
    )

  return { alternatives, teamAlternatives } as const
}

export type AlternativeReads = ReturnType<typeof makeAlternatives>
