/**
 * No double booking, by the database: two clients with separate pools (two processes, as
 * far as PostgreSQL can tell) fire 100 concurrent creates each at one seat. The core checks
 * then writes inside one transaction; the per-tenant advisory lock makes that atomic.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { SchedulingClient } from "../../library.js"
import { postgresScheduling } from "./core.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database.drop())

const HOUR = 3_600_000
/** Tomorrow 00:00 UTC (the service books up to 400 days ahead; nothing depends on the weekday). */
const tomorrow = () => Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

let schemas = 0
/** Two clients on one fresh schema, and a staff member open around the clock. */
const twoClients = async (service: { readonly capacity?: number; readonly buffer_after_minutes?: number }) => {
  const schema = `booking_${++schemas}`
  const first = await postgresScheduling({ url: database.url, schema, maxConnections: 5 })
  const second = await postgresScheduling({ url: database.url, schema, maxConnections: 5 })
  const staff = await first.staff.create({ name: "Solo", time_zone: "UTC" })
  await first.availability.create({
    staff_id: staff.id,
    type: "weekly",
    weekdays: [1, 2, 3, 4, 5, 6, 7],
    start_time: "00:00",
    end_time: "24:00"
  })
  const created = await first.services.create({
    name: "Contested",
    duration_minutes: 60,
    slot_interval_minutes: 5,
    max_advance_days: 400,
    staff_ids: [staff.id],
    ...service
  })
  const client = await first.clients.create({ name: "Racer" })
  return { clients: [first, second] as const, staff_id: staff.id, service_id: created.id, client_id: client.id }
}

/** `count` creates from each client at once, the starts taken in turn from `starts`. */
const race = async (
  setup: Awaited<ReturnType<typeof twoClients>>,
  starts: ReadonlyArray<number>,
  count: number
) => {
  const { clients, ...ids } = setup
  // Every pooled connection open first: a pool still connecting serialises the first creates.
  await Promise.all(clients.flatMap((s) => Array.from({ length: 10 }, () => s.bookings.list({ limit: 1 }))))
  const outcomes = await Promise.all(
    clients.flatMap((s: SchedulingClient, k) =>
      Array.from({ length: count }, (_, i) =>
        s.bookings.create({ ...ids, start: iso(starts[(i + k) % starts.length]!) }).then(
          () => "created",
          (error) => String(error.code ?? error)
        ))
    )
  )
  const tally = outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})
  const stored = (await clients[1].bookings.list({ limit: 100 })).data
  const events = (await clients[0].events.list({ types: ["booking.created"], limit: 100 })).data
  await Promise.all(clients.map((s) => s.close()))
  return { tally, stored, events }
}

describe("PostgreSQL: two pools × 100 concurrent creates", () => {
  it("one seat, one start: exactly one booking", async () => {
    const setup = await twoClients({})
    const { events, stored, tally } = await race(setup, [tomorrow() + 10 * HOUR], 100)
    expect(tally).toEqual({ created: 1, slot_unavailable: 199 })
    expect(stored).toHaveLength(1)
    expect(events).toHaveLength(1)
  }, 60_000)

  it("partly overlapping starts, one overlapping only through a buffer: exactly one booking", async () => {
    // 60 minutes plus 15 after: 10:00 occupies to 11:15, so 11:10 meets it only in the buffer.
    const setup = await twoClients({ buffer_after_minutes: 15 })
    const day = tomorrow()
    const starts = [day + 10 * HOUR, day + 10.5 * HOUR, day + 11 * HOUR + 10 * 60_000]
    const { stored, tally } = await race(setup, starts, 100)
    expect(tally).toEqual({ created: 1, slot_unavailable: 199 })
    expect(stored).toHaveLength(1)
  }, 60_000)

  it("capacity 3: exactly three bookings", async () => {
    const setup = await twoClients({ capacity: 3 })
    const { events, stored, tally } = await race(setup, [tomorrow() + 10 * HOUR], 100)
    expect(tally).toEqual({ created: 3, slot_unavailable: 197 })
    expect(stored).toHaveLength(3)
    expect(events).toHaveLength(3)
  }, 60_000)
})
