/**
 * Two `slotwise serve` processes on one PostgreSQL database, both running the calendar sync
 * loop on a short interval: each feed is read by one instance at a time (the feed server
 * never sees two requests of it at once, and no more than the interval allows), and both
 * instances answer with the stored result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFeedServer, type FeedServer } from "../calendars/feedServer.js"
import { expectStatus, MONDAY_9, seed } from "../http/harness.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Instance, killAll, serve } from "./processes.js"

const ADMIN = "multi-admin-token-0123456789"
const INTERVAL_MINUTES = 0.01 // 600 ms
let db: TestDatabase
let feeds: FeedServer
let a: Instance
let b: Instance

const FEED = [
  "BEGIN:VCALENDAR",
  "VERSION:2.0",
  "PRODID:-//test//EN",
  "BEGIN:VEVENT",
  "UID:review",
  "DTSTART:20270329T090000Z",
  "DTEND:20270329T100000Z",
  "SUMMARY:Review",
  "END:VEVENT",
  "END:VCALENDAR"
].join("\r\n")

beforeAll(async () => {
  db = await createTestDatabase()
  feeds = await startFeedServer()
  const flags = [
    "--database",
    db.url,
    "--admin-token",
    ADMIN,
    "--allow-private-webhooks",
    "--calendar-sync-minutes",
    String(INTERVAL_MINUTES)
  ]
  ;[a, b] = await Promise.all([serve(flags), serve(flags)])
}, 120_000)

afterAll(async () => {
  killAll()
  await feeds?.close()
  await db?.drop()
})

describe("calendar sync across instances", () => {
  it("one instance at a time reads each feed; both read the stored busy time", async () => {
    const key =
      expectStatus(await client(a.url, ADMIN).post("/admin/v1/accounts", { name: "Cal", plan: "business" }), 201).keys.sandbox.secret
    const viaA = client(a.url, key)
    const viaB = client(b.url, key)
    const s = await seed(viaA)
    // Slow answers widen the window in which two instances could overlap.
    feeds.set("/team.ics", { kind: "ics", body: FEED, delayMs: 150 })
    const started = Date.now()
    const calendar = expectStatus(await viaA.post(`/v1/staff/${s.staff.id}/calendars`, { url: feeds.url("/team.ics") }), 201)

    await waitFor(() => feeds.requests("/team.ics").length >= 6, 30_000, "six reads of the feed")
    const elapsed = Date.now() - started
    expect(feeds.mostAtOnce("/team.ics")).toBe(1)
    // At most one read per interval (plus the first) however many instances poll.
    expect(feeds.requests("/team.ics").length).toBeLessThanOrEqual(Math.floor(elapsed / (INTERVAL_MINUTES * 60_000)) + 2)

    for (const api of [viaA, viaB]) {
      const read = expectStatus(await api.get(`/v1/staff/${s.staff.id}/calendars/${calendar.id}`), 200)
      expect(read).toMatchObject({ status: "synced", event_count: 1, last_error: null })
      const explained = expectStatus(
        await api.get(`/v1/availability/explain?service_id=${s.service.id}&staff_id=${s.staff.id}&start=${MONDAY_9}`),
        200
      )
      expect(explained.reasons).toEqual([expect.objectContaining({ code: "external_busy", calendar_id: calendar.id })])
    }
  })
})
