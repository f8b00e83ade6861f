/** Every time_zone the API accepts is matched case-insensitively and kept in canonical case. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { core, CoreTest, refusal } from "../support/coreTest.js"
import { MONDAY_9 } from "../support/fixtures.js"

describe("time zones in any case", () => {
  it.effect("staff, clients and availability rules store the canonical spelling", () =>
    Effect.gen(function*() {
      const s = yield* core
      const ana = yield* s.staff.create({ name: "Ana", time_zone: "europe/berlin" })
      expect(ana.time_zone).toBe("Europe/Berlin")
      expect((yield* s.staff.get(ana.id)).time_zone).toBe("Europe/Berlin")
      expect((yield* s.staff.update(ana.id, { time_zone: "AMERICA/NEW_YORK" })).time_zone).toBe("America/New_York")
      const bo = yield* s.clients.create({ name: "Bo", time_zone: "asia/kolkata" })
      expect(bo.time_zone).toBe("Asia/Kolkata")
      const rule = yield* s.availability.create({
        staff_id: ana.id,
        type: "weekly",
        weekdays: [1],
        start_time: "09:00",
        end_time: "10:00",
        time_zone: "europe/lisbon"
      })
      expect(rule.time_zone).toBe("Europe/Lisbon")
      const inherited = yield* s.availability.create({
        staff_id: ana.id,
        type: "weekly",
        weekdays: [2],
        start_time: "09:00",
        end_time: "10:00"
      })
      expect(inherited.time_zone).toBe("America/New_York")
      expect(yield* refusal(s.staff.create({ name: "X", time_zone: "europe/atlantis" }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "time_zone" }]
      })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("a slot query in lower case groups the days by that zone", () =>
    Effect.gen(function*() {
      const s = yield* core
      const ana = yield* s.staff.create({ name: "Ana", time_zone: "Europe/Berlin" })
      yield* s.availability.create({ staff_id: ana.id, type: "weekly", weekdays: [1], start_time: "09:00", end_time: "10:00" })
      const service = yield* s.services.create({ name: "Cut", duration_minutes: 60, staff_ids: [ana.id] })
      const query = { service_id: service.id, start: MONDAY_9, end: "2027-03-30T00:00:00Z" }
      const lower = yield* s.availability.slots({ ...query, time_zone: "pacific/auckland" })
      const canonical = yield* s.availability.slots({ ...query, time_zone: "Pacific/Auckland" })
      expect(lower).toEqual(canonical)
      // 09:00 in Berlin on Monday is already Monday evening in Auckland (UTC+13).
      expect(lower.days).toEqual([{
        date: "2027-03-29",
        slots: [{ start: MONDAY_9, end: "2027-03-29T08:00:00Z", staff_id: ana.id, staff_ids: [ana.id], remaining: 1 }]
      }])
    }).pipe(Effect.provide(CoreTest)))
})
