/**
 * What a publishable key can do, since anyone can copy one from a web page: holds short and
 * few per client address and per key, a rate limit per client address, public views of
 * services, staff and the booking it made, bookings only for new clients, and idempotency
 * keys apart from the account's. Client addresses come from `X-Forwarded-For` (the server
 * trusts its proxy here).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VISITOR_HOLD_MAX_TTL_SECONDS, VISITOR_HOLDS_PER_ADDRESS, VISITOR_HOLDS_PER_KEY } from "../../src/availability/hold.js"
import { ADMIN_TOKEN, client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"
const MINUTE = 60_000

let server: TestServer
beforeAll(async () => {
  server = await startServer({ trustProxy: true })
})
afterAll(() => server.close())

/** `minutes` after Monday 09:00 UTC, as the API writes instants. */
const at = (minutes: number) => new Date(Date.parse(MONDAY_9) + minutes * MINUTE).toISOString().replace(".000Z", "Z")

/** A fresh account that allows ORIGIN, seeded; its secret and publishable clients. */
const widgetAccount = async (body: Record<string, unknown> = {}) => {
  const acct = expectStatus(
    await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", {
      name: "Shop",
      plan: "business",
      allowed_origins: [ORIGIN],
      ...body
    }),
    201
  )
  const secret = client(server.url, acct.keys.sandbox.secret)
  const s = await seed(secret)
  const pk = client(server.url, acct.keys.sandbox.publishable)
  return { acct, secret, s, pk }
}

/** The request options of a visitor at `address` on the shop's page. */
const from = (address: string) => ({ headers: { origin: ORIGIN, "x-forwarded-for": address } })

