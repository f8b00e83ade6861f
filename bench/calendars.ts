/**
 * External calendar figures, printed (never asserted in tests). Run: `npx tsx bench/calendars.ts`.
 *
 * 1. `availability.slots` on SQLite for 50 staff × 31 days, each staff member with a synced
 *    calendar of 500 busy occurrences in the month (440 single events, 15 weekly series of 4),
 *    next to the same team without calendars; timed in interleaved rounds, medians.
 * 2. Syncing one 2 MB feed (~7,500 events in Europe/Berlin with its VTIMEZONE, a tenth of
 *    them weekly series) on SQLite: parsing alone, the first sync (fetch over 127.0.0.1,
 *    parse, store every busy range), and a sync of the same feed again (nothing to write).
 */
import * as http from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { parseBusy } from "../adapters/calendars/parse.js"
import { createScheduling } from "../index.js"
import { bigFeed, calendar, stamp, vevent } from "./calendarFeeds.js"
import { DAY, HALF_HOUR, iso, MONDAY, team } from "./fixtures.js"
import { interleaved, median } from "./rounds.js"

const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-calendars-"))
const HOUR = 3_600_000

const feeds = new Map<string, string>()
const server = http.createServer((req, res) => {
  const body = feeds.get(req.url ?? "")
  if (body === undefined) return void res.writeHead(404).end()
  res.writeHead(200, { "content-type": "text/calendar" }).end(body)
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

/** 440 single half-hour events on weekday working hours and 15 weekly series of 4: 500 occurrences, for staff member `n`. */
const staffFeed = (n: number) => {
  const events: Array<string> = []
  for (let i = 0; i < 440; i++) {
    const day = (i * 7 + n) % 31
    const start = MONDAY + day * DAY + 8 * HOUR + ((i * 3 + n) % 20) * HALF_HOUR
    events.push(vevent(`s${n}-${i}`, [`DTSTART:${stamp(start)}`, `DTEND:${stamp(start + HALF_HOUR)}`]))
  }
  for (let i = 0; i < 15; i++) {
    const start = MONDAY + (i % 5) * DAY + (8 + (i % 10)) * HOUR
    events.push(vevent(`r${n}-${i}`, [`DTSTART:${stamp(start)}`, `DTEND:${stamp(start + HALF_HOUR / 2)}`, "RRULE:FREQ=WEEKLY;COUNT=4"]))
  }
  return calendar(events)
}

const s = await createScheduling({ storage: { sqlite: join(dir, "calendars.db") }, calendarSync: false, allowPrivateAddresses: true })
const plain = await createScheduling({ storage: { sqlite: join(dir, "plain.db") }, calendarSync: false })

/** Asks for a sync (answered at once) and reads the calendar until the sync has ended. */
const syncAndWait = async (staffId: string, calendarId: string) => {
  let calendar = await s.calendars.sync(staffId, calendarId)
  while (calendar.sync_state !== "idle") {
    await new Promise((resolve) => setTimeout(resolve, 5))
    calendar = await s.calendars.get(staffId, calendarId)
  }
  return calendar
}

console.log("Slots with external calendars (SQLite, 50 staff × 31 days)")
const busyTeam = await team(s, 50)
const plainTeam = await team(plain, 50)
let occurrences = 0
for (let n = 0; n < 50; n++) {
  feeds.set(`/staff-${n}.ics`, staffFeed(n))
  const created = await s.calendars.create(busyTeam.staffIds[n]!, { url: `${base}/staff-${n}.ics` })
  const synced = await syncAndWait(busyTeam.staffIds[n]!, created.id)
  if (synced.status !== "synced") throw new Error(`sync failed: ${synced.last_error}`)
  occurrences += synced.event_count
}
console.log(`  ${occurrences} busy occurrences in all (${Math.round(occurrences / 50)} per staff member)`)
const query = (serviceId: string) => ({ service_id: serviceId, start: iso(MONDAY), end: iso(MONDAY + 31 * DAY) })
const counts = [
  (await s.availability.slots(query(busyTeam.serviceId))).data.length,
  (await plain.availability.slots(query(plainTeam.serviceId))).data.length
]
const [withCalendars, without] = await interleaved([
  () => s.availability.slots(query(busyTeam.serviceId)),
  () => plain.availability.slots(query(plainTeam.serviceId))
], 15)
console.log(
  `  with calendars     ${String(counts[0]).padStart(6)} slots  median ${
    median(withCalendars!).toFixed(2).padStart(7)
  } ms  (target < 25 ms)`
)
console.log(`  without calendars  ${String(counts[1]).padStart(6)} slots  median ${median(without!).toFixed(2).padStart(7)} ms`)

console.log("Syncing a 2 MB feed (SQLite)")
const big = bigFeed()
feeds.set("/big.ics", big.text)
const window = { start: MONDAY - DAY, end: MONDAY + 400 * DAY }
const parseTimes: Array<number> = []
let parsed = 0
for (let i = 0; i < 5; i++) {
  const t0 = performance.now()
  parsed = parseBusy(big.text, { zone: "Europe/Berlin", window }).length
  parseTimes.push(performance.now() - t0)
}
console.log(`  feed: ${(big.text.length / 1024 / 1024).toFixed(2)} MB, ${big.events} events, ${parsed} busy occurrences`)
console.log(`  parse and expand   median ${median(parseTimes).toFixed(0).padStart(5)} ms`)
const member = await s.staff.create({ name: "Big calendar", time_zone: "Europe/Berlin" })
const bigCalendar = await s.calendars.create(member.id, { url: `${base}/big.ics` })
let t0 = performance.now()
const first = await syncAndWait(member.id, bigCalendar.id)
const firstMs = performance.now() - t0
if (first.status !== "synced") throw new Error(`sync failed: ${first.last_error}`)
console.log(`  first sync         ${firstMs.toFixed(0).padStart(12)} ms  (fetch, parse, store; target < 1000 ms)`)
const again: Array<number> = []
for (let i = 0; i < 3; i++) {
  t0 = performance.now()
  await syncAndWait(member.id, bigCalendar.id)
  again.push(performance.now() - t0)
}
console.log(`  sync, unchanged    median ${median(again).toFixed(0).padStart(5)} ms`)

await s.close()
await plain.close()
server.close()
rmSync(dir, { recursive: true, force: true })
