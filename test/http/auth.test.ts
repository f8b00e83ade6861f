/**
 * Authentication and authorisation over HTTP: tenant isolation (accounts and environments),
 * scopes on every endpoint, publishable keys and origins, 401s, rotation grace and key expiry
 * on a controlled clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ADMIN_TOKEN, client, type Client, expectProblem, expectStatus, MONDAY_9, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let a: Client
const ORIGIN = "https://shop.example.com"

beforeAll(async () => {
  server = await startServer()
  a = client(server.url, server.first.keys.sandbox.secret)
})
afterAll(() => server.close())

const newAccount = async (body: Record<string, unknown> = {}) =>
  expectStatus(await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Other", plan: "business", ...body }), 201)

/** Every resource of a tenant, with ids for every route. */
const populate = async (api: Client) => {
  const s = await seed(api, { price: { amount: 1000, currency: "EUR" } })
  const booking = expectStatus(
    await api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
    201
  )
  const hold = expectStatus(
    await api.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: "2027-03-29T10:00:00Z" }),
    201
  )
  const key = expectStatus(await api.post("/v1/api-keys", { name: "extra", type: "secret" }), 201)
  return { ...s, booking, hold, key }
}

/** Every route that names a resource, as (method, path, body). */
const routesFor = (r: Awaited<ReturnType<typeof populate>>): Array<[string, string, unknown?]> => [
  ["GET", `/v1/services/${r.service.id}`],
  ["PATCH", `/v1/services/${r.service.id}`, { name: "x" }],
  ["DELETE", `/v1/services/${r.service.id}`],
  ["GET", `/v1/staff/${r.staff.id}`],
  ["PATCH", `/v1/staff/${r.staff.id}`, { name: "x" }],
  ["DELETE", `/v1/staff/${r.staff.id}`],
  ["GET", `/v1/clients/${r.client.id}`],
  ["PATCH", `/v1/clients/${r.client.id}`, { name: "x" }],
  ["DELETE", `/v1/clients/${r.client.id}`],
  ["GET", `/v1/availability/${r.rule.id}`],
  ["PATCH", `/v1/availability/${r.rule.id}`, { start_time: "08:00" }],
  ["DELETE", `/v1/availability/${r.rule.id}`],
  ["GET", `/v1/availability/holds/${r.hold.id}`],
  ["DELETE", `/v1/availability/holds/${r.hold.id}`],
  ["GET", `/v1/bookings/${r.booking.id}`],
  ["PATCH", `/v1/bookings/${r.booking.id}`, { notes: "x" }],
  ["DELETE", `/v1/bookings/${r.booking.id}`],
  ["POST", `/v1/bookings/${r.booking.id}/confirm`],
  ["POST", `/v1/bookings/${r.booking.id}/cancel`, {}],
  ["POST", `/v1/bookings/${r.booking.id}/reschedule`, { start: "2027-03-29T11:00:00Z" }],
  ["POST", `/v1/bookings/${r.booking.id}/complete`],
  ["POST", `/v1/bookings/${r.booking.id}/no-show`],
  ["POST", `/v1/bookings/${r.booking.id}/payments`, { amount: { amount: 100, currency: "EUR" } }],
  ["GET", `/v1/bookings/${r.booking.id}/payments`],
  ["GET", `/v1/api-keys/${r.key.id}`],
  ["POST", `/v1/api-keys/${r.key.id}/rotate`, {}],
  ["DELETE", `/v1/api-keys/${r.key.id}`]
]

const expectInvisible = async (viewer: Client, r: Awaited<ReturnType<typeof populate>>) => {
  for (const [method, path, body] of routesFor(r)) {
    const reply = await viewer.send(method, path, body === undefined ? {} : { body })
    expect(`${method} ${path} → ${reply.status} ${reply.json?.code}`).toBe(`${method} ${path} → 404 not_found`)
  }
  // References to the other tenant's resources are unknown references; lists never show them.
  expectProblem(
    await viewer.post("/v1/bookings", { service_id: r.service.id, client_id: r.client.id, start: MONDAY_9 }),
    422,
    "invalid_reference"
  )
  expectProblem(
    await viewer.get(`/v1/availability/slots?service_id=${r.service.id}&start=2027-03-29T00:00:00Z&end=2027-03-30T00:00:00Z`),
    422,
    "invalid_reference"
  )
  for (
    const [path, id] of [
      ["/v1/services", r.service.id],
      ["/v1/staff", r.staff.id],
      ["/v1/clients", r.client.id],
      ["/v1/availability", r.rule.id],
      ["/v1/bookings", r.booking.id],
      ["/v1/api-keys", r.key.id]
    ] as const
  ) {
    const list = expectStatus(await viewer.get(`${path}?limit=100`), 200)
    expect(list.data.map((x: any) => x.id)).not.toContain(id)
  }
  // …and the resources are untouched.
}

