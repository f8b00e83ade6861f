/**
 * The booking checks (docs/api.md §3 "Booking checks", "Explain"). A start `s` (end
 * `e = s + duration`) is bookable when
 * - `[s, e]` lies inside one available window (buffers need not);
 * - its occupied range `[s − buffer_before, e + buffer_after)` overlaps no occupancy's
 *   occupied range — except, when `capacity > 1`, occupancies of the same service at the
 *   same start, which are seats; seats taken ≥ capacity is `capacity_full`;
 * - `now + min_notice ≤ s ≤ now + max_advance`.
 * Overlap, seats and notice are stated once (occupancy.ts): the slot sweep (slots.ts) and the
 * check of one start with its reasons (`checkStart`) both use them.
 */
import type { Reason } from "../domain/slot.js"
import { byOccupiedStart, conflicts, noticeBounds, occupiedRange, seatsByStart } from "./occupancy.js"
import { computeSlots } from "./slots.js"
import type { SlotCandidate, SlotPolicy, StaffSchedule } from "./types.js"
import { type PreparedRules, prepareRules, withinWindow } from "./windows.js"
import { formatDay, formatLocal, formatLocalTime, formatMinutes, gapOnDay, localDayOf, localToUtcDay, weekdayOfDay } from "./zones.js"

const MINUTE = 60_000
const DAY = 86_400_000

/** The zone for human-readable details: the first wall-clock rule's, else UTC. */
const displayZone = (rules: PreparedRules): string => rules.weekly[0]?.zone ?? rules.dates[0]?.zone ?? "UTC"

const span = (zone: string, start: number, end: number): string =>
  `${formatLocal(zone, start)}–${
    localDayOf(zone, start) === localDayOf(zone, end - 1) ? formatLocalTime(zone, end) : formatLocal(zone, end)
  }`

const hoursText = (hours: ReadonlyArray<{ readonly start: number; readonly end: number }>): string =>
  hours.map((h) => `${formatMinutes(h.start)}–${formatMinutes(h.end)}`).join(", ")

interface Governing {
  readonly zone: string
  readonly day: number
  readonly start: number
  readonly end: number
}

/** The rules whose hours apply on the local dates of `start` and `end`. */
const governingRules = (rules: PreparedRules, start: number, end: number): Array<Governing> => {
  const out: Array<Governing> = []
  for (const d of rules.dates) {
    if (d.day === localDayOf(d.zone, start) || d.day === localDayOf(d.zone, end)) out.push(d)
  }
  for (const w of rules.weekly) {
    const a = localDayOf(w.zone, start)
    const b = localDayOf(w.zone, end)
    for (let day = a; day <= b; day++) {
      if (
        day >= w.from && day <= w.until && (w.weekdays & (1 << weekdayOfDay(day))) !== 0 &&
        !rules.overridden.has(day)
      ) out.push({ zone: w.zone, day, start: w.start, end: w.end })
    }
  }
  return out
}

/**
 * `dst_gap`: a governing rule's hours contain a spring-forward gap, and `[start, end]`
 * would fit in the window as long as the rule's wall-clock hours (anchored at the real
 * start, or at the real end when the rule starts inside the gap) but not in the shortened
 * window.
 */
const dstGapReason = (rules: PreparedRules, start: number, end: number): Reason | undefined => {
  for (const g of governingRules(rules, start, end)) {
    const gap = gapOnDay(g.zone, g.day)
    if (gap === undefined || !(gap.from < g.end && gap.to > g.start)) continue
    const ws = localToUtcDay(g.zone, g.day, g.start)
    const we = localToUtcDay(g.zone, g.day, g.end)
    const length = (g.end - g.start) * MINUTE
    const startsInGap = g.start >= gap.from
    const uStart = startsInGap ? we - length : ws
    const uEnd = startsInGap ? we : ws + length
    if (uStart <= start && end <= uEnd && !(ws <= start && end <= we)) {
      const real = Math.max(0, we - ws) / MINUTE
      return {
        code: "dst_gap",
        detail: `On ${formatDay(g.day)} the clocks in ${g.zone} jump from ${formatMinutes(gap.from)} to ` +
          `${formatMinutes(gap.to)}, so the hours ${formatMinutes(g.start)}–${formatMinutes(g.end)} last only ` +
          `${Math.floor(real / 60)}h${real % 60 === 0 ? "" : `${real % 60}m`}; ${span(g.zone, start, end)} does not fit in them.`
      }
    }
  }
  return undefined
}

/** Why `[start, end]` is in no window: exactly one reason. */
const windowReason = (rules: PreparedRules, start: number, end: number, zone: string): Reason => {
  const blocked = rules.blocked.find((b) => b.start < end && start < b.end)
  if (blocked?.calendar_id !== undefined) {
    return {
      code: "external_busy",
      detail: `Calendar ${blocked.calendar_id} is busy ${span(zone, blocked.start, blocked.end)} (${zone}), which ` +
        `covers ${span(zone, start, end)}.`,
      calendar_id: blocked.calendar_id
    }
  }
  if (blocked !== undefined) {
    return {
      code: "blocked",
      detail: `Time off ${blocked.id} (${span(zone, blocked.start, blocked.end)}, ${zone}) covers ` +
        `${span(zone, start, end)}.`
    }
  }
  const gap = dstGapReason(rules, start, end)
  if (gap !== undefined) return gap
  const last = end > start ? end - 1 : end
  const overriding = rules.dates.filter((d) => d.day === localDayOf(d.zone, start) || d.day === localDayOf(d.zone, last))
  if (overriding.length > 0) {
    const first = overriding[0]!
    const sameDay = overriding.filter((d) => d.day === first.day)
    return {
      code: "date_override",
      detail: `On ${formatDay(first.day)} the hours are ${hoursText(sameDay)} (${first.zone}), replacing the ` +
        `weekly hours; ${span(first.zone, start, end)} is outside them.`
    }
  }
  const day = localDayOf(zone, start)
  const hours = governingRules(rules, start, start).filter((g) => g.day === day && g.zone === zone)
  return {
    code: "outside_hours",
    detail: hours.length === 0
      ? `There are no working hours on ${formatDay(day)} (${zone}); ${span(zone, start, end)} is outside them.`
      : `On ${formatDay(day)} the working hours are ${hoursText(hours)} (${zone}); ${span(zone, start, end)} ` +
        `is outside them.`
  }
}

