/**
 * Recurring bookings over HTTP: POST /v1/booking-series answers 201 with the booking_series,
 * 409 series_unavailable listing each blocked occurrence, 422 naming recurrence.rule (or the
 * missing recurrence); idempotency replays a series; the series endpoints read and cancel it
 * under the bookings scopes; publishable keys book a series only where the service offers
 * repeats, and see public views. POST /v1/bookings with `recurrence` (deprecated) still books
 * the same series.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, client, expectProblem, expectStatus, MONDAY_9, scopedKey, seed, startServer, type TestServer } from "./harness.js"

const ORIGIN = "https://shop.example.com"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

/** A fresh account with a seeded tenant whose service offers up to `repeats` occurrences. */
const account = async (repeats = 10) => {
  const acct = expectStatus(
    await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Studio", plan: "business", allowed_origins: [ORIGIN] }),
    201
  )
  const api = client(server.url, acct.keys.sandbox.secret)
  const s = await seed(api)
  expectStatus(await api.patch(`/v1/services/${s.service.id}`, { max_occurrences: repeats }), 200)
  const pk = client(server.url, acct.keys.sandbox.publishable)
  return { acct, api, s, pk }
}

const weekly = (s: Awaited<ReturnType<typeof seed>>, rule = "FREQ=WEEKLY;COUNT=3", extra: Record<string, unknown> = {}) => ({
  service_id: s.service.id,
  staff_id: s.staff.id,
  client_id: s.client.id,
  start: MONDAY_9,
  recurrence: { rule },
  ...extra
})

