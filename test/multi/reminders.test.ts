/**
 * Reminders across real processes: two `slotwise serve` instances on one PostgreSQL database
 * and the real clock, one SIGKILLed while reminders fall due. Every reminder is in the event
 * feed exactly once: none lost with the killed instance, none sent by both.
 *
 * The bookings start just over the shortest offset ahead, so their reminders fall due seconds
 * after they are made, a few seconds apart. One reminder per booking: several offsets on one
 * booking are due minutes apart, and test/core/reminders.test.ts covers them on a test clock.
 */
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { expectStatus } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Instance, killAll, serve } from "./processes.js"

const ADMIN = "multi-admin-token-0123456789"
const SECOND = 1000
const MINUTE = 60_000
/** The shortest offset an account may set. */
const OFFSET_MINUTES = 5
/** From making the bookings to the first reminder: room for a busy machine to make them all. */
const LEAD = 12 * SECOND
/** Starts this far apart (one staff member each), so reminders still fall due after the kill. */
const STEP = 3 * SECOND
const STARTS = 3

let db: TestDatabase
let a: Instance
let b: Instance
let database: pg.Client

beforeAll(async () => {
  db = await createTestDatabase()
  const flags = ["--database", db.url, "--admin-token", ADMIN]
  ;[a, b] = await Promise.all([serve(flags), serve(flags)])
  database = new pg.Client({ connectionString: db.url })
  await database.connect()
}, 120_000)

afterAll(async () => {
  killAll()
  await database?.end()
  await db?.drop()
})

/** A count read from the database itself: polling it costs no API requests (which are rate limited). */
const count = async (sql: string): Promise<number> => Number((await database.query(sql)).rows[0].n)
const remindersSent = () => count("SELECT count(*) AS n FROM events WHERE type = 'booking.reminder'")
/** Reminder jobs still armed: none left means none can fire any more. */
const armedJobs = () => count("SELECT count(*) AS n FROM c_reminder_jobs")
const jobsOf = async (bookingId: string): Promise<ReadonlyArray<number>> =>
  (await database.query("SELECT due_ms FROM c_reminder_jobs WHERE booking_id = $1", [bookingId])).rows.map((r) => Number(r.due_ms))

const instantText = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

interface ReminderEvent {
  readonly data: {
    readonly object: { readonly id: string; readonly start: string }
    readonly offset_minutes: number
    readonly late: boolean
  }
}

it("two instances, one SIGKILLed while reminders fall due: each reminder exactly once in the feed", async () => {
  const key =
    expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Reminders", plan: "business" }), 201).keys.sandbox.secret
  const [viaA, viaB] = [client(a.url, key), client(b.url, key)]
  expectStatus(await viaA.patch("/v1/account", { reminders: [{ offset_minutes: OFFSET_MINUTES }] }), 200)
  const staff = await Promise.all(Array.from({ length: STARTS }, async (_, n) => {
    const member = expectStatus(await viaA.post("/v1/staff", { name: `Staff ${n}`, time_zone: "UTC" }), 201)
    expectStatus(
      await viaA.post("/v1/availability", {
        staff_id: member.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5, 6, 7],
        start_time: "00:00",
        end_time: "24:00"
      }),
      201
    )
    return member.id as string
  }))
  const service = expectStatus(await viaA.post("/v1/services", { name: "Class", duration_minutes: 1, capacity: 20, staff_ids: staff }), 201)
  const person = expectStatus(await viaA.post("/v1/clients", { name: "Bo", email: "bo@example.com" }), 201)

  // Whole seconds: the feed gives a start back without milliseconds.
  const first = Math.ceil((Date.now() + OFFSET_MINUTES * MINUTE + LEAD) / SECOND) * SECOND
  const starts = Array.from({ length: STARTS }, (_, n) => first + n * STEP)
  const book = (api: typeof viaA, n: number, start = starts[n]!) =>
    api.post("/v1/bookings", { service_id: service.id, staff_id: staff[n], client_id: person.id, start: instantText(start) })
  const kept = await Promise.all(Array.from({ length: 8 }, (_, i) => book(i % 2 === 0 ? viaA : viaB, i % STARTS)))
  const startOf = new Map(kept.map((reply, i) => [expectStatus(reply, 201).id as string, instantText(starts[i % STARTS]!)]))
  // Cancelled: disarmed. Rescheduled from a minute later onto the last start: re-armed for it.
  const cancelled = expectStatus(await book(viaB, 0), 201)
  expectStatus(await viaA.post(`/v1/bookings/${cancelled.id}/cancel`, {}), 200)
  const last = STARTS - 1
  const moved = expectStatus(await book(viaA, last, starts[last]! + MINUTE), 201)
  expectStatus(await viaB.post(`/v1/bookings/${moved.id}/reschedule`, { start: instantText(starts[last]!) }), 200)
  startOf.set(moved.id, instantText(starts[last]!))
  // Read before the last start's reminders can fall due (LEAD + STEPs ahead).
  expect(await jobsOf(cancelled.id)).toEqual([])
  expect(await jobsOf(moved.id)).toEqual([starts[last]! - OFFSET_MINUTES * MINUTE])

  // Kill A as soon as the first reminder is out: both instances are firing then, and the
  // later starts' reminders are still to come.
  await waitFor(async () => (await remindersSent()) > 0, LEAD + MINUTE, "the first reminder")
  a.process.kill("SIGKILL")
  await a.exited
  expect(await armedJobs(), "reminders still due after the kill").toBeGreaterThan(0)

  await waitFor(async () => (await remindersSent()) >= startOf.size && (await armedJobs()) === 0, MINUTE, "every reminder")
  const sent: ReadonlyArray<ReminderEvent> = expectStatus(await viaB.get("/v1/events?types=booking.reminder&limit=100"), 200).data
  expect(sent.map((e) => `${e.data.object.id}@${e.data.offset_minutes}`).sort()).toEqual(
    [...startOf.keys()].map((id) => `${id}@${OFFSET_MINUTES}`).sort()
  )
  for (const e of sent)
    expect({ start: e.data.object.start, late: e.data.late }).toEqual({ start: startOf.get(e.data.object.id), late: false })
}, 5 * MINUTE)
