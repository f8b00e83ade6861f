/**
 * Assignment benchmark (docs/api.md §11):
 * 1. fairness: 1,000 round-robin bookings over 5 equally free members, per policy (memory
 *    sandbox), printing each member's count and max/min (weighted: against the weights);
 * 2. slots: a 10-member round-robin service over 31 days with 5,000 bookings (SQLite file),
 *    median ms, next to a `chosen` service over the same members and bookings in the same
 *    rounds (bench/rounds.ts), with the ratio;
 * 3. refusals over the same data: a start outside everyone's hours, answered with the three
 *    nearest free starts (searched up to 31 days away), round robin next to one member.
 * Run: npx tsx bench/assignment.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createScheduling, createTestScheduling } from "../index.js"
import { interleaved, median } from "./rounds.js"

const MINUTE = 60_000
const DAY = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
const load = () => loadavg().map((x) => x.toFixed(2)).join(", ")

const fairness = async (policy: "least_recently_booked" | "fewest_upcoming" | "weighted", weights: ReadonlyArray<number>) => {
  const s = await createTestScheduling({ now: "2027-03-26T08:00:00Z" })
  const staffIds: Array<string> = []
  for (let i = 0; i < 5; i++) {
    const member = await s.staff.create({ name: `M${i}`, time_zone: "UTC" })
    await s.availability.create({
      staff_id: member.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      start_time: "00:00",
      end_time: "24:00"
    })
    staffIds.push(member.id)
  }
  const service = await s.services.create({
    name: "Call",
    duration_minutes: 15,
    staff_ids: staffIds,
    assignment: "round_robin",
    round_robin_policy: policy,
    ...(policy === "weighted" ? { staff_weights: Object.fromEntries(staffIds.map((id, i) => [id, weights[i]!])) } : {})
  })
  const client = await s.clients.create({ name: "Bo" })
  const first = Date.parse("2027-03-27T00:00:00Z")
  const counts = new Map(staffIds.map((id) => [id, 0]))
  for (let i = 0; i < 1000; i++) {
    const booking = await s.bookings.create({ service_id: service.id, client_id: client.id, start: iso(first + i * 15 * MINUTE) })
    counts.set(booking.staff_id, counts.get(booking.staff_id)! + 1)
  }
  await s.close()
  const values = staffIds.map((id) => counts.get(id)!)
  const total = weights.reduce((a, b) => a + b, 0)
  const detail = policy === "weighted"
    ? `expected ${weights.map((w) => Math.round((1000 * w) / total)).join("/")}, worst deviation ${
      Math.max(...values.map((v, i) => Math.abs(v - (1000 * weights[i]!) / total) / ((1000 * weights[i]!) / total))) * 100
    }%`.replace(/(\.\d)\d+%/, "$1%")
    : `max/min ${(Math.max(...values) / Math.min(...values)).toFixed(3)}`
  console.log(`  ${policy.padEnd(22)} ${values.join(" / ").padEnd(24)} ${detail}   (load ${load()})`)
}

console.log("Assignment benchmark\n")
console.log("Fairness: 1,000 round-robin bookings over 5 equally free members (memory sandbox)")
await fairness("least_recently_booked", [50, 50, 50, 50, 50])
await fairness("fewest_upcoming", [50, 50, 50, 50, 50])
await fairness("weighted", [10, 20, 30, 40, 100])

console.log("\nSlots: 10 members, 31 days, 5,000 bookings (SQLite file, WAL)")
const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-assignment-"))
const s = await createScheduling({ storage: { sqlite: join(dir, "team.db") } })
const staffIds: Array<string> = []
for (let i = 0; i < 10; i++) {
  const member = await s.staff.create({ name: `Staff ${i}`, time_zone: "UTC" })
  await s.availability.create({
    staff_id: member.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "08:00",
    end_time: "18:00"
  })
  staffIds.push(member.id)
}
const base = { duration_minutes: 30, staff_ids: staffIds, max_advance_days: 400 }
const chosen = await s.services.create({ name: "Chosen", ...base })
const roundRobin = await s.services.create({ name: "Round robin", ...base, assignment: "round_robin" })
const client = await s.clients.create({ name: "Bench client" })
const MONDAY = Date.parse("2027-03-29T00:00:00Z")
// 500 per member over 31 days × 20 half-hours (620 each): member i % 10, in turn.
for (let i = 0; i < 5000; i++) {
  const member = i % 10
  const n = Math.floor(i / 10)
  const start = MONDAY + (n % 31) * DAY + 8 * 3_600_000 + ((Math.floor(n / 31) * 7 + member) % 20) * 30 * MINUTE
  await s.bookings.create({ service_id: chosen.id, staff_id: staffIds[member]!, client_id: client.id, start: iso(start) })
}
const range = { start: iso(MONDAY), end: iso(MONDAY + 31 * DAY) }
const lists = [
  () => s.availability.slots({ service_id: chosen.id, ...range }),
  () => s.availability.slots({ service_id: roundRobin.id, ...range })
]
const counts: Array<number> = []
for (const list of lists) {
  for (let i = 0; i < 5; i++) await list()
  counts.push((await list()).data.length)
}
const times = await interleaved(lists, 41)
const [chosenMs, roundRobinMs] = times.map(median) as [number, number]
console.log(`  chosen (baseline)      ${String(counts[0]).padStart(6)} slots  median ${chosenMs.toFixed(2).padStart(7)} ms`)
console.log(
  `  round_robin            ${String(counts[1]).padStart(6)} starts median ${roundRobinMs.toFixed(2).padStart(7)} ms  (${
    (roundRobinMs / chosenMs).toFixed(2)
  }× chosen)`
)
console.log(`  load average ${load()}`)

console.log("\nRefusals: a start outside everyone's hours, with the nearest free starts (same file)")
const outside = iso(MONDAY + 14 * DAY + 3 * 3_600_000)
const refusal = (request: { readonly service_id: string; readonly staff_id?: string }) => () =>
  s.bookings.create({ client_id: client.id, start: outside, ...request }).then(
    () => Promise.reject(new Error("a start outside the hours was booked")),
    (error: { alternatives?: ReadonlyArray<unknown> }) => error.alternatives?.length ?? 0
  )
const refusals = [refusal({ service_id: chosen.id, staff_id: staffIds[0]! }), refusal({ service_id: roundRobin.id })]
const offered: Array<unknown> = []
for (const refuse of refusals) {
  for (let i = 0; i < 5; i++) await refuse()
  offered.push(await refuse())
}
const [oneMs, teamMs] = (await interleaved(refusals, 41)).map(median) as [number, number]
console.log(`  one member             ${offered[0]} alternatives  median ${oneMs.toFixed(2).padStart(7)} ms`)
console.log(
  `  round_robin, 10        ${offered[1]} alternatives  median ${teamMs.toFixed(2).padStart(7)} ms  (${
    (teamMs / oneMs).toFixed(2)
  }× one member)`
)
console.log(`  load average ${load()}`)
await s.close()
rmSync(dir, { recursive: true, force: true })
