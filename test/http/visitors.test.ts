/**
 * What a publishable key's visitors may take together, over real HTTP: booked occurrences
 * per client address and per key per UTC day, holds that grow with what a service has open,
 * no staff member named on a round-robin service, and refusals that name nobody else's
 * booking. Client addresses come from `X-Forwarded-For` (the server trusts its proxy here).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VISITOR_HOLDS_PER_ADDRESS, VISITOR_HOLDS_PER_KEY } from "../../src/availability/hold.js"
import { VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY, VISITOR_OCCURRENCES_PER_KEY_PER_DAY } from "../../src/domain/visitor.js"
import { ADMIN_TOKEN, client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"
const MINUTE = 60_000
const DAY = 86_400_000

let server: TestServer
beforeAll(async () => {
  server = await startServer({ trustProxy: true })
})
afterAll(() => server.close())

const at = (minutes: number) => new Date(Date.parse(MONDAY_9) + minutes * MINUTE).toISOString().replace(".000Z", "Z")

/** A fresh account that allows ORIGIN, seeded (Mon–Fri 09:00–17:00, 30-minute service); its secret and publishable clients. */
const widgetAccount = async () => {
  const acct = expectStatus(
    await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Shop", plan: "business", allowed_origins: [ORIGIN] }),
    201
  )
  const secret = client(server.url, acct.keys.sandbox.secret)
  const s = await seed(secret)
  const pk = client(server.url, acct.keys.sandbox.publishable)
  return { secret, s, pk }
}

const from = (address: string) => ({ headers: { origin: ORIGIN, "x-forwarded-for": address } })
const visitorClient = { name: "Web", email: "web@example.com" }

describe("what a publishable key's visitors book in a day", () => {
  it("a client address books at most its daily occurrences, series included; another address and the next UTC day are free", async () => {
    const { pk, s, secret } = await widgetAccount()
    expectStatus(await secret.patch(`/v1/services/${s.service.id}`, { max_occurrences: 52 }), 200)
    const weekly = (minutes: number, count: number, address: string) =>
      pk.post("/v1/booking-series", {
        service_id: s.service.id,
        start: at(minutes),
        recurrence: { rule: `FREQ=WEEKLY;COUNT=${count}` },
        client: visitorClient
      }, from(address))
    const first = expectStatus(await weekly(0, 52, "203.0.113.20"), 201)
    expect(first.occurrences).toHaveLength(52)
    const over = await weekly(30, 52, "203.0.113.20")
    const refused = expectProblem(over, 429, "rate_limited")
    expect(refused.detail).toContain(`${VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY} `)
    expect(refused.detail).toContain("00:00 UTC")
    // Friday 08:00 UTC: the day frees at Saturday 00:00, 16 hours on.
    expect(over.headers.get("retry-after")).toBe(String(16 * 3600))
    expect(expectStatus(await secret.get(`/v1/bookings?start_from=${at(30)}&start_to=${at(31)}`), 200).data).toEqual([])
    // What is left of the day's quota still books (here by the older path); one more does not.
    const left = VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY - 52
    expectStatus(
      await pk.post("/v1/bookings", {
        service_id: s.service.id,
        start: at(60),
        recurrence: { rule: `FREQ=WEEKLY;COUNT=${left}` },
        client: visitorClient
      }, from("203.0.113.20")),
      201
    )
    expectProblem(
      await pk.post("/v1/bookings", { service_id: s.service.id, start: at(90), client: visitorClient }, from("203.0.113.20")),
      429,
      "rate_limited"
    )
    expectStatus(await weekly(30, 52, "203.0.113.21"), 201)
    // A secret key is not counted.
    expectStatus(await secret.post("/v1/bookings", { service_id: s.service.id, start: at(90), client_id: s.client.id }), 201)

    await server.advance(16 * 3600 * 1000)
    expectStatus(
      await pk.post("/v1/bookings", { service_id: s.service.id, start: at(120), client: visitorClient }, from("203.0.113.20")),
      201
    )
  })

  it("a key's visitors together book at most the key's daily occurrences, whatever their addresses", async () => {
    const { pk, s, secret } = await widgetAccount()
    expectStatus(await secret.patch(`/v1/services/${s.service.id}`, { max_occurrences: 52 }), 200)
    // Series of 50 from one address each, at distinct weekly times (Mon–Fri, 16 starts a day).
    const series = Math.floor(VISITOR_OCCURRENCES_PER_KEY_PER_DAY / 50)
    const time = (i: number) => Math.floor(i / 16) * 24 * 60 + (i % 16) * 30
    for (let i = 0; i < series; i++) {
      expectStatus(
        await pk.post("/v1/booking-series", {
          service_id: s.service.id,
          start: at(time(i)),
          recurrence: { rule: "FREQ=WEEKLY;COUNT=50" },
          client: visitorClient
        }, from(`198.51.100.${i}`)),
        201
      )
    }
    const refused = expectProblem(
      await pk.post("/v1/bookings", { service_id: s.service.id, start: at(time(series)), client: visitorClient }, from("192.0.2.1")),
      429,
      "rate_limited"
    )
    expect(refused.detail).toContain(`${VISITOR_OCCURRENCES_PER_KEY_PER_DAY}`)
    await server.advance(DAY)
    expectStatus(
      await pk.post("/v1/bookings", { service_id: s.service.id, start: at(time(series)), client: visitorClient }, from("192.0.2.1")),
      201
    )
  }, 60_000)
})

