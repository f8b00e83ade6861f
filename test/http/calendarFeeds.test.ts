/**
 * Calendar feeds over HTTP: making, reading and ending the secret URLs with their scopes, and
 * `GET /calendar/<token>.ics` as a calendar app sees it (iCalendar text, ETag and 304, caching,
 * no CORS, one 404 for every URL that opens no feed, a limit per client address).
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler } from "../../index.js"
import { parseFeed } from "../support/ical.js"
import {
  client,
  type Client,
  expectProblem,
  expectStatus,
  newAccount,
  request,
  scopedKey,
  seed,
  startServer,
  type TestServer
} from "./harness.js"

const PUBLIC_URL = "https://api.slotwise.example"
const MONDAY_9 = "2027-03-29T09:00:00Z"

let server: TestServer
let api: Client
let anonymous: Client

beforeAll(async () => {
  server = await startServer({ serve: { publicUrl: PUBLIC_URL } })
  api = client(server.url, server.first.keys.sandbox.secret)
  anonymous = client(server.url)
})
afterAll(() => server?.close())

/** The path of a feed URL made under the public URL. */
const pathOf = (url: string) => {
  expect(url.startsWith(`${PUBLIC_URL}/calendar/`)).toBe(true)
  return url.slice(PUBLIC_URL.length)
}

