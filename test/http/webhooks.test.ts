/**
 * Webhooks over HTTP: every route's success path and error classes; the URL rules with and
 * without `--allow-private-webhooks`; end to end against a real receiver on 127.0.0.1
 * (signatures checked with the official `standardwebhooks` package); and the server binary
 * SIGKILLed in the middle of a burst of deliveries, then restarted on the same file.
 */
import * as fs from "node:fs"
import type * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { createHttpHandler, createScheduling, type HttpHandlerOptions, type SlotwiseHttpHandler } from "../../index.js"
import { closedPort, ok, type Received, startReceiver, status, verifies, waitFor } from "../webhooks/receiver.js"
import {
  binary,
  client,
  type Client,
  expectProblem,
  expectStatus,
  killServers,
  MONDAY_9,
  newAccount,
  type Reply,
  scopedKey,
  seed,
  serveProcess,
  START,
  startServer,
  type TestServer
} from "./harness.js"

const ORIGIN = "https://shop.example.com"
let open: TestServer // --allow-private-webhooks, dispatcher running
let strict: TestServer // the default URL rules, no dispatcher

const cleanup: Array<() => Promise<void>> = []
beforeAll(async () => {
  ;[open, strict] = await Promise.all([startServer({ allowPrivateWebhooks: true }), startServer({ webhooks: false })])
})
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})
afterAll(async () => {
  await Promise.all([open.close(), strict.close()])
})

const receiver = async (respond = ok) => {
  const r = await startReceiver(respond)
  cleanup.push(() => r.close())
  return r
}

const typeOf = (r: Received): string => JSON.parse(r.body).type
const receivedOf = (rx: { received: Array<Received> }, type: string) => rx.received.filter((r) => typeOf(r) === type)

/** A fresh account on `server` with a secret-key client for its sandbox. */
const tenant = async (server: TestServer, body: Record<string, unknown> = {}) => {
  const created = await newAccount(server, body)
  return { created, api: client(server.url, created.keys.sandbox.secret) }
}

const deliveriesOf = async (api: Client, hookId: string, query = "") =>
  expectStatus(await api.get(`/v1/webhooks/${hookId}/deliveries${query}`), 200).data as Array<any>

