/**
 * Booking creation and slot-list figures, printed (never asserted in tests). Run: `npx tsx bench/core.ts`.
 * It measures the compiled package (dist/, rebuilt first when stale): what an app imports.
 *
 * 1. Booking creations per second through the Promise facade on a SQLite file (every check,
 *    the event and the transaction included), next to two raw better-sqlite3 baselines in the
 *    same process: the reference, one BEGIN IMMEDIATE / INSERT / COMMIT per booking row, and
 *    the statements one creation runs, on Slotwise's own tables. These 2-core machines drift
 *    by 2× within a minute, so the three run interleaved in short rounds (their order turning
 *    each round) and each figure is a median over rounds; the ratio is the median of the
 *    rounds' own ratios.
 * 2. `availability.slots` end to end on SQLite (load rules, bookings, compute, format) for
 *    1 staff × 31 days, and 50 staff × 31 days with 5,000 bookings, plus each dimension
 *    doubled to show the cost grows linearly. All five files are built first and then timed
 *    in interleaved rounds, for the same reason.
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBuilt, root } from "../bin/ensure-built.js"
import { DAY, HALF_HOUR, iso, seedSlotsCase, slotStart, team } from "./fixtures.js"
import { interleaved, median } from "./rounds.js"
import type * as Slotwise from "../index.js"

const { createScheduling } = (await import(
  pathToFileURL(ensureBuilt(join(root, "dist", "index.js"))).href
)) as typeof Slotwise

const dir = mkdtempSync(join(tmpdir(), "slotwise-bench-"))

/** A contestant runs `n` more operations each time it is called. */
type Contestant = (n: number) => Promise<void> | void

/**
 * Slotwise: `bookings.create` through the facade, ten staff, one transaction each. Closed
 * once timed: an open instance's workers would keep the process alive.
 */
const slotwiseCreates = async (): Promise<{ readonly run: Contestant; readonly close: () => Promise<void> }> => {
  const s = await createScheduling({ storage: { sqlite: join(dir, "creates.db") } })
  const { clientId, serviceId, staffIds } = await team(s, 10)
  let i = 0
  const run: Contestant = async (n) => {
    for (const end = i + n; i < end; i++) {
      await s.bookings.create({ service_id: serviceId, staff_id: staffIds[i % 10]!, client_id: clientId, start: iso(slotStart(i, 10, 56)) })
    }
  }
  return { run, close: () => s.close() }
}

const openRaw = (file: string) => {
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("busy_timeout = 5000")
  return db
}

