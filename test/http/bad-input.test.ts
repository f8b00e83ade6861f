/** A table of bad requests: every one is a 4xx problem document, none a 5xx. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Client, expectProblem, type RequestOptions, seed, startServer, type TestServer } from "./harness.js"

let server: TestServer
let api: Client
let ids: { service: string; staff: string; client: string }

beforeAll(async () => {
  server = await startServer()
  api = client(server.url, server.first.keys.sandbox.secret)
  const s = await seed(api)
  ids = { service: s.service.id, staff: s.staff.id, client: s.client.id }
})
afterAll(() => server.close())

const json = (text: string): RequestOptions => ({ raw: text, headers: { "content-type": "application/json" } })
const bytes = (b: Array<number>): RequestOptions => ({ raw: Uint8Array.from(b), headers: { "content-type": "application/json" } })

type Case = readonly [name: string, method: string, path: () => string, options: () => RequestOptions, status: number, code?: string]

const cases: ReadonlyArray<Case> = [
  ["malformed JSON", "POST", () => "/v1/services", () => json("{\"name\": \"Cut\", "), 400, "bad_request"],
  ["trailing garbage", "POST", () => "/v1/services", () => json("{\"name\":\"Cut\",\"duration_minutes\":30} x"), 400, "bad_request"],
  ["JSON array body", "POST", () => "/v1/services", () => json("[1,2]"), 422, "validation_failed"],
  ["JSON null body", "POST", () => "/v1/services", () => json("null"), 422, "validation_failed"],
  ["JSON string body", "POST", () => "/v1/clients", () => json("\"name\""), 422, "validation_failed"],
  [
    "wrong types",
    "POST",
    () => "/v1/services",
    () => ({ body: { name: 5, duration_minutes: "30", active: "yes" } }),
    422,
    "validation_failed"
  ],
  ["huge number", "POST", () => "/v1/services", () => json("{\"name\":\"Cut\",\"duration_minutes\":1e308}"), 422, "validation_failed"],
  [
    "beyond safe integers",
    "POST",
    () => "/v1/services",
    () => json("{\"name\":\"Cut\",\"duration_minutes\":30,\"price\":{\"amount\":9007199254740993,\"currency\":\"EUR\"}}"),
    422,
    "validation_failed"
  ],
  [
    "number overflowing to Infinity",
    "POST",
    () => "/v1/services",
    () => json("{\"name\":\"Cut\",\"duration_minutes\":1e400}"),
    422,
    "validation_failed"
  ],
  ["negative minutes", "POST", () => "/v1/services", () => ({ body: { name: "Cut", duration_minutes: -30 } }), 422, "validation_failed"],
  ["fractional minutes", "POST", () => "/v1/services", () => ({ body: { name: "Cut", duration_minutes: 30.5 } }), 422, "validation_failed"],
  ["bad time zone", "POST", () => "/v1/staff", () => ({ body: { name: "Ana", time_zone: "Mars/Olympus_Mons" } }), 422, "validation_failed"],
  [
    "bad date (Feb 30)",
    "POST",
    () => "/v1/availability",
    () => ({ body: { staff_id: ids.staff, type: "date", date: "2026-02-30", start_time: "09:00", end_time: "10:00" } }),
    422,
    "validation_failed"
  ],
  [
    "bad instant (Feb 30)",
    "POST",
    () => "/v1/bookings",
    () => ({ body: { service_id: ids.service, client_id: ids.client, start: "2026-02-30T10:00:00Z" } }),
    422,
    "validation_failed"
  ],
  [
    "bad wall-clock time",
    "POST",
    () => "/v1/availability",
    () => ({ body: { staff_id: ids.staff, type: "weekly", weekdays: [8], start_time: "25:00", end_time: "9am" } }),
    422,
    "validation_failed"
  ],
  ["unknown field", "POST", () => "/v1/clients", () => ({ body: { name: "Bob", nickname: "B" } }), 422, "validation_failed"],
  [
    "__proto__ field",
    "POST",
    () => "/v1/clients",
    () => json("{\"name\":\"Bob\",\"__proto__\":{\"admin\":true}}"),
    422,
    "validation_failed"
  ],
  [
    "unknown nested field",
    "POST",
    () => "/v1/bookings",
    () => ({ body: { service_id: ids.service, start: "2027-03-29T09:00:00Z", client: { name: "Z", age: 3 } } }),
    422,
    "validation_failed"
  ],
  [
    "invalid UTF-8",
    "POST",
    () => "/v1/clients",
    () => bytes([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    400,
    "bad_request"
  ],
  [
    "overlong UTF-8",
    "POST",
    () => "/v1/clients",
    () => bytes([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
    400,
    "bad_request"
  ],
  ["deeply nested JSON", "POST", () => "/v1/clients", () => json("[".repeat(100_000) + "]".repeat(100_000)), 400, "bad_request"],
  [
    "nested metadata objects",
    "POST",
    () => "/v1/clients",
    () => json(`{"name":"x","metadata":${"{\"a\":".repeat(50)}1${"}".repeat(50)}}`),
    422,
    "validation_failed"
  ],
  [
    "wrong content type",
    "POST",
    () => "/v1/clients",
    () => ({ raw: "{\"name\":\"Bob\"}", headers: { "content-type": "text/plain" } }),
    415,
    "unsupported_media_type"
  ],
  [
    "form content type",
    "POST",
    () => "/v1/clients",
    () => ({ raw: "name=Bob", headers: { "content-type": "application/x-www-form-urlencoded" } }),
    415,
    "unsupported_media_type"
  ],
  ["no content type", "PATCH", () => `/v1/clients/${ids.client}`, () => ({ raw: "{\"name\":\"Bob\"}" }), 415, "unsupported_media_type"],
  [
    "oversized body",
    "POST",
    () => "/v1/clients",
    () => json(JSON.stringify({ name: "Bob", notes: "x".repeat(1024 * 1024 + 10) })),
    413,
    "payload_too_large"
  ],
  [
    "oversized declared length",
    "POST",
    () => "/v1/clients",
    () => ({ raw: "{}", headers: { "content-type": "application/json", "content-length": "2" } }),
    422,
    "validation_failed"
  ],
  ["limit not a number", "GET", () => "/v1/bookings?limit=ten", () => ({}), 400, "bad_request"],
  ["limit too large", "GET", () => "/v1/bookings?limit=1000", () => ({}), 400, "bad_request"],
  ["limit negative", "GET", () => "/v1/clients?limit=-1", () => ({}), 400, "bad_request"],
  ["huge limit", "GET", () => "/v1/clients?limit=99999999999999999999999", () => ({}), 400, "bad_request"],
  ["unknown query parameter", "GET", () => "/v1/services?colour=red", () => ({}), 400, "bad_request"],
  ["bad boolean", "GET", () => "/v1/bookings?upcoming=yes", () => ({}), 400, "bad_request"],
  ["bad instant in query", "GET", () => "/v1/bookings?start_from=2026-02-30T00:00:00Z", () => ({}), 400, "bad_request"],
  [
    "slots with a bad zone",
    "GET",
    () => `/v1/availability/slots?service_id=${ids.service}&start=2027-03-29T00:00:00Z&end=2027-03-30T00:00:00Z&time_zone=Nowhere/Land`,
    () => ({}),
    400,
    "bad_request"
  ],
  ["slots missing parameters", "GET", () => "/v1/availability/slots", () => ({}), 400, "bad_request"],
  ["GET /v1/bookings with a malformed JSON body", "GET", () => "/v1/bookings", () => json("{status"), 400, "bad_request"],
  ["GET /v1/bookings with a JSON array body", "GET", () => "/v1/bookings", () => json("[]"), 400, "bad_request"],
  ["percent-encoded garbage id", "GET", () => "/v1/services/%FF%FE", () => ({}), 404, "not_found"],
  ["very long id", "GET", () => `/v1/bookings/${"b".repeat(5000)}`, () => ({}), 404, "not_found"],
  ["unknown route", "GET", () => "/v2/bookings", () => ({}), 404, "not_found"],
  ["wrong method", "PUT", () => "/v1/services", () => ({ body: {} }), 405, "method_not_allowed"],
  [
    "bad Idempotency-Key",
    "POST",
    () => "/v1/clients",
    () => ({ body: { name: "x" }, headers: { "idempotency-key": "é".repeat(3) } }),
    400,
    "bad_request"
  ]
]

describe("bad input", () => {
  for (const [name, method, path, options, status, code] of cases) {
    it(`${name} → ${status}`, async () => {
      const reply = await api.send(method, path(), options())
      expect(reply.status).toBeLessThan(500)
      expectProblem(reply, status, code)
      if (status === 400 || status === 422) expect(reply.json.errors?.length ?? 0).toBeGreaterThan(0)
    })
  }

  it("lists every invalid field at once", async () => {
    const reply = await api.post("/v1/services", { name: "", duration_minutes: 0, capacity: "many", nope: 1 })
    const problem = expectProblem(reply, 422, "validation_failed")
    expect(problem.errors.map((e: any) => e.path).sort()).toEqual(["capacity", "duration_minutes", "name", "nope"])
  })

  it("refuses a body that is not a JSON object with one clear error", async () => {
    for (
      const [path, text] of [["/v1/clients", "\"x\""], ["/v1/clients", "42"], ["/v1/services", "[]"], ["/v1/bookings", "null"]] as const
    ) {
      const problem = expectProblem(await api.post(path, undefined, json(text)), 422, "validation_failed")
      expect(problem.detail).toBe("the body must be a JSON object")
      expect(problem.errors).toEqual([{ path: "", message: "must be a JSON object" }])
    }
  })

  it("takes an action's body as optional: nothing or {} only", async () => {
    const booking = `/v1/bookings/bkg_${"0".repeat(26)}/confirm`
    expectProblem(await api.post(booking), 404, "not_found")
    expectProblem(await api.post(booking, {}), 404, "not_found")
    expect(expectProblem(await api.post(booking, undefined, json("[]")), 422, "validation_failed").errors).toEqual([
      { path: "", message: "must be a JSON object" }
    ])
    expect(expectProblem(await api.post(booking, { reason: "x" }), 422, "validation_failed").errors).toEqual([
      { path: "reason", message: "is not a known field" }
    ])
  })

  it("words each field's error in its own terms, one entry per field", async () => {
    const bad = expectProblem(await api.post("/v1/clients", { name: "Bob", email: "bob-at-example" }), 422, "validation_failed")
    expect(bad.detail).toBe("email must be an email address")
    expect(bad.errors).toEqual([{ path: "email", message: "must be an email address" }])
    const service = expectProblem(
      await api.post("/v1/services", { name: "Cut", duration_minutes: 30, price: { amount: -5, currency: "EUR" } }),
      422,
      "validation_failed"
    )
    expect(service.errors).toEqual([{
      path: "price.amount",
      message: "must be a non-negative integer in minor units, such as 1999 for 19.99"
    }])
    const zone = expectProblem(await api.post("/v1/staff", { name: "Ana", time_zone: "Mars/Olympus_Mons" }), 422, "validation_failed")
    expect(zone.errors).toEqual([{ path: "time_zone", message: "must be an IANA time zone such as Europe/Berlin" }])
    const status = expectProblem(await api.get("/v1/bookings?status=bogus"), 400, "bad_request")
    expect(status.detail).toBe("invalid query: status must be one of pending, confirmed, cancelled, completed, no_show")
    expect(status.errors).toHaveLength(1)
    // In a list, the offending item is named.
    const inList = expectProblem(await api.get("/v1/bookings?status=confirmed&status=bogus"), 400, "bad_request")
    expect(inList.errors).toEqual([{ path: "status.1", message: "must be one of pending, confirmed, cancelled, completed, no_show" }])
    // A parameter that takes one value, given twice.
    const twice = expectProblem(await api.get("/v1/bookings?limit=1&limit=2&staff_id=a&staff_id=b"), 400, "bad_request")
    expect(twice.errors).toEqual([{ path: "limit", message: "must be given once" }, { path: "staff_id", message: "must be given once" }])
    const missing = expectProblem(await api.get("/v1/availability/slots"), 400, "bad_request")
    expect(missing.errors).toEqual([
      { path: "service_id", message: "is required" },
      { path: "start", message: "is required" },
      { path: "end", message: "is required" }
    ])
    const types = expectProblem(
      await api.post("/v1/services", { name: 5, duration_minutes: "30", active: "yes" }),
      422,
      "validation_failed"
    )
    expect(types.errors).toEqual([
      { path: "name", message: "must be a string" },
      { path: "duration_minutes", message: "must be a number" },
      { path: "active", message: "must be true or false" }
    ])
    for (const problem of [bad, service, zone, status, missing, types])
      expect(JSON.stringify(problem)).not.toMatch(/Expected|actual|readonly/)
  })

  it("keeps error bodies small whatever was sent", async () => {
    const long = await api.post("/v1/clients", { name: "x".repeat(200_000) })
    expect(expectProblem(long, 422, "validation_failed").errors).toEqual([{ path: "name", message: "must be at most 200 characters" }])
    expect(long.text.length).toBeLessThan(400)
    const id = "b".repeat(10_000)
    const missing = await api.get(`/v1/bookings/${id}`)
    expect(expectProblem(missing, 404, "not_found").detail).toBe("no resource with id bbbb… under /v1/bookings")
    expect(missing.text.length).toBeLessThan(400)
    const key = await api.post("/v1/clients", { name: "x", metadata: { ["k".repeat(5000)]: "v" } })
    expect(key.text.length).toBeLessThan(600)
  })

  it("the server stays healthy afterwards", async () => {
    expect((await client(server.url).get("/health")).status).toBe(200)
  })
})
