/** Validation names every bad field, with its path, and refuses unknown fields. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { SlotwiseFailure } from "../../src/domain/errors.js"
import { core, CoreTest, refusal, salonIn } from "../support/coreTest.js"

describe("validation", () => {
  it.effect("reports every invalid field of a service at once", () =>
    Effect.gen(function*() {
      const s = yield* core
      const error = yield* refusal(s.services.create({
        name: " ",
        duration_minutes: 1.5,
        capacity: 0,
        price: { amount: -1, currency: "euro" },
        staff_ids: ["nope"],
        metadata: { k: 1 },
        colour: "red"
      } as any))
      expect(error).toMatchObject({ code: "validation_failed", status: 422, name: "ValidationError" })
      const paths = (error.errors as Array<{ path: string }>).map((e) => e.path).sort()
      expect(paths).toEqual([
        "capacity",
        "colour",
        "duration_minutes",
        "metadata.k",
        "name",
        "price.amount",
        "price.currency",
        "staff_ids.0"
      ])
      expect((yield* s.services.list()).data).toEqual([])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses a NUL character or an unpaired surrogate in any string of an input, metadata keys too, naming each field", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { staffId } = yield* salonIn()
      const clientsBefore = (yield* s.clients.list()).data.length
      const error = yield* refusal(
        s.clients.create({ name: "B\u0000b", email: "bob@example.com", notes: "fine", metadata: { tag: "x\u0000", ["k\u0000"]: "v" } })
      )
      expect(error).toMatchObject({ code: "validation_failed", status: 422 })
      expect(error.errors).toEqual([
        { path: "name", message: "must not contain a NUL character or an unpaired surrogate" },
        { path: "metadata.tag", message: "must not contain a NUL character or an unpaired surrogate" },
        { path: "metadata", message: "must not have a key that contains a NUL character or an unpaired surrogate" }
      ])
      expect(yield* refusal(s.staff.update(staffId, { name: "A\u0000" }))).toMatchObject({
        errors: [{ path: "name", message: "must not contain a NUL character or an unpaired surrogate" }]
      })
      expect(yield* refusal(s.clients.list({ email: "\u0000" }))).toMatchObject({ errors: [{ path: "email" }] })
      // An unpaired surrogate (JSON's "\ud800") is refused alike, in the same words.
      expect(yield* refusal(s.clients.create({ name: "B\ud800b" }))).toMatchObject({
        errors: [{ path: "name", message: "must not contain a NUL character or an unpaired surrogate" }]
      })
      expect(yield* refusal(s.staff.update(staffId, { name: "\udc00" }))).toMatchObject({ errors: [{ path: "name" }] })
      // A path id with a NUL names nothing; it is refused without being echoed.
      expect(yield* refusal(s.bookings.get("bkg_\u0000"))).toMatchObject({ code: "not_found", detail: "there is no booking with that id" })
      expect((yield* s.clients.list()).data).toHaveLength(clientsBefore)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("checks zones, dates, times and instants for real, not by shape", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { staffId } = yield* salonIn()
      const bad = yield* refusal(
        s.availability.create({
          staff_id: staffId,
          type: "date",
          date: "2027-02-30",
          start_time: "25:00",
          end_time: "09:00",
          time_zone: "Mars/Olympus"
        })
      )
      expect((bad.errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(["date", "start_time", "time_zone"])
      const order = yield* refusal(
        s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1, 1, 8], start_time: "17:00", end_time: "09:00" })
      )
      expect((order.errors as Array<{ path: string }>).map((e) => e.path)).toContain("weekdays.2")
      const backwards = yield* refusal(
        s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1], start_time: "17:00", end_time: "09:00" })
      )
      expect(backwards.errors).toEqual([{ path: "end_time", message: "must be later than start_time" }])
      expect(yield* refusal(s.staff.create({ name: "X", time_zone: "Europe/Berlinn" }))).toMatchObject({ errors: [{ path: "time_zone" }] })
      expect(yield* refusal(s.bookings.list({ start_from: "2027-13-01T00:00:00Z" }))).toMatchObject({ errors: [{ path: "start_from" }] })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses fields that do not belong to a rule's type on update", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { staffId } = yield* salonIn()
      const rule = yield* s.availability.create({
        staff_id: staffId,
        type: "blocked",
        start: "2027-03-29T10:00:00Z",
        end: "2027-03-29T11:00:00Z"
      })
      expect(yield* refusal(s.availability.update(rule.id, { weekdays: [1] }))).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "weekdays" }]
      })
      expect(yield* refusal(s.availability.update(rule.id, { end: "2027-03-29T09:00:00Z" }))).toMatchObject({ errors: [{ path: "end" }] })
      const updated = yield* s.availability.update(rule.id, { end: "2027-03-29T12:00:00Z" })
      expect(updated).toMatchObject({ type: "blocked", end: "2027-03-29T12:00:00Z", time_zone: "Europe/Berlin" })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("reports a bad value of a nullable field once, with the reason, not the null branch", () =>
    Effect.gen(function*() {
      const s = yield* core
      const error = yield* refusal(s.clients.create({ name: "N", email: "not-an-email", notes: 7 } as any))
      expect(error.errors).toEqual([
        { path: "email", message: "must be an email address" },
        { path: "notes", message: "must be a string" }
      ])
      expect(error.detail).toBe("2 fields are invalid: email, notes")
      const one = yield* refusal(s.clients.create({ name: "N", email: "x" }))
      expect(one.errors).toEqual([{ path: "email", message: "must be an email address" }])
      expect(one.detail).toBe("email must be an email address")
    }).pipe(Effect.provide(CoreTest)))

  it.effect("limits metadata to 50 keys", () =>
    Effect.gen(function*() {
      const s = yield* core
      const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
      expect(yield* refusal(s.clients.create({ name: "M", metadata }))).toMatchObject({ errors: [{ path: "metadata" }] })
      expect((yield* s.clients.create({ name: "M", metadata: { a: "b" } })).metadata).toEqual({ a: "b" })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("answers unknown ids with not_found and malformed cursors with bad_request", () =>
    Effect.gen(function*() {
      const s = yield* core
      expect(yield* refusal(s.bookings.get("bkg_00000000000000000000000000"))).toMatchObject({
        code: "not_found",
        status: 404,
        name: "NotFoundError"
      })
      expect(yield* refusal(s.clients.list({ cursor: "garbage" }))).toMatchObject({
        code: "bad_request",
        status: 400,
        errors: [{ path: "cursor" }]
      })
      expect(yield* refusal(s.clients.list({ limit: 101 }))).toMatchObject({ code: "validation_failed", errors: [{ path: "limit" }] })
    }).pipe(Effect.provide(CoreTest)))

  it.effect("says what is wrong in each field's own terms, once per field, without quoting schema text", () =>
    Effect.gen(function*() {
      const s = yield* core
      const { staffId } = yield* salonIn()
      const messages = <A, E extends SlotwiseFailure, R>(run: Effect.Effect<A, E, R>) =>
        Effect.map(refusal(run), (refused) => refused.errors as Array<{ path: string; message: string }>)
      expect(yield* messages(s.clients.create({ name: 5, email: "x@y", phone: "call me", metadata: { a: 1 } } as any))).toEqual([
        { path: "name", message: "must be a string" },
        { path: "email", message: "must be an email address" },
        { path: "phone", message: "must be a phone number" },
        { path: "metadata.a", message: "must be a string" }
      ])
      expect(yield* messages(s.staff.create({ name: "Ana", time_zone: "Mars/Olympus" }))).toEqual([
        { path: "time_zone", message: "must be an IANA time zone such as Europe/Berlin" }
      ])
      expect(
        yield* messages(
          s.services.create({ name: "Cut", duration_minutes: 30.5, price: { amount: -5, currency: "EUR" }, active: "yes" } as any)
        )
      ).toEqual([
        { path: "duration_minutes", message: "must be a whole number from 1 to 1440" },
        { path: "price.amount", message: "must be a non-negative integer in minor units, such as 1999 for 19.99" },
        { path: "active", message: "must be true or false" }
      ])
      expect(yield* messages(s.services.create({ name: "Cut", duration_minutes: 30, price: -5 } as any))).toEqual([
        { path: "price", message: "must be an object" }
      ])
      expect(yield* messages(s.availability.create({ staff_id: staffId, type: "monthly" } as any))).toEqual([
        { path: "type", message: "must be one of weekly, date, blocked" }
      ])
      expect(yield* messages(s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1, 8], start_time: "09:00" } as any)))
        .toEqual([
          { path: "weekdays.1", message: "must be a weekday from 1 (Monday) to 7 (Sunday)" },
          { path: "end_time", message: "is required" }
        ])
      // A filter that takes one value or a list: one entry, not one per branch.
      expect(yield* messages(s.bookings.list({ status: "bogus" } as any))).toEqual([
        { path: "status", message: "must be one of pending, confirmed, cancelled, completed, no_show, or a list of them" }
      ])
      expect(yield* messages(s.bookings.list({ status: ["confirmed", "bogus"] } as any))).toEqual([
        { path: "status.1", message: "must be one of pending, confirmed, cancelled, completed, no_show" }
      ])
    }).pipe(Effect.provide(CoreTest)))

  it.effect("never echoes the value: a 200,000-character name gets a short error", () =>
    Effect.gen(function*() {
      const s = yield* core
      const error = yield* refusal(s.clients.create({ name: "x".repeat(200_000) }))
      expect(error.errors).toEqual([{ path: "name", message: "must be at most 200 characters" }])
      expect(error.detail).toBe("name must be at most 200 characters")
      expect(JSON.stringify(error.errors).length).toBeLessThan(200)
    }).pipe(Effect.provide(CoreTest)))

  it.effect("refuses an input that is not an object with one error", () =>
    Effect.gen(function*() {
      const s = yield* core
      for (const input of ["x", 42, [], [1, 2], true]) {
        const error = yield* refusal(s.clients.create(input as any))
        expect(error.errors).toEqual([{ path: "", message: "must be a JSON object" }])
        expect(error.detail).toBe("the body must be a JSON object")
      }
    }).pipe(Effect.provide(CoreTest)))
})
