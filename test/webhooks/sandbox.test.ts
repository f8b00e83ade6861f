/**
 * The sandbox's triggers (emit any event type, about a real resource or a sample; reset),
 * refused in production; and payment.received reaching every kind of subscriber: the
 * facade's callback, the Effect `Stream`, the feed and a webhook receiver.
 */
import { Chunk, Effect, Fiber, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { createTestScheduling, MemoryStorageLive } from "../../index.js"
import { Event, EVENT_TYPES, Events } from "../../src/events/index.js"
import { CoreLive } from "../../src/layers.js"
import { Tenant } from "../../src/ports/index.js"
import { Sandbox } from "../../src/sandbox/index.js"
import { failure, MONDAY_9, NOW, salon } from "../support/fixtures.js"
import { startMarker, startReceiver, waitFor } from "./receiver.js"

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

const PREFIX: Record<string, string> = {
  booking: "bkg_",
  payment: "pay_",
  client: "cli_",
  service: "svc_",
  staff: "stf_",
  availability: "avl_",
  calendar: "cal_",
  domain: "dom_"
}

describe("sandbox emit", () => {
  it("emits every catalogue type with a realistic sample to the feed, subscribers and webhooks", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ now: NOW, webhooks: { allowPrivate: true } })
    cleanup.push(() => receiver.close(), () => s.close())
    await s.webhooks.create({ url: receiver.url, events: ["*"] })
    const heard: Array<string> = []
    s.events.subscribe((event) => heard.push(event.type))
    for (const type of EVENT_TYPES) {
      const event = await s.sandbox.emit({ type })
      expect(event).toMatchObject({ object: "event", type, created_at: NOW })
      expect(Schema.is(Event)(event)).toBe(true)
      const kind = type.slice(0, type.indexOf("."))
      const object = event.data.object as { id?: string; object: string; staff_id?: string; url?: string; created_at: string }
      expect(object.object).toBe(kind)
      // A calendar feed is named by its staff member and shows no URL.
      if (kind === "calendar_feed") expect([object.staff_id!.slice(0, 4), object.url]).toEqual(["stf_", undefined])
      else expect(object.id!.startsWith(PREFIX[kind]!)).toBe(true)
      if (/\.(updated|cancelled|rescheduled|rotated|verified)$/.test(type)) expect(event.data.previous).toBeDefined()
      if (type === "payment.received") expect(event.data.booking).toMatchObject({ object: "booking", payment_status: "paid" })
    }
    expect(heard).toEqual([...EVENT_TYPES])
    expect((await s.events.list({ limit: 100 })).data.map((e) => e.type)).toEqual([...EVENT_TYPES])
    await waitFor(() => receiver.received.length === EVENT_TYPES.length, 20_000, "sandbox events delivered")
    expect(receiver.received.map((r) => JSON.parse(r.body).type).sort()).toEqual([...EVENT_TYPES].sort())
  })

  it("with object_id: the real resource of this sandbox (a payment with its booking); 422 for the wrong kind, 404 for unknown", async () => {
    const { clientId, s, serviceId, staffId } = await salon()
    cleanup.push(() => s.close())
    const client = await s.clients.get(clientId)
    const event = await s.sandbox.emit({ type: "client.updated", object_id: clientId })
    expect(event.data.object).toEqual(client)
    expect(event.data.previous).toEqual(client)
    expect((await s.sandbox.emit({ type: "client.created", object_id: clientId })).data).toEqual({ object: client })

    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const { booking: paid, payment } = await s.bookings.recordPayment(booking.id, { amount: { amount: 4000, currency: "EUR" } })
    const replay = await s.sandbox.emit({ type: "payment.received", object_id: payment.id })
    expect(replay.data).toEqual({ object: payment, booking: paid })
    expect((await s.sandbox.emit({ type: "booking.cancelled", object_id: booking.id })).data.object).toEqual(paid)

    expect(await failure(s.sandbox.emit({ type: "booking.created", object_id: clientId }))).toMatchObject({
      status: 422,
      errors: [{ path: "object_id", message: "must be an id starting with bkg_ for booking.created" }]
    })
    expect(await failure(s.sandbox.emit({ type: "client.updated", object_id: "cli_01ARZ3NDEKTSV4RRFFQ69G5FAV" }))).toMatchObject({
      status: 404,
      code: "not_found"
    })
    expect(await failure(s.sandbox.emit({ type: "booking.exploded" as never }))).toMatchObject({
      status: 422,
      errors: [{ path: "type", message: "must be an event type of the catalogue" }]
    })
    // Another tenant's resource is unknown here.
    const other = s.tenant({ account_id: `acc_${"3".repeat(26)}`, environment: "sandbox" })
    expect(await failure(other.sandbox.emit({ type: "client.updated", object_id: clientId }))).toMatchObject({ status: 404 })
  })
})

