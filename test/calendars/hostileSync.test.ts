/**
 * Hostile feeds synced over the API, with a real feed server on 127.0.0.1 and two accounts:
 * `POST …/sync` answers at once (202, the sync queued) however long the read takes; another
 * account's one-event feed syncs while the hostile one is read; the wall-clock limit ends
 * the hostile read and records why, keeping the last good busy time; and deleting a calendar
 * stops its sync. The limits are the server's options, small here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, client, type Client, expectStatus, startServer, type TestServer } from "../http/harness.js"
import { waitFor } from "../webhooks/receiver.js"
import { type FeedServer, startFeedServer } from "./feedServer.js"
import { oneEvent, secondlyFrom1900 } from "./hostileFeeds.js"

const NOW = "2026-03-01T00:00:00Z"
/** No step budget to speak of: the wall-clock limit is what ends the hostile read. */
const UNBOUNDED = { stepsPerFeed: 1e12, stepsPerSeries: 1e12 }
const TIME_LIMIT_MS = 4000

let feeds: FeedServer
let limited: TestServer
let patient: TestServer
beforeAll(async () => {
  feeds = await startFeedServer()
  feeds.set("/one.ics", { kind: "ics", body: oneEvent() })
  ;[limited, patient] = await Promise.all([
    startServer({ now: NOW, allowPrivateWebhooks: true, serve: { calendarParse: { timeLimitMs: TIME_LIMIT_MS, limits: UNBOUNDED } } }),
    // The default time limit (30 s): longer than the test waits.
    startServer({ now: NOW, allowPrivateWebhooks: true, serve: { calendarParse: { limits: UNBOUNDED } } })
  ])
})
afterAll(async () => {
  await Promise.all([limited?.close(), patient?.close()])
  await feeds?.close()
})

/** Reads within the rate limit while waiting. */
const calendarOf = async (api: Client, path: string) => {
  await new Promise((resolve) => setTimeout(resolve, 20))
  return expectStatus(await api.get(path), 200)
}

const subscribe = async (api: Client, feedPath: string) => {
  const staff = expectStatus(await api.post("/v1/staff", { name: "Ada", time_zone: "UTC" }), 201)
  // Busy time is read as far ahead as a service books.
  const service = expectStatus(
    await api.post("/v1/services", {
      name: "Consult",
      duration_minutes: 60,
      slot_interval_minutes: 60,
      staff_ids: [staff.id],
      max_advance_days: 60
    }),
    201
  )
  const calendar = expectStatus(await api.post(`/v1/staff/${staff.id}/calendars`, { url: feeds.url(feedPath) }), 201)
  return { staff, service, path: `/v1/staff/${staff.id}/calendars/${calendar.id}` }
}

const secondAccount = async (server: TestServer) =>
  client(
    server.url,
    expectStatus(await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Other", plan: "business" }), 201).keys.sandbox
      .secret
  )

describe("hostile feeds synced over the API", () => {
  it("answers a sync at once, syncs another account's feed meanwhile, and ends the hostile read at the time limit", async () => {
    const hostileApi = client(limited.url, limited.first.keys.sandbox.secret)
    feeds.set("/hostile.ics", { kind: "ics", body: oneEvent() })
    const hostile = await subscribe(hostileApi, "/hostile.ics")
    await waitFor(async () => (await calendarOf(hostileApi, hostile.path)).status === "synced", 10_000, "the first, good read")

    feeds.set("/hostile.ics", { kind: "ics", body: secondlyFrom1900() })
    const asked = await hostileApi.post(`${hostile.path}/sync`)
    expect(asked.status).toBe(202)
    expect(asked.json).toMatchObject({ sync_state: "queued", status: "synced", event_count: 1 })
    await waitFor(async () => (await calendarOf(hostileApi, hostile.path)).sync_state === "running", 10_000, "the hostile read")

    const otherApi = await secondAccount(limited)
    const other = await subscribe(otherApi, "/one.ics")
    expectStatus(await otherApi.post(`${other.path}/sync`), 202)
    await waitFor(async () => (await calendarOf(otherApi, other.path)).status === "synced", 10_000, "the other account's read")
    // Read while the hostile feed still is.
    expect((await calendarOf(hostileApi, hostile.path)).sync_state).toBe("running")

    await waitFor(async () => (await calendarOf(hostileApi, hostile.path)).sync_state === "idle", 20_000, "the hostile read's end")
    const ended = await calendarOf(hostileApi, hostile.path)
    expect(ended).toMatchObject({
      status: "failing",
      last_error: "reading the feed took longer than 4 s (the limit); the next sync reads it again",
      // The last good read's busy time stays.
      event_count: 1
    })
    const explained = expectStatus(
      await hostileApi.get(
        `/v1/availability/explain?service_id=${hostile.service.id}&staff_id=${hostile.staff.id}&start=2026-03-02T09:00:00Z`
      ),
      200
    )
    expect(explained.reasons).toEqual(expect.arrayContaining([expect.objectContaining({ code: "external_busy" })]))
  }, 30_000)

  it("goes on syncing other accounts' feeds while the loop's hostile read runs, and stops it when its calendar is deleted", async () => {
    const api = client(patient.url, patient.first.keys.sandbox.secret)
    feeds.set("/endless.ics", { kind: "ics", body: secondlyFrom1900() })
    const hostile = await subscribe(api, "/endless.ics")
    // Read by the sync loop, which goes on claiming: another account's new calendar is read meanwhile.
    await waitFor(async () => (await calendarOf(api, hostile.path)).sync_state === "running", 10_000, "the hostile read")
    const otherApi = await secondAccount(patient)
    const other = await subscribe(otherApi, "/one.ics")
    await waitFor(async () => (await calendarOf(otherApi, other.path)).status === "synced", 10_000, "the other account's read")
    expect((await calendarOf(api, hostile.path)).sync_state).toBe("running")

    expectStatus(await api.del(hostile.path), 200)

    // The account's next feed is read at once: the deleted one's read holds no turn of the account's.
    const next = await subscribe(api, "/one.ics")
    expectStatus(await api.post(`${next.path}/sync`), 202)
    await waitFor(async () => (await calendarOf(api, next.path)).status === "synced", 10_000, "the account's next read")
  }, 30_000)
})
