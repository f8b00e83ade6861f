/**
 * The direct read lane (adapters/http/directReads.ts). Over the server: every answer the lane
 * gives equals the full pipeline's answer to the same request (a request with a query goes
 * the full way), counted once. In process, on a listener whose fallback answers 599: which
 * requests the lane takes and which it passes on untouched.
 */
import { Effect, ManagedRuntime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SlotwiseApi } from "../../adapters/http/api.js"
import { directRead, makeDirectReadLane } from "../../adapters/http/directReads.js"
import { directReadLane } from "../../adapters/http/handlers/reads.js"
import { httpServicesLayer } from "../../compose.js"
import { Accounts } from "../../src/accounts/Accounts.js"
import { Clients } from "../../src/clients/Clients.js"
import { Client } from "../../src/clients/client.js"
import { Tenant } from "../../src/ports/tenant.js"
import { ADMIN_TOKEN, client, expectStatus, type Reply, request, startServer, type TestServer } from "./harness.js"

const remaining = (reply: Reply) => Number(reply.headers.get("x-ratelimit-remaining"))

/** What must be equal by either path: status, body and headers but the remaining count and the date. */
const comparable = (reply: Reply) => {
  const headers: Record<string, string> = {}
  reply.headers.forEach((value, name) => {
    if (!["date", "x-ratelimit-remaining", "ratelimit"].includes(name)) headers[name] = value
  })
  return { status: reply.status, headers, json: reply.json }
}

describe("direct reads over the server: the same answers as the full pipeline", () => {
  let server: TestServer
  let key: string
  const paths: Array<string> = []
  beforeAll(async () => {
    server = await startServer()
    key = server.first.keys.sandbox.secret
    const a = client(server.url, key)
    const staff = expectStatus(await a.post("/v1/staff", { name: "Ana", time_zone: "UTC" }), 201)
    const service = expectStatus(await a.post("/v1/services", { name: "Cut", duration_minutes: 30, staff_ids: [staff.id] }), 201)
    const rule = expectStatus(
      await a.post("/v1/availability", {
        staff_id: staff.id,
        type: "weekly",
        weekdays: [1, 2, 3, 4, 5],
        start_time: "09:00",
        end_time: "17:00"
      }),
      201
    )
    const booking = expectStatus(
      await a.post("/v1/bookings", { service_id: service.id, staff_id: staff.id, start: "2027-03-29T09:00:00Z", client: { name: "Bob" } }),
      201
    )
    paths.push(
      `/v1/bookings/${booking.id}`,
      `/v1/clients/${booking.client_id}`,
      `/v1/services/${service.id}`,
      `/v1/staff/${staff.id}`,
      `/v1/availability/${rule.id}`,
      "/v1/bookings/bkg_01M84X9MJPREH7HYNSVRASAFDA",
      "/v1/clients/not-an-id",
      // A path of its own under a lane's collection is never read as an id.
      "/v1/availability/slots",
      "/v1/availability/explain"
    )
  })
  afterAll(() => server.close())

  it("found and not found, each resource: equal answers, each request counted once", async () => {
    for (const path of paths) {
      const direct = await request(server.url, "GET", path, { key })
      const full = await request(server.url, "GET", `${path}?`, { key })
      expect(comparable(direct), path).toEqual(comparable(full))
      expect(remaining(full), path).toBe(remaining(direct) - 1)
    }
    expect((await request(server.url, "GET", paths[0]!, { key })).json.object).toBe("booking")
    expect((await request(server.url, "GET", paths[5]!, { key })).json.code).toBe("not_found")
  })

  it("a key without the scope: the pipeline's 403, counted once", async () => {
    const narrow = expectStatus(
      await client(server.url, key).post("/v1/api-keys", { name: "events", type: "secret", scopes: ["events:read"] }),
      201
    )
    const first = await request(server.url, "GET", paths[0]!, { key: narrow.secret })
    const second = await request(server.url, "GET", `${paths[0]}?`, { key: narrow.secret })
    expect(first.status).toBe(403)
    expect(comparable(first)).toEqual(comparable(second))
    expect(remaining(second)).toBe(remaining(first) - 1)
  })

  it("at the limit: the same 429 with Retry-After by either path", async () => {
    const tiny = expectStatus(
      await client(server.url, ADMIN_TOKEN).post("/admin/v1/accounts", { name: "Tiny", plan: "free", rate_limit_per_minute: 2 }),
      201
    )
    const secret: string = tiny.keys.sandbox.secret
    const path = "/v1/clients/cli_01M84X9MJPREH7HYNSVRASAFDA"
    expect((await request(server.url, "GET", path, { key: secret })).status).toBe(404)
    expect((await request(server.url, "GET", path, { key: secret })).status).toBe(404)
    const direct = await request(server.url, "GET", path, { key: secret })
    const full = await request(server.url, "GET", `${path}?`, { key: secret })
    expect(direct.status).toBe(429)
    expect(direct.headers.get("retry-after")).toBe("60")
    expect(comparable(direct)).toEqual(comparable(full))
  })
})

