/**
 * Weekly hours follow their zone across DST, end to end through slots and bookings: a
 * 09:00–17:00 rule stays 09:00–17:00 local on both sides of each change, and rules that span
 * a change offer nothing in the gap and nothing twice in the overlap.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { core, coreTestLayer } from "../support/coreTest.js"

const localTime = (instant: string, zone: string) =>
  new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(instant))
const localDate = (instant: string, zone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(instant))

/** A staff member working `startTime`–`endTime` every day in `zone`, an hour-long service, a client. */
const setup = (zone: string, startTime: string, endTime: string) =>
  Effect.gen(function*() {
    const s = yield* core
    const staff = yield* s.staff.create({ name: "Z", time_zone: zone })
    yield* s.availability.create({
      staff_id: staff.id,
      type: "weekly",
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      start_time: startTime,
      end_time: endTime
    })
    const service = yield* s.services.create({ name: "Hour", duration_minutes: 60, slot_interval_minutes: 30, staff_ids: [staff.id] })
    const client = yield* s.clients.create({ name: "C" })
    return { s, staff, service, client }
  })

/** Each test's own store, its clock at 2026-01-01, before every change the cases look at. */
const beforeTheChanges = coreTestLayer(Date.parse("2026-01-01T00:00:00Z"))

/** First and last slot start of each local day, as local wall-clock times. */
const daySpans = (slots: ReadonlyArray<{ start: string; end: string }>, zone: string) => {
  const days = new Map<string, Array<string>>()
  for (const slot of slots) {
    const date = localDate(slot.start, zone)
    days.set(date, [...(days.get(date) ?? []), slot.start])
  }
  return Object.fromEntries(
    [...days].map(([date, starts]) => [date, [localTime(starts[0]!, zone), localTime(starts[starts.length - 1]!, zone), starts.length]])
  )
}

describe("DST", () => {
  const cases = [
    { zone: "Europe/Berlin", from: "2026-03-28", days: ["2026-03-28", "2026-03-29", "2026-03-30"] },
    { zone: "Europe/Berlin", from: "2026-10-24", days: ["2026-10-24", "2026-10-25", "2026-10-26"] },
    { zone: "America/New_York", from: "2026-03-07", days: ["2026-03-07", "2026-03-08", "2026-03-09"] },
    { zone: "America/New_York", from: "2026-10-31", days: ["2026-10-31", "2026-11-01", "2026-11-02"] },
    { zone: "Australia/Lord_Howe", from: "2026-04-04", days: ["2026-04-04", "2026-04-05", "2026-04-06"] },
    { zone: "Australia/Lord_Howe", from: "2026-10-03", days: ["2026-10-03", "2026-10-04", "2026-10-05"] },
    { zone: "Asia/Kolkata", from: "2026-03-28", days: ["2026-03-28", "2026-03-29", "2026-03-30"] }
  ]
  for (const c of cases) {
    it.effect(`${c.zone} around ${c.days[1]}: 09:00–17:00 stays local`, () =>
      Effect.gen(function*() {
        const { s, service } = yield* setup(c.zone, "09:00", "17:00")
        const start = new Date(`${c.from}T00:00:00Z`).getTime() - 86_400_000
        const slots = (yield* s.availability.slots({
          service_id: service.id,
          start: new Date(start).toISOString(),
          end: new Date(start + 5 * 86_400_000).toISOString(),
          time_zone: c.zone
        })).data
        const spans = daySpans(slots, c.zone)
        for (const day of c.days) expect(spans[day], day).toEqual(["09:00", "16:00", 15])
      }).pipe(Effect.provide(beforeTheChanges)))
  }

  it.effect("Europe/Berlin spring forward: a 01:00–04:00 rule offers nothing in the gap", () =>
    Effect.gen(function*() {
      const { s, service } = yield* setup("Europe/Berlin", "01:00", "04:00")
      const slots =
        (yield* s.availability.slots({ service_id: service.id, start: "2026-03-28T22:00:00Z", end: "2026-03-29T04:00:00Z" })).data
      // 01:00 CET = 00:00Z until 04:00 CEST = 02:00Z: two real hours, none of them 02:xx local.
      expect(slots.map((x) => x.start)).toEqual(["2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z"])
      expect(slots.map((x) => localTime(x.start, "Europe/Berlin"))).toEqual(["01:00", "01:30", "03:00"])
    }).pipe(Effect.provide(beforeTheChanges)))

  it.effect("Europe/Berlin fall back: a 01:00–04:00 rule offers each real instant once", () =>
    Effect.gen(function*() {
      const { s, service, staff, client } = yield* setup("Europe/Berlin", "01:00", "04:00")
      const slots =
        (yield* s.availability.slots({ service_id: service.id, start: "2026-10-24T22:00:00Z", end: "2026-10-25T04:00:00Z" })).data
      const starts = slots.map((x) => x.start)
      expect(new Set(starts).size).toBe(starts.length)
      // 01:00 CEST = 23:00Z until 04:00 CET = 03:00Z: four real hours, seven hour-long starts.
      expect(starts[0]).toBe("2026-10-24T23:00:00Z")
      expect(starts[starts.length - 1]).toBe("2026-10-25T02:00:00Z")
      expect(starts).toHaveLength(7)
      // Both 02:30s are real, distinct instants; booking one leaves the other.
      yield* s.bookings.create({ service_id: service.id, staff_id: staff.id, client_id: client.id, start: "2026-10-25T00:30:00Z" })
      const after =
        (yield* s.availability.slots({ service_id: service.id, start: "2026-10-24T22:00:00Z", end: "2026-10-25T04:00:00Z" })).data
      expect(after.map((x) => x.start)).toContain("2026-10-25T02:00:00Z")
      expect(after.map((x) => x.start)).not.toContain("2026-10-25T00:30:00Z")
    }).pipe(Effect.provide(beforeTheChanges)))

  it.effect("explain names the DST gap", () =>
    Effect.gen(function*() {
      const { s, service, staff } = yield* setup("Europe/Berlin", "02:00", "05:00")
      // 02:00 local does not exist on 2026-03-29; the window starts at 03:00 CEST = 01:00Z.
      const ex = yield* s.availability.explain({ service_id: service.id, staff_id: staff.id, start: "2026-03-29T00:30:00Z" })
      expect(ex.bookable).toBe(false)
      expect(ex.reasons.map((r) => r.code)).toEqual(["dst_gap"])
    }).pipe(Effect.provide(beforeTheChanges)))
})