describe("holds with a publishable key", () => {
  it("last at most 3 minutes (longer asks are shortened); secret keys keep up to 10", async () => {
    const { pk, s, secret } = await widgetAccount()
    const hold = (start: string, ttl?: number) => ({
      service_id: s.service.id,
      staff_id: s.staff.id,
      start,
      ...(ttl === undefined ? {} : { ttl_seconds: ttl })
    })
    const now = server.now()
    const asked = expectStatus(await pk.post("/v1/availability/holds", hold(at(0), 600), from("203.0.113.1")), 201)
    expect(Date.parse(asked.expires_at)).toBe(now + VISITOR_HOLD_MAX_TTL_SECONDS * 1000)
    const byDefault = expectStatus(await pk.post("/v1/availability/holds", hold(at(30)), from("203.0.113.1")), 201)
    expect(Date.parse(byDefault.expires_at)).toBe(now + VISITOR_HOLD_MAX_TTL_SECONDS * 1000)
    const short = expectStatus(await pk.post("/v1/availability/holds", hold(at(60), 60), from("203.0.113.2")), 201)
    expect(Date.parse(short.expires_at)).toBe(now + 60_000)
    // Nothing about the visitor is in the answer or in a later read.
    for (const body of [asked, expectStatus(await pk.get(`/v1/availability/holds/${asked.id}`, from("203.0.113.1")), 200)]) {
      expect(Object.keys(body).sort()).toEqual(
        [
          "assigned_by",
          "buffer_after_minutes",
          "buffer_before_minutes",
          "created_at",
          "end",
          "expires_at",
          "id",
          "metadata",
          "object",
          "service_id",
          "staff_id",
          "staff_ids",
          "start",
          "updated_at"
        ]
      )
    }
    const long = expectStatus(await secret.post("/v1/availability/holds", hold(at(90), 600)), 201)
    expect(Date.parse(long.expires_at)).toBe(now + 600_000)
  })

  it("a client address holds at most 2 at once; releasing, booking or expiry frees a place", async () => {
    expect(VISITOR_HOLDS_PER_ADDRESS).toBe(2)
    const { pk, s } = await widgetAccount()
    const hold = (minutes: number, address: string) =>
      pk.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: at(minutes) }, from(address))
    const first = expectStatus(await hold(0, "198.51.100.7"), 201)
    const second = expectStatus(await hold(30, "198.51.100.7"), 201)
    const refused = expectProblem(await hold(60, "198.51.100.7"), 429, "hold_limit_reached")
    expect(refused.detail).toContain("client address already holds 2")
    // Another address is not affected.
    expectStatus(await hold(60, "198.51.100.8"), 201)

    expectStatus(await pk.del(`/v1/availability/holds/${first.id}`, from("198.51.100.7")), 200)
    expectStatus(await hold(90, "198.51.100.7"), 201)
    expectProblem(await hold(120, "198.51.100.7"), 429, "hold_limit_reached")

    expectStatus(
      await pk.post("/v1/bookings", {
        service_id: s.service.id,
        start: at(30),
        hold_id: second.id,
        client: { name: "Web", email: "web@example.com" }
      }, from("198.51.100.7")),
      201
    )
    expectStatus(await hold(120, "198.51.100.7"), 201)
    expectProblem(await hold(150, "198.51.100.7"), 429, "hold_limit_reached")

    // Expired holds no longer count.
    await server.advance(VISITOR_HOLD_MAX_TTL_SECONDS * 1000)
    expectStatus(await hold(150, "198.51.100.7"), 201)
    expectStatus(await hold(180, "198.51.100.7"), 201)
  })

  it("an IPv6 client is counted by its /64: moving to another address of the network gets it no more holds", async () => {
    const { pk, s } = await widgetAccount()
    const hold = (minutes: number, address: string) =>
      pk.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: at(minutes) }, from(address))
    expectStatus(await hold(0, "2001:db8:7:7::1"), 201)
    expectStatus(await hold(30, "2001:db8:7:7::2"), 201)
    expectProblem(await hold(60, "2001:db8:7:7:ffff:ffff:ffff:fffe"), 429, "hold_limit_reached")
    expectStatus(await hold(60, "2001:db8:7:8::1"), 201)
  })

  it("a key holds at most 20 at once where the coming week has little open, whatever the addresses; secret keys' holds neither count nor are limited", async () => {
    const { pk, s, secret } = await widgetAccount()
    // Hours only from the week after next Monday: the coming week offers nothing, so the key's least applies.
    expectStatus(await secret.patch(`/v1/availability/${s.rule.id}`, { valid_from: "2027-04-05" }), 200)
    const week = 7 * 24 * 60
    // That Monday and Tuesday 09:00-17:00 give 32 half-hour starts.
    const starts = [
      ...Array.from({ length: 16 }, (_, i) => at(week + i * 30)),
      ...Array.from({ length: 16 }, (_, i) => at(week + 24 * 60 + i * 30))
    ]
    const hold = (start: string) => ({ service_id: s.service.id, staff_id: s.staff.id, start })
    for (const start of starts.slice(0, 4)) expectStatus(await secret.post("/v1/availability/holds", hold(start)), 201)
    for (let i = 0; i < VISITOR_HOLDS_PER_KEY; i++) {
      expectStatus(await pk.post("/v1/availability/holds", hold(starts[4 + i]!), from(`192.0.2.${i}`)), 201)
    }
    const refused = expectProblem(
      await pk.post("/v1/availability/holds", hold(starts[24]!), from("192.0.2.200")),
      429,
      "hold_limit_reached"
    )
    expect(refused.detail).toContain("without a hold")
    expect(refused.detail).not.toContain(String(VISITOR_HOLDS_PER_KEY))
    for (const start of starts.slice(24, 28)) expectStatus(await secret.post("/v1/availability/holds", hold(start)), 201)
  })
})

describe("rate limits of a publishable key", () => {
  it("count per client address: one visitor spending the quota locks out only itself", async () => {
    const { pk } = await widgetAccount({ plan: "free", rate_limit_per_minute: 5 })
    const greedy = []
    for (let i = 0; i < 6; i++) greedy.push(await pk.get("/v1/services", from("203.0.113.50")))
    expect(greedy.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429])
    expectProblem(greedy[5]!, 429, "rate_limited")
    expect(greedy[5]!.headers.get("access-control-allow-origin")).toBe(ORIGIN)

    const other = await pk.get("/v1/services", from("203.0.113.51"))
    expect(other.status).toBe(200)
    expect(other.headers.get("x-ratelimit-limit")).toBe("5")
    expect(other.headers.get("x-ratelimit-remaining")).toBe("4")
    expect(other.headers.get("ratelimit-policy")).toBe("\"custom\";q=5;w=60")
  })

  it("without --trust-proxy, X-Forwarded-For does not make a new visitor", async () => {
    const own = await startServer()
    try {
      const admin = client(own.url, ADMIN_TOKEN)
      const acct = expectStatus(
        await admin.post("/admin/v1/accounts", { name: "Tiny", plan: "free", rate_limit_per_minute: 2, allowed_origins: [ORIGIN] }),
        201
      )
      const pk = client(own.url, acct.keys.sandbox.publishable)
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await pk.get("/v1/services", from(`203.0.113.${60 + i}`))).status)
      expect(statuses).toEqual([200, 200, 429])
    } finally {
      await own.close()
    }
  })
})

