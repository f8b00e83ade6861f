/**
 * Visitor booking limits are counted in the database, so they hold across processes: two
 * clients with separate pools (two processes, as far as PostgreSQL can tell) book for one
 * publishable key at once, and no more than a client address's daily limit get through.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY } from "../../src/domain/visitor.js"
import type { SchedulingClient } from "../../library.js"
import { clockFrom, postgresScheduling } from "./core.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
let clients: ReadonlyArray<SchedulingClient> = []
beforeAll(async () => {
  database = await createTestDatabase()
  // Both clients' clocks at noon UTC of tomorrow: the day's count cannot roll over mid-test.
  const clock = clockFrom(tomorrow() + 12 * 3_600_000)
  clients = await Promise.all(
    [1, 2].map(() => postgresScheduling({ url: database.url, schema: "visitor_bookings", maxConnections: 4 }, clock))
  )
})
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await database.drop()
})

const QUARTER = 15 * 60_000
/** Tomorrow 00:00 UTC by the live clock. */
const tomorrow = () => Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
const KEY = "key_01HZZZZZZZZZZZZZZZZZZZZZZZ"
const tally = (outcomes: ReadonlyArray<string>) =>
  outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})

describe("PostgreSQL: visitor booking limits across two pools", () => {
  it("of 80 concurrent bookings from one address, the address's daily limit gets through; another address books on", async () => {
    const [first, second] = clients as [SchedulingClient, SchedulingClient]
    const staff = await first.staff.create({ name: "Open", time_zone: "UTC" })
    await first.availability.create({
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      start_time: "00:00",
      end_time: "24:00"
    })
    const service = await first.services.create({ name: "Visit", duration_minutes: 15, staff_ids: [staff.id] })
    // The day after the clients' clock's (nothing depends on the weekday).
    const start = tomorrow() + 86_400_000
    let next = 0
    const book = (client: SchedulingClient, address: string) =>
      client.bookings.create({
        service_id: service.id,
        start: iso(start + (next++) * QUARTER),
        client: { name: "Web", email: "web@example.com" }
      }, { key_id: KEY, address }).then(() => "booked", (error) => String(error.code ?? error))
    // Every pooled connection open first: a pool still connecting serialises the first bookings.
    await Promise.all(clients.flatMap((c) => Array.from({ length: 4 }, () => c.services.list({ limit: 1 }))))

    const outcomes = await Promise.all(clients.flatMap((c) => Array.from({ length: 40 }, () => book(c, "203.0.113.9"))))
    expect(tally(outcomes)).toEqual({
      booked: VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY,
      rate_limited: 80 - VISITOR_OCCURRENCES_PER_ADDRESS_PER_DAY
    })
    expect(await book(second, "203.0.113.9")).toBe("rate_limited")
    expect(await book(second, "203.0.113.10")).toBe("booked")
    // Without a visitor (a secret key's booking) nothing is counted.
    expect(
      await first.bookings.create({ service_id: service.id, start: iso(start + (next++) * QUARTER), client: { name: "Desk" } }).then(() =>
        "booked"
      )
    ).toBe("booked")
  }, 60_000)
})
