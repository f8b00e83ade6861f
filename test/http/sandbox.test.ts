/**
 * The sandbox's triggers over HTTP: `POST /v1/sandbox/events` reaches the feed and a real
 * receiver (a sample, or a real resource with `object_id`); `POST /v1/sandbox/reset` erases
 * the sandbox (resources, events, webhooks) but not production, and not the keys; both are
 * 403 with a production credential or a publishable key.
 */
import { Webhook } from "standardwebhooks"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { EVENT_TYPES } from "../../src/events/index.js"
import { startReceiver, waitFor } from "../webhooks/receiver.js"
import {
  client,
  type Client,
  expectProblem,
  expectStatus,
  MONDAY_9,
  newAccount,
  scopedKey,
  seed,
  START,
  startServer,
  type TestServer
} from "./harness.js"

const ORIGIN = "https://shop.example.com"
let server: TestServer
const cleanup: Array<() => Promise<void>> = []
beforeAll(async () => {
  server = await startServer({ allowPrivateWebhooks: true })
})
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
afterAll(() => server.close())

const account = async () => {
  const created = await newAccount(server, { allowed_origins: [ORIGIN] })
  return {
    created,
    sandbox: client(server.url, created.keys.sandbox.secret),
    production: client(server.url, created.keys.production.secret),
    widget: client(server.url, created.keys.sandbox.publishable)
  }
}

describe("POST /v1/sandbox/events", () => {
  it("emits a sample event of any catalogue type to the feed and to webhook receivers, signed", async () => {
    const receiver = await startReceiver()
    cleanup.push(() => receiver.close())
    const { sandbox } = await account()
    const hook = expectStatus(await sandbox.post("/v1/webhooks", { url: receiver.url, events: ["*"] }), 201)
    const emitted: Array<any> = []
    for (const type of EVENT_TYPES) {
      const event = expectStatus(await sandbox.post("/v1/sandbox/events", { type }), 201)
      expect(event).toMatchObject({ object: "event", type, id: expect.stringMatching(/^evt_/), created_at: START })
      expect(event.data.object.object).toBe(type.slice(0, type.indexOf(".")))
      emitted.push(event)
    }
    const feed = expectStatus(await sandbox.get("/v1/events?limit=100"), 200)
    expect(feed.data).toEqual(emitted)
    await waitFor(() => receiver.received.length === EVENT_TYPES.length, 20_000, "every sample delivered")
    for (const request of receiver.received) {
      const payload = new Webhook(hook.secret).verify(request.body, request.headers) as any
      expect(payload).toEqual(emitted.find((e) => e.id === request.id))
    }
  })

  it("with object_id: the real resource (a payment with its booking); 404 unknown, 422 wrong kind, bad type or unknown field", async () => {
    const { sandbox } = await account()
    const s = await seed(sandbox, { price: { amount: 1000, currency: "EUR" } })
    const booking = expectStatus(
      await sandbox.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
      201
    )
    const paid = expectStatus(await sandbox.post(`/v1/bookings/${booking.id}/payments`, { amount: { amount: 400, currency: "EUR" } }), 201)

    const updated = expectStatus(await sandbox.post("/v1/sandbox/events", { type: "client.updated", object_id: s.client.id }), 201)
    expect(updated.data.object).toEqual(s.client)
    expect(updated.data.previous).toEqual(s.client)
    const payment = expectStatus(await sandbox.post("/v1/sandbox/events", { type: "payment.received", object_id: paid.payment.id }), 201)
    expect(payment.data.object).toEqual(paid.payment)
    expect(payment.data.booking).toMatchObject({ id: booking.id })
    expect(expectStatus(await sandbox.get(`/v1/events/${payment.id}`), 200)).toEqual(payment)

    expectProblem(
      await sandbox.post("/v1/sandbox/events", { type: "booking.created", object_id: "bkg_01J0000000000000000000000" }),
      404,
      "not_found"
    )
    for (
      const [body, field] of [
        [{ type: "booking.created", object_id: s.client.id }, "object_id"],
        [{ type: "booking.exploded" }, "type"],
        [{ type: "webhook.test" }, "type"],
        [{}, "type"],
        [{ type: "booking.created", extra: true }, "extra"]
      ] as const
    ) {
      const problem = expectProblem(await sandbox.post("/v1/sandbox/events", body), 422, "validation_failed")
      expect(problem.errors.map((e: any) => e.path)).toContain(field)
    }
    // Another tenant's resource is unknown here.
    const other = await account()
    expectProblem(await other.sandbox.post("/v1/sandbox/events", { type: "client.updated", object_id: s.client.id }), 404, "not_found")
  })
})

