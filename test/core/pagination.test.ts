/** Keyset pagination: stable under inserts and deletes, ordered, bound to its filters. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"
import { at, MONDAY_9 } from "../support/fixtures.js"

const drain = <A extends { id: string }, E, R>(
  next: (cursor?: string) => Effect.Effect<{ data: ReadonlyArray<A>; has_more: boolean; next_cursor: string | null }, E, R>
) =>
  Effect.gen(function*() {
    const seen: Array<A> = []
    let cursor: string | undefined
    for (;;) {
      const page = yield* next(cursor)
      seen.push(...page.data)
      if (!page.has_more) {
        expect(page.next_cursor).toBeNull()
        return seen
      }
      cursor = page.next_cursor!
    }
  })

describe("pagination", () => {
  it.effect("pages clients in creation order with no row missed or repeated while rows come and go", () =>
    Effect.gen(function*() {
      const s = yield* core
      const created = []
      for (let i = 0; i < 25; i++) created.push(yield* s.clients.create({ name: `c${i}` }))
      const first = yield* s.clients.list({ limit: 10 })
      expect(first.data.map((c) => c.name)).toEqual(created.slice(0, 10).map((c) => c.name))
      // Delete the cursor row and one before it; add rows after it.
      yield* s.clients.delete(created[9]!.id)
      yield* s.clients.delete(created[3]!.id)
      for (let i = 25; i < 28; i++) created.push(yield* s.clients.create({ name: `c${i}` }))
      const rest = yield* drain((cursor) => s.clients.list({ limit: 10, ...(cursor ? { cursor } : {}) }))
      const afterFirst = yield* drain((cursor) => s.clients.list({ limit: 7, cursor: cursor ?? first.next_cursor! }))
      expect(afterFirst.map((c) => c.name)).toEqual(created.slice(10).map((c) => c.name))
      expect(rest).toHaveLength(26)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("lists bookings by start, filters them, and binds the cursor to its filters", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { serviceId, staffId, clientId } = yield* salonIn()
      const starts = [240, 0, 120, 60, 180, 30].map((m) => at(MONDAY_9, m))
      const ids: Record<string, string> = {}
      for (const start of starts)
        ids[start] = (yield* s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start })).id
      yield* s.bookings.cancel(ids[at(MONDAY_9, 60)]!)
      const all = yield* drain((cursor) => s.bookings.list({ limit: 2, ...(cursor ? { cursor } : {}) }))
      expect(all.map((b) => b.start)).toEqual([...starts].sort())
      const confirmed = yield* drain((cursor) => s.bookings.list({ status: "confirmed", limit: 2, ...(cursor ? { cursor } : {}) }))
      expect(confirmed.map((b) => b.start)).toEqual([0, 30, 120, 180, 240].map((m) => at(MONDAY_9, m)))
      const window = yield* s.bookings.list({ start_from: at(MONDAY_9, 30), start_to: at(MONDAY_9, 180) })
      expect(window.data.map((b) => b.start)).toEqual([30, 60, 120].map((m) => at(MONDAY_9, m)))
      const page = yield* s.bookings.list({ status: "confirmed", limit: 2 })
      expect(yield* refusal(s.bookings.list({ status: "cancelled", limit: 2, cursor: page.next_cursor! }))).toMatchObject({
        code: "bad_request",
        errors: [{ path: "cursor" }]
      })
      yield* TestClock.setTime(Date.parse(at(MONDAY_9, 150)))
      const upcoming = yield* s.bookings.list({ upcoming: true })
      expect(upcoming.data.map((b) => b.start)).toEqual([at(MONDAY_9, 180), at(MONDAY_9, 240)])
      expect((yield* s.bookings.list({ staff_id: staffId, client_id: clientId, service_id: serviceId })).data).toHaveLength(6)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("reads the event feed in commit order without gaps or repeats", () =>
    Effect.gen(function*() {
      const s = yield* core
      let cursor: string | undefined
      const seen: Array<string> = []
      for (let round = 0; round < 5; round++) {
        yield* Effect.all(Array.from({ length: 7 }, (_, i) => s.clients.create({ name: `r${round}-${i}` })), {
          concurrency: "unbounded"
        })
        for (;;) {
          const page = yield* s.events.list({ limit: 4, ...(cursor ? { after: cursor } : {}) })
          seen.push(...page.data.map((e) => e.id))
          cursor = page.next_cursor!
          if (!page.has_more) break
        }
      }
      expect(seen).toHaveLength(35)
      expect(new Set(seen).size).toBe(35)
      const all = (yield* s.events.list({ limit: 100 })).data.map((e) => e.id)
      expect(seen).toEqual(all)
      expect(yield* s.events.get(all[0]!)).toMatchObject({ object: "event", type: "client.created" })
    }).pipe(Effect.provide(CoreTest)))
})