describe("sandbox reset", () => {
  it("erases the sandbox's resources, events and webhook endpoints; other tenants keep theirs", async () => {
    const { s } = await salon()
    cleanup.push(() => s.close())
    const neighbour = s.tenant({ account_id: `acc_${"4".repeat(26)}`, environment: "sandbox" })
    const kept = await neighbour.clients.create({ name: "Neighbour" })
    await s.webhooks.create({ url: "https://93.184.216.34/hook", events: ["*"] })
    expect((await s.events.list()).data.length).toBeGreaterThan(0)
    await s.sandbox.reset()
    expect((await s.clients.list()).data).toEqual([])
    expect((await s.services.list()).data).toEqual([])
    expect((await s.staff.list()).data).toEqual([])
    expect((await s.events.list()).data).toEqual([])
    expect((await s.webhooks.list()).data).toEqual([])
    expect((await neighbour.clients.list()).data).toEqual([kept])
    // The sandbox works as new afterwards.
    await s.clients.create({ name: "Fresh" })
    expect((await s.events.list()).data.map((e) => e.type)).toEqual(["client.created"])
  })

  it("both triggers are refused for a production tenant (403 forbidden), which keeps its data", async () => {
    const s = await createTestScheduling({ now: NOW })
    cleanup.push(() => s.close())
    const production = s.tenant({ account_id: `acc_${"5".repeat(26)}`, environment: "production" })
    const client = await production.clients.create({ name: "Live customer" })
    expect(await failure(production.sandbox.emit({ type: "booking.created" }))).toMatchObject({
      status: 403,
      code: "forbidden",
      name: "PermissionError"
    })
    expect(await failure(production.sandbox.reset())).toMatchObject({ status: 403, code: "forbidden" })
    expect((await production.clients.list()).data).toEqual([client])
    expect((await production.events.list()).data.map((e) => e.type)).toEqual(["client.created"])
  })
})

describe("payment.received reaches subscribers", () => {
  it("facade callback, webhook receiver and feed all get the same event", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ now: NOW, webhooks: { allowPrivate: true } })
    const marker = await startMarker(s)
    cleanup.push(() => receiver.close(), () => marker.close(), () => s.close())
    const { clientId, serviceId, staffId } = await salon({}, s)
    await s.webhooks.create({ url: receiver.url, events: ["payment.received"] })
    const heard: Array<Event> = []
    const off = s.events.subscribe((event) => heard.push(event))
    const booking = await s.bookings.create({ service_id: serviceId, staff_id: staffId, client_id: clientId, start: MONDAY_9 })
    const { booking: paid, payment } = await s.bookings.recordPayment(booking.id, {
      amount: { amount: 1000, currency: "EUR" },
      reference: "pi_42"
    })
    off()
    const [event] = (await s.events.list({ types: ["payment.received"] })).data
    expect(event!.data).toEqual({ object: payment, booking: paid })
    expect(heard.map((e) => e.type)).toEqual(["booking.created", "payment.received"])
    expect(heard[1]).toEqual(event)
    await waitFor(() => receiver.received.length === 1)
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(1) // only the selected type
    expect(JSON.parse(receiver.received[0]!.body)).toEqual(event)
  })

  it("the Effect Stream (exported from the package root) delivers it in commit order", async () => {
    const tenant = { account_id: `acc_${"6".repeat(26)}`, environment: "sandbox" } as const
    const runtime = ManagedRuntime.make(CoreLive.pipe(Layer.provide(MemoryStorageLive)))
    cleanup.push(() => runtime.dispose())
    const program = Effect.gen(function*() {
      const events = yield* Events
      const sandbox = yield* Sandbox
      const types = ["payment.received", "booking.created"] as const
      // From the feed's cursor, not "from whenever the fiber starts": nothing can slip past.
      const { next_cursor } = yield* events.list({ types })
      const fiber = yield* events.stream({ after: next_cursor, types }).pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.fork
      )
      const emitted = [
        yield* sandbox.emit({ type: "booking.created" }),
        yield* sandbox.emit({ type: "client.created" }),
        yield* sandbox.emit({ type: "payment.received" }),
        yield* sandbox.emit({ type: "payment.received" })
      ]
      const streamed = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      return { emitted, streamed }
    }).pipe(Effect.provideService(Tenant, tenant))
    const { emitted, streamed } = await runtime.runPromise(program)
    expect(streamed.map((e) => e.id)).toEqual([emitted[0]!.id, emitted[2]!.id, emitted[3]!.id])
    expect(streamed[1]).toEqual(emitted[2])
  })
})
