/**
 * Recurring booking figures, printed (never asserted in tests). Run: `npx tsx bench/series.ts`.
 *
 * A 52-occurrence weekly series booked through the Promise facade on a SQLite file (every
 * occurrence checked, written with its reminders and its `booking.created`, one transaction),
 * next to a single `bookings.create` on the same file as the baseline. The two run
 * interleaved in rounds (the order turning each round) and each figure is a median over
 * rounds; the ratio is the median of the rounds' own ratios. The target: the series in
 * under 50 ms. Imports the source through tsx (no build step).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createScheduling } from "../index.js"
import { DAY, HALF_HOUR, iso, MONDAY } from "./fixtures.js"
import { interleaved, median } from "./rounds.js"

const ROUNDS = Number(process.env.ROUNDS ?? 40)
const OCCURRENCES = 52

const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-series-"))
const s = await createScheduling({ storage: { sqlite: join(dir, "series.db") } })

/** Staff with every weekday 08:00–18:00 UTC: 20 half-hours × 5 weekdays of distinct weekly series each. */
const staffIds: Array<string> = []
// The first takes the singles, the second the warm-up, the others the timed series.
for (let i = 0; i < 2 + Math.ceil(ROUNDS / 100); i++) {
  const member = await s.staff.create({ name: `Staff ${i}`, time_zone: "UTC" })
  await s.availability.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "08:00", end_time: "18:00" })
  staffIds.push(member.id)
}
const service = await s.services.create({
  name: "Lesson",
  duration_minutes: 30,
  staff_ids: staffIds,
  max_advance_days: 400,
  max_occurrences: OCCURRENCES
})
const client = await s.clients.create({ name: "Bench client" })

/** Weekday `k % 5`, half-hour `k / 5` of the first week: a start whose weekly series is free. */
const weeklyStart = (k: number) => MONDAY + (k % 5) * DAY + 8 * 3_600_000 + Math.floor(k / 5) % 20 * HALF_HOUR

let series = 0
const bookSeries = async () => {
  const k = series++
  const made = await s.bookingSeries.create({
    service_id: service.id,
    staff_id: staffIds[2 + Math.floor(k / 100)]!,
    client_id: client.id,
    start: iso(weeklyStart(k % 100)),
    recurrence: { rule: `FREQ=WEEKLY;COUNT=${OCCURRENCES}`, time_zone: "UTC" }
  })
  if (made.occurrences.length !== OCCURRENCES) throw new Error(`booked ${made.occurrences.length} occurrences`)
}

let singles = 0
/** Singles on the first staff member, on distinct half-hours of the year's weekdays. */
const bookSingle = async () => {
  const k = singles++
  const start = MONDAY + (Math.floor(k / 20) % 5 + 7 * Math.floor(k / 100)) * DAY + 8 * 3_600_000 + (k % 20) * HALF_HOUR
  await s.bookings.create({ service_id: service.id, staff_id: staffIds[0]!, client_id: client.id, start: iso(start) })
}

// Warm-up: the first calls compile and fill caches.
for (let i = 0; i < 3; i++) {
  await bookSingle()
}
await s.bookingSeries.create({
  service_id: service.id,
  staff_id: staffIds[1]!,
  client_id: client.id,
  start: iso(MONDAY + 8 * 3_600_000),
  recurrence: { rule: "FREQ=WEEKLY;COUNT=2", time_zone: "UTC" }
})

const [seriesTimes, singleTimes] = await interleaved([bookSeries, bookSingle], ROUNDS)
const ratios = seriesTimes!.map((t, i) => t / singleTimes![i]!)
const [load1] = loadavg()
console.log(`series of ${OCCURRENCES} weekly occurrences, SQLite file, ${ROUNDS} rounds (load average ${load1!.toFixed(2)})`)
console.log(`  series create:  median ${median(seriesTimes!).toFixed(1)} ms  (min ${Math.min(...seriesTimes!).toFixed(1)} ms)`)
console.log(`  single create:  median ${median(singleTimes!).toFixed(2)} ms  (min ${Math.min(...singleTimes!).toFixed(2)} ms)`)
console.log(
  `  ratio series / single: ${median(ratios).toFixed(1)}× (${(median(ratios) / OCCURRENCES).toFixed(2)}× a single per occurrence)`
)
console.log(`  target: series under 50 ms: ${median(seriesTimes!) < 50 ? "met" : "NOT met"}`)

await s.close()
rmSync(dir, { recursive: true, force: true })
