/**
 * Loads what the pure scheduling functions need from storage and turns their verdicts into
 * the API's errors: the reads (scheduleReads.ts), a team's slots (teamSlots.ts), the
 * alternatives a refusal offers (alternatives.ts) and the verdicts on a start
 * (verdicts.ts), put together once per use case. The booking checks of docs/api.md §3 are
 * decided there, in checks.ts, occupancy.ts, slots.ts and windows.ts, nowhere else.
 */
import type { StorageService } from "../ports/storage.js"
import { makeAlternatives } from "./alternatives.js"
import { noStaff, staffReasons } from "./refusals.js"
import { makeScheduleReads } from "./scheduleReads.js"
import { makeTeamSlots } from "./teamSlots.js"
import { makeVerdicts } from "./verdicts.js"

export const makeScheduleLoader = (storage: StorageService) => {
  const reads = makeScheduleReads(storage)
  const team = makeTeamSlots(reads)
  const alternatives = makeAlternatives(reads, team)
  const verdicts = makeVerdicts(storage, reads, alternatives)
  return {
    assign: verdicts.assign,
    assignThen: verdicts.assignThen,
    candidatesOf: reads.candidatesOf,
    noStaff,
    membersOf: reads.membersOf,
    schedules: reads.schedules,
    explain: verdicts.explain,
    alternatives: alternatives.alternatives,
    ensureBookable: verdicts.ensureBookable,
    staffReasons,
    membersReasons: verdicts.membersReasons,
    ranking: reads.ranking,
    teamSlots: team.teamSlots,
    refuseTeam: verdicts.refuseTeam
  } as const
}
