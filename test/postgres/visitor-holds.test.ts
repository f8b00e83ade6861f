/**
 * Visitor hold limits are counted in the database, so they hold across processes: two
 * clients with separate pools (two processes, as far as PostgreSQL can tell) fire concurrent
 * holds for one publishable key, and no more than the limits get through.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VISITOR_HOLDS_PER_ADDRESS, VISITOR_HOLDS_PER_KEY } from "../../src/availability/hold.js"
import type { SchedulingClient } from "../../library.js"
import { postgresScheduling } from "./core.js"
import { createTestDatabase, type TestDatabase } from "./database.js"

let database: TestDatabase
let clients: ReadonlyArray<SchedulingClient> = []
beforeAll(async () => {
  database = await createTestDatabase()
  clients = await Promise.all([1, 2].map(() => postgresScheduling({ url: database.url, schema: "visitor_holds", maxConnections: 5 })))
})
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
  await database.drop()
})

const HOUR = 3_600_000
const DAY = 86_400_000
/**
 * 00:00 UTC eight days on, when the staff member's hours begin: the coming week offers
 * nothing, so a key's least number of holds applies (the service books up to 400 days
 * ahead; nothing depends on the weekday).
 */
const opening = () => Math.floor(Date.now() / DAY + 8) * DAY
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")
const KEY = "key_01HZZZZZZZZZZZZZZZZZZZZZZZ"

const held: Array<string> = []
const outcome = (attempt: Promise<{ readonly id: string }>) =>
  attempt.then((hold) => (held.push(hold.id), "held"), (error) => String(error.code ?? error))
const tally = (outcomes: ReadonlyArray<string>) =>
  outcomes.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})

describe("PostgreSQL: visitor hold limits across two pools", () => {
  it("one address gets 2 of 20 concurrent holds, the key 20 of 60, and a release on one frees a place on the other", async () => {
    const [first, second] = clients as [SchedulingClient, SchedulingClient]
    const staff = await first.staff.create({ name: "Open", time_zone: "UTC" })
    const start = opening()
    await first.availability.create({
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      start_time: "00:00",
      end_time: "24:00",
      valid_from: iso(start).slice(0, 10)
    })
    const service = await first.services.create({ name: "Visit", duration_minutes: 15, max_advance_days: 400, staff_ids: [staff.id] })
    let next = 0
    const hold = (client: SchedulingClient, address: string) =>
      client.availability.hold({ service_id: service.id, staff_id: staff.id, start: iso(start + (next++) * HOUR / 4) }, {
        key_id: KEY,
        address
      })
    // Every pooled connection open first: a pool still connecting serialises the first holds.
    await Promise.all(clients.flatMap((c) => Array.from({ length: 5 }, () => c.services.list({ limit: 1 }))))

    const one = await Promise.all(clients.flatMap((c) => Array.from({ length: 10 }, () => outcome(hold(c, "203.0.113.9")))))
    expect(tally(one)).toEqual({ held: VISITOR_HOLDS_PER_ADDRESS, hold_limit_reached: 20 - VISITOR_HOLDS_PER_ADDRESS })

    const many = await Promise.all(clients.flatMap((c, k) => Array.from({ length: 30 }, (_, i) => outcome(hold(c, `198.51.${k}.${i}`)))))
    expect(tally(many)).toEqual({
      held: VISITOR_HOLDS_PER_KEY - VISITOR_HOLDS_PER_ADDRESS,
      hold_limit_reached: 60 - VISITOR_HOLDS_PER_KEY + VISITOR_HOLDS_PER_ADDRESS
    })
    expect(await outcome(hold(second, "192.0.2.1"))).toBe("hold_limit_reached")

    // A release through one pool frees a place for the other; another key and secret keys are counted apart.
    expect(held).toHaveLength(VISITOR_HOLDS_PER_KEY)
    await second.availability.releaseHold(held[5]!)
    expect(await outcome(hold(first, "192.0.2.1"))).toBe("held")
    expect(await outcome(hold(second, "192.0.2.2"))).toBe("hold_limit_reached")
    const slot = () => ({ service_id: service.id, staff_id: staff.id, start: iso(start + (next++) * HOUR / 4) })
    expect(await outcome(second.availability.hold(slot(), { key_id: "key_01HYYYYYYYYYYYYYYYYYYYYYYY", address: "192.0.2.2" }))).toBe("held")
    expect(await outcome(first.availability.hold(slot()))).toBe("held")
  }, 60_000)
})
