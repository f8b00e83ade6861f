/**
 * The event feed over HTTP: commit order, type filters, cursors, one event by id, every
 * error class, and a poller that follows `next_cursor` while four writers commit
 * concurrently (on SQLite) and sees every event exactly once, in order.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  type Client,
  expectProblem,
  expectStatus,
  MONDAY_9,
  newAccount,
  scopedKey,
  seed,
  startServer,
  type TestServer
} from "./harness.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-events-"))
let server: TestServer
let api: Client
const ORIGIN = "https://shop.example.com"

beforeAll(async () => {
  server = await startServer({ storage: { sqlite: path.join(dir, "events.db") } })
  api = client(server.url, (await newAccount(server, { allowed_origins: [ORIGIN] })).keys.sandbox.secret)
})
afterAll(async () => {
  await server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Every event of the tenant, following `next_cursor` pages of `limit`. */
const readAll = async (viewer: Client, query = "", limit = 100) => {
  const events: Array<any> = []
  let after: string | undefined
  for (;;) {
    const page = expectStatus(await viewer.get(`/v1/events?limit=${limit}${query}${after !== undefined ? `&after=${after}` : ""}`), 200)
    events.push(...page.data)
    expect(typeof page.next_cursor).toBe("string")
    after = page.next_cursor
    if (!page.has_more) return { events, after: after! }
  }
}

describe("GET /v1/events", () => {
  it("lists the tenant's events in commit order, by type, page by page; GET /v1/events/{id} reads one", async () => {
    const s = await seed(api)
    const booking = expectStatus(
      await api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
      201
    )
    expectStatus(await api.patch(`/v1/clients/${s.client.id}`, { name: "Bobby" }), 200)

    const { events, after } = await readAll(api)
    expect(events.map((e) => e.type)).toEqual([
      "staff.created",
      "service.created",
      "availability.created",
      "client.created",
      "booking.created",
      "client.updated"
    ])
    for (const e of events) expect(e).toMatchObject({ object: "event", id: expect.stringMatching(/^evt_/), created_at: expect.any(String) })
    expect(events[4].data.object).toMatchObject({ id: booking.id, object: "booking" })
    expect(events[5].data.previous).toMatchObject({ name: "Bob" })

    // Pages of 2 give the same sequence; the last page's cursor is set and later reads start after it.
    expect((await readAll(api, "", 2)).events.map((e) => e.id)).toEqual(events.map((e) => e.id))
    const empty = expectStatus(await api.get(`/v1/events?after=${after}`), 200)
    expect(empty).toMatchObject({ object: "list", data: [], has_more: false })
    expect(empty.next_cursor).toBe(after)
    expectStatus(await api.post("/v1/clients", { name: "Later" }), 201)
    const later = expectStatus(await api.get(`/v1/events?after=${after}`), 200)
    expect(later.data.map((e: any) => e.type)).toEqual(["client.created"])

    // Types: comma-separated or repeated.
    const clients = expectStatus(await api.get("/v1/events?types=client.created,client.updated"), 200)
    expect(clients.data.map((e: any) => e.type)).toEqual(["client.created", "client.updated", "client.created"])
    const repeated = expectStatus(await api.get("/v1/events?types=staff.created&types=booking.created"), 200)
    expect(repeated.data.map((e: any) => e.type)).toEqual(["staff.created", "booking.created"])

    const one = expectStatus(await api.get(`/v1/events/${events[4].id}`), 200)
    expect(one).toEqual(events[4])
  })

  it("refuses what it must: 401, 403 (scope, publishable key), 404 (unknown, another tenant's), 400 for bad queries", async () => {
    const mine = (await readAll(api)).events[0]
    expectProblem(await client(server.url).get("/v1/events"), 401, "unauthorized")
    expectProblem(await client(server.url).get(`/v1/events/${mine.id}`), 401, "unauthorized")
    expectProblem(await client(server.url, "sk_test_nope").get("/v1/events"), 401, "unauthorized")

    const bookingsOnly = client(server.url, await scopedKey(api, ["bookings:read", "webhooks:read"]))
    expectProblem(await bookingsOnly.get("/v1/events"), 403, "forbidden")
    expectProblem(await bookingsOnly.get(`/v1/events/${mine.id}`), 403, "forbidden")
    const eventsOnly = client(server.url, await scopedKey(api, ["events:read"]))
    expectStatus(await eventsOnly.get(`/v1/events/${mine.id}`), 200)

    const other = await newAccount(server, { allowed_origins: [ORIGIN] })
    const widget = client(server.url, other.keys.sandbox.publishable)
    for (const p of ["/v1/events", `/v1/events/${mine.id}`]) {
      expectProblem(await widget.get(p, { headers: { origin: ORIGIN } }), 403, "forbidden")
    }

    const stranger = client(server.url, other.keys.sandbox.secret)
    expectProblem(await stranger.get(`/v1/events/${mine.id}`), 404, "not_found")
    expect(expectStatus(await stranger.get("/v1/events"), 200).data).toEqual([])
    const live = client(server.url, other.keys.production.secret)
    expectProblem(await live.get(`/v1/events/${mine.id}`), 404, "not_found")
    expectProblem(await api.get("/v1/events/evt_nothing"), 404, "not_found")

    const cursor = expectStatus(await api.get("/v1/events?types=client.created&limit=1"), 200).next_cursor
    for (
      const [query, field] of [
        ["limit=0", "limit"],
        ["limit=101", "limit"],
        ["limit=many", "limit"],
        ["types=booking.exploded", "types"],
        ["types=client.created,nope", "types"],
        ["after=not-a-cursor", "after"],
        [`after=${cursor}`, "after"], // issued for other filters
        ["colour=red", "colour"],
        ["cursor=abc", "cursor"]
      ] as const
    ) {
      const problem = expectProblem(await api.get(`/v1/events?${query}`), 400, "bad_request")
      expect(problem.errors.map((e: any) => String(e.path).split(".")[0])).toContain(field)
    }
  })
})

