/**
 * External calendars over real HTTP, against feeds served on 127.0.0.1: the resource and its
 * secret address, busy time blocking slots, bookings and holds with `external_busy`, and
 * what a sync keeps when the feed answers 304, fails, is too big or is not iCalendar.
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFeedServer, type FeedServer } from "../calendars/feedServer.js"
import { waitFor } from "../webhooks/receiver.js"
import { client, type Client, expectProblem, expectStatus, startServer, type TestServer } from "./harness.js"

const fixture = (name: string) => readFileSync(new URL(`../calendars/fixtures/${name}`, import.meta.url), "utf8")
const NOW = "2026-03-01T00:00:00Z"
const MINUTE = 60_000

let server: TestServer
let feeds: FeedServer
let api: Client
let setup: { staff: any; service: any; client: any }

beforeAll(async () => {
  feeds = await startFeedServer()
  server = await startServer({ now: NOW, allowPrivateWebhooks: true })
  api = client(server.url, server.first.keys.sandbox.secret)
  const staff = expectStatus(await api.post("/v1/staff", { name: "Ada", time_zone: "Europe/Berlin" }), 201)
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
  expectStatus(
    await api.post("/v1/availability", {
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5],
      start_time: "08:00",
      end_time: "18:00",
      time_zone: "Europe/Berlin"
    }),
    201
  )
  const booker = expectStatus(await api.post("/v1/clients", { name: "Bob", email: "bob@example.com" }), 201)
  setup = { staff, service, client: booker }
})
afterAll(async () => {
  await server?.close()
  await feeds?.close()
})

const explain = async (start: string) =>
  expectStatus(
    await api.get(`/v1/availability/explain?service_id=${setup.service.id}&staff_id=${setup.staff.id}&start=${start}`),
    200
  )

const slotStarts = async (from: string, to: string) =>
  expectStatus(await api.get(`/v1/availability/slots?service_id=${setup.service.id}&start=${from}&end=${to}`), 200)
    .data.map((s: any) => s.start)

/** Asks for a sync (answered at once, 202) and reads the calendar once it has ended. */
const syncAndRead = async (path: string) => {
  const asked = expectStatus(await api.post(`${path}/sync`), 202)
  expect(["queued", "running"]).toContain(asked.sync_state)
  await waitFor(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 20)) // a few reads, within the rate limit
      return expectStatus(await api.get(path), 200).sync_state === "idle"
    },
    10_000,
    "the sync asked for"
  )
  return expectStatus(await api.get(path), 200)
}