describe("visitor holds on a service with many open slots", () => {
  it("ten addresses holding two each leave holds for an eleventh; over the grown limit the refusal names no one else", async () => {
    const { pk, s } = await widgetAccount()
    // The coming week (from Friday 08:00) has 80 open half-hour starts: Friday's 16, Monday to Thursday's 64.
    const starts = [0, 1, 2, 3, 4].flatMap((day) => Array.from({ length: 16 }, (_, i) => at(day * 24 * 60 + i * 30)))
    const hold = (start: string, address: string) =>
      pk.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start }, from(address))
    let next = 0
    for (let a = 0; a < 10; a++) {
      for (let h = 0; h < VISITOR_HOLDS_PER_ADDRESS; h++) expectStatus(await hold(starts[next++]!, `192.0.2.${a}`), 201)
    }
    expect(next).toBe(VISITOR_HOLDS_PER_KEY)
    expectStatus(await hold(starts[next++]!, "192.0.2.10"), 201)
    // The key may hold half of what the week offers (80 open starts and held ones: 40).
    for (let a = 11; next < 40; a++) expectStatus(await hold(starts[next++]!, `192.0.2.${a}`), 201)
    const refused = expectProblem(await hold(starts[next]!, "192.0.2.99"), 429, "hold_limit_reached")
    expect(refused.detail).not.toMatch(/\d/)
    expect(refused.detail).toContain("book")
  })
})

describe("round robin with a publishable key", () => {
  it("refuses staff_id on bookings, series and holds (422 naming it); the rotation picks, and a secret key may still name one", async () => {
    const { pk, s, secret } = await widgetAccount()
    const other = expectStatus(await secret.post("/v1/staff", { name: "Bea", time_zone: "UTC" }), 201)
    expectStatus(
      await secret.post("/v1/availability", {
        staff_id: other.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
    const service = expectStatus(
      await secret.post("/v1/services", {
        name: "Intro",
        duration_minutes: 30,
        staff_ids: [s.staff.id, other.id],
        assignment: "round_robin",
        round_robin_policy: "weighted",
        staff_weights: { [s.staff.id]: 0, [other.id]: 100 },
        max_occurrences: 4
      }),
      201
    )
    const named = { service_id: service.id, staff_id: s.staff.id, start: MONDAY_9 }
    const refusals = [
      await pk.post("/v1/bookings", { ...named, client: visitorClient }, from("203.0.113.30")),
      await pk.post(
        "/v1/booking-series",
        { ...named, recurrence: { rule: "FREQ=WEEKLY;COUNT=2" }, client: visitorClient },
        from("203.0.113.30")
      ),
      await pk.post("/v1/bookings", { ...named, recurrence: { rule: "FREQ=WEEKLY;COUNT=2" }, client: visitorClient }, from("203.0.113.30")),
      await pk.post("/v1/availability/holds", named, from("203.0.113.30"))
    ]
    for (const reply of refusals) {
      const problem = expectProblem(reply, 422, "validation_failed")
      expect(problem.errors).toEqual([expect.objectContaining({ path: "staff_id" })])
    }
    expect(expectStatus(await secret.get("/v1/bookings"), 200).data).toEqual([])
    const picked = expectStatus(
      await pk.post("/v1/bookings", { service_id: service.id, start: MONDAY_9, client: visitorClient }, from("203.0.113.30")),
      201
    )
    expect(picked.staff_id).toBe(other.id)
    expectStatus(await secret.post("/v1/bookings", { ...named, start: at(30), client_id: s.client.id }), 201)
  })
})

describe("a visitor's refused time", () => {
  it("names no other booking or hold: no ids, no times; a secret key still sees them", async () => {
    const { pk, s, secret } = await widgetAccount()
    const taken = expectStatus(await secret.post("/v1/bookings", { service_id: s.service.id, start: at(30), client_id: s.client.id }), 201)
    const held = expectStatus(
      await secret.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: at(60) }),
      201
    )
    for (const [minutes, other] of [[30, taken.id], [60, held.id]] as const) {
      for (
        const reply of [
          await pk.post(
            "/v1/bookings",
            { service_id: s.service.id, staff_id: s.staff.id, start: at(minutes), client: visitorClient },
            from("203.0.113.40")
          ),
          await pk.post(
            "/v1/availability/holds",
            { service_id: s.service.id, staff_id: s.staff.id, start: at(minutes) },
            from("203.0.113.40")
          )
        ]
      ) {
        const problem = expectProblem(reply, 409, "slot_unavailable")
        expect(reply.text).not.toContain(other)
        expect(reply.text).not.toMatch(/booking_id|hold_id|bkg_|hld_/)
        expect(problem.detail).not.toMatch(/\d\d:\d\d/)
        expect(problem.reasons.length).toBeGreaterThan(0)
      }
    }
    expectStatus(await secret.patch(`/v1/services/${s.service.id}`, { max_occurrences: 4 }), 200)
    const series = await pk.post("/v1/booking-series", {
      service_id: s.service.id,
      start: at(30),
      recurrence: { rule: "FREQ=WEEKLY;COUNT=2" },
      client: visitorClient
    }, from("203.0.113.40"))
    expectProblem(series, 409, "series_unavailable")
    expect(series.text).not.toMatch(/booking_id|bkg_/)
    expect(series.json.occurrences[0].reasons[0].detail).not.toMatch(/\d\d:\d\d/)
    expect(series.json.detail).toBe(
      `1 of 2 occurrences cannot be booked (first: ${at(30)}: This time is already booked.); nothing was booked`
    )
    const full = expectProblem(
      await secret.post("/v1/bookings", { service_id: s.service.id, start: at(30), client_id: s.client.id }),
      409,
      "slot_unavailable"
    )
    expect(full.reasons).toEqual([expect.objectContaining({ booking_id: taken.id })])
  })
})