describe("polling under concurrent writers", () => {
  it("a poller following next_cursor while 4 writers commit sees every event exactly once, in commit order", async () => {
    const writerApi = client(server.url, (await newAccount(server)).keys.sandbox.secret)
    const PER_WRITER = 20
    let writing = true
    const writers = Promise.all(Array.from({ length: 4 }, async (_, w) => {
      const ids: Array<string> = []
      for (let i = 0; i < PER_WRITER; i++) {
        const created = expectStatus(await writerApi.post("/v1/clients", { name: `w${w}-${i}` }), 201)
        expectStatus(await writerApi.patch(`/v1/clients/${created.id}`, { notes: `n${i}` }), 200)
        ids.push(created.id)
      }
      return ids
    })).finally(() => (writing = false))

    const seen: Array<any> = []
    const seenUpdates: Array<any> = []
    let after: string | undefined
    let afterUpdates: string | undefined
    const poll = async () => {
      for (;;) {
        const page = expectStatus(await writerApi.get(`/v1/events?limit=7${after !== undefined ? `&after=${after}` : ""}`), 200)
        seen.push(...page.data)
        after = page.next_cursor
        if (!page.has_more) break
      }
      for (;;) {
        const page = expectStatus(
          await writerApi.get(`/v1/events?types=client.updated&limit=5${afterUpdates !== undefined ? `&after=${afterUpdates}` : ""}`),
          200
        )
        seenUpdates.push(...page.data)
        afterUpdates = page.next_cursor
        if (!page.has_more) break
      }
    }
    let polls = 0
    while (writing) {
      await poll()
      polls++
    }
    const perWriter = await writers
    await poll()

    const all = (await readAll(writerApi)).events
    expect(all).toHaveLength(4 * PER_WRITER * 2)
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length) // never repeated
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id)) // none missed, commit order
    expect(seenUpdates.map((e) => e.id)).toEqual(all.filter((e) => e.type === "client.updated").map((e) => e.id))
    // Each writer's own changes appear in the order it made them.
    for (const ids of perWriter) {
      const created = seen.filter((e) => e.type === "client.created" && ids.includes(e.data.object.id)).map((e) => e.data.object.id)
      expect(created).toEqual(ids)
    }
    expect(polls).toBeGreaterThan(1)
  })
})

describe("OpenAPI", () => {
  it("documents the events, webhooks and sandbox routes with their scopes", async () => {
    const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
    const routes = Object.entries<any>(spec.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`))
    for (
      const route of [
        "GET /v1/events",
        "GET /v1/events/{id}",
        "GET /v1/webhooks",
        "POST /v1/webhooks",
        "GET /v1/webhooks/{id}",
        "PATCH /v1/webhooks/{id}",
        "DELETE /v1/webhooks/{id}",
        "POST /v1/webhooks/{id}/rotate-secret",
        "GET /v1/webhooks/{id}/deliveries",
        "GET /v1/webhooks/{id}/deliveries/{did}",
        "POST /v1/webhooks/{id}/deliveries/{did}/retry",
        "POST /v1/webhooks/{id}/test",
        "POST /v1/webhooks/{id}/recover",
        "POST /v1/sandbox/events",
        "POST /v1/sandbox/reset"
      ]
    ) expect(routes).toContain(route)
    expect(spec.paths["/v1/events"].get.description).toContain("`events:read`")
    expect(spec.paths["/v1/webhooks"].post.description).toContain("`webhooks:write`")
    expect(spec.paths["/v1/webhooks/{id}"].get.description).toContain("`webhooks:read`")
    expect(spec.paths["/v1/events"].get.parameters.map((p: any) => p.name).sort()).toEqual(["after", "limit", "types"])
    // The secret is in the create and rotate responses only.
    const schemaOf = (op: any, status: string) => {
      const schema = op.responses[status].content["application/json"].schema
      return schema.$ref !== undefined ? spec.components.schemas[schema.$ref.split("/").pop()] : schema
    }
    expect(schemaOf(spec.paths["/v1/webhooks"].post, "201").required).toContain("secret")
    expect(schemaOf(spec.paths["/v1/webhooks/{id}/rotate-secret"].post, "200").required).toContain("secret")
    expect(schemaOf(spec.paths["/v1/webhooks/{id}"].get, "200").properties.secret).toBeUndefined()
    expect(schemaOf(spec.paths["/v1/webhooks/{id}"].patch, "200").properties.secret).toBeUndefined()
    expect(JSON.stringify(schemaOf(spec.paths["/v1/webhooks"].get, "200"))).not.toContain("secret")
    expect(Object.keys(spec.paths["/v1/sandbox/reset"].post.responses)).toContain("204")
    expect(Object.keys(spec.paths["/v1/webhooks/{id}/test"].post.responses)).toContain("202")
  })
})
