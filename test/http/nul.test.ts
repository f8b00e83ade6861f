/**
 * NUL characters (U+0000) and unpaired UTF-16 surrogates (`"\ud800"` in a JSON body) from the
 * outside: PostgreSQL cannot hold a NUL in text or jsonb, and cannot read a document holding
 * an unpaired surrogate, so the server refuses both before storage on every storage alike. A
 * path id with a NUL names nothing (404); a query parameter holding one is a 400 naming it; a
 * body string or metadata key holding one is a 422 naming the field. Nothing is written and nothing answers 500.
 */
import { HttpApi } from "@effect/platform"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { StorageChoice } from "../../compose.js"
import { SlotwiseApi } from "../../adapters/http/api.js"
import { createTestDatabase, type TestDatabase } from "../postgres/database.js"
import {
  ADMIN_TOKEN,
  client,
  type Client,
  expectProblem,
  expectStatus,
  MONDAY_9,
  type Reply,
  seed,
  startServer,
  type TestServer
} from "./harness.js"

const NUL_MESSAGE = "must not contain a NUL character or an unpaired surrogate"
const NUL_KEY_MESSAGE = "must not have a key that contains a NUL character or an unpaired surrogate"

/** Every endpoint with an id in its path, from the contract itself. */
const idRoutes: Array<{ readonly method: string; readonly path: string }> = []
HttpApi.reflect(SlotwiseApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    if (endpoint.path.includes("/:")) idRoutes.push({ method: endpoint.method, path: endpoint.path })
  }
})

interface Storage {
  readonly name: string
  readonly choice: () => StorageChoice
  readonly setUp: () => Promise<void>
  readonly tearDown: () => Promise<void>
}

let database: TestDatabase | undefined
let directory: string | undefined
const storages: ReadonlyArray<Storage> = [
  { name: "memory", choice: () => "memory", setUp: async () => {}, tearDown: async () => {} },
  {
    name: "SQLite",
    choice: () => ({ sqlite: path.join(directory!, "nul.db") }),
    setUp: async () => void (directory = mkdtempSync(path.join(tmpdir(), "slotwise-nul-"))),
    tearDown: async () => rmSync(directory!, { recursive: true, force: true })
  },
  {
    name: "PostgreSQL",
    choice: () => ({ postgres: database!.url }),
    setUp: async () => void (database = await createTestDatabase()),
    tearDown: async () => database?.drop()
  }
]

/** Every event of the tenant: each write appends one, so an unchanged count means nothing was written. */
const eventCount = async (api: Client): Promise<number> => {
  let count = 0
  let after = ""
  for (;;) {
    const page: any = expectStatus(await api.get(`/v1/events?limit=100${after === "" ? "" : `&after=${after}`}`), 200)
    if (page.data.length === 0) return count
    count += page.data.length
    after = page.next_cursor
  }
}

/** A cursor this server issued for `path`, with its sort key rewritten by `forge` (undefined if that changes nothing). */
const forgedCursor = async (api: Client, listPath: string, forge: (key: Array<unknown>) => Array<unknown>): Promise<string | undefined> => {
  const page = expectStatus(await api.get(`${listPath}?limit=1`), 200)
  expect(page.next_cursor).toEqual(expect.any(String))
  const parsed = JSON.parse(Buffer.from(page.next_cursor, "base64url").toString("utf8"))
  const forged = forge(parsed.k)
  return JSON.stringify(forged) === JSON.stringify(parsed.k)
    ? undefined
    : Buffer.from(JSON.stringify({ ...parsed, k: forged })).toString("base64url")
}

const expectNulField = (reply: Reply, status: 400 | 422, field: string, message = NUL_MESSAGE) => {
  const problem = expectProblem(reply, status, status === 400 ? "bad_request" : "validation_failed")
  expect(problem.errors).toContainEqual({ path: field, message })
  expect(problem.detail).toContain(field)
  expect(reply.text).not.toContain("\\u0000")
}