describe("what a publishable key reads", () => {
  it("active services without metadata, active staff without email or metadata, by list and by id", async () => {
    const { pk, s, secret } = await widgetAccount()
    const visitor = from("203.0.113.70")
    expectStatus(await secret.patch(`/v1/services/${s.service.id}`, { metadata: { margin: "high" } }), 200)
    expectStatus(await secret.patch(`/v1/staff/${s.staff.id}`, { email: "ana@shop.example.com", metadata: { pay: "42" } }), 200)
    const hiddenService = expectStatus(await secret.post("/v1/services", { name: "Retired", duration_minutes: 30, active: false }), 201)
    const hiddenStaff = expectStatus(
      await secret.post("/v1/staff", { name: "Gone", time_zone: "UTC", email: "gone@shop.example.com", active: false }),
      201
    )

    const services = expectStatus(await pk.get("/v1/services", visitor), 200)
    expect(services.data.map((x: { id: string }) => x.id)).toEqual([s.service.id])
    const service = expectStatus(await pk.get(`/v1/services/${s.service.id}`, visitor), 200)
    for (const shown of [services.data[0], service]) {
      expect(shown).not.toHaveProperty("metadata")
      expect(shown).toMatchObject({ id: s.service.id, name: "Cut", duration_minutes: 30, staff_ids: [s.staff.id], active: true })
    }
    expectProblem(await pk.get(`/v1/services/${hiddenService.id}`, visitor), 404, "not_found")
    expect(expectStatus(await pk.get("/v1/services?active=false", visitor), 200).data).toEqual([])

    const staff = expectStatus(await pk.get("/v1/staff", visitor), 200)
    expect(staff.data.map((x: { id: string }) => x.id)).toEqual([s.staff.id])
    const member = expectStatus(await pk.get(`/v1/staff/${s.staff.id}`, visitor), 200)
    for (const shown of [staff.data[0], member]) {
      expect(shown).not.toHaveProperty("email")
      expect(shown).not.toHaveProperty("metadata")
      expect(shown).toMatchObject({ id: s.staff.id, name: "Ana", time_zone: "UTC" })
    }
    expectProblem(await pk.get(`/v1/staff/${hiddenStaff.id}`, visitor), 404, "not_found")
    expect(JSON.stringify([services, service, staff, member])).not.toMatch(/shop\.example\.com|margin|pay/)

    // The secret key still reads everything, by the direct read lane (no Origin) as well.
    const full = expectStatus(await secret.get(`/v1/staff/${s.staff.id}`), 200)
    expect(full).toMatchObject({ email: "ana@shop.example.com", metadata: { pay: "42" } })
    expect(expectStatus(await secret.get(`/v1/services/${hiddenService.id}`), 200).active).toBe(false)
    expect(expectStatus(await secret.get("/v1/staff"), 200).data).toHaveLength(2)
  })

  it("a publishable key never takes the direct read lane: without an Origin it is refused, not answered in full", async () => {
    const { pk, s } = await widgetAccount()
    expectProblem(await pk.get(`/v1/staff/${s.staff.id}`), 403, "forbidden")
    expectProblem(await pk.get(`/v1/services/${s.service.id}`), 403, "forbidden")
  })
})

