/** Validation names every bad field, with its path, and refuses unknown fields. */
import { describe, expect, it } from "vitest"
import { createTestScheduling } from "../../index.js"
import { failure, NOW, salon } from "../support/fixtures.js"

describe("validation", () => {
  it("reports every invalid field of a service at once", async () => {
    const s = await createTestScheduling({ now: NOW })
    const error = await failure(s.services.create({
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
    expect(paths).toEqual(["capacity", "colour", "duration_minutes", "metadata.k", "name", "price.amount", "price.currency", "staff_ids.0"])
    expect((await s.services.list()).data).toEqual([])
  })

  it("refuses a NUL character or an unpaired surrogate in any string of an input, metadata keys too, naming each field", async () => {
    const { s, staffId } = await salon()
    const clientsBefore = (await s.clients.list()).data.length
    const error = await failure(
      s.clients.create({ name: "B\u0000b", email: "bob@example.com", notes: "fine", metadata: { tag: "x\u0000", ["k\u0000"]: "v" } })
    )
    expect(error).toMatchObject({ code: "validation_failed", status: 422 })
    expect(error.errors).toEqual([
      { path: "name", message: "must not contain a NUL character or an unpaired surrogate" },
      { path: "metadata.tag", message: "must not contain a NUL character or an unpaired surrogate" },
      { path: "metadata", message: "must not have a key that contains a NUL character or an unpaired surrogate" }
    ])
    expect(await failure(s.staff.update(staffId, { name: "A\u0000" }))).toMatchObject({
      errors: [{ path: "name", message: "must not contain a NUL character or an unpaired surrogate" }]
    })
    expect(await failure(s.clients.list({ email: "\u0000" }))).toMatchObject({ errors: [{ path: "email" }] })
    // An unpaired surrogate (JSON's "\ud800") is refused alike, in the same words.
    expect(await failure(s.clients.create({ name: "B\ud800b" }))).toMatchObject({
      errors: [{ path: "name", message: "must not contain a NUL character or an unpaired surrogate" }]
    })
    expect(await failure(s.staff.update(staffId, { name: "\udc00" }))).toMatchObject({ errors: [{ path: "name" }] })
    // A path id with a NUL names nothing; it is refused without being echoed.
    expect(await failure(s.bookings.get("bkg_\u0000"))).toMatchObject({ code: "not_found", detail: "there is no booking with that id" })
    expect((await s.clients.list()).data).toHaveLength(clientsBefore)
  })

  it("checks zones, dates, times and instants for real, not by shape", async () => {
    const { s, staffId } = await salon()
    const bad = await failure(
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
    const order = await failure(
      s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1, 1, 8], start_time: "17:00", end_time: "09:00" })
    )
    expect((order.errors as Array<{ path: string }>).map((e) => e.path)).toContain("weekdays.2")
    const backwards = await failure(
      s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1], start_time: "17:00", end_time: "09:00" })
    )
    expect(backwards.errors).toEqual([{ path: "end_time", message: "must be later than start_time" }])
    expect(await failure(s.staff.create({ name: "X", time_zone: "Europe/Berlinn" }))).toMatchObject({ errors: [{ path: "time_zone" }] })
    expect(await failure(s.bookings.list({ start_from: "2027-13-01T00:00:00Z" }))).toMatchObject({ errors: [{ path: "start_from" }] })
  })

  it("refuses fields that do not belong to a rule's type on update", async () => {
    const { s, staffId } = await salon()
    const rule = await s.availability.create({
      staff_id: staffId,
      type: "blocked",
      start: "2027-03-29T10:00:00Z",
      end: "2027-03-29T11:00:00Z"
    })
    expect(await failure(s.availability.update(rule.id, { weekdays: [1] }))).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "weekdays" }]
    })
    expect(await failure(s.availability.update(rule.id, { end: "2027-03-29T09:00:00Z" }))).toMatchObject({ errors: [{ path: "end" }] })
    const updated = await s.availability.update(rule.id, { end: "2027-03-29T12:00:00Z" })
    expect(updated).toMatchObject({ type: "blocked", end: "2027-03-29T12:00:00Z", time_zone: "Europe/Berlin" })
  })

  it("reports a bad value of a nullable field once, with the reason, not the null branch", async () => {
    const s = await createTestScheduling({ now: NOW })
    const error = await failure(s.clients.create({ name: "N", email: "not-an-email", notes: 7 } as any))
    expect(error.errors).toEqual([
      { path: "email", message: "must be an email address" },
      { path: "notes", message: "must be a string" }
    ])
    expect(error.detail).toBe("2 fields are invalid: email, notes")
    const one = await failure(s.clients.create({ name: "N", email: "x" }))
    expect(one.errors).toEqual([{ path: "email", message: "must be an email address" }])
    expect(one.detail).toBe("email must be an email address")
  })

  it("limits metadata to 50 keys", async () => {
    const s = await createTestScheduling({ now: NOW })
    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]))
    expect(await failure(s.clients.create({ name: "M", metadata }))).toMatchObject({ errors: [{ path: "metadata" }] })
    expect((await s.clients.create({ name: "M", metadata: { a: "b" } })).metadata).toEqual({ a: "b" })
  })

  it("answers unknown ids with not_found and malformed cursors with bad_request", async () => {
    const s = await createTestScheduling({ now: NOW })
    expect(await failure(s.bookings.get("bkg_00000000000000000000000000"))).toMatchObject({
      code: "not_found",
      status: 404,
      name: "NotFoundError"
    })
    expect(await failure(s.clients.list({ cursor: "garbage" }))).toMatchObject({
      code: "bad_request",
      status: 400,
      errors: [{ path: "cursor" }]
    })
    expect(await failure(s.clients.list({ limit: 101 }))).toMatchObject({ code: "validation_failed", errors: [{ path: "limit" }] })
  })

  it("says what is wrong in each field's own terms, once per field, without quoting schema text", async () => {
    const { s, staffId } = await salon()
    const messages = async (run: Promise<unknown>) => (await failure(run)).errors as Array<{ path: string; message: string }>
    expect(await messages(s.clients.create({ name: 5, email: "x@y", phone: "call me", metadata: { a: 1 } } as any))).toEqual([
      { path: "name", message: "must be a string" },
      { path: "email", message: "must be an email address" },
      { path: "phone", message: "must be a phone number" },
      { path: "metadata.a", message: "must be a string" }
    ])
    expect(await messages(s.staff.create({ name: "Ana", time_zone: "Mars/Olympus" }))).toEqual([
      { path: "time_zone", message: "must be an IANA time zone such as Europe/Berlin" }
    ])
    expect(
      await messages(
        s.services.create({ name: "Cut", duration_minutes: 30.5, price: { amount: -5, currency: "EUR" }, active: "yes" } as any)
      )
    ).toEqual([
      { path: "duration_minutes", message: "must be a whole number from 1 to 1440" },
      { path: "price.amount", message: "must be a non-negative integer in minor units, such as 1999 for 19.99" },
      { path: "active", message: "must be true or false" }
    ])
    expect(await messages(s.services.create({ name: "Cut", duration_minutes: 30, price: -5 } as any))).toEqual([
      { path: "price", message: "must be an object" }
    ])
    expect(await messages(s.availability.create({ staff_id: staffId, type: "monthly" } as any))).toEqual([
      { path: "type", message: "must be one of weekly, date, blocked" }
    ])
    expect(await messages(s.availability.create({ staff_id: staffId, type: "weekly", weekdays: [1, 8], start_time: "09:00" } as any)))
      .toEqual([
        { path: "weekdays.1", message: "must be a weekday from 1 (Monday) to 7 (Sunday)" },
        { path: "end_time", message: "is required" }
      ])
    // A filter that takes one value or a list: one entry, not one per branch.
    expect(await messages(s.bookings.list({ status: "bogus" } as any))).toEqual([
      { path: "status", message: "must be one of pending, confirmed, cancelled, completed, no_show, or a list of them" }
    ])
    expect(await messages(s.bookings.list({ status: ["confirmed", "bogus"] } as any))).toEqual([
      { path: "status.1", message: "must be one of pending, confirmed, cancelled, completed, no_show" }
    ])
  })

  it("never echoes the value: a 200,000-character name gets a short error", async () => {
    const s = await createTestScheduling({ now: NOW })
    const error = await failure(s.clients.create({ name: "x".repeat(200_000) }))
    expect(error.errors).toEqual([{ path: "name", message: "must be at most 200 characters" }])
    expect(error.detail).toBe("name must be at most 200 characters")
    expect(JSON.stringify(error.errors).length).toBeLessThan(200)
  })

  it("refuses an input that is not an object with one error", async () => {
    const s = await createTestScheduling({ now: NOW })
    for (const input of ["x", 42, [], [1, 2], true]) {
      const error = await failure(s.clients.create(input as any))
      expect(error.errors).toEqual([{ path: "", message: "must be a JSON object" }])
      expect(error.detail).toBe("the body must be a JSON object")
    }
  })
})