describe("POST /v1/booking-series", () => {
  it("201 with the booking_series; each occurrence a booking with series_id and a manage link; GET reads it back", async () => {
    const { api, s } = await account()
    const series = expectStatus(await api.post("/v1/booking-series", weekly(s)), 201)
    expect(series).toMatchObject({
      object: "booking_series",
      service_id: s.service.id,
      staff_id: s.staff.id,
      staff_ids: [s.staff.id],
      assigned_by: "chosen",
      client_id: s.client.id,
      time_zone: "UTC",
      skipped: []
    })
    expect(series.occurrences.map((b: any) => b.start)).toEqual(["2027-03-29T09:00:00Z", "2027-04-05T09:00:00Z", "2027-04-12T09:00:00Z"])
    for (const b of series.occurrences) {
      expect(b).toMatchObject({ object: "booking", series_id: series.id, status: "confirmed" })
      expect(b.manage_url).toMatch(/\/manage\//)
    }
    const read = expectStatus(await api.get(`/v1/booking-series/${series.id}`), 200)
    expect(read).toEqual(series)
    const one = expectStatus(await api.get(`/v1/bookings/${series.occurrences[1].id}`), 200)
    expect(one.series_id).toBe(series.id)
    const listed = expectStatus(await api.get("/v1/bookings?limit=10"), 200)
    expect(listed.data).toHaveLength(3)
  })

  it("an Idempotency-Key replays the series and books nothing again", async () => {
    const { api, s } = await account()
    const headers = { headers: { "idempotency-key": "series-once" } }
    const first = await api.post("/v1/booking-series", weekly(s), headers)
    const again = await api.post("/v1/booking-series", weekly(s), headers)
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.json).toEqual(first.json)
    expect(expectStatus(await api.get("/v1/bookings?limit=10"), 200).data).toHaveLength(3)
    expectProblem(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=2"), headers), 422, "idempotency_mismatch")
  })

  it("409 series_unavailable lists each blocked occurrence with its reasons; skip books the rest", async () => {
    const { api, s } = await account()
    const taken = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-04-05T09:00:00Z"
      }),
      201
    )
    const refused = expectProblem(await api.post("/v1/booking-series", weekly(s)), 409, "series_unavailable")
    expect(refused.occurrences).toEqual([
      { start: "2027-04-05T09:00:00Z", reasons: [expect.objectContaining({ code: "booking_overlap", booking_id: taken.id })] }
    ])
    expect(expectStatus(await api.get("/v1/bookings?limit=10"), 200).data).toHaveLength(1)
    const skipped = expectStatus(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=3", { on_conflict: "skip" })), 201)
    expect(skipped.occurrences.map((b: any) => b.start)).toEqual(["2027-03-29T09:00:00Z", "2027-04-12T09:00:00Z"])
    expect(skipped.skipped).toEqual(refused.occurrences)
  })

  it("422 names recurrence.rule and what is allowed; 422 over the service's max_occurrences; unknown fields refused", async () => {
    const { api, s } = await account(2)
    const rule = expectProblem(await api.post("/v1/booking-series", weekly(s, "FREQ=HOURLY;COUNT=3")), 422, "validation_failed")
    expect(rule.errors).toEqual([{ path: "recurrence.rule", message: expect.stringContaining("allowed: FREQ=DAILY, WEEKLY or MONTHLY") }])
    const many = expectProblem(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=3")), 422, "validation_failed")
    expect(many.errors).toEqual([{ path: "recurrence.rule", message: expect.stringContaining("more than 2") }])
    const unknown = expectProblem(
      await api.post("/v1/booking-series", { ...weekly(s), recurrence: { rule: "FREQ=DAILY;COUNT=2", dtstart: "x" } }),
      422
    )
    expect(unknown.errors.map((e: any) => e.path)).toContain("recurrence.dtstart")
    const zone = expectProblem(
      await api.post("/v1/booking-series", { ...weekly(s), recurrence: { rule: "FREQ=DAILY;COUNT=2", time_zone: "Mars/Base" } }),
      422
    )
    expect(zone.errors.map((e: any) => e.path)).toEqual(["recurrence.time_zone"])
    expectProblem(await api.post("/v1/bookings", { ...weekly(s), recurrence: undefined, on_conflict: "skip" }), 422, "validation_failed")
  })

  it("422 without recurrence or with hold_id; nothing is booked", async () => {
    const { api, s } = await account()
    const missing = expectProblem(await api.post("/v1/booking-series", { ...weekly(s), recurrence: undefined }), 422, "validation_failed")
    expect(missing.errors.map((e: any) => e.path)).toEqual(["recurrence"])
    const held = expectProblem(
      await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=2", { hold_id: "hld_x" })),
      422,
      "validation_failed"
    )
    expect(held.errors.map((e: any) => e.path)).toEqual(["hold_id"])
    expect(expectStatus(await api.get("/v1/bookings"), 200).data).toEqual([])
  })

  it("POST /v1/bookings with recurrence (deprecated) still books the series, replays it and shows visitors its public view", async () => {
    const { api, s, pk } = await account()
    const headers = { headers: { "idempotency-key": "series-through-bookings" } }
    const series = expectStatus(await api.post("/v1/bookings", weekly(s), headers), 201)
    expect(series).toMatchObject({ object: "booking_series", client_id: s.client.id, skipped: [] })
    expect(series.occurrences.map((b: any) => b.start)).toEqual(["2027-03-29T09:00:00Z", "2027-04-05T09:00:00Z", "2027-04-12T09:00:00Z"])
    expect(series.occurrences[0].manage_url).toMatch(/\/manage\//)
    expect(expectStatus(await api.get(`/v1/booking-series/${series.id}`), 200)).toEqual(series)
    const again = await api.post("/v1/bookings", weekly(s), headers)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.json).toEqual(series)
    const visitor = { headers: { origin: ORIGIN } }
    const body = {
      service_id: s.service.id,
      staff_id: s.staff.id,
      client: { name: "Vi", email: "vi@example.com" },
      start: "2027-03-30T09:00:00Z",
      recurrence: { rule: "FREQ=WEEKLY;COUNT=2" }
    }
    const theirs = expectStatus(await pk.post("/v1/bookings", body, visitor), 201)
    expect(theirs).toMatchObject({ object: "booking_series", occurrences: [{ status: "confirmed" }, { status: "confirmed" }] })
    expect(theirs.client_id).toBeUndefined()
  })
})