describe("tenant isolation", () => {
  it("account A's credentials get 404 for every one of account B's resources on every route", async () => {
    const other = await newAccount()
    const b = client(server.url, other.keys.sandbox.secret)
    const bResources = await populate(b)
    await expectInvisible(a, bResources)
    expect(expectStatus(await b.get(`/v1/bookings/${bResources.booking.id}`), 200).status).toBe("confirmed")
    expect(expectStatus(await b.get(`/v1/api-keys/${bResources.key.id}`), 200).id).toBe(bResources.key.id)
    // And back: B cannot see A's.
    const aResources = await populate(a)
    await expectInvisible(b, aResources)
  })

  it("sandbox keys never see production data and back", async () => {
    const other = await newAccount()
    const sandbox = client(server.url, other.keys.sandbox.secret)
    const production = client(server.url, other.keys.production.secret)
    const inSandbox = await populate(sandbox)
    await expectInvisible(production, inSandbox)
    const inProduction = await populate(production)
    await expectInvisible(sandbox, inProduction)
    expect(expectStatus(await production.get("/v1/api-keys"), 200).data.every((k: any) => k.environment === "production")).toBe(true)
  })
})

describe("authentication", () => {
  it("missing, malformed, unknown and revoked credentials are 401 with WWW-Authenticate: Bearer", async () => {
    for (
      const headers of [{}, { authorization: "Basic abc" }, { authorization: "Bearer " }, {
        authorization: "Bearer sk_test_unknownunknownunknownunknownun"
      }, { authorization: "Bearer nonsense" }]
    ) {
      const reply = await client(server.url).get("/v1/bookings", { headers })
      expectProblem(reply, 401, "unauthorized")
      expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer/)
    }
    const key = expectStatus(await a.post("/v1/api-keys", { name: "temp", type: "secret" }), 201)
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    expectStatus(await a.del(`/v1/api-keys/${key.id}`), 200)
    expectProblem(await client(server.url, key.secret).get("/v1/account"), 401, "unauthorized")
  })

  it("rotation: old and new secret both work during the grace period, only the new one after it", async () => {
    const key = expectStatus(await a.post("/v1/api-keys", { name: "rotating", type: "secret" }), 201)
    const rotated = expectStatus(await a.post(`/v1/api-keys/${key.id}/rotate`, { grace_period_seconds: 3600 }), 200)
    expect(rotated.id).toBe(key.id)
    expect(Date.parse(rotated.previous_secret_expires_at) - server.now()).toBe(3_600_000)
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    expectStatus(await client(server.url, rotated.secret).get("/v1/account"), 200)
    await server.advance(3_599_000)
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    await server.advance(2_000)
    expectProblem(await client(server.url, key.secret).get("/v1/account"), 401, "unauthorized")
    expectStatus(await client(server.url, rotated.secret).get("/v1/account"), 200)

    const defaults = expectStatus(await a.post(`/v1/api-keys/${key.id}/rotate`), 200)
    expect(Date.parse(defaults.previous_secret_expires_at) - server.now()).toBe(86_400_000)
    await server.advance(86_400_000)
    expectProblem(await client(server.url, rotated.secret).get("/v1/account"), 401, "unauthorized")
    expectStatus(await client(server.url, defaults.secret).get("/v1/account"), 200)
  })

  it("a key with expires_at stops working then", async () => {
    const expires = new Date(server.now() + 60_000).toISOString()
    const key = expectStatus(await a.post("/v1/api-keys", { name: "short", type: "secret", expires_at: expires }), 201)
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    await server.advance(60_000)
    expectProblem(await client(server.url, key.secret).get("/v1/account"), 401, "unauthorized")
  })
})

