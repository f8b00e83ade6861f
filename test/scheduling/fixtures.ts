/** Schedules, policies and occupancies for the pure scheduling tests, in Berlin wall-clock time. */
import type { AvailabilityRule } from "../../src/availability/rule.js"
import type { Reason } from "../../src/domain/slot.js"
import {
  computeSlots,
  type Interval,
  localToUtc,
  type Occupancy,
  type SlotCandidate,
  type SlotPolicy,
  type StaffSchedule
} from "../../src/scheduling/index.js"
export const MIN = 60_000
export const HOUR = 3_600_000
export const DAY = 86_400_000
export const ZONE = "Europe/Berlin"

/** Berlin wall clock in June 2026 (UTC+2): `at("01 09:30")` is 2026-06-01 09:30 local. 06-01 is a Monday. */
export const at = (text: string) => {
  const [day, time] = text.split(" ") as [string, string]
  const [h, m] = time.split(":").map(Number) as [number, number]
  return localToUtc(ZONE, `2026-06-${day}`, h * 60 + m)
}
/** Local `HH:MM` of an instant in June in Berlin. */
export const hm = (ms: number) => new Date(ms + 2 * HOUR).toISOString().slice(11, 16)
export const dhm = (ms: number) => new Date(ms + 2 * HOUR).toISOString().slice(8, 16).replace("T", " ")
export const mdhm = (ms: number) => new Date(ms + 2 * HOUR).toISOString().slice(5, 16).replace("T", " ")

export const meta = {
  object: "availability" as const,
  staff_id: "stf_1",
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  metadata: {}
}
let counter = 0
export const weekly = (
  weekdays: Array<number>,
  start: string,
  end: string,
  zone = ZONE,
  from: string | null = null,
  until: string | null = null
): AvailabilityRule => ({
  ...meta,
  id: `avl_w${counter++}`,
  type: "weekly",
  time_zone: zone,
  weekdays,
  start_time: start,
  end_time: end,
  valid_from: from,
  valid_until: until
})
export const dated = (date: string, start: string, end: string, zone = ZONE): AvailabilityRule => ({
  ...meta,
  id: `avl_d${counter++}`,
  type: "date",
  time_zone: zone,
  date,
  start_time: start,
  end_time: end
})
export const blocked = (id: string, start: number, end: number): AvailabilityRule => ({
  ...meta,
  id,
  type: "blocked",
  time_zone: ZONE,
  start: new Date(start).toISOString(),
  end: new Date(end).toISOString()
})

export const policy = (over: Partial<SlotPolicy> = {}): SlotPolicy => ({
  service_id: "svc_1",
  duration: 30 * MIN,
  buffer_before: 0,
  buffer_after: 0,
  interval: 30 * MIN,
  capacity: 1,
  min_notice: 0,
  max_advance: 60 * DAY,
  ...over
})
export const booking = (id: string, start: number, minutes: number, over: Partial<Occupancy> = {}): Occupancy => ({
  kind: "booking",
  id,
  service_id: "svc_1",
  start,
  end: start + minutes * MIN,
  occupied_start: start,
  occupied_end: start + minutes * MIN,
  ...over
})
export const withBuffers = (o: Occupancy, before: number, after: number): Occupancy => ({
  ...o,
  occupied_start: o.start - before * MIN,
  occupied_end: o.end + after * MIN
})
export const hold = (id: string, start: number, minutes: number, over: Partial<Occupancy> = {}): Occupancy =>
  booking(id, start, minutes, { kind: "hold", ...over })

export const WEEKDAYS_9_12 = weekly([1, 2, 3, 4, 5], "09:00", "12:00")
export const staff = (rules: Array<AvailabilityRule>, occupancy: Array<Occupancy> = [], staff_id = "stf_1"): StaffSchedule => ({
  staff_id,
  rules,
  occupancy
})

export const NOW = at("01 00:00") - 7 * DAY
export const MONDAY = { start: at("01 00:00"), end: at("02 00:00") }
export const slotsOn = (schedule: StaffSchedule, p: SlotPolicy = policy(), range: Interval = MONDAY, now = NOW) =>
  computeSlots({ policy: p, schedules: [schedule], range, now })
export const starts = (slots: ReadonlyArray<SlotCandidate>) => slots.map((s) => hm(s.start))
export const codes = (reasons: ReadonlyArray<Reason>) => reasons.map((r) => r.code)
