/**
 * Issue 2's figures, printed (never asserted in tests). Run: `npx tsx bench/core.ts`.
 *
 * 1. Booking creations per second through the library on a SQLite file (every check, the
 *    event and the transaction included), next to a raw better-sqlite3 baseline measured in
 *    the same run: one BEGIN IMMEDIATE / INSERT / COMMIT per booking row, same pragmas.
 * 2. `availability.slots` end to end on SQLite (load rules, bookings, compute, format) for
 *    1 staff × 31 days, and 50 staff × 31 days with 5,000 bookings, plus each dimension
 *    doubled to show the cost grows linearly.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { createScheduling, type SchedulingClient } from "../index.js"

const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-"))
const DAY = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
/** Monday 00:00 UTC a week or more ahead, so every slot is in the future. */
const MONDAY = (() => {
  const d = new Date(Date.now() + 7 * DAY)
  d.setUTCHours(0, 0, 0, 0)
  return d.getTime() + ((8 - (d.getUTCDay() || 7)) % 7) * DAY
})()

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Staff with Monday–Friday 08:00–18:00 UTC hours, one service they all deliver. */
const team = async (s: SchedulingClient, size: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < size; i++) {
    const member = await s.staff.create({ name: `Staff ${i}`, time_zone: "UTC" })
    await s.availability.create({ staff_id: member.id, type: "weekly", weekdays: [1, 2, 3, 4, 5], start_time: "08:00", end_time: "18:00" })
    ids.push(member.id)
  }
  const service = await s.services.create({ name: "Meeting", duration_minutes: 30, staff_ids: ids, max_advance_days: 400 })
  const client = await s.clients.create({ name: "Bench client" })
  return { staffIds: ids, serviceId: service.id, clientId: client.id }
}

/** Distinct weekday half-hours: staff member `i % staff`, spread over `days` days. */
const slotStart = (i: number, staff: number, days: number) => {
  const round = Math.floor(i / staff)
  const weekday = round % Math.floor(days * 5 / 7)
  const week = Math.floor(weekday / 5)
  const dayInWeek = weekday % 5
  const halfHour = Math.floor(round / Math.floor(days * 5 / 7)) % 20
  return MONDAY + (week * 7 + dayInWeek) * DAY + 8 * 3_600_000 + halfHour * 1_800_000
}

const benchCreates = async (count: number) => {
  const s = await createScheduling({ storage: { sqlite: join(dir, "creates.db") } })
  const { clientId, serviceId, staffIds } = await team(s, 10)
  // Warm up the prepared statements and the JIT.
  for (let i = 0; i < 200; i++) {
    await s.bookings.create({ service_id: serviceId, staff_id: staffIds[i % 10]!, client_id: clientId, start: iso(slotStart(i, 10, 56)) })
  }
  const t0 = performance.now()
  for (let i = 200; i < 200 + count; i++) {
    await s.bookings.create({ service_id: serviceId, staff_id: staffIds[i % 10]!, client_id: clientId, start: iso(slotStart(i, 10, 56)) })
  }
  const ours = count / ((performance.now() - t0) / 1000)
  await s.close()

  const db = new Database(join(dir, "baseline.db"))
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("busy_timeout = 5000")
  db.exec(`CREATE TABLE bookings (account_id TEXT, environment TEXT, id TEXT, doc TEXT, staff_id TEXT, service_id TEXT,
    client_id TEXT, status TEXT, start_ms INTEGER, end_ms INTEGER, occupied_start INTEGER, occupied_end INTEGER,
    PRIMARY KEY (account_id, environment, id)) WITHOUT ROWID`)
  db.exec("CREATE INDEX bookings_staff ON bookings (account_id, environment, staff_id, id)")
  db.exec("CREATE INDEX bookings_start ON bookings (account_id, environment, start_ms, id)")
  const insert = db.prepare("INSERT INTO bookings VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const row = (i: number) => {
    const start = slotStart(i, 10, 56)
    const doc = { id: `bkg_${i}`, object: "booking", service_id: "svc", staff_id: `stf_${i % 10}`, client_id: "cli", start: iso(start), end: iso(start + 1_800_000), status: "confirmed" }
    return ["acc", "sandbox", doc.id, JSON.stringify(doc), doc.staff_id, "svc", "cli", "confirmed", start, start + 1_800_000, start, start + 1_800_000]
  }
  for (let i = 0; i < 200; i++) {
    begin.run()
    insert.run(...row(i))
    commit.run()
  }
  const t1 = performance.now()
  for (let i = 200; i < 200 + count; i++) {
    begin.run()
    insert.run(...row(i))
    commit.run()
  }
  const baseline = count / ((performance.now() - t1) / 1000)
  db.close()
  return { ours, baseline, sameWork: await benchSameWorkRaw(count) }
}