describe("external calendars", () => {
  it("subscribes, syncs, and blocks slots, bookings and holds with external_busy", async () => {
    feeds.set("/google.ics", { kind: "ics", body: fixture("google.ics"), etag: "\"v1\"" })
    const secretUrl = `${feeds.url("/google.ics")}?token=private-0123456789abcdef`
    const created = expectStatus(await api.post(`/v1/staff/${setup.staff.id}/calendars`, { url: secretUrl, name: "Work" }), 201)
    expect(created).toMatchObject({
      object: "calendar",
      staff_id: setup.staff.id,
      name: "Work",
      status: "pending",
      sync_state: "queued",
      last_synced_at: null,
      last_error: null,
      event_count: 0
    })
    expect(created.id).toMatch(/^cal_/)
    expect(created.url).toBe(`${new URL(secretUrl).origin}/…`)

    const synced = await syncAndRead(`/v1/staff/${setup.staff.id}/calendars/${created.id}`)
    expect(synced).toMatchObject({ status: "synced", last_error: null, event_count: 5, last_synced_at: NOW })
    expect(Date.parse(synced.next_sync_at) - Date.parse(NOW)).toBe(10 * MINUTE)

    // The secret part of the address appears in no answer.
    const listed = await api.get(`/v1/staff/${setup.staff.id}/calendars`)
    const read = await api.get(`/v1/staff/${setup.staff.id}/calendars/${created.id}`)
    for (const reply of [listed, read]) expect(reply.text).not.toContain("private-0123456789abcdef")
    expect(listed.json.data.map((c: any) => c.id)).toEqual([created.id])

    // Monday 2 March: busy 09:00–10:00Z (10:00–11:00 in Berlin); hours 07:00–17:00Z.
    const starts = await slotStarts("2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z")
    expect(starts).toContain("2026-03-02T08:00:00Z")
    expect(starts).not.toContain("2026-03-02T09:00:00Z")
    expect(starts).toContain("2026-03-02T10:00:00Z")
    // The moved occurrence (13:00Z on the 5th) blocks; its original time (09:00Z) does not.
    const thursday = await slotStarts("2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z")
    expect(thursday).not.toContain("2026-03-05T13:00:00Z")
    expect(thursday).toContain("2026-03-05T09:00:00Z")
    // The all-day event takes the whole of Tuesday 10 March in Berlin.
    expect(await slotStarts("2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z")).toEqual([])

    const explained = await explain("2026-03-02T09:00:00Z")
    expect(explained.bookable).toBe(false)
    expect(explained.reasons).toEqual([expect.objectContaining({ code: "external_busy", calendar_id: created.id })])
    expect((await explain("2026-03-02T10:00:00Z")).bookable).toBe(true)

    const booking = { service_id: setup.service.id, staff_id: setup.staff.id, client_id: setup.client.id, start: "2026-03-02T09:00:00Z" }
    const refused = expectProblem(await api.post("/v1/bookings", booking), 409, "outside_availability")
    expect(refused.reasons[0]).toMatchObject({ code: "external_busy", calendar_id: created.id })
    const { client_id: _client, ...hold } = booking
    expectProblem(await api.post("/v1/availability/holds", hold), 409, "outside_availability")

    // Unsubscribing frees the time.
    expectStatus(await api.del(`/v1/staff/${setup.staff.id}/calendars/${created.id}`), 200)
    expect((await explain("2026-03-02T09:00:00Z")).bookable).toBe(true)
    expectProblem(await api.get(`/v1/staff/${setup.staff.id}/calendars/${created.id}`), 404, "not_found")
  })

  it("keeps the last good busy time through a 304, failures with growing backoff, a huge or non-iCalendar feed", async () => {
    feeds.set("/flaky.ics", { kind: "ics", body: fixture("google.ics"), etag: "\"a\"" })
    const created = expectStatus(await api.post(`/v1/staff/${setup.staff.id}/calendars`, { url: feeds.url("/flaky.ics") }), 201)
    expect(created.name).toBe(new URL(feeds.url("/")).host)
    const path = `/v1/staff/${setup.staff.id}/calendars/${created.id}`
    const sync = () => syncAndRead(path)
    const blocked = async () => (await explain("2026-03-02T09:00:00Z")).reasons.some((r: any) => r.calendar_id === created.id)

    expect((await sync()).status).toBe("synced")
    expect(await blocked()).toBe(true)

    await server.advance(MINUTE)
    const unchanged = await sync()
    expect(feeds.requests("/flaky.ics").at(-1)!.ifNoneMatch).toBe("\"a\"")
    expect(unchanged).toMatchObject({ status: "synced", event_count: 5, last_error: null })
    expect(unchanged.last_synced_at).toBe(new Date(server.now()).toISOString().replace(".000", ""))
    expect(await blocked()).toBe(true)

    feeds.set("/flaky.ics", { kind: "status", status: 500, body: "oops" })
    const waits: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const failed = await sync()
      expect(failed).toMatchObject({ status: "failing", last_error: "the feed answered HTTP 500", event_count: 5 })
      waits.push(Date.parse(failed.next_sync_at) - server.now())
      expect(await blocked()).toBe(true)
    }
    expect(waits).toEqual([MINUTE, 2 * MINUTE, 4 * MINUTE])

    feeds.set("/flaky.ics", { kind: "ics", body: "<html><body>Sign in to see this calendar</body></html>" })
    expect((await sync()).last_error).toMatch(/not iCalendar/)
    feeds.set("/flaky.ics", { kind: "stream", bytes: 6 * 1024 * 1024 })
    expect((await sync()).last_error).toBe("the feed is larger than 5 MB")
    expect(await blocked()).toBe(true)

    // A good answer replaces the busy time: a feed without the standup frees Monday 09:00Z.
    const withoutStandup = fixture("google.ics").replace(/BEGIN:VEVENT\nDTSTART:20260302T090000Z[\s\S]*?END:VEVENT\n/, "")
    feeds.set("/flaky.ics", { kind: "ics", body: withoutStandup, etag: "\"b\"" })
    const recovered = await sync()
    expect(recovered).toMatchObject({ status: "synced", last_error: null, event_count: 2 })
    expect(Date.parse(recovered.next_sync_at) - server.now()).toBe(10 * MINUTE)
    expect(await blocked()).toBe(false)
    expect((await explain("2026-03-05T13:00:00Z")).reasons[0]).toMatchObject({ code: "external_busy", calendar_id: created.id })
  })

  it("lists sync state after a failing fetch and records calendar.created, .updated on each change of status, and .deleted", async () => {
    const member = expectStatus(await api.post("/v1/staff", { name: "Ivo", time_zone: "Europe/Berlin" }), 201)
    const secretPath = "/private-3f9a7c1e/basic.ics"
    feeds.set(secretPath, { kind: "status", status: 503, body: "down" })
    const created = expectStatus(await api.post(`/v1/staff/${member.id}/calendars`, { url: feeds.url(secretPath) }), 201)
    const path = `/v1/staff/${member.id}/calendars/${created.id}`
    const listed = async () => {
      const page = expectStatus(await api.get(`/v1/staff/${member.id}/calendars`), 200)
      expect(page.data).toHaveLength(1)
      return page.data[0]
    }

    await syncAndRead(path)
    expect(await listed()).toMatchObject({
      status: "failing",
      last_synced_at: null,
      last_error: "the feed answered HTTP 503",
      event_count: 0
    })

    feeds.set(secretPath, { kind: "ics", body: fixture("google.ics") })
    await server.advance(MINUTE)
    await syncAndRead(path)
    await server.advance(MINUTE)
    const lastGood = await syncAndRead(path)
    feeds.set(secretPath, { kind: "status", status: 500, body: "oops" })
    await server.advance(MINUTE)
    await syncAndRead(path)
    await server.advance(MINUTE)
    await syncAndRead(path)
    // The last good sync's time and count stay; the error says why the latest failed.
    const failing = await listed()
    expect(failing).toMatchObject({ status: "failing", last_error: "the feed answered HTTP 500", event_count: 5 })
    expect(lastGood.last_synced_at).not.toBeNull()
    expect(failing.last_synced_at).toBe(lastGood.last_synced_at)

    expectStatus(await api.del(path), 200)
    const reply = await api.get("/v1/events?types=calendar.created,calendar.updated,calendar.deleted&limit=100")
    const events = expectStatus(reply, 200).data.filter((e: any) => e.data.object.id === created.id)
    expect(events.map((e: any) => [e.type, e.data.previous?.status, e.data.object.status])).toEqual([
      ["calendar.created", undefined, "pending"],
      ["calendar.updated", "pending", "failing"],
      ["calendar.updated", "failing", "synced"],
      ["calendar.updated", "synced", "failing"],
      ["calendar.deleted", undefined, "failing"]
    ])
    expect(reply.text).not.toContain("private-3f9a7c1e")
  })

  it("refuses bad addresses and unknown staff with problem documents", async () => {
    const bad = expectProblem(
      await api.post(`/v1/staff/${setup.staff.id}/calendars`, { url: "ftp://example.com/cal.ics", x: 1 }),
      422,
      "validation_failed"
    )
    expect(bad.errors.map((e: any) => e.path).sort()).toEqual(["url", "x"])
    expectProblem(await api.post(`/v1/staff/${setup.staff.id}/calendars`, { url: "not a url" }), 422, "validation_failed")
    expectProblem(
      await api.post("/v1/staff/stf_01M81G7CF47EWTRN03532QCJJZ/calendars", { url: "https://example.com/a.ics" }),
      404,
      "not_found"
    )
    expectProblem(await api.post(`/v1/staff/${setup.staff.id}/calendars/cal_01M81G7CF47EWTRN03532QCJJZ/sync`), 404, "not_found")
  })

  it("refuses private addresses unless the server allows them, webcal:// included", async () => {
    const strict = await startServer({ now: NOW })
    try {
      const strictApi = client(strict.url, strict.first.keys.sandbox.secret)
      const staff = expectStatus(await strictApi.post("/v1/staff", { name: "Bo", time_zone: "UTC" }), 201)
      for (const url of [feeds.url("/google.ics"), "webcal://localhost/cal.ics", "https://10.0.0.8/cal.ics", "http://[::1]/x.ics"]) {
        const refused = expectProblem(await strictApi.post(`/v1/staff/${staff.id}/calendars`, { url }), 422, "validation_failed")
        expect(refused.errors[0].path).toBe("url")
      }
    } finally {
      await strict.close()
    }
  })
})