describe.each(storages)("NUL characters on $name storage", (storage) => {
  let server: TestServer
  let api: Client
  let admin: Client
  let ids: Awaited<ReturnType<typeof seed>>
  let booking: { id: string }

  beforeAll(async () => {
    await storage.setUp()
    server = await startServer({ storage: storage.choice() })
    api = client(server.url, server.first.keys.sandbox.secret)
    admin = client(server.url, ADMIN_TOKEN)
    ids = await seed(api)
    booking = expectStatus(
      await api.post("/v1/bookings", { service_id: ids.service.id, staff_id: ids.staff.id, client_id: ids.client.id, start: MONDAY_9 }),
      201
    )
    // A second page exists for every list a cursor is forged from.
    expectStatus(
      await api.post("/v1/bookings", {
        service_id: ids.service.id,
        staff_id: ids.staff.id,
        client_id: ids.client.id,
        start: "2027-03-29T10:00:00Z"
      }),
      201
    )
    expectStatus(await api.post("/v1/staff", { name: "Bea", time_zone: "UTC" }), 201)
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await storage.tearDown()
  })

  it("a path id holding a NUL is 404 on every route that takes an id, and writes nothing", async () => {
    expect(idRoutes.length).toBeGreaterThan(20)
    const before = await eventCount(api)
    for (const route of idRoutes) {
      for (const id of ["%00", "bkg_%00x", `${booking.id}%00`]) {
        const url = route.path.replace(/:\w+/g, id)
        const caller = url.startsWith("/admin/") ? admin : api
        const reply = await caller.send(route.method, url, route.method === "GET" || route.method === "DELETE" ? {} : { body: {} })
        // A body the action needs may be refused first (422), and so may the query a manage
        // token's slots need (400); the id is never looked up in storage.
        const refusedFirst = route.method === "GET" || route.method === "DELETE" ? (url.endsWith("/slots") ? "400" : "") : "422"
        expect(`${route.method} ${url} → ${reply.status}`).toMatch(new RegExp(` (404${refusedFirst === "" ? "" : `|${refusedFirst}`})$`))
        expectProblem(reply, reply.status)
        expect(reply.text).not.toContain("\\u0000")
      }
    }
    expect(await eventCount(api)).toBe(before)
    expect(expectStatus(await api.get(`/v1/bookings/${booking.id}`), 200).status).toBe("confirmed")
  })

  it("a query parameter holding a NUL is 400 naming the parameter", async () => {
    const cases: Array<[string, string]> = [
      ["/v1/bookings?status=%00", "status"],
      [`/v1/bookings?staff_id=${ids.staff.id}%00`, "staff_id"],
      [`/v1/bookings?client_id=%00${ids.client.id}`, "client_id"],
      ["/v1/bookings?start_from=2027-03-29T00:00:00Z%00", "start_from"],
      ["/v1/bookings?cursor=%00", "cursor"],
      ["/v1/clients?email=bob%00@example.com", "email"],
      ["/v1/staff?cursor=abc%00def", "cursor"],
      ["/v1/api-keys?type=%00", "type"],
      ["/v1/availability?staff_id=%00", "staff_id"],
      ["/v1/events?types=booking.created%00", "types"],
      [
        `/v1/availability/slots?service_id=${ids.service.id}&start=2027-03-29T00:00:00Z&end=2027-03-30T00:00:00Z&time_zone=UTC%00`,
        "time_zone"
      ]
    ]
    for (const [url, parameter] of cases) expectNulField(await api.get(url), 400, parameter)
    // The documented JSON body of GET /v1/bookings is a query too.
    expectNulField(await api.send("GET", "/v1/bookings", { body: { staff_id: `${ids.staff.id}\u0000` } }), 400, "staff_id")
  })

  it("a cursor whose sort key was forged (a NUL, text where a number sorts, a fraction, a value too many) is 400 on cursor", async () => {
    const forgeries: Array<(key: Array<unknown>) => Array<unknown>> = [
      (key) => key.map((v) => typeof v === "string" ? "a\u0000b" : v),
      (key) => key.map((v) => typeof v === "number" ? "abc" : 42),
      (key) => key.map((v) => typeof v === "number" ? 1.5 : 1e300),
      (key) => [...key, "extra"],
      () => []
    ]
    let forged = 0
    for (const [list, parameter] of [["/v1/bookings", "cursor"], ["/v1/staff", "cursor"], ["/v1/events", "after"]] as const) {
      for (const forge of forgeries) {
        const cursor = await forgedCursor(api, list, forge)
        if (cursor === undefined) continue
        forged++
        const problem = expectProblem(await api.get(`${list}?limit=1&${parameter}=${cursor}`), 400, "bad_request")
        expect(problem.errors).toEqual([{ path: parameter, message: "is not a cursor this API issued" }])
      }
    }
    expect(forged).toBeGreaterThanOrEqual(12)
  })

  it("a body string, metadata key or metadata value holding a NUL is 422 naming the field, and writes nothing", async () => {
    const before = await eventCount(api)
    const staffBefore = expectStatus(await api.get("/v1/staff?limit=100"), 200).data.length
    expectNulField(await api.post("/v1/staff", { name: "a\u0000b", time_zone: "UTC" }), 422, "name")
    expectNulField(await api.post("/v1/staff", { name: "Ana", time_zone: "UTC", email: "a\u0000@example.com" }), 422, "email")
    expectNulField(await api.post("/v1/clients", { name: "Bob", metadata: { tag: "v\u0000" } }), 422, "metadata.tag")
    expectNulField(await api.post("/v1/clients", { name: "Bob", metadata: { "t\u0000ag": "v" } }), 422, "metadata", NUL_KEY_MESSAGE)
    expectNulField(await api.post("/v1/clients", { name: "Bob", notes: "\u0000" }), 422, "notes")
    expectNulField(await api.patch(`/v1/services/${ids.service.id}`, { description: "x\u0000" }), 422, "description")
    expectNulField(await api.patch(`/v1/bookings/${booking.id}`, { notes: "\u0000" }), 422, "notes")
    expectNulField(
      await api.post("/v1/bookings", {
        service_id: ids.service.id,
        staff_id: ids.staff.id,
        client: { name: "N\u0000" },
        start: "2027-03-29T11:00:00Z"
      }),
      422,
      "client.name"
    )
    expectNulField(await api.post(`/v1/bookings/${booking.id}/cancel`, { reason: "\u0000" }), 422, "reason")
    expectNulField(await api.post("/v1/webhooks", { url: "https://example.com/\u0000", events: ["*"] }), 422, "url")
    expectNulField(await api.post("/v1/api-keys", { name: "k\u0000", type: "secret" }), 422, "name")
    expectNulField(
      await api.post("/v1/availability", {
        staff_id: ids.staff.id,
        type: "weekly",
        weekdays: [6],
        start_time: "09:00",
        end_time: "10:00",
        metadata: { a: "\u0000" }
      }),
      422,
      "metadata.a"
    )
    expectNulField(await admin.post("/admin/v1/accounts", { name: "N\u0000", plan: "free" }), 422, "name")
    expectNulField(await api.post("/v1/staff", { name: "Ana", time_zone: "UTC", "ex\u0000tra": 1 }), 422, "", NUL_KEY_MESSAGE)
    expect(await eventCount(api)).toBe(before)
    expect(expectStatus(await api.get("/v1/staff?limit=100"), 200).data).toHaveLength(staffBefore)
    expect(expectStatus(await api.get(`/v1/bookings/${booking.id}`), 200)).toMatchObject({ status: "confirmed", notes: null })
  })

  it("a body string or metadata key holding an unpaired surrogate is 422 naming the field, by secret and publishable keys, and writes nothing", async () => {
    const before = await eventCount(api)
    const publishable = client(server.url, server.first.keys.sandbox.publishable)
    for (const lone of ["\ud800", "a\udfffb", "\udc00\ud800"]) {
      expectNulField(await api.post("/v1/clients", { name: lone }), 422, "name")
      expectNulField(await api.post("/v1/clients", { name: "Bob", metadata: { [`k${lone}`]: "v" } }), 422, "metadata", NUL_KEY_MESSAGE)
      expectNulField(await api.patch(`/v1/bookings/${booking.id}`, { notes: lone }), 422, "notes")
      expectNulField(
        await api.post("/v1/bookings", {
          service_id: ids.service.id,
          staff_id: ids.staff.id,
          client: { name: lone },
          start: "2027-03-29T11:00:00Z"
        }),
        422,
        "client.name"
      )
      const visitor = { service_id: ids.service.id, staff_id: ids.staff.id, start: "2027-03-29T11:30:00Z" }
      const fromPage = { headers: { origin: "http://localhost:5173" } }
      expectNulField(
        await publishable.post("/v1/bookings", { ...visitor, client: { name: lone, email: "v@example.com" } }, fromPage),
        422,
        "client.name"
      )
      expectNulField(
        await publishable.post("/v1/bookings", { ...visitor, client: { name: "Vi", email: "v@example.com" }, notes: lone }, fromPage),
        422,
        "notes"
      )
    }
    // A well-formed pair (an emoji) is text like any other.
    expect(expectStatus(await api.post("/v1/clients", { name: "Bob \ud83d\ude00" }), 201).name).toBe("Bob \u{1F600}")
    expect(await eventCount(api)).toBe(before + 1)
    expect(expectStatus(await api.get(`/v1/bookings/${booking.id}`), 200)).toMatchObject({ status: "confirmed", notes: null })
  })

  it("a header value holding a NUL is refused before the app runs", async () => {
    const before = await eventCount(api)
    const body = JSON.stringify({ name: "Header" })
    const reply = await rawExchange(
      server.url,
      `POST /v1/staff HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.first.keys.sandbox.secret}\r\n` +
        `Idempotency-Key: a\u0000b\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    )
    expect(reply).toMatch(/^HTTP\/1\.1 400 /)
    expect(reply).toContain("application/problem+json")
    expect(await eventCount(api)).toBe(before)
  })
})

/** One request written raw on a socket; the whole answer once the server closes. */
const rawExchange = (base: string, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const url = new URL(base)
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(text))
    let out = ""
    socket.on("data", (d) => (out += d))
    socket.on("close", () => resolve(out))
    socket.on("error", reject)
  })
