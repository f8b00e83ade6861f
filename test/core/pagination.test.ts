/** Keyset pagination: stable under inserts and deletes, ordered, bound to its filters. */
import { describe, expect, it } from "vitest"
import { createTestScheduling } from "../../index.js"
import { at, failure, MONDAY_9, NOW, salon } from "../support/fixtures.js"

const drain = async <A extends { id: string }>(
  next: (cursor?: string) => Promise<{ data: ReadonlyArray<A>; has_more: boolean; next_cursor: string | null }>
) => {
  const seen: Array<A> = []
  let cursor: string | undefined
  for (;;) {
    const page = await next(cursor)
    seen.push(...page.data)
    if (!page.has_more) {
      expect(page.next_cursor).toBeNull()
      return seen
    }
    cursor = page.next_cursor!
  }
}

describe("pagination", () => {
  it("pages clients in creation order with no row missed or repeated while rows come and go", async () => {
    const s = await createTestScheduling({ now: NOW })
    const created = []
    for (let i = 0; i < 25; i++) created.push(await s.clients.create({ name: `c${i}` }))
    const first = await s.clients.list({ limit: 10 })
    expect(first.data.map((c) => c.name)).toEqual(created.slice(0, 10).map((c) => c.name))
    // Delete the cursor row and one before it; add rows after it.
    await s.clients.delete(created[9]!.id)
    await s.clients.delete(created[3]!.id)
    for (let i = 25; i < 28; i++) created.push(await s.clients.create({ name: `c${i}` }))
    const rest = await drain((cursor) => s.clients.list({ limit: 10, ...(cursor ? { cursor } : {}) }).then((p) => p))
    const afterFirst = await drain((cursor) => s.clients.list({ limit: 7, cursor: cursor ?? first.next_cursor! }))
    expect(afterFirst.map((c) => c.name)).toEqual(created.slice(10).map((c) => c.name))
    expect(rest).toHaveLength(26)
  })

  it("lists bookings by start, filters them, and binds the cursor to its filters", async () => {
    const { s, serviceId, staffId, clientId } = await salon()
    const starts = [240, 0, 120, 60, 180, 30].map((m) => at(MONDAY_9, m))
    const ids: Record<string, string> = {}
    for (const start of starts)
      ids[start] = (await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start })).id
    await s.bookings.cancel(ids[at(MONDAY_9, 60)]!)
    const all = await drain((cursor) => s.bookings.list({ limit: 2, ...(cursor ? { cursor } : {}) }))
    expect(all.map((b) => b.start)).toEqual([...starts].sort())
    const confirmed = await drain((cursor) => s.bookings.list({ status: "confirmed", limit: 2, ...(cursor ? { cursor } : {}) }))
    expect(confirmed.map((b) => b.start)).toEqual([0, 30, 120, 180, 240].map((m) => at(MONDAY_9, m)))
    const window = await s.bookings.list({ start_from: at(MONDAY_9, 30), start_to: at(MONDAY_9, 180) })
    expect(window.data.map((b) => b.start)).toEqual([30, 60, 120].map((m) => at(MONDAY_9, m)))
    const page = await s.bookings.list({ status: "confirmed", limit: 2 })
    expect(await failure(s.bookings.list({ status: "cancelled", limit: 2, cursor: page.next_cursor! }))).toMatchObject({
      code: "bad_request",
      errors: [{ path: "cursor" }]
    })
    await s.clock.set(at(MONDAY_9, 150))
    const upcoming = await s.bookings.list({ upcoming: true })
    expect(upcoming.data.map((b) => b.start)).toEqual([at(MONDAY_9, 180), at(MONDAY_9, 240)])
    expect((await s.bookings.list({ staff_id: staffId, client_id: clientId, service_id: serviceId })).data).toHaveLength(6)
  })

  it("reads the event feed in commit order without gaps or repeats", async () => {
    const s = await createTestScheduling({ now: NOW })
    let cursor: string | undefined
    const seen: Array<string> = []
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 7 }, (_, i) => s.clients.create({ name: `r${round}-${i}` })))
      for (;;) {
        const page = await s.events.list({ limit: 4, ...(cursor ? { after: cursor } : {}) })
        seen.push(...page.data.map((e) => e.id))
        cursor = page.next_cursor!
        if (!page.has_more) break
      }
    }
    expect(seen).toHaveLength(35)
    expect(new Set(seen).size).toBe(35)
    const all = (await s.events.list({ limit: 100 })).data.map((e) => e.id)
    expect(seen).toEqual(all)
    expect(await s.events.get(all[0]!)).toMatchObject({ object: "event", type: "client.created" })
  })
})
