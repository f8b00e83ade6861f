/**
 * Standard Webhooks signatures, checked with the official `standardwebhooks` package as the
 * independent verifier: deliveries verify with the endpoint's secret; a tampered body or a
 * stale timestamp does not; across a secret rotation both secrets verify during the grace
 * period and only the new one after it.
 */
import { Webhook } from "standardwebhooks"
import { afterEach, describe, expect, it } from "vitest"
import { sign, signedHeaders } from "../../adapters/webhooks/signing.js"
import { createTestScheduling } from "../../index.js"
import { startReceiver, verifies, waitFor } from "./receiver.js"

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** Real time for `webhook-timestamp`, fixed per test: the header is compared exactly, and stays within the verifier's 5 min tolerance. */
const SENT_AT_MS = Date.now()

const setup = async () => {
  const receiver = await startReceiver()
  const s = await createTestScheduling({ webhooks: { allowPrivate: true, now: () => SENT_AT_MS } })
  cleanup.push(() => receiver.close(), () => s.close())
  return { receiver, s }
}

describe("Standard Webhooks signatures", () => {
  it("a delivery verifies with the official library; its headers are the spec's", async () => {
    const { receiver, s } = await setup()
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["client.created"], description: "CRM sync" })
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(endpoint.secret.slice(6), "base64")).toHaveLength(32)
    const client = await s.clients.create({ name: "Ada", email: "ada@example.com" })
    await waitFor(() => receiver.received.length === 1)
    const request = receiver.received[0]!
    const event = (await s.events.list()).data[0]!
    expect(request.id).toBe(event.id)
    expect(request.timestamp).toMatch(/^\d{10}$/)
    expect(request.timestamp).toBe(String(Math.floor(SENT_AT_MS / 1000)))
    expect(request.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(request.headers["content-type"]).toBe("application/json")
    const verified = new Webhook(endpoint.secret).verify(request.body, request.headers)
    expect(verified).toEqual(event)
    expect((verified as typeof event).data.object).toEqual(client)
    // Another endpoint's secret does not verify it.
    const other = await s.webhooks.create({ url: receiver.url, events: ["staff.created"] })
    expect(verifies(other.secret, request)).toBe(false)
  })

  it("a tampered body or a stale (or future) timestamp fails verification", async () => {
    const { receiver, s } = await setup()
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    await s.clients.create({ name: "Ada" })
    await waitFor(() => receiver.received.length === 1)
    const request = receiver.received[0]!
    expect(verifies(endpoint.secret, request)).toBe(true)
    expect(verifies(endpoint.secret, { ...request, body: request.body.replace("Ada", "Eve") })).toBe(false)
    expect(verifies(endpoint.secret, { ...request, headers: { ...request.headers, "webhook-id": "evt_other" } })).toBe(false)

    const now = Math.floor(Date.now() / 1000)
    const stale = signedHeaders([endpoint.secret], request.id, now - 10 * 60, request.body)
    expect(() => new Webhook(endpoint.secret).verify(request.body, stale)).toThrow(/too old/)
    const future = signedHeaders([endpoint.secret], request.id, now + 10 * 60, request.body)
    expect(() => new Webhook(endpoint.secret).verify(request.body, future)).toThrow(/too new/)
    // A replayed signature with a fresh timestamp does not verify either.
    expect(verifies(endpoint.secret, { ...request, headers: { ...request.headers, "webhook-timestamp": String(now + 1) } })).toBe(false)
  })

  it("our signer and the official one agree byte for byte", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    const timestamp = 1_700_000_000
    const body = JSON.stringify({ id: "evt_1", type: "booking.created", data: { object: { name: "Zoë ✂" } } })
    expect(sign(secret, "evt_1", timestamp, body)).toBe(new Webhook(secret).sign("evt_1", new Date(timestamp * 1000), body))
    expect(signedHeaders([secret, secret], "evt_1", timestamp, body)["webhook-signature"].split(" ")).toHaveLength(2)
  })

  it("rotation: both secrets sign during the grace period (either verifies), only the new one after it", async () => {
    const { receiver, s } = await setup()
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    const rotated = await s.webhooks.rotateSecret(endpoint.id, { grace_period_seconds: 3600 })
    expect(rotated.secret).not.toBe(endpoint.secret)
    expect(rotated.id).toBe(endpoint.id)

    await s.clients.create({ name: "During grace" })
    await waitFor(() => receiver.received.length === 1)
    const during = receiver.received[0]!
    expect(during.signature.split(" ")).toHaveLength(2)
    expect(during.signature).toMatch(/^v1,\S+ v1,\S+$/)
    expect(verifies(rotated.secret, during)).toBe(true)
    expect(verifies(endpoint.secret, during)).toBe(true)

    await s.clock.advance({ seconds: 3601 })
    await s.clients.create({ name: "After grace" })
    await waitFor(() => receiver.received.length === 2)
    const after = receiver.received[1]!
    expect(after.signature.split(" ")).toHaveLength(1)
    expect(verifies(rotated.secret, after)).toBe(true)
    expect(verifies(endpoint.secret, after)).toBe(false)

    // grace_period_seconds 0: the old secret stops at once.
    const immediate = await s.webhooks.rotateSecret(endpoint.id, { grace_period_seconds: 0 })
    await s.clients.create({ name: "No grace" })
    await waitFor(() => receiver.received.length === 3)
    const third = receiver.received[2]!
    expect(third.signature.split(" ")).toHaveLength(1)
    expect(verifies(immediate.secret, third)).toBe(true)
    expect(verifies(rotated.secret, third)).toBe(false)
  })

  it("the secret is shown once: never in get, list or update responses", async () => {
    const { receiver, s } = await setup()
    const endpoint = await s.webhooks.create({ url: receiver.url, events: ["*"] })
    const views = [
      await s.webhooks.get(endpoint.id),
      (await s.webhooks.list()).data[0]!,
      await s.webhooks.update(endpoint.id, { description: "x" })
    ]
    for (const view of views) {
      expect(view).not.toHaveProperty("secret")
      expect(view).not.toHaveProperty("secrets")
      expect(JSON.stringify(view)).not.toContain("whsec_")
    }
    expect(await s.webhooks.rotateSecret(endpoint.id).catch(String)).toHaveProperty("secret")
    expect(await s.webhooks.rotateSecret(endpoint.id, { grace_period_seconds: 8 * 86_400 }).catch((e) => e.code)).toBe("validation_failed")
  })
})
