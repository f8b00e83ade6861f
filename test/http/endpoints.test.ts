/** Every endpoint's success path and its error classes, over real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, client, type Client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

describe("system", () => {
  it("GET /health answers without a credential", async () => {
    const body = expectStatus(await client(server.url).get("/health"), 200)
    expect(body).toMatchObject({ status: "ok", storage: "ok" })
  })

  it("GET /v1/openapi.json is an OpenAPI 3.1 document of every /v1 path, with problem+json errors", async () => {
    const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
    expect(spec.openapi).toBe("3.1.0")
    for (const path of ["/v1/bookings", "/v1/bookings/{id}/no-show", "/v1/availability/slots", "/v1/api-keys/exchange", "/v1/account"]) {
      expect(Object.keys(spec.paths)).toContain(path)
    }
    expect(Object.keys(spec.paths).some((p) => p.startsWith("/admin"))).toBe(false)
    const conflict = spec.paths["/v1/bookings"].post.responses["409"] // shared: a $ref into components.responses
    expect(spec.components.responses[conflict.$ref.split("/").pop()].content).toHaveProperty(["application/problem+json"])
    expect(spec.paths["/v1/bookings"].get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(["status", "limit", "cursor", "upcoming"])
    )
    expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
  })

  it("GET /docs is a browsable page that needs no network", async () => {
    const reply = await client(server.url).get("/docs")
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("text/html")
    expect(reply.text).toContain("openapi")
    expect(reply.text).not.toMatch(/<script[^>]+src="https?:/)
    // No inline script: the page only references its script, which the CSP limits to this origin.
    expect(reply.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>[^<\s]/)
    expect(reply.text).toContain("src=\"docs/scalar.js\"")
    expect(reply.text.length).toBeLessThan(2000)
    const csp = reply.headers.get("content-security-policy") ?? ""
    expect(csp).toMatch(/script-src 'self'/)
    expect(/script-src[^;]*'unsafe-inline'/.test(csp)).toBe(false)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(reply.headers.get("x-frame-options")).toBe("DENY")
  })

  it("GET /docs/scalar.js is the reference's script, cached by ETag", async () => {
    const first = await client(server.url).get("/docs/scalar.js")
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toContain("text/javascript")
    expect(first.text.length).toBeGreaterThan(1_000_000)
    expect(first.headers.get("cache-control")).toMatch(/max-age=\d+/)
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[^"]+"$/)
    const again = await client(server.url).get("/docs/scalar.js", { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(again.text).toBe("")
    const weak = await client(server.url).get("/docs/scalar.js", { headers: { "if-none-match": `"other", W/${etag}` } })
    expect(weak.status).toBe(304)
    const stale = await client(server.url).get("/docs/scalar.js", { headers: { "if-none-match": "\"other\"" } })
    expect(stale.status).toBe(200)
  })
})

describe("account and API keys", () => {
  it("GET /v1/account: the account with its limits", async () => {
    const account = expectStatus(await api.get("/v1/account"), 200)
    expect(account).toMatchObject({ id: server.first.account.id, object: "account", plan: "pro", limits: { requests_per_minute: 600 } })
  })

  it("lists keys without secrets; creates, reads, rotates, revokes; exchange issues a production key", async () => {
    const list = expectStatus(await api.get("/v1/api-keys"), 200)
    expect(list.object).toBe("list")
    expect(list.data.length).toBe(2)
    expect(JSON.stringify(list)).not.toContain(server.first.keys.sandbox.secret)
    expect(list.data.every((k: any) => k.environment === "sandbox" && k.redacted.includes("…"))).toBe(true)

    const created = expectStatus(await api.post("/v1/api-keys", { name: "CI", type: "secret", scopes: ["bookings:read"] }), 201)
    expect(created.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/)
    expect(created).toMatchObject({ object: "api_key", type: "secret", scopes: ["bookings:read"], environment: "sandbox" })
    expectStatus(await client(server.url, created.secret).get("/v1/bookings"), 200)
    const read = expectStatus(await api.get(`/v1/api-keys/${created.id}`), 200)
    expect(read.secret).toBeUndefined()

    const rotated = expectStatus(await api.post(`/v1/api-keys/${created.id}/rotate`, { grace_period_seconds: 0 }), 200)
    expect(rotated.secret).not.toBe(created.secret)
    expectProblem(await client(server.url, created.secret).get("/v1/bookings"), 401, "unauthorized")
    expectStatus(await client(server.url, rotated.secret).get("/v1/bookings"), 200)

    const revoked = expectStatus(await api.del(`/v1/api-keys/${created.id}`), 200)
    expect(revoked.id).toBe(created.id)
    const after = await client(server.url, rotated.secret).get("/v1/bookings")
    expectProblem(after, 401, "unauthorized")
    expect(after.headers.get("www-authenticate")).toContain("Bearer")
    expectProblem(await api.del(`/v1/api-keys/${created.id}`), 404, "not_found")
    expectProblem(await api.post(`/v1/api-keys/${created.id}/rotate`, {}), 404, "not_found")

    const live = expectStatus(await api.post("/v1/api-keys/exchange"), 201)
    expect(live.secret).toMatch(/^sk_live_/)
    expect(live).toMatchObject({ environment: "production", type: "secret" })
    expect(live.source_key_id).toBe(list.data.find((k: any) => k.type === "secret").id)
    const prod = client(server.url, live.secret)
    expect(expectStatus(await prod.get("/v1/account"), 200).id).toBe(server.first.account.id)
    expectProblem(await prod.post("/v1/api-keys/exchange"), 403, "forbidden")
  })

  it("refuses invalid key requests", async () => {
    const bad = expectProblem(await api.post("/v1/api-keys", { name: "", type: "other", scopes: ["nope"], x: 1 }), 422, "validation_failed")
    expect(bad.errors.map((e: any) => e.path).sort()).toEqual(["name", "scopes.0", "type", "x"])
    expectProblem(await api.post("/v1/api-keys", { name: "W", type: "publishable", scopes: ["clients:read"] }), 422, "validation_failed")
    expectProblem(await api.post("/v1/api-keys", { name: "Old", type: "secret", expires_at: "2020-01-01T00:00:00Z" }), 422)
    expectProblem(await api.post("/v1/api-keys/nope/rotate", { grace_period_seconds: -1 }), 422, "validation_failed")
    expectProblem(await api.get("/v1/api-keys/key_nope"), 404, "not_found")
  })
})

describe("resources", () => {
  it("services, staff, clients: create, list, get, update, delete, with their errors", async () => {
    for (
      const [path, create, patch] of [
        ["/v1/services", { name: "Massage", duration_minutes: 60 }, { name: "Long massage" }],
        ["/v1/staff", { name: "Eve", time_zone: "UTC" }, { email: "eve@example.com" }],
        ["/v1/clients", { name: "Carl", email: "carl@example.com" }, { phone: "+49 30 1234567" }]
      ] as const
    ) {
      const created = expectStatus(await api.post(path, create), 201)
      expect(created.id).toMatch(/^(svc|stf|cli)_/)
      expect(created).toMatchObject({ created_at: expect.any(String), metadata: {} })
      const listed = expectStatus(await api.get(`${path}?limit=100`), 200)
      expect(listed.data.map((r: any) => r.id)).toContain(created.id)
      expect(expectStatus(await api.get(`${path}/${created.id}`), 200)).toEqual(created)
      const updated = expectStatus(await api.patch(`${path}/${created.id}`, patch), 200)
      expect(updated).toMatchObject(patch)
      expectProblem(await api.patch(`${path}/${created.id}`, { bogus: true }), 422, "validation_failed")
      expectProblem(await api.post(path, {}), 422, "validation_failed")
      expectProblem(await api.get(`${path}?limit=0`), 400, "bad_request")
      expect(expectStatus(await api.del(`${path}/${created.id}`), 200).id).toBe(created.id)
      expectProblem(await api.get(`${path}/${created.id}`), 404, "not_found")
      expectProblem(await api.patch(`${path}/${created.id}`, patch), 404, "not_found")
      expectProblem(await api.del(`${path}/${created.id}`), 404, "not_found")
    }
  })

  it("paginates with cursors bound to their filters", async () => {
    for (let i = 0; i < 5; i++) expectStatus(await api.post("/v1/clients", { name: `Page ${i}` }), 201)
    const first = expectStatus(await api.get("/v1/clients?limit=2"), 200)
    expect(first).toMatchObject({ object: "list", has_more: true, next_cursor: expect.any(String) })
    const second = expectStatus(await api.get(`/v1/clients?limit=2&cursor=${first.next_cursor}`), 200)
    expect(second.data[0].id > first.data[1].id).toBe(true)
    expectProblem(await api.get(`/v1/clients?limit=2&email=x@example.com&cursor=${first.next_cursor}`), 400, "bad_request")
    expectProblem(await api.get("/v1/clients?cursor=garbage"), 400, "bad_request")
  })

  it("deleting a service, staff member or client with upcoming bookings is 409 resource_in_use", async () => {
    const s = await seed(api)
    expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-03-30T10:00:00Z"
      }),
      201
    )
    expectProblem(await api.del(`/v1/services/${s.service.id}`), 409, "resource_in_use")
    expectProblem(await api.del(`/v1/staff/${s.staff.id}`), 409, "resource_in_use")
    expectProblem(await api.del(`/v1/clients/${s.client.id}`), 409, "resource_in_use")
  })
})

describe("availability", () => {
  it("rules CRUD, slots, explain, holds", async () => {
    const s = await seed(api)
    const rules = expectStatus(await api.get(`/v1/availability?staff_id=${s.staff.id}`), 200)
    expect(rules.data.map((r: any) => r.id)).toEqual([s.rule.id])
    expect(expectStatus(await api.get(`/v1/availability/${s.rule.id}`), 200).type).toBe("weekly")
    const blocked = expectStatus(
      await api.post("/v1/availability", {
        staff_id: s.staff.id,
        type: "blocked",
        start: "2027-03-29T12:00:00Z",
        end: "2027-03-29T13:00:00Z"
      }),
      201
    )
    expect(expectStatus(await api.patch(`/v1/availability/${blocked.id}`, { end: "2027-03-29T14:00:00Z" }), 200).end).toBe(
      "2027-03-29T14:00:00Z"
    )
    expectProblem(await api.patch(`/v1/availability/${blocked.id}`, { weekdays: [1] }), 422, "validation_failed")
    expectProblem(
      await api.post("/v1/availability", {
        staff_id: "stf_01M81G7CF47EWTRN03532QCJJZ",
        type: "date",
        date: "2027-02-30",
        start_time: "09:00",
        end_time: "08:00"
      }),
      422
    )
    expectProblem(
      await api.post("/v1/availability", {
        staff_id: "stf_01M81G7CF47EWTRN03532QCJJZ",
        type: "date",
        date: "2027-03-30",
        start_time: "09:00",
        end_time: "10:00"
      }),
      422,
      "invalid_reference"
    )

    const slots = expectStatus(
      await api.get(
        `/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-04-05T00:00:00Z&time_zone=Europe/Berlin`
      ),
      200
    )
    expect(slots.object).toBe("list")
    expect(slots.data[0]).toEqual({
      start: MONDAY_9,
      end: "2027-03-29T09:30:00Z",
      staff_id: s.staff.id,
      staff_ids: [s.staff.id],
      remaining: 1
    })
    expect(slots.data.some((slot: any) => slot.start === "2027-03-29T12:30:00Z")).toBe(false)
    expect(slots.days[0].date).toBe("2027-03-29")
    expectProblem(
      await api.get(`/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-07-29T00:00:00Z`),
      400,
      "bad_request"
    )
    expectProblem(await api.get("/v1/availability/slots?service_id=nope"), 400, "bad_request")

    const explained = expectStatus(
      await api.get(`/v1/availability/explain?service_id=${s.service.id}&staff_id=${s.staff.id}&start=2027-03-29T12:30:00Z`),
      200
    )
    expect(explained).toMatchObject({ bookable: false, reasons: [expect.objectContaining({ code: "blocked" })] })
    expect(
      expectStatus(await api.get(`/v1/availability/explain?service_id=${s.service.id}&staff_id=${s.staff.id}&start=${MONDAY_9}`), 200)
        .bookable
    ).toBe(true)

    const hold = expectStatus(
      await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: MONDAY_9, ttl_seconds: 120 }),
      201
    )
    expect(hold).toMatchObject({ object: "hold", start: MONDAY_9, expires_at: "2027-03-26T08:02:00Z" })
    expect(expectStatus(await api.get(`/v1/availability/holds/${hold.id}`), 200).id).toBe(hold.id)
    const conflict = expectProblem(
      await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: MONDAY_9 }),
      409,
      "slot_unavailable"
    )
    expect(conflict.alternatives.length).toBeGreaterThan(0)
    expectProblem(
      await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: "2027-03-27T09:00:00Z" }),
      409,
      "outside_availability"
    )
    expectProblem(
      await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: MONDAY_9, ttl_seconds: 601 }),
      422
    )
    const booked = expectStatus(
      await api.post("/v1/bookings", { service_id: s.service.id, client_id: s.client.id, start: MONDAY_9, hold_id: hold.id }),
      201
    )
    expect(booked.staff_id).toBe(s.staff.id)
    expectProblem(await api.get(`/v1/availability/holds/${hold.id}`), 404, "not_found")

    const second = expectStatus(
      await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: "2027-03-29T10:00:00Z" }),
      201
    )
    expect(expectStatus(await api.del(`/v1/availability/holds/${second.id}`), 200).id).toBe(second.id)
    expectProblem(await api.del(`/v1/availability/holds/${second.id}`), 404, "not_found")

    expect(expectStatus(await api.del(`/v1/availability/${blocked.id}`), 200).id).toBe(blocked.id)
    expectProblem(await api.get(`/v1/availability/${blocked.id}`), 404, "not_found")
  })
})

describe("bookings", () => {
  it("create, list (query and JSON body), get, update, actions, payments, delete", async () => {
    const s = await seed(api, { price: { amount: 2500, currency: "EUR" } })
    const b = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-03-29T11:00:00Z"
      }),
      201
    )
    expect(b).toMatchObject({ object: "booking", status: "confirmed", end: "2027-03-29T11:30:00Z", payment_status: "unpaid" })
    const taken = expectProblem(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client: { name: "Zed" },
        start: "2027-03-29T11:00:00Z"
      }),
      409,
      "slot_unavailable"
    )
    expect(taken.alternatives.length).toBeGreaterThan(0)
    expectProblem(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-03-29T18:00:00Z"
      }),
      409,
      "outside_availability"
    )
    expectProblem(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        client_id: "cli_01M81G7CF47EWTRN03532QCJJZ",
        start: "2027-03-29T12:00:00Z"
      }),
      422,
      "invalid_reference"
    )

    const listed = expectStatus(await api.get("/v1/bookings?status=confirmed&limit=10"), 200)
    expect(listed.data.map((x: any) => x.id)).toContain(b.id)
    const viaBody = expectStatus(
      await api.get("/v1/bookings", {
        raw: JSON.stringify({ status: "cancelled", limit: 10 }),
        headers: { "content-type": "application/json" }
      }),
      200
    )
    expect(viaBody.data.map((x: any) => x.id)).not.toContain(b.id)
    const queryWins = expectStatus(
      await api.get("/v1/bookings?status=confirmed", {
        raw: JSON.stringify({ status: "cancelled" }),
        headers: { "content-type": "application/json" }
      }),
      200
    )
    expect(queryWins.data.map((x: any) => x.id)).toContain(b.id)
    expectProblem(
      await api.get("/v1/bookings", { raw: JSON.stringify({ status: "bogus" }), headers: { "content-type": "application/json" } }),
      400,
      "bad_request"
    )
    expectProblem(await api.get("/v1/bookings?status=bogus"), 400, "bad_request")

    expect(expectStatus(await api.get(`/v1/bookings/${b.id}`), 200)).toEqual(b)
    expect(expectStatus(await api.patch(`/v1/bookings/${b.id}`, { notes: "window seat" }), 200).notes).toBe("window seat")
    const moved = expectStatus(await api.post(`/v1/bookings/${b.id}/reschedule`, { start: "2027-03-29T13:00:00Z" }), 200)
    expect(moved).toMatchObject({ start: "2027-03-29T13:00:00Z", rescheduled_from: "2027-03-29T11:00:00Z" })
    expectProblem(await api.post(`/v1/bookings/${b.id}/confirm`), 409, "invalid_transition")
    expectProblem(await api.post(`/v1/bookings/${b.id}/complete`), 409, "invalid_transition")

    const paid = expectStatus(
      await api.post(`/v1/bookings/${b.id}/payments`, { amount: { amount: 1000, currency: "EUR" }, reference: "pi_1" }),
      201
    )
    expect(paid.payment).toMatchObject({ object: "payment", booking_id: b.id })
    expect(paid.booking).toMatchObject({ payment_status: "partially_paid", amount_paid: { amount: 1000, currency: "EUR" } })
    expectProblem(await api.post(`/v1/bookings/${b.id}/payments`, { amount: { amount: 100, currency: "USD" } }), 422, "validation_failed")
    expect(expectStatus(await api.get(`/v1/bookings/${b.id}/payments`), 200).data.length).toBe(1)

    await server.advance(4 * 86_400_000) // past the booking's start
    expect(expectStatus(await api.post(`/v1/bookings/${b.id}/complete`), 200).status).toBe("completed")
    expectProblem(await api.post(`/v1/bookings/${b.id}/cancel`, { reason: "late" }), 409, "invalid_transition")

    const c = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-04-01T09:00:00Z"
      }),
      201
    )
    await server.advance(2 * 86_400_000 + 2 * 3_600_000)
    expect(expectStatus(await api.post(`/v1/bookings/${c.id}/no-show`), 200).status).toBe("no_show")

    const d = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-04-05T09:00:00Z"
      }),
      201
    )
    expect(expectStatus(await api.post(`/v1/bookings/${d.id}/cancel`, { reason: "sick" }), 200)).toMatchObject({
      status: "cancelled",
      cancellation_reason: "sick"
    })
    expectProblem(await api.post(`/v1/bookings/${d.id}/cancel`, { reasons: "typo" }), 422, "validation_failed")
    const e = expectStatus(
      await api.post("/v1/bookings", {
        service_id: s.service.id,
        staff_id: s.staff.id,
        client_id: s.client.id,
        start: "2027-04-05T10:00:00Z"
      }),
      201
    )
    expect(expectStatus(await api.del(`/v1/bookings/${e.id}`), 200).status).toBe("cancelled")
    expect(expectStatus(await api.del(`/v1/bookings/${e.id}`), 200).status).toBe("cancelled")
    expectProblem(await api.get("/v1/bookings/bkg_nope"), 404, "not_found")
    expectProblem(await api.post("/v1/bookings/bkg_nope/confirm"), 404, "not_found")
  })

  it("a pending booking (service requires confirmation) can be confirmed", async () => {
    const s = await seed(api)
    expectStatus(await api.patch(`/v1/services/${s.service.id}`, { requires_confirmation: true }), 200)
    const b = expectStatus(
      await api.post("/v1/bookings", { service_id: s.service.id, client_id: s.client.id, start: "2027-04-06T09:00:00Z" }),
      201
    )
    expect(b.status).toBe("pending")
    expect(expectStatus(await api.post(`/v1/bookings/${b.id}/confirm`), 200).status).toBe("confirmed")
    expect(expectStatus(await api.patch(`/v1/bookings/${b.id}`, { status: "cancelled" }), 200).status).toBe("cancelled")
  })
})

describe("operator API", () => {
  it("creates and updates accounts with the admin token; 404 without it", async () => {
    const admin = client(server.url, ADMIN_TOKEN)
    const created = expectStatus(
      await admin.post("/admin/v1/accounts", { name: "Acme", plan: "business", allowed_origins: ["https://shop.example.com"] }),
      201
    )
    expect(created.account).toMatchObject({ object: "account", plan: "business", limits: { requests_per_minute: 3000 } })
    expect(created.keys.sandbox.secret).toMatch(/^sk_test_/)
    expect(created.keys.sandbox.publishable).toMatch(/^pk_test_/)
    expect(created.keys.production.secret).toMatch(/^sk_live_/)
    expect(created.keys.production.publishable).toMatch(/^pk_live_/)
    const patched = expectStatus(
      await admin.patch(`/admin/v1/accounts/${created.account.id}`, { plan: "free", rate_limit_per_minute: 5 }),
      200
    )
    expect(patched).toMatchObject({ plan: "free", rate_limit_per_minute: 5, limits: { requests_per_minute: 5 } })
    expect(expectStatus(await admin.get(`/admin/v1/accounts/${created.account.id}`), 200).plan).toBe("free")
    const acme = await client(server.url, created.keys.sandbox.secret).get("/v1/account")
    expect(acme.headers.get("x-ratelimit-limit")).toBe("5")
    expectProblem(await admin.post("/admin/v1/accounts", { name: "X", plan: "gold" }), 422, "validation_failed")
    expectProblem(await admin.patch("/admin/v1/accounts/acc_nope", { plan: "pro" }), 404, "not_found")

    expectProblem(await client(server.url).post("/admin/v1/accounts", { name: "Y", plan: "free" }), 404, "not_found")
    expectProblem(await client(server.url, "wrong-token").post("/admin/v1/accounts", { name: "Y", plan: "free" }), 404, "not_found")
    expectProblem(await api.post("/admin/v1/accounts", { name: "Y", plan: "free" }), 404, "not_found")
  })

  it("without a configured admin token the operator API does not exist", async () => {
    const bare = await startServer({ adminToken: null })
    try {
      expectProblem(await client(bare.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Y", plan: "free" }), 404, "not_found")
    } finally {
      await bare.close()
    }
  })
})
