/**
 * Webhook endpoints as resources: validation, the URL and address rules (SSRF guard at
 * create/update time and again at delivery time against DNS rebinding), CRUD and the
 * deliveries listing, test events.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { WebhookDispatcherLive } from "../../adapters/webhooks/dispatcher.js"
import { WebhookPolicyLive } from "../../adapters/webhooks/guard.js"
import { createTestScheduling } from "../../index.js"
import type { Events } from "../../src/events/index.js"
import { CoreLive } from "../../src/layers.js"
import { Tenant, type TenantId } from "../../src/ports/index.js"
import { addressBlockReason, Webhooks } from "../../src/webhooks/index.js"
import { failure } from "../support/fixtures.js"
import { startMarker, startReceiver, waitFor } from "./receiver.js"

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

const tenant: TenantId = { account_id: `acc_${"1".repeat(26)}`, environment: "sandbox" }

describe("address rules", () => {
  it("only public unicast addresses pass, in IPv4 and IPv6 (mapped, NAT64, 6to4 included)", () => {
    const blocked = [
      "127.0.0.1",
      "127.255.255.254",
      "10.0.0.1",
      "172.16.5.4",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "239.255.255.250",
      "255.255.255.255",
      "240.0.0.1",
      "192.0.2.10",
      "198.18.0.1",
      "::",
      "::1",
      "fe80::1",
      "fe80::1%eth0",
      "fc00::1",
      "fd12:3456::1",
      "ff02::1",
      "fec0::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:10.0.0.1",
      "::ffff:192.168.0.1",
      "::127.0.0.1",
      "64:ff9b::a00:1",
      "2002:7f00:1::",
      "2001:db8::1",
      "100::1",
      "[::1]",
      "::ffff:169.254.169.254"
    ]
    for (const address of blocked) expect(addressBlockReason(address), address).toBeDefined()
    const allowed = [
      "93.184.216.34",
      "8.8.8.8",
      "172.32.0.1",
      "172.15.255.255",
      "100.128.0.1",
      "192.169.0.1",
      "2606:4700:4700::1111",
      "2a00:1450:4001:81b::200e",
      "::ffff:93.184.216.34",
      "64:ff9b::808:808",
      "2002:5db8:d822::"
    ]
    for (const address of allowed) expect(addressBlockReason(address), address).toBeUndefined()
    expect(addressBlockReason("example.com")).toBe("not an IP address")
    expect(addressBlockReason("1.2.3")).toBe("not an IP address")
  })
})

describe("endpoint URLs", () => {
  it("refuses non-http(s), credentials, private/loopback/link-local literals and localhost (422)", async () => {
    const s = await createTestScheduling()
    cleanup.push(() => s.close())
    const refused = [
      "ftp://example.com/hook",
      "javascript:alert(1)",
      "not a url",
      "https://user:pass@example.com/hook",
      "http://127.0.0.1:8080/hook",
      "http://localhost:3000/hook",
      "http://api.localhost/hook",
      "http://10.1.2.3/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/hook",
      "http://[fd00::1]/hook",
      "http://[::ffff:127.0.0.1]/hook",
      "http://0x7f.1/hook", // WHATWG URL normalises to 127.0.0.1
      "http://2130706433/hook",
      "http://0/hook"
    ]
    for (const url of refused) {
      const error = await failure(s.webhooks.create({ url, events: ["*"] }))
      expect(error, url).toMatchObject({ status: 422, code: "validation_failed", errors: [{ path: "url" }] })
    }
    const endpoint = await s.webhooks.create({ url: "https://93.184.216.34/hooks", events: ["booking.created"] })
    expect(await failure(s.webhooks.update(endpoint.id, { url: "http://192.168.0.10/x" }))).toMatchObject({
      status: 422,
      errors: [{ path: "url" }]
    })
  })

  it("refuses a hostname that resolves to a private address when a resolver is available", async () => {
    const runtime = ManagedRuntime.make(
      CoreLive.pipe(
        Layer.provide(WebhookPolicyLive({
          resolver: async (host) =>
            host === "internal.example" ? [{ address: "10.0.0.5", family: 4 }] : [{ address: "93.184.216.34", family: 4 }]
        })),
        Layer.provide(MemoryStorageLive)
      )
    )
    cleanup.push(() => runtime.dispose())
    const run = <A, E>(effect: Effect.Effect<A, E, Webhooks | Tenant>) =>
      runtime.runPromise(Effect.either(Effect.provideService(effect, Tenant, tenant)))
    const refused = await run(Effect.flatMap(Webhooks, (w) => w.create({ url: "https://internal.example/hook", events: ["*"] })))
    expect(refused).toMatchObject({
      _tag: "Left",
      left: { _tag: "ValidationFailed", errors: [{ path: "url", message: "resolves to 10.0.0.5, a private address" }] }
    })
    const accepted = await run(Effect.flatMap(Webhooks, (w) => w.create({ url: "https://public.example/hook", events: ["*"] })))
    expect(accepted._tag).toBe("Right")
  })

  it("allowPrivate (--allow-private-webhooks) accepts loopback and private URLs", async () => {
    const s = await createTestScheduling({ webhooks: { allowPrivate: true } })
    cleanup.push(() => s.close())
    for (const url of ["http://127.0.0.1:9/x", "http://localhost:9/x", "http://[::1]:9/x", "http://10.0.0.1/x"]) {
      expect((await s.webhooks.create({ url, events: ["*"], active: false })).url).toBe(url)
    }
  })

  it("checks again at delivery time: a name rebound to loopback after creation is refused when connecting", async () => {
    const receiver = await startReceiver()
    cleanup.push(() => receiver.close())
    const runtime = ManagedRuntime.make(
      WebhookDispatcherLive({
        allowPrivate: false,
        // At delivery time the name points at the receiver on loopback (a rebinding attack).
        resolver: async () => [{ address: "::ffff:127.0.0.1", family: 6 }, { address: "127.0.0.1", family: 4 }]
      }).pipe(
        Layer.provideMerge(CoreLive.pipe(
          // At creation time the name looked public.
          Layer.provide(WebhookPolicyLive({ resolver: async () => [{ address: "93.184.216.34", family: 4 }] }))
        )),
        Layer.provide(MemoryStorageLive)
      )
    )
    cleanup.push(() => runtime.dispose())
    const run = <A, E>(effect: Effect.Effect<A, E, Webhooks | Events | Tenant>) =>
      runtime.runPromise(Effect.provideService(effect, Tenant, tenant))
    const endpoint = await run(
      Effect.flatMap(Webhooks, (w) => w.create({ url: `http://rebind.example:${receiver.port}/hooks`, events: ["*"] }))
    )
    await run(Effect.flatMap(Webhooks, (w) => w.sendTest(endpoint.id)))
    let attempts: ReadonlyArray<{ readonly error: string | null }> = []
    await waitFor(async () => {
      const page = await run(Effect.flatMap(Webhooks, (w) => w.listDeliveries(endpoint.id)))
      attempts = page.data[0]?.attempts ?? []
      return attempts.length > 0
    })
    expect(attempts[0]!.error).toMatch(/^refused to connect to (::ffff:)?127\.0\.0\.1: a (IPv4 )?loopback/)
    expect(receiver.received).toHaveLength(0)
  })
})

describe("endpoints", () => {
  it("validates events, fields and defaults", async () => {
    const s = await createTestScheduling()
    cleanup.push(() => s.close())
    expect(await failure(s.webhooks.create({ url: "https://93.184.216.34/h", events: [] }))).toMatchObject({
      status: 422,
      errors: [{ path: "events" }]
    })
    expect(await failure(s.webhooks.create({ url: "https://93.184.216.34/h", events: ["booking.exploded" as never] }))).toMatchObject({
      status: 422,
      errors: [{ path: "events.0" }]
    })
    expect(await failure(s.webhooks.create({ url: "https://93.184.216.34/h", events: ["*"], colour: "red" } as never))).toMatchObject({
      status: 422,
      errors: [{ path: "colour" }]
    })
    const endpoint = await s.webhooks.create({
      url: "https://93.184.216.34/h",
      events: ["booking.created", "booking.created", "payment.received"]
    })
    expect(endpoint).toMatchObject({
      object: "webhook_endpoint",
      url: "https://93.184.216.34/h",
      events: ["booking.created", "payment.received"],
      description: null,
      active: true,
      status: "enabled",
      last_error: null,
      metadata: {}
    })
    expect(endpoint.id).toMatch(/^whk_[0-9A-Z]{26}$/)
    const inactive = await s.webhooks.create({ url: "https://93.184.216.34/h", events: ["*"], active: false })
    expect(inactive.status).toBe("disabled")
  })

  it("CRUD: list pages, get, update, delete (with its deliveries); 404 for unknown and other tenants' ids", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ webhooks: { allowPrivate: true } })
    cleanup.push(() => receiver.close(), () => s.close())
    const created = []
    for (let i = 0; i < 5; i++) created.push(await s.webhooks.create({ url: `${receiver.url}/${i}`, events: ["*"], description: `#${i}` }))
    const first = await s.webhooks.list({ limit: 2 })
    expect(first.data.map((e) => e.id)).toEqual(created.slice(0, 2).map((e) => e.id))
    expect(first.has_more).toBe(true)
    const rest = await s.webhooks.list({ limit: 10, cursor: first.next_cursor! })
    expect(rest.data.map((e) => e.id)).toEqual(created.slice(2).map((e) => e.id))

    const target = created[0]!
    const updated = await s.webhooks.update(target.id, { events: ["client.created"], description: "CRM", metadata: { team: "ops" } })
    expect(updated).toMatchObject({ events: ["client.created"], description: "CRM", metadata: { team: "ops" } })
    expect(updated.updated_at >= target.updated_at).toBe(true)
    expect(await s.webhooks.update(target.id, { active: false })).toMatchObject({ active: false, status: "disabled" })
    expect(await s.webhooks.update(target.id, { active: true })).toMatchObject({ active: true, status: "enabled" })

    await s.clients.create({ name: "x" })
    await waitFor(async () => (await s.webhooks.listDeliveries(target.id, { status: "succeeded" })).data.length === 1)
    const other = s.tenant({ account_id: `acc_${"2".repeat(26)}`, environment: "sandbox" })
    expect(await failure(other.webhooks.get(target.id))).toMatchObject({ status: 404, code: "not_found" })
    expect(await failure(other.webhooks.listDeliveries(target.id))).toMatchObject({ status: 404 })

    const deleted = await s.webhooks.delete(target.id)
    expect(deleted.id).toBe(target.id)
    expect(await failure(s.webhooks.get(target.id))).toMatchObject({ status: 404 })
    expect(await failure(s.webhooks.listDeliveries(target.id))).toMatchObject({ status: 404 })
    expect((await s.webhooks.list()).data).toHaveLength(4)
  })

  it("deliveries list by endpoint with status and event filters; a delivery is read by id", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ webhooks: { allowPrivate: true } })
    cleanup.push(() => receiver.close(), () => s.close())
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["client.created"] })
    for (let i = 0; i < 3; i++) await s.clients.create({ name: `c${i}` })
    await waitFor(async () => (await s.webhooks.listDeliveries(endpoint.id, { status: "succeeded" })).data.length === 3)
    const page = await s.webhooks.listDeliveries(endpoint.id, { limit: 2 })
    expect(page.has_more).toBe(true)
    const next = await s.webhooks.listDeliveries(endpoint.id, { limit: 2, cursor: page.next_cursor! })
    expect(next.data).toHaveLength(1)
    const eventId = page.data[1]!.event_id
    const byEvent = await s.webhooks.listDeliveries(endpoint.id, { event_id: eventId })
    expect(byEvent.data.map((d) => d.id)).toEqual([page.data[1]!.id])
    expect(await s.webhooks.getDelivery(endpoint.id, page.data[0]!.id)).toEqual(page.data[0])
    expect(page.data[0]).not.toHaveProperty("payload")
    expect(await failure(s.webhooks.listDeliveries(endpoint.id, { status: "exploded" as never }))).toMatchObject({ status: 422 })
    expect(await failure(s.webhooks.listDeliveries(endpoint.id, { limit: 2, cursor: page.next_cursor!, status: "failed" }))).toMatchObject({
      status: 400
    })
    expect(await failure(s.webhooks.getDelivery(endpoint.id, "whd_01ARZ3NDEKTSV4RRFFQ69G5FAV"))).toMatchObject({ status: 404 })
  })

  it("test event: webhook.test with the endpoint as data.object, to that endpoint only, not in the feed", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ webhooks: { allowPrivate: true } })
    const marker = await startMarker(s)
    cleanup.push(() => receiver.close(), () => marker.close(), () => s.close())
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["booking.created"] })
    const bystander = await s.webhooks.create({ url: `${receiver.url}/other`, events: ["*"] })
    const delivery = await s.webhooks.sendTest(endpoint.id)
    expect(delivery).toMatchObject({ object: "webhook_delivery", webhook_id: endpoint.id, event_type: "webhook.test", status: "pending" })
    await waitFor(() => receiver.received.length === 1)
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(1)
    const body = JSON.parse(receiver.received[0]!.body)
    expect(body).toMatchObject({
      id: delivery.event_id,
      object: "event",
      type: "webhook.test",
      data: { object: { id: endpoint.id, object: "webhook_endpoint" } }
    })
    expect(body.data.object).not.toHaveProperty("secrets")
    expect(receiver.received[0]!.path).toBe("/hooks")
    expect((await s.events.list()).data).toHaveLength(0)
    expect((await s.webhooks.listDeliveries(bystander.id)).data).toHaveLength(0)
    await s.webhooks.update(endpoint.id, { active: false })
    expect(await failure(s.webhooks.sendTest(endpoint.id))).toMatchObject({ status: 409, code: "invalid_transition" })
  })
})
