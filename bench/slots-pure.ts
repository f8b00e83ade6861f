/**
 * Pure slot computation benchmark: prints the median ms of `computeSlots` for growing
 * staff counts, day ranges and booking counts, so linear growth is visible. The cases run
 * interleaved in rounds (bench/rounds.ts) and each figure is a median over rounds.
 * Run: npx tsx bench/slots-pure.ts
 */
import type { AvailabilityRule } from "../src/availability/rule.js"
import { computeSlots } from "../src/scheduling/slots.js"
import { interleaved } from "./rounds.js"
import type { Occupancy, SlotPolicy, StaffSchedule } from "../src/scheduling/types.js"

const MIN = 60_000
const DAY = 86_400_000
const ZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"] as const

// Deterministic PRNG (mulberry32), so every run measures the same data.
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const meta = { created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z", metadata: {} }
const weekly = (
  id: string,
  staff: string,
  zone: string,
  weekdays: Array<number>,
  start: string,
  end: string
): AvailabilityRule =>
  ({
    id,
    object: "availability",
    staff_id: staff,
    type: "weekly",
    time_zone: zone,
    weekdays,
    start_time: start,
    end_time: end,
    valid_from: null,
    valid_until: null,
    ...meta
  }) as AvailabilityRule

const policy: SlotPolicy = {
  service_id: "svc_1",
  duration: 30 * MIN,
  buffer_before: 5 * MIN,
  buffer_after: 10 * MIN,
  interval: 30 * MIN,
  capacity: 1,
  min_notice: 60 * MIN,
  max_advance: 120 * DAY
}

const START = Date.parse("2026-03-01T00:00:00Z")
const NOW = START - DAY

const makeSchedules = (staff: number, days: number, bookingsPerStaff: number): Array<StaffSchedule> => {
  const random = rng(staff * 1_000_003 + days * 31 + bookingsPerStaff)
  const out: Array<StaffSchedule> = []
  for (let i = 0; i < staff; i++) {
    const id = `stf_${i}`
    const zone = ZONES[i % ZONES.length]!
    const rules = i % 2 === 0
      ? [weekly(`avl_${i}a`, id, zone, [1, 2, 3, 4, 5], "09:00", "17:00")]
      : [weekly(`avl_${i}a`, id, zone, [1, 2, 3], "08:00", "12:00"), weekly(`avl_${i}b`, id, zone, [4, 5, 6], "13:00", "20:00")]
    const occupancy: Array<Occupancy> = []
    for (let b = 0; b < bookingsPerStaff; b++) {
      const start = START + Math.floor(random() * days * 96) * 15 * MIN
      const end = start + 30 * MIN
      occupancy.push({
        kind: b % 10 === 0 ? "hold" : "booking",
        id: `bkg_${i}_${b}`,
        service_id: "svc_1",
        start,
        end,
        occupied_start: start - 5 * MIN,
        occupied_end: end + 10 * MIN
      })
    }
    out.push({ staff_id: id, rules, occupancy })
  }
  return out
}

interface Case {
  readonly label: string
  readonly staff: number
  readonly days: number
  readonly bookingsPerStaff: number
}

const cases: ReadonlyArray<Case> = [
  { label: "1 staff x 31 days", staff: 1, days: 31, bookingsPerStaff: 100 },
  { label: "50 staff x 31 days x 5,000 bookings", staff: 50, days: 31, bookingsPerStaff: 100 },
  { label: "2x staff (100 staff, 10,000 bookings)", staff: 100, days: 31, bookingsPerStaff: 100 },
  { label: "2x days (62 days, 5,000 bookings)", staff: 50, days: 62, bookingsPerStaff: 100 },
  { label: "2x bookings (50 staff, 10,000 bookings)", staff: 50, days: 31, bookingsPerStaff: 200 }
]

const runs = cases.map((c) => {
  const schedules = makeSchedules(c.staff, c.days, c.bookingsPerStaff)
  const range = { start: START, end: START + c.days * DAY }
  return () => computeSlots({ policy, schedules, range, now: NOW })
})
const counts = runs.map((run) => {
  for (let i = 0; i < 30; i++) run() // warm-up (JIT, zone caches)
  return run().length
})
const times = await interleaved(runs, 100)
const medians = cases.map((c, i) => {
  const sorted = [...times[i]!].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  const p90 = sorted[Math.floor(sorted.length * 0.9)]!
  console.log(
    `${c.label.padEnd(44)} ${String(c.staff).padStart(4)} staff ${String(c.days).padStart(3)} days ` +
      `${String(c.staff * c.bookingsPerStaff).padStart(6)} bookings ${String(counts[i]).padStart(6)} slots  ` +
      `median ${median.toFixed(2).padStart(6)} ms  p90 ${p90.toFixed(2).padStart(6)} ms`
  )
  return median
})
const growth = (i: number) => `${(medians[i]! / medians[1]!).toFixed(2)}× the time for ${(counts[i]! / counts[1]!).toFixed(2)}× the slots`
console.log(`growth: 2x staff ${growth(2)}; 2x days ${growth(3)}; 2x bookings ${growth(4)}`)
