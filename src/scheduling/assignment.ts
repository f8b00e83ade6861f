/**
 * Assignment (docs/api.md §11): who of a service's staff is free at a start, and whom to pick.
 * The one rule every path follows (slots, explain, holds, bookings, reschedules): per-member
 * results come from the ordinary checks (checks.ts, slots.ts); this module composes them.
 *
 * - Round robin: a start is free when any member is; the members are ranked once by the
 *   service's policy and the first free one in that ranking is picked.
 * - Collective: a start is free only when every member is; the booking takes them all.
 * - A series keeps one member (or, collective, all of them) for every occurrence: the
 *   attendees are checked at each occurrence in turn, each booked occurrence occupying them
 *   for the next, and a server-picked member is the first in the order (the policy's ranking,
 *   or `staff_ids` without round robin) free at every occurrence, else the first with the
 *   fewest blocked.
 */
import { DEFAULT_STAFF_WEIGHT, type RoundRobinPolicy, type StaffWeights } from "../domain/assignment.js"
import { ValidationFailed } from "../domain/errors.js"
import type { Service } from "../services/service.js"
import type { Reason } from "../domain/slot.js"
import { checkStart } from "./checks.js"
import { occupiedRange } from "./occupancy.js"
import type { SlotCandidate, SlotPolicy, StaffSchedule } from "./types.js"

/** What the policies know of one member's past assignments of the service. */
export interface MemberRecord {
  /** The id of the member's most recently made booking of the service (ids sort by creation). */
  readonly last_booking_id?: string | undefined
  /** Bookings of the service assigned to the member (any status) in the look-back window. */
  readonly assigned: number
  /** Pending/confirmed bookings of the service that have not ended. */
  readonly upcoming: number
}

const NO_RECORD: MemberRecord = { assigned: 0, upcoming: 0 }

/**
 * A visitor (publishable key) names no member of a round-robin service: the rotation and its
 * weights decide who is booked, and a key anyone can copy must not pick someone the account
 * keeps out of turn (a weight of 0). `validation_failed` on `staff_id`, else `undefined`.
 */
export const visitorMemberRefusal = (service: Service, staffId: string | undefined): ValidationFailed | undefined =>
  staffId === undefined || service.assignment !== "round_robin" ? undefined : new ValidationFailed({
    detail: `service ${service.id} assigns its staff by round robin: a publishable key cannot choose the staff member`,
    errors: [{
      path: "staff_id",
      message: "is not accepted with a publishable key on a round-robin service; leave it out and one is assigned"
    }]
  })

export const weightOf = (weights: StaffWeights, staffId: string): number => weights[staffId] ?? DEFAULT_STAFF_WEIGHT

/**
 * The members in the order the policy prefers them; ties keep `members`' order (the
 * service's `staff_ids`), so the choice is stable.
 * - `least_recently_booked`: never booked first, then by their latest booking, oldest first.
 * - `fewest_upcoming`: fewest upcoming bookings, then least recently booked.
 * - `weighted`: lowest `(assigned + 1) / weight` first (the member furthest behind their
 *   share), then least recently booked; weight 0 only after every positive weight.
 */
export const rankMembers = (input: {
  readonly policy: RoundRobinPolicy
  readonly members: ReadonlyArray<string>
  readonly records: ReadonlyMap<string, MemberRecord>
  readonly weights: StaffWeights
}): Array<string> => {
  const { members, policy, records, weights } = input
  const recordOf = (id: string) => records.get(id) ?? NO_RECORD
  const recency = (a: string, b: string) => {
    const la = recordOf(a).last_booking_id
    const lb = recordOf(b).last_booking_id
    if (la === lb) return 0
    if (la === undefined) return -1
    if (lb === undefined) return 1
    return la < lb ? -1 : 1
  }
  const position = new Map(members.map((id, i) => [id, i]))
  const byOrder = (a: string, b: string) => position.get(a)! - position.get(b)!
  const unique = [...new Set(members)]
  switch (policy) {
    case "least_recently_booked":
      return unique.sort((a, b) => recency(a, b) || byOrder(a, b))
    case "fewest_upcoming":
      return unique.sort((a, b) => recordOf(a).upcoming - recordOf(b).upcoming || recency(a, b) || byOrder(a, b))
    case "weighted": {
      const share = (id: string) => {
        const weight = weightOf(weights, id)
        return weight <= 0 ? Number.POSITIVE_INFINITY : (recordOf(id).assigned + 1) / weight
      }
      return unique.sort((a, b) => {
        const sa = share(a)
        const sb = share(b)
        return (sa === sb ? 0 : sa < sb ? -1 : 1) || recency(a, b) || byOrder(a, b)
      })
    }
  }
}

/** The first member of `ranking` who is in `free`, if any. */
export const pickFree = (ranking: ReadonlyArray<string>, free: ReadonlySet<string> | ReadonlyArray<string>): string | undefined => {
  const isFree = Array.isArray(free) ? new Set(free as ReadonlyArray<string>) : (free as ReadonlySet<string>)
  return ranking.find((id) => isFree.has(id))
}

/** A start of a team service: who is free there, and who would be picked. */
export interface TeamSlot {
  readonly start: number
  readonly end: number
  /** Round robin: who would be picked now; collective: the first member. */
  readonly staff_id: string
  /** Round robin: the free members, in ranking order; collective: every member. */
  readonly staff_ids: ReadonlyArray<string>
  readonly remaining: number
}

/** Groups per-member candidates (in start order) by start. */
const byStart = (candidates: ReadonlyArray<SlotCandidate>): Array<Array<SlotCandidate>> => {
  const groups: Array<Array<SlotCandidate>> = []
  let current: Array<SlotCandidate> | undefined
  for (const c of candidates) {
    if (current !== undefined && current[0]!.start === c.start) current.push(c)
    else groups.push(current = [c])
  }
  return groups
}

