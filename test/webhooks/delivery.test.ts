/**
 * Delivery rules (docs/api.md §4) against real receivers on 127.0.0.1, with the in-memory
 * sandbox's controlled clock driving the retry schedule: only 2xx is success, 500s and
 * timeouts and refused connections retry on the schedule (≈5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h) then fail, 410 disables the endpoint, 429 waits for Retry-After, redirects are
 * not followed; the same webhook-id on every attempt and no attempt more than the rules ask.
 *
 * Nothing here depends on how fast the machine is: the retry schedule runs on the
 * controlled clock, waits are for conditions (with deadlines that only bound a failure),
 * "nothing more happens" is shown with a marker the dispatcher must get through first
 * (`startMarker`), and HTTP timeouts are the dispatcher's 10 s except where a timeout is
 * the subject.
 */
import { afterEach, describe, expect, it } from "vitest"
import { createTestScheduling, type TestScheduling } from "../../index.js"
import { RETRY_DELAYS_MS, type WebhookDelivery } from "../../src/webhooks/index.js"
import { closedPort, ok, type Receiver, startMarker, startReceiver, status, waitFor } from "./receiver.js"

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

const setup = async (respond = ok, timeoutMs = 10_000) => {
  const receiver = await startReceiver(respond)
  const s = await createTestScheduling({ webhooks: { allowPrivate: true, timeoutMs } })
  const marker = await startMarker(s)
  cleanup.push(() => receiver.close(), () => marker.close(), () => s.close())
  return { receiver, s, marker }
}

/** The endpoint's only delivery, once `check` holds for it. */
const deliveryWhen = async (
  s: TestScheduling,
  webhookId: string,
  check: (d: WebhookDelivery) => boolean,
  what = "delivery state"
): Promise<WebhookDelivery> => {
  let found: WebhookDelivery | undefined
  await waitFor(
    async () => {
      const [first] = (await s.webhooks.listDeliveries(webhookId)).data
      found = first
      return first !== undefined && check(first)
    },
    20_000,
    what
  )
  return found!
}

const nowMs = (s: TestScheduling) => Date.parse(s.clock.now())