describe("webhook endpoints", () => {
  it("CRUD; the secret appears only in the create and rotate-secret responses", async () => {
    const { api } = await tenant(open)
    const url = `http://127.0.0.1:${await closedPort()}/hooks`
    const created = expectStatus(
      await api.post("/v1/webhooks", {
        url,
        events: ["booking.created", "booking.created", "client.updated"],
        description: "CRM",
        metadata: { team: "ops" }
      }),
      201
    )
    expect(created).toMatchObject({
      object: "webhook_endpoint",
      id: expect.stringMatching(/^whk_/),
      url,
      events: ["booking.created", "client.updated"],
      description: "CRM",
      active: true,
      status: "enabled",
      last_error: null,
      metadata: { team: "ops" }
    })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)

    const read = expectStatus(await api.get(`/v1/webhooks/${created.id}`), 200)
    expect(read).not.toHaveProperty("secret")
    const { secret: _, ...withoutSecret } = created
    expect(read).toEqual(withoutSecret)
    const list = expectStatus(await api.get("/v1/webhooks"), 200)
    expect(list).toMatchObject({ object: "list", has_more: false, data: [withoutSecret] })
    expect(JSON.stringify(list)).not.toContain(created.secret)

    const updated = expectStatus(await api.patch(`/v1/webhooks/${created.id}`, { events: ["*"], description: null }), 200)
    expect(updated).toMatchObject({ events: ["*"], description: null })
    expect(updated).not.toHaveProperty("secret")
    expect(expectStatus(await api.patch(`/v1/webhooks/${created.id}`, { active: false }), 200)).toMatchObject({
      active: false,
      status: "disabled"
    })
    expect(expectStatus(await api.patch(`/v1/webhooks/${created.id}`, { active: true }), 200)).toMatchObject({
      active: true,
      status: "enabled"
    })

    const rotated = expectStatus(await api.post(`/v1/webhooks/${created.id}/rotate-secret`, {}), 200)
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(created.secret)
    expect(rotated.id).toBe(created.id)
    expect((await api.get(`/v1/webhooks/${created.id}`)).text).not.toContain("whsec_")
    // An empty body is the same as {}.
    expectStatus(await api.send("POST", `/v1/webhooks/${created.id}/rotate-secret`), 200)

    const second = expectStatus(await api.post("/v1/webhooks", { url: `${url}/2`, events: ["*"], active: false }), 201)
    expect(second).toMatchObject({ active: false, status: "disabled" })
    const page = expectStatus(await api.get("/v1/webhooks?limit=1"), 200)
    expect(page.data.map((w: any) => w.id)).toEqual([created.id])
    expect(expectStatus(await api.get(`/v1/webhooks?limit=1&cursor=${page.next_cursor}`), 200).data.map((w: any) => w.id)).toEqual([
      second.id
    ])

    expect(expectStatus(await api.del(`/v1/webhooks/${created.id}`), 200)).toMatchObject({ id: created.id })
    expectProblem(await api.get(`/v1/webhooks/${created.id}`), 404, "not_found")
    expectProblem(await api.del(`/v1/webhooks/${created.id}`), 404, "not_found")
    expect(expectStatus(await api.get("/v1/webhooks"), 200).data.map((w: any) => w.id)).toEqual([second.id])
  })

  it("errors: 401, 403 (scope, publishable key), 404 (another tenant's endpoint or delivery), 409 while disabled", async () => {
    const rx = await receiver()
    const { api: a } = await tenant(open, { allowed_origins: [ORIGIN] })
    const { api: b, created: bAccount } = await tenant(open)
    const mine = expectStatus(await a.post("/v1/webhooks", { url: rx.url, events: ["client.created"] }), 201)
    const theirs = expectStatus(await b.post("/v1/webhooks", { url: rx.url, events: ["client.created"] }), 201)
    const myDelivery = expectStatus(await a.post(`/v1/webhooks/${mine.id}/test`), 202)
    const theirDelivery = expectStatus(await b.post(`/v1/webhooks/${theirs.id}/test`), 202)
    await waitFor(() => rx.received.length === 2, 20_000, "both test deliveries")

    const routes = (hook: string, did: string): Array<[string, string, unknown?]> => [
      ["GET", "/v1/webhooks"],
      ["POST", "/v1/webhooks", { url: rx.url, events: ["*"] }],
      ["GET", `/v1/webhooks/${hook}`],
      ["PATCH", `/v1/webhooks/${hook}`, { description: "x" }],
      ["DELETE", `/v1/webhooks/${hook}`],
      ["POST", `/v1/webhooks/${hook}/rotate-secret`, {}],
      ["GET", `/v1/webhooks/${hook}/deliveries`],
      ["GET", `/v1/webhooks/${hook}/deliveries/${did}`],
      ["POST", `/v1/webhooks/${hook}/deliveries/${did}/retry`, {}],
      ["POST", `/v1/webhooks/${hook}/test`, {}],
      ["POST", `/v1/webhooks/${hook}/recover`, { since: START }]
    ]
    const send = (api: Client, [method, p, body]: [string, string, unknown?], headers: Record<string, string> = {}) =>
      api.send(method, p, { headers, ...(body !== undefined ? { body } : {}) })
    const expectEach = async (api: Client, expected: (method: string, p: string) => [number, string], headers?: Record<string, string>) => {
      for (const route of routes(mine.id, myDelivery.id)) {
        const reply: Reply = await send(api, route, headers)
        const [code, name] = expected(route[0], route[1])
        expect(`${route[0]} ${route[1]} → ${reply.status} ${reply.json?.code ?? ""}`).toBe(`${route[0]} ${route[1]} → ${code} ${name}`)
        if (code >= 400) expectProblem(reply, code, name)
      }
    }

    await expectEach(client(open.url), () => [401, "unauthorized"])
    await expectEach(client(open.url, "sk_test_0000000000000000000000000000000"), () => [401, "unauthorized"])
    // Publishable keys get none of these, from an allowed origin too.
    const widget = client(open.url, (await newAccount(open, { allowed_origins: [ORIGIN] })).keys.sandbox.publishable)
    await expectEach(widget, () => [403, "forbidden"], { origin: ORIGIN })
    await expectEach(client(open.url, await scopedKey(a, ["events:read", "bookings:write"])), () => [403, "forbidden"])
    // webhooks:read reads, and only reads.
    await expectEach(client(open.url, await scopedKey(a, ["webhooks:read"])), (method) => method === "GET" ? [200, ""] : [403, "forbidden"])
    // Another tenant (another account, or this account's production) sees none of it.
    for (const viewer of [b, client(open.url, bAccount.keys.production.secret)]) {
      for (const route of routes(mine.id, myDelivery.id).slice(2)) expectProblem(await send(viewer, route), 404, "not_found")
    }
    // Another tenant's delivery under one's own endpoint, and unknown ids.
    for (
      const p of [
        `/v1/webhooks/${mine.id}/deliveries/${theirDelivery.id}`,
        `/v1/webhooks/${mine.id}/deliveries/whd_nothing`,
        `/v1/webhooks/${theirs.id}/deliveries/${theirDelivery.id}`
      ]
    ) {
      expectProblem(await a.get(p), 404, "not_found")
      expectProblem(await a.post(`${p}/retry`), 404, "not_found")
    }
    expectProblem(await a.get("/v1/webhooks/whk_nothing"), 404, "not_found")
    expectProblem(await a.get("/v1/webhooks/whk_nothing/deliveries"), 404, "not_found")
    // The other tenant's endpoint is untouched.
    expect(expectStatus(await b.get(`/v1/webhooks/${theirs.id}`), 200)).toMatchObject({ active: true })

    // While disabled: no tests, retries or recoveries (409), until re-enabled.
    expectStatus(await a.patch(`/v1/webhooks/${mine.id}`, { active: false }), 200)
    expectProblem(await a.post(`/v1/webhooks/${mine.id}/test`), 409, "invalid_transition")
    expectProblem(await a.post(`/v1/webhooks/${mine.id}/deliveries/${myDelivery.id}/retry`), 409, "invalid_transition")
    expectProblem(await a.post(`/v1/webhooks/${mine.id}/recover`, { since: START }), 409, "invalid_transition")
  })

  it("422 for bad URLs, unknown fields and event types; 400 for bad queries", async () => {
    const { api } = await tenant(open)
    const hook = expectStatus(await api.post("/v1/webhooks", { url: `http://127.0.0.1:${await closedPort()}/h`, events: ["*"] }), 201)
    const invalid = async (reply: Reply, field: string) => {
      const problem = expectProblem(reply, 422, "validation_failed")
      expect(problem.errors.map((e: any) => e.path)).toContain(field)
    }
    for (const url of ["ftp://example.com/hook", "not a url", "http://user:pw@example.com/hook", "/relative", "mailto:ops@example.com"]) {
      await invalid(await api.post("/v1/webhooks", { url, events: ["*"] }), "url")
      await invalid(await api.patch(`/v1/webhooks/${hook.id}`, { url }), "url")
    }
    await invalid(await api.post("/v1/webhooks", { url: "https://example.com/h", events: ["booking.exploded"] }), "events.0")
    await invalid(await api.post("/v1/webhooks", { url: "https://example.com/h", events: [] }), "events")
    await invalid(await api.post("/v1/webhooks", { url: "https://example.com/h" }), "events")
    await invalid(await api.post("/v1/webhooks", { url: "https://example.com/h", events: ["*"], colour: "red" }), "colour")
    await invalid(await api.patch(`/v1/webhooks/${hook.id}`, { events: ["webhook.test"] }), "events.0")
    await invalid(await api.patch(`/v1/webhooks/${hook.id}`, { secret: "whsec_mine" }), "secret")
    await invalid(await api.post(`/v1/webhooks/${hook.id}/rotate-secret`, { grace_period_seconds: -1 }), "grace_period_seconds")
    await invalid(await api.post(`/v1/webhooks/${hook.id}/recover`, {}), "since")
    await invalid(await api.post(`/v1/webhooks/${hook.id}/recover`, { since: "yesterday" }), "since")
    await invalid(await api.post(`/v1/webhooks/${hook.id}/test`, { type: "booking.created" }), "type")
    // Every invalid field at once.
    const all = expectProblem(
      await api.post("/v1/webhooks", { url: "gopher://x", events: ["nope"], active: "yes" }),
      422,
      "validation_failed"
    )
    expect(all.errors.map((e: any) => e.path).sort()).toEqual(["active", "events.0", "url"])

    for (
      const [query, field] of [
        ["/v1/webhooks?limit=0", "limit"],
        ["/v1/webhooks?limit=abc", "limit"],
        ["/v1/webhooks?colour=red", "colour"],
        ["/v1/webhooks?cursor=garbage", "cursor"],
        [`/v1/webhooks/${hook.id}/deliveries?status=bogus`, "status"],
        [`/v1/webhooks/${hook.id}/deliveries?limit=101`, "limit"],
        [`/v1/webhooks/${hook.id}/deliveries?event_id=bkg_1`, "event_id"],
        [`/v1/webhooks/${hook.id}/deliveries?types=x`, "types"]
      ] as const
    ) {
      const problem = expectProblem(await api.get(query), 400, "bad_request")
      expect(problem.errors.map((e: any) => e.path)).toContain(field)
    }
  })

  it("private, loopback and link-local URLs are refused (422) unless the server allows them", async () => {
    const { api } = await tenant(strict)
    const accepted = expectStatus(await api.post("/v1/webhooks", { url: "https://93.184.216.34/hook", events: ["*"] }), 201)
    for (
      const url of [
        "http://127.0.0.1:8080/hook",
        "http://localhost:3000/hook",
        "http://api.localhost/hook",
        "http://10.0.0.5/hook",
        "http://192.168.1.20/hook",
        "http://172.16.0.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[fe80::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook"
      ]
    ) {
      const created = expectProblem(await api.post("/v1/webhooks", { url, events: ["*"] }), 422, "validation_failed")
      expect(created.errors).toEqual([{ path: "url", message: expect.stringMatching(/must not point to a .*address/) }])
      expectProblem(await api.patch(`/v1/webhooks/${accepted.id}`, { url }), 422, "validation_failed")
    }
    expect(expectStatus(await api.get(`/v1/webhooks/${accepted.id}`), 200).url).toBe("https://93.184.216.34/hook")
    // The same URL is accepted by a server started with --allow-private-webhooks.
    const { api: dev } = await tenant(open)
    expectStatus(await dev.post("/v1/webhooks", { url: "http://127.0.0.1:8080/hook", events: ["*"], active: false }), 201)
  })
})