/**
 * Round-robin slots: each start any member is free at, once, with the free members (best
 * ranked first), the pick, and the seats left across them.
 */
export const roundRobinSlots = (candidates: ReadonlyArray<SlotCandidate>, ranking: ReadonlyArray<string>): Array<TeamSlot> => {
  const rank = new Map(ranking.map((id, i) => [id, i]))
  const out: Array<TeamSlot> = []
  for (const group of byStart(candidates)) {
    const free = group.map((c) => c.staff_id).sort((a, b) => (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity))
    let remaining = 0
    for (const c of group) remaining += c.remaining
    out.push({ start: group[0]!.start, end: group[0]!.end, staff_id: free[0]!, staff_ids: free, remaining })
  }
  return out
}

/**
 * Collective slots: only the starts every one of `members` is free at, with the fewest
 * seats any of them has left. No members, no slots.
 */
export const collectiveSlots = (candidates: ReadonlyArray<SlotCandidate>, members: ReadonlyArray<string>): Array<TeamSlot> => {
  if (members.length === 0) return []
  const wanted = new Set(members)
  const out: Array<TeamSlot> = []
  for (const group of byStart(candidates)) {
    const present = new Set<string>()
    let remaining = Number.POSITIVE_INFINITY
    for (const c of group) {
      if (!wanted.has(c.staff_id)) continue
      present.add(c.staff_id)
      remaining = Math.min(remaining, c.remaining)
    }
    if (present.size === wanted.size) {
      out.push({ start: group[0]!.start, end: group[0]!.end, staff_id: members[0]!, staff_ids: members, remaining })
    }
  }
  return out
}

/** Each member's reasons, each reason naming its member, in member order. */
export const tagReasons = (
  perMember: ReadonlyArray<{ readonly staff_id: string; readonly reasons: ReadonlyArray<Reason> }>
): Array<Reason> => perMember.flatMap(({ reasons, staff_id }) => reasons.map((reason) => ({ ...reason, staff_id })))

/**
 * Collective: bookable only when no member has a reason; the reasons name whom each is about.
 * Round robin (no member named): bookable when any member has none; when nobody is free,
 * every member's reasons.
 */
export const teamVerdict = (
  mode: "round_robin" | "collective",
  perMember: ReadonlyArray<{ readonly staff_id: string; readonly reasons: ReadonlyArray<Reason> }>
): { readonly free: ReadonlyArray<string>; readonly reasons: ReadonlyArray<Reason> } => {
  const free = perMember.filter((m) => m.reasons.length === 0).map((m) => m.staff_id)
  if (perMember.length === 0) return { free, reasons: [] }
  if (mode === "collective") return { free, reasons: tagReasons(perMember) }
  return { free, reasons: free.length > 0 ? [] : tagReasons(perMember) }
}

/** Each attendee's reasons at `start`, in the order of `schedules`. */
export const occurrenceReasons = (
  policy: SlotPolicy,
  schedules: ReadonlyArray<StaffSchedule>,
  start: number,
  now: number
): Array<{ readonly staff_id: string; readonly reasons: ReadonlyArray<Reason> }> =>
  schedules.map((schedule) => ({ staff_id: schedule.staff_id, reasons: checkStart({ policy, schedule, start, now }) }))

/** The attendees' schedules once an occurrence at `start` (booking `id`) occupies each of them. */
export const withOccurrence = (
  policy: SlotPolicy,
  schedules: ReadonlyArray<StaffSchedule>,
  start: number,
  id: string
): Array<StaffSchedule> => {
  const { start: occupied_start, end: occupied_end } = occupiedRange(policy, start)
  const occupied = {
    kind: "booking" as const,
    id,
    service_id: policy.service_id,
    start,
    end: start + policy.duration,
    occupied_start,
    occupied_end
  }
  return schedules.map((schedule) => ({ ...schedule, occupancy: [...schedule.occupancy, occupied] }))
}

/**
 * How many of `starts` the attendees of `schedules` could not take together, checked in
 * order as a series books them (each free occurrence occupies them for the later ones).
 */
export const blockedOccurrences = (
  policy: SlotPolicy,
  schedules: ReadonlyArray<StaffSchedule>,
  starts: ReadonlyArray<number>,
  now: number
): number => {
  let current: ReadonlyArray<StaffSchedule> = schedules
  let blocked = 0
  starts.forEach((start, i) => {
    if (occurrenceReasons(policy, current, start, now).some((m) => m.reasons.length > 0)) blocked++
    else current = withOccurrence(policy, current, start, `occurrence ${i + 1}`)
  })
  return blocked
}

/**
 * The member who takes a whole series: the first of `order` with no blocked occurrence, else
 * the first with the fewest. Only members counted in `blocked` (those who may be booked) are
 * candidates.
 */
export const pickLeastBlocked = (order: ReadonlyArray<string>, blocked: ReadonlyMap<string, number>): string | undefined => {
  let best: string | undefined
  for (const id of order) {
    const count = blocked.get(id)
    if (count === undefined) continue
    if (count === 0) return id
    if (best === undefined || count < blocked.get(best)!) best = id
  }
  return best
}

/**
 * The lock keys of a booking or hold of a service for `requested` (absent: the server
 * picks): the members whose schedules can decide it, so requests for different members
 * never wait for each other while two that could take one member's seat always do. A
 * named member alone, unless the service is collective; else every member.
 */
export const memberLockKeys = (
  service: { readonly assignment: string; readonly staff_ids: ReadonlyArray<string> },
  requested: string | undefined
): Array<string> =>
  (service.assignment !== "collective" && requested !== undefined ? [requested] : service.staff_ids).map((id) => `staff/${id}`)
