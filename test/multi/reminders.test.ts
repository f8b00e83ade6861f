/**
 * Reminders across real processes: two `slotwise serve` instances on one PostgreSQL database
 * and the real clock, one SIGKILLed while reminders fall due. Every reminder is in the event
 * feed exactly once: none lost with the killed instance, none sent by both.
 */
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { expectStatus } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Instance, killAll, serve } from "./processes.js"

const ADMIN = "multi-admin-token-0123456789"
const MINUTE = 60_000
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

interface ReminderEvent {
  readonly data: { readonly object: { readonly id: string; readonly start: string }; readonly offset_minutes: number; readonly late: boolean }
}

it("two instances, one SIGKILLed while reminders fall due: each reminder exactly once in the feed", async () => {
  const key = expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Reminders", plan: "business" }), 201).keys.sandbox.secret
  const [viaA, viaB] = [client(a.url, key), client(b.url, key)]
  expectStatus(await viaA.patch("/v1/account", { reminders: [{ offset_minutes: 6 }, { offset_minutes: 5 }] }), 200)
  const staff = expectStatus(await viaA.post("/v1/staff", { name: "Ana", time_zone: "UTC" }), 201)
  expectStatus(
    await viaA.post("/v1/availability", { staff_id: staff.id, type: "weekly", weekdays: [1, 2, 3, 4, 5, 6, 7], start_time: "00:00", end_time: "24:00" }),
    201
  )
  const service = expectStatus(await viaA.post("/v1/services", { name: "Class", duration_minutes: 1, capacity: 20, staff_ids: [staff.id] }), 201)
  const person = expectStatus(await viaA.post("/v1/clients", { name: "Bo", email: "bo@example.com" }), 201)

  // One start just over six minutes ahead: the 6-minute reminders fall due within a
  // minute, the 5-minute ones a minute later.
  const start = Math.ceil((Date.now() + 6 * MINUTE + 20_000) / MINUTE) * MINUTE
  const startText = new Date(start).toISOString().replace(".000Z", "Z")
  const book = (api: typeof viaA, at: string) =>
    api.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: person.id, start: at })
  const kept = await Promise.all(Array.from({ length: 8 }, (_, i) => book(i % 2 === 0 ? viaA : viaB, startText)))
  const ids = kept.map((reply) => expectStatus(reply, 201).id as string)
  // Cancelled: disarmed. Rescheduled from a minute later onto the start: re-armed for it.
  const cancelled = expectStatus(await book(viaB, startText), 201)
  expectStatus(await viaA.post(`/v1/bookings/${cancelled.id}/cancel`, {}), 200)
  const moved = expectStatus(await book(viaA, new Date(start + MINUTE).toISOString().replace(".000Z", "Z")), 201)
  expectStatus(await viaB.post(`/v1/bookings/${moved.id}/reschedule`, { start: startText }), 200)
  ids.push(moved.id)

  const feed = async (): Promise<ReadonlyArray<ReminderEvent>> =>
    expectStatus(await viaB.get("/v1/events?types=booking.reminder&limit=100"), 200).data

  // Kill A as soon as the first reminder is out: both instances are firing then.
  await waitFor(async () => (await remindersSent()) > 0, 3 * MINUTE, "the first reminder")
  a.process.kill("SIGKILL")
  await a.exited

  await waitFor(async () => (await remindersSent()) >= ids.length * 2 && (await armedJobs()) === 0, 4 * MINUTE, "every reminder")
  const sent = await feed()
  const pairs = sent.map((e) => `${e.data.object.id}@${e.data.offset_minutes}`).sort()
  expect(pairs).toEqual(ids.flatMap((id) => [`${id}@5`, `${id}@6`]).sort())
  expect(sent.every((e) => e.data.object.start === startText && !e.data.late)).toBe(true)
}, 10 * MINUTE)