describe("scopes", () => {
  it("every endpoint refuses a key without its scope (403 forbidden)", async () => {
    const spec = expectStatus(await client(server.url).get("/v1/openapi.json"), 200)
    const narrow = expectStatus(await a.post("/v1/api-keys", { name: "events only", type: "secret", scopes: ["events:read"] }), 201)
    const api = client(server.url, narrow.secret)
    let checked = 0
    for (const [template, item] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const path = template.replace(/\{[^}]+\}/g, "x")
        const reply = await api.send(method.toUpperCase(), path, method === "get" || method === "delete" ? {} : { body: {} })
        const scoped = /Scopes? `/.test(op.description ?? "")
        if (/Scope `events:read`/.test(op.description ?? "")) {
          // The key's own scope: allowed (x names no event).
          expect(`${method} ${path} ${reply.status}`).toBe(`${method} ${path} ${path === "/v1/events" ? 200 : 404}`)
        } else if (scoped) {
          expectProblem(reply, 403, "forbidden")
          checked++
        } else if (path.startsWith("/v1/manage/")) {
          // The token is the credential there: "x" opens nothing (input without its fields is refused first).
          expectProblem(reply, path.endsWith("/reschedule") ? 422 : path.endsWith("/slots") ? 400 : 404)
        } else if (path !== "/health" && path !== "/tls/allowed" && path !== "/calendar/x") {
          // (/tls/allowed needs its ?domain=, /calendar/ a feed's token; they answer without a credential in
          // domains.test.ts and calendarFeeds.test.ts.)
          expect(`${method} ${path} ${reply.status}`).toBe(`${method} ${path} 200`)
        }
      }
    }
    expect(checked).toBeGreaterThan(40)
  })

  it("a key with a scope can do exactly that", async () => {
    const s = await seed(a)
    const reader = client(
      server.url,
      expectStatus(await a.post("/v1/api-keys", { name: "reader", type: "secret", scopes: ["bookings:read", "services:read"] }), 201).secret
    )
    expectStatus(await reader.get("/v1/bookings"), 200)
    expectStatus(await reader.get(`/v1/services/${s.service.id}`), 200)
    expectProblem(
      await reader.post("/v1/bookings", { service_id: s.service.id, client_id: s.client.id, start: MONDAY_9 }),
      403,
      "forbidden"
    )
    expectProblem(await reader.patch(`/v1/services/${s.service.id}`, { name: "x" }), 403, "forbidden")
    expectProblem(await reader.get("/v1/clients"), 403, "forbidden")
    expectProblem(await reader.get("/v1/api-keys"), 403, "forbidden")
  })
})

describe("publishable keys", () => {
  it("may read services, staff and slots, hold and book, from allowed origins only", async () => {
    const acct = await newAccount({ allowed_origins: [ORIGIN] })
    const secret = client(server.url, acct.keys.sandbox.secret)
    const s = await seed(secret)
    const pk = acct.keys.sandbox.publishable
    const widget = client(server.url, pk)
    const from = { headers: { origin: ORIGIN } }

    const services = await widget.get("/v1/services", from)
    expectStatus(services, 200)
    expect(services.headers.get("access-control-allow-origin")).toBe(ORIGIN)
    expect(services.headers.get("access-control-expose-headers")).toContain("x-ratelimit-remaining")
    expectStatus(await widget.get(`/v1/staff/${s.staff.id}`, from), 200)
    expectStatus(
      await widget.get(`/v1/availability/slots?service_id=${s.service.id}&start=2027-03-29T00:00:00Z&end=2027-03-30T00:00:00Z`, from),
      200
    )
    const hold = expectStatus(
      await widget.post("/v1/availability/holds", { service_id: s.service.id, staff_id: s.staff.id, start: MONDAY_9 }, from),
      201
    )
    const booking = expectStatus(
      await widget.post("/v1/bookings", {
        service_id: s.service.id,
        start: MONDAY_9,
        hold_id: hold.id,
        client: { name: "Web", email: "web@example.com" }
      }, from),
      201
    )

    for (
      const [method, path, body] of [
        ["GET", "/v1/bookings"],
        ["GET", `/v1/bookings/${booking.id}`],
        ["POST", `/v1/bookings/${booking.id}/cancel`, {}],
        ["GET", "/v1/clients"],
        ["POST", "/v1/services", { name: "x", duration_minutes: 10 }],
        ["GET", "/v1/availability/explain"],
        ["GET", "/v1/account"],
        ["GET", "/v1/api-keys"]
      ] as Array<[string, string, unknown?]>
    ) {
      expectProblem(await widget.send(method, path, { ...from, ...(body !== undefined ? { body } : {}) }), 403, "forbidden")
    }
    expectProblem(await widget.get("/v1/services"), 403, "forbidden")
    const elsewhere = await widget.get("/v1/services", { headers: { origin: "https://evil.example.com" } })
    expectProblem(elsewhere, 403, "forbidden")
    expect(elsewhere.headers.get("access-control-allow-origin")).toBeNull()
    // A secret key from a browser gets no CORS grant.
    expect((await secret.get("/v1/services", from)).headers.get("access-control-allow-origin")).toBeNull()
  })

  it("a browser's unknown publishable key gets a 401 its page can read; any other refusal keeps the CORS rule", async () => {
    const from = { headers: { origin: ORIGIN } }
    const unknown = await client(server.url, "pk_test_unknownunknownunknown").get("/v1/services", from)
    expectProblem(unknown, 401, "unauthorized")
    expect(unknown.headers.get("access-control-allow-origin")).toBe(ORIGIN)
    expect(unknown.headers.get("vary")).toContain("Origin")
    const secret = await client(server.url, "sk_test_unknownunknownunknown").get("/v1/services", from)
    expectProblem(secret, 401, "unauthorized")
    expect(secret.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("CORS preflights succeed for allowed origins and are refused for others", async () => {
    await newAccount({ allowed_origins: ["https://widget.example.org"] })
    const ok = await client(server.url).send("OPTIONS", "/v1/bookings", {
      headers: {
        origin: "https://widget.example.org",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"
      }
    })
    expect(ok.status).toBe(204)
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://widget.example.org")
    expect(ok.headers.get("access-control-allow-headers")).toContain("authorization")
    expect(ok.headers.get("x-ratelimit-limit")).toBe("60")
    const refused = await client(server.url).send("OPTIONS", "/v1/bookings", {
      headers: { origin: "https://evil.example.com", "access-control-request-method": "POST" }
    })
    expectProblem(refused, 403, "forbidden")
    expect(refused.headers.get("access-control-allow-origin")).toBeNull()
  })
})