describe("the lane on its own", () => {
  const runtime = ManagedRuntime.make(httpServicesLayer({ storage: "memory" }))
  let base = ""
  let key = ""
  let clientId = ""
  let passedOn = 0
  const server = http.createServer()

  beforeAll(async () => {
    const lane = await runtime.runPromise(directReadLane)
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) =>
      lane(req, res, () => {
        passedOn++
        res.writeHead(599).end()
      }))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const account = await runtime.runPromise(Effect.flatMap(Accounts, (a) => a.create({ name: "Lane", plan: "pro" })))
    key = account.keys.sandbox.secret
    const created = await runtime.runPromise(
      Effect.flatMap(Clients, (c) => c.create({ name: "Bob" })).pipe(
        Effect.provideService(Tenant, { account_id: account.account.id, environment: "sandbox" })
      )
    )
    clientId = created.id
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    await runtime.dispose()
  })

  it("answers a plain read and a missing resource", async () => {
    const found = await request(base, "GET", `/v1/clients/${clientId}`, { key })
    expect(found.status).toBe(200)
    expect(found.json).toMatchObject({ id: clientId, object: "client", name: "Bob" })
    expect(found.headers.get("content-type")).toBe("application/json")
    expect(found.headers.get("x-ratelimit-limit")).not.toBeNull()
    const missing = await request(base, "GET", "/v1/clients/cli_01M84X9MJPREH7HYNSVRASAFDA", { key })
    expect(missing.status).toBe(404)
    expect(missing.headers.get("content-type")).toBe("application/problem+json")
    expect(missing.json.code).toBe("not_found")
  })

  it("passes on everything else, before counting it", async () => {
    const before = remaining(await request(base, "GET", `/v1/clients/${clientId}`, { key }))
    const others: Array<[string, string, Record<string, string>]> = [
      ["GET", `/v1/clients/${clientId}`, {}],
      ["GET", `/v1/clients/${clientId}`, { authorization: "Basic abc" }],
      ["GET", `/v1/clients/${clientId}`, { authorization: "Bearer sk_test_unknown" }],
      ["GET", `/v1/clients/${clientId}`, { authorization: `Bearer ${key}`, origin: "https://shop.example" }],
      ["HEAD", `/v1/clients/${clientId}`, { authorization: `Bearer ${key}` }],
      ["DELETE", `/v1/clients/${clientId}`, { authorization: `Bearer ${key}` }],
      ["GET", `/v1/clients/${clientId}?expand=x`, { authorization: `Bearer ${key}` }],
      ["GET", "/v1/clients/cli%5F01", { authorization: `Bearer ${key}` }],
      ["GET", `/v1/clients/${"c".repeat(101)}`, { authorization: `Bearer ${key}` }],
      ["GET", "/v1/clients/", { authorization: `Bearer ${key}` }],
      ["GET", "/v1/availability/slots", { authorization: `Bearer ${key}` }],
      ["GET", "/v1/events/evt_01M84X9MJPREH7HYNSVRASAFDA", { authorization: `Bearer ${key}` }],
      ["GET", `/v1/clients/${clientId}/extra`, { authorization: `Bearer ${key}` }]
    ]
    const start = passedOn
    for (const [method, path, headers] of others) {
      expect((await request(base, method, path, { headers })).status, `${method} ${path}`).toBe(599)
    }
    expect(passedOn - start).toBe(others.length)
    expect(remaining(await request(base, "GET", `/v1/clients/${clientId}`, { key }))).toBe(before - 1)
  })

  it("refuses a read whose schema is not its endpoint's", async () => {
    const wrong = [directRead("bookings", "get", Client, () => Effect.die("unused"))]
    await expect(runtime.runPromise(makeDirectReadLane(SlotwiseApi, wrong))).rejects.toThrow(/bookings\.get/)
  })
})