describe("delivery end to end", () => {
  it("a booking made through the API reaches a real receiver, signed; its delivery shows status code and latency; payment.received too", async () => {
    const rx = await receiver()
    const { api } = await tenant(open)
    const hook = expectStatus(await api.post("/v1/webhooks", { url: rx.url, events: ["booking.created", "payment.received"] }), 201)
    const s = await seed(api, { price: { amount: 2500, currency: "EUR" } })
    // webhook-timestamp is real time (receivers check it against their own clocks): it falls
    // between the moment before the booking and the moment its delivery has arrived.
    const notBefore = Math.floor(Date.now() / 1000)
    const booking = expectStatus(
      await api.post("/v1/bookings", { service_id: s.service.id, staff_id: s.staff.id, client_id: s.client.id, start: MONDAY_9 }),
      201
    )

    await waitFor(() => rx.received.length >= 1, 20_000, "booking.created at the receiver")
    const notAfter = Math.ceil(Date.now() / 1000)
    const [request] = rx.received
    expect(request!.method).toBe("POST")
    expect(request!.headers["content-type"]).toBe("application/json")
    const payload = new Webhook(hook.secret).verify(request!.body, request!.headers) as any
    expect(payload).toMatchObject({ object: "event", type: "booking.created", data: { object: { id: booking.id, object: "booking" } } })
    expect(request!.id).toBe(payload.id)
    expect(Number(request!.timestamp)).toBeGreaterThanOrEqual(notBefore)
    expect(Number(request!.timestamp)).toBeLessThanOrEqual(notAfter)
    // The event in the feed is the payload, byte for byte as JSON.
    expect(expectStatus(await api.get(`/v1/events/${payload.id}`), 200)).toEqual(payload)
    expect(rx.received.map(typeOf)).toEqual(["booking.created"]) // only the selected types

    await waitFor(async () => (await deliveriesOf(api, hook.id))[0]?.status === "succeeded", 20_000, "the delivery recorded")
    const [delivery] = await deliveriesOf(api, hook.id)
    expect(delivery).toMatchObject({
      object: "webhook_delivery",
      id: expect.stringMatching(/^whd_/),
      webhook_id: hook.id,
      event_id: payload.id,
      event_type: "booking.created",
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
      last_error: null
    })
    expect(delivery.attempts).toHaveLength(1)
    expect(delivery.attempts[0]).toMatchObject({ status_code: 200, error: null, trigger: "automatic" })
    expect(Number.isInteger(delivery.attempts[0].latency_ms) && delivery.attempts[0].latency_ms >= 0).toBe(true)
    expect(expectStatus(await api.get(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}`), 200)).toEqual(delivery)
    expect(await deliveriesOf(api, hook.id, `?event_id=${payload.id}&status=succeeded`)).toEqual([delivery])
    expect(await deliveriesOf(api, hook.id, "?status=failed")).toEqual([])

    // payment.received from the payments endpoint.
    const paid = expectStatus(await api.post(`/v1/bookings/${booking.id}/payments`, { amount: { amount: 2500, currency: "EUR" } }), 201)
    await waitFor(() => receivedOf(rx, "payment.received").length === 1, 20_000, "payment.received at the receiver")
    const payment = new Webhook(hook.secret).verify(
      receivedOf(rx, "payment.received")[0]!.body,
      receivedOf(rx, "payment.received")[0]!.headers
    ) as any
    expect(payment.data.object).toMatchObject({ id: paid.payment.id, object: "payment" })
    expect(payment.data.booking).toMatchObject({ id: booking.id, payment_status: "paid" })

    // Manual retry: the same webhook-id again, recorded as a manual attempt.
    const retried = expectStatus(await api.post(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}/retry`), 202)
    expect(retried).toMatchObject({ id: delivery.id, status: "pending" })
    await waitFor(() => rx.countOf(payload.id) === 2, 20_000, "the retry")
    await waitFor(
      async () => (await deliveriesOf(api, hook.id, `?event_id=${payload.id}`))[0]?.attempt_count === 2,
      20_000,
      "the retry recorded"
    )
    const again = (await deliveriesOf(api, hook.id, `?event_id=${payload.id}`))[0]
    expect(again).toMatchObject({ status: "succeeded", attempt_count: 2 })
    expect(again.attempts.map((a: any) => a.trigger)).toEqual(["automatic", "manual"])

    const recovery = expectStatus(await api.post(`/v1/webhooks/${hook.id}/recover`, { since: START }), 202)
    expect(recovery).toMatchObject({ object: "webhook_recovery", webhook_id: hook.id, since: START, requeued: 0, created: 0 })
    expect(expectStatus(await api.get(`/v1/webhooks/${hook.id}`), 200)).toMatchObject({ status: "enabled", last_error: null })
  })

  it("rotate-secret: both signatures during the grace period, only the new one after grace 0; POST …/test delivers webhook.test", async () => {
    const rx = await receiver()
    const { api } = await tenant(open)
    const hook = expectStatus(await api.post("/v1/webhooks", { url: rx.url, events: ["client.updated"] }), 201)
    const c = expectStatus(await api.post("/v1/clients", { name: "Rota" }), 201)
    const rotated = expectStatus(await api.post(`/v1/webhooks/${hook.id}/rotate-secret`, { grace_period_seconds: 3600 }), 200)
    expectStatus(await api.patch(`/v1/clients/${c.id}`, { name: "Rota 2" }), 200)
    await waitFor(() => rx.received.length === 1, 20_000, "client.updated")
    const during = rx.received[0]!
    expect(during.signature.split(" ")).toHaveLength(2)
    expect(verifies(rotated.secret, during)).toBe(true)
    expect(verifies(hook.secret, during)).toBe(true)
    expect(verifies(rotated.secret, { ...during, body: during.body.replace("Rota 2", "Rota 3") })).toBe(false)

    const now = expectStatus(await api.post(`/v1/webhooks/${hook.id}/rotate-secret`, { grace_period_seconds: 0 }), 200)
    expectStatus(await api.patch(`/v1/clients/${c.id}`, { name: "Rota 4" }), 200)
    await waitFor(() => rx.received.length === 2, 20_000, "second client.updated")
    const after = rx.received[1]!
    expect(after.signature.split(" ")).toHaveLength(1)
    expect(verifies(now.secret, after)).toBe(true)
    expect(verifies(rotated.secret, after)).toBe(false)
    expect(verifies(hook.secret, after)).toBe(false)

    const test = expectStatus(await api.post(`/v1/webhooks/${hook.id}/test`, {}), 202)
    expect(test).toMatchObject({ object: "webhook_delivery", webhook_id: hook.id, event_type: "webhook.test", status: "pending" })
    await waitFor(() => rx.countOf(test.event_id) === 1, 20_000, "webhook.test")
    const ping = rx.received.find((r) => r.id === test.event_id)!
    const body = new Webhook(now.secret).verify(ping.body, ping.headers) as any
    expect(body).toMatchObject({
      id: test.event_id,
      object: "event",
      type: "webhook.test",
      data: { object: { id: hook.id, object: "webhook_endpoint" } }
    })
    expect(JSON.stringify(body)).not.toContain("whsec_")
    expectProblem(await api.get(`/v1/events/${test.event_id}`), 404, "not_found") // never in the feed
  })

  it("a failing receiver: the endpoint shows failing with the last error; the retry follows the clock; success clears it", async () => {
    const rx = await receiver(status(500))
    const { api } = await tenant(open)
    const hook = expectStatus(await api.post("/v1/webhooks", { url: rx.url, events: ["client.created"] }), 201)
    expectStatus(await api.post("/v1/clients", { name: "Flaky" }), 201)
    await waitFor(() => rx.received.length === 1, 20_000, "the first attempt")
    await waitFor(async () => expectStatus(await api.get(`/v1/webhooks/${hook.id}`), 200).status === "failing", 20_000, "failing")
    const failing = expectStatus(await api.get(`/v1/webhooks/${hook.id}`), 200)
    expect(failing).toMatchObject({ status: "failing", active: true, last_error: { status_code: 500 } })
    const [pending] = await deliveriesOf(api, hook.id)
    expect(pending).toMatchObject({ status: "pending", attempt_count: 1, attempts: [{ status_code: 500, trigger: "automatic" }] })
    expect(pending.attempts[0].error).toContain("500")
    const due = Date.parse(pending.next_attempt_at) - open.now()
    expect(due).toBeGreaterThan(2_000)
    expect(due).toBeLessThan(10_000)

    rx.respond = ok
    await open.advance(due + 1)
    await waitFor(() => rx.received.length === 2, 20_000, "the retry")
    expect(rx.received[1]!.id).toBe(rx.received[0]!.id)
    await waitFor(async () => expectStatus(await api.get(`/v1/webhooks/${hook.id}`), 200).status === "enabled", 20_000, "enabled again")
    expect((await deliveriesOf(api, hook.id))[0]).toMatchObject({ status: "succeeded", attempt_count: 2 })
  })
})