describe("a staff member's feed", () => {
  it("is made once with its URL, read back without it, served as iCalendar with an ETag, and 304 when unchanged", async () => {
    const { staff, service, client: person } = await seed(api)
    const booking = expectStatus(
      await api.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: person.id, start: MONDAY_9 }),
      201
    )
    const created = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    expect(Object.keys(created).sort()).toEqual(["created_at", "object", "staff_id", "url"])
    expect(created).toMatchObject({ object: "calendar_feed", staff_id: staff.id })
    expect(created.url).toMatch(/^https:\/\/api\.slotwise\.example\/calendar\/[A-Za-z0-9_-]{43}\.ics$/)
    const token = /([A-Za-z0-9_-]{43})\.ics$/.exec(created.url)![1]!

    const state = await api.get(`/v1/staff/${staff.id}/calendar-feed`)
    expect(state.json).toEqual({ object: "calendar_feed", staff_id: staff.id, created_at: created.created_at })
    expect(state.text).not.toContain(token)

    const feed = await anonymous.get(pathOf(created.url), { headers: { origin: "https://evil.example" } })
    expect(feed.status).toBe(200)
    expect(feed.headers.get("content-type")).toBe("text/calendar; charset=utf-8")
    expect(feed.headers.get("cache-control")).toBe("private, max-age=300")
    expect(feed.headers.get("access-control-allow-origin")).toBeNull()
    const etag = feed.headers.get("etag")!
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)
    expect(feed.text).not.toContain(token)
    const parsed = parseFeed(feed.text)
    expect(parsed.name).toBe("Ana")
    expect(parsed.events).toEqual([expect.objectContaining({
      uid: `${booking.id}@api.slotwise.example`,
      status: "CONFIRMED",
      sequence: 0,
      start: MONDAY_9,
      end: "2027-03-29T09:30:00Z",
      summary: "Cut: Bob"
    })])

    const again = await anonymous.get(pathOf(created.url), { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(again.text).toBe("")
    expect(again.headers.get("etag")).toBe(etag)

    // A change of the booking changes the body, so the old ETag no longer matches.
    expectStatus(await api.patch(`/v1/bookings/${booking.id}`, { notes: "window seat" }), 200)
    const changed = await anonymous.get(pathOf(created.url), { headers: { "if-none-match": etag } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get("etag")).not.toBe(etag)
    expect(parseFeed(changed.text).events[0]).toMatchObject({ sequence: 1, description: "window seat" })

    // The secret never shows up anywhere else: not in the events, not in the booking.
    expect((await api.get("/v1/events?limit=100")).text).not.toContain(token)
  })

  it("rotates on a second POST (the old URL 404s at once), and DELETE turns it off", async () => {
    const staff = expectStatus(await api.post("/v1/staff", { name: "Rota", time_zone: "UTC" }), 201)
    const first = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    const second = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    expect(second.url).not.toBe(first.url)
    const gone = expectProblem(await anonymous.get(pathOf(first.url)), 404, "not_found")
    expect(await anonymous.get(pathOf(second.url))).toMatchObject({ status: 200 })

    const deleted = expectStatus(await api.del(`/v1/staff/${staff.id}/calendar-feed`), 200)
    expect(deleted).toEqual({ object: "calendar_feed", staff_id: staff.id, created_at: second.created_at })
    expectProblem(await api.get(`/v1/staff/${staff.id}/calendar-feed`), 404, "not_found")
    expectProblem(await api.del(`/v1/staff/${staff.id}/calendar-feed`), 404, "not_found")
    const off = expectProblem(await anonymous.get(pathOf(second.url)), 404, "not_found")

    // Every URL that opens no feed gets the very same answer.
    const unknown = await anonymous.get(`/calendar/${"A".repeat(43)}.ics`)
    const malformed = await anonymous.get("/calendar/nope.ics")
    const withNul = await anonymous.get(`/calendar/${"A".repeat(42)}%00.ics`)
    const noSuffix = await anonymous.get(`/calendar/${"A".repeat(43)}`)
    for (const reply of [unknown, malformed, withNul, noSuffix]) expect(expectProblem(reply, 404, "not_found")).toEqual(gone)
    expect(off).toEqual(gone)
    expectProblem(await api.post("/v1/staff/stf_01J00000000000000000000000/calendar-feed"), 404, "not_found")
  })

  it("needs staff:write to make or end and staff:read to read; publishable keys never", async () => {
    const staff = expectStatus(await api.post("/v1/staff", { name: "Scoped", time_zone: "UTC" }), 201)
    const reader = client(server.url, await scopedKey(api, ["staff:read"]))
    const writer = client(server.url, await scopedKey(api, ["staff:write"]))
    const publishable = client(server.url, server.first.keys.sandbox.publishable)
    expectProblem(await reader.post(`/v1/staff/${staff.id}/calendar-feed`), 403)
    expectProblem(await reader.del(`/v1/staff/${staff.id}/calendar-feed`), 403)
    expectStatus(await writer.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    expectStatus(await reader.get(`/v1/staff/${staff.id}/calendar-feed`), 200)
    for (
      const reply of [
        await publishable.post(`/v1/staff/${staff.id}/calendar-feed`),
        await publishable.get(`/v1/staff/${staff.id}/calendar-feed`),
        await publishable.post("/v1/calendar-feed")
      ]
    ) expect([401, 403]).toContain(reply.status)
    expectProblem(await anonymous.post(`/v1/staff/${staff.id}/calendar-feed`), 401)
  })
})

describe("the account's feed", () => {
  it("needs staff:write and bookings:read, shows every staff member's bookings, and never another tenant's", async () => {
    const other = await newAccount(server)
    const theirs = client(server.url, other.keys.sandbox.secret)
    const mine = await seed(api)
    const booking = expectStatus(
      await api.post("/v1/bookings", {
        service_id: mine.service.id,
        staff_id: mine.staff.id,
        client_id: mine.client.id,
        start: "2027-03-30T10:00:00Z"
      }),
      201
    )
    const foreign = await seed(theirs)
    const foreignBooking = expectStatus(
      await theirs.post("/v1/bookings", {
        service_id: foreign.service.id,
        staff_id: foreign.staff.id,
        client_id: foreign.client.id,
        start: MONDAY_9
      }),
      201
    )

    expectProblem(await client(server.url, await scopedKey(api, ["staff:write"])).post("/v1/calendar-feed"), 403)
    const both = client(server.url, await scopedKey(api, ["staff:write", "bookings:read"]))
    const created = expectStatus(await both.post("/v1/calendar-feed"), 201)
    expect(created.staff_id).toBeNull()
    expect(expectStatus(await api.get("/v1/calendar-feed"), 200)).toEqual({
      object: "calendar_feed",
      staff_id: null,
      created_at: created.created_at
    })
    const uids = parseFeed((await anonymous.get(pathOf(created.url))).text).events.map((e) => e.uid.split("@")[0])
    expect(uids).toContain(booking.id)
    expect(uids).not.toContain(foreignBooking.id)

    // The other account has no feed of its own, and cannot reach this one's staff.
    expectProblem(await theirs.get("/v1/calendar-feed"), 404, "not_found")
    expectProblem(await theirs.post(`/v1/staff/${mine.staff.id}/calendar-feed`), 404, "not_found")
    const theirFeed = expectStatus(await theirs.post(`/v1/staff/${foreign.staff.id}/calendar-feed`), 201)
    expect(parseFeed((await anonymous.get(pathOf(theirFeed.url))).text).events.map((e) => e.uid.split("@")[0])).toEqual([foreignBooking.id])

    expectStatus(await both.del("/v1/calendar-feed"), 200)
    expectProblem(await anonymous.get(pathOf(created.url)), 404, "not_found")
  })
})

describe("the feed URL's rate limit", () => {
  it("counts fetches per client address like every request without a credential", async () => {
    const own = await startServer()
    try {
      const owner = client(own.url, own.first.keys.sandbox.secret)
      const staff = expectStatus(await owner.post("/v1/staff", { name: "Busy", time_zone: "UTC" }), 201)
      const created = expectStatus(await owner.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
      expect(created.url.startsWith(own.url)).toBe(true)
      const path = created.url.slice(own.url.length)
      const statuses: Array<number> = []
      for (let i = 0; i < 61; i++) statuses.push((await request(own.url, "GET", path)).status)
      expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true)
      expect(statuses[60]).toBe(429)
      await own.advance(60_000)
      expect((await request(own.url, "GET", path)).status).toBe(200)
    } finally {
      await own.close()
    }
  })
})

describe("events", () => {
  it("records calendar_feed.created, .rotated and .deleted without the URL or token", async () => {
    const staff = expectStatus(await api.post("/v1/staff", { name: "Eve", time_zone: "UTC" }), 201)
    const first = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    const second = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
    expectStatus(await api.del(`/v1/staff/${staff.id}/calendar-feed`), 200)
    const reply = await api.get("/v1/events?types=calendar_feed.created,calendar_feed.rotated,calendar_feed.deleted&limit=100")
    const feed = expectStatus(reply, 200).data.filter((e: any) => e.data.object.staff_id === staff.id)
    const shown = ({ url: _url, ...rest }: any) => rest
    expect(feed.map((e: any) => e.type)).toEqual(["calendar_feed.created", "calendar_feed.rotated", "calendar_feed.deleted"])
    expect(feed.map((e: any) => e.data)).toEqual([
      { object: shown(first) },
      { object: shown(second), previous: shown(first) },
      { object: shown(second) }
    ])
    for (const made of [first, second]) expect(reply.text).not.toContain(/([A-Za-z0-9_-]{43})\.ics$/.exec(made.url)![1]!)
  })
})

describe("the public URL", () => {
  it("without --public-url: feed URLs, their UIDs and manage links all start with the listening address, whatever Host says", async () => {
    const own = await startServer()
    try {
      const ownApi = client(own.url, own.first.keys.sandbox.secret)
      const forged = { headers: { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" } }
      const { staff, service, client: person } = await seed(ownApi)
      const booking = expectStatus(
        await ownApi.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: person.id, start: MONDAY_9 }, forged),
        201
      )
      expect(booking.manage_url.startsWith(`${own.url}/manage/`)).toBe(true)
      const created = expectStatus(await ownApi.post(`/v1/staff/${staff.id}/calendar-feed`, undefined, forged), 201)
      expect(created.url).toMatch(new RegExp(`^${own.url}/calendar/[A-Za-z0-9_-]{43}\\.ics$`))
      const fetched = await request(own.url, "GET", created.url.slice(own.url.length), forged)
      expect(fetched.status).toBe(200)
      expect(parseFeed(fetched.text).events.map((e) => e.uid)).toEqual([`${booking.id}@127.0.0.1`])
    } finally {
      await own.close()
    }
  })
})

describe("under a mount prefix", () => {
  it("makes feed URLs and manage links under the handler's public URL, prefix included, and serves them there", async () => {
    let slotwise: Awaited<ReturnType<typeof createHttpHandler>> | undefined
    const host = http.createServer((req, res) => slotwise!.node(req, res))
    try {
      await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
      const base = `http://127.0.0.1:${(host.address() as { port: number }).port}`
      slotwise = await createHttpHandler({ prefix: "/scheduling", publicUrl: `${base}/scheduling/`, webhooks: false })
      const key = (await slotwise.createAccount({ name: "Host", plan: "pro" })).keys.sandbox.secret
      const api = client(`${base}/scheduling`, key)
      const { staff, service, client: person } = await seed(api)
      const booking = expectStatus(
        await api.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, client_id: person.id, start: MONDAY_9 }),
        201
      )
      expect(booking.manage_url.startsWith(`${base}/scheduling/manage/`)).toBe(true)
      const created = expectStatus(await api.post(`/v1/staff/${staff.id}/calendar-feed`), 201)
      expect(created.url).toMatch(new RegExp(`^${base}/scheduling/calendar/[A-Za-z0-9_-]{43}\\.ics$`))
      const feed = await request(base, "GET", created.url.slice(base.length))
      expect(feed.status).toBe(200)
      expect(parseFeed(feed.text)).toMatchObject({ name: "Ana", events: [expect.objectContaining({ uid: `${booking.id}@127.0.0.1` })] })
    } finally {
      await new Promise((resolve) => host.close(resolve))
      await slotwise?.close()
    }
  })
})
