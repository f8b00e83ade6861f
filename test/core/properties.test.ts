/**
 * Properties of slots and bookings, end to end through the library, on random services,
 * schedules and existing bookings: no slot overlaps an occupied range; every slot books;
 * a booked slot leaves `slots`; cancelling brings it back.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createTestScheduling } from "../../index.js"

const NOW = "2027-06-01T06:00:00Z" // a Tuesday
const DAY_START = Date.parse("2027-06-02T00:00:00Z")
const MINUTE = 60_000
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z")

const scenario = fc.record({
  duration: fc.integer({ min: 1, max: 8 }).map((n) => n * 15),
  before: fc.constantFrom(0, 5, 10, 15, 30),
  after: fc.constantFrom(0, 5, 10, 15, 30),
  interval: fc.constantFrom(10, 15, 20, 30, 45, 60),
  zone: fc.constantFrom("Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"),
  hours: fc.array(fc.record({ from: fc.integer({ min: 0, max: 20 }), length: fc.integer({ min: 1, max: 8 }) }), {
    minLength: 1,
    maxLength: 3
  }),
  blocked: fc.array(fc.record({ at: fc.integer({ min: 0, max: 47 }), length: fc.integer({ min: 1, max: 8 }) }), { maxLength: 3 }),
  existing: fc.array(fc.nat(400), { maxLength: 8 }),
  picks: fc.array(fc.nat(1000), { minLength: 1, maxLength: 4 })
})

describe("slot properties", () => {
  it("holds for random schedules", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (sc) => {
        const s = await createTestScheduling({ now: NOW })
        try {
          const staff = await s.staff.create({ name: "P", time_zone: sc.zone })
          for (const h of sc.hours) {
            const end = Math.min(24, h.from + h.length)
            await s.availability.create({
              staff_id: staff.id,
              type: "weekly",
              weekdays: [1, 2, 3, 4, 5, 6, 7],
              start_time: `${String(h.from).padStart(2, "0")}:00`,
              end_time: end === 24 ? "24:00" : `${String(end).padStart(2, "0")}:00`
            })
          }
          for (const b of sc.blocked) {
            await s.availability.create({
              staff_id: staff.id,
              type: "blocked",
              start: iso(DAY_START + b.at * 30 * MINUTE),
              end: iso(DAY_START + (b.at + b.length) * 30 * MINUTE)
            })
          }
          const service = await s.services.create({
            name: "S",
            duration_minutes: sc.duration,
            buffer_before_minutes: sc.before,
            buffer_after_minutes: sc.after,
            slot_interval_minutes: sc.interval,
            staff_ids: [staff.id]
          })
          const client = await s.clients.create({ name: "C" })
          const query = { service_id: service.id, start: iso(DAY_START), end: iso(DAY_START + 2 * 86_400_000) }
          // Existing bookings at random free slots.
          for (const pick of sc.existing) {
            const free = (await s.availability.slots(query)).data
            if (free.length === 0) break
            await s.bookings.create({
              service_id: service.id,
              staff_id: staff.id,
              client_id: client.id,
              start: free[pick % free.length]!.start
            })
          }
          const slots = (await s.availability.slots(query)).data
          const active = (await s.bookings.list({ limit: 100 })).data.filter((b) => b.status === "confirmed")
          // (a) No slot's occupied range overlaps an existing booking's.
          for (const slot of slots) {
            const from = Date.parse(slot.start) - sc.before * MINUTE
            const to = Date.parse(slot.end) + sc.after * MINUTE
            for (const b of active) {
              // The service's buffers are the truth here; a booking's snapshot must match them.
              expect([b.buffer_before_minutes, b.buffer_after_minutes]).toEqual([sc.before, sc.after])
              const bFrom = Date.parse(b.start) - sc.before * MINUTE
              const bTo = Date.parse(b.end) + sc.after * MINUTE
              expect(from < bTo && bFrom < to, `${slot.start} overlaps ${b.start}`).toBe(false)
            }
            expect(Date.parse(slot.end) - Date.parse(slot.start)).toBe(sc.duration * MINUTE)
          }
          expect(new Set(slots.map((x) => x.start)).size).toBe(slots.length)
          if (slots.length === 0) return
          for (const pick of sc.picks) {
            const slot = slots[pick % slots.length]!
            // (b) It books; (c) it then leaves slots; (d) cancelling brings back exactly the same slots.
            const booking = await s.bookings.create({ service_id: service.id, staff_id: staff.id, client_id: client.id, start: slot.start })
            const after = (await s.availability.slots(query)).data
            expect(after.map((x) => x.start)).not.toContain(slot.start)
            await s.bookings.cancel(booking.id)
            expect((await s.availability.slots(query)).data).toEqual(slots)
          }
        } finally {
          await s.close()
        }
      }),
      { numRuns: 100 }
    )
  }, 120_000)
})