describe("mounted handlers", () => {
  it("createHttpHandler delivers webhooks by default; with webhooks: false another process's dispatcher does", async () => {
    const rx = await receiver()
    const call = (handler: SlotwiseHttpHandler, key: string, method: string, p: string, body?: unknown) =>
      handler.fetch(
        new Request(`http://app.local${p}`, {
          method,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {})
        })
      ).then(async (r) => ({ status: r.status, json: await r.json() as any }))
    const run = async (options: HttpHandlerOptions) => {
      const handler = await createHttpHandler({ allowPrivateWebhooks: true, ...options })
      cleanup.push(() => handler.close())
      const key = (await handler.createAccount({ name: "Host", plan: "pro" })).keys.sandbox.secret
      const hook = await call(handler, key, "POST", "/v1/webhooks", { url: rx.url, events: ["client.created"] })
      expect(hook.status).toBe(201)
      expect((await call(handler, key, "POST", "/v1/clients", { name: "Mounted" })).status).toBe(201)
      return { handler, key, hook: hook.json }
    }
    await run({})
    await waitFor(() => rx.received.length === 1, 20_000, "delivery from the mounted handler")
    // Without a dispatcher nothing is sent (nor fanned out) here; a process that dispatches
    // on the same database delivers it.
    const database = path.join(dir, "mounted.db")
    const quiet = await run({ webhooks: false, storage: { sqlite: database } })
    expect(rx.received).toHaveLength(1)
    expect((await call(quiet.handler, quiet.key, "GET", `/v1/webhooks/${quiet.hook.id}/deliveries`)).json.data).toEqual([])
    const worker = await createHttpHandler({ storage: { sqlite: database }, allowPrivateWebhooks: true })
    cleanup.push(() => worker.close())
    await waitFor(() => rx.received.length === 2, 20_000, "delivery by the other handler's dispatcher")
    expect(JSON.parse(rx.received[1]!.body).data.object.name).toBe("Mounted")
    // Private URLs need the option here too.
    const strictHandler = await createHttpHandler({ webhooks: false })
    cleanup.push(() => strictHandler.close())
    const key = (await strictHandler.createAccount({ name: "Strict", plan: "pro" })).keys.sandbox.secret
    expect((await call(strictHandler, key, "POST", "/v1/webhooks", { url: rx.url, events: ["*"] })).status).toBe(422)
  })
})