describe("retry schedule", () => {
  it("500: retries with jittered backoff on the schedule, then fails; same webhook-id; endpoint failing, not disabled; manual retry", async () => {
    const { marker, receiver, s } = await setup(status(500))
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["client.created"] })
    const client = await s.clients.create({ name: "Ada" })
    const [event] = (await s.events.list()).data
    let delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(delivery).toMatchObject({ status: "pending", event_id: event!.id, event_type: "client.created" })
    expect(delivery.attempts[0]).toMatchObject({ status_code: 500, error: "HTTP 500: status 500", trigger: "automatic" })

    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      const due = Date.parse(delivery.next_attempt_at!)
      const wait = due - nowMs(s)
      // Jitter: within ±10 % of the schedule's delay.
      expect(wait).toBeGreaterThanOrEqual(delay * 0.9 - 1)
      expect(wait).toBeLessThanOrEqual(delay * 1.1 + 1)
      await s.clock.advance({ milliseconds: wait - 1 })
      await marker.caughtUp()
      expect(receiver.received).toHaveLength(i + 1) // not a moment early
      await s.clock.advance({ milliseconds: 1 })
      delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === i + 2, `attempt ${i + 2}`)
    }
    expect(delivery).toMatchObject({ status: "failed", attempt_count: 8, next_attempt_at: null, last_error: "HTTP 500: status 500" })
    expect(receiver.received).toHaveLength(8)
    expect(receiver.countOf(event!.id)).toBe(8) // every attempt carried the event id
    expect(JSON.parse(receiver.received[7]!.body)).toMatchObject({ id: event!.id, data: { object: client } })

    // Nothing more, however long we wait; the endpoint is failing but still active.
    await s.clock.advance({ days: 3 })
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(8)
    expect(await s.webhooks.get(endpoint.id)).toMatchObject({
      active: true,
      status: "failing",
      last_error: { message: "HTTP 500: status 500", status_code: 500, delivery_id: delivery.id }
    })

    // Retried by hand once the receiver is back: one attempt, succeeded, endpoint enabled.
    receiver.respond = ok
    await s.webhooks.retryDelivery(endpoint.id, delivery.id)
    delivery = await deliveryWhen(s, endpoint.id, (d) => d.status === "succeeded")
    expect(delivery.attempts.at(-1)).toMatchObject({ status_code: 200, trigger: "manual", error: null })
    expect(receiver.countOf(event!.id)).toBe(9)
    expect((await s.webhooks.get(endpoint.id)).status).toBe("enabled")
  })

  it("a receiver that times out: the attempt fails after the timeout and is retried with the same webhook-id", async () => {
    const hanging: Array<() => void> = []
    // Long enough that the second attempt's immediate 200 cannot miss it on a busy machine.
    const { receiver, s } = await setup((_request, res) => {
      hanging.push(() => res.end())
    }, 1500)
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    await s.clients.create({ name: "Slow" })
    let delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: "timed out after 1500 ms" })
    // Measured by the transport: the attempt was given up at the timeout, not before.
    expect(delivery.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(1490)
    expect((await s.webhooks.get(endpoint.id)).status).toBe("failing")

    receiver.respond = ok
    await s.clock.advance({ seconds: 6 })
    delivery = await deliveryWhen(s, endpoint.id, (d) => d.status === "succeeded")
    expect(receiver.received.map((r) => r.id)).toEqual([delivery.event_id, delivery.event_id])
    expect((await s.webhooks.get(endpoint.id)).status).toBe("enabled")
    for (const end of hanging) end()
  })

  it("a refused connection is a failed attempt with its error, retried on the schedule", async () => {
    const port = await closedPort()
    const s = await createTestScheduling({ webhooks: { allowPrivate: true } })
    cleanup.push(() => s.close())
    const endpoint = await s.webhooks.create({ url: `http://127.0.0.1:${port}/hooks`, events: ["*"] })
    await s.clients.create({ name: "Nobody home" })
    let delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(delivery).toMatchObject({ status: "pending", last_error: "connection refused" })
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: "connection refused" })
    await s.clock.advance({ seconds: 6 })
    delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 2)
    expect(delivery.status).toBe("pending")
    expect(await s.webhooks.get(endpoint.id)).toMatchObject({
      status: "failing",
      active: true,
      last_error: { message: "connection refused", status_code: null }
    })
  })

  it("410 Gone disables the endpoint: no further attempts or deliveries until re-enabled; missed events are recoverable", async () => {
    const { marker, receiver, s } = await setup(status(410))
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["client.created"] })
    await s.clients.create({ name: "First" })
    const delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(delivery).toMatchObject({ status: "failed", next_attempt_at: null, last_error: "HTTP 410 Gone: endpoint disabled" })
    expect(await s.webhooks.get(endpoint.id)).toMatchObject({ active: false, status: "disabled", last_error: { status_code: 410 } })

    const missed = await s.clients.create({ name: "Missed" })
    await s.clock.advance({ days: 2 })
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(1)
    expect((await s.webhooks.listDeliveries(endpoint.id)).data).toHaveLength(1)
    expect(await s.webhooks.retryDelivery(endpoint.id, delivery.id).catch((e) => e.code)).toBe("invalid_transition")

    receiver.respond = ok
    expect(await s.webhooks.update(endpoint.id, { active: true })).toMatchObject({ active: true, status: "enabled" })
    const recovery = await s.webhooks.recover(endpoint.id, { since: "2000-01-01T00:00:00Z" })
    expect(recovery).toMatchObject({ object: "webhook_recovery", requeued: 1, created: 1 })
    const [missedEvent] = (await s.events.list({ types: ["client.created"] })).data.filter((e) =>
      (e.data.object as { id: string }).id === missed.id
    )
    await waitFor(() => receiver.received.length === 3, 20_000, "recovered deliveries")
    expect(receiver.countOf(missedEvent!.id)).toBe(1)
    expect(receiver.countOf(delivery.event_id)).toBe(2)
    // Recovering again finds nothing missing.
    await waitFor(async () => (await s.webhooks.listDeliveries(endpoint.id, { status: "pending" })).data.length === 0)
    expect(await s.webhooks.recover(endpoint.id, { since: "2000-01-01T00:00:00Z" })).toMatchObject({ requeued: 0, created: 0 })
  })

  it("429 waits exactly Retry-After (no jitter), then retries with the same webhook-id", async () => {
    const { marker, receiver, s } = await setup(status(429, { "retry-after": "7" }))
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    await s.clients.create({ name: "Busy" })
    let delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(Date.parse(delivery.next_attempt_at!) - nowMs(s)).toBe(7000)
    receiver.respond = ok
    await s.clock.advance({ milliseconds: 6999 })
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(1)
    await s.clock.advance({ milliseconds: 1 })
    delivery = await deliveryWhen(s, endpoint.id, (d) => d.status === "succeeded")
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([429, 200])
    expect(receiver.countOf(delivery.event_id)).toBe(2)
  })

  it("redirects are not followed: a 3xx is a failed attempt", async () => {
    let target: Receiver | undefined
    const { receiver, s } = await setup((_request, res) => {
      res.writeHead(302, { location: target!.url })
      res.end()
    })
    target = await startReceiver()
    cleanup.push(() => target!.close())
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    await s.clients.create({ name: "Moved" })
    const delivery = await deliveryWhen(s, endpoint.id, (d) => d.attempt_count === 1)
    expect(delivery.attempts[0]).toMatchObject({ status_code: 302, error: "HTTP 302 (redirects are not followed)" })
    expect(delivery.status).toBe("pending")
    // The attempt is over and recorded as the 302: a followed redirect would have been part of it.
    expect(target.received).toHaveLength(0)
  })
})