/**
 * A second baseline: raw better-sqlite3 running the statements one booking creation runs
 * (service, staff, client and rules lookups, the booking and hold overlap queries, the
 * booking insert and its outbox event, in one BEGIN IMMEDIATE), on Slotwise's own tables.
 * It separates what the contract's work costs in SQLite from what the stack adds.
 */
const benchSameWorkRaw = async (count: number) => {
  const file = join(dir, "same-work.db")
  const s = await createScheduling({ storage: { sqlite: file } })
  const { clientId, serviceId, staffIds } = await team(s, 10)
  await s.close()
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  const tenant = (db.prepare("SELECT account_id, environment FROM c_services LIMIT 1").get() as { account_id: string; environment: string })
  const t = [tenant.account_id, tenant.environment]
  const get = (table: string) => db.prepare(`SELECT doc FROM ${table} WHERE account_id = ? AND environment = ? AND id = ?`)
  const [service, staff, client] = [get("c_services"), get("c_staff"), get("c_clients")]
  const rules = db.prepare("SELECT doc FROM c_availability WHERE account_id = ? AND environment = ? AND staff_id IN (?)")
  const overlap = (table: string, extra: string) =>
    db.prepare(`SELECT id, staff_id, service_id, start_ms, end_ms, occupied_start, occupied_end FROM ${table}
      WHERE account_id = ? AND environment = ? AND staff_id IN (?) AND occupied_start < ? AND occupied_end > ? AND ${extra}`).raw(true)
  const bookingsOverlap = overlap("c_bookings", "status IN ('pending', 'confirmed')")
  const holdsOverlap = overlap("c_holds", "expires_ms > ?")
  const insertBooking = db.prepare(`INSERT INTO c_bookings (account_id, environment, id, staff_id, service_id, client_id, status,
    start_ms, end_ms, occupied_start, occupied_end, doc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
  const insertEvent = db.prepare("INSERT INTO events (account_id, environment, id, type, doc) VALUES (?,?,?,?,?)")
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const once = (i: number) => {
    const staffId = staffIds[i % 10]!
    const start = slotStart(i, 10, 56)
    begin.run()
    JSON.parse((service.get(...t, serviceId) as { doc: string }).doc)
    JSON.parse((staff.get(...t, staffId) as { doc: string }).doc)
    for (const row of rules.all(...t, staffId) as Array<{ doc: string }>) JSON.parse(row.doc)
    bookingsOverlap.all(...t, staffId, start + 1_800_000, start)
    holdsOverlap.all(...t, staffId, start + 1_800_000, start, Date.now())
    JSON.parse((client.get(...t, clientId) as { doc: string }).doc)
    const booking = {
      id: `bkg_raw${i}`, object: "booking", service_id: serviceId, staff_id: staffId, client_id: clientId,
      start: iso(start), end: iso(start + 1_800_000), status: "confirmed", notes: null, cancellation_reason: null,
      price: null, amount_paid: null, payment_status: "unpaid", rescheduled_from: null, buffer_before_minutes: 0,
      buffer_after_minutes: 0, metadata: {}, created_at: iso(Date.now()), updated_at: iso(Date.now())
    }
    const doc = JSON.stringify(booking)
    insertBooking.run(...t, booking.id, staffId, serviceId, clientId, "confirmed", start, start + 1_800_000, start, start + 1_800_000, doc)
    insertEvent.run(...t, `evt_raw${i}`, "booking.created", JSON.stringify({ id: `evt_raw${i}`, object: "event", type: "booking.created", created_at: booking.created_at, data: { object: booking } }))
    commit.run()
  }
  for (let i = 0; i < 200; i++) once(i)
  const t0 = performance.now()
  for (let i = 200; i < 200 + count; i++) once(i)
  const perSecond = count / ((performance.now() - t0) / 1000)
  db.close()
  return perSecond
}

const benchSlots = async (label: string, staff: number, days: number, bookings: number) => {
  const s = await createScheduling({ storage: { sqlite: join(dir, `slots-${staff}-${days}-${bookings}.db`) } })
  const { clientId, serviceId, staffIds } = await team(s, staff)
  for (let i = 0; i < bookings; i++) {
    await s.bookings.create({ service_id: serviceId, staff_id: staffIds[i % staff]!, client_id: clientId, start: iso(slotStart(i, staff, days)) })
  }
  const query = { service_id: serviceId, start: iso(MONDAY), end: iso(MONDAY + days * DAY) }
  let count = 0
  for (let i = 0; i < 5; i++) count = (await s.availability.slots(query)).data.length
  const times: Array<number> = []
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now()
    await s.availability.slots(query)
    times.push(performance.now() - t0)
  }
  await s.close()
  const ms = median(times)
  console.log(`  ${label.padEnd(40)} ${String(count).padStart(7)} slots  median ${ms.toFixed(2).padStart(7)} ms`)
  return ms
}

console.log("Slotwise core benchmark (SQLite file, WAL, synchronous=NORMAL)\n")
const creates = await benchCreates(3000)
console.log("Booking creation, sequential, one transaction each:")
console.log(`  slotwise bookings.create        ${creates.ours.toFixed(0).padStart(8)} /s  (checks + event + transaction)`)
console.log(`  raw better-sqlite3 insert+txn   ${creates.baseline.toFixed(0).padStart(8)} /s`)
console.log(`  ratio                           ${(creates.ours / creates.baseline).toFixed(3).padStart(8)}×  (target ≥ 0.2×)`)
console.log(`  raw better-sqlite3, same work   ${creates.sameWork.toFixed(0).padStart(8)} /s  (the create's statements, no stack)`)
console.log(`  same work vs insert baseline    ${(creates.sameWork / creates.baseline).toFixed(3).padStart(8)}×  (what SQLite alone allows)`)
console.log(`  slotwise vs same work           ${(creates.ours / creates.sameWork).toFixed(3).padStart(8)}×  (what the stack and core keep)\n`)

console.log("availability.slots end to end (load + compute + format):")
const one = await benchSlots("1 staff × 31 days", 1, 31, 0)
const base = await benchSlots("50 staff × 31 days, 5,000 bookings", 50, 31, 5000)
const staff2 = await benchSlots("100 staff × 31 days, 10,000 bookings", 100, 31, 10000)
const days2 = await benchSlots("50 staff × 62 days, 5,000 bookings", 50, 62, 5000)
const book2 = await benchSlots("50 staff × 31 days, 10,000 bookings", 50, 31, 10000)
console.log(`\n  target: 50 × 31 with 5,000 bookings under 20 ms → ${base.toFixed(2)} ms (${base < 20 ? "met" : "NOT met"})`)
console.log(`  growth: 2× staff ${(staff2 / base).toFixed(2)}×, 2× days ${(days2 / base).toFixed(2)}×, 2× bookings ${(book2 / base).toFixed(2)}× (linear ≈ ≤ 2×); 1 staff ${one.toFixed(2)} ms`)
rmSync(dir, { recursive: true, force: true })
