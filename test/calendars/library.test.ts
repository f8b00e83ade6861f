/**
 * The Promise facade: `createScheduling` runs the sync loop, which reads a new calendar
 * within a poll and schedules the next read an interval later; `calendarSync: false` leaves
 * it to `sync`, which queues the read and answers at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createScheduling } from "../../index.js"
import { waitFor } from "../webhooks/receiver.js"
import { type FeedServer, startFeedServer } from "./feedServer.js"

// A daily series from 2026 with no end: some occurrence always falls in the horizon.
const DAILY = [
  "BEGIN:VCALENDAR",
  "VERSION:2.0",
  "PRODID:-//test//EN",
  "BEGIN:VEVENT",
  "UID:daily",
  "DTSTART:20260101T090000Z",
  "DTEND:20260101T100000Z",
  "RRULE:FREQ=DAILY",
  "END:VEVENT",
  "END:VCALENDAR"
].join("\r\n")

let feeds: FeedServer
beforeAll(async () => {
  feeds = await startFeedServer()
  feeds.set("/daily.ics", { kind: "ics", body: DAILY })
})
afterAll(() => feeds.close())

describe("calendars in the library", () => {
  it("createScheduling syncs a new calendar by itself and schedules the next read", async () => {
    const s = await createScheduling({ allowPrivateAddresses: true, calendarSync: { pollMs: 20 } })
    try {
      const staff = await s.staff.create({ name: "Lin", time_zone: "UTC" })
      const created = await s.calendars.create(staff.id, { url: feeds.url("/daily.ics") })
      await waitFor(async () => (await s.calendars.get(staff.id, created.id)).status !== "pending", 10_000, "the first sync")
      const synced = await s.calendars.get(staff.id, created.id)
      expect(synced).toMatchObject({ status: "synced", last_error: null })
      expect(synced.event_count).toBeGreaterThan(0)
      expect(feeds.requests("/daily.ics").length).toBe(1)
      expect(Date.parse(synced.next_sync_at!) - Date.parse(synced.last_synced_at!)).toBe(10 * 60_000)
      expect((await s.calendars.list(staff.id)).data.map((c) => c.id)).toEqual([created.id])
    } finally {
      await s.close()
    }
  })

  it("with calendarSync: false a calendar waits for sync", async () => {
    const s = await createScheduling({ allowPrivateAddresses: true, calendarSync: false })
    try {
      const staff = await s.staff.create({ name: "Mo", time_zone: "UTC" })
      const created = await s.calendars.create(staff.id, { url: feeds.url("/daily.ics") })
      expect((await s.calendars.get(staff.id, created.id)).status).toBe("pending")
      const queued = await s.calendars.sync(staff.id, created.id)
      expect(queued).toMatchObject({ status: "pending", sync_state: "queued" })
      await waitFor(async () => (await s.calendars.get(staff.id, created.id)).sync_state === "idle", 10_000, "the sync asked for")
      expect(await s.calendars.get(staff.id, created.id)).toMatchObject({ status: "synced", sync_state: "idle" })
      await s.calendars.delete(staff.id, created.id)
      await expect(s.calendars.get(staff.id, created.id)).rejects.toMatchObject({ status: 404 })
    } finally {
      await s.close()
    }
  })
})