describe("the series endpoints", () => {
  it("cancel from an occurrence cancels it and the later ones; all by default; each with its own event", async () => {
    const { api, s } = await account()
    const series = expectStatus(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=4")), 201)
    const later = expectStatus(
      await api.post(`/v1/booking-series/${series.id}/cancel`, { from: series.occurrences[2].start, reason: "away" }),
      200
    )
    expect(later.occurrences.map((b: any) => b.status)).toEqual(["confirmed", "confirmed", "cancelled", "cancelled"])
    const all = expectStatus(await api.post(`/v1/booking-series/${series.id}/cancel`, {}), 200)
    expect(all.occurrences.map((b: any) => b.status)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled"])
    const events = expectStatus(await api.get("/v1/events?types=booking.cancelled&limit=20"), 200)
    expect(events.data.map((e: any) => e.data.object.id).sort()).toEqual(series.occurrences.map((b: any) => b.id).sort())
    expectProblem(await api.post(`/v1/booking-series/${series.id}/cancel`, { since: "x" }), 422)
    // Rescheduling one occurrence moves only it.
    const again = expectStatus(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=2")), 201)
    expectStatus(await api.post(`/v1/bookings/${again.occurrences[0].id}/reschedule`, { start: "2027-03-29T11:00:00Z" }), 200)
    const read = expectStatus(await api.get(`/v1/booking-series/${again.id}`), 200)
    expect(read.occurrences.map((b: any) => b.start)).toEqual(["2027-03-29T11:00:00Z", "2027-04-05T09:00:00Z"])
  })

  it("scopes like bookings; another tenant's series is 404", async () => {
    const { api, s } = await account()
    const series = expectStatus(await api.post("/v1/booking-series", weekly(s)), 201)
    const reader = client(server.url, await scopedKey(api, ["bookings:read"]))
    expectStatus(await reader.get(`/v1/booking-series/${series.id}`), 200)
    expectProblem(await reader.post(`/v1/booking-series/${series.id}/cancel`, {}), 403, "forbidden")
    const other = await account()
    expectProblem(await other.api.get(`/v1/booking-series/${series.id}`), 404, "not_found")
    expectProblem(await other.api.post(`/v1/booking-series/${series.id}/cancel`, {}), 404, "not_found")
    expectProblem(await api.get("/v1/booking-series/ser_nope"), 404, "not_found")
  })

  it("a publishable key books a series only where the service offers repeats, and sees public views", async () => {
    const { pk, s, api } = await account()
    const visitor = { headers: { origin: ORIGIN } }
    const body = {
      service_id: s.service.id,
      staff_id: s.staff.id,
      client: { name: "Vi", email: "vi@example.com" },
      start: MONDAY_9,
      recurrence: { rule: "FREQ=WEEKLY;COUNT=2" }
    }
    const series = expectStatus(await pk.post("/v1/booking-series", body, visitor), 201)
    expect(Object.keys(series).sort()).toEqual([
      "created_at",
      "id",
      "object",
      "occurrences",
      "rule",
      "service_id",
      "skipped",
      "staff_id",
      "staff_ids",
      "time_zone",
      "updated_at"
    ])
    for (const b of series.occurrences) {
      expect(b.client_id).toBeUndefined()
      expect(b.manage_url).toBeUndefined()
      expect(b.status).toBe("confirmed")
    }
    expectProblem(await pk.get(`/v1/booking-series/${series.id}`, visitor), 403, "forbidden")
    expectProblem(
      await pk.post("/v1/booking-series", { ...body, client: undefined, client_id: s.client.id }, visitor),
      422,
      "validation_failed"
    )
    expectStatus(await api.patch(`/v1/services/${s.service.id}`, { max_occurrences: 0 }), 200)
    const closed = expectProblem(
      await pk.post("/v1/booking-series", { ...body, start: "2027-05-03T09:00:00Z" }, visitor),
      422,
      "validation_failed"
    )
    expect(closed.errors).toEqual([{ path: "recurrence", message: expect.stringContaining("max_occurrences") }])
  })
})

describe("series on team services", () => {
  it("collective: 201 with every member on each occurrence; 409 names the member who blocks; round robin: one member, round_robin", async () => {
    const { api, s } = await account()
    const other = expectStatus(await api.post("/v1/staff", { name: "Ben", time_zone: "UTC" }), 201)
    expectStatus(
      await api.post("/v1/availability", {
        staff_id: other.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
    const members = [s.staff.id, other.id]
    const team = async (assignment: string) =>
      expectStatus(
        await api.post("/v1/services", {
          name: `Team ${assignment}`,
          duration_minutes: 60,
          staff_ids: members,
          assignment,
          max_occurrences: 10
        }),
        201
      )
    const collective = await team("collective")
    const body = (serviceId: string, extra: Record<string, unknown> = {}) => ({
      service_id: serviceId,
      client_id: s.client.id,
      start: MONDAY_9,
      recurrence: { rule: "FREQ=WEEKLY;COUNT=3" },
      ...extra
    })
    // The second member is busy alone at the second occurrence (the seeded service is theirs too).
    expectStatus(await api.patch(`/v1/services/${s.service.id}`, { staff_ids: members }), 200)
    const taken = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: other.id,
        client_id: s.client.id,
        start: "2027-04-05T09:00:00Z"
      }),
      201
    )
    const refused = expectProblem(await api.post("/v1/booking-series", body(collective.id)), 409, "series_unavailable")
    expect(refused.occurrences).toEqual([
      {
        start: "2027-04-05T09:00:00Z",
        reasons: [expect.objectContaining({ code: "booking_overlap", booking_id: taken.id, staff_id: other.id })]
      }
    ])
    const series = expectStatus(await api.post("/v1/booking-series", body(collective.id, { on_conflict: "skip" })), 201)
    expect(series.occurrences.map((b: any) => [b.start, b.staff_ids, b.assigned_by])).toEqual([
      ["2027-03-29T09:00:00Z", members, "collective"],
      ["2027-04-12T09:00:00Z", members, "collective"]
    ])
    expect(series.skipped).toEqual(refused.occurrences)
    expect(series).toMatchObject({ staff_id: s.staff.id, staff_ids: members, assigned_by: "collective" })
    expect(expectStatus(await api.get(`/v1/booking-series/${series.id}`), 200)).toMatchObject({
      staff_ids: members,
      assigned_by: "collective"
    })
    // Cancelling the series frees both members at its first occurrence: the slot comes back.
    const starts = async () =>
      expectStatus(await api.get(`/v1/availability/slots?service_id=${collective.id}&start=${MONDAY_9}&end=2027-03-29T10:00:00Z`), 200)
        .data.map((slot: any) => slot.start)
    expect(await starts()).not.toContain(MONDAY_9)
    expectStatus(await api.post(`/v1/booking-series/${series.id}/cancel`, {}), 200)
    expect(await starts()).toContain(MONDAY_9)
    const roundRobin = await team("round_robin")
    const picked = expectStatus(await api.post("/v1/booking-series", body(roundRobin.id)), 201)
    // The first member is free for every occurrence and leads the ranking (nobody has booked the service).
    expect(picked).toMatchObject({ staff_id: s.staff.id, staff_ids: [s.staff.id], assigned_by: "round_robin" })
    expect(picked.occurrences.map((b: any) => [b.staff_ids, b.assigned_by])).toEqual(
      [[[s.staff.id], "round_robin"], [[s.staff.id], "round_robin"], [[s.staff.id], "round_robin"]]
    )
  })
})

describe("GET /v1/booking-series", () => {
  it("pages the series by creation with keyset cursors, each with its occurrences and their manage links", async () => {
    const { api, s } = await account()
    const made = []
    for (const start of [MONDAY_9, "2027-03-29T11:00:00Z", "2027-03-29T13:00:00Z"]) {
      made.push(expectStatus(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=2", { start })), 201))
    }
    const first = expectStatus(await api.get("/v1/booking-series?limit=2"), 200)
    expect(first).toMatchObject({ object: "list", has_more: true })
    expect(first.data).toEqual(made.slice(0, 2))
    expect(first.data[0].occurrences[0].manage_url).toMatch(/\/manage\//)
    // A series made between the pages neither shifts nor repeats one: it comes last.
    made.push(expectStatus(await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=2", { start: "2027-03-30T09:00:00Z" })), 201))
    const second = expectStatus(await api.get(`/v1/booking-series?limit=2&cursor=${first.next_cursor}`), 200)
    expect(second.data.map((x: any) => x.id)).toEqual([made[2].id, made[3].id])
    expect(second).toMatchObject({ has_more: false, next_cursor: null })
    // A cancelled occurrence stays listed, as GET shows it.
    await api.post(`/v1/booking-series/${made[0].id}/cancel`, {})
    const all = expectStatus(await api.get("/v1/booking-series"), 200)
    expect(all.data[0].occurrences.map((b: any) => b.status)).toEqual(["cancelled", "cancelled"])
    expect(all.data.slice(1)).toEqual(made.slice(1))
    const bad = expectProblem(
      await api.get(`/v1/booking-series?limit=2&cursor=${first.next_cursor}&client_id=${s.client.id}`),
      400,
      "bad_request"
    )
    expect(bad.errors).toEqual([{ path: "cursor", message: expect.stringContaining("other filters") }])
    expectProblem(await api.get("/v1/booking-series?limit=0"), 400)
    expectProblem(await api.get("/v1/booking-series?status=confirmed"), 400)
  })

  it("filters by client_id, staff_id and service_id", async () => {
    const { api, s } = await account()
    const other = expectStatus(await api.post("/v1/clients", { name: "Cy", email: "cy@example.com" }), 201)
    const ben = expectStatus(await api.post("/v1/staff", { name: "Ben", time_zone: "UTC" }), 201)
    expectStatus(
      await api.post("/v1/availability", {
        staff_id: ben.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
    const second = expectStatus(
      await api.post("/v1/services", { name: "Trim", duration_minutes: 30, staff_ids: [ben.id], max_occurrences: 5 }),
      201
    )
    const ana = expectStatus(await api.post("/v1/booking-series", weekly(s)), 201)
    const cy = expectStatus(
      await api.post("/v1/booking-series", weekly(s, "FREQ=WEEKLY;COUNT=3", { client_id: other.id, start: "2027-03-29T10:00:00Z" })),
      201
    )
    const benSeries = expectStatus(
      await api.post("/v1/booking-series", { ...weekly(s), service_id: second.id, staff_id: ben.id, client_id: other.id }),
      201
    )
    const ids = async (query: string) => expectStatus(await api.get(`/v1/booking-series?${query}`), 200).data.map((x: any) => x.id)
    expect(await ids(`client_id=${other.id}`)).toEqual([cy.id, benSeries.id])
    expect(await ids(`staff_id=${s.staff.id}`)).toEqual([ana.id, cy.id])
    expect(await ids(`service_id=${second.id}`)).toEqual([benSeries.id])
    expect(await ids(`client_id=${other.id}&staff_id=${ben.id}`)).toEqual([benSeries.id])
    expect(await ids(`client_id=${s.client.id}&service_id=${second.id}`)).toEqual([])
    const wrong = expectProblem(await api.get("/v1/booking-series?staff_id=cli_x"), 400)
    expect(wrong.errors.map((e: any) => e.path)).toEqual(["staff_id"])
  })

  it("scopes like bookings:read; publishable keys refused; accounts and environments never see each other's series", async () => {
    const { acct, api, s, pk } = await account()
    const series = expectStatus(await api.post("/v1/booking-series", weekly(s)), 201)
    const reader = client(server.url, await scopedKey(api, ["bookings:read"]))
    expect(expectStatus(await reader.get("/v1/booking-series"), 200).data.map((x: any) => x.id)).toEqual([series.id])
    const elsewhere = client(server.url, await scopedKey(api, ["services:read"]))
    expectProblem(await elsewhere.get("/v1/booking-series"), 403, "forbidden")
    expectProblem(await pk.get("/v1/booking-series", { headers: { origin: ORIGIN } }), 403, "forbidden")
    expectProblem(await client(server.url).get("/v1/booking-series"), 401)
    const production = client(server.url, acct.keys.production.secret)
    expect(expectStatus(await production.get("/v1/booking-series"), 200)).toEqual({
      object: "list",
      data: [],
      has_more: false,
      next_cursor: null
    })
    const other = await account()
    const theirs = expectStatus(await other.api.post("/v1/booking-series", weekly(other.s)), 201)
    expect(expectStatus(await other.api.get("/v1/booking-series"), 200).data.map((x: any) => x.id)).toEqual([theirs.id])
    expect(expectStatus(await api.get(`/v1/booking-series?client_id=${other.s.client.id}`), 200).data).toEqual([])
    expect(expectStatus(await api.get("/v1/booking-series"), 200).data.map((x: any) => x.id)).toEqual([series.id])
  })
})