/** The reference baseline: one booking row per BEGIN IMMEDIATE / INSERT / COMMIT. */
const insertBaseline = (): Contestant => {
  const db = openRaw(join(dir, "baseline.db"))
  db.exec(`CREATE TABLE bookings (account_id TEXT, environment TEXT, id TEXT, doc TEXT, staff_id TEXT, service_id TEXT,
    client_id TEXT, status TEXT, start_ms INTEGER, end_ms INTEGER, occupied_start INTEGER, occupied_end INTEGER,
    PRIMARY KEY (account_id, environment, id)) WITHOUT ROWID`)
  db.exec("CREATE INDEX bookings_staff ON bookings (account_id, environment, staff_id, id)")
  db.exec("CREATE INDEX bookings_start ON bookings (account_id, environment, start_ms, id)")
  const insert = db.prepare("INSERT INTO bookings VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  let i = 0
  return (n) => {
    for (const end = i + n; i < end; i++) {
      const start = slotStart(i, 10, 56)
      const doc = {
        id: `bkg_${i}`,
        object: "booking",
        service_id: "svc",
        staff_id: `stf_${i % 10}`,
        client_id: "cli",
        start: iso(start),
        end: iso(start + HALF_HOUR),
        status: "confirmed"
      }
      begin.run()
      insert.run(
        "acc",
        "sandbox",
        doc.id,
        JSON.stringify(doc),
        doc.staff_id,
        "svc",
        "cli",
        "confirmed",
        start,
        start + HALF_HOUR,
        start,
        start + HALF_HOUR
      )
      commit.run()
    }
  }
}

/**
 * Raw better-sqlite3 running the statements one creation runs (service, staff, client and
 * rules lookups, the booking and hold overlap queries, the booking insert and its outbox
 * event, in one BEGIN IMMEDIATE) on Slotwise's own tables: what SQLite alone allows.
 */
const sameWorkBaseline = async (): Promise<Contestant> => {
  const file = join(dir, "same-work.db")
  const s = await createScheduling({ storage: { sqlite: file } })
  const { clientId, serviceId, staffIds } = await team(s, 10)
  await s.close()
  const db = openRaw(file)
  const tenant = db.prepare("SELECT account_id, environment FROM c_services LIMIT 1").get() as { account_id: string; environment: string }
  const t = [tenant.account_id, tenant.environment]
  const get = (table: string) => db.prepare(`SELECT doc FROM ${table} WHERE account_id = ? AND environment = ? AND id = ?`)
  const [service, staff, client] = [get("c_services"), get("c_staff"), get("c_clients")]
  const rules = db.prepare("SELECT doc FROM c_availability WHERE account_id = ? AND environment = ? AND staff_id IN (?)")
  const overlap = (table: string, extra: string) =>
    db.prepare(`SELECT id, staff_id, service_id, start_ms, end_ms, occupied_start, occupied_end FROM ${table}
      WHERE account_id = ? AND environment = ? AND staff_id IN (?) AND occupied_start > ? AND occupied_start < ?
      AND occupied_end > ? AND ${extra}`).raw(true)
  const bookingsOverlap = overlap("c_bookings", "status IN ('pending', 'confirmed')")
  const holdsOverlap = overlap("c_holds", "expires_ms > ?")
  const insertBooking = db.prepare(`INSERT INTO c_bookings (account_id, environment, id, staff_id, service_id, client_id, status,
    start_ms, end_ms, occupied_start, occupied_end, doc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
  const insertEvent = db.prepare("INSERT INTO events (account_id, environment, id, type, doc) VALUES (?,?,?,?,?)")
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  let i = 0
  return (n) => {
    for (const end = i + n; i < end; i++) {
      const staffId = staffIds[i % 10]!
      const start = slotStart(i, 10, 56)
      begin.run()
      JSON.parse((service.get(...t, serviceId) as { doc: string }).doc)
      JSON.parse((staff.get(...t, staffId) as { doc: string }).doc)
      for (const row of rules.all(...t, staffId) as Array<{ doc: string }>) JSON.parse(row.doc)
      bookingsOverlap.all(...t, staffId, start - 3 * DAY, start + HALF_HOUR, start)
      holdsOverlap.all(...t, staffId, start - 3 * DAY, start + HALF_HOUR, start, Date.now())
      JSON.parse((client.get(...t, clientId) as { doc: string }).doc)
      const now = iso(Date.now())
      const booking = {
        id: `bkg_raw${i}`,
        object: "booking",
        service_id: serviceId,
        staff_id: staffId,
        client_id: clientId,
        start: iso(start),
        end: iso(start + HALF_HOUR),
        status: "confirmed",
        notes: null,
        cancellation_reason: null,
        price: null,
        amount_paid: null,
        payment_status: "unpaid",
        rescheduled_from: null,
        buffer_before_minutes: 0,
        buffer_after_minutes: 0,
        answers: [],
        metadata: {},
        created_at: now,
        updated_at: now
      }
      insertBooking.run(
        ...t,
        booking.id,
        staffId,
        serviceId,
        clientId,
        "confirmed",
        start,
        start + HALF_HOUR,
        start,
        start + HALF_HOUR,
        JSON.stringify(booking)
      )
      const event = { id: `evt_raw${i}`, object: "event", type: "booking.created", created_at: now, data: { object: booking } }
      insertEvent.run(...t, event.id, event.type, JSON.stringify(event))
      commit.run()
    }
  }
}

const benchCreates = async (rounds: number, perRound: number) => {
  const slotwise = await slotwiseCreates()
  const contestants = { slotwise: slotwise.run, insert: insertBaseline(), sameWork: await sameWorkBaseline() }
  const names = Object.keys(contestants) as Array<keyof typeof contestants>
  for (const name of names) await contestants[name](200) // prepared statements, JIT
  // A pause between turns: Slotwise's checkpoint thread ends before the next one is timed.
  const times = await interleaved(names.map((name) => () => contestants[name](perRound)), rounds, 150)
  await slotwise.close()
  const rates = Object.fromEntries(names.map((name, i) => [name, times[i]!.map((ms) => perRound / (ms / 1000))])) as Record<
    keyof typeof contestants,
    Array<number>
  >
  const ratios = (of: keyof typeof contestants, to: keyof typeof contestants) => rates[of].map((r, i) => r / rates[to][i]!)
  return {
    slotwise: median(rates.slotwise),
    insert: median(rates.insert),
    sameWork: median(rates.sameWork),
    ratio: ratios("slotwise", "insert"),
    sameWorkRatio: median(ratios("sameWork", "insert")),
    kept: median(ratios("slotwise", "sameWork"))
  }
}

interface SlotsCase {
  readonly label: string
  readonly staff: number
  readonly days: number
  readonly bookings: number
}

/** A SQLite file with `c`'s team and bookings, and its slot query ready to run. */
const prepareSlots = async (c: SlotsCase) => {
  const s = await createScheduling({ storage: { sqlite: join(dir, `slots-${c.staff}-${c.days}-${c.bookings}.db`) } })
  const query = await seedSlotsCase(s, c)
  return { client: s, list: () => s.availability.slots(query) }
}

/** Each case's median ms, timed in interleaved rounds like the creations. */
const benchSlots = async (cases: ReadonlyArray<SlotsCase>, rounds: number) => {
  const prepared = []
  for (const c of cases) prepared.push(await prepareSlots(c))
  await new Promise((resolve) => setTimeout(resolve, 500)) // the last checkpoints end
  const counts: Array<number> = []
  for (const p of prepared) {
    for (let i = 0; i < 4; i++) await p.list()
    counts.push((await p.list()).data.length)
  }
  const times = await interleaved(prepared.map((p) => p.list), rounds)
  for (const p of prepared) await p.client.close()
  return cases.map((c, i) => {
    const ms = median(times[i]!)
    console.log(`  ${c.label.padEnd(40)} ${String(counts[i]).padStart(7)} slots  median ${ms.toFixed(2).padStart(7)} ms`)
    return { ms, slots: counts[i]! }
  })
}

console.log("Slotwise core benchmark (SQLite file, WAL, synchronous=NORMAL; compiled dist/)\n")
const creates = await benchCreates(25, 200)
const sorted = [...creates.ratio].sort((a, b) => a - b)
console.log("Booking creation, sequential, one transaction each (25 interleaved rounds of 200, medians):")
console.log(`  slotwise bookings.create        ${creates.slotwise.toFixed(0).padStart(8)} /s  (checks + event + transaction)`)
console.log(`  raw better-sqlite3 insert+txn   ${creates.insert.toFixed(0).padStart(8)} /s`)
console.log(
  `  ratio                           ${median(creates.ratio).toFixed(3).padStart(8)}×  (target ≥ 0.2×; rounds ${sorted[0]!.toFixed(3)}–${
    sorted[sorted.length - 1]!.toFixed(3)
  })`
)
console.log(`  raw better-sqlite3, same work   ${creates.sameWork.toFixed(0).padStart(8)} /s  (the create's statements, no stack)`)
console.log(`  same work vs insert baseline    ${creates.sameWorkRatio.toFixed(3).padStart(8)}×  (what SQLite alone allows)`)
console.log(`  slotwise vs same work           ${creates.kept.toFixed(3).padStart(8)}×  (what the core keeps of it)\n`)

console.log("availability.slots end to end (load + compute + format; 40 interleaved rounds, medians):")
const [one, base, staff2, days2, book2] = await benchSlots([
  { label: "1 staff × 31 days", staff: 1, days: 31, bookings: 0 },
  { label: "50 staff × 31 days, 5,000 bookings", staff: 50, days: 31, bookings: 5000 },
  { label: "100 staff × 31 days, 10,000 bookings", staff: 100, days: 31, bookings: 10000 },
  { label: "50 staff × 62 days, 5,000 bookings", staff: 50, days: 62, bookings: 5000 },
  { label: "50 staff × 31 days, 10,000 bookings", staff: 50, days: 31, bookings: 10000 }
], 40)
const growth = (of: { ms: number; slots: number }) =>
  `${(of.ms / base!.ms).toFixed(2)}× the time for ${(of.slots / base!.slots).toFixed(2)}× the slots`
console.log(
  `\n  target: 50 × 31 with 5,000 bookings under 20 ms → ${base!.ms.toFixed(2)} ms (${base!.ms < 20 ? "met" : "NOT met"}); 1 staff ${
    one!.ms.toFixed(2)
  } ms`
)
console.log("  growth (linear: time grows no faster than the work):")
console.log(`    2× staff (and bookings)  ${growth(staff2!)}`)
console.log(`    2× days                  ${growth(days2!)}`)
console.log(`    2× bookings              ${growth(book2!)}`)
rmSync(dir, { recursive: true, force: true })