const minutesText = (ms: number): string => {
  const minutes = Math.round(ms / MINUTE)
  if (minutes % 1440 === 0 && minutes >= 1440) return `${minutes / 1440} day${minutes === 1440 ? "" : "s"}`
  return `${minutes} minute${minutes === 1 ? "" : "s"}`
}

/** Every reason `start` is not bookable on `schedule`, one per failed check; empty when it is. */
export const checkStart = (input: {
  readonly policy: SlotPolicy
  readonly schedule: StaffSchedule
  readonly start: number
  readonly now: number
}): Array<Reason> => {
  const { policy, schedule, start, now } = input
  const end = start + policy.duration
  const rules = prepareRules(schedule.rules, schedule.busy)
  const zone = displayZone(rules)
  const reasons: Array<Reason> = []

  if (!withinWindow(rules, start, end)) reasons.push(windowReason(rules, start, end, zone))

  const { start: occStart, end: occEnd } = occupiedRange(policy, start)
  const conflicting = schedule.occupancy
    .filter((o) => conflicts(policy, o, start, occStart, occEnd))
    .sort((a, b) => a.start - b.start || byOccupiedStart(a, b))
  for (const o of conflicting) {
    const when = span(zone, o.start, o.end)
    if (o.kind === "hold") {
      reasons.push({ code: "held", detail: `Hold ${o.id} reserves ${when} (${zone}).`, hold_id: o.id })
    } else if (o.start < end && start < o.end) {
      reasons.push({ code: "booking_overlap", detail: `Booking ${o.id} is booked ${when} (${zone}).`, booking_id: o.id })
    } else {
      reasons.push({
        code: "buffer_overlap",
        detail: `Booking ${o.id} (${when}, ${zone}) and this slot are too close with their buffers ` +
          `(${span(zone, o.occupied_start, o.occupied_end)} is taken, this slot needs ${span(zone, occStart, occEnd)}).`,
        booking_id: o.id
      })
    }
  }

  const taken = seatsByStart(policy, schedule.occupancy)?.get(start) ?? 0
  if (policy.capacity > 1) {
    if (taken >= policy.capacity) {
      reasons.push({
        code: "capacity_full",
        detail: `All ${policy.capacity} seats at ${formatLocal(zone, start)} (${zone}) are taken.`
      })
    }
  }

  const notice = noticeBounds(policy, now)
  if (start < notice.earliest) {
    const earliest = `the earliest start now is ${formatLocal(zone, notice.earliest)} (${zone}).`
    reasons.push({
      code: "min_notice",
      detail: start < now
        ? `${formatLocal(zone, start)} (${zone}) is in the past: ${earliest}`
        : `Bookings need ${minutesText(policy.min_notice)} notice: ${earliest}`
    })
  }
  if (start > notice.latest) {
    reasons.push({
      code: "max_advance",
      detail: `Bookings open at most ${minutesText(policy.max_advance)} ahead: the latest start now is ` +
        `${formatLocal(zone, notice.latest)} (${zone}).`
    })
  }
  return reasons
}

/** How far from a refused start alternatives are looked for, in days. */
const WIDEST_RADIUS = 31
/** Search radii around a refused start, in days, widened until enough slots are found. */
const RADII = [1, 7, WIDEST_RADIUS] as const

export const ALTERNATIVES_RANGE = WIDEST_RADIUS * DAY

/**
 * Up to `count` starts nearest to `start` (itself excluded), in start order, for every refusal
 * (one staff member or a team): `within(range)` gives the free starts of a range, asked for
 * ranges ever wider around `start` until `count` are found.
 */
export const nearestStarts = <S extends { readonly start: number }>(
  start: number,
  count: number,
  within: (range: { readonly start: number; readonly end: number }) => ReadonlyArray<S>
): Array<S> => {
  if (count <= 0) return []
  let found: Array<S> = []
  for (const radius of RADII) {
    const range = { start: start - radius * DAY, end: start + radius * DAY + 1 }
    // Every start within `radius` is known, so once `count` are found the nearest are among them.
    found = within(range)
      .filter((s) => s.start !== start)
      .sort((a, b) => Math.abs(a.start - start) - Math.abs(b.start - start) || a.start - b.start)
      .slice(0, count)
    if (found.length >= count) break
  }
  return found.sort((a, b) => a.start - b.start)
}

/** Up to `count` bookable starts of one staff member nearest to `start` (itself excluded), in start order. */
export const nearestSlots = (input: {
  readonly policy: SlotPolicy
  readonly schedule: StaffSchedule
  readonly start: number
  readonly now: number
  readonly count: number
}): Array<SlotCandidate> => {
  const { policy, schedule, now } = input
  return nearestStarts(input.start, input.count, (range) => computeSlots({ policy, schedules: [schedule], range, now }))
}