describe("bookings with a publishable key", () => {
  it("refuse client_id, naming it", async () => {
    const { pk, s, secret } = await widgetAccount()
    const refused = expectProblem(
      await pk.post("/v1/bookings", { service_id: s.service.id, start: MONDAY_9, client_id: s.client.id }, from("203.0.113.80")),
      422,
      "validation_failed"
    )
    expect(refused.errors).toEqual([expect.objectContaining({ path: "client_id" })])
    expect(expectStatus(await secret.get("/v1/bookings"), 200).data).toEqual([])
  })

  it("answer with the appointment only, and an inline client with an existing client's email is a new client, the existing one untouched", async () => {
    const { pk, s, secret } = await widgetAccount()
    const booked = expectStatus(
      await pk.post("/v1/bookings", {
        service_id: s.service.id,
        start: MONDAY_9,
        notes: "window seat",
        metadata: { source: "widget" },
        client: { name: "Mallory", email: "bob@example.com", phone: "+44 20 7946 0000" }
      }, from("203.0.113.81")),
      201
    )
    expect(Object.keys(booked).sort()).toEqual([
      "created_at",
      "end",
      "id",
      "object",
      "price",
      "series_id",
      "service_id",
      "staff_id",
      "staff_ids",
      "start",
      "status",
      "updated_at"
    ])
    expect(booked).toMatchObject({
      object: "booking",
      service_id: s.service.id,
      staff_id: s.staff.id,
      start: MONDAY_9,
      status: "confirmed"
    })

    const stored = expectStatus(await secret.get(`/v1/bookings/${booked.id}`), 200)
    expect(stored.client_id).not.toBe(s.client.id)
    expect(stored).toMatchObject({ notes: "window seat", metadata: { source: "widget" } })
    expect(expectStatus(await secret.get(`/v1/clients/${s.client.id}`), 200)).toMatchObject({
      name: "Bob",
      email: "bob@example.com",
      phone: null
    })
    const sameEmail = expectStatus(await secret.get("/v1/clients?email=bob@example.com"), 200).data
    expect(sameEmail.map((c: { name: string }) => c.name).sort()).toEqual(["Bob", "Mallory"])

    // A secret key still gets the whole booking and may name an existing client.
    const full = expectStatus(await secret.post("/v1/bookings", { service_id: s.service.id, start: at(30), client_id: s.client.id }), 201)
    expect(full).toMatchObject({ client_id: s.client.id, payment_status: "unpaid", metadata: {} })
  })
})

describe("idempotency keys with a publishable key", () => {
  it("are kept apart from the account's: a visitor neither replays nor claims its integration's keys", async () => {
    const { pk, s, secret } = await widgetAccount()
    const body = { service_id: s.service.id, start: MONDAY_9, client: { name: "Order 42", email: "o42@example.com" } }
    const integration = expectStatus(await secret.post("/v1/bookings", body, { headers: { "idempotency-key": "order-42" } }), 201)
    expect(integration.client_id).toMatch(/^cli_/)
    // The same key and body from a visitor runs as a request of its own: the slot is taken.
    const visitor = await pk.post("/v1/bookings", body, { headers: { ...from("203.0.113.90").headers, "idempotency-key": "order-42" } })
    expectProblem(visitor, 409, "slot_unavailable")
    expect(visitor.headers.get("idempotent-replayed")).toBeNull()
    expect(visitor.text).not.toContain(integration.client_id)

    // A visitor using a key first does not block the integration's own use of it.
    const next = { service_id: s.service.id, start: at(30), client: { name: "Web", email: "web@example.com" } }
    const first = expectStatus(
      await pk.post("/v1/bookings", next, { headers: { ...from("203.0.113.90").headers, "idempotency-key": "order-43" } }),
      201
    )
    const own = expectStatus(
      await secret.post("/v1/bookings", { ...next, start: at(60) }, { headers: { "idempotency-key": "order-43" } }),
      201
    )
    expect(own.id).not.toBe(first.id)
    // A visitor's retry from another address still replays its own booking.
    const retried = await pk.post("/v1/bookings", next, { headers: { ...from("203.0.113.91").headers, "idempotency-key": "order-43" } })
    expect(retried.headers.get("idempotent-replayed")).toBe("true")
    expect(expectStatus(retried, 201)).toEqual(first)
  })
})
