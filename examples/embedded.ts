/**
 * Slotwise embedded in a Node app, end to end: a salon sets up a stylist, her hours (weekdays
 * 09:00–18:00, weekends 10:00–14:00) and a service on a SQLite file, a client books the first
 * free slot, pays a deposit, reschedules, and the app reacts to events.
 * Run: `npx tsx examples/embedded.ts [database-file]`. It prints each step, then where the
 * data is and which account it belongs to.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createScheduling, SlotUnavailableError } from "../index.js"

const file = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), "slotwise-example-")), "salon.db")
const s = await createScheduling({ storage: { sqlite: file } })
// An embedded instance acts for one built-in account's sandbox unless told otherwise
// (s.tenant({ account_id, environment }) acts for another, e.g. one from `slotwise accounts list`).
console.log(`on SQLite ${file}, for account ${s.currentTenant.account_id} (${s.currentTenant.environment})`)
const log: Array<string> = []
const off = s.events.subscribe((event) => log.push(`${event.type} ${(event.data.object as { id: string }).id}`))

const ana = await s.staff.create({ name: "Ana Sousa", email: "ana@salon.example", time_zone: "Europe/Lisbon" })
await s.availability.create({ staff_id: ana.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "09:00", end_time: "18:00" })
await s.availability.create({ staff_id: ana.id, type: "weekly", weekdays: [6, 7], start_time: "10:00", end_time: "14:00" })
const cut = await s.services.create({
  name: "Haircut",
  duration_minutes: 45,
  buffer_after_minutes: 15,
  slot_interval_minutes: 30,
  min_notice_minutes: 120,
  price: { amount: 3500, currency: "EUR" },
  staff_ids: [ana.id]
})

// The client sees the coming week's free slots, grouped by their own days: seven whole days
// from tomorrow 00:00 UTC, so the same list comes out whatever the day and hour this runs.
const DAY = 86_400_000
const from = (Math.floor(Date.now() / DAY) + 1) * DAY
const slots = await s.availability.slots({
  service_id: cut.id,
  start: new Date(from).toISOString(),
  end: new Date(from + 7 * DAY).toISOString(),
  time_zone: "Europe/Lisbon"
})
console.log(`${slots.data.length} free slots over ${slots.days?.length ?? 0} days; first ${slots.data[0]?.start}`)

const first = slots.data[0]!
const booking = await s.bookings.create({
  service_id: cut.id,
  staff_id: first.staff_id,
  start: first.start,
  client: { name: "Rui Costa", email: "rui@example.com", phone: "+351 912 345 678" },
  notes: "Short on the sides"
})
console.log(`booked ${booking.id} ${booking.start}–${booking.end} (${booking.status})`)

// Someone else tries the same slot and is offered the nearest alternatives.
try {
  await s.bookings.create({ service_id: cut.id, staff_id: ana.id, start: first.start, client: { name: "Late Comer" } })
} catch (error) {
  if (!(error instanceof SlotUnavailableError)) throw error
  console.log(`${error.code}: try ${error.alternatives?.map((slot) => slot.start).join(", ")}`)
}

const { booking: paid } = await s.bookings.recordPayment(booking.id, { amount: { amount: 1000, currency: "EUR" }, reference: "deposit-42" })
console.log(`paid ${paid.amount_paid?.amount} of ${paid.price?.amount} → ${paid.payment_status}`)

const later = slots.data[5]!
const moved = await s.bookings.reschedule(booking.id, { start: later.start })
console.log(`rescheduled from ${moved.rescheduled_from} to ${moved.start}`)

const page = await s.bookings.list({ status: "confirmed", limit: 10 })
console.log(`${page.data.length} confirmed booking(s); events seen:\n  ${log.join("\n  ")}`)
off()
await s.close()
console.log(`the data stays in ${file}, under account ${s.currentTenant.account_id}, the embedded instance's built-in account`)
console.log(`(it has no API keys; accounts with keys: npx slotwise accounts list --database ${file})`)