describe("POST /v1/sandbox/reset", () => {
  it("erases the sandbox's resources, events and webhooks (GETs 404), keeps production and the keys", async () => {
    const { sandbox, production } = await account()
    const s = await seed(sandbox)
    const booking = expectStatus(
      await sandbox.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
      201
    )
    const hook = expectStatus(await sandbox.post("/v1/webhooks", { url: "https://93.184.216.34/hook", events: ["*"], active: false }), 201)
    const [event] = expectStatus(await sandbox.get("/v1/events?limit=1"), 200).data
    const key = expectStatus(await sandbox.post("/v1/api-keys", { name: "kept", type: "secret" }), 201)
    const live = expectStatus(await production.post("/v1/clients", { name: "Live customer" }), 201)
    const liveHook = expectStatus(
      await production.post("/v1/webhooks", { url: "https://93.184.216.34/live", events: ["*"], active: false }),
      201
    )

    const reset = await sandbox.post("/v1/sandbox/reset")
    expect(reset.status).toBe(204)
    expect(reset.text).toBe("")

    for (
      const p of [
        `/v1/services/${s.service.id}`,
        `/v1/staff/${s.staff.id}`,
        `/v1/clients/${s.client.id}`,
        `/v1/availability/${s.rule.id}`,
        `/v1/bookings/${booking.id}`,
        `/v1/webhooks/${hook.id}`,
        `/v1/events/${event.id}`
      ]
    ) expectProblem(await sandbox.get(p), 404, "not_found")
    for (const p of ["/v1/services", "/v1/staff", "/v1/clients", "/v1/availability", "/v1/bookings", "/v1/webhooks", "/v1/events"]) {
      expect(expectStatus(await sandbox.get(p), 200).data).toEqual([])
    }
    // The keys stay: the one that reset, and the others.
    expectStatus(await sandbox.get("/v1/account"), 200)
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    await server.advance(5_000) // past any cached authentication
    expectStatus(await client(server.url, key.secret).get("/v1/account"), 200)
    expect(expectStatus(await sandbox.get("/v1/api-keys"), 200).data.map((k: any) => k.id)).toContain(key.id)
    // Production is untouched.
    expect(expectStatus(await production.get(`/v1/clients/${live.id}`), 200)).toEqual(live)
    expectStatus(await production.get(`/v1/webhooks/${liveHook.id}`), 200)
    expect(expectStatus(await production.get("/v1/events"), 200).data.map((e: any) => e.type)).toEqual(["client.created"])
    // The sandbox works as new.
    expectStatus(await sandbox.post("/v1/clients", { name: "Fresh" }), 201)
    expect(expectStatus(await sandbox.get("/v1/events"), 200).data.map((e: any) => e.type)).toEqual(["client.created"])
  })
})

describe("who may use the triggers", () => {
  it("403 with a production credential (data untouched), a publishable key or a key without the scopes; 401 without a key", async () => {
    const { sandbox, production, widget } = await account()
    const live = expectStatus(await production.post("/v1/clients", { name: "Live" }), 201)
    const routes: Array<[string, unknown]> = [["/v1/sandbox/events", { type: "booking.created" }], ["/v1/sandbox/reset", {}]]
    const refused = async (api: Client, status: number, code: string, headers: Record<string, string> = {}) => {
      for (const [p, body] of routes) expectProblem(await api.post(p, body, { headers }), status, code)
    }
    await refused(production, 403, "forbidden")
    expect(expectStatus(await production.get(`/v1/clients/${live.id}`), 200)).toEqual(live)
    expect(expectStatus(await production.get("/v1/events"), 200).data).toHaveLength(1)
    await refused(widget, 403, "forbidden", { origin: ORIGIN })
    await refused(client(server.url), 401, "unauthorized")
    // Emitting needs webhooks:write; erasing needs every write scope.
    const emitter = client(server.url, await scopedKey(sandbox, ["webhooks:write"]))
    expectStatus(await emitter.post("/v1/sandbox/events", { type: "booking.created" }), 201)
    expectProblem(await emitter.post("/v1/sandbox/reset"), 403, "forbidden")
    const readers = client(server.url, await scopedKey(sandbox, ["events:read", "bookings:write", "clients:write"]))
    expectProblem(await readers.post("/v1/sandbox/events", { type: "booking.created" }), 403, "forbidden")
    expectProblem(await readers.post("/v1/sandbox/reset"), 403, "forbidden")
    expectProblem(await sandbox.post("/v1/sandbox/reset", { everything: true }), 422, "validation_failed")
    expectProblem(await sandbox.get("/v1/sandbox/reset"), 405, "method_not_allowed")
  })
})