// ---- the server binary, killed mid-burst -------------------------------------------------

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotwise-http-webhooks-"))
afterAll(() => {
  killServers()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** The dispatcher's default limit of attempts in flight to one endpoint. */
const PER_ENDPOINT = 32
/**
 * `slotwise serve` with a short lease, so a restart resends soon. The attempt timeout only
 * has to outlast the moments the test holds an attempt before it kills or stops the server.
 */
const serve = (database: string) =>
  serveProcess(["--database", database, "--allow-private-webhooks", "--webhook-timeout-ms", "5000", "--webhook-lease-ms", "6000"], {
    SLOTWISE_ADMIN_TOKEN: ""
  })

/** Whether nothing accepts connections at `url` any more (a stopping server closed its listener). */
const refusesConnections = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname)
    socket.on("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.on("error", () => resolve(true))
  })

describe("slotwise serve, killed mid-delivery", () => {
  beforeAll(() => binary().then(() => undefined), 120_000)

  // Three server processes and a lease to wait out: long work, not slowness.
  it(
    "SIGKILL with a burst queued and attempts in flight, restart on the same file: every event delivered once more at most (same webhook-id and body); SIGTERM lets the attempt in flight finish",
    {
      timeout: 120_000
    },
    async () => {
      const database = path.join(dir, "kill.db")
      // Until the kill the receiver answers nothing: the attempts in flight then are exactly
      // the ones it holds, and none of them can be recorded as delivered.
      let answering = false
      const held: Array<http.ServerResponse> = []
      const rx = await receiver((_request, res) => {
        if (answering) res.writeHead(200).end("ok")
        else held.push(res)
      })
      const setup = await serve(database)
      const key = setup.lines.join("\n").match(/sk_test_\w+/)![0]
      const hook = expectStatus(await client(setup.url, key).post("/v1/webhooks", { url: rx.url, events: ["*"] }), 201)
      const account = expectStatus(await client(setup.url, key).get("/v1/account"), 200)
      setup.process.kill("SIGTERM")
      expect((await setup.exited).code).toBe(0)

      // A burst of 200 events from 4 concurrent writers, committed while no dispatcher runs.
      const BURST = 200
      const writer = await createScheduling({ storage: { sqlite: database } })
      try {
        const clients = writer.tenant({ account_id: account.id, environment: "sandbox" }).clients
        let written = 0
        await Promise.all(Array.from({ length: 4 }, async () => {
          while (written < BURST) await clients.create({ name: `burst ${++written}` })
        }))
      } finally {
        await writer.close()
      }

      // The server fans the burst out and sends as much as one endpoint may have in flight.
      const killed = await serve(database)
      await waitFor(() => rx.received.length >= PER_ENDPOINT, 20_000, "the first attempts to be in flight")
      killed.process.kill("SIGKILL")
      expect((await killed.exited).signal).toBe("SIGKILL")
      const beforeKill = rx.received.splice(0)
      // No more than the per-endpoint limit, since none was answered; 168 still queued.
      expect(beforeKill).toHaveLength(PER_ENDPOINT)
      for (const res of held.splice(0)) res.destroy()
      answering = true

      const restarted = await serve(database)
      expect(restarted.lines.join("\n")).not.toContain("sk_test_")
      const api = client(restarted.url, key)
      const events: Array<any> = []
      let after: string | undefined
      for (;;) {
        const page = expectStatus(await api.get(`/v1/events?limit=100${after !== undefined ? `&after=${after}` : ""}`), 200)
        events.push(...page.data)
        after = page.next_cursor
        if (!page.has_more) break
      }
      expect(events).toHaveLength(BURST) // client.created only: creating the webhook is no event

      // The queued ones at once, the interrupted ones when their leases end: every event once,
      // the interrupted ones again under the same webhook-id with the same body.
      await waitFor(() => rx.received.length >= BURST, 30_000, "every event delivered after the restart")
      await waitFor(async () => (await deliveriesOf(api, hook.id, "?status=pending")).length === 0, 20_000, "nothing pending")
      const ids = events.map((e) => e.id)
      expect(rx.received.map((r) => r.id).sort()).toEqual([...ids].sort())
      const bodyOf = new Map(rx.received.map((r) => [r.id, r.body]))
      for (const copy of beforeKill) expect(copy.body).toBe(bodyOf.get(copy.id))
      let succeeded = 0
      let cursor: string | undefined
      for (;;) {
        const page = expectStatus(
          await api.get(`/v1/webhooks/${hook.id}/deliveries?status=succeeded&limit=100${cursor !== undefined ? `&cursor=${cursor}` : ""}`),
          200
        )
        succeeded += page.data.length
        if (!page.has_more) break
        cursor = page.next_cursor
      }
      expect(succeeded).toBe(events.length) // exactly one delivery per event

      // SIGTERM while an attempt is in flight: it finishes and is recorded before the database closes.
      answering = false
      const last = expectStatus(await api.post("/v1/clients", { name: "last" }), 201)
      await waitFor(() => held.length === 1, 20_000, "the last attempt in flight")
      restarted.process.kill("SIGTERM")
      await waitFor(() => refusesConnections(restarted.url), 20_000, "the server to stop listening")
      held.pop()!.writeHead(200).end("ok")
      expect((await restarted.exited).code).toBe(0)
      const offline = await createScheduling({ storage: { sqlite: database } })
      try {
        const lastEvent = rx.received.find((r) => JSON.parse(r.body).data.object.id === last.id)!.id
        const recorded = (await offline.tenant({ account_id: account.id, environment: "sandbox" }).webhooks.listDeliveries(hook.id, {
          event_id: lastEvent
        })).data
        expect(recorded).toHaveLength(1)
        expect(recorded[0]).toMatchObject({ status: "succeeded", attempt_count: 1, attempts: [{ status_code: 200 }] })
      } finally {
        await offline.close()
      }
    }
  )
})