describe("fairness", () => {
  it("one endpoint's backlog at its in-flight limit does not hold up another endpoint's due retry", async () => {
    // The stuck receiver holds every request until the test ends, so its attempts stay in
    // flight (their timeout is far off) for as long as the healthy endpoint's retry needs.
    const held: Array<() => void> = []
    let holding = true
    const hanging = await startReceiver((_request, res) => {
      if (holding) held.push(() => res.end())
      else res.end()
    })
    const healthy = await startReceiver(status(500))
    const s = await createTestScheduling({
      webhooks: { allowPrivate: true, timeoutMs: 60_000, concurrency: 8, perEndpointConcurrency: 2 }
    })
    const release = async () => {
      holding = false
      for (const end of held.splice(0)) end()
    }
    cleanup.push(() => hanging.close(), () => healthy.close(), () => s.close(), release)
    const stuck = await s.webhooks.create({ url: hanging.url, events: ["client.created"] })
    const fine = await s.webhooks.create({ url: healthy.url, events: ["client.updated"] })
    const first = await s.clients.create({ name: "first" })
    await s.clients.update(first.id, { notes: "changed" })
    await deliveryWhen(s, fine.id, (d) => d.attempt_count === 1)
    healthy.respond = ok
    for (let i = 0; i < 30; i++) await s.clients.create({ name: `backlog ${i}` })
    await waitFor(() => hanging.received.length === 2, 20_000, "the stuck endpoint's two slots to fill")
    await s.clock.advance({ seconds: 6 }) // the retry falls due behind 29 older due rows of the stuck endpoint
    await deliveryWhen(s, fine.id, (d) => d.status === "succeeded", "the healthy endpoint's retry")
    // ... while both stuck attempts were still in flight: no stuck delivery has an outcome yet.
    expect(hanging.received).toHaveLength(2)
    const pending = (await s.webhooks.listDeliveries(stuck.id, { status: "pending", limit: 100 })).data
    expect(pending).toHaveLength(31)
    expect(pending.filter((d) => d.attempt_count > 0)).toEqual([])
  })
})

describe("at least once, no more", () => {
  it("a burst of events to a healthy receiver: each delivered exactly once, to every endpoint that selects it", async () => {
    const { marker, receiver, s } = await setup()
    const all = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    const other = await startReceiver()
    cleanup.push(() => other.close())
    const onlyUpdates = await s.webhooks.create({ url: other.url, events: ["client.updated"] })
    const clients = await Promise.all(Array.from({ length: 40 }, (_, i) => s.clients.create({ name: `C${i}` })))
    await s.clients.update(clients[0]!.id, { name: "C0 renamed" })
    const events = (await s.events.list({ limit: 100 })).data
    expect(events).toHaveLength(41)
    // Every outcome recorded, then one more claim round: any extra copy would be out by then.
    const succeeded = async (id: string) => (await s.webhooks.listDeliveries(id, { status: "succeeded", limit: 100 })).data.length
    await waitFor(async () => (await succeeded(all.id)) === 41 && (await succeeded(onlyUpdates.id)) === 1, 20_000, "burst recorded")
    await marker.caughtUp()
    expect(receiver.received).toHaveLength(41)
    expect(receiver.ids()).toEqual(new Set(events.map((e) => e.id)))
    expect(other.received.map((r) => JSON.parse(r.body).type)).toEqual(["client.updated"])
    expect((await s.webhooks.listDeliveries(all.id, { limit: 100 })).data).toHaveLength(41)
    expect((await s.webhooks.listDeliveries(onlyUpdates.id)).data).toHaveLength(1)
  })

  it("rounds start at least roundIntervalMs apart: a commit right after one round waits for the next", async () => {
    const receiver = await startReceiver()
    const s = await createTestScheduling({ webhooks: { allowPrivate: true, roundIntervalMs: 300 } })
    cleanup.push(() => receiver.close(), () => s.close())
    await s.webhooks.create({ url: receiver.url, events: ["client.created"] })
    // The round that takes the first event starts after its commit; the next one starts at
    // least 300 ms after that, whatever the load (load only makes it later).
    const firstCommitted = performance.now()
    await s.clients.create({ name: "First" })
    await waitFor(async () => receiver.received.length === 1, 20_000, "first delivery")
    await s.clients.create({ name: "Second" })
    await waitFor(async () => receiver.received.length === 2, 20_000, "second delivery")
    expect(receiver.received[1]!.at - firstCommitted).toBeGreaterThanOrEqual(290)
    expect(receiver.received.map((r) => JSON.parse(r.body).data.object.name)).toEqual(["First", "Second"])
  })

  it("an endpoint receives only events committed after it was created", async () => {
    const { marker, receiver, s } = await setup()
    await s.clients.create({ name: "Before" })
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    const after = await s.clients.create({ name: "After" })
    await waitFor(() => receiver.received.length >= 1)
    await marker.caughtUp()
    expect(receiver.received.map((r) => JSON.parse(r.body).data.object.id)).toEqual([after.id])
    expect((await s.webhooks.listDeliveries(endpoint.id)).data).toHaveLength(1)
  })
})
